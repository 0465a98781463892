"""Value ranges of a loop's int variables (backends/tvm/loop_spans.py): a check is left out only where
it cannot fail. Each function is called with values where the ranges prove an access in bounds and
where they do not (an off-by-one search, a negative start, a counter reassigned after its test), on
one jitted function, and compared with plain Python: results, arguments afterwards, exceptions.
"""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import bisect_rows

from astjit import jit
from astjit.backends.tvm import loop_spans as spans

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]
rng = np.random.default_rng(5)


def search(a, x):
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def search_one_past(a, x):
    lo, hi = 0, len(a) + 1           # a bug of the caller's: mid reaches len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def search_inclusive(a, x):
    lo, hi = 0, len(a) - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        elif a[mid] > x:
            hi = mid - 1
        else:
            found = mid
            break
    return found


def search_from(a, x, lo):
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def overflow_lines(jitted) -> list:
    """The lines of the int64 overflow checks a compiled loop kernel kept."""
    (kernel,) = [e.loop for f in jitted.fragments for e in f.entries if getattr(e, "loop", None)]
    return sorted(site.line for site in kernel.sites if site.raise_.__qualname__.startswith("_int_overflow"))


def checked_lines(jitted) -> list:
    """The lines of the checks a compiled loop kernel kept (where it may stop)."""
    (kernel,) = [e.loop for f in jitted.fragments for e in f.entries if getattr(e, "loop", None)]
    return sorted(site.line for site in kernel.sites)


def test_binary_searches_agree_with_python_in_and_out_of_bounds():
    """The plain search is proven (no check of ``lo + hi``, none of ``a[mid]``); one past the end
    raises IndexError as Python does; an inclusive search breaks out of the loop; a negative
    start reads wrapped elements as Python does (its indices are checked and wrapped)."""
    a = np.sort(rng.random(300))
    for x in (0.5, -1.0, 2.0, a[17], a[-1]):
        check(search, [(a, x), (a[:1], x), (a[:0], x), (a[:7].astype(np.float32), x)])
        check(search_inclusive, [(a, x), (a[:1], x), (a[:0], x), (a[:2], x)])
    one_past = check(search_one_past, [(a, 0.5), (a, 2.0), (a[:0], 1.0), (a[:3], 0.0), (a[:3], 5.0)])
    assert checked_lines(one_past) == [search_one_past.__code__.co_firstlineno + 4]   # a[mid]: maybe a[len(a)]
    for proven in (search, search_inclusive):               # nothing left to check in the kernel
        jitted = jit(proven)
        jitted(a, 0.5)
        assert checked_lines(jitted) == []
    check(search_from, [(a, 0.5, 0), (a, 0.5, -3), (a, 0.5, -300), (a, 0.5, -301), (a, 0.5, 299), (a, 2.0, 150)])
    m = np.sort(rng.random((20, 40)), axis=1)
    check(bisect_rows, [(m, rng.random(20), np.zeros(20, np.int64)), (m[:, :1], rng.random(20), np.zeros(20, np.int64)),
                        (m[:3], rng.random(5), np.zeros(3, np.int64)), (m[:4], rng.random(3), np.zeros(4, np.int64))])


def walk(a, step):
    s = 0.0
    i = 0
    while i < len(a):
        s += a[i]
        i += step
    return s


def walk_ahead(a):
    s = 0.0
    i = 0
    while i < len(a):
        i += 1
        s += a[i]                    # the test no longer holds for this i: the last one is out of bounds
    return s


def guarded(a, j):
    s = 0.0
    for k in range(3):
        if j < len(a):
            s += a[j]
        else:
            s -= a[j - len(a)]
        j += k
    return s


def growing(a, out):
    k = 0
    for i in range(len(out)):
        out[i] = a[k]
        k = k + 2
    return out


