"""Column-wise reductions (backends/tvm/schedule._by_columns): a reduction that keeps the input's last
axis (``a.sum(axis=0)``) adds whole rows in order, as numpy does, so float64 sums and means over the
leading axes are numpy's bits; other reductions and special values stay numpy's too."""

import numpy as np
import pytest
from differential import assert_compiled, assert_same_as_numpy

from astjit import jit

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
rng = np.random.default_rng(8)


def column_stats(a):
    return a.sum(axis=0), a.mean(axis=0), (a * 2.0).max(axis=0), np.min(a, axis=0, keepdims=True)


def leading_axes(a):
    return a.sum(axis=(0, 1)), a.mean(axis=1), a.std(axis=0)


# rows whose length is not a multiple of the vector width (17, 301) were split into partial sums, 1 to
# 1000 ulp off numpy's; 2000 x 1001 takes the parallel schedule
@pytest.mark.parametrize("shape", [(300, 64), (7, 16), (1000, 8), (5, 24), (33, 17), (300, 301), (9, 3),
                                   (2000, 1001)])
def test_float64_sums_over_leading_axes_are_numpys_bits(shape):
    a = rng.random(shape) - 0.5
    jf = jit(column_stats)
    for x in (a, a * 1e8, np.ascontiguousarray(a[::-1])):
        got, want = jf(x), column_stats(x)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)
    assert_compiled(jf)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_column_reductions_agree_with_numpy_with_special_values(dtype):
    a = (rng.random((40, 16)) * 10).astype(dtype)
    if dtype[0] == "f":
        a[3, 2], a[5, 7], a[6, 7], a[9, 1] = np.nan, np.inf, -np.inf, -0.0
    tol = {"rtol": 2e-6} if dtype == "float32" else {}
    jf = assert_same_as_numpy(column_stats, a, **tol)
    assert_same_as_numpy(column_stats, a[:1].copy(), jitted=jf, **tol)
    assert_compiled(jf)
    b = (rng.random((6, 5, 8)) * 10).astype(dtype)
    assert_same_as_numpy(leading_axes, b, rtol=2e-6 if dtype == "float32" else 1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 33, 17), (4, 100, 301), (40, 10, 13)])
def test_sums_over_leading_axes_of_odd_rows_and_int_means_are_numpys_bits(shape):
    jf = jit(leading_sums)
    for k in range(3):
        a = rng.standard_normal(shape) * 10 ** k
        got, want = jf(a, (a * 100).astype(np.int64)), leading_sums(a, (a * 100).astype(np.int64))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)
    assert_compiled(jf)


def leading_sums(a, k):
    return (a * 1.5).sum(axis=1), (a + 0.5).sum(axis=(0, 1)), (k + 1).mean(axis=0)


def values_and_their_sum(a, b):
    y = np.tanh(a) * b + 1.0
    return y, y.sum(), (y * 2.0).max()


def test_an_output_that_a_reduction_reads_is_computed_once():
    """The reduction read the output's whole expression and computed it again from the inputs (the
    quick start's tanh chain: twice the math, three inputs read twice, 1.6x numpy's time); it now reads
    the output's buffer."""
    from astjit.inspection.codegen import kernel_code

    jf = jit(values_and_their_sum, backend="tvm")
    for n in (1000, 100_000, 7):
        a, b = rng.standard_normal(n), rng.standard_normal(n)
        got, want = jf(a, b), values_and_their_sum(a, b)
        assert np.allclose(got[0], want[0], rtol=1e-14, atol=1e-14) and got[0].dtype == want[0].dtype
        assert np.isclose(got[1], want[1], rtol=1e-12) and np.isclose(got[2], want[2], rtol=1e-14)
    segment = next(s for f in jf.fragments for e in f.entries for s in e.segments if s.backend == "tvm")
    tir = kernel_code(segment, "tir")
    assert tir.count("4844.063") == 1, tir        # (a constant of float64 tanh's rational form)


def mean_squared_log_error(pred, target):
    r = np.log(pred) - np.log(target)
    return (r * r).mean()


def test_a_sum_of_a_kept_costly_value_computes_it_once():
    """``r`` holds two float64 logs and is read twice: kept, the generic schedule inlined it back into
    each place the exact sum emits its element (32 copies of each log's polynomial, 7 s to compile);
    the summed value is computed in a stage of its own, each log once."""
    from astjit.inspection.codegen import kernel_code

    jf = jit(mean_squared_log_error, backend="tvm")
    for n in (1000, 7, 1000):
        pred, target = rng.random(n) + 0.1, rng.random(n) + 0.1
        assert np.isclose(jf(pred, target), mean_squared_log_error(pred, target), rtol=1e-13, atol=0)
    segment = next(s for f in jf.fragments for e in f.entries for s in e.segments if s.backend == "tvm")
    assert kernel_code(segment, "tir").count("0.14798198605") == 2      # (a coefficient of fdlibm's log)
