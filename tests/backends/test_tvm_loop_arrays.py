"""Whole arrays bound to names inside compiled loops (backends/tvm/loop_arrays.py), against plain
Python: ``v = v + dt * acc`` time steps, loop-only arrays, ``x, v = ..., ...``, ``u = unew``, ``x += ...``
on arguments; identity and memory order of the results; the cases that stay Python."""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops, run_both  # noqa: F401 - a fixture
from loop_programs import leapfrog, oscillators, oscillators_in_place

from astjit import explain, jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(19)


def maybe_rebound(x, steps):
    for i in range(steps):
        if i > 5:
            x = x * 2.0
    return x


def relax(u, steps, c):
    for _ in range(steps):
        unew = u + c * (np.sqrt(np.abs(u)) - u)
        u = unew
    return u


def scratch_local(x, steps):
    s = 0.0
    for i in range(steps):
        t = x * 2
        t[i % t.shape[0]] = 5
        s += t.sum()
    return s


def local_sums(x, out):
    for i in range(out.shape[0]):
        t = x * i
        out[i] = t.sum()
    return out


def alternate(x, a, steps):
    for i in range(steps):
        if i % 2:
            x = x - a
        else:
            x = np.maximum(x * a, 0.25)
    return x


def halve_and_sum(x, steps):
    s = 0.0
    for i in range(steps):
        x, s = x * 0.5, s + x.sum()
    return x, s


def read_past_end(x, n):
    s = 0.0
    for i in range(n):
        x = x + 1.0
        s += x[i]
    return x, s


def ieee_arrays(dtype):
    arrays = [rng.normal(0, 1, n).astype(dtype) for n in (0, 1, 17, 200)]
    arrays.append(np.array([1.0, -0.0, 2.0, 0.0, -0.0], dtype))
    return arrays


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rebound_arrays_match_numpy(dtype):
    """Bit for bit numpy's values and dtypes, every call with other values, lengths and step counts
    (a float32 system with a Python float ``dt`` stays float32; a float64 ``dt`` scalar promotes it,
    which keeps that loop in Python)."""
    calls = [(a, a[::-1].copy(), dt, steps) for a in ieee_arrays(dtype)
             for dt, steps in ((0.01, 0), (0.01, 1), (0.125, 40))]
    check(oscillators, calls)
    check(leapfrog, calls)
    check(oscillators_in_place, calls)


def test_nans_and_infs_where_numpy_has_them():
    """``-x`` flips a NaN's sign, ``inf - inf`` makes one, and ``nan + -nan`` may give either sign (LLVM
    may swap the operands of an addition, as numpy's own loops differ between SIMD and scalar code):
    NaNs compare by position, every other value bit for bit."""
    x = np.array([np.nan, 1.0, -0.0, 2.0, 0.0, np.nan, np.inf, 1.0])
    v = np.array([0.5, np.nan, 2.0, -0.0, 1.0, np.nan, 0.0, -np.inf])
    jitted = jit(oscillators)
    for steps in (1, 30):
        compiled, plain = jitted(x, v, 0.01, steps), oscillators(x, v, 0.01, steps)
        assert np.array_equal(np.isnan(compiled), np.isnan(plain))
        assert np.array_equal(compiled[~np.isnan(plain)].view(np.int64), plain[~np.isnan(plain)].view(np.int64))
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]


@pytest.mark.parametrize("shape", [(6, 7), (1, 9), (3, 4, 2)])
def test_arrays_of_several_axes_and_their_layout(shape):
    """The new arrays have numpy's shape and memory order: C for C-ordered arguments, F for
    Fortran-ordered ones."""
    a, b = rng.random(shape), rng.random(shape)
    for order in ("C", "F"):
        x, v = np.asarray(a, order=order), np.asarray(b, order=order)
        jitted = check(oscillators, [(x, v, 0.01, 30)])
        plain, compiled = oscillators(x.copy(order="K"), v.copy(order="K"), 0.01, 30), jitted(x, v, 0.01, 30)
        assert compiled.flags.c_contiguous == plain.flags.c_contiguous
        assert compiled.flags.f_contiguous == plain.flags.f_contiguous
    check(relax, [(rng.random(shape), 30, 0.1), (rng.random(shape), 0, 0.1)])


