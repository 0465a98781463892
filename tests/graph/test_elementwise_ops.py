"""Elementwise ops × dtypes × shapes, jitted vs plain numpy (values, dtypes, shapes, result types).

Each test jits a fresh copy of a small user-style function, so every parametrization compiles its own
specialization. Float inputs carry NaN, ±inf and -0.0; integer inputs carry 0, -1 and the dtype's
extremes, so division guards, NaN propagation and wrapping are exercised by the ordinary cases too.
Where the TVM backend claims an op (backends/tvm/support.py), float32/int32 cases also assert that the
specialization ran compiled, so a silent fallback to numpy or Python fails the test.
"""

import numpy as np
import pytest
from differential import assert_compiled, assert_same_as_numpy, modes

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = ["float32", "float64", "int32", "int64", "uint32", "bool"]
SHAPES = [(), (1,), (7,), (16,), (3, 5), (2, 3, 4)]
BROADCAST_PAIRS = [((3, 1), (1, 4)), ((5,), (3, 5)), ((2, 1, 4), (3, 1)), ((3, 5), ())]
COMPILED_DTYPES = ("float32", "int32")


def values(dtype, shape, seed=0, edge=True):
    """Deterministic test data; with ``edge``, special values from position 2 + seed on."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        v = rng.integers(0, 2, n).astype(bool)
        specials = []
    elif dt.kind == "f":
        v = (rng.standard_normal(n) * 4).astype(dt)
        specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -2.5]
    elif dt.kind == "i":
        info = np.iinfo(dt)
        v = rng.integers(-20, 21, n).astype(dt)
        specials = [0, -1, info.min, info.max, 1]
    else:
        info = np.iinfo(dt)
        v = rng.integers(0, 41, n).astype(dt)
        specials = [0, info.max, 1]
    if edge and n > 2:
        start = 2 + seed % 3
        for k, s in enumerate(specials[: max(0, n - start)]):
            v[start + k] = s
    return v.reshape(shape) if shape else np.asarray(v[0] if n else v).reshape(())


def exponents(dtype, shape, seed=1):
    """Exponents for ``**``: small and non-negative for integers (negative ones raise, tested apart)."""
    v = values(dtype, shape, seed)
    if np.dtype(dtype).kind in "iu":
        return (np.abs(v.astype(np.int64)) % 4).astype(dtype)
    return v


# -- binary arithmetic --------------------------------------------------------------------------------

def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    return a / b


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def power(a, b):
    return a**b


ARITH = {"+": add, "-": sub, "*": mul, "/": div, "//": floordiv, "%": mod, "**": power}


def operands(op, dtype_a, shape_a, dtype_b, shape_b):
    a = values(dtype_a, shape_a, seed=0)
    b = exponents(dtype_b, shape_b) if op == "**" else values(dtype_b, shape_b, seed=1)
    return a, b


def expect_compiled(op, dtype, other_is_array_exponent=True):
    if dtype not in COMPILED_DTYPES:
        return False
    # integer ** needs a constant exponent in the kernel (support._power); an array exponent runs numpy
    return not (op == "**" and np.dtype(dtype).kind in "iu" and other_is_array_exponent)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ARITH)
def test_binary_arithmetic(op, dtype, shape):
    a, b = operands(op, dtype, shape, dtype, shape)
    jf = assert_same_as_numpy(ARITH[op], a, b)
    if expect_compiled(op, dtype):
        assert_compiled(jf)


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "bool"])     # index maps, not loops
@pytest.mark.parametrize("op", ARITH)
def test_binary_arithmetic_broadcast(op, dtype, shapes):
    a, b = operands(op, dtype, shapes[0], dtype, shapes[1])
    jf = assert_same_as_numpy(ARITH[op], a, b)
    if expect_compiled(op, dtype):
        assert_compiled(jf)


MIXED = [("int32", "float32"), ("int32", "int64"), ("uint32", "int32"), ("uint32", "int64"),
         ("bool", "int32"), ("bool", "float32"), ("float32", "float64"), ("uint32", "float32")]


@pytest.mark.parametrize("dtypes", MIXED, ids="-".join)
@pytest.mark.parametrize("op", ARITH)
def test_binary_arithmetic_mixed_dtypes(op, dtypes):
    a, b = operands(op, dtypes[0], (3, 5), dtypes[1], (5,))
    jf = assert_same_as_numpy(ARITH[op], a, b)
    if dtypes == ("int32", "float32"):          # float64 loop: compiled for every operator
        assert_compiled(jf)


def scalar_operand(kind, side, dtype):
    """A Python scalar (weak), or a strong one: a numpy scalar after the array, a 0-d array before it."""
    if kind == "py_int":
        return True if dtype == "bool" else 3
    if kind == "py_float":
        return 2.5
    if side == "array_first":
        return np.float32(1.5) if np.dtype(dtype).kind == "f" else np.int64(3)
    return np.array(3, dtype=np.int64) if np.dtype(dtype).kind in "iub" else np.array(0.75)


def rev(fn):
    def swapped(a, b):
        return fn(b, a)
    return swapped


@pytest.mark.parametrize("side", ["array_first", "scalar_first"])
@pytest.mark.parametrize("kind", ["py_int", "py_float", "strong"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "bool"])
@pytest.mark.parametrize("op", ARITH)
def test_binary_with_scalar(op, dtype, kind, side):
    s = scalar_operand(kind, side, dtype)
    if side == "array_first":
        a = values(dtype, (7,))
        jf = assert_same_as_numpy(ARITH[op], a, s)
    else:
        a = exponents(dtype, (7,)) if op == "**" else values(dtype, (7,))
        jf = assert_same_as_numpy(ARITH[op], s, a)
    # integer ** with a run-time (non-constant) integer exponent is left to numpy by design
    int_power = op == "**" and np.dtype(dtype).kind in "iu" and kind != "py_float"
    if dtype in COMPILED_DTYPES and not int_power:
        assert_compiled(jf)


@pytest.mark.parametrize("side", ["array_first", "scalar_first"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "bool"])
@pytest.mark.parametrize("op", ARITH)
def test_zero_d_array_with_python_scalar(op, dtype, side):
    """0-d arrays combined with Python scalars give numpy scalars, with weak promotion."""
    a = exponents(dtype, ()) if op == "**" else values(dtype, ())
    s = 2 if dtype != "bool" else True
    if side == "array_first":
        assert_same_as_numpy(ARITH[op], a, s)
    else:
        assert_same_as_numpy(ARITH[op], s, a)


def add_3(a):
    return a + 3


def rsub_3(a):
    return 3 - a


def mul_half(a):
    return a * 0.5


def rdiv_1(a):
    return 1 / a


def floordiv_3(a):
    return a // 3


def rfloordiv_7(a):
    return 7 // a


def mod_neg3(a):
    return a % -3


def rmod_7(a):
    return 7 % a


def pow_2(a):
    return a**2


def pow_3(a):
    return a**3


def pow_half(a):
    return a**0.5


def pow_neg1(a):
    return a**-1


def pow_0(a):
    return a**0


def rpow_2(a):
    return 2**a


LITERAL_FORMS = [add_3, rsub_3, mul_half, rdiv_1, floordiv_3, rfloordiv_7, mod_neg3, rmod_7, pow_2, pow_3,
                 pow_half, pow_neg1, pow_0, rpow_2]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint32"])
@pytest.mark.parametrize("fn", LITERAL_FORMS, ids=lambda f: f.__name__)
def test_constant_operands_in_source(fn, dtype):
    """Literals in the source are static: their fast paths (x**2 as x*x, x**0.5 as sqrt) must agree."""
    a = exponents(dtype, (16,)) if fn is rpow_2 else values(dtype, (16,))
    jf = assert_same_as_numpy(fn, a)
    int_dtype = np.dtype(dtype).kind in "iu"
    if dtype in COMPILED_DTYPES and not (int_dtype and fn in (rpow_2, pow_neg1)):
        assert_compiled(jf)


@pytest.mark.parametrize("shape", [(), (7,), (3, 5)], ids=str)
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**"])
def test_complex128_falls_back_with_same_answer(op, shape):
    a = values("float64", shape, edge=False) + 1j * values("float64", shape, seed=2, edge=False)
    b = values("float64", shape, seed=1, edge=False) - 0.5j
    assert_same_as_numpy(ARITH[op], a, b, rtol=1e-12)
    assert_same_as_numpy(ARITH[op], a, 2, rtol=1e-12)


def complex_math(z, w):
    return np.exp(z), np.sqrt(z), abs(z), np.sign(z), z == w, np.square(z) - w, np.where(abs(z) > 1, z, w)


@pytest.mark.parametrize("shape", [(), (7,), (3, 5)], ids=str)
def test_complex128_functions_fall_back_with_same_answer(shape):
    z = values("float64", shape, edge=False) + 1j * values("float64", shape, seed=2, edge=False)
    w = np.zeros(shape, np.complex128) + (1 - 1j)
    assert_same_as_numpy(complex_math, z, w, rtol=1e-12)
    assert_same_as_numpy(complex_math, z.astype(np.complex64), np.complex64(2), rtol=1e-6)


def empty_ops(a, b):
    return a + b, a * 2, np.exp(a), a < b, np.maximum(a, b), np.where(a > 0, a, b), -a


@pytest.mark.parametrize("shapes", [((0,), (0,)), ((0, 3), (3,)), ((3, 0), (1, 0)), ((0,), ())], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
def test_empty_arrays(dtype, shapes):
    assert_same_as_numpy(empty_ops, values(dtype, shapes[0]), values(dtype, shapes[1], seed=1))


def test_empty_array_shape_mismatch():
    assert_same_as_numpy(empty_ops, values("float32", (0, 3)), values("float32", (2,)))


# -- integer edge cases: division by zero, INT_MIN // -1, wrapping, shifts ---------------------------

def divmod_ops(a, b):
    return a // b, a % b


@pytest.mark.parametrize("n", [6, 24], ids=["short", "vectorized"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "int8", "int16", "uint8"])
def test_integer_division_by_zero_and_int_min(dtype, n):
    """numpy: x // 0 == x % 0 == 0, INT_MIN // -1 == INT_MIN, INT_MIN % -1 == 0 (no SIGFPE)."""
    info = np.iinfo(dtype)
    if info.min < 0:
        a = np.array([5, -5, 0, info.min, info.min, 7, -7, info.max], dtype=dtype)
        b = np.array([0, 0, 0, -1, 0, -2, 2, -1], dtype=dtype)
    else:
        a = np.array([5, 0, info.max, 7, 1, info.max, 3, 0], dtype=dtype)
        b = np.array([0, 0, 0, 2, info.max, 1, 0, 3], dtype=dtype)
    a, b = np.resize(a, n), np.resize(b, n)
    jf = assert_same_as_numpy(divmod_ops, a, b)
    assert_same_as_numpy(divmod_ops, a[0], b[0])          # numpy scalars
    assert_same_as_numpy(floordiv, a, 0)
    assert_same_as_numpy(mod, a, 0)
    if info.min < 0:
        assert_same_as_numpy(floordiv, a, -1)
        assert_same_as_numpy(mod, a, -1)
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


