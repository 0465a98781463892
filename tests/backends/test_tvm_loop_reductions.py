"""Sums and means of rows inside compiled loops (backends/tvm/loop_reductions.py), against plain
Python: numpy's pairwise order makes float sums equal bit for bit, for every length and stride."""

import numpy as np
import pytest
from differential import misaligned
from loop_checks import check, kernels_for_tiny_loops, run_both, same  # noqa: F401 - a fixture
from loop_programs import moving_sums, row_sums

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(17)
# lengths around numpy's switches: < 8 one by one, 8..128 eight partial sums, > 128 split in halves
LENGTHS = (0, 1, 7, 8, 9, 16, 17, 127, 128, 129, 136, 255, 257, 1000, 4099)


def row_stats(a, out):
    for i in range(a.shape[0]):
        out[i] = np.mean(a[i] * 2.0) - np.sum(a[i, ::-2])      # an expression of rows, a strided row
    return out


def column_total(a):
    total = 0.0
    for j in range(a.shape[1]):
        total += a[:, j].sum()                                  # a column: strided by the row length
    return total


def count_positive(a):
    n = 0
    for i in range(a.shape[0]):
        n += (a[i] > 0).sum()                                   # bools sum as int64
    return n


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_sums_equal_numpys_bit_for_bit(dtype):
    arrays = [rng.normal(0, 1, n).astype(dtype) * 10.0 ** rng.integers(-3, 4, n) for n in LENGTHS]
    check(moving_sums, [(a, w, np.zeros(max(a.shape[0] - w + 1, 0), dtype)) for a in arrays
                        for w in {1, min(a.shape[0], 9), a.shape[0]} if w])
    check(row_stats, [(rng.normal(0, 1, (3, n)).astype(dtype), np.zeros(3, dtype)) for n in LENGTHS])
    check(column_total, [(rng.normal(0, 1, (n, 3)).astype(dtype),) for n in LENGTHS])
    check(count_positive, [(rng.normal(0, 1, (2, n)).astype(dtype),) for n in LENGTHS])
    # -0.0 sums to +0.0, infinities and NaN as numpy
    special = np.array([-0.0] * 9 + [np.inf] * 2 + [1.0], dtype)
    check(moving_sums, [(special, w, np.zeros(13 - w, dtype)) for w in (1, 5, 9, 10, 12)])
    check(moving_sums, [(np.array([np.nan, 1.0, -np.inf] * 50, dtype), 140, np.zeros(11, dtype))])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rows_of_a_misaligned_array_are_summed_as_numpy_does(dtype):
    """numpy adds a misaligned row's elements in buffers of 8192, not pairwise over the row: such a call
    runs the loop's Python, aligned calls the kernel."""
    calls = []
    for w, n in ((10_000, 10_050), (8193, 8243), (20_000, 20_050), (8000, 8192), (30, 200)):
        a = (rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
        calls += [(misaligned(a), w, np.zeros(n - w + 1, dtype)), (a, w, np.zeros(n - w + 1, dtype))]
    check(moving_sums, calls)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "bool"])
def test_integer_sums_are_int64(dtype):
    if dtype == "bool":
        arrays = [rng.random(n) < 0.5 for n in LENGTHS]
    else:
        info = np.iinfo(dtype)
        arrays = [rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True) for n in LENGTHS]
    check(moving_sums, [(a, w, np.zeros(max(a.shape[0] - w + 1, 0), np.int64)) for a in arrays
                        for w in {1, min(a.shape[0], 9)} if w])   # int64 sums wrap as numpy's


def row_means(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i].mean()
    return out


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
def test_means_of_cast_elements_add_numpys_buffers_in_turn(dtype):
    """The float64 mean of ints reads them through numpy's 8192-element buffers: the pairwise sum of
    each buffer is added to the total in turn (large ints make the order visible)."""
    lengths = (0, 5, 8192, 8193, 20001)
    if dtype == "bool":
        arrays = [rng.random((2, n)) < 0.5 for n in lengths]
    elif dtype == "float32":
        arrays = [rng.normal(0, 1, (2, n)).astype(dtype) for n in lengths]
    else:
        info = np.iinfo(dtype)
        arrays = [rng.integers(info.min, info.max, (2, n), dtype=dtype, endpoint=True) for n in lengths]
    out = np.float32 if dtype == "float32" else np.float64
    check(row_means, [(a, np.zeros(2, out)) for a in arrays])


