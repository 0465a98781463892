"""A ``for`` loop that may leave early runs its first positions as written, then hands the rest of the
same range to its kernel (frontend/loop_guard): a search that stops at once costs no kernel call, a
long one runs compiled, and where the kernel declines the arguments the loop goes on as Python, with
every result, effect and error as plain Python's."""

import functools

import numpy as np
import pytest
from loop_checks import check, peaked

from astjit import explain, jit

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

HANDOVER = 3
rng = np.random.default_rng(9)


@pytest.fixture(autouse=True)
def early_handover(monkeypatch):
    """A position of ``first_above`` counts as 8 units (``k = i`` might store an array): HANDOVER
    positions run as written."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", str(8 * HANDOVER))


with_peak = functools.partial(peaked, rng)


def first_above(a, v):
    k = -1
    for i in range(len(a)):
        if a[i] > v:
            k = i
            break
    return k


def bump_until(a, v, start, stop, step):
    found = -1.0
    for i in range(start, stop, step):
        a[i] += 1.0
        if a[i] > v:
            found = a[i]
            break
    return found


def running_sum_until(a, v):
    acc = 0.0
    for i, x in enumerate(a):
        if x > v:
            break
        acc += x
        a[i] = acc
    return acc


def count_until(a, v):
    n = 0
    for x in a:
        if x > v:
            break
        n += 1
    return n


def sum_until(a, n):
    t = 0.0
    for i in range(n):
        t += a[i]
        if t > 1e9:
            break
    return t


def loop_variable_after(a, v):
    i = -1
    for i in range(len(a)):
        if a[i] > v:
            break
    return i


POSITIONS = [0, HANDOVER - 1, HANDOVER, HANDOVER + 1, 40, -1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_search_leaving_before_at_and_after_the_handover(dtype):
    jitted = check(first_above, [(with_peak(60, at, dtype), 1) for at in POSITIONS])
    check(loop_variable_after, [(with_peak(n, at, dtype), 1) for n in (0, 2, 3, 4, 60) for at in POSITIONS])
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    assert loop.block.resume_at == HANDOVER


def test_ranges_with_steps_and_in_place_effects():
    calls = [(with_peak(300, at % 300), 1.5, start, stop, step)
             for at, (start, stop, step) in zip(POSITIONS * 2, [(0, 300, 1), (299, -1, -1), (10, 300, 3),
                                                               (280, 0, -7), (0, 300, 2), (299, 0, -1)] * 2)]
    check(bump_until, calls)


def test_arrays_iterated_by_item():
    check(running_sum_until, [(with_peak(50, at), 1.0) for at in POSITIONS])
    check(count_until, [(with_peak(50, at), 1.0) for at in POSITIONS])


def test_an_index_error_after_the_handover_keeps_python_effects():
    check(sum_until, [(with_peak(10, -1), n) for n in (2, 3, 4, 10, 11, 30)])
    check(bump_until, [(with_peak(8, -1), 9.0, 0, 12, 1), (with_peak(8, -1), 9.0, -9, 8, 1)])


def test_a_declined_kernel_leaves_the_loop_to_python():
    """Lists, a read-only array the loop writes and a Python int beyond int64 make the kernel decline;
    the loop goes on as written from the position reached, without running its first positions twice."""
    check(count_until, [(list(with_peak(30, at)), 1.0) for at in POSITIONS], compiled=False)
    def clear_first_above(a, v):
        k = -1
        for i in range(len(a)):
            if a[i] > v:
                a[i] = 0.0
                k = i
                break
        return k

    jitted = jit(clear_first_above)
    for at in (1, 30):
        frozen = with_peak(40, at)
        frozen.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            jitted(frozen, 1.0)
        a = with_peak(40, at)
        b = a.copy()
        assert clear_first_above(a, 1.0) == jitted(b, 1.0)
        np.testing.assert_array_equal(a, b)
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]
    check(sum_until, [(np.arange(10.0), 2**70)], compiled=False)   # range(2**70): IndexError at a[10]


def test_a_loop_without_an_early_exit_is_not_handed_over():
    def total(a):
        t = 0.0
        for i in range(len(a)):
            t += a[i]
        return t

    jitted = check(total, [(rng.random(50),)])
    assert next(f for f in jitted.fragments if f.block.kind == "loop").block.resume_at == 0


def test_show_prints_the_fragment_call():
    jitted = jit(first_above)
    jitted(with_peak(50, 30), 1.0)
    text = jitted.source
    assert "__astjit_fragment_" in text and "__astjit_trips" not in text


def test_none_declines_from_the_first_call():
    def find(a, v):
        found = None
        for i in range(len(a)):
            if a[i] > v:
                found = i
                break
        return found

    check(find, [(with_peak(30, at), 1.0) for at in POSITIONS], compiled=False)


def test_nan_inf_and_negative_zero_before_and_after_the_handover():
    a = np.array([np.nan, -0.0, np.nan, np.inf, 0.0, -np.inf, np.nan, 3.0, -0.0] * 4)
    check(first_above, [(a, 1.0), (a, np.inf), (a, -0.0), (a[::-1].copy(), 1.0)])
    check(running_sum_until, [(a, 5.0), (np.abs(a), 0.5), (np.nan_to_num(a), 1.0)])


def test_a_range_the_loop_rebinds_is_not_handed_over():
    """Python takes ``range(n)`` once: a kernel taking ``n`` part way would see the loop's ``n -= 1``."""
    def shrinking(a, n):
        for i in range(n):
            if a[i] > 1.0:
                return i
            n = n - 1
        return -1

    def from_target(a, i):
        for i in range(i, len(a)):  # noqa: B020 (the case under test)
            if a[i] > 1.0:
                break
        return i

    jitted = check(shrinking, [(with_peak(200, at), n) for at in (1, 30, 101, 150) for n in (150, 120, 80)])
    assert next(f for f in jitted.fragments if f.block.kind == "loop").block.resume_at == 0
    check(from_target, [(with_peak(60, at), start) for at in (2, 10, 50) for start in (0, 5, 40)])