def div_by_zero_literal(a):
    return a // 0, a % 0, 0 // a, a // -1


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_division_by_constant_zero(dtype):
    a = np.array([5, -5, 0, np.iinfo(dtype).min, 1, 2, 3, 4, 9], dtype=dtype)
    jf = assert_same_as_numpy(div_by_zero_literal, a)
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_floor_divide_and_remainder_mixed_signs(dtype):
    """numpy's fmod-based divmod: 1.0 // 0.1 == 9, -0.0 results, x // inf, x % inf, division by ±0."""
    a = np.array([7, -7, 7, -7, 4, -4, 4, -0.0, -0.5, 0.5, 5, -5, np.inf, -1e-20, 1, 1, -1, -1, 0, 1.0,
                  np.nan, 3.5], dtype=dtype)
    b = np.array([2, 2, -2, -2, 2, 2, -2, 1, 1, -1, np.inf, np.inf, 2, 1, 0, -0.0, 0, -0.0, 0, 0.1,
                  1, np.nan], dtype=dtype)
    jf = assert_same_as_numpy(divmod_ops, a, b)
    got_div, got_mod = jf(a, b)
    want_div, want_mod = divmod_ops(a, b)
    # signed zeros matter here: compare the sign bits too
    np.testing.assert_array_equal(np.signbit(got_div), np.signbit(want_div))
    np.testing.assert_array_equal(np.signbit(got_mod), np.signbit(want_mod))
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(4000) * 100).astype(dtype)
    y = (rng.standard_normal(4000) * 3).astype(dtype)
    got_div, got_mod = jf(x, y)
    np.testing.assert_array_equal(got_div, x // y)     # the recipe is exact: no tolerance
    np.testing.assert_array_equal(got_mod, x % y)
    if dtype == "float32":
        assert_compiled(jf)


def overflow_ops(a, b):
    return a + b, a - b, a * b, -a, abs(a)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "int8", "uint8"])
