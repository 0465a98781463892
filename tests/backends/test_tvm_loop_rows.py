"""Whole-row statements inside compiled loops (backends/tvm/loop_rows.py), against plain Python:
``out[i] = a[i] * 2.0 + 1.0`` on 2-d and 3-d arrays, broadcasting, in-place updates, numpy's errors."""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import affine_rows, scatter_rows

from astjit import explain

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(5)


def normalize_rows(a):
    for i in range(a.shape[0]):
        m = a[i, 0]                                   # read before the row is rewritten
        a[i] = (a[i] - m) / (abs(m) + 1.0)
    return a


def recurrence_rows(x, alpha):
    for t in range(1, x.shape[0]):
        x[t] = alpha * x[t - 1] + (1 - alpha) * x[t]      # each row from the one before
    return x


def masked_rows(a, b, out):
    for i in range(len(a)):
        out[i] = np.maximum(a[i], b) + (a[i] > b)          # b: one row for every i (broadcast)
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_row_statements_match_numpy(dtype):
    shapes = [(5, 4), (1, 7), (0, 3), (6, 0), (9, 1), (3, 2, 4)]
    arrays = [rng.normal(0, 2, s).astype(dtype) for s in shapes]
    # IEEE values, where no operation meets two NaNs: which NaN's sign survives then is not fixed (numpy's
    # own scalar and array paths differ on nan + -nan)
    arrays.append(np.array([[np.nan, np.inf, -0.0, 1.0], [2.0, 0.0, -0.0, -np.inf]], dtype))
    check(affine_rows, [(a, np.zeros_like(a)) for a in arrays])
    check(normalize_rows, [(a,) for a in arrays if a.ndim == 2])
    # 3-d: m is a view of the row the statement rewrites; numpy reads all of it before the write
    check(normalize_rows, [(a,) for a in arrays if a.ndim == 3])
    check(scatter_rows, [(a, rng.random(len(a)).astype(dtype), np.zeros((3,) + a.shape[1:], dtype))
                         for a in arrays])
    check(recurrence_rows, [(a, alpha) for a in arrays for alpha in (0.25, np.float32(0.5), 1)])
    check(masked_rows, [(a, rng.normal(0, 1, a.shape[1:]).astype(dtype), np.zeros_like(a)) for a in arrays]
          + [(a, np.zeros((1,) * (a.ndim - 1), dtype), np.zeros_like(a)) for a in arrays])


def int_rows(a, out, k):
    for i in range(a.shape[0]):
        out[i] = a[i] + k
        out[i] -= a[i - 1]
    return out


@pytest.mark.parametrize("dtype", ["int32", "int16", "int64", "uint8"])
def test_integer_rows_wrap_as_numpy(dtype):
    info = np.iinfo(dtype)
    arrays = [rng.integers(info.min, info.max, s, dtype=dtype, endpoint=True) for s in ((4, 5), (1, 3), (0, 2))]
    ks = [np.int32(7), np.array(3, dtype)[()], np.int64(-2)]
    check(int_rows, [(a, np.zeros_like(a), k) for a in arrays for k in ks],
          compiled=dtype not in ("int64", "uint8"))          # (int64 - int64 and uint8 - int64 need checks)