def test_the_few_positions_left_after_the_handover_run_as_written(monkeypatch):
    """Where the positions left are no more work than a tiny loop, the kernel call would cost more
    than finishing the loop as written: no kernel runs."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "96")     # 12 positions of first_above, then 12 more at most
    jitted = check(first_above, [(with_peak(n, at), 1) for n in (13, 18, 24) for at in (0, 11, 12, 13, -1)],
                   compiled=False)
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    assert not loop.entries
    for at in (HANDOVER + 1, 40, -1):
        a = with_peak(60, at)
        assert jitted(a, 1) == first_above(a, 1)
    assert [e.mode for e in loop.entries] == ["tvm"]


def counts_down_its_own_bound(b, v):
    c = 0
    for i in range(b[0]):
        if b[i + 1] > v:
            break
        b[0] = b[0] - 1
        c += 1
    return c


def test_a_range_reading_an_element_the_loop_writes_is_taken_once():
    """Python takes ``range(b[0])`` once; a kernel taking over part way took it again, from the ``b[0]``
    the first positions had counted down (75 positions for 100)."""
    calls = []
    for n in (100, 2000, 7, 100):
        b = np.r_[n, np.arange(n)]
        calls += [(b, 10**9), (b, n // 2)]
    check(counts_down_its_own_bound, calls)


def bumped(a):
    a[0] += 1
    return 3


def range_from_a_helper_with_effects(a):
    s = 0.0
    for i in range(4):
        for j in range(bumped(a)):
            s += a[j]
    return s


def test_a_range_argument_calling_a_helper_is_not_evaluated_by_the_estimate(monkeypatch):
    """The loop's work estimate, evaluated before the loop, called the helper once more: its effect on
    ``a`` showed twice (and in the sum)."""
    for tiny in ("0", "24", None):
        if tiny is None:
            monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)
        else:
            monkeypatch.setenv("ASTJIT_TINY_LOOP", tiny)
        jf = jit(range_from_a_helper_with_effects)
        for n in (10, 200, 10):
            a, b = np.arange(float(n)), np.arange(float(n))
            assert jf(a) == range_from_a_helper_with_effects(b) and np.array_equal(a, b), tiny


LIMIT = 0.9


def first_above_a_global(a):
    k = -1
    for i in range(len(a)):
        if a[i] > LIMIT:
            k = i
            break
    return k


def test_a_handed_over_loop_reading_a_global():
    """The global's read before the kernel call (a check that it still exists) was taken for the call
    itself: the handover tested the result before the call made it (UnboundLocalError)."""
    jitted = check(first_above_a_global, [(with_peak(200, at), ) for at in POSITIONS + [150]])
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    assert loop.block.resume_at == HANDOVER and loop.calls > 0


@pytest.fixture
def conversions(monkeypatch):
    """(items, converted) per conversion of a list or tuple for a loop kernel (None: declined)."""
    from astjit.backends.tvm import loop_types

    seen, real = [], loop_types.sequence_converter

    def spying(seq):
        convert = real(seq)

        def spy(value):
            out = convert(value)
            seen.append((len(value), out is not None))
            return out
        return spy

    monkeypatch.setattr(loop_types, "sequence_converter", spying)
    return seen


def test_a_search_over_a_long_list_or_tuple_runs_as_written(conversions):
    """A search stops where it finds, and converting a list for the kernel costs about what a position
    of the loop's Python costs: over 100,000 floats found at position 2000 the handover's conversion
    made the search 0.01x plain Python's speed. Over a list or tuple longer than
    SEARCHED_SEQUENCE_MOST the loop runs as written (no counter, no kernel); a shorter one too, unless
    the rest of its positions is worth four conversions of it (a search's position of a comparison is
    not)."""
    from astjit.frontend.loop_call_cost import SEARCHED_SEQUENCE_MOST

    longest = SEARCHED_SEQUENCE_MOST
    calls = [(kind(with_peak(n, at)), 1.0) for kind in (list, tuple)
             for n, at in [(5000, 2000), (5000, -1), (longest + 1, longest), (longest + 1, 1)]]
    check(first_above, calls, compiled=False)
    check(count_until, calls, compiled=False)
    assert not any(converted for _, converted in conversions), conversions
    check(first_above, [(list(with_peak(40, at)), 1.0) for at in (30, -1)], compiled=False)
    assert not conversions, conversions


def scanned(xs, t):
    i = 0
    while i < len(xs) and xs[i] <= t:
        i += 1
    return i


def scanned_with_break(xs, t):
    i = 0
    while True:
        if i >= len(xs):
            break
        if xs[i] > t:
            break
        i += 1
    return i


def merged_length(a, b):
    i = j = n = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            i += 1
        else:
            j += 1
        n += 1
    return n


def first_pair_above(xs, t):
    for i in range(len(xs)):
        for j in range(i):
            if xs[i] + xs[j] > t:
                return i, j
    return -1, -1


def first_with_table(a, table, t):
    k = -1
    for i in range(len(a)):
        if table[i % len(table)] * a[i] > t:
            k = i
            break
    return k


def test_which_long_lists_a_loop_converts(conversions):
    """A ``while`` that searches a long list (its test reads elements, or its body may ``break``) runs as
    written over it; one that runs through lists (a merge: its test reads lengths only), a loop nest
    whose work grows faster than the list, and a search through an array reading a table held in a
    list convert them for the kernel, as before."""
    from astjit.frontend.loop_call_cost import SEARCHED_SEQUENCE_MOST

    values = [float(v) for v in rng.random(4 * SEARCHED_SEQUENCE_MOST)]
    for fn in (scanned, scanned_with_break):
        check(fn, [(values, 2.0), (tuple(values), 0.999), (values[:SEARCHED_SEQUENCE_MOST + 1], 0.5)],
              compiled=False)
        assert not any(converted for _, converted in conversions), (fn.__name__, conversions)
        check(fn, [(values[:40], 2.0)], compiled=False)
        assert [c for _, c in conversions] == [True], (fn.__name__, conversions)
        conversions.clear()
    ordered = sorted(values)
    jitted = check(merged_length, [(ordered, ordered[::2]), (ordered[:100], ordered)])
    check(first_pair_above, [(values, 1.99), (values, 0.5)])
    check(first_with_table, [(rng.random(5000), values, 0.999), (rng.random(500), values, 2.0)])
    assert conversions and all(converted for _, converted in conversions), conversions
    assert "tvm" in {e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries}


def first_of_counted(xs, t):
    n = len(xs)
    for i in range(n):
        if xs[i] > t:
            return i
    return -1


def bisected(xs, v):
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


def test_a_list_read_otherwise_is_converted_only_where_the_loop_repays_it(conversions):
    """A search reading a list it does not name in its ``for`` (``n = len(xs)`` first) is handed over
    only where the rest of its positions is worth four conversions of the list (it was converted at
    each call: 0.013x plain Python over 100,000 floats); a ``while`` reading a list whose reads the
    rewritten function cannot tell (a binary search: ``xs[mid]``) is timed against its Python per size
    class of the list's length (runtime/loop_weighing), with Python's results either way."""
    values = sorted(float(v) for v in rng.random(3000))
    check(first_of_counted, [(values, 0.5), (values, 2.0), (tuple(values[:500]), 0.1)], compiled=False)
    assert not any(converted for _, converted in conversions), conversions
    jitted = check(bisected, [(values, v) for v in (0.5, -1.0, 2.0, 0.25, 0.75, 0.1, 0.9, 0.3, 0.6, 0.0)]
                   + [(values[:20], 0.5), ([1.0, 2.0], 1.5)], compiled=False)
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    runners = [e.runner for e in loop.entries]
    assert runners and all(isinstance(getattr(r, "weighed", None), dict) for r in runners), runners


def skip_and_rebind(a, v):
    total = 0.0
    i = -1
    for i in range(len(a)):
        if a[i] < 0.2:
            continue
        total += a[i]
        i = i * 2                 # (rebinding the target moves nothing: the range goes on)
        if total > v:
            break
    return total, i


def search_with_else(a, v):
    for i in range(1, len(a), 2):
        if a[i] > v:
            break
    else:
        i = -5
    return i


def test_continue_a_rebound_target_and_an_else_across_the_handover():
    """The first positions are a ``for`` over the range's first items, the kernel taking the rest
    from the next one (a ``for ... else`` keeps its counter form)."""
    sizes = (0, 1, HANDOVER - 1, HANDOVER, HANDOVER + 1, 2 * HANDOVER + 1, 50)
    check(skip_and_rebind, [(rng.random(n), v) for n in sizes for v in (0.5, 3.0, 1e9)])
    check(search_with_else, [(with_peak(n, at % max(n, 1)), 1) for n in sizes for at in POSITIONS])


def test_an_estimate_decided_whichever_way_its_arrays_go_is_a_constant():
    """A loop whose handover test comes out the same whether its names hold arrays or numbers tests
    nothing before the loop (the names' isinstance tests cost about 0.2 us a call)."""
    import gast

    from astjit.frontend.loop_guard import _constant_truth

    def parsed(text):
        return gast.parse(text).body[0].value

    assert _constant_truth(parsed("(1000 - 112) * (194 if isinstance(t, nd) else 13) > 224")) is True
    assert _constant_truth(parsed("(20 - 3) * (194 if isinstance(t, nd) else 13) > 224")) is None
    assert _constant_truth(parsed("(n - 3) * (194 if isinstance(t, nd) else 13) > 224")) is None
    assert _constant_truth(parsed("5 * (194 if isinstance(t, nd) else 13) > 10 ** 9")) is None   # (** is not folded)


def test_a_while_trips_count_by_choice_is_constant_trips():
    """A ``while``'s first trips, where a trip's work depends only on whether names hold arrays, are
    one of two constant tuples (no division and ``range()`` at each call)."""
    import gast

    from astjit.frontend.loop_guard import _trips_by_choice

    each = gast.parse("(1 + 64) if isinstance(x, nd) else (1 + 5)").body[0].value
    chosen = _trips_by_choice(60, each)
    assert isinstance(chosen, gast.IfExp)
    assert [len(branch.elts) for branch in (chosen.body, chosen.orelse)] == [0, 10]
    assert _trips_by_choice(60, gast.parse("n * 3").body[0].value) is None
    assert isinstance(_trips_by_choice(10_000, gast.parse("1 if p else 2").body[0].value).body, gast.Call)


def zero_until(a, t):
    for i in range(len(a) - 1):
        a[i] = 0.0
        if a[i + 1] > t:
            break
    return a


def first_index_over(a, t, found):
    for i in range(len(a)):
        if a[i] > t:
            found.append(i)
            break


def test_a_search_leaving_no_value_is_handed_over():
    """A loop that may leave early and leaves no value the code after it reads (it writes arrays,
    appends or does nothing) has nothing to take back from the kernel: the handover's branch was
    empty, which Python refuses, and the whole function ran as Python."""
    jitted = check(zero_until, [(with_peak(60, at), 1.0) for at in POSITIONS])
    assert "could not transform" not in str(explain(jitted))
    jitted = check(first_index_over, [(with_peak(60, at), 1.0, []) for at in POSITIONS], compiled=False)
    assert "could not transform" not in str(explain(jitted)) and jitted.fragments