def test_a_name_never_rebound_is_the_callers_array():
    """An empty range, or a rebinding that never runs, leaves the caller's object itself (not a copy)."""
    jitted = jit(maybe_rebound)
    for steps in (0, 3, 6):
        x = rng.random(9)
        assert jitted(x, steps) is x
    x = rng.random(9)
    out = jitted(x, 30)
    assert out is not x and np.array_equal(out, maybe_rebound(x, 30))
    for steps in (3, 30, 0, 6, 31):     # a status buffer reused after a call that rebound the array
        x = rng.random(9)
        out = jitted(x, steps)
        assert (out is x) == (steps <= 6) and np.array_equal(out, maybe_rebound(x, steps))
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]


def test_loop_only_arrays_conditions_and_tuples():
    check(scratch_local, [(rng.random(n), steps) for n in (1, 5, 33) for steps in (0, 7, 40)])
    check(local_sums, [(rng.random(n), np.zeros(m)) for n, m in ((4, 9), (0, 3), (50, 1))])
    check(alternate, [(rng.random((5, 6)), rng.random((5, 6)), steps) for steps in (0, 1, 41)])
    check(alternate, [(rng.integers(0, 9, 8), rng.integers(1, 3, 8), steps) for steps in (0, 1, 41)],
          compiled=False)           # int - int, int * int, then np.maximum(.., 0.25): float64 from int64
    check(halve_and_sum, [(rng.random(7), 31), (rng.random(2), 0)])


def test_argument_updates_in_place_reach_the_caller():
    """``v += ...`` on an argument writes the caller's array, as numpy does; arguments that share
    memory run the loop as Python (its reads see each write)."""
    x, v = rng.random(40), rng.random(40)
    check(oscillators_in_place, [(x, v, 0.01, 25)])
    jitted = jit(oscillators_in_place)
    shared = rng.random(40)
    expected = oscillators_in_place(shared.copy(), shared.copy(), 0.01, 25)
    y = shared.copy()
    plain_alias = oscillators_in_place(y, y, 0.01, 25)
    z = shared.copy()
    assert np.array_equal(jitted(z, z, 0.01, 25), plain_alias)
    assert not np.array_equal(plain_alias, expected)          # the aliasing mattered


def test_index_error_after_rebinding():
    check(read_past_end, [(rng.random(5), 3), (rng.random(5), 7), (rng.random(0), 1)])


def test_shapes_that_broadcast_run_as_python():
    """Arrays of one rank whose shapes differ: numpy broadcasts the new array to a larger shape, so
    that call runs the loop's Python (the kernel keeps each local array's shape)."""
    check(oscillators, [(rng.random((3, 4)), rng.random((1, 4)), 0.01, 20),
                        (rng.random((3, 4)), rng.random((3, 4)), 0.01, 20)])
    x, v = rng.random((3, 4)), rng.random((3, 1))
    assert np.array_equal(jit(oscillators)(x, v, 0.01, 20), oscillators(x, v, 0.01, 20))
    jf = jit(oscillators)                  # (through the generated runner: the loop's Python, straight)
    for k in range(8):
        x, v = rng.random((3, 4)), rng.random((3, 1) if k % 2 else (3, 4))
        got, want = jf(x, v, 0.01, 5), oscillators(x, v, 0.01, 5)
        assert all(g.shape == w.shape and np.array_equal(g, w) for g, w in zip(got, want))


def chained(x, t, steps, c):
    for _ in range(steps):
        y = t * c                             # the old t, then t rebound: one pass computes both
        t = x + y
        a = x + 1.0
        x = a * 0.5 - y
        b = x + a                             # the new x and a, element by element
        t = np.minimum(t, b)
    return x, t


def two_lengths(x, y, steps):
    for _ in range(steps):
        x = x * 0.5 + 1.0                     # x and y may differ in length: two element loops
        y = y * 2.0 - 1.0
    return x, y


