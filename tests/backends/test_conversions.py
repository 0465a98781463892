"""Conversions and comparisons across kinds of numbers, where C leaves the answer undefined or a plain
compare is wrong: float to integer (NaN, inf, out of range), int64 against uint64, integer clip bounds,
integers made float (the sign of zero)."""

import warnings

import numpy as np
import pytest
from differential import assert_same_as_numpy, jit_unmeasured, modes

from astjit import jit
from astjit.backends.tvm import casts

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.7, -1.5, 127.9, 128.5, -300.7, 70000.5, 2.0**31,
           -2.0**31 - 0.5, 2.0**32 + 5, 1e18, 2.0**63, -2.0**63, 2.0**64, 1e30, -1e30]
INTEGERS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want), f"{got} != numpy's {want}"


def convert(a, dt):
    return (a * 1.0).astype(dt)


@pytest.mark.parametrize("dst", INTEGERS)
@pytest.mark.parametrize("src", ["float32", "float64"])
def test_float_to_integer_as_numpy_converts(src, dst):
    """Every value, in range or not, converts as numpy converts it here: kernels where numpy's conversion
    is the modelled one (truncation, INT_MIN out of range, low bits for narrow types), numpy otherwise."""
    jitted = jit(convert, backend="tvm")
    for size in (len(SPECIAL), 37, 1):
        values = np.resize(np.array(SPECIAL, src), size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = convert(values, np.dtype(dst))
        same_bits(jitted(values, np.dtype(dst)), want)
    assert ("tvm" in modes(jitted)) == casts.reproducible(src, dst), jitted.explain()


def where_infinity_as_int(a, b):
    return np.where(a < 0, a, -np.inf).astype(np.int32) + b


def test_infinity_chosen_by_where_converts_to_int_min():
    """LLVM makes the out-of-range conversion poison and may return the select's other arm instead."""
    jitted = jit(where_infinity_as_int, backend="tvm")
    for a in (np.array([1, -3], np.int16), np.arange(-20, 20, dtype=np.int64), np.array([5], np.int8)):
        assert_same_as_numpy(where_infinity_as_int, a, np.int32(2), jitted=jitted)


def fill_int_array(shape, value, dt):
    return np.full(shape, value, dt) + 0


def test_runtime_float_fill_of_an_integer_array():
    jitted = jit(fill_int_array, backend="tvm")
    for value, dt in [(300.7, np.int8), (-1.5, np.uint8), (np.inf, np.int16), (np.nan, np.int32),
                      (2.5, np.int64), (1e30, np.int64), (-7.9, np.int16)]:
        assert_same_as_numpy(fill_int_array, (3, 4), value, dt, jitted=jitted)


def fill_then_add(b, n):
    return np.full(b.shape, n, np.uint16) + b


def test_python_int_fill_out_of_the_dtype_raises():
    jitted = jit(fill_then_add, backend="tvm")
    for n in (3, -1, 70000, 65535, 0):
        assert_same_as_numpy(fill_then_add, np.ones(5), n, jitted=jitted)


COMPARISONS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
               ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def compare_all(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b, b < a, b >= a


def test_int64_against_uint64_compares_exact_values():
    """numpy's mixed loops compare the exact values; a compare in either type reads 2**64 - 1 as -1
    or -1 as 2**64 - 1."""
    signed = np.array([-1, 3, -2**63, 2**63 - 1, 0, 5, -5, 7], np.int64)
    unsigned = np.array([2**64 - 1, 3, 0, 2**63, 0, 4, 2**63 + 5, 7], np.uint64)
    jitted = jit(compare_all, backend="tvm")
    for a, b in [(signed, unsigned), (unsigned, signed), (signed[::-1].copy(), unsigned),
                 (np.resize(signed, 40), np.resize(unsigned[::-1], 40))]:
        assert_same_as_numpy(compare_all, a, b, jitted=jitted)
    assert modes(jitted) & {"tvm", "mixed"}, jitted.explain()


def clip_bounds_crossed(v, k):
    return np.clip(v, np.inf, k)


def clip_low_only_effective(v):
    return np.clip(v, -1000, 5.5)


def clip_int_range(v):
    return np.clip(v, 0, 1000)


def test_integer_clip_drops_python_int_bounds_beyond_the_dtype():
    """numpy drops a Python int bound at or past the integer dtype's range before clipping, so
    ``np.clip(int8, np.inf, 255)`` is all inf (not 255)."""
    for v in (np.array([1, 2], np.int8), np.arange(-5, 30, dtype=np.int16), np.array([200, 3], np.uint8)):
        for k in (255, 7, 40000):
            assert_same_as_numpy(clip_bounds_crossed, v, k, backend="tvm")
        assert_same_as_numpy(clip_low_only_effective, v, backend="tvm")
        assert_same_as_numpy(clip_int_range, v, backend="tvm")


def integer_times_isinf(c):
    return c * np.isinf(c).astype(np.float64)


def test_integer_times_converted_zero_keeps_the_sign_of_zero():
    """isinf of an integer array is all False: a constant 0.0 after the conversion, which the simplifier
    must not fold into ``c * 0.0 = 0.0`` (numpy: -1 * 0.0 is -0.0)."""
    jitted = jit(integer_times_isinf, backend="tvm")
    for c in (np.array([-1, 5]), np.arange(-20, 20, dtype=np.int32), np.array([-3], np.int8)):
        got, want = jitted(c), integer_times_isinf(c)
        same_bits(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def truth_of_converted(a, b):
    return np.logical_not(a.astype(np.int64)), b - np.logical_not(a.astype(np.int64)), \
        np.logical_xor((a | 1).astype(np.int64), a)


def narrow_then_compare(a):
    return a.astype(np.int8) != 0, np.maximum(a.astype(np.int32), 0), a.astype(np.uint16) > 7


def test_integer_conversions_that_wrap_keep_their_wrapped_values():
    """uint64 2**63 as int64 is negative: TVM bounded the converted value by its operand's range, as if
    conversions never wrapped, and rewrote ``int64(x) != 0`` to ``0 < int64(x)`` (seeds 131824,
    17457395)."""
    jitted = jit(truth_of_converted, backend="tvm")
    for a in (np.array([0, 1, 2**64 - 1, 2**64 - 2, 2**63], np.uint64), np.arange(2**64 - 40, 2**64 - 1, dtype=np.uint64)):
        assert_same_as_numpy(truth_of_converted, a, np.arange(a.size), jitted=jitted)
    jitted = jit(narrow_then_compare, backend="tvm")
    for a in (np.array([256, 2**31, -2**31, 65543, -1, 3]), np.arange(-300, 300, 7, dtype=np.int64),
              np.array([2**32 + 8], np.uint64).astype(np.int64)):
        assert_same_as_numpy(narrow_then_compare, a, jitted=jitted)


def where_minus_two(a, b):
    v = a < b
    return np.where(v, -2, a)


def where_three_hundred(a, b):
    return np.where(a < b, 300, a) + (a > b)


def where_beyond_int64(a, b):
    return np.where(a < b, 2**63 + 5, a)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int32])
@pytest.mark.parametrize("fn", [where_minus_two, where_three_hundred, where_beyond_int64])
def test_an_int_constant_cast_to_an_int_dtype_wraps_as_numpys_cast(dtype, fn):
    """``np.where(c, -2, a)`` of uint16 is 65534 in numpy (its cast wraps); TVM refused a negative
    constant of an unsigned type, and the block ran on numpy for the rest of the process."""
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    jf = jit_unmeasured(fn)
    for n in (7, 64):
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        assert_same_as_numpy(fn, a, b, jitted=jf)
    assert not [r for r in jf.explain() if "could not compile" in r.message]
