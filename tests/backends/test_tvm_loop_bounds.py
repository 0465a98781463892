"""Index bounds proven at a loop's entry (backends/tvm/loop_bounds.py): the unchecked copy of a loop
must behave exactly as the checked one, and both as plain Python, whichever one a call takes.

Each function is called with sizes where the proof holds and where it fails (the last index out of
bounds, a negative index that wraps, a zero or negative modulus), on one jitted function.
"""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import jacobi

from astjit import explain, jit
from astjit.runtime.keys import describe_key

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]
rng = np.random.default_rng(11)


def shifted(x, out, k):
    n = len(out)
    for i in range(n):
        out[i] = x[i + k] * 2.0 - x[i]
    return out


def test_shifted_index_in_and_out_of_bounds():
    """x[i + k]: in bounds for k <= len(x) - len(out); a larger k raises at the first bad i, after the
    earlier elements were written; a negative k wraps as Python's."""
    check(shifted, [(rng.random(10), np.zeros(8), 2), (rng.random(10), np.zeros(8), 3),
                    (rng.random(10), np.zeros(8), -1), (rng.random(5), np.zeros(5), 0),
                    (rng.random(4), np.zeros(3), -4), (rng.random(4), np.zeros(3), -5)])


def periodic(u, out, n):
    for i in range(len(out)):
        out[i] = u[(i - 1) % n] + u[(i + 1) % n]
    return out


def test_modulus_index_positive_zero_negative():
    """u[(i - 1) % n]: inside [0, n) for n > 0; n == 0 raises ZeroDivisionError; n < 0 gives
    negative indices that wrap; n above len(u) goes out of bounds."""
    check(periodic, [(rng.random(6), np.zeros(6), 6), (rng.random(6), np.zeros(4), 3),
                     (rng.random(6), np.zeros(3), 0), (rng.random(6), np.zeros(5), -2),
                     (rng.random(4), np.zeros(6), 6)])


def stencil_2d(u, v):
    n, m = u.shape
    for i in range(n):
        for j in range(m):
            v[i, j] = u[i, j] - 0.5 * (u[(i + 1) % n, j] + u[i, (j - 1) % m])
    return v


def test_periodic_stencil_and_layouts():
    base = rng.random((7, 9))
    check(stencil_2d, [(base, np.zeros((7, 9))), (base.T, np.zeros((9, 7))), (base[::2, ::3], np.zeros((4, 3))),
                       (rng.random((1, 1)), np.zeros((1, 1))), (np.zeros((0, 3)), np.zeros((0, 3)))])


