"""Float expressions that a real-number simplifier would fold (x*0 -> 0, x-x -> 0, x==x -> True,
(x+y)-y -> x, not(x<=0) -> x>0) must give numpy's IEEE results for NaN, +-inf and -0.0, bit for bit."""

import warnings

import numpy as np
import pytest

from astjit import jit

NAN, INF = np.nan, np.inf
EDGES = [NAN, INF, -1.0, 1e-17, 0.0, -0.0, -INF, 3.0, 2.5e-39]
OTHER = [1.0, 1.0, INF, 1.0, 1.0, -0.0, 2.0, -0.0, NAN]


def times_zero(a, b):
    return a * 0.0


def zero_times(a, b):
    return 0.0 * a


def minus_itself(a, b):
    return a - a


def equals_itself(a, b):
    return a == a


def not_equals_itself(a, b):
    return a != a


def zero_divided(a, b):
    return 0.0 / a


def add_then_subtract(a, b):
    return (a + b) - b


def subtract_then_add(a, b):
    return (a - b) + b


def not_less_equal(a, b):
    return ~(a <= 0.0)


def not_equal_via_invert(a, b):
    return ~(a == b)


def logical_not_of_compare(a, b):
    return np.logical_not(a < b)


def max_of_times_zero(a, b):
    return (a * 0.0).max()


def plus_zero(a, b):
    return a + 0.0


def plus_python_int_zero(a, b):
    return a + 0


def square_minus_product(a, b):
    return np.square(a) - a * a


def where_self_equal(a, b):
    return np.where(a == a, a, -7)


def times_one_plus_zero(a, b):
    return a * 1.0 + 0.0


def divided_by_itself(a, b):
    return a / a


def zeros_times(a, b):
    return np.zeros_like(a) * a


def scalar_argument_twice(a, b):
    s = b[0]
    return (a + s) - s


def reassociated_constants(a, b):
    return (a * 3.0) * (1 / 3.0)


def clip_to_zero(a, b):
    return np.clip(a, 0.0, 0.0)


def clip_between(a, b):
    return np.clip(a, -0.0, 1.0)


def clip_below_only(a, b):           # numpy: np.maximum, the bound on a tie of zeros
    return np.clip(a, b, None)


def clip_above_only(a, b):
    return np.clip(a, None, b)


def relu_by_clip(a, b):
    return np.clip(a, 0.0, None), a.clip(-0.0), a.clip(max=0.0), a.clip(min=b)


IDENTITIES = [times_zero, zero_times, minus_itself, equals_itself, not_equals_itself, zero_divided,
              add_then_subtract, subtract_then_add, not_less_equal, not_equal_via_invert, logical_not_of_compare,
              max_of_times_zero, plus_zero, plus_python_int_zero, square_minus_product, where_self_equal,
              times_one_plus_zero, divided_by_itself, zeros_times, scalar_argument_twice,
              reassociated_constants, clip_to_zero, clip_between, clip_below_only, clip_above_only, relu_by_clip]


def assert_bitwise_equal(got, want):
    assert type(got) is type(want), (type(got), type(want))
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        assert np.array_equal(got, want, equal_nan=True), (got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want)), ("sign of zero", got, want)
    else:
        assert np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [5, 9, 40, 1001])
@pytest.mark.parametrize("fn", IDENTITIES, ids=lambda f: f.__name__)
def test_identity_keeps_ieee_results(fn, size, dtype):
    jf = jit(fn)
    for shift in range(3):                     # other values on every call, one specialization
        a = np.roll(np.resize(np.array(EDGES, dtype), size), shift)
        b = np.roll(np.resize(np.array(OTHER, dtype), size), -shift)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = fn(a.copy(), b.copy())
            got = jf(a.copy(), b.copy())
        assert_bitwise_equal(got, want)
    modes = {e.mode for f in jf.fragments for e in f.entries}
    assert modes & {"tvm", "mixed"} or jf.fragments[0].entries[0].mode_chosen == "python", modes


def test_clip_of_negative_zero_scalar_keeps_its_sign():
    def clip_scalar(x):
        return np.clip(x, 0.0, 0.0) + np.zeros(3)

    jf = jit(clip_scalar)
    for x in (-0.0, 0.0, -0.0):
        assert_bitwise_equal(jf(np.full(3, x)), clip_scalar(np.full(3, x)))


def clip_lower(x, lo):
    return np.clip(x, lo, 1.0)


def clip_upper(x, hi):
    return np.clip(x * 1.0, -1.0, hi)


def clip_both(x, lo, hi):
    return (x + 0.0 * x).clip(lo, hi)


