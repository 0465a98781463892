"""Loops over arrays (frontend/loop_iteration): ``for x in a``, ``enumerate`` and ``zip`` run in the
loop kernel as counted loops, with Python's items, types, effects and errors; what has no counted
form (a rebound iterable, a list, rows bound to names) runs as written."""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import back_substitution, item_sum

from astjit import explain

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(5)
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]


def arrays(n, dtype):
    return (rng.random(n) * 10).astype(dtype)


def dot(a, b):
    s = 0
    for x, y in zip(a, b):
        s += x * y
    return s


def weighted(a, start):
    out = 0.0
    for i, x in enumerate(a, start):
        out += i * x
    return out


def double_until(a, limit):
    last = -1.0
    for i, x in enumerate(a):
        if x > limit:
            last = x
            break
        a[i] = x * 2
    return last


def pairs_below(a, b):
    c = 0
    for i, (x, y) in enumerate(zip(a, b)):
        if x < y:
            c += i
    return c


def nested(a, n):
    t = 0.0
    for j in range(n):
        for x in a:
            t += x * j
    return t


def last_item(a):
    x = a[0]
    for x in a:
        pass
    return x


def writes_what_it_reads(a):
    t = 0
    for x in a:
        t += 1
        if t < len(a):
            a[t] = x + 1              # the next item read is the one just written, as Python's iterator sees it
    return t


@pytest.mark.parametrize("dtype", DTYPES)
def test_items_of_one_array(dtype):
    check(item_sum, [(arrays(n, dtype),) for n in (0, 1, 7, 300, 5)])
    check(last_item, [(arrays(n, dtype),) for n in (1, 7, 300)])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_zip_stops_at_the_shorter_array(dtype):
    check(dot, [(arrays(n, dtype), arrays(m, dtype)) for n, m in ((5, 5), (7, 3), (2, 40), (0, 4), (100, 99))])


def test_enumerate_from_a_start():
    check(weighted, [(arrays(n, np.float64), start) for n, start in ((5, 0), (9, 3), (0, 1), (50, -7))])
    check(pairs_below, [(arrays(n, np.float64), arrays(n, np.float64)) for n in (0, 3, 60)])


def test_break_and_in_place_writes():
    check(double_until, [(rng.random(n) * 0.6, 0.5) for n in (0, 1, 10, 200)] + [(np.full(30, 0.1), 0.5)])


def test_nested_loops_and_writes_seen_by_later_items():
    check(nested, [(arrays(n, np.float64), k) for n, k in ((4, 3), (50, 0), (0, 5))])
    check(writes_what_it_reads, [(np.zeros(n, np.int64),) for n in (0, 1, 5, 40)])


def test_a_0d_array_raises_as_python():
    check(item_sum, [(np.array(2.0),)], compiled=False)


def test_lists_and_dicts_run_as_written():
    check(item_sum, [([1.0, 2.5, 3.0],), ({1.0: "a", 2.0: "b"},), ((1, 2, 3),)], compiled=False)


def rebinds(a):
    for x in a:
        a = a * 2
    return a


def rows(a):
    t = 0.0
    for row in a:
        t += row.sum()
    return t


def test_what_has_no_counted_form_runs_as_python():
    jitted = check(rebinds, [(arrays(n, np.float64),) for n in (0, 3)], compiled=False)
    assert "the loop rebinds 'a', which it iterates over" in str(explain(jitted))
    check(rows, [(rng.random((n, 3)),) for n in (0, 4, 30)], compiled=False)


def test_the_estimate_counts_the_items(monkeypatch):
    """A short array's loop runs as written (the work estimate reads its length); a long one compiles."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "32")
    jitted = check(item_sum, [(arrays(5, np.float64),)], compiled=False)
    assert not [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    check(item_sum, [(arrays(500, np.float64),)])


EDGES = np.array([np.nan, np.inf, -0.0, -np.inf, 0.0, 1.5, -0.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_items_that_are_nan_inf_or_negative_zero(dtype):
    edges = EDGES.astype(dtype)
    check(item_sum, [(edges,), (edges[2:3],), (edges[::-1].copy(),), (np.tile(edges[2:], 9),)])
    check(last_item, [(edges,), (edges[2:3],)])
    check(dot, [(edges, edges[::-1].copy()), (edges[2:], edges[2:])])


def decay_backwards(a, out, start):
    acc = 0.0
    for i in reversed(range(start, len(a))):
        acc = acc * 0.5 + a[i]
        out[i] = acc
    return out, acc


def test_reversed_range_counts_down_in_the_kernel():
    a = rng.random(20)
    check(decay_backwards, [(a, np.zeros(20), 0), (a, np.zeros(20), 15), (a[:3], np.zeros(3), 5),
                            (a[:0], np.zeros(0), 0), (a, np.zeros(20), -3), (a.astype(np.float32), np.zeros(20), 2)])
    check(decay_backwards, [(a, np.zeros(20), 2.5)], compiled=False)        # range's own TypeError
    u = np.triu(rng.random((9, 9))) + np.eye(9)
    check(back_substitution, [(u, rng.random(9)), (u[:4, :4].copy(), rng.random(4)), (np.ones((1, 1)), np.ones(1)),
                            (np.zeros((2, 2)), np.ones(2))])


def enumerate_from(a, k):
    best = -1
    for i, x in enumerate(a, k):
        if x > 0.5:
            best = i
    return best


def test_enumerate_counts_in_python_ints_from_any_int_start():
    # enumerate takes its start's __index__: the counter is a Python int whatever int type starts it
    a = np.array([0.9, 0.1, 0.7])
    check(enumerate_from, [(a, np.int64(2)), (a, np.int32(-5)), (a, 3), (a, True), (a, np.uint8(200))])
    check(enumerate_from, [(a, 2.5), (a, np.bool_(True))], compiled=False)      # TypeError, as Python's


def enumerate_from_keyword(a, k):
    best = -1
    for i, x in enumerate(a, start=k):
        if x > 0.5:
            best = i
    return best


def test_enumerate_takes_its_start_by_keyword():
    a = np.array([0.9, 0.1, 0.7])
    check(enumerate_from_keyword, [(a, 3), (a, np.int64(-2)), (a[:0], 1), (a, True)])
    check(enumerate_from_keyword, [(a, 2.5)], compiled=False)