def test_consecutive_assignments_compute_in_one_pass():
    """Consecutive whole-array assignments share one element loop (loop_arrays.fused_array_assignments);
    each element still sees the values Python's statement order gives."""
    check(chained, [(rng.random(n), rng.random(n), steps, c) for n in (1, 9, 300) for steps, c in ((0, 0.5), (7, 1.5))])
    check(two_lengths, [(rng.random(n), rng.random(m), 11) for n, m in ((5, 5), (5, 9), (0, 3))])
    check(relax, [(rng.random(12), 30, 0.1)])                  # unew = ...; u = unew (a copy)
    jitted = check(oscillators, [(rng.random(40), rng.random(40), 0.01, 9)])
    entry = next(e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries)
    assert entry.segments[0].compiled.artifacts["tir"]().count("for ") == 1     # acc, v and x: one element loop


def alias_name(x, steps):
    for _ in range(steps):
        y = x
        y[0] += 1
    return x


def view_value(x, steps):
    y = x
    for _ in range(steps):
        y = x[1:] * 2                         # y is returned: an array the loop would have to hand back
    return y


def write_then_rebind(x, steps):
    for i in range(steps):
        x[0] = i
        x = x + 1.0
    return x


def alias_then_write(u, steps, c):
    for _ in range(steps):
        unew = u * c
        u = unew
        unew[0] = 3.0
    return u


def int_to_float(x, steps):
    for _ in range(steps):
        x = x * 0.5
    return x


def int_product(x, steps):
    for _ in range(steps):
        x = x * 3                             # int64 wraps in numpy, and in the kernel
    return x


def test_int64_arrays_wrap_in_a_compiled_loop():
    check(int_product, [(np.array([3, 2**40, -7]), 40), (np.array([2**62, -(2**63), 1, 0]), 3),
                        (np.arange(5), 1)])


def ranks_differ(x, v, steps):
    for _ in range(steps):
        x = x + v
    return x


@pytest.mark.parametrize("fn, args, reason", [
    (alias_name, (np.arange(5.0), 30), "binding 'y' to the array 'x' holds"),
    (view_value, (np.arange(5.0), 30), "a row or slice in the array assigned to 'y'"),
    (write_then_rebind, (np.arange(5.0), 30), "'x' is written in place and rebound in the same loop"),
    (alias_then_write, (np.arange(5.0), 30, 0.5), "where 'unew' is written in place"),
    (int_to_float, (np.arange(5), 30), "'x' changes from a 1-d int64 array to a 1-d float64 one"),
    (ranks_differ, (np.arange(5.0), np.ones((2, 5)), 30), "'x' changes from a 1-d float64 array to a 2-d"),
])
def test_what_stays_python_and_says_why(fn, args, reason):
    jitted = check(fn, [args, tuple(a * 2 if isinstance(a, np.ndarray) else a for a in args)], compiled=False)
    assert reason in str(explain(jitted))


def test_whole_array_loops_skip_the_kernel_when_tiny(monkeypatch):
    """The work estimate counts ``x = x + dt * v`` on arrays as a whole-array statement: a few such
    steps on arrays call the kernel, the same count on numbers runs as written."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "24")
    jitted = jit(oscillators)
    x, v = rng.random(50), rng.random(50)
    (_, plain, _), (_, compiled, _) = run_both(oscillators, jitted, (x, v, 0.01, 3))
    assert np.array_equal(plain, compiled)
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]


def tanh_steps(u, k):
    for _ in range(k):
        u = np.tanh(u) * 0.9 + 0.1
    return u


def arctan_rows(out, a):
    for i in range(a.shape[0]):
        out[i] = np.arctan(a[i]) + 1.0
    return out


def _calls(dtype):
    edges = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    u = np.concatenate([rng.standard_normal(300), edges]).astype(dtype)
    a = np.concatenate([rng.standard_normal(195), edges]).reshape(4, 50).astype(dtype)
    return [(tanh_steps, [(u, 5), (u[:7] * 3, 2)]), (arctan_rows, [(np.empty_like(a), a), (np.empty_like(a), -a)])]


def check_close(fn, calls) -> str:
    """Plain and jitted agree within the C library's few ulp (semantics.md's tolerances) on every
    call, results and arguments afterwards; the loop's mode: "tvm" where its kernel ran."""
    jitted = jit(fn)
    for args in calls:
        (k1, r1, a1), (k2, r2, a2) = run_both(fn, jitted, args)
        assert k1 == k2 == "ok"
        tol = 1e-5 if r1.dtype == np.float32 else 1e-12       # (relative and absolute: 0.9 * tanh + 0.1 cancels)
        np.testing.assert_allclose(r2, r1, rtol=tol, atol=tol)
        assert r1.dtype == r2.dtype and r1.shape == r2.shape
        for x, y in zip(a1, a2):
            np.testing.assert_allclose(y, x, rtol=tol, atol=tol)
    modes = {e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries}
    return jitted, modes


