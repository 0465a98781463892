"""Whole loops compiled as one kernel (backends/tvm/loops.py), against plain Python.

Every function is called several times on one jitted function, with other sizes and values in between:
a value or an extent baked into the kernel at the first call would show as a wrong answer later.
"""

import math

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops, run_both, same  # noqa: F401 - a fixture
from loop_programs import affine_rows, crc16, histogram, jacobi, pairwise, recurrence, row_sums, weighted_sum

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]


rng = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_recurrence(dtype):
    calls = [(rng.random(n).astype(dtype), np.zeros(n, dtype), a) for n, a in ((50, 0.3), (1, 0.5), (7, 0.9),
                                                                               (0, 0.1))]
    jitted = check(recurrence, calls)
    assert len([e for f in jitted.fragments for e in f.entries]) == 1      # one kernel for every length


def total(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "bool"])
def test_accumulator_type_is_pythons(dtype):
    """s = 0.0 stays a Python float over an empty range; becomes np.float64 (float32 stays float32,
    int64 elements give np.float64) once the loop ran."""
    calls = [((rng.random(n) * 10).astype(dtype),) for n in (10, 0, 3)]
    check(total, calls)


def test_stencil_on_any_layout():
    base = rng.random((9, 12))
    calls = [(base, np.zeros((9, 12))), (base.T, np.zeros((12, 9))), (base[::2, 1:], np.zeros((5, 11))),
             (rng.random((3, 3)), np.zeros((3, 3)))]
    check(jacobi, calls)


def first_negative(x):
    k = -1
    for i in range(len(x)):
        if x[i] < 0:
            k = i
            break
    return k


def skip_and_count(x, limit):
    count = 0
    for i in range(len(x)):
        if x[i] > limit:
            continue
        elif x[i] == limit:
            count += 10
        else:
            count += 1
    return count


def test_break_continue_and_elif():
    check(first_negative, [(np.array([1.0, 2.0, -1.0, -3.0]),), (np.array([1.0]),), (np.zeros(0),),
                           (rng.random(20) - 0.5,)])
    check(skip_and_count, [(np.array([1, 5, 3, 3, 9]), 3), (np.arange(10), 4), (np.arange(4.0), 1.5)])


def triangular(a):
    n = a.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i):
            s += a[i, j] * a[j, i]
    return s


def backwards(x, out):
    for i in range(len(x) - 1, -1, -2):
        out[i] = x[i] * 2.0
    return out


def wrapped_neighbours(x, out):
    n = len(x)
    for i in range(n):
        out[i] = x[(i + 1) % n] - x[i - 1]
    return out


def test_triangular_negative_step_and_wrapping_indices():
    check(triangular, [(rng.random((5, 5)),), (rng.random((1, 1)),), (rng.random((8, 8)),)])
    check(backwards, [(rng.random(7), np.zeros(7)), (rng.random(4), np.zeros(4)), (np.zeros(0), np.zeros(0))])
    check(wrapped_neighbours, [(rng.random(6), np.zeros(6)), (rng.random(1), np.zeros(1))])


def scalar_calls(x):
    lo, hi = x[0], x[0]
    total = 0.0
    for i in range(len(x)):
        lo = min(lo, x[i])
        hi = max(x[i], hi)
        total += abs(x[i]) + float(int(x[i] * 3.0)) + np.sqrt(abs(x[i]))
    return lo, hi, total


def test_histogram_pairwise_and_scalar_functions():
    check(histogram, [(rng.random(100), np.zeros(10, np.int64), 0.0, 0.1),
                      (rng.random(30) * 3, np.zeros(4, np.int32), 0.5, 0.5)])
    check(pairwise, [(rng.random((6, 3)), np.zeros((6, 6))), (rng.random((2, 5)), np.zeros((2, 2)))])
    check(scalar_calls, [(rng.random(9) - 0.5,), (np.array([np.nan, 1.0, -2.0]),), (np.array([3.0]),)])


def out_of_bounds(x, extra):
    for i in range(len(x) + extra):
        x[i] = i * 2.0
    return x


def divide(x, d):
    s = 0.0
    for i in range(len(x)):
        s += 1.0 / (x[i] * 0.0 + d)
    return s


def domain(x):
    s = 0.0
    for i in range(len(x)):
        s += math.sqrt(float(x[i]))
    return s


def store_python_int(x, v):
    for i in range(len(x)):
        x[i] = v + i
    return x


def test_errors_are_pythons_with_the_same_effects():
    """The kernel stops where Python raises: same exception and message, arrays left as Python
    leaves them (the elements before the failing one written)."""
    check(out_of_bounds, [(np.zeros(4), 0), (np.zeros(4), 2), (np.zeros(3), -5)])
    check(divide, [(np.ones(3), 2), (np.ones(3), 0.0), (np.ones(3), np.float64(0.0))])
    check(domain, [(np.array([1.0, 4.0]),), (np.array([4.0, -1.0, 9.0]),)])
    check(store_python_int, [(np.zeros(3, np.int8), 5), (np.zeros(4, np.int8), 126), (np.zeros(2, np.int64), 7)])