def scaled_index(x, out, stride, offset):
    for i in range(len(out)):
        out[i] = x[2 * i + offset] + x[i * stride // 3]
    return out


def test_scaled_and_floor_divided_indices():
    check(scaled_index, [(rng.random(20), np.zeros(8), 3, 1), (rng.random(20), np.zeros(8), 3, 5),
                         (rng.random(20), np.zeros(8), -3, 0), (rng.random(9), np.zeros(4), 6, 0)])


def window_sums(x, out, w):
    for i in range(len(out)):
        s = 0.0
        for j in range(i, i + w):
            s += x[j]
        out[i] = s
    return out


def test_triangular_inner_ranges():
    check(window_sums, [(rng.random(10), np.zeros(8), 3), (rng.random(10), np.zeros(8), 4),
                        (rng.random(3), np.zeros(3), 0)])


def counter_moved(x, stop):
    s = 0.0
    for i in range(stop):
        i += 1
        s += x[i]
    return s


def test_a_counter_assigned_in_the_body_is_not_its_range():
    check(counter_moved, [(rng.random(6), 4), (rng.random(6), 5), (rng.random(6), 6), (rng.random(3), 2)])


def smooth(a, b):
    for i in range(1, len(a) - 1):
        b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0
    return b


def in_place_sweep(u):
    for i in range(1, len(u) - 1):
        u[i] = 0.5 * (u[i - 1] + u[i + 1])
    return u


VIEWS = [lambda x: (x, x), lambda x: (x[1:], x[:-1]), lambda x: (x[:-2], x[2:]), lambda x: (x[::2], x[1::2]),
         lambda x: (x[:6], x[6:])]


def test_arrays_that_share_memory_run_in_pythons_order():
    """A kernel is compiled as if its arrays never overlap; arrays that do make the loop run as Python,
    which reads each element after every earlier write to it."""
    jitted = jit(smooth)
    for n in (12, 40, 7):
        for views in VIEWS:
            x = rng.random(n)
            want, got = x.copy(), x.copy()
            try:
                smooth(*views(want))
            except IndexError as exc:
                with pytest.raises(IndexError, match=str(exc)):
                    jitted(*views(got))
            else:
                jitted(*views(got))
            assert np.array_equal(want, got), (n, views(np.arange(n)))
    # one kernel for C-contiguous views, one for the strided ``x[::2]`` ones
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm", "tvm"]
    check(in_place_sweep, [(rng.random(9),), (rng.random(2),)])


def test_arrays_that_share_memory_are_declined_without_reading_the_log_setting_at_each_call(monkeypatch, caplog):
    """A declined call runs the loop's Python straight from the runner, and logs the pair of names once:
    through the checked path, with ASTJIT_LOG read and parsed at each call, ``smooth(x, x)`` over 8
    elements cost 4.8 us against its Python's 1 us. Views that share no element still run the kernel."""
    import logging

    from astjit import config

    monkeypatch.setenv("ASTJIT_LOG", "fallbacks")
    reads = []
    log_kinds = config.log_kinds
    monkeypatch.setattr(config, "log_kinds", lambda: reads.append(1) or log_kinds())
    jitted = jit(smooth)
    region = next(f for f in jitted.fragments if f.block.kind == "loop")
    with caplog.at_level(logging.INFO, logger="astjit"):
        for k, n in enumerate((40, 30, 40) * 10):
            x = rng.random(n)
            want, got = x.copy(), x.copy()
            assert jitted(got, got) is got
            assert np.array_equal(smooth(want, want), got)
            if k == 2:                   # (the first calls specialize the loop and its blocks: logged)
                reads_at_first = len(reads)
        assert len(reads) == reads_at_first
        assert caplog.text.count("share memory") == 1, caplog.text
        x = rng.random(40)
        want, got = x.copy(), x.copy()
        jitted(got[::2], got[1::2])          # (interleaved: they may share memory, no element)
        smooth(want[::2], want[1::2])
        assert np.array_equal(want, got)
    assert region.calls == 31 and [e.mode for e in region.entries] == ["tvm", "tvm"]


def first_few(x, n):
    s = 0
    for i in range(n):
        s += x[i]
    return s


def count_up(x, start):
    k = start
    for i in range(len(x)):
        k += 1
        x[i] = k % 7
    return k


def test_huge_extents_and_ints_run_as_python():
    """Extents and incoming ints at or beyond 2**48 leave the loop to Python: exact Python ints, and
    the same result or exception."""
    huge = np.broadcast_to(np.arange(3, dtype=np.int64), (2**50, 3))[:, 1]
    jitted = jit(first_few)
    for x, n in ((np.arange(5), 3), (huge, 4), (np.arange(2), 3), (huge, 2)):
        try:
            want = first_few(x, n)
        except IndexError as exc:
            with pytest.raises(IndexError, match=str(exc)):
                jitted(x, n)
        else:
            got = jitted(x, n)
            assert got == want and type(got) is type(want)
    check(count_up, [(np.zeros(3, np.int64), 5), (np.zeros(3, np.int64), 2**62), (np.zeros(2, np.int64), -2**63),
                     (np.zeros(2, np.int64), 2**47), (np.zeros(4, np.int64), -7)])


def wrapping_sums(x, y):
    s = x[0]
    for i in range(len(y)):
        s = s + y[i]
        s = s - x[i]
    return s


def test_numpy_int64_sums_wrap_as_numpys():
    """numpy int64 + and - wrap modulo 2**64 (numpy warns; a kernel does not): every carry and borrow
    between the 32-bit halves the kernel builds them from, at the int64 limits."""
    values = np.array([0, 1, -1, 2**31, -2**31, 2**32 - 1, 2**32, 2**62, -2**62, 2**63 - 1, -2**63,
                       12345678901234, -98765432109876], np.int64)
    calls = [(rng.choice(values, 6), rng.choice(values, 6)) for _ in range(40)]
    calls += [(np.array([2**63 - 1, 0]), np.array([1, 1])), (np.array([-2**63, 1]), np.array([-1, 0]))]
    check(wrapping_sums, calls)


def test_offsets_of_an_outer_counter_are_proven():
    """``u[i - 1, j]`` in the loop over ``j``: ``i`` is bounded by ``n - 1`` only once ``n``'s bound is
    known, which a later build sees (tighten_bits); the inner loop then runs as a counted loop
    without per-access checks, and still agrees with Python on every shape and layout."""
    base = rng.random((9, 11))
    jitted = check(jacobi, [(base, np.zeros((9, 11))), (base.T, np.zeros((11, 9))), (base[::2], np.zeros((5, 11))),
                                 (rng.random((2, 2)), np.zeros((2, 2))), (rng.random((3, 40)), np.zeros((3, 40)))])
    fragment = next(f for f in jitted.fragments if f.block.kind == "loop")
    for entry in fragment.entries:
        assert "for " in entry.segments[0].compiled.artifacts["tir"](), entry.key


def shift_rows(a, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * 2.0 + 1.0
    return out


def test_contiguous_and_strided_arrays_get_their_own_kernels():
    """A C-contiguous array's kernel knows its unit last stride; a strided, transposed or sliced one
    takes another kernel; a C-contiguous array whose size-1 or empty axis carries any stride (numpy
    ignores it there) takes the C-contiguous kernel."""
    base = rng.random((6, 10))
    calls = [(base, np.zeros((6, 10))), (base[:, ::2], np.zeros((6, 5))), (base.T, np.zeros((10, 6))),
             (base[:, 3:4], np.zeros((6, 1))), (base[:, None, 0].reshape(6, 1), np.zeros((6, 1))),
             (np.broadcast_to(base[:1], (1, 10)), np.zeros((1, 10))), (base[2:3], np.zeros((1, 10))),
             (rng.random((30, 3)), np.zeros((30, 3)))]
    jitted = check(shift_rows, calls)
    keys = [e.key for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    assert sorted({k[0][2] for k in keys}) == [False, True]
    strided = next(k for k in keys if not k[0][2])
    assert "a=float64[2-d, strided]" in describe_key(["a", "out"], strided)


def indices_from(x, out, n):
    for i in range(n):
        out[i] = x.shape[0] + x.shape[1] * i
    return out


def test_an_empty_array_with_any_strides_takes_the_c_contiguous_kernel():
    odd = rng.random((6, 10))[:0, ::2]                # C-contiguous (empty), with a stride of 2 elements
    assert odd.flags.c_contiguous and odd.strides[1] == 16
    check(indices_from, [(rng.random((3, 4)), np.zeros(40), 40), (odd, np.zeros(40), 40),
                         (rng.random((2, 5)), np.zeros(30), 30)])


def fir(x, h):
    y = np.zeros(len(x))
    for n in range(len(x)):
        acc = 0.0
        for k in range(len(h)):
            if n - k >= 0:
                acc += h[k] * x[n - k]
        y[n] = acc
    return y


def test_empty_arrays_with_strides_of_0_are_refused_once_not_at_every_call(monkeypatch):
    """numpy 2 gives an empty array strides of 0 (``np.zeros(0)``, ``np.array([])``, ``a[mask]``
    without hits), which the kernel's argument check refuses: once refused, the runner passes empty
    arrays with the strides the check wants, instead of taking the refusal's path (an exception with
    a backtrace, then the checks: 30-60 us) at every call."""
    empties = [np.zeros(0), np.array([]), np.arange(5.0)[np.arange(5) > 9], rng.random(0)]
    assert all(e.strides == (0,) for e in empties)
    from astjit.runtime import loop_fragment

    refusals = []            # (the refusal's path passes each empty array through compact)
    compact = loop_fragment.compact
    monkeypatch.setattr(loop_fragment, "compact", lambda a: refusals.append(a.shape) or compact(a))
    x = rng.random(50)
    check(fir, [(x, np.ones(3))] + [(x, h) for h in empties * 5] + [(x, rng.random(4)), (np.zeros(0), np.ones(2))])
    assert len(refusals) <= 2, refusals
    check(shift_rows, [(np.zeros((0, 10)), np.zeros((0, 10))), (np.zeros((3, 0)), np.zeros((3, 0))),
                       (rng.random((2, 3)), np.zeros((2, 3)))])


def doubling_then_offset(x, n, c):
    k = 1
    for i in range(n):
        k = k * 2
        x[i % len(x)] = (k + 4611686018427387904) % 7 + (k - c) % 5
    return x


def test_adding_a_constant_checks_the_int64_range():
    """``k + 2**62`` with ``k`` unbounded: one comparison with a constant stops the kernel where the
    exact Python int leaves int64 (there the loop runs again as Python), and not one step earlier."""
    check(doubling_then_offset, [(np.zeros(4, np.int64), 61, 3), (np.zeros(4, np.int64), 40, -7),
                                 (np.zeros(3, np.int64), 61, -(2**62)), (np.zeros(4, np.int64), 62, 3)])


def fibonacci_into(x, a, b, n):
    for i in range(n):
        a, b = a + b, a - b + b        # Python ints without a known bound: + and - checked
        x[i % len(x)] = a % 1000 - b % 7
    return a, b


def _last_in_int64(a, b):
    """The largest n for which every value fibonacci_into computes fits int64, with the margin of
    the kernel's float estimate (2**13)."""
    n = 0
    while True:
        s, d = a + b, a - b
        if max(abs(s), abs(d), abs(d + b)) >= 2**63 - 2**14:
            return n
        a, b = s, d + b
        n += 1


def test_sums_of_unbounded_ints_stop_where_int64_ends():
    """``a + b`` and ``a - b`` of ints of unknown bound: exact up to the end of int64, then the
    loop's Python where Python goes on with a larger int, in both directions."""
    for a, b in ((1, 1), (-1, -2), (3, -5)):
        last = _last_in_int64(a, b)
        check(fibonacci_into, [(np.zeros(5, np.int64), a, b, last), (np.zeros(5, np.int64), a, b, last // 2),
                               (np.zeros(5, np.int64), a, b, last + 1), (np.zeros(5, np.int64), a, b, last + 9)])


def int64_ends(n, a, b, steps):
    p = 1
    s = t = u = v = 0
    for k in range(n):
        steps[0] = k               # (an effect: where an int leaves int64 the loop cannot start again)
        p = p * 2
        s = (p - 1) + p            # 2**63 - 1 at n = 62
        t = -p - p                 # -2**63
        u = p * -2                 # -2**63
        v = (p + a) * b
    return s, t, u, v


def int64_ends_without_effects(n, a, b):
    p = 1
    s = t = u = v = 0
    for _ in range(n):
        p = p * 2
        s = (p - 1) + p
        t = -p - p
        u = p * -2
        v = (p + a) * b
    return s, t, u, v


@pytest.mark.parametrize("a, b, fits", [(0, 1, True), (-1, 2, True), (0, 2, False), (0, -2, True), (1, -2, False),
                                        (-2, -2, True), (3, 1, True)])
def test_python_ints_are_exact_up_to_both_ends_of_int64(a, b, fits):
    """The float estimate only tells where a result may leave int64: there an exact test of the wrapped
    result decides, so 2**63 - 1 and -2**63 are results, and one more is Python's own big int: the loop
    runs again as Python, with its effects undone first where it has any."""
    steps = np.zeros(1, np.int64)
    check(int64_ends, [(n, a, b, steps) for n in (0, 5, 40, 61, 62, 63, 61)])   # (63: p = 2**63)
    check(int64_ends_without_effects, [(n, a, b) for n in (0, 5, 61)] + ([(62, a, b)] if fits else []))
    check(int64_ends_without_effects, [(n, a, b) for n in (62, 63, 64, 100)], compiled=False)


def band_sums(a, out, w):
    """``a[i, j]`` with ``j`` from ``i - w`` to ``i + w``: proven at each inner loop's entry."""
    n = a.shape[0]
    for i in range(w, n - w):
        s = 0.0
        for j in range(i - w, i + w + 1):
            s += a[i, j] * (j - i)
        out[i] = s
    return out


def band_of_five(a, out, k):
    """An inner loop of a known trip count: the nest is proven at the outer loop's entry."""
    for i in range(2, a.shape[0] - 2):
        s = 0.0
        for d in range(-2, 3):
            s += a[i, i + d + k] * d
        out[i] = s
    return out


def test_nests_proven_in_bounds_and_where_they_fail():
    """In bounds for a square ``a``; a narrow ``a`` sends the column past its end (IndexError after
    the earlier rows were written); a negative offset wraps as Python's; a short ``out`` fails on
    the outer index."""
    sq = rng.random((9, 9))
    check(band_sums, [(sq, np.zeros(9), 2), (sq, np.zeros(9), 0), (rng.random((9, 5)), np.zeros(9), 1),
                      (sq, np.zeros(9), -1), (sq, np.zeros(4), 1), (rng.random((3, 3)), np.zeros(3), 2)])
    check(band_of_five, [(sq, np.zeros(9), 0), (sq, np.zeros(9), 1), (sq, np.zeros(9), -2),
                         (rng.random((9, 5)), np.zeros(9), 0), (sq, np.zeros(4), 0), (sq, np.zeros(9), -9),
                         (rng.random((3, 3)), np.zeros(3), 0)])


def nest_kernel_text(jitted) -> str:
    fragment = next(f for f in jitted.fragments if f.block.kind == "loop")
    return fragment.entries[0].segments[0].compiled.artifacts["tir"]()


def test_a_nest_of_a_known_inner_count_runs_as_counted_loops():
    """One test at the outer loop's entry, then plain ``for`` loops all the way in: no ``while`` (the
    checked form) before the fallback branch."""
    sq = rng.random((9, 9))
    jitted = check(band_of_five, [(sq, np.zeros(9), 0), (rng.random((30, 30)), np.zeros(30), 1)])
    text = nest_kernel_text(jitted)
    proven = text[:text.index("else:")]
    assert proven.count("for ") >= 2 and "while" not in proven


def counter_reused(a, out):
    """``j`` is bound again after the inner loop (and may not run): its range says nothing there."""
    for i in range(a.shape[0]):
        j = out.shape[0]
        for j in range(i):
            out[j] += a[i, j]
        out[j - 1] += 1.0
    return out


def stepped_down(a, out, step):
    for i in range(a.shape[0]):
        for j in range(a.shape[1] - 1, -1, -2):
            out[i] += a[i, j]
        for k in range(i, -1, step):
            out[k] += 0.5
    return out


def offsets(grid, out):
    n, m = grid.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            t = 0.0
            for di in (-1, 0, 1):
                for dj in (-1, 1):
                    t += grid[i + di, j + dj]
            out[i, j] = t
    return out


def test_inner_counters_rebound_stepped_down_and_over_tuples():
    check(counter_reused, [(rng.random((5, 5)), np.zeros(5)), (rng.random((5, 5)), np.zeros(3)),
                           (rng.random((1, 1)), np.zeros(1)), (rng.random((6, 6)), np.zeros(0))])
    check(stepped_down, [(rng.random((4, 5)), np.zeros(4), -1), (rng.random((4, 6)), np.zeros(4), -3),
                         (rng.random((4, 6)), np.zeros(2), -1), (rng.random((4, 6)), np.zeros(4), 0)])
    check(offsets, [(rng.random((6, 7)), np.zeros((6, 7))), (rng.random((3, 3)), np.zeros((3, 3))),
                    (rng.random((8, 5)).T, np.zeros((5, 8))), (rng.random((6, 7)), np.zeros((4, 4)))])


def huge_constant_ranges(a):
    s = 0.0
    for i in range(a.shape[0]):
        for d in range(0, 9223372036854775807, 4611686018427387904):
            s += a[i]
        for d in range(-4611686018427387904, 4611686018427387904, 2305843009213693952):
            s -= a[i] * 0.5
    return s


def test_a_constant_range_bound_near_int64_runs_as_python():
    """range(0, 2**63 - 1, 2**62) has two positions in Python; the kernel counts in int64, so such a
    constant keeps the loop in Python instead of stopping with an OverflowError."""
    jitted = check(huge_constant_ranges, [(np.arange(5.0),), (np.arange(1000.0),)], compiled=False)
    assert "a range() argument of 2**62 or more" in str(jitted.explain())


def test_explain_names_the_arrays_that_share_memory():
    jitted = jit(smooth)
    for n in (20, 30):
        x = rng.random(n)
        want, got = x.copy(), x.copy()
        smooth(want, want)
        jitted(got, got)
        assert np.array_equal(want, got)
    shared = [r for r in explain(jitted) if "share memory" in r.message]
    assert len(shared) == 1 and "the loop runs as Python" in shared[0].message


def binned(values, counts, lo, width, picked):
    for i in range(len(values)):
        b = int((values[i] - lo) / width)
        if 0 <= b < len(counts):
            counts[b] += 1
            picked[i] = b
    return counts


def test_an_int_leaving_int64_after_writes_runs_the_loop_as_python():
    """``int()`` of an outlier (1e30) leaves int64 after the loop has written elements: Python's exact
    int fails the range test and the value is skipped. The runner copies the arrays the loop writes before
    the call, and puts them back before the loop's Python runs: counts as Python's, on every layout."""
    rng = np.random.default_rng(5)

    def case(n, outlier_at, layout="C"):
        v = rng.standard_normal(n)
        if outlier_at is not None:
            v[outlier_at] = 1e30 if outlier_at % 2 else -1e30
        counts, picked = np.zeros(10, np.int64), np.full(n, -1, np.int32)
        if layout == "strided":
            counts = np.zeros(20, np.int64)[::2]
        elif layout == "F":
            picked = np.full((n, 1), -1, np.int32, order="F")[:, 0]
        return v, counts, -3.0, 0.6, picked

    check(binned, [case(1000, None), case(1000, 501), case(1000, 998), case(200, None), case(300, 3, "strided"),
                   case(300, 101, "F"), case(50, None, "strided"), case(1000, 0)])


def fibonacci(n, steps):
    a, b = 0, 1
    for i in range(n):
        a, b = b, a + b
        steps[0] = i
    return a


def test_after_the_kernel_bails_the_next_calls_run_the_loops_python(monkeypatch):
    """A loop whose ints leave int64 at every call (a Fibonacci of 100) ran its kernel and then its
    Python at each call, twice plain Python's time: after a bail the next calls (1, 3, 7... up to 64)
    run the Python straight away, then the kernel tries again. Results stay Python's for any order of
    sizes; a size that fits runs the kernel again once the run is over."""
    import astjit.runtime.loop_fragment as loop_fragment

    runs = [0]
    compile_kernel = loop_fragment.compile_loop_kernel

    class Counted:
        def __init__(self, module):
            self.module = module

        def __getitem__(self, name):
            kernel = self.module[name]

            def counted(*args):
                runs[0] += 1
                return kernel(*args)
            return counted

    monkeypatch.setattr(loop_fragment, "compile_loop_kernel", lambda *a, **k: Counted(compile_kernel(*a, **k)))
    jitted = check(fibonacci, [(n, np.zeros(1, np.int64)) for n in (100, 20, 93, 92, 100, 90)])
    before = runs[0]
    for _ in range(40):
        assert jitted(100, np.zeros(1, np.int64)) == fibonacci(100, np.zeros(1, np.int64))
    assert runs[0] - before <= 6          # bails at calls 1, 3, 7, 15, 31 of the 40 (not 40)
    for _ in range(70):                   # the run of Python ends; the kernel runs again
        assert jitted(30, np.zeros(1, np.int64)) == 832040
    assert runs[0] - before >= 7


def test_arrays_larger_than_the_loops_reads_are_not_copied_and_stop_as_documented():
    """Copying what the loop writes costs its size at every call: 100 values counted into 1,000,000 bins
    ran 284 us a call for Python's 22 us. Arrays written that are larger than 64 KiB and than the
    other arrays are not copied: where an int leaves int64 there, the kernel stops with the documented
    OverflowError; with the values as large as the bins, they are copied and the answer is Python's."""
    rng = np.random.default_rng(9)
    few = rng.standard_normal(100)
    jitted = check(binned, [(few, np.zeros(1_000_000, np.int64), -3.0, 6e-6, np.full(100, -1, np.int32))])
    few[50] = 1e30
    with pytest.raises(OverflowError, match="int64"):
        jitted(few, np.zeros(1_000_000, np.int64), -3.0, 6e-6, np.full(100, -1, np.int32))
    many = rng.standard_normal(300_000)
    many[7] = -1e30
    check(binned, [(many, np.zeros(40_000, np.int64), -3.0, 1.5e-4, np.full(300_000, -1, np.int32))])


def factorial_into(a, n, out):
    p = 1
    for i in range(1, n):
        p = p * i
        a[i % 5] += 1.0
        out.append(i)
    return p


def test_values_appended_before_an_int_leaves_int64_are_not_appended_twice():
    """The runner hands a kernel's appended values to their lists however it ended; where the loop then
    runs again as Python (its arrays put back), the lists are cut back to their lengths before the call:
    30! appended 1..19 from the kernel and then 1..29 again (49 items; Python 29)."""
    check(factorial_into, [(np.zeros(5), n, []) for n in (10, 10, 30, 21, 10, 40)]
          + [(np.zeros(5), 30, [7.5, "x"])])