def test_integer_overflow_wraps(dtype):
    info = np.iinfo(dtype)
    a = np.resize(np.array([info.max, info.min, info.max, info.min, 100000 % (info.max + 1), 3],
                           dtype=dtype), 16)
    b = np.resize(np.array([1, 1, info.max, info.min, 100000 % (info.max + 1), 1], dtype=dtype), 16)
    jf = assert_same_as_numpy(overflow_ops, a, b)
    assert_same_as_numpy(pow_3, a)
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


def widened_sum(a, b):
    return (a + b).astype(np.int64), (a * b - a // 3) - np.int64(1)


def wrapped_then_compared(a):
    return (a + 1) > a


def wrapped_then_divided(a):
    return (a * 2) // 2


def wrapped_then_maximum(a):
    return np.maximum(a + 1, a)


def wrapped_then_reduced(a, b):
    return (a * b).sum()


def unsigned_wrapped_then_compared(a):
    return (3 - a) < 10


def quotient_by_minus_one_then_compared(a, b):
    # INT_MIN // -1 is INT_MIN in numpy: the quotient compared, signed, divided and reduced in one kernel
    return (a // -1) > 0, np.sign(a // b), (a // -1) // 2, (a // b) % 3, np.floor_divide(a, -1).max()


_I32 = np.array([2**31 - 1, 5, -(2**31), 0, 3], dtype=np.int32)


@pytest.mark.parametrize(("fn", "args"), [
    (widened_sum, (np.resize(_I32, 16), np.resize(np.array([1, 1, -1, 7, 100000], np.int32), 16))),
    pytest.param(wrapped_then_compared, (_I32,)),
    pytest.param(wrapped_then_divided, (_I32,)),
    pytest.param(wrapped_then_maximum, (_I32,)),
    pytest.param(wrapped_then_reduced, (np.array([7, 3, 0, -1, -(2**31)], np.int32),
                                        np.array([-9, -8, -9, -6, 6], np.int32))),
    pytest.param(unsigned_wrapped_then_compared, (np.array([5, 2, 0, 4294967295], np.uint32),)),
    pytest.param(quotient_by_minus_one_then_compared, (np.resize(_I32, 1000), np.full(1000, -1, np.int32))),
    pytest.param(quotient_by_minus_one_then_compared, (np.resize(_I32.astype(np.int64) * 2**32, 1000),
                                                      np.full(1000, -1, np.int64))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_integer_overflow_wraps_inside_fused_expressions(fn, args):
    """numpy wraps every intermediate result; a kernel must not reason as if it could not overflow
    (TVM's simplifier would fold ``(a + 1) > a`` to True): integer +, -, * compile in a wrapping form
    (scalar_math.wrapping), fused with what reads them."""
    jf = assert_same_as_numpy(fn, *args)
    assert_compiled(jf)


def folded_to_numbers(a, x):
    return (a - a, a * 0, (a + 1) - (a + 1), np.sign(a - a), x + (a - a), 0 * a + 1, (a - a) // 3,
            np.square(a - a))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_integer_arithmetic_the_simplifier_folds_to_a_number_compiles(dtype):
    """``a - a`` and ``a * 0`` fold to 0 in TVM's simplifier, and its LLVM code generator refused the
    reinterpret of that constant which the wrapping form adds (the block ran on numpy, its failed
    compile repeated in every process): the folded value is taken as a constant instead."""
    a = np.resize(np.array([np.iinfo(dtype).max, np.iinfo(dtype).min, 0, 3], dtype), 12)
    jf = assert_same_as_numpy(folded_to_numbers, a, np.linspace(-1, 1, 12), backend="tvm")
    assert "could not compile" not in str(jf.explain()), str(jf.explain())
    assert modes(jf) == {"tvm"}


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_one_more_than_the_maximum_is_not_greater(dtype):
    """``(a + 1) > a`` is False at the type's maximum, ``(a - 1) < a`` False at its minimum, and the
    negation of the minimum is the minimum, as numpy wraps them, in one compiled kernel."""
    info = np.iinfo(dtype)
    a = np.resize(np.array([info.max, info.min, 0, 1, info.max - 1, info.min + 1], dtype), 37)
    for values in (a, a[::-1].copy(), a[:5]):
        jf = assert_same_as_numpy(edges_of_the_range, values)
        assert_compiled(jf)
    out = jf(a)
    assert not out[0][0] and not out[1][1]            # max + 1 > max, min - 1 < min: both False


def edges_of_the_range(a):
    return (a + 1) > a, (a - 1) < a, -a, a * a - a, abs(a) >= a


def shifts(a, b):
    return a << b, a >> b


def shift_by_40(a):
    return a << 40, a >> 40


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "int8", "uint8"])
def test_shifts_out_of_range_counts(dtype):
    bits = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    counts = [0, 1, bits - 1, bits, bits + 1, bits * 2 + 3] + ([-1, -bits - 1] if signed else [])
    bases = [1, 3, np.iinfo(dtype).max] + ([-8, -1, np.iinfo(dtype).min] if signed else [])
    a = np.array([x for x in bases for _ in counts], dtype=dtype)
    b = np.array([c for _ in bases for c in counts], dtype=dtype)
    jf = assert_same_as_numpy(shifts, a, b)
    assert_same_as_numpy(shifts, a, np.int64(bits))        # promotes to int64 (0 for 64-bit: count 64)
    if bits > 40:
        assert_same_as_numpy(shift_by_40, a)
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


def test_shift_by_python_int_that_does_not_fit():
    assert_same_as_numpy(shift_by_40, np.arange(5, dtype=np.int8))   # OverflowError like numpy


def negative_power(a, b):
    return a**b


def test_integer_negative_power_raises():
    a = np.arange(1, 6, dtype=np.int32)
    assert_same_as_numpy(negative_power, a, np.array([1, 2, -1, 0, 1], dtype=np.int32))
    assert_same_as_numpy(negative_power, a, -1)
    assert_same_as_numpy(negative_power, a, np.int64(-2))
    assert_same_as_numpy(negative_power, a, -1.0)                 # float64, fine
    assert_same_as_numpy(negative_power, np.arange(5, dtype=np.uint8), -1)   # OverflowError


def test_integer_power_wraps():
    a = np.array([2, 3, -3, 0, 1, -1, 7], dtype=np.int64)
    assert_same_as_numpy(negative_power, a, 64)
    assert_same_as_numpy(negative_power, a, np.int64(40))
    jf = assert_same_as_numpy(pow_3, a.astype(np.int32) * 1000)
    assert_compiled(jf)


# -- errors ------------------------------------------------------------------------------------------

def test_shape_mismatch_raises_numpys_error():
    for fn in (add, mul, floordiv):
        assert_same_as_numpy(fn, np.ones((2, 3), np.float32), np.ones(4, np.float32))
        assert_same_as_numpy(fn, np.ones((2, 3), np.int32), np.ones((3, 2), np.int32))


def test_bool_subtract_and_negative_raise_type_error():
    b = np.array([True, False, True])
    assert_same_as_numpy(sub, b, b)
    assert_same_as_numpy(sub, b, True)
    assert_same_as_numpy(neg, b)


def test_python_int_out_of_range_raises_overflow_error():
    u8 = np.array([1, 2, 200], dtype=np.uint8)
    assert_same_as_numpy(add, u8, 300)
    assert_same_as_numpy(add, 300, u8)
    assert_same_as_numpy(add, u8, -1)
    assert_same_as_numpy(sub, np.array([1, 2], dtype=np.int8), 200)
    assert_same_as_numpy(add, np.arange(3, dtype=np.int64), 2**63)
    assert_same_as_numpy(add, np.arange(3, dtype=np.uint32), -1)
    # a scalar that fits wraps in the array dtype
    jf = assert_same_as_numpy(add, u8, 255)
    assert_same_as_numpy(add, u8, 255, jitted=jf)
    assert_same_as_numpy(add, u8, 300, jitted=jf)   # same key, out-of-range value: still OverflowError


def test_python_int_range_checked_per_call():
    """A kernel specialized for a Python int must still raise when a later value does not fit."""
    a = np.arange(7, dtype=np.int32)
    jf = assert_same_as_numpy(add, a, 5)
    assert_same_as_numpy(add, a, 2**31, jitted=jf)
    assert_same_as_numpy(add, a, -(2**31) - 1, jitted=jf)
    assert_same_as_numpy(add, a, 2**31 - 1, jitted=jf)
    assert_same_as_numpy(add, a.astype(np.uint32), -1)


# -- unary operators -----------------------------------------------------------------------------------

def neg(a):
    return -a


def absolute(a):
    return abs(a)


def np_absolute(a):
    return np.abs(a)


def invert(a):
    return ~a


def pos(a):
    return +a


UNARY_OPERATORS = {"neg": neg, "abs": absolute, "pos": pos}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY_OPERATORS)
def test_unary_operators(op, dtype, shape):
    a = values(dtype, shape)
    jf = assert_same_as_numpy(UNARY_OPERATORS[op], a)
    if dtype in COMPILED_DTYPES and op != "pos":
        assert_compiled(jf)


def test_abs_and_negative_edge_values():
    for dtype in ("int8", "int32", "int64"):
        info = np.iinfo(dtype)
        a = np.array([info.min, info.max, 0, -1, 1, info.min + 1, 5, -5, 9], dtype=dtype)
        assert_same_as_numpy(absolute, a)
        assert_same_as_numpy(neg, a)
    u = np.array([1, 0, 200, 4294967295], dtype=np.uint32)
    assert_same_as_numpy(neg, u)
    f = np.array([-0.0, 0.0, -np.inf, np.nan, -1.5, 2], dtype=np.float32)
    jf = assert_same_as_numpy(absolute, f)
    assert not np.signbit(jf(f)[0])              # abs(-0.0) is +0.0


# -- comparisons -------------------------------------------------------------------------------------

def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def gt(a, b):
    return a > b


def ge(a, b):
    return a >= b


def eq(a, b):
    return a == b


def ne(a, b):
    return a != b


COMPARISONS = {"<": lt, "<=": le, ">": gt, ">=": ge, "==": eq, "!=": ne}


def all_comparisons(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_comparisons(dtype, shape):
    """The six operators in one function (one kernel, six outputs): result[k] names the failing one."""
    a = values(dtype, shape)
    b = values(dtype, shape, seed=1)
    if a.size > 3:
        b.flat[1] = a.flat[1]                                   # some ties
    jf = assert_same_as_numpy(all_comparisons, a, b)
    assert_same_as_numpy(all_comparisons, a, a, jitted=jf)     # equal operands, NaN != NaN
    if dtype in COMPILED_DTYPES or dtype == "bool":
        assert_compiled(jf)


@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_mixed_and_broadcast(op):
    fn = COMPARISONS[op]
    jf = assert_same_as_numpy(fn, values("int32", (3, 1)), values("float32", (1, 4), seed=1))
    assert_compiled(jf)
    assert_same_as_numpy(fn, values("int64", (5,)), values("uint32", (3, 5), seed=1))
    assert_same_as_numpy(fn, np.array([2**53 + 1, -1, 5], dtype=np.int64), np.array([2.0**53, 0, 5]))
    assert_same_as_numpy(fn, values("uint32", (7,)), -1)               # never raises
    assert_same_as_numpy(fn, values("int32", (7,)), 2**40)
    assert_same_as_numpy(fn, 2.5, values("float32", (7,)))
    assert_same_as_numpy(fn, values("bool", (7,)), values("int32", (7,)))


# -- bitwise and logical -----------------------------------------------------------------------------

def bit_and(a, b):
    return a & b


def bit_or(a, b):
    return a | b


def bit_xor(a, b):
    return a ^ b


BITWISE = {"&": bit_and, "|": bit_or, "^": bit_xor}


def all_bitwise(a, b):
    return a & b, a | b, a ^ b


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "uint32"])
def test_bitwise(dtype, shape):
    a = values(dtype, shape)
    b = values(dtype, shape, seed=1)
    jf = assert_same_as_numpy(all_bitwise, a, b)
    if dtype in ("int32", "bool"):
        assert_compiled(jf)


@pytest.mark.parametrize("op", BITWISE)
def test_bitwise_on_floats_raises(op):
    assert_same_as_numpy(BITWISE[op], values("float32", (7,)), values("float32", (7,), seed=1))
    assert_same_as_numpy(BITWISE[op], values("int32", (7,)), 1.0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "uint32", "float64"])