def test_tests_refine_only_until_their_names_are_assigned():
    a = rng.random(50)
    check(walk, [(a, 1), (a, 3), (a, 49), (a, 50), (a[:0], 1)])
    check(walk_ahead, [(a,), (a[:1],), (a[:0],)])
    check(guarded, [(a, 0), (a, 48), (a, 49), (a, 60), (a, -3), (a, -60), (a[:2], 1)])
    check(growing, [(a, np.zeros(25)), (a, np.zeros(26)), (a, np.zeros(3)), (a[:0], np.zeros(0))])


def accumulate_index(a, n):
    total = 0
    for i in range(n):
        total = total + i * i          # grows past any first guess: spans give up, the overflow check stays
    return total + a[0]


def test_an_unbounded_accumulator_keeps_its_overflow_check():
    # beyond int64 the kernel stops, and the loop (without effects) runs as Python: Python's big int
    jitted = check(accumulate_index, [(np.ones(2), 10), (np.ones(2), 1000), (np.ones(2, np.int64), 3),
                                      (np.ones(2, np.int64), 2**21 * 3)])
    assert overflow_lines(jitted) != []


def test_span_arithmetic():
    assert spans.add((0, 3), (-2, 5)) == (-2, 8)
    assert spans.sub((0, 3), (-2, 5)) == (-5, 5)
    assert spans.mul((-2, 3), (-4, 5)) == (-12, 15)
    assert spans.floordiv((-7, 9), (2, 3)) == (-4, 4) and spans.floordiv((0, 9), (0, 3)) is None
    assert spans.mod((-7, 9), (2, 3)) == (0, 2)
    assert spans.refine("Lt", (0, 10), (3, 7)) == ((0, 6), (3, 7))
    assert spans.refine("GtE", None, (3, 7))[0] == (3, spans.INT64_HI)
    assert spans.widen((0, 2**48), (0, 2**48 + 1)) == (0, 2**49)
    assert spans.widen((0, 2**48), (-5, 3)) == (-8, 2**48)
    assert spans.widen((0, 2**48), (0, 2**62 + 1)) is None and spans.widen((0, 1), None) is None
    key = ("a", 0)
    assert spans.ub_floordiv(spans.ub_add((key, 1, -1), (0, 5), (key, 1, 0), (0, 5)), (2, 2)) == (key, 1, -1)
    assert spans.ub_floordiv((key, 1, 0), (2, 2)) is None          # 2 does not divide k = 1
    assert spans.ub_join([((key, 1, -1), None), (None, (0, 0))]) == (key, 1, 0)
    assert spans.ub_join([((key, 1, -1), None), (None, (0, 7))], optimistic=True) == (key, 1, -1)
    assert spans.ub_join([((key, 1, -1), None), (None, None)]) is None


def search_after_rebinding(a, b, x):
    hi = len(a)
    a = b                            # hi is no longer an extent of the array the loop reads
    lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def search_after_growing(a, x):
    lo, hi = 0, a.shape[0]
    hi += 2                          # reassigned after the fact: no fact
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def test_facts_before_a_loop_hold_only_until_their_names_are_assigned():
    """The statements before a loop tell it ``hi`` is an extent (frontend/entry_facts) only where
    neither ``hi`` nor the array is assigned again before the loop: here both searches can read past
    the end, and raise IndexError as Python does."""
    a, b = np.sort(rng.random(40)), np.sort(rng.random(10))
    for x in (0.05, 0.5, 2.0):
        rebinding = check(search_after_rebinding, [(a, b, x), (b, a, x), (a, a, x)])
        growing = check(search_after_growing, [(a, x), (b, x), (a[:0], x)])
    assert checked_lines(rebinding) and checked_lines(growing)


def fnv_hashes(x, out, seed):
    h = seed[0]
    for i in range(len(x)):
        h = (h ^ x[i]) * x[0]           # numpy int64 products wrap around
        out[i] = h - x[i] * x[i]
    return out