def test_reductions_that_stay_python_say_why():
    jitted = check(row_sums, [(np.arange(6, dtype=np.uint8).reshape(2, 3), np.zeros(2))],
                   compiled=False)
    assert "numpy sums them as uint64" in str(jitted.explain())
    # (small integers: exact in any order, as the block's Fragment may add them in another order)
    jitted = check(row_sums, [(rng.integers(0, 9, (2, 3, 4)).astype(float), np.zeros(2))], compiled=False)
    assert "a row of 2 axes" in str(jitted.explain())


def pivots(A):
    n = A.shape[0]
    out = np.zeros(n, np.int64)
    for k in range(n):
        out[k] = np.argmax(np.abs(A[k:, k])) + k
    return out


def row_extremes(X, out):
    for i in range(X.shape[0]):
        out[i, 0] = X[i].max()
        out[i, 1] = np.min(X[i, 1:])
        out[i, 2] = X[i].argmin()
        out[i, 3] = np.amax(X[i, ::2])
        out[i, 4] = np.argmax(X[i, ::-1])
    return out


def shrinking_rows(X):
    s = 0.0
    for i in range(X.shape[0]):
        s += X[i, i:].max()
    return s


# (no -0.0 against 0.0 for an extreme: which zero numpy gives depends on its vectorized loop and the CPU)
EXTREME_EDGES = np.array([[np.nan, 1.0, 2.0], [1.0, np.nan, 3.0], [-0.0, -2.0, 1.0], [np.inf, -np.inf, 5.0],
                          [2.0, 2.0, 1.0], [0.0, 3.0, 0.5]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_])
def test_maxima_minima_and_their_indices_of_rows(dtype):
    """numpy's: the first NaN wins, else the extreme (argmax/argmin: the first one's index; max/min of
    a short row: the zero numpy's scalar loop keeps); the elements' type, an int64 index."""
    calls = [((rng.standard_normal((n, 6)) * 10).astype(dtype), np.zeros((n, 5))) for n in (1, 8)]
    if np.dtype(dtype).kind == "f":
        calls.append((EXTREME_EDGES.astype(dtype), np.zeros((6, 5))))
    check(row_extremes, calls)


def long_row_extremes(X, out, idx):
    for i in range(X.shape[0]):
        out[i, 0] = X[i].max()
        out[i, 1] = np.min(X[i, 1:])
        idx[i, 0] = X[i].argmin()
        idx[i, 1] = np.argmax(X[i, ::-1])
        idx[i, 2] = np.argmax(X[i, 2::3])
    return out, idx


def long_rows(dtype, n, m, seed):
    """Rows long enough for the lanes (backends/tvm/loop_reductions.lane_extreme), with repeated
    extremes, and for floats NaNs, infinities and zeros of both signs here and there."""
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        X = np.round(r.standard_normal((n, m)) * 3).astype(dtype)       # (ties: rounded values)
        X[r.random((n, m)) < 0.02] = np.inf
        X[r.random((n, m)) < 0.02] = -np.inf
        X[0] = 0.0                                                       # (a max/min of zero)
        X[1, ::2] = -0.0
        X[2, r.integers(0, m)] = np.nan
        X[3, m - 1] = np.nan                                             # (in the last elements)
        X[4] = np.nan
    else:
        info = np.iinfo(dtype)
        X = r.integers(info.min, info.max, (n, m), endpoint=True).astype(dtype)
        X[0] = info.max
        X[1] = X[1] % 5
    return X


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int16, np.uint8])
def test_extremes_of_long_rows_are_numpys_first_ones(dtype):
    """Rows of 16 elements and more take running extremes in vector lanes: the value and first index
    numpy gives (the first NaN wins; of equal extremes the first index), whatever the length, the
    stride and the last elements after the lanes."""
    calls = []
    for seed, m in enumerate((16, 17, 33, 64, 100, 1000)):
        X = long_rows(dtype, 6, m, seed)
        calls.append((X, np.zeros((6, 2), dtype), np.zeros((6, 3), np.int64)))
    jitted = check(long_row_extremes, calls)
    tir = jitted.fragments[0].entries[0].segments[0].compiled.artifacts["tir"]()
    assert "T.vectorized" in tir           # (the lanes: 5x faster than the scan over 10,000 floats)