def test_invert(dtype, shape):
    jf = assert_same_as_numpy(invert, values(dtype, shape))
    if dtype in ("bool", "int32"):
        assert_compiled(jf)


@pytest.mark.parametrize("op", BITWISE)
def test_bitwise_mixed_and_scalars(op):
    fn = BITWISE[op]
    assert_same_as_numpy(fn, values("int32", (3, 1)), values("int64", (1, 4), seed=1))
    assert_same_as_numpy(fn, values("uint32", (5,)), values("int32", (3, 5), seed=1))
    assert_same_as_numpy(fn, values("bool", (7,)), values("int32", (7,), seed=1))
    jf = assert_same_as_numpy(fn, values("int32", (7,)), 6)
    assert_compiled(jf)
    assert_same_as_numpy(fn, 6, values("uint32", (7,)))
    assert_same_as_numpy(fn, values("bool", (7,)), True)
    assert_same_as_numpy(fn, values("int64", (7,)), np.uint64(3))     # TypeError like numpy


def logic(a, b):
    return np.logical_and(a, b), np.logical_or(a, b), np.logical_xor(a, b), np.logical_not(a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_logical_functions(dtype):
    jf = assert_same_as_numpy(logic, values(dtype, (3, 5)), values(dtype, (5,), seed=1))
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


# -- math functions -----------------------------------------------------------------------------------

def _unary(ufunc):
    def f(a):
        return ufunc(a)
    f.__name__ = ufunc.__name__
    return f


MATH = [np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.sin, np.cos, np.tan, np.tanh, np.arcsin, np.arccos,
        np.arctan, np.sinh, np.cosh, np.floor, np.ceil, np.sign, np.square, np.abs]
# float loops are checked on every code path (scalar, vector tail, vectorized, 3-d); integer inputs only
# add a cast in front of the same float64 loop
MATH_CASES = [(d, s) for d in DTYPES for s in ([(), (7,), (2, 3, 4)] if d.startswith("float")
                                                else [(16,)])]


def math_input(dtype, shape, ufunc):
    a = values(dtype, shape)
    if np.dtype(dtype).kind == "f" and ufunc in (np.arcsin, np.arccos):
        a = (a / 8).astype(dtype)                           # mostly in the domain, NaN/inf kept
    return a


@pytest.mark.parametrize(("dtype", "shape"), MATH_CASES, ids=str)
@pytest.mark.parametrize("ufunc", MATH, ids=lambda u: u.__name__)
def test_math_functions(ufunc, dtype, shape):
    fn = globals()["math_" + ufunc.__name__]
    jf = assert_same_as_numpy(fn, math_input(dtype, shape, ufunc))   # bool: numpy's float16/TypeError
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


# module-level functions so that each has its own source (jit reads it)
def math_exp(a):
    return np.exp(a)


def math_log(a):
    return np.log(a)


def math_log1p(a):
    return np.log1p(a)


def math_expm1(a):
    return np.expm1(a)


def math_sqrt(a):
    return np.sqrt(a)


def math_sin(a):
    return np.sin(a)


def math_cos(a):
    return np.cos(a)


def math_tan(a):
    return np.tan(a)


def math_tanh(a):
    return np.tanh(a)


def math_arcsin(a):
    return np.arcsin(a)


def math_arccos(a):
    return np.arccos(a)


def math_arctan(a):
    return np.arctan(a)


def math_sinh(a):
    return np.sinh(a)


def math_cosh(a):
    return np.cosh(a)


def math_floor(a):
    return np.floor(a)


def math_ceil(a):
    return np.ceil(a)


def math_sign(a):
    return np.sign(a)


def math_square(a):
    return np.square(a)


def math_absolute(a):
    return np.abs(a)


def tanh_after_add(a, b):
    return np.tanh(a + b)


@pytest.mark.parametrize("shapes", [((7,), (7,)), ((3, 1), (1, 4)), ((), ()), ((5,), (3, 5))], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tanh_of_broadcast_expression(dtype, shapes):
    """float32 tanh is a tensor-level rule (topi.fast_tanh): check it under broadcasting and 0-d."""
    jf = assert_same_as_numpy(tanh_after_add, values(dtype, shapes[0]), values(dtype, shapes[1], seed=1))
    if dtype == "float32":
        assert_compiled(jf)


def test_math_special_values():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 1e-30, -1e-30, 89.0, 710.0, -745.0,
                  0.5, 2.0, 3.0, 100.0], dtype=np.float64)
    for ufunc in MATH:
        fn = globals()["math_" + ufunc.__name__]
        for dtype in ("float32", "float64"):
            jf = assert_same_as_numpy(fn, x.astype(dtype))
            got = jf(x.astype(dtype))
            want = ufunc(x.astype(dtype))
            # exact results (zeros, infinities) keep their sign: sign(-0.0) is +0.0, floor(-0.0) is -0.0
            exact = (want == 0) | np.isinf(want)
            np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]),
                                          err_msg=ufunc.__name__)


