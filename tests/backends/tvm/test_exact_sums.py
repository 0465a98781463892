"""Float sums, means, variances of straight-line kernels give numpy's bits: numpy adds pairwise over
the reduced elements in memory order (per row for ``axis=-1``, over the whole array for a full sum), or
a row at a time where the last axis is kept; the kernel adds in the same order, in the same dtype
(float32 in float32), or leaves the reduction to numpy where its order depends on a layout."""

import numpy as np
import pytest
from differential import misaligned

from astjit import explain, jit

SIZES = list(range(0, 300)) + [100_003, 2**20 + 5]
DTYPES = [np.float16, np.float32, np.float64]


def squared_error(a, b):
    d = a - b
    return (d * d).sum()


def row_sums(a):
    return (a * 2.0).sum(axis=-1)


def scaled_mean(a):
    return (a * 1.5).mean()


def row_moments(a):
    return (a * 1.5).var(axis=-1), a.std(axis=-1, ddof=1), (a - 1.0).mean(axis=-1)


def full_sum(a):
    return (a * 2.0).sum()


def normalized(x):
    """softmax's shape (a costly value kept, its row sums, the division), with a power numpy and the
    kernel both compute exactly where exp may differ in the last bit"""
    e = (x - x.max(axis=-1, keepdims=True)) ** 2.0 + 1.0
    return e / e.sum(axis=-1, keepdims=True)


def column_sums(a):
    return (a * 2.0).sum(axis=0), (a * 2.0).mean(axis=0)


def int_means(i):
    return (i + 1).mean(), (i * 2).mean(axis=-1), (i - 1).var(axis=-1)