def calls_print(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
        print(end="")
    return s


def adds_to_a_set(x):
    out = set()
    for i in range(len(x)):
        out.add(x[i])
    return out


def test_loops_that_stay_python_are_explained_and_right():
    jitted = check(calls_print, [(np.arange(3.0),), (np.arange(5.0),)], compiled=False)
    text = str(jitted.explain())
    assert "keeps this loop in Python" in text and "print" in text
    jitted = check(adds_to_a_set, [(np.arange(3.0),), (np.arange(2.0),)], compiled=False)
    assert "keeps this loop in Python" in str(jitted.explain())


def row_maxima(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i].max()           # (which zero a max of -0.0 and 0.0 gives is numpy's SIMD order's)
    return out


def test_a_loop_over_rows_of_a_matrix_compiles_with_sums_and_maxima_of_rows():
    check(affine_rows, [(rng.random((4, 3)), np.zeros((4, 3))), (rng.random((2, 5)), np.zeros((2, 5)))])
    check(row_sums, [(rng.random((4, 3)), np.zeros(4)), (rng.random((2, 5)), np.zeros(2))])
    check(row_maxima, [(rng.random((4, 3)), np.zeros(4)), (rng.random((2, 50)), np.zeros(2))])


def test_read_only_array_written_raises_as_python():
    x = np.zeros(3)
    x.flags.writeable = False
    check(out_of_bounds, [(x, 0)], compiled=False)


def test_python_int_beyond_int64_runs_the_loop_in_python():
    check(store_python_int, [(np.zeros(2, object).astype(np.int64), 2**70)], compiled=False)


def halvings(n):
    c = 0
    while n > 1:
        n >>= 1
        c += 1
    return c


def test_python_ints_beyond_int64_between_ones_the_kernel_takes():
    """An int beyond int64 runs the loop as Python (the kernel's conversion refuses it, which cost 20 us
    a call: after the first, the runner tests the range itself); ints that fit still run the kernel,
    before and after it, and the answers are Python's."""
    for fn in (halvings, collatz_steps):
        jf = jit(fn)
        region = next(f for f in jf.fragments if f.block.kind == "loop")
        for n in (1000, 2**70 + 3, 27, 2**100 + 1, -(2**64), 97, 2**63, 2**63 - 1, 2**62 + 5, 12345):
            if fn is collatz_steps and n < 1:
                continue
            assert jf(n) == fn(n), (fn.__name__, n)
        assert [e.mode for e in region.entries] == ["tvm"]


def value_before_target(x, d):
    for i in range(len(x) + 1):
        x[i] = 1.0 / (d - i)
    return x


def test_the_value_is_evaluated_before_the_target_index():
    """``x[i] = v``: Python evaluates v first, so at i == len(x) == d the division by zero wins over
    the index out of bounds."""
    check(value_before_target, [(np.zeros(3), 3.0), (np.zeros(3), 0.5), (np.zeros(2), 2.0)])


def step_reassigned(x, s):
    total = 0.0
    for i in range(0, len(x), s):
        total += x[i]
        s = 1
    return total, s


def test_range_arguments_are_evaluated_once():
    check(step_reassigned, [(np.arange(10.0), 3), (np.arange(7.0), 2), (np.arange(4.0), 5)])


def counter_read_before_its_loop(x, i):
    s = 0
    for k in range(len(x)):
        s = i * i
        for i in range(2):
            x[i] = x[i] + 1.0
    return s, x


def test_a_counter_read_before_its_loop_holds_any_int():
    """``i`` holds the caller's int on the first outer iteration, not a bounded loop counter, so
    ``i * i`` is checked like any Python-int product: 2**31 squared is exact, 2**40 squared leaves int64,
    where the loop runs again as Python (its writes undone) instead of wrapping."""
    check(counter_read_before_its_loop, [(np.zeros(30), 3), (np.zeros(20), 5), (np.zeros(20), 2**31),
                                         (np.zeros(20), 2**40), (np.zeros(20), 7)])


def test_a_tiny_loop_runs_as_written(monkeypatch):
    """A loop that executes a few statements (up to ASTJIT_TINY_LOOP's work) runs as plain Python (faster
    than a kernel call there): Python ints are then exact; a larger loop of the same function runs the
    kernel."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "64")
    jitted = jit(counter_read_before_its_loop)
    (s, x), (want_s, want_x) = jitted(np.zeros(2), 2**40), counter_read_before_its_loop(np.zeros(2), 2**40)
    assert s == want_s and np.array_equal(x, want_x)
    calls = kernel_calls(jitted)
    (s, x), (want_s, want_x) = jitted(np.zeros(20), 2**40), counter_read_before_its_loop(np.zeros(20), 2**40)
    assert s == want_s and np.array_equal(x, want_x) and kernel_calls(jitted) == calls + 1


def kernel_calls(jitted) -> int:
    """How many calls reached a loop region's Fragment (a tiny loop runs as written, without one)."""
    return sum(f.calls for f in jitted.fragments if f.block.kind == "loop")


def test_a_few_rows_of_large_arrays_are_not_a_tiny_loop(monkeypatch):
    """``out[i] = a[i] * 2.0 + 1.0`` reads like a scalar statement, but on rows it is several numpy
    calls a position: three rows of a (3, 2000) array run the kernel; three elements of a 1-D array,
    and lists, run as written."""
    monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)
    jitted = check(affine_rows, [(rng.random((3, 2000)), np.zeros((3, 2000))),
                                 (rng.random((2, 50)).astype(np.float32), np.zeros((2, 50), np.float32))])
    assert kernel_calls(jitted) == 2
    jitted = check(affine_rows, [(rng.random(3), np.zeros(3)), (rng.random(2), np.zeros(2, np.float32))],
                   compiled=False)
    assert kernel_calls(jitted) == 0
    jitted = check(scaled_items, [([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]), ((1.0, 2.0), [0.0, 0.0])], compiled=False)
    assert kernel_calls(jitted) == 0
    # rows as items: the loop's Fragment (whose kernel does not take rows bound to a name: Python);
    # three floats: as written
    jitted = check(item_total, [(rng.random((3, 500)),), (rng.random(3),)], compiled=False)
    assert kernel_calls(jitted) == 1


def back_substitution(U, b, x):
    n = len(b)
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= U[i, j] * x[j]
        x[i] = s / U[i, i]
    return x


def every_third_prefix(a, out):
    for i in range(len(a) - 1, -1, -3):
        s = 0.0
        for j in range(0, i + 1, 2):
            s += a[j]
        out[i] = s
    return out