def arctan2(a, b):
    return np.arctan2(a, b)


def maximum(a, b):
    return np.maximum(a, b)


def minimum(a, b):
    return np.minimum(a, b)


BINARY_FUNCTIONS = {"arctan2": arctan2, "maximum": maximum, "minimum": minimum}


def binary_functions(a, b):
    return np.arctan2(a, b), np.maximum(a, b), np.minimum(a, b)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_functions(dtype, shape):
    a = values(dtype, shape)
    b = values(dtype, shape, seed=1)
    jf = assert_same_as_numpy(binary_functions, a, b)
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


@pytest.mark.parametrize("name", BINARY_FUNCTIONS)
def test_binary_functions_broadcast_and_scalars(name):
    fn = BINARY_FUNCTIONS[name]
    jf = assert_same_as_numpy(fn, values("float32", (3, 1)), values("float32", (1, 4), seed=1))
    assert_compiled(jf)
    assert_same_as_numpy(fn, values("int32", (5,)), values("float32", (3, 5), seed=1))
    assert_same_as_numpy(fn, values("float32", (7,)), 0.5)
    assert_same_as_numpy(fn, 0, values("int32", (7,)))
    assert_same_as_numpy(fn, values("uint32", (7,)), np.int64(-1))
    assert_same_as_numpy(fn, values("uint32", (7,)), 300)
    assert_same_as_numpy(fn, np.arange(3, dtype=np.uint8), 300)         # OverflowError like numpy


