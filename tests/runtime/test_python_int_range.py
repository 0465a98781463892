"""A Python int meeting an integer array must fit the array's dtype, as numpy checks (OverflowError
before any work), whatever value earlier calls had and whatever effects come before it in the block."""

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import jit


def maximum_with(a, k):
    return np.maximum(a, k)


def floor_divide_by(a, k):
    return a // k


def remainder_by(a, k):
    return a % k


def and_with(a, k):
    return a & k


def or_with(a, k):
    return a | k


def shift_right_by(a, k):
    return a >> k


def computed_int(a, k):
    m = k + 1
    return np.minimum(a, m)


OPS = [maximum_with, floor_divide_by, remainder_by, and_with, or_with, shift_right_by, computed_int]
DTYPES = ["int8", "uint8", "int32", "uint64"]


def _outside(dtype):
    info = np.iinfo(dtype)
    return [info.max + 1, info.min - 1, 2**64, -(2**63) - 1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", OPS, ids=lambda f: f.__name__)
def test_out_of_range_int_raises_like_numpy(fn, dtype):
    jf = jit(fn)
    a = np.arange(1, 13).astype(dtype)
    for k in [3, 7] + _outside(dtype) + [5, 1]:   # in range, out of range, in range again
        assert_same_as_numpy(fn, a, k, jitted=jf)


def write_then_maximum(a, out, k):
    out[0] = 7
    out += 1
    return np.maximum(a, k) * 2


@pytest.mark.parametrize("k", [3, 300, -200, 100, 2**70, 5])
def test_effects_before_the_error_are_numpys(k):
    jf = jit(write_then_maximum)
    for _ in range(2):
        assert_same_as_numpy(write_then_maximum, np.arange(6, dtype=np.int8), np.zeros(4, np.int8), k,
                             jitted=jf)


def where_wraps(c, a, k):
    return np.where(c, a, k) + 1


def test_where_keeps_numpys_silent_wrap():
    jf = jit(where_wraps)
    c = np.array([True, False, True, False])
    a = np.arange(4, dtype=np.uint8)
    for k in (1, 300, -1, 255, 2):
        assert_same_as_numpy(where_wraps, c, a, k, jitted=jf)


def write_then_scale(a, out, k):
    out[0] = 1.0
    return a * k


@pytest.mark.parametrize("k", [3, 2**70, -(2**65), 7])
def test_python_int_beyond_int64_next_to_floats(k):
    jf = jit(write_then_scale)
    for _ in range(2):
        assert_same_as_numpy(write_then_scale, np.linspace(0, 1, 5), np.zeros(3), k, jitted=jf)


def where_with_computed_int(a, k, m):
    a += 1
    return np.where(a > 2, a, k + m)


def test_computed_python_int_beyond_int64_reaching_a_kernel():
    jf = jit(where_with_computed_int)
    for k, m in ((1, 2), (2**62, 2**62), (3, -1), (2**63, 5)):
        assert_same_as_numpy(where_with_computed_int, np.linspace(0, 4, 5), k, m, jitted=jf)


def float32_beside_int(a, k):
    return a + k, a == k, np.maximum(a, k) * 0.5


def test_a_python_int_beside_float32_rounds_twice_as_numpy_does():
    """numpy makes a Python int beside float32 a Python float first, then float32: two roundings
    (2**60 + 2**36 + 1 becomes 1.1529215e18; int64 to float32 at once would give 1.1529216e18)."""
    jf = jit(float32_beside_int, backend="tvm")
    a = np.full(40, np.float32(2**60))
    for k in (2**60 + 2**36 + 1, 3, 2**53 + 1, -(2**60 + 2**36 + 1), 2**62 + 2**38 + 1):
        assert_same_as_numpy(float32_beside_int, a, k, jitted=jf, rtol=0, atol=0)
        assert_same_as_numpy(float32_beside_int, np.zeros(7, np.float32), k, jitted=jf, rtol=0, atol=0)