def test_an_inner_range_of_a_stepped_outer_range_is_estimated(monkeypatch):
    """``for j in range(i + 1, n)`` inside ``for i in range(n - 1, -1, -1)``: the inner loop's trips
    are estimated from the outer variable's first and last values, with a step too (its work counted
    as unknown, a 2x2 back substitution called the kernel, 1.9x plain Python's time); a large one
    runs the kernel."""
    monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)
    upper = np.triu(rng.random((300, 300))) + 300 * np.eye(300)
    for fn, small, large in [
            (back_substitution, [(upper[:2, :2].copy(), rng.random(2), np.zeros(2)),
                                 (upper[:1, :1].copy(), rng.random(1), np.zeros(1))],
             [(upper, rng.random(300), np.zeros(300))]),
            (every_third_prefix, [(rng.random(4), np.zeros(4)), (rng.random(7), np.zeros(7))],
             [(rng.random(400), np.zeros(400))])]:
        jitted = check(fn, small, compiled=False)
        assert kernel_calls(jitted) == 0
        for args in large:
            (k1, r1, _), (k2, r2, _) = run_both(fn, jitted, args)
            assert k1 == k2 == "ok" and same(r1, r2)
        assert kernel_calls(jitted) == len(large)


def scaled_items(a, out):
    for i in range(len(a)):
        out[i] = a[i] * 2.0 + 1.0
    return out


def item_total(a):
    s = 0.0
    for x in a:
        s = s + x
    return s


def fill_to(a, n):
    for i in range(n):
        a[i] = 1.0
    return a


@pytest.mark.parametrize("tiny", ["0", "24"])
def test_odd_range_arguments_raise_as_python_whichever_path_runs(tiny, monkeypatch):
    """The rewritten function estimates a loop's work from its range() arguments before choosing the
    loop as written or the kernel: an argument range() refuses (an array, a float) must still raise
    range()'s TypeError at the user's line, not an error of the estimate."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", tiny)
    check(fill_to, [(np.zeros(4), 3), (np.zeros(4), np.arange(3)), (np.zeros(4), 2.5), (np.zeros(40), 30),
                    (np.zeros(40), np.int64(35)), (np.zeros(4), -5), (np.zeros(4), True), (np.zeros(40), 41)],
          compiled=False)


def int8_plus_python_int(x, v):
    for i in range(len(x)):
        x[i] = x[i] + v
    return x


def test_a_python_int_beyond_a_numpy_int_raises_as_numpy():
    """NEP 50: ``np.int8(3) + 300`` raises OverflowError; it must not wrap."""
    check(int8_plus_python_int, [(np.arange(3, dtype=np.int8), 5), (np.arange(3, dtype=np.int8), 300),
                                 (np.arange(4, dtype=np.uint8), -1), (np.arange(2, dtype=np.int16), 7)])


def copy_elements(out, values):
    for i in range(len(values)):
        out[i] = values[i]
    return out


@pytest.mark.parametrize("target, source, big", [
    (np.int8, np.int64, 300), (np.int8, np.int16, -129), (np.int16, np.uint16, 40000),
    (np.int32, np.int64, 2**40), (np.int32, np.uint64, 2**63), (np.int64, np.uint64, 2**63 + 5),
    (np.uint8, np.int64, 300), (np.uint8, np.int64, -1), (np.uint32, np.int64, -2**40)])
def test_a_numpy_int_stored_into_a_narrower_array_as_numpy_stores_it(target, source, big):
    """numpy stores a numpy int into a signed array's element through a Python int: one out of the
    array's range raises OverflowError (an unsigned array wraps it); the elements before it are
    written, as in Python."""
    fits = np.arange(40).astype(source)
    values = fits.copy()
    values[25] = source(big)
    check(copy_elements, [(np.zeros(40, target), fits), (np.zeros(40, target), values),
                          (np.zeros(30, target), values[:30]), (np.zeros(40, target), fits[::-1].copy())],
          compiled=source is not np.uint64)         # (a uint64 array keeps the loop in Python)


def clamped_into_uint8(x, hi, out):
    for i in range(len(x)):
        v = x[i]                 # a numpy int64...
        if v > hi:
            v = hi               # ...or a Python int, by iteration
        out[i] = v
    return out


def clamped_then_cast(x, hi, out):
    for i in range(len(x)):
        v = x[i]
        if v > hi:
            v = hi
        out[i] = np.uint8(v)
    return out


@pytest.mark.parametrize("fn", [clamped_into_uint8, clamped_then_cast], ids=lambda f: f.__name__)
def test_a_name_holding_a_numpy_int_or_a_python_int_is_range_checked_only_as_the_python_int(fn):
    """numpy wraps a numpy int stored into (or cast to) uint8 and raises OverflowError for a Python
    int: the kernel checked the name as a Python int on every iteration (291 raised)."""
    check(fn, [(np.full(40, 291), 300, np.zeros(40, np.uint8 if fn is clamped_into_uint8 else np.int64)),
               (np.arange(250, 290), 280, np.zeros(40, np.uint8)),
               (np.array([100, 260, 400, 5] * 10), 300, np.zeros(40, np.int64)),
               (np.arange(-20, 20), 10, np.zeros(40, np.uint8))])


def divided_elements(a, b, out, rest):
    for i in range(len(a)):
        out[i] = a[i] // b[i]
        rest[i] = a[i] % b[i]
    return out, rest


def divided_by_python_minus_one(a, out):
    for i in range(len(a)):
        out[i] = (a[i] // -1) % 7 + a[i] % -1
    return out


def test_the_smallest_numpy_int64_divided_by_minus_one_wraps_as_numpy():
    """numpy's int64 ``-2**63 // -1`` is ``-2**63`` and ``% -1`` is 0 (Python's ints would give 2**63, the
    documented OverflowError); the kernel computes numpy's result without trapping."""
    smallest = np.iinfo(np.int64).min
    a = np.array([smallest, smallest, 7, -7, smallest + 1, 0] * 6, np.int64)
    b = np.array([-1, 1, -1, 2, -1, -1] * 6, np.int64)
    check(divided_elements, [(a, b, np.zeros_like(a), np.zeros_like(a)),
                             (a[::-1].copy(), b, np.zeros_like(a), np.zeros_like(a))])
    check(divided_by_python_minus_one, [(a, np.zeros_like(a)), (np.full(40, smallest, np.int64), np.zeros(40, np.int64))])


def squares_repeatedly(x, n, out):
    for i in range(n):
        x = x ** 2
        out[i] = x
    return x