def test_c_library_functions_over_arrays_leave_the_loop_to_numpys_vectorized_loops(monkeypatch):
    """Where numpy's loop of np.arctan over float64 arrays is vectorized (SVML, with AVX512_SKX), a
    kernel calling the C library per element ran 6-20x slower than the loop's Python: the loop stays
    Python, and explain says why. tanh's kernels are vectorized (float32 and float64; until 2026-12-01
    float64's called the C library and stayed Python too): the loop compiles, weighed against numpy's
    loops."""
    from astjit.backends.tvm import support

    monkeypatch.setattr(support, "_cpu_features", lambda: {"AVX512_SKX": True})
    (_, tanh_calls), (arctan_fn, arctan_calls) = _calls("float64")
    jitted, modes = check_close(arctan_fn, arctan_calls)
    assert modes == {"python"}
    assert "numpy's vectorized loop is faster than the kernel's call of the C library" in str(explain(jitted))
    for calls in (tanh_calls, _calls("float32")[0][1]):
        _, modes = check_close(tanh_steps, calls)
        assert modes == {"tvm"}


def test_c_library_functions_over_arrays_compile_where_numpy_calls_it_too(monkeypatch):
    from astjit.backends.tvm import support

    monkeypatch.setattr(support, "_cpu_features", lambda: {})
    for fn, calls in _calls("float64"):
        assert check_close(fn, calls)[1] == {"tvm"}


def test_a_broadcast_group_is_logged_as_a_fallback(monkeypatch, caplog):
    """ASTJIT_LOG=fallbacks says why such a call runs the loop's Python (the generated runner sends it
    there straight)."""
    import logging

    jf = jit(oscillators)
    x, v = rng.random((3, 4)), rng.random((3, 4))
    jf(x, v, 0.01, 5)
    monkeypatch.setenv("ASTJIT_LOG", "fallbacks")
    v = rng.random((3, 1))
    with caplog.at_level(logging.INFO, logger="astjit"):
        got = jf(x, v, 0.01, 5)
    assert "arrays of different shapes or layouts" in caplog.text
    want = oscillators(x, v, 0.01, 5)
    assert all(g.shape == w.shape and np.array_equal(g, w) for g, w in zip(got, want))


def three_steps(b, w):
    v = b * 1.0
    for _ in range(3):
        v = v * w - 128.0
    return v


def test_a_broadcast_group_runs_the_loop_as_written_for_the_next_calls(monkeypatch):
    """Where a group's arrays broadcast, the rewritten function runs the loop as written for the next
    1, 3, 7... calls instead of reaching its Fragment at each (0.57x plain Python for 3 trips over
    (3, 4) and (3, 1) arrays); arrays of one shape then get the kernel again."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "0")
    jf = jit(three_steps)
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    b, w = rng.random((3, 4)), rng.random((3, 1))
    for _ in range(40):
        assert np.array_equal(jf(b, w), three_steps(b, w))
    assert region.calls <= 6
    same = rng.random((3, 4))
    for _ in range(70):
        got = jf(b, same)
    assert np.array_equal(got, three_steps(b, same)) and any(e.mode == "tvm" for e in region.entries)


def test_broadcast_calls_now_and_then_leave_the_kernel_to_calls_of_one_shape(monkeypatch):
    """The runs as written after a broadcast call grow only while such calls follow one another: one
    now and then, between calls of one shape, runs one call as written, not 64 (which handed most
    calls of one shape to the loop's Python); large arrays keep the Fragment's path."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "0")
    for size in (4, 10_000):
        jf = jit(three_steps)
        region = next(f for f in jf.fragments if f.block.kind == "loop")
        b, same = rng.random((3, size)), rng.random((3, size))
        jf(b, same)
        start = region.calls
        for _ in range(10):
            w = rng.random((3, 1))
            assert np.array_equal(jf(b, w), three_steps(b, w))
            for _ in range(9):
                assert np.array_equal(jf(b, same), three_steps(b, same))
        assert region.calls - start >= 80, (size, region.calls - start)