# numpy's clip loop keeps the element on a tie of equal zeros where both bounds are one value for all
# elements, and returns the bound where either is an array of elements (x of (4, 16) clipped to (4, 1)
# bounds, or one element clipped to one-element arrays): the kernel always kept the element
@pytest.mark.parametrize("fn, shapes", [
    (clip_lower, [(16,), (16,)]), (clip_lower, [(16,), (1,)]), (clip_lower, [(1,), (1,)]),
    (clip_lower, [(4, 16), (4, 1)]), (clip_lower, [(4, 16), (1, 1)]), (clip_lower, [(4, 16), ()]),
    (clip_lower, [(1000,), (1000,)]), (clip_upper, [(16,), (16,)]), (clip_upper, [(4, 16), (1, 16)]),
    (clip_both, [(16,), (), (16,)]), (clip_both, [(16,), (1,), (1,)]), (clip_both, [(1,), (1,), ()]),
    (clip_both, [(33,), (33,), (33,)]),
], ids=lambda v: v.__name__ if callable(v) else str(v))
def test_clip_ties_of_zeros_follow_numpys_loop_for_the_bounds(fn, shapes):
    rng = np.random.default_rng(3)
    jf = jit(fn)
    for _ in range(4):
        x = rng.choice([-0.0, 0.0, 0.5, -2.0, NAN], size=shapes[0])
        bounds = [np.asarray(rng.choice([-0.0, 0.0], size=s)) for s in shapes[1:]]
        bounds = [b if b.ndim else float(b) for b in bounds]
        assert_bitwise_equal(jf(x, *bounds), fn(x, *bounds))


def clip_any(x, lo, hi):
    return np.clip(x, lo, hi)


@pytest.mark.parametrize("x_shape", [(3,), (2, 3), (2, 3, 1)])
def test_clip_ties_of_zeros_with_bounds_of_any_shape_are_numpys_in_the_kernel(x_shape):
    """With the kernel kept (no measurement: small arrays run it too), every combination of bound
    shapes gives numpy's zeros. Bounds of several values broadcast to the result ((2, 1) against (2, 3))
    have no rule: numpy keeps the element where both bounds are so or ``x`` is broadcast along the rows,
    and gives the bound where the other is a number; such a clip runs on numpy."""
    rng = np.random.default_rng(11)
    shapes = [None, (2, 1), (1, 3), (2, 3), (2, 1, 1)]
    for lo_shape in shapes:
        for hi_shape in shapes:
            jf = jit(clip_any, backend="tvm")         # (one each: the recompile limit would run Python)
            for _ in range(2):
                x = rng.choice([-0.0, 0.0, 0.5, -0.5], size=x_shape)
                lo, hi = (float(rng.choice([-0.0, 0.0])) if s is None else rng.choice([-0.0, 0.0], size=s)
                          for s in (lo_shape, hi_shape))
                try:
                    want = clip_any(x, lo, hi)
                except ValueError:                   # (shapes that do not broadcast)
                    with pytest.raises(ValueError):
                        jf(x, lo, hi)
                    continue
                assert_bitwise_equal(jf(x, lo, hi), want)


SIGNALING = {np.float64: (np.uint64, [0x7FF0000000000001, 0xFFF0000000000005], 1 << 51),
             np.float32: (np.uint32, [0x7F800001, 0xFF800005], 1 << 22)}
FOLDED_IDENTITIES = [lambda x: np.where(x != 0.5, x * 1, 0.5), lambda x: np.where(x != 0.5, 1 * x, 0.5),
                     lambda x: np.where(x != 0.5, x - 0, 0.5), lambda x: x / 1.0, lambda x: x + (-0.0)]


@pytest.mark.parametrize("backend", ["tvm", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_signaling_nan_differs_from_numpys_in_its_quiet_bit_only(dtype, backend):
    """numpy's arithmetic quiets a signaling NaN; the identities astjit folds (``x * 1``, ``x - 0``:
    the shipped exact rules, and LLVM in kernels) may pass it through: its payload and sign are kept,
    and arithmetic that is not an identity quiets it as numpy does (docs/semantics.md)."""
    uint, bits, quiet = SIGNALING[dtype]
    x = np.resize(np.array(bits, uint), 40).view(dtype)
    for fn in FOLDED_IDENTITIES:
        want, got = fn(x).view(uint), jit(fn, backend=backend)(x.copy()).view(uint)
        assert np.array_equal(got | quiet, want), (fn, got, want)
    for fn in (lambda x: x * 2.0, lambda x: x + 0.0, lambda x: np.where(x != 0.5, x * 1, 0.5) + 0.0):
        assert_bitwise_equal(jit(fn, backend=backend)(x.copy()).view(uint), fn(x).view(uint))