def squares_then_numpy(x, n, a):
    for i in range(n):
        x = x ** 2
        if i == 2:
            x = a[0]                # from here on a numpy float: its ** gives inf
    return x


def test_a_python_float_squared_beyond_the_float_range_raises_overflow_error():
    """Python's float ** raises OverflowError where the result overflows (its * and numpy's ** give
    inf), after the elements written before it."""
    check(squares_repeatedly, [(1.5, 5, np.zeros(5)), (2.0, 30, np.zeros(30)), (-3.0, 12, np.zeros(12)),
                               (np.inf, 3, np.zeros(3)), (np.nan, 3, np.zeros(3)), (1e200, 1, np.zeros(1))])
    check(squares_then_numpy, [(1.1, 6, np.array([1e300])), (1e200, 6, np.array([2.0])),
                               (2.0, 40, np.array([3.0]))])


def signed_sums(x, out):
    s = -0.0
    for i in range(len(x)):
        out[i] = -x[i] if x[i] != x[i] or x[i] < 0.5 else x[i] * 0.0
        s += x[i] * 0.0
    return s, out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nan_inf_and_signed_zero_follow_python(dtype):
    """x * 0.0 keeps NaN for inf and NaN and -0.0 for negatives; -x of NaN, 0.0 and -0.0 keeps
    their bits; s = -0.0 stays -0.0 over an empty range."""
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -1.0, 2.0], dtype)
    check(signed_sums, [(special, np.zeros(7, dtype)), (np.zeros(0, dtype), np.zeros(0, dtype)),
                        (special[3:], np.zeros(4, dtype)), (-special, np.zeros(7, dtype))])


DT, SCALE = 0.1, 3


def diffuse(u, out):
    for i in range(1, len(u) - 1):
        out[i] = u[i] + DT * (u[i - 1] - 2.0 * u[i] + u[i + 1]) * SCALE
    return out


def test_globals_and_closure_values_are_read_at_each_call(monkeypatch):
    """Module globals and closure variables the loop reads are passed in: a changed value (or type)
    is seen by the next call, with no guard to trip; the loop still compiles."""
    u = rng.random(40)
    jitted = check(diffuse, [(u, np.zeros(40))])
    for dt, scale in ((0.5, 2.5), (np.float32(0.25), 2), (1e300, 1e10)):
        monkeypatch.setitem(globals(), "DT", dt)
        monkeypatch.setitem(globals(), "SCALE", scale)
        want, got = diffuse(u, np.zeros(40)), jitted(u, np.zeros(40))
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (dt, scale)
    assert all(e.mode == "tvm" for f in jitted.fragments if f.block.kind == "loop" for e in f.entries)

    def make(factor):
        def scaled(x, out):
            for i in range(len(x)):
                out[i] = x[i] * factor
            return out
        return scaled

    check(make(2.0), [(rng.random(30), np.zeros(30))])
    check(make(3), [(np.arange(30), np.zeros(30, np.int64)), (np.arange(5), np.zeros(5, np.int64))])


def life_with_offsets(grid, new):
    # examples/loop_programs.life_offsets, but testing an element's truth (``and grid[i, j]``), as a
    # bool grid is written, rather than comparing it with 1
    n, m = grid.shape
    for i in range(n):
        for j in range(m):
            c = 0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    if di != 0 or dj != 0:
                        c += grid[(i + di) % n, (j + dj) % m]
            new[i, j] = 1 if c == 3 or (c == 2 and grid[i, j]) else 0
    return new


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_loops_over_constant_tuples(dtype):
    calls = [((rng.random(shape) < 0.4).astype(dtype), np.zeros(shape, dtype)) for shape in ((6, 7), (1, 1), (9, 3))]
    check(life_with_offsets, calls)


def smooth(a, out, weights_sum):
    n = a.shape[0]
    for i in range(n):
        s = 0.0
        for d in (-2, -1, 0, 1, 2):
            if 0 <= i + d < n:
                s += a[i + d]
        for w in (0.5, -0.0, 2.0):        # floats, -0.0 included
            s = s * w + weights_sum
        for flag in (True, False):
            if flag:
                s = -s
        out[i] = s
    return out


def offsets_out_of_range(a, out):
    for i in range(len(a)):
        for d in (-1, 1):
            out[i] += a[i + d]           # a[-1] wraps; a[len(a)] raises after the earlier writes
    return out


def last_offset(a):
    total = 0.0
    for i in range(len(a)):
        for d in (3, -7):
            total += a[i] * d
        if d == -7:
            total += 1
    return total


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_tuple_items_of_each_type_and_errors(dtype):
    check(smooth, [(rng.random(n).astype(dtype), np.zeros(n, dtype), s) for n, s in ((10, 1.0), (3, -2.5), (1, 0.0))])
    check(offsets_out_of_range, [(rng.random(n).astype(dtype), np.zeros(n, dtype)) for n in (5, 1, 8)])
    check(last_offset, [(rng.random(n).astype(dtype),) for n in (4, 0, 9)])


def counts_and_compares(g, stop):
    c = 0                                 # a Python int, then a numpy int once an element is added
    r = False
    for i in range(len(g)):
        r = c == 3                        # bool or numpy bool, as c is
        if i < stop:
            c += g[i]
    return r, c


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8"])
def test_a_comparison_of_a_python_or_numpy_int_keeps_its_type(dtype):
    calls = [(np.ones(n, dtype), stop) for n, stop in ((10, 0), (10, 3), (0, 2), (10, 9))]
    check(counts_and_compares, calls)


def mean_of_positives(a):
    s = 0
    n = 0
    for i in range(len(a)):
        if a[i] > 0:
            s += a[i]
            n += 1
    return s / n                          # Python's ZeroDivisionError while s is still an int


def running_max_and_ratio(a, start):
    best = start                          # an int argument, then elements
    for i in range(len(a)):
        v = a[i] * 2
        if v > best:
            best = v
    r = best / len(a) if len(a) else 0
    return best, r, best > 0, best == start


