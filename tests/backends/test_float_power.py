"""Float powers as numpy computes them: its ufunc loop takes an exponent read once per inner loop (a
scalar, or broadcast along the last axis) as a fast path, sqrt for 0.5, while numpy's scalar math
(``np.float64(x) ** 0.5``, also in a loop that stays Python) calls pow. The two differ at -inf and
-0.0; compiled code must give numpy's bits in each case, for exponents fixed or passed at run time."""

import warnings

import numpy as np
import pytest

from astjit import jit

EDGES = [-np.inf, -0.0, 0.0, 4.0, -4.0, np.nan, np.inf, 1e300, 2.5e-310]


def same_bits(got, want):
    assert type(got) is type(want)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want)), \
        (got, want)


def run_both(fn, *args):
    jf = jit(fn, backend="tvm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            same_bits(jf(*args), fn(*args))
    return jf


def power_of(a, b):
    return (a * 1.0) ** b


def np_power_of(a, b):
    return np.power(a + 0.0, b)


def half_power(a):
    return (a * 1.0) ** 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [power_of, np_power_of])
def test_an_exponent_passed_at_run_time_takes_numpys_fast_path(fn, dtype):
    a = np.array(EDGES * 3, dtype)
    for b in (0.5, np.float64(0.5), np.float32(0.5), np.array(0.5), 2.0, 2, -1.0, 1.0, 0.0, 3.0, -0.5):
        run_both(fn, a, b)
    run_both(fn, a.reshape(3, 9), np.full((1, 1), 0.5, dtype))                # one element, broadcast: sqrt
    run_both(fn, a.reshape(3, 9), np.array([[0.5], [2.0], [0.5]], dtype))      # broadcast along rows: pow
    run_both(fn, a, np.full(a.shape, 0.5, dtype))                             # elementwise: pow
    run_both(fn, a[:1], np.full(1, 0.5, dtype))                               # one element each: pow


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_squares_reciprocals_and_ones_at_run_time_are_numpys_bits(dtype):
    """numpy's fast paths for 2, -1, 1 and 0 give ``x * x``, ``1 / x``, ``x`` and ``1``; the kernel called
    pow for an exponent known only at run time (30x numpy's time for 2, and one ulp away from ``1 / x``
    for some float64 values)."""
    a = np.linspace(-3.0, 3.0, 1001).astype(dtype)
    for b in (2, -1, 1, 0, 2.0, -1.0, np.float64(2.0), 2, -1):     # (3: pow, one ulp from numpy's)
        jf = run_both(power_of, a, b)
    assert [e.mode for f in jf.fragments for e in f.entries] == ["tvm"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fixed_half_power_of_an_array_is_sqrt(dtype):
    run_both(half_power, np.array(EDGES * 2, dtype))
    run_both(half_power, np.array(-np.inf, dtype))                            # 0-d: still the ufunc


def scalar_half_powers(a, i):
    x = a[i]
    return x ** 0.5, x ** 2, x ** -1.0, (x * 2.0) ** 0.5


def sum_of_roots(a):
    s = 0.0
    for i in range(len(a)):
        s += a[i] ** 0.5
    return s


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_numpy_scalar_to_the_half_calls_pow(dtype):
    a = np.array(EDGES, dtype)
    for i in range(len(EDGES)):
        run_both(scalar_half_powers, a, i)
    for n in (5, 40):
        run_both(sum_of_roots, np.full(n, -np.inf, dtype))                   # pow: inf; sqrt would give nan
        run_both(sum_of_roots, np.full(n, -0.0, dtype))
        run_both(sum_of_roots, np.linspace(0, 9, n).astype(dtype))
