"""Rows bound to names inside compiled loops (backends/tvm/loop_named_rows.py), against plain Python:
``d = X[i] - X[j]``, ``for row in X``, ``for k in pts``, rows passed to an inlined function, dots of
row expressions, views that see later writes, and what stays Python."""

import math

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import nbody_step, nearest_center, pairwise_rows

from astjit import explain

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(11)


def energy(pos):
    e = 0.0
    for i in range(pos.shape[0]):
        for j in range(i + 1, pos.shape[0]):
            d = pos[i] - pos[j]
            e += 1.0 / np.sqrt(d @ d)              # numpy makes d, then hands it to BLAS
    return e


def row_norms(X, w):
    out = np.empty(X.shape[0])
    for i, row in enumerate(X):
        out[i] = math.sqrt(np.dot(row, row)) + np.dot(row, w)
    return out


def near_points(xs, pts, radius):
    out = np.zeros(len(xs))
    for i in range(len(xs)):
        for k in pts:
            dist = abs(xs[i] - k[0]) + abs(k[-1])
            if dist < radius:
                out[i] += k[1] / (1.0 + dist)
    return out


def sub_views(X):
    s = 0.0
    for row in X:
        s += row[1:].sum() - row[::2].sum() + row[-1] + len(row) + row.size
    return s


def view_sees_writes(X):
    s = 0.0
    for i in range(X.shape[0]):
        row = X[i]
        X[i, 0] = 5.0                              # a view reads the array as it is when read
        s += row[0]
    return s


def computed_then_written(X):
    s = 0.0
    for i in range(X.shape[0]):
        d = X[i] * 2.0
        X[i, 0] = 5.0                              # d was computed before: the kernel would read 5.0
        s += d[0]
    return s


def element_out_of_bounds(X, k):
    s = 0.0
    for row in X:
        s += row[k]
    return s


def broadcast_error(X, Y):
    s = 0.0
    for i in range(X.shape[0]):
        d = X[i] - Y[i]
        s += d.sum()
    return s


def written_row(X):
    for row in X:
        row[0] = 1.0
    return X


def row_in_scalar_context(X):
    s = 0.0
    for i in range(X.shape[0]):
        d = X[i] * 2.0
        if d:                                      # numpy's truth of a one-element array
            s += 1.0
    return s


def two_bindings(X, flag):
    s = 0.0
    for i in range(X.shape[0]):
        if flag:
            d = X[i]
        else:
            d = X[i] * 2.0
        s += d.sum()
    return s


def points(dtype, shapes):
    """Random points, and points whose differences overflow to inf or are -0.0 (no NaN meets another:
    which NaN's sign survives then is not fixed)."""
    out = [rng.normal(0, 2, s).astype(dtype) for s in shapes]
    big = np.finfo(dtype).max / 1.5
    return out + [np.array([[-0.0, big], [0.0, -big], [1.0, 2.0], [-0.0, 3.0]], dtype)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_row_differences_match_numpy(dtype):
    check(pairwise_rows, [(x, np.zeros((len(x), len(x)), dtype))
                          for x in points(dtype, [(5, 3), (1, 3), (0, 3), (6, 1), (4, 9), (3, 0)])])
    check(energy, [(x,) for x in points(dtype, [(6, 3), (2, 3), (0, 3), (5, 20)])])


def test_integer_rows_dot_wraps_as_numpy():
    check(energy, [(np.array([[2**40, 3, 1], [5, 2**30, 7], [1, 1, 1]]),), (rng.integers(-9, 9, (7, 4)),)])


def test_rows_bound_by_iteration():
    for n, m in [(6, 3), (1, 4), (0, 2), (5, 1)]:
        check(row_norms, [(rng.random((n, m)), rng.random(m)), (rng.random((n, m)) - 0.5, np.zeros(m))])
    check(row_norms, [(np.asfortranarray(rng.random((5, 4))), rng.random(4)), (rng.random((5, 8))[:, ::2], rng.random(4))])
    check(near_points, [(rng.random(20), rng.random((7, 3)), 0.8), (rng.random(3), rng.random((0, 3)), 0.5),
                        (np.array([np.nan, 0.5, -np.inf]), np.array([[0.4, 1.0, -0.0], [np.inf, 2.0, 0.1]]), 1.0)])
    check(sub_views, [(rng.random((4, 5)),), (rng.random((3, 1)),), (rng.random((2, 6)).T,)])


def test_rows_in_an_nbody_step():
    for n in (5, 2, 1):
        pos, vel, mass = rng.random((n, 3)), rng.random((n, 3)) - 0.5, rng.random(n) + 0.5
        check(nbody_step, [(pos, vel, mass, 0.01, 3), (pos * 2, vel, mass, 0.1, 1), (pos, vel, mass, 0.01, 0)])
    coincident = np.zeros((2, 3))                  # r == 0: a division by zero of numpy floats (inf, nan)
    check(nbody_step, [(coincident, np.zeros((2, 3)), np.ones(2), 0.1, 2)])


def test_rows_passed_to_an_inlined_function():
    pairs = [(rng.random((20, 3)), rng.random((4, 3))), (rng.random((5, 2)), rng.random((1, 2))),
             (rng.random((6, 3)), rng.random((0, 3)))]
    check(nearest_center, [(X, C, np.full(len(X), -1)) for X, C in pairs])


def test_a_view_reads_what_was_written_since():
    check(view_sees_writes, [(rng.random((4, 3)),), (rng.random((1, 2)),)])


def test_errors_at_the_users_line():
    jitted = check(element_out_of_bounds, [(rng.random((3, 4)), 2), (rng.random((3, 4)), -4), (rng.random((3, 4)), 4),
                                           (rng.random((3, 4)), -5)])
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        jitted(rng.random((2, 4)), 4)
    jitted = check(broadcast_error, [(rng.random((3, 4)), rng.random((3, 4))), (rng.random((3, 4)), rng.random((3, 1))),
                                     (rng.random((3, 4)), rng.random((3, 3)))])
    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        jitted(rng.random((2, 4)), rng.random((2, 3)))


@pytest.mark.parametrize("fn, args, reason", [
    (computed_then_written, (np.ones((4, 3)),), "which the statements after it write before reading it"),
    (written_row, (np.ones((4, 3)),), "'row' holds a row bound to a name, which the loop only reads"),
    (row_in_scalar_context, (np.ones((4, 1)),), "'d' holds a row, read here where a number is expected"),
    (two_bindings, (np.ones((4, 3)), True), "binding 'd' to a view or a number"),
])
def test_what_stays_python_and_says_why(fn, args, reason):
    jitted = check(fn, [args, tuple(a * 2 if isinstance(a, np.ndarray) else a for a in args)], compiled=False)
    assert reason in str(explain(jitted))


def reversed_view_dot(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        r = X[i, ::-1]
        s += np.dot(r, w)                         # numpy copies a reversed view before BLAS
    return s


def test_a_dot_of_a_reversed_view_stays_python():
    jitted = check(reversed_view_dot, [(rng.random((4, 3)), rng.random(3))], compiled=False)
    assert "a dot product of a view whose slices step by other than positive constants" in str(explain(jitted))