def fraction_left(a, budget):
    left = budget                         # int or float, then float: left / budget per iteration
    r = 0.0
    for i in range(len(a)):
        r = left / budget                 # a Python zero divisor raises, a numpy float one gives inf
        left = left - a[i]
    return left, r


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "bool"])
def test_a_variable_that_holds_an_int_then_floats(dtype):
    """``total = 0`` then float additions: the int is stored exactly in a float64 local and keeps its
    type (an empty loop returns the int 0); division raises only where both operands are Python's."""
    values = [rng.normal(0, 5, n).astype(dtype) for n in (10, 0, 3, 1)]
    if dtype.startswith("float"):
        values.append(np.array([-0.0, np.nan, np.inf, -np.inf, 2.5], dtype))      # IEEE values
    check(weighted_sum, [(a, w) for a in values for w in (2, 0.5, np.float32(1.5))], compiled=dtype != "bool")
    check(mean_of_positives, [(a,) for a in values] + [(values[0] * 0,)])
    # an int64 element may not be exact in a float64 local that also holds 7.5: that loop stays Python
    check(running_max_and_ratio, [(a, s) for a in values for s in (0, 3, -2**40, 7.5, np.int64(4))],
          compiled=dtype != "int64")
    floats = [v for v in values if v.dtype.kind == "f"] or [values[0].astype("float64")]
    check(fraction_left, [(a, b) for a in floats for b in (0, 0.0, 10, 2.5, np.float64(0.0), np.float32(4))])


def big_start(a, start):
    best = start
    for i in range(len(a)):
        if a[i] > best:
            best = a[i]
    return best


def test_an_int_that_may_not_be_exact_as_a_float_keeps_the_loop_in_python():
    """int64 elements in a variable that also holds a float: a float64 local would round 2**62 + 1."""
    calls = [(np.array([2**62 + 1, 5]), 0.5), (np.array([3, -2**60 - 1]), -1.5), (np.arange(4), 2.5)]
    jitted = check(big_start, calls, compiled=False)
    assert "an int that may reach 2**53, in a variable that also holds floats" in str(jitted.explain())


# -- while loops ------------------------------------------------------------------------------------
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps, n


def newton_sqrt(x0, target, tol):
    x = x0
    it = 0
    while abs(x * x - target) > tol:
        x = x - (x * x - target) / (2.0 * x)
        it += 1
        if it >= 100:
            break
    return x, it


def first_at_least(a, x):
    i = 0
    n = len(a)
    while i < n and a[i] < x:
        i += 1
    return i


def scan_past_the_end(a, x):
    i = 0
    while a[i] < x:                       # IndexError at the end, as in Python
        i += 1
    return i


def bisect_rows(m, x, out):
    for r in range(m.shape[0]):
        lo, hi = 0, m.shape[1]
        while lo < hi:
            mid = (lo + hi) // 2
            if m[r, mid] < x:
                lo = mid + 1
            else:
                hi = mid
        out[r] = lo
    return out


def integrate(y, h, t_end):
    t = 0.0
    while t < t_end:
        y = y + h * (-0.5 * y)
        t += h
    return y, t


