"""Lists a compiled loop appends to (backends/tvm/loop_lists.py), against plain Python: the values and
their Python types in order, lists that held values before, appends before an exception or a
``return``, a list too short for a later call, and what stays Python."""

import math

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import clip_and_collect, event_times, peaks

from astjit import explain, jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(5)


def close_pairs(x, r):
    ii, dj = [], []
    for i in range(x.shape[0]):
        for j in range(i + 1, len(x)):
            if abs(x[i] - x[j]) < r:
                ii.append(i)
                dj.append(x[j] - x[i])
    return ii, dj


def gathered(a, idx, out):
    for k in range(len(idx)):
        out.append(a[idx[k]] * 1.5)          # an IndexError midway: the values before it are appended
    return out


def until_above(a, t, seen):
    for i in range(len(a)):
        if a[i] > t:
            return i
        seen.append(float(a[i]))
    return -1


def typed_values(a, b):
    floats, flags, counts, halves = [], [], [], []
    for i in range(a.shape[0]):
        floats.append(np.float32(a[i]))
        flags.append(a[i] > b[i])            # numpy's bool
        counts.append(i * 3 > 7)             # Python's bool
        halves.append(b[i] / 2)
    return floats, flags, counts, halves


def steps_back(n, step, out):
    for i in range(n, 0, -step):
        for d in (1, 2):
            out.append(i * d)
    return out


def int_elements(v):
    odd = []
    for i in range(v.size):
        if v[i] % 2:
            odd.append(v[i])
    return odd


def mixed_types(a):
    out = []
    for i in range(len(a)):
        if a[i] > 0.5:
            out.append(i)
        else:
            out.append(a[i])
    return out


def triangular(a, w):
    out = []
    for i in range(len(a)):
        for j in range(max(i - w, 0), i):
            out.append(a[i] - a[j])
    return out


def computed_range(a):
    out = []
    for i in range(len(a)):
        m = i % 5
        for j in range(m):
            out.append(j)
    return out


def counted_while(a):
    out = []
    i = 0
    while i < len(a):
        out.append(i)
        i += 2
    return out


def counted_while_writing(a):
    out = []
    i = 0
    while i < len(a):
        out.append(i)
        a[i] = 0.0                     # an effect: the kernel could not start again with more room
        i += 2
    return out


def arrival_times(rnd, rate, tmax):
    t = 0.0
    k = 0
    times = []
    while t < tmax and k < len(rnd):
        t += -math.log(rnd[k]) / rate
        times.append(t)
        k += 1
    return t, times


def collect_until(a, limit):
    out = []
    i = 0
    total = 0.0
    while total < limit and i < len(a):
        total = total + a[i]
        if a[i] > 0.5:
            out.append(i)
        i += 1
    return out, total


def test_values_of_several_types_each_keep_their_own():
    """A list given values of several types (an int or a float element; a Python float, then numpy's)
    gets each as the type it had: a stretch of type indices beside the values."""
    check(mixed_types, [(rng.random(n),) for n in (30, 5, 600, 0)])
    rnd = rng.random(2000)
    # a Gillespie simulation (examples/loop_programs): t a Python float until += a numpy float
    check(event_times, [(10, np.array([0.5, 1.0]), rnd, 5.0), (10, np.array([0.5, 1.0]), rnd, 500.0),
                        (3, np.array([0.5, 1.0]), rnd[:10], 1.0), (0, np.array([0.0, 0.0]), rnd, 5.0)])


def test_appends_whose_count_is_not_known_in_loops_that_write_no_array():
    """A while loop, or a range the loop computes: where a list's room runs out, the kernel stops, its
    appends dropped, and runs again from the start with twice the room."""
    check(counted_while, [(rng.random(n),) for n in (30, 5, 60, 3000, 0)])
    check(computed_range, [(rng.random(n),) for n in (30, 5, 2000)])
    rnd = rng.random(5000)
    check(arrival_times, [(rnd, 2.0, 5.0), (rnd, 2.0, 1e4), (rnd[:3], 1.0, 10.0), (rnd, 2.0, -1.0)])
    check(collect_until, [(rnd, 10.0), (rnd, 3000.0), (rnd[:0], 1.0)])


def read_back(a):
    out = []
    for i in range(len(a)):
        out.append(a[i])
        if len(out) > 3:
            break
    return out