def test_maximum_minimum_nan_propagation():
    a = np.array([1, np.nan, 3, np.nan, -0.0, 0.0, -np.inf, 5], dtype=np.float32)
    b = np.array([2, 2, np.nan, np.nan, 0.0, -0.0, np.nan, np.inf], dtype=np.float32)
    for fn in (maximum, minimum):
        jf = assert_same_as_numpy(fn, a, b)
        assert_compiled(jf)
        assert_same_as_numpy(fn, b, a, jitted=jf)
        assert_same_as_numpy(fn, a.astype(np.float64), np.nan)


# -- where, clip ---------------------------------------------------------------------------------------

def where_positive(a, b):
    return np.where(a > 0, a, b)


def where_cond(c, a, b):
    return np.where(c, a, b)


def where_forms(a, b):
    return np.where(a > 0, a, b), np.where(a > 1, a, 0), np.where(a > 1, a, 0.5), np.where(b, 1, a)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_where(dtype, shape):
    a = values(dtype, shape)
    b = values(dtype, shape, seed=1)
    jf = assert_same_as_numpy(where_forms, a, b)
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


def test_where_broadcast_truthiness_and_promotion():
    c = values("bool", (3, 1))
    jf = assert_same_as_numpy(where_cond, c, values("float32", (1, 4)), values("float32", (4,), seed=1))
    assert_compiled(jf)
    assert_same_as_numpy(where_cond, c, values("int32", (3, 4)), values("float32", (4,), seed=1))
    assert_same_as_numpy(where_cond, values("float64", (7,)), 1, 2)          # NaN is true
    assert_same_as_numpy(where_cond, values("int32", (7,)), values("uint32", (7,)), np.int64(-1))
    assert_same_as_numpy(where_cond, np.array([True, False]), np.array([1, 2], np.uint8), 300)   # wraps
    assert_same_as_numpy(where_cond, True, values("float32", (3,)), np.float64(0.5))
    assert_same_as_numpy(where_cond, c, values("float32", (2, 4)), 0.0)     # broadcast error