@pytest.mark.parametrize("tiny", ["0", "5", "24"])
def test_while_loops_hand_over_from_python_at_any_iteration(tiny, monkeypatch):
    """The first iterations run as Python, the rest in the kernel from the state they left."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", tiny)
    compiled = tiny == "0"            # else a short call may never reach the kernel
    check(collatz_steps, [(27,), (1,), (2**40 + 1,), (97,), (6,)], compiled=compiled)
    check(newton_sqrt, [(1.0, 2.0, 1e-12), (3.0, 9.0, 0.0), (1.0, -1.0, 1e-9), (0.5, 1e6, 1e-3), (0.0, 2.0, 1e-9)],
          compiled=compiled)                       # the last: ZeroDivisionError, as Python
    sorted_values = np.sort(rng.random(200))
    check(first_at_least, [(sorted_values, 0.5), (sorted_values, 2.0), (sorted_values[:0], 0.1),
                           (sorted_values.astype(np.float32), 0.9)], compiled=compiled)
    check(scan_past_the_end, [(sorted_values, 0.3), (sorted_values[:40], 5.0), (np.arange(3.0), 9.0)],
          compiled=compiled)
    m = np.sort(rng.random((30, 50)), axis=1)
    check(bisect_rows, [(m, 0.5, np.zeros(30, np.int64)), (m[:3, :7], 0.1, np.zeros(3, np.int64)),
                        (m, 2.0, np.zeros(30, np.int64))], compiled=compiled)
    check(integrate, [(1.0, 0.01, 1.0), (2.5, 0.001, 0.5), (1.0, 0.5, 0.0)], compiled=compiled)


def skip_odd_until_negative(a, limit):
    """A ``while`` whose body continues and breaks: before, at and after the handover to the kernel."""
    i, total = 0, 0.0
    while i < len(a):
        i += 1
        if a[i - 1] < 0:
            break
        if i % 2:
            continue
        total += a[i - 1]
        if total > limit:
            break
    return i, total


@pytest.mark.parametrize("tiny", ["0", "8", "24", "64"])
def test_while_loops_with_break_and_continue_hand_over_at_any_trip(tiny, monkeypatch):
    monkeypatch.setenv("ASTJIT_TINY_LOOP", tiny)
    values = rng.random(60)
    calls = [(values, 1e9), (values, 3.0), (values, 0.1)]
    for stop in (0, 1, 2, 5, 9, 30, 59):
        with_negative = values.copy()
        with_negative[stop] = -1.0
        calls.append((with_negative, 1e9))
    calls += [(values[:0], 1.0), (values[:1], 1.0), (values.astype(np.float32), 2.5)]
    check(skip_odd_until_negative, calls, compiled=tiny == "0")


def test_a_while_loop_over_arrays_it_rebinds_compiles():
    """``y = y + h * (-0.5 * y)``: y is a local array of the kernel (backends/tvm/loop_arrays)."""
    check(integrate, [(np.ones(3), 0.01, 1.0), (np.ones(5), 0.1, 0.5), (np.arange(4.0), 0.1, 0.0)])


def while_else(a):
    i = 0
    while i < len(a):
        if a[i] < 0:
            break
        i += 1
    else:
        i = -1
    return i


def test_while_else_stays_python_and_says_why():
    jitted = check(while_else, [(np.array([1.0, -1.0]),), (np.ones(3),)], compiled=False)
    assert "while ... else" in str(jitted.explain())


def fibonacci_pairs(out):
    a, b = 0, 1
    for i in range(len(out)):
        out[i] = a
        a, b = b, a + b                   # both values first, then the names
    return out, a, b


def swaps(a, x, y):
    for i in range(len(a)):
        x, y = y, x                       # plain reads: y must not see the x just assigned
        a[i] = x - y
    return a, x, y


def test_tuple_assignment_evaluates_every_value_first():
    check(fibonacci_pairs, [(np.zeros(n, np.int64),) for n in (10, 0, 50, 3)])
    check(swaps, [(np.zeros(n), x, y) for n, x, y in ((5, 1.0, -2.5), (4, np.nan, -0.0), (0, 1.0, 2.0),
                                                      (3, np.inf, 1.0))])
    m = np.sort(rng.random((20, 30)), axis=1)
    check(bisect_rows, [(m, 0.5, np.zeros(20, np.int64)), (m[:2], 0.0, np.zeros(2, np.int64))])


def scaled_copy(x, y, a, k):
    for i in range(len(x)):
        y[i] = a * x[i] + k
    return y


def read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def test_arguments_the_kernel_refuses_after_it_compiled():
    """The generated runner leaves to the kernel's own argument conversion what it refuses (a read-only
    array, an int beyond int64) and then takes the checked path: a read-only array it only reads
    runs the kernel, one it writes runs as Python and raises there; aliasing arrays run as Python; numpy
    scalars of every kind reach the kernel as their values."""
    x = rng.random(40)
    calls = [(x, np.zeros(40), 0.5, 3), (read_only(x), np.zeros(40), 2.0, -1), (x, read_only(np.zeros(40)), 0.5, 3),
             (x, np.zeros(40), 0.5, 2**63), (x, np.zeros(40), 0.5, -2**63 - 1), (x, np.zeros(40), 0.5, 2**63 - 1),
             (x, np.zeros(40), np.float64(0.25), np.int64(7)), (x, np.zeros(40), np.float32(0.25), np.int8(-7)),
             (x, np.zeros(40), np.float64(-0.0), np.bool_(True)), (x, np.zeros(40), 1.5, True)]
    jitted = check(scaled_copy, calls)
    # the same array read and written: Python's order, element by element
    for args in [(x, x, 0.5, 1), (x[1:], x[:-1], 2.0, 0), (x[:-1], x[1:], 2.0, 0)]:
        want, got = x.copy(), x.copy()
        scaled_copy(*[want[s] if isinstance(a, np.ndarray) else a for a, s in zip(args, _slices(args, x))])
        jitted(*[got[s] if isinstance(a, np.ndarray) else a for a, s in zip(args, _slices(args, x))])
        assert np.array_equal(want, got)


def _slices(args, base):
    """Each array argument as a slice of ``base`` (its offset and length), else None."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            start = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
            out.append(slice(start, start + len(a)))
        else:
            out.append(None)
    return out


# found by a bug hunt (stop 25): each wrong before its fix

def times_int_zero(a, out):
    for i in range(len(a)):
        out[i] = a[i] * 0 + (0 * a[i]) * (a[i] * False)
    return out


def plus_int_zero(a, out):
    for i in range(len(a)):
        out[i] = a[i] + 0
    return out


def numpy_ints_divided(a):
    s = 0.0
    for x in a:
        s += x / 3
    return s


def numpy_abs(a, out):
    for i in range(len(a)):
        out[i] = abs(a[i])
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_int_constant_made_float_is_not_folded(dtype):
    """``a[i] * 0`` is nan for inf and nan, ``-0.0 + 0`` is 0.0 (the int 0 made 0.0 was folded away)."""
    a = np.array([1.0, np.inf, np.nan, -2.0, -0.0, 0.0] * 5, dtype)
    check(times_int_zero, [(a, np.zeros(30, dtype)), (a[::-1].copy(), np.zeros(30, dtype))])
    check(plus_int_zero, [(a, np.zeros(30, dtype))])


def test_numpy_ints_divide_and_take_abs_as_numpy_does():
    """numpy int64s divide as float64s (no 2**53 check, which is for Python ints) and abs(-2**63) wraps."""
    check(numpy_ints_divided, [(np.array([2**60] * 30),), (np.array([2**62, -3, 7]),), (np.arange(5),)])
    check(numpy_abs, [(np.array([-2**63, -5, 2**63 - 1]), np.zeros(3, np.int64)),
                      (np.array([-128, 3], np.int8), np.zeros(2, np.int8))])


def shifted_sum(x, k, m):
    t = 0
    for i in range(m):
        t += (x + i) >> k
        t ^= t >> (i % 70)
    return t


def shifts_by_items(x, n):
    s = 0
    for i in range(len(n)):
        s += x >> n[i]
    return s


def test_right_shifts_of_python_and_numpy_ints():
    """crc16 (npbench's bit loop) compiles. Python ints shift as Python's (a count of 64 or more leaves the sign, a negative count raises
    ValueError); numpy ints as numpy's right_shift, with NEP 50's result types."""
    data = np.random.default_rng(3).integers(0, 256, size=300, dtype=np.uint8)
    check(crc16, [(data,), (data[:40],), (data[::-3].copy(),), (np.zeros(30, np.uint8),)])
    check(shifted_sum, [(12345, 3, 200), (-987654321, 0, 300), (2**62, 5, 500), (-1, 70, 300), (7, 63, 200),
                        (5, -1, 200), (5, -1, 0)])
    check(shifts_by_items, [(12345, np.arange(-3, 100)), (-77, np.arange(70)),
                            (np.uint8(200), np.arange(40, dtype=np.uint8)),
                            (np.int8(-100), np.arange(40, dtype=np.int8)), (True, np.arange(40, dtype=np.int32))])