def computed_row_extremes(X, b, out, idx):
    for i in range(X.shape[0]):
        out[i, 0] = np.abs(X[i]).max()
        out[i, 1] = (X[i] - b).min()
        out[i, 2] = np.minimum(X[i], b).max()
        idx[i, 0] = np.argmax(np.abs(X[i]))
        idx[i, 1] = (X[i] * b).argmin()
    return out, idx


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int16])
def test_extremes_of_computed_rows_take_the_lanes_too(dtype):
    """An extreme of a row computed in the loop (``np.abs(X[i]).max()``, ``np.minimum(X[i], b).max()``)
    runs in the vector lanes as a row's does (scanned element by element it ran 2-5x slower than
    numpy): numpy's value and first index, NaNs and zeros included, short rows too."""
    jitted = jit(computed_row_extremes)
    for seed, m in enumerate((3, 16, 17, 100, 1000)):
        X = long_rows(dtype, 6, m, seed)
        b = long_rows(dtype, 6, m, seed + 10)[2 if np.dtype(dtype).kind == "f" else 1]   # (a NaN; small ints)
        (k1, r1, _), (k2, r2, _) = run_both(computed_row_extremes, jitted, (X, b, np.zeros((6, 3), dtype),
                                                                        np.zeros((6, 2), np.int64)))
        # (the NaN's sign aside: ``inf - inf`` makes a NaN whose sign bit is set, and which NaN numpy's
        # extreme gives of a row holding both is not specified: docs/semantics)
        assert k1 == k2 == "ok" and same([np.where(np.isnan(r), np.nan, r) for r in r1],
                                         [np.where(np.isnan(r), np.nan, r) for r in r2]), (m, r1, r2)
    assert all(e.mode == "tvm" for f in jitted.fragments if f.block.kind == "loop" for e in f.entries)
    tir = jitted.fragments[0].entries[0].segments[0].compiled.artifacts["tir"]()
    assert tir.count("T.vectorized") >= 5


def test_argmax_pivots_and_an_empty_row():
    check(pivots, [(rng.random((5, 5)),), (rng.standard_normal((30, 30)),), (np.zeros((1, 1)),)])
    # X[3, 3:] is empty: numpy's ValueError at the line, after the rows before it
    check(shrinking_rows, [(rng.random((3, 3)),), (rng.random((3, 5)),), (rng.random((4, 3)),)])


def rows_any(a, out, t):
    for i in range(a.shape[0]):
        out[i] = np.any(a[i] > t) ^ a[i].all()
    return out


def truth_counts(a):
    c = 0
    for i in range(a.shape[0]):
        if a[i].all():
            c += 1
        if np.any(a[i]):
            c += 10
        if np.all(a[i, 1:] != a[i, :-1]):
            c += 100
    return c


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
def test_any_and_all_of_rows_are_numpy_bools(dtype):
    """``np.any``/``np.all`` and the methods, of rows and row expressions: an element is true where it
    is not zero, NaN included (a float ``!=`` in TVM is false for NaN); an empty row's any is False,
    its all True."""
    rng = np.random.default_rng(8)
    calls, counts = [], []
    for shape in [(5, 7), (3, 0), (0, 4), (4, 1), (6, 40), (2, 3)]:
        a = (rng.integers(-1, 3, shape) * 0.5).astype(dtype)
        if dtype.startswith("float") and a.size:
            a[0, 0], a[-1, -1] = np.nan, -0.0
        calls.append((a, np.zeros(shape[0], bool), 0.5))
        counts.append((a,))
    check(rows_any, calls)
    check(truth_counts, counts)


def range_of_a_truth(a):
    s = 0
    for i in range(a.shape[0]):
        for _ in range(np.any(a[i] > 0)):   # numpy's bool has no __index__: Python's TypeError
            s += 1
    return s


def test_range_of_a_numpy_bool_raises_as_python():
    """(the loop's work estimate takes the range's argument as Python does, operator.index: it raises
    there, and the loop runs as written, raising Python's TypeError)"""
    check(range_of_a_truth, [(np.ones((3, 4)),), (np.zeros((0, 2)),)], compiled=False)
