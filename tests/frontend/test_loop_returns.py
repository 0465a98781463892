"""``return`` inside a compiled loop (frontend/loops, backends/tvm/loops.loop_return): the kernel stops
with its effects kept and the function returns what Python would, of the same type; the loop's Python
(tiny loops, declined arguments, fallbacks) returns through the same path."""

import functools

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops, peaked  # noqa: F401 - a fixture
from loop_programs import is_sorted, primes_for_else

from astjit import explain, jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(21)


peak = functools.partial(peaked, rng)


def find_first(a, v):
    for i in range(a.shape[0]):
        if a[i] > v:
            return i
    return -1


def find_2d(m, v):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] > v:
                return i, j
    return -1, -1


def index_and_value(a, v):
    for i in range(len(a)):
        if a[i] > v:
            return i, a[i] + 1
    return -1, 0.0


def value_or_count(a, v):
    n = 0
    for x in a:
        if x > v:
            return x * 2             # a numpy scalar of a's dtype
        n += 1
    return n


def clear_then_stop(a, v):
    for i in range(len(a)):
        if a[i] > v:
            return                  # None, after the writes before it
        a[i] = 0
    a[0] = -1


def newton_or_give_up(x, target, tries):
    k = 0
    while abs(x * x - target) > 1e-12:
        if k >= tries:
            return None
        x = x - (x * x - target) / (2.0 * x)
        k += 1
    return x


def returns_int_or_float(a):
    for i in range(len(a)):
        if a[i] > 0.9:
            return 1
        if a[i] < 0.1:
            return a[i] / 2.0
    return 0.5


POSITIONS = [0, 1, 5, 40, -1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
def test_a_search_returns_the_index(dtype):
    check(find_first, [(peak(60, at, dtype), 1) for at in POSITIONS] + [(peak(0, -1, dtype), 1)])
    check(value_or_count, [(peak(30, at, dtype), 1) for at in POSITIONS])
    check(index_and_value, [(peak(30, at, dtype), 1) for at in POSITIONS])


def test_return_false_or_fall_through_to_the_function_return():
    check(is_sorted, [(np.sort(rng.random(n)),) for n in (0, 1, 2, 50)] + [(rng.random(50),), (np.array([1.0, np.nan]),)])


def test_a_tuple_from_nested_loops():
    m = rng.random((20, 30)) * 0.5
    calls = []
    for i, j in ((0, 0), (3, 29), (19, 0), (-1, -1)):
        mm = m.copy()
        if i >= 0:
            mm[i, j] = 2.0
        calls.append((mm, 1.0))
    check(find_2d, calls)


def test_return_of_nothing_keeps_the_effects():
    check(clear_then_stop, [(peak(20, at), 1.0) for at in POSITIONS])


def test_a_while_loop_returns_none_or_falls_through():
    check(newton_or_give_up, [(1.0, 2.0, 100), (1.0, 2.0, 2), (3.0, 9.0, 0), (1e6, 2.0, 5), (1e6, 2.0, 60)])


def test_the_returned_type_is_the_one_python_gives():
    check(returns_int_or_float, [(np.array([0.5, 0.95]),), (np.array([0.5, 0.05]),), (np.array([0.5]),)])


def returns_an_array(a, out):
    for i in range(len(a)):
        if a[i] > 1.0:
            return out
        out[i] = a[i]
    return None


def test_an_array_returned_runs_the_loop_as_python():
    jitted = check(returns_an_array, [(peak(10, at), np.zeros(10)) for at in POSITIONS], compiled=False)
    assert any("not a scalar the loop can read" in r.message for r in explain(jitted))


def mixed_arity(a):
    for i in range(len(a)):
        if a[i] > 1.0:
            return i, a[i]
        if a[i] < 0.0:
            return i
    return None


def test_returns_of_different_lengths_stay_python():
    jitted = check(mixed_arity, [(peak(10, at),) for at in POSITIONS], compiled=False)
    assert "returns of different numbers of values" in str(explain(jitted))


def test_list_arguments_return_through_the_python_loop(monkeypatch):
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "3")
    check(find_first, [(list(peak(30, at)), 1.0) for at in POSITIONS], compiled=False)   # (no .shape)
    check(value_or_count, [(list(peak(30, at)), 1.0) for at in POSITIONS], compiled=False)
    check(value_or_count, [(peak(30, at), 1.0) for at in POSITIONS])


def test_in_a_loop_that_stays_python():
    def rows_until(m, v):
        hits = []
        for r in range(m.shape[0]):
            for c in range(m.shape[1]):
                if m[r, c] > v:
                    return r, c, hits
            hits.append(r)
        return -1, -1, hits

    m = rng.random((6, 40)) * 0.5
    m[4, 33] = 2.0
    jitted = jit(rows_until)
    for v in (1.0, 3.0, 0.4):
        assert rows_until(m, v) == jitted(m, v)


def find_above(a, t):
    for i in range(len(a)):
        if a[i] > t:
            break
    else:
        return -1
    return i


def rows_without_hits(A, t):
    misses = 0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > t:
                break
        else:
            misses += 1
            if misses > 2:
                break                      # (the outer loop's: its region only compiles as a whole)
    return misses


def test_for_else_runs_its_else_where_no_break_ran():
    """``for ... else`` compiles: the else runs after the loop where no ``break`` of it ran (also where
    the range is empty); a ``break`` in the else belongs to the loop around it."""
    rng = np.random.default_rng(3)
    a = rng.random(40)
    check(find_above, [(a, 0.5), (a, 2.0), (a[:0], 0.5), (np.array([np.nan, 1.0]), 0.5)])
    check(primes_for_else, [(50, np.zeros(30, np.int64)), (2, np.zeros(3, np.int64)), (200, np.zeros(10, np.int64))])
    check(rows_without_hits, [(rng.random((6, 4)), 0.9), (rng.random((6, 4)), 2.0), (np.zeros((0, 3)), 1.0),
                              (rng.random((3, 0)), 0.5)])
    big = np.linspace(0, 1, 5000)
    check(find_above, [(big, 0.9999), (big, 2.0), (big[:5], 0.5)])