def assert_bits(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_bits(g, w)
        return
    assert type(got) is type(want), (type(got), type(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def assert_calls_match(fn, *arg_sets):
    jf = jit(fn, backend="tvm")
    with np.errstate(all="ignore"):
        for args in arg_sets:
            assert_bits(jf(*args), fn(*args))
    return jf


def compiled(jf) -> bool:
    """Whether no block of ``jf`` fell back to numpy or Python."""
    return "nothing fell back" in str(explain(jf))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sums_of_every_small_length_and_some_large(dtype):
    rng = np.random.default_rng(0)
    for n in SIZES:
        a, b = (rng.standard_normal(n).astype(dtype) for _ in range(2))
        assert_calls_match(squared_error, (a, b), (b, a))
        assert_calls_match(full_sum, (a,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 7), (5, 100), (4, 129), (3, 300), (2, 9000), (64, 1024)])
def test_rows_and_full_sums_of_2d(dtype, shape):
    rng = np.random.default_rng(1)
    sets = [(rng.standard_normal(shape).astype(dtype),) for _ in range(3)]
    for fn in (row_sums, full_sum, scaled_mean, column_sums):
        jf = assert_calls_match(fn, *sets)
        assert compiled(jf) or dtype == np.float16          # (float16 runs on numpy)
    if dtype != np.float16:
        assert compiled(assert_calls_match(row_moments, *sets))
        jf = assert_calls_match(normalized, *sets)
        schedules = {s.description for f in jf.fragments for e in f.entries for s in e.segments}
        assert schedules == {"tvm kernel (rows)" if shape[-1] % 8 == 0 else "tvm kernel (scheduled)"}


def test_fortran_and_transposed_operands():
    """A full sum of a Fortran array adds in its memory order (numpy runs such a block); a transposed
    view's sum in a kernel is left to numpy, which adds in the memory order."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((300, 70))

    def of_transpose(a):
        return (a.T * 2.0).sum(), (a.T * 2.0).sum(axis=-1), (a.T * 2.0).sum(axis=0)

    assert_calls_match(full_sum, (np.asfortranarray(a),), (a,), (np.asfortranarray(a * 3),))
    assert_calls_match(of_transpose, (a,), (a * 3,))


def of_views(a):
    return (a[:, ::2].sum(axis=-1), a[::-1].sum(axis=0), a[::2].mean(axis=-1), a[:, ::-1].sum(axis=-1),
            a[1:].sum(), a[2].sum(), a[:, 3].mean())


def of_views_numpy_orders(a):
    """numpy adds a strided 2-d view's full sum in buffers and a transposed view in memory order: such
    reductions stay numpy's"""
    return a[:, ::2].sum(), a.T.sum(axis=0), a.T.sum(axis=-1), a.T.sum()


def test_reductions_of_views():
    rng = np.random.default_rng(6)
    for shape in [(6, 9), (5, 300), (3, 2000)]:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
        assert compiled(assert_calls_match(of_views, (a,), (b,)))
        assert_calls_match(of_views_numpy_orders, (a,), (b,))


def test_int_and_bool_means_in_numpys_buffers():
    rng = np.random.default_rng(3)
    for shape in [(5, 9), (3, 10_000), (20_000,)]:
        i = rng.integers(-2**40, 2**40, shape)
        sets = [(i,), (i[::-1].copy(),)]
        if len(shape) == 1:
            jf = assert_calls_match(lambda i: ((i + 1).mean(), (i > 0).mean()), *sets)
        else:
            jf = assert_calls_match(int_means, *sets)
        assert compiled(jf)


def runs_then_in_order(a):
    return a.sum(axis=(0, 2)), np.mean(a, axis=(0, 2), keepdims=True), (a * 2).var(axis=(0, 2)), a.sum(axis=(1, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_runs_of_the_last_axis_added_in_order(dtype):
    """axis=(0, 2): numpy sums each run of the last axis pairwise and adds the runs' sums in order."""
    rng = np.random.default_rng(4)
    for shape in [(2, 3, 4), (5, 3, 200), (3, 2, 1000), (4, 1, 130)]:
        a = (rng.standard_normal(shape) * 1e6).astype(dtype)
        jf = assert_calls_match(runs_then_in_order, (a,), (a[::-1].copy(),))
        assert compiled(jf)


def sums_and_means(a):
    return a.sum(), np.mean(a), a[::2].sum(axis=-1), a.reshape(-1).sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_misaligned_array_is_summed_by_numpy(dtype):
    """numpy adds a misaligned array's elements in buffers of 8192 (its copy loop's), not pairwise over
    the whole: calls with one run on numpy, aligned calls of the same kernel stay compiled."""
    rng = np.random.default_rng(7)
    sets = []
    n = 100_003
    for _ in range(3):
        a = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
        sets += [(misaligned(a),), (a,)]
    assert compiled(assert_calls_match(sums_and_means, *sets))
    rows = rng.standard_normal((9001, 11)).astype(dtype)
    assert compiled(assert_calls_match(sums_and_means, (misaligned(rows),), (rows,), (misaligned(rows * 2),)))
    # (an array of one buffer or less is added as an aligned one is: its calls stay compiled)
    for n in (1000, 8192):
        a = rng.standard_normal(n).astype(dtype)
        assert compiled(assert_calls_match(sums_and_means, (misaligned(a),), (a,), (misaligned(a * 3),)))


def test_zeros_infinities_and_nan():
    cases = [np.array([-0.0]), np.array([-0.0] * 9), np.array([1e308] * 4 + [-1e308] * 4),
             np.array([np.inf, 1.0, -np.inf] * 5), np.array([np.nan] + [1.0] * 20),
             np.array([1e308] * 200), np.array([-0.0] * 300)]
    for a in cases:
        assert_calls_match(lambda a: (a * 1.0).sum(), (a,))
        assert_calls_match(lambda a: (a + 0.0).mean(), (a,))


def costly_sums(x, y):
    z = np.tanh(np.exp(x * 0.1) + np.log1p(y * y)) * np.sin(x) - np.cos(y) / (1.0 + x * x)
    return z.sum(axis=-1), z.mean()


def test_a_costly_value_a_sum_reads_is_computed_once():
    """A sum's element appears in several places of its code (a block's lanes, its tail, each block of
    an unrolled tree): a chain of exp, log, tanh... there is computed in a stage of its own instead
    (each copy cost TVM and LLVM about 0.1 s to compile: 2.7 s for this kernel, 0.8 s before exact sums)."""
    from astjit.inspection.text import render_function

    rng = np.random.default_rng(7)
    x, y = rng.random((64, 1000)), rng.random((64, 1000))
    jf = jit(costly_sums, backend="tvm")
    for got, want in zip(jf(x, y), costly_sums(x, y)):        # (tanh, sin...: the C library's, to an ulp)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert compiled(jf)
    assert render_function(jf, code="tir").count("4844.063") == 1     # (a constant of float64 tanh's form)
