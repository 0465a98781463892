"""Counted loops whose variables settle on one type (backends/tvm/loop_settling): ``s = 0.0`` then
``if a[i] > 0.0: s += a[i]`` runs its positions one at a time until ``s`` became a numpy float64, then
as a plain counted loop. Results keep Python's types wherever the type changes: on no position, the
first, the last, and in nested loops."""

import re

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(47)


def sum_positive(a):
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0.0:
            s += a[i]
    return s


def sum_positive_from_negative_zero(a):
    s = -0.0
    for i in range(a.shape[0]):
        if a[i] > 0.0:
            s = s + a[i]
    return s


def count_and_sum_ints(a):
    c = 0
    t = 0
    for i in range(a.shape[0]):
        if a[i] > 0:
            c += 1
            t += a[i]
    return c, t


def running_max(a):
    best = -np.inf
    for i in range(a.shape[0]):
        if a[i] > best:
            best = a[i]
    return best


def last_positive(a):
    for i in range(a.shape[0]):
        if a[i] > 0.0:
            last = i
    return last


def rows_of_positive_sums(a, out):
    total = 0.0
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            if a[i, j] > 0.0:
                s += a[i, j]
        out[i] = s
        total += s
    return total


def mixed_assignments(a):
    """Two assignments of different types: the tag never settles on one, the loop stays in one phase."""
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0.5:
            s = s + a[i]
        elif a[i] < -0.5:
            s = 1.5
    return s


def values(n, dtype=np.float64):
    return [rng.standard_normal(n).astype(dtype),
            np.concatenate([-np.ones(n // 2), [2.0], -np.ones(n - n // 2 - 1)]).astype(dtype),   # mid-way
            -np.abs(rng.standard_normal(n)).astype(dtype),                 # no position assigns
            np.concatenate([-np.ones(n - 1), [2.0]]).astype(dtype),        # only the last one
            np.concatenate([[3.0], -np.ones(n - 1)]).astype(dtype),        # only the first one
            np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-300] * (n // 6 + 1), dtype=dtype)[:n]]


@pytest.mark.parametrize("fn", [sum_positive, sum_positive_from_negative_zero, running_max, mixed_assignments])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_accumulators_keep_python_types(fn, dtype):
    calls = [(a,) for n in (1, 7, 300, 1000) for a in values(n, dtype)] + [(np.zeros(0, dtype),)]
    check(fn, calls)


def test_int_accumulators_keep_python_types():
    calls = [(a,) for n in (1, 5, 200) for a in [rng.integers(-9, 9, n), -np.abs(rng.integers(1, 9, n)),
                                                  np.iinfo(np.int64).max - rng.integers(0, 3, n)]]
    check(count_and_sum_ints, calls)


def test_a_name_the_loop_may_leave_unbound():
    calls = [(a,) for n in (1, 6, 100) for a in values(n)]
    check(last_positive, calls)


def test_nested_loops_settle_in_the_inner_one():
    calls = []
    for shape in [(1, 1), (3, 5), (20, 33)]:
        for a in (rng.standard_normal(shape), -np.ones(shape), np.where(rng.random(shape) < 0.1, 1.0, -1.0)):
            calls.append((a, np.zeros(shape[0])))
    check(rows_of_positive_sums, calls)


def test_the_counted_phase_runs_where_the_type_settled():
    """The loop's kernel holds both phases: a ``while`` over the positions until the tag settles, then
    a counted ``for`` over the positions left."""
    jitted = jit(sum_positive)
    for a in values(50):
        jitted(a)
    (entry,) = [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    (segment,) = entry.segments
    tir = segment.compiled.artifacts["tir"]()
    assert re.search(r"while \w+ < \w+ and \w+ != T.int8\(0\)", tir), tir
    assert re.search(r"for \w+ in range\(\w+ - \w+\)", tir), tir