def test_numpy_int64_products_wrap_in_a_loop():
    big = np.array([1099511628211, 2**62 + 3, -(2**63), 7, 2**40 + 1], np.int64)
    check(fnv_hashes, [(big, np.zeros(5, np.int64), np.array([1469598103934665603], np.int64)),
                       (big[::-1].copy(), np.zeros(5, np.int64), np.array([-1], np.int64)),
                       (big[:2], np.zeros(2, np.int64), np.array([2**63 - 1], np.int64))])


def count_and_sum(m):
    c = 0
    t = 0
    for i in range(len(m)):
        if m[i]:
            c += 1                     # a Python int counter
        t += m[i]                      # a Python int, then a numpy int64 (int + numpy bool)
    return c, t


def pairs_within(x, r):
    total = 0
    for i in range(len(x)):
        near = 0                       # reset: a counter's other values stay small
        for j in range(i + 1, len(x)):
            if abs(x[i] - x[j]) < r:
                near = near + 1
        if near > 2:
            total -= 1
    return total


def test_counters_need_no_overflow_check():
    """A variable that only steps by at most 8 per statement from small values cannot leave int64 in
    any feasible time (loop_spans.COUNTER_SPAN): its steps are neither checked nor wrapped."""
    m = rng.random(300) > 0.4
    jitted = check(count_and_sum, [(m,), (m[:7],), (m[:0],), (np.ones(50, bool),), (rng.random(40) > 0.9,)])
    assert overflow_lines(jitted) == []
    x = rng.random(60)
    jitted = check(pairs_within, [(x, 0.05), (x, 2.0), (x[:1], 0.1), (x[::-1].copy(), 0.3)])
    assert overflow_lines(jitted) == []


def count_from(start, m):
    c = start
    for i in range(len(m)):
        c += m[i] * 3
    return c


def count_after_a_large_reset(m):
    c = 0
    for i in range(len(m)):
        if i == 5:
            c = 9223372036854775788     # 2**63 - 20, beyond COUNTER_BASE: each step checked
        if m[i]:
            c += 2
    return c


def steps_of_a_parameter(m, k):
    c = 0
    for i in range(len(m)):
        if m[i]:
            c += k                      # a step of unknown size: checked
    return c


def test_a_counter_far_from_zero_or_with_large_steps_keeps_its_check():
    m = np.ones(30, bool)
    check(count_from, [(0, m), (-5, m), (2**40, m)])
    jitted = check(count_after_a_large_reset, [(m[:12],), (np.zeros(30, bool),), (m[:4],)])
    assert overflow_lines(jitted) != []
    check(count_after_a_large_reset, [(m,)])                  # (beyond int64: Python's big int)
    jitted = check(steps_of_a_parameter, [(m, 1), (m, 2**40), (m[:3], -7)])
    assert overflow_lines(jitted) != []


def test_counting_steps_are_found_by_their_statements():
    import gast

    tree = gast.parse("c += 1\nc = c + 2\nc = 3 + c\nc = c - 8\nd = d + 9\ne = e * 2\nf -= x\ng = g + k")
    steps = spans.counting_steps([tree])
    assert {name: sorted(map(str, s.values())) for name, s in steps.items()} == {
        "c": ["(-8, -8)", "(2, 2)", "(3, 3)", "None"], "f": ["None"]}
    assert spans.step_of("Add", (0, 1)) == (0, 1) and spans.step_of("Sub", (0, 1)) == (-1, 0)
    assert spans.step_of("Add", (-8, 8)) == (-8, 8) and spans.step_of("Add", (0, 9)) is None
    assert spans.step_of("Add", None) is None and spans.step_of("Mult", (1, 1)) is None
    assert spans.COUNTER_SPAN[1] < 2**62
    # a count up keeps its guess's lower side (>= 0 where it starts at 0), a count down its upper side
    assert spans.counter_span((0, 2**50), (0, 1)) == (0, spans.COUNTER_SPAN[1])
    assert spans.counter_span((-5, 2**50), (-2, -1)) == (spans.COUNTER_SPAN[0], 2**50)
    assert spans.counter_span((0, 2**50), (-1, 1)) == spans.COUNTER_SPAN