def clip_0_3(a):
    return np.clip(a, 0, 3)


def clip_forms(a):
    return np.clip(a, 0, 3), a.clip(-1.5, 2.5), np.clip(a, None, 3), a.clip(min=1)


def clip_arrays(a, lo, hi):
    return np.clip(a, lo, hi)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_clip(dtype, shape):
    a = values(dtype, shape)
    jf = assert_same_as_numpy(clip_forms, a)
    if dtype in COMPILED_DTYPES:
        assert_compiled(jf)


def test_clip_bounds_and_edge_values():
    a = np.array([-5, 0, 5, 10], dtype=np.int32)
    assert_same_as_numpy(clip_arrays, a, 6, 0)                          # lo > hi
    assert_same_as_numpy(clip_arrays, a, np.float64(0.5), 6)
    assert_same_as_numpy(clip_arrays, a, 0.5, 6.5)
    assert_same_as_numpy(clip_arrays, np.array([1, 2, 200], np.uint8), -1, 300)
    f = np.array([np.nan, -1, 2, 5, -0.0, 0.0], dtype=np.float32)
    jf = assert_same_as_numpy(clip_arrays, f, np.float32(0), np.float32(3))
    assert_compiled(jf)
    assert_same_as_numpy(clip_arrays, f, np.nan, 3.0)
    assert_same_as_numpy(clip_arrays, f, np.float64(0), 3)
    assert_same_as_numpy(clip_arrays, values("float32", (3, 5)), values("float32", (5,), seed=1), 2.0)


def scalar_type_of_array(a, b, c):
    b += 1
    return np.float32(a) + c, np.uint32(a) * 2, np.bool_(a) | (c > 0), b


@pytest.mark.parametrize("backend", [None, "tvm"])
@pytest.mark.parametrize("shape", [(2, 2), (5,), (), (1,)])
def test_numpy_scalar_types_called_on_arrays(shape, backend):
    """``np.float32(a)`` of an array with axes is an array (``a.astype``): it was typed as a float32
    scalar, and a kernel reading it as one raised ValueError; of a 0-d array it is a scalar."""
    from astjit import jit

    jf = jit(scalar_type_of_array, backend=backend)
    for seed in range(3):
        a = values("int64", shape, seed)
        c = values("float64", shape[:1] + (1,) * (len(shape) - 1), seed + 1) if shape else np.float64(1.5)
        b = values("int64", shape, seed + 2)
        assert_same_as_numpy(scalar_type_of_array, a, b, c, jitted=jf)