def hashed(a, k):
    h = 0
    for i in range(len(a)):
        h = ((h << k) ^ int(a[i])) & 0xFFFFFFFF
    return h


def grown(x, n):
    for i in range(n):
        x = x << (i % 3)
    return x


def shifts_of_items(a, out):
    for i in range(len(a)):
        out[i] = (a[i] << 3) | (a[i] >> 1)
    return out


def test_left_shifts_of_python_and_numpy_ints():
    """Python ints shift as Python's: a negative count raises ValueError, 0 shifted by any count is 0,
    and a result beyond int64 makes a loop without effects run as Python (Python's int grows); numpy
    ints wrap as numpy's left_shift does."""
    data = np.random.default_rng(5).integers(0, 1000, 200)
    check(hashed, [(data, 5), (data[:30], 0), (data[::-1].copy(), 31), (data, -1), (np.zeros(20, np.int64), 70)])
    check(grown, [(3, 50), (-3, 50), (0, 500), (1, 60), (-1, 64), (5, 0), (1, 200), (-7, 100)])
    check(shifts_of_items, [(np.arange(-50, 50), np.zeros(100, np.int64)),
                            (np.arange(200, dtype=np.uint8), np.zeros(200, np.uint8)),
                            (np.arange(-64, 64, dtype=np.int8), np.zeros(128, np.int16)),
                            (np.array([2**62, -2**63, 2**63 - 1] * 10), np.zeros(30, np.int64))])


def inverted(a, out):
    for i in range(len(a)):
        out[i] = ~a[i]
    return out


def inverted_python_ints(n):
    s = 0
    for i in range(n):
        s += ~(i * 3) + ~s
    return s


def test_invert_of_numpy_bools_and_ints_and_python_ints():
    """``~`` of a numpy bool is ``not``, of a numpy int its bits flipped in its dtype, of a Python int
    -x - 1; of a Python bool it stays Python (``~True`` is -2)."""
    bools = np.random.default_rng(6).random(40) > 0.5
    check(inverted, [(bools, np.zeros(40, bool)), (bools[:3].copy(), np.zeros(3, np.int64)),
                     (np.arange(-20, 20, dtype=np.int8), np.zeros(40, np.int8)),
                     (np.arange(250, 256, dtype=np.uint8), np.zeros(6, np.int64)),
                     (np.array([-2**63, 2**63 - 1, 0]), np.zeros(3, np.int64))])
    check(inverted_python_ints, [(10,), (57,), (0,)])


def inverted_flag(n):
    t = True
    c = 0
    for i in range(n):
        c += ~t
    return c


def test_invert_of_a_python_bool_stays_python():
    jitted = check(inverted_flag, [(5,), (40,)], compiled=False)
    assert "~ of a Python bool" in str(jitted.explain())


def test_a_while_loop_gets_twice_the_tiny_loop_work_before_the_kernel(monkeypatch):
    """By default a while loop's first trips as written get twice ASTJIT_TINY_LOOP's work: a Newton
    iteration from 1.0 to sqrt(2) (5 trips) ends within them and calls no kernel (with the for
    threshold's budget it did, and ran slower than Python); a long while loop still reaches the kernel."""
    monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)
    jitted = check(newton_sqrt, [(1.0, 2.0, 1e-12), (1.5, 2.0, 1e-12), (1.0, 3.0, 1e-12)], compiled=False)
    assert kernel_calls(jitted) == 0
    jitted = check(collatz_steps, [(27,), (97,)], compiled=False)
    assert kernel_calls(jitted) == 2


def run_lengths_of(x):
    n = len(x)
    vals = []
    lens = []
    i = 0
    while i < n:
        j = i
        while j < n and x[j] == x[i]:
            j += 1
        vals.append(x[i])
        lens.append(j - i)
        i = j
    return vals, lens


def crossed_out(n):
    flags = np.ones(n + 1, np.bool_)
    p = 2
    while p * p <= n:
        if flags[p]:
            j = p * p
            while j <= n:
                flags[j] = False
                j += p
        p += 1
    return flags


def test_a_while_loop_with_a_while_inside_runs_its_first_trips_as_written(monkeypatch):
    """A loop whose work, each loop taken to make at most as many trips as the arrays its inner loops
    index have elements, fits the first trips' budget runs as written: a run-length encoding of a
    few values calls no kernel (it called it from the first trip: 2.4-23x slower than plain Python),
    a long one does, as a sieve does from its first trip."""
    monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)
    small = [(np.array([1]),), (np.array([1, 1, 0]),), (np.array([2, 2, 2, 2]),), (np.zeros(0, np.int64),)]
    jitted = check(run_lengths_of, small, compiled=False)
    assert kernel_calls(jitted) == 0
    runs = np.repeat(rng.integers(0, 3, 500), rng.integers(1, 9, 500))
    check(run_lengths_of, small + [(runs,), (np.zeros(3000),)], compiled=False)
    jitted = jit(run_lengths_of)
    assert jitted(runs) == run_lengths_of(runs) and kernel_calls(jitted) == 1
    jitted = check(crossed_out, [(3,), (2,), (1,)], compiled=False)
    assert kernel_calls(jitted) == 0
    jitted = check(crossed_out, [(50_000,)])
    assert kernel_calls(jitted) == 1


def runs_until(x, out, longest):
    """Runs of equal values, until one longer than ``longest`` (break), skipping negative ones (continue);
    the inner loop reads past the end where the last run reaches it (IndexError, after the effects)."""
    i = 0
    k = 0
    while i < len(x):
        j = i
        while x[j] == x[i]:
            j += 1
        if j - i > longest:
            break
        if x[i] < 0:
            i = j
            continue
        out[k] = j - i
        k += 1
        i = j
    return i, k