def test_appended_values_in_order_as_python_types():
    check(peaks, [(rng.random(n),) for n in (1, 2, 70, 5000, 3)])     # 5000: more than the first call's room
    check(clip_and_collect, [(rng.random(n), lo) for n, lo in ((100, 0.5), (0, 0.5), (3000, 0.9), (7, 2.0))])
    check(typed_values, [(rng.random(n), rng.random(n)) for n in (1, 9, 300)])
    check(int_elements, [(rng.integers(-50, 50, n).astype(dt),) for n, dt in ((40, np.int32), (500, np.int64),
                                                                              (3, np.uint8))])


def test_nested_loops_and_floats_with_nan_and_signed_zeros():
    x = rng.random(200)
    x[[3, 50]] = np.nan
    x[[7, 8]] = [0.0, -0.0]
    check(close_pairs, [(x, 0.01), (rng.random(40), 0.2), (rng.random(2), 1.0), (np.zeros(0), 1.0)])
    check(steps_back, [(n, s, [99]) for n, s in ((10, 3), (0, 1), (1000, 7), (5, 10), (3, -1), (4, 0))])
    check(triangular, [(rng.random(n), w) for n, w in ((30, 4), (200, 50), (5, 0), (9, -3))])


def test_appends_before_an_exception_or_a_return_are_kept():
    a = rng.random(100)
    check(gathered, [(a, np.array(idx), out) for idx, out in
                     (([1, 5, 99], []), ([1, 5, 100, 2], [7.5]), ([4, -3, -101, 0], []), ([], [1]))])
    check(until_above, [(rng.random(50), t, [-1.0]) for t in (0.99, 2.0, 0.5, -1.0)])


def test_a_list_passed_twice_runs_as_python():
    out = []
    a = rng.random(20)

    def twice(a, p, q):
        for i in range(len(a)):
            p.append(i)
            q.append(a[i])
        return p

    jf = jit(twice)
    for _ in range(3):
        expected = twice(a, [], [])
        got_a, got_b = [], []
        assert jf(a, got_a, got_b) == expected and got_a == list(range(20))
        shared = []
        twice(a, out, out)
        assert jf(a, shared, shared) == out[-40:] and len(shared) == 40   # interleaved as Python does
        out.clear()


@pytest.mark.parametrize("fn, reason", [
    (counted_while_writing, "an append to 'out' inside a loop whose trip count is not known"),
    (read_back, "the list 'out' is appended to and also used otherwise in the loop"),
])
def test_what_stays_python_says_why(fn, reason):
    jf = check(fn, [(rng.random(n),) for n in (30, 5, 60)], compiled=False)
    assert reason in str(explain(jf))


def test_an_appended_name_that_is_not_a_list_runs_as_python():
    class Collector(list):
        pass

    def collect(a, out):
        for i in range(len(a)):
            out.append(a[i])
        return out

    jf = jit(collect)
    for n in (10, 50):
        got = jf(rng.random(n), Collector())
        assert type(got) is Collector and len(got) == n
    assert "a compiled loop appends only to a list" in str(explain(jf))


def test_a_short_loop_appending_to_a_list_runs_as_written(monkeypatch):
    """Handing the values to a list costs a kernel call more (frontend/loop_guard.LIST_HANDOFF_WORK):
    a loop of a few positions runs as written where one without a list would call its kernel."""
    from astjit.frontend.loop_guard import LIST_HANDOFF_WORK

    monkeypatch.setenv("ASTJIT_TINY_LOOP", "32")
    jf = check(peaks, [(rng.random(6),), (rng.random(5),)], compiled=False)
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    assert region.calls == 0 and region.block.tiny_work == 32 + LIST_HANDOFF_WORK
    for n in (100, 6, 3000):
        x = rng.random(n)
        assert jf(x) == peaks(x)
    assert region.calls == 2 and all(e.mode == "tvm" for e in region.entries)


@pytest.mark.parametrize("length", [3, 23, 24, 200])
def test_a_list_of_several_types_is_converted_value_by_value_or_by_columns(length):
    """The runner's conversion of a list's slots (backends/tvm/loop_lists.list_converter): each value as
    the object its type makes, short lists one by one, longer ones a column per type."""
    from astjit.backends.tvm.loop_lists import list_converter
    from astjit.backends.tvm.loop_types import Scalar

    types = [Scalar("int64", True), Scalar("float64", True), Scalar("float32", False), Scalar("int16", False),
             Scalar("bool", True)]
    values = np.round(rng.standard_normal(length) * 100)            # (integers: every type holds them)
    tags = rng.integers(0, len(types), length)
    got = list_converter(types)(values.view(np.int64), tags)
    want = [types[k].type(int(v) if types[k].kind in "iub" else v) for v, k in zip(values.tolist(), tags.tolist())]
    assert got == want and [type(x) for x in got] == [type(x) for x in want]