def scaled_rows(a, k, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * (k * i) + 3          # a Python int beside the row: numpy checks it fits
        out[i] //= k
    return out


@pytest.mark.parametrize("dtype", ["int32", "int16", "int8", "uint8", "uint16"])
def test_python_ints_beside_rows_of_small_int_types_are_checked_once_per_statement(dtype):
    """NEP 50: a Python int that does not fit the rows' type raises numpy's OverflowError, after the
    rows before it were written; one that fits computes in the rows' type (wrapping). Such loops ran
    as Python whole."""
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -50), 50, (6, 4), dtype=dtype, endpoint=True)
    calls = [(a, k, np.zeros_like(a)) for k in (1, 3, -2 if info.min else 2, 25, info.max // 5 + 1)]
    calls += [(a[:0], 7, np.zeros_like(a[:0])), (a, info.max, np.zeros_like(a)), (a, 1, np.zeros_like(a))]
    with np.errstate(all="ignore"):
        check(scaled_rows, calls)


def rows_of(a, b, i):
    for _ in range(2):
        a[i] = b[i] + a[i]
    return a


def test_shape_and_index_errors_are_numpys_with_no_effects():
    """A row that does not broadcast raises numpy's ValueError before anything is written; an index out
    of range raises IndexError, both at the user's line."""
    check(rows_of, [(rng.random((3, 4)), rng.random((3, 4)), 1), (rng.random((3, 4)), rng.random((3, 5)), 0),
                    (rng.random((3, 4)), rng.random((3, 1)), 2), (rng.random((3, 4)), rng.random((2, 4)), 2),
                    (rng.random((3, 4)), rng.random((3, 4)), -4), (rng.random((3, 4)), rng.random((5, 4)), -1)])


def added_in_place(a, v, w):
    for i in range(a.shape[0]):
        a[i] += v * 2.0                  # a row in place
        w *= 0.5                         # a whole array in place
    return a, w


def test_an_in_place_update_that_does_not_broadcast_raises_numpys_message():
    """numpy's error for ``a[i] += v`` names the output's shape too (``(6,) (5,) (6,)``), as the
    kernel's does, and for a row of one element the output's own error."""
    calls = [(rng.random((4, 6)), rng.random(n), rng.random(m)) for n, m in ((6, 3), (5, 3), (1, 2), (6, 1))]
    calls.append((rng.random((4, 1)), rng.random(5), rng.random(2)))
    jitted = check(added_in_place, calls)
    with pytest.raises(ValueError, match=r"shapes \(6,\) \(5,\) \(6,\)"):
        jitted(rng.random((4, 6)), rng.random(5), rng.random(3))


def broadcast_own_row(a):
    for i in range(a.shape[0]):
        a[i] = a[i] + a[i, 0]                         # an element: read before the row is written
    return a


def broadcast_own_plane(b):
    for i in range(b.shape[0]):
        b[i] = b[i] * 0.5 + b[i, 1]                   # a row of the plane being written: numpy reads it first
    return b


def bounded_slice(a, out):
    for i in range(a.shape[0]):
        out[i, 1:] = a[i, :-1]
    return out


def float_into_int(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 1.5
    return out


def test_row_statements_that_read_their_own_target():
    """numpy reads every operand before it writes: a part of the target read broadcast (or shifted)
    goes through a scratch buffer in the kernel."""
    check(broadcast_own_row, [(rng.random((4, 3)),), (rng.random((2, 5)),)])
    check(broadcast_own_plane, [(rng.random((2, 3, 3)),), (rng.random((1, 4, 2)),), (rng.random((3, 1, 1)),)])
    check(bounded_slice, [(rng.random((3, 4)), np.zeros((3, 4))), (rng.random((2, 1)), np.zeros((2, 1)))])


def test_float_rows_into_int_arrays_stay_python():
    jitted = check(float_into_int, [(rng.random((3, 4)), np.zeros((3, 4), np.int64))], compiled=False)
    assert "storing numpy.float64 elements into an array of int64" in str(jitted.explain())


def clip_rows(a, out, lo, hi):
    for i in range(a.shape[0]):
        out[i] = np.clip(a[i], lo, hi)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clip_of_rows_compiles_with_numpys_ties_and_nans(dtype):
    """``np.clip`` is a function over a ufunc: a row statement applying it compiles (its lowering read
    the ufunc's ``nin`` and the loop ran as Python after an internal AttributeError)."""
    calls = []
    for n in (1, 8, 17, 300):
        a = (rng.standard_normal((5, n)) * 2).astype(dtype)
        a[0, ::2], a[1, ::3], a[2, ::4], a[3, 1::5], a[4, ::2] = -0.0, 0.0, np.nan, 1.0, -1.0
        for lo, hi in ((-1.0, 1.0), (0.0, 1.0), (-1.0, -0.0), (np.nan, 1.0), (1.0, -1.0), (dtype(0.0), dtype(-0.0))):
            calls.append((a, np.zeros_like(a), lo, hi))
    check(clip_rows, calls)



def clip_rows_by_rows(a, out, lo):
    for i in range(a.shape[0]):
        out[i] = np.clip(a[i], lo[i], 1.0)
    return out


def test_clip_of_rows_with_bounds_that_are_arrays_runs_as_python():
    """numpy gives the bound on a tie of -0.0 and 0.0 where the bounds are arrays (and keeps the value
    with a scalar bound, the kernel's rule): such a loop stays Python, with numpy's zeros."""
    a, lo = np.full((6, 9), -0.0), np.zeros((6, 9))
    jitted = check(clip_rows_by_rows, [(a, np.ones_like(a), lo), (rng.standard_normal((3, 4)), np.zeros((3, 4)),
                                                                  rng.standard_normal((3, 4)))], compiled=False)
    assert "np.clip of rows with a bound that is an array" in str(explain(jitted))