@pytest.mark.parametrize("tiny", ["auto", "8", "40", "100000"])
def test_inner_while_loops_hand_over_at_any_trip(tiny, monkeypatch):
    monkeypatch.setenv("ASTJIT_TINY_LOOP", tiny)
    calls = []
    for n in (1, 3, 8, 20, 60):
        x = np.repeat(rng.integers(-1, 3, n), rng.integers(1, 4, n)).astype(np.float64)
        for longest in (2, 100):            # (a run of 3 stops it, else the last run reads past the end)
            calls.append((x, np.zeros(len(x), np.int64), longest))
    check(runs_until, calls, compiled=False)


def factorial(n):
    f = 1
    for i in range(2, n + 1):
        f *= i
    return f


def fibonacci_mod(n, m):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a % m


def power_mod(base, exp, mod):
    result = 1
    base = base % mod
    while exp > 0:
        if exp & 1:
            result = (result * base) % mod
        exp >>= 1
        base = (base * base) % mod
    return result


def collatz_peak(n):
    x = peak = n
    steps = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        peak = max(peak, x)
        steps += 1
    return steps, peak


def factorials(n):
    fs = []
    f = 1
    for i in range(2, n + 1):
        f *= i
        fs.append(f)                      # (the kernel's appends are dropped where it stops)
    return fs


def test_loops_without_effects_give_pythons_big_ints():
    """Where a Python int leaves int64 in a loop that writes no array, the loop runs again as Python
    from its start: Python's exact big int, not the int64 OverflowError."""
    check(factorial, [(5,), (20,), (21,), (100,), (0,)])
    check(factorials, [(5,), (20,), (25,), (1,)])
    check(fibonacci_mod, [(10, 7), (92, 10**9), (93, 10**9), (200, 1000)])
    check(power_mod, [(3, 5, 7), (3, 1000, 2**47 - 1), (2, 10**6, 10**9 + 7), (7, 0, 13)])
    check(collatz_peak, [(6,), (27,), (2**47 - 1,)])


def test_a_loop_whose_kernel_bails_runs_as_written_for_the_calls_after():
    """After the kernel stopped where an int left int64 (the loop's Python ran), the next calls run the
    loop as written inside the rewritten function, 1, 3, 7... up to BAILED_RUN_MOST of them, without a
    Fragment call (a Fibonacci of 200 called its Fragment at every call: 0.74x plain Python), then
    the kernel tries again: smaller values are back on the kernel."""
    from astjit.runtime.loop_fragment import BAILED_RUN_MOST

    jitted = jit(fibonacci_mod)
    for k in range(200):
        n = 150 + k % 7
        assert jitted(n, 1000) == fibonacci_mod(n, 1000)
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    assert 0 < loop.calls <= 200 // BAILED_RUN_MOST + 8        # (runs of 1, 3, ... 63, then 64 each)
    calls = loop.calls
    for n in (10, 60, 92):
        for _ in range(BAILED_RUN_MOST + 1):
            assert jitted(n, 10**9) == fibonacci_mod(n, 10**9)
    assert loop.calls > calls
    assert {e.runs for e in loop.entries} == {"compiled"}


def grown_items(ms):
    for m in ms:
        a = 1
        for _ in range(80):
            a = a * m + 1
        yield a % 1000


def test_a_bailing_loop_inside_a_loop_of_pythons_keeps_its_fragment_calls():
    """Inside a loop that stays Python (a generator's), a run as written after a bail would cover the
    rest of that loop and the next calls: such a loop counts its runs of Python through its runner."""
    jitted = jit(grown_items)
    items = [1] * 20 + [3] + [1] * 20              # (3**80 leaves int64: that run bails)
    for _ in range(3):
        assert list(jitted(items)) == list(grown_items(items))
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    assert loop.block.in_loop
    before = loop.calls
    assert list(jitted(items)) == list(grown_items(items))
    assert loop.calls - before == len(items)         # (each item's loop through the Fragment)


def float32_results(a):
    s = np.float32(0.0)
    mx = np.float32(-np.inf)
    last = a[0]
    for i in range(len(a)):
        s += a[i] * np.float32(0.5)
        if a[i] > mx:
            mx = a[i]
        last = a[i]
    return s, mx, last, float(last)


def test_float32_results_come_back_exactly():
    """float32 scalars handed back from their slots' bits (struct, not a numpy array per value):
    -0.0, NaN, infinities, denormals and the largest float32, as np.float32 and as a Python float."""
    f32 = np.float32
    specials = [np.array(v, f32) for v in ([-0.0, -0.0], [1.0, np.nan, 2.0], [np.inf, -1.0], [-np.inf, -np.inf],
                                            [1e-45, -1e-45, 3.4e38], [0.1, 0.2, 0.3])]
    rng = np.random.default_rng(46)
    check(float32_results, [(a,) for a in specials] + [(rng.standard_normal(n).astype(f32),) for n in (1, 9, 100)])


def last_of(a):
    s = a[0]
    for i in range(len(a)):
        s = a[i]
    return s


def test_a_float32_result_keeps_its_bits_a_signaling_nan_too():
    """A Python float would make a signaling NaN quiet (0x7f800001 -> 0x7fc00001): the result is read
    back as a float32 from the slot's bits."""
    jitted = jit(last_of)
    for bits in (0x7F800001, 0xFF800001, 0x7FC00123, 0x80000000, 0x00000001):
        a = np.array([0, 0x3F800000, bits], np.uint32).view(np.float32)
        for _ in range(3):
            got = jitted(a)
            assert type(got) is np.float32 and np.array(got).view(np.uint32) == bits
    # (long enough for the kernel, whose runner reads the slot through a float32 or float16 view)
    for dtype, ints, bits in ((np.float32, np.uint32, (0x7F800001, 0xFF800001, 0x80000000, 0x00000001)),
                              (np.float16, np.uint16, (0x7C01, 0xFC01, 0x8000, 0x0001, 0x7BFF))):
        for b in bits:
            a = np.full(300, 0x3C00 if dtype is np.float16 else 0x3F800000, ints)
            a[-1] = b
            got = jitted(a.view(dtype))
            assert type(got) is dtype and np.array(got).view(ints) == b
    assert any(e.runs == "compiled" for f in jitted.fragments for e in f.entries)
