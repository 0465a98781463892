"""Blocks inside loops that stay Python: measured against their own statements (also when they write
into arrays), and run inline once they settle on Python, without a Fragment call per iteration."""

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import jit
from astjit.runtime.fragment import SETTLED_CALLS

rng = np.random.default_rng(11)


def rows_in_place(a, out):
    seen = set()
    for i in range(a.shape[0]):
        out[i, 1:] += a[i, 1:] * 2.0 + 1.0   # the block writes into an array
        seen.add(i)                          # a set: the loop stays Python
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_block_writing_into_an_array_is_measured_on_copies_and_applies_once(dtype):
    jf = jit(rows_in_place)
    for shape in ((40, 8), (3, 5), (40, 8), (1, 1)):
        a = rng.random(shape).astype(dtype)
        out = rng.random(shape).astype(dtype)
        assert_same_as_numpy(rows_in_place, a, out, jitted=jf)
    measured = [e for f in jf.fragments for e in f.entries if e.measured is not None]
    assert measured, "the in-place block was never measured"
    assert all(e.mode_chosen in ("python", e.mode) for e in measured)


def scalar_loop(x, n):
    total = 0.0
    k = 0
    while k < n:
        total = total + x * k - 0.5          # scalar blocks: Python is faster than any Fragment call
        k += 1
    return total, k


def test_scalar_blocks_settle_on_python_and_run_inline():
    jf = jit(scalar_loop)
    for x, n in ((1.5, 500), (2.0, 0), (-3.0, 7), (0.25, 1000)):
        assert_same_as_numpy(scalar_loop, x, n, jitted=jf)
    calls = sum(f.calls for f in jf.fragments)
    # without the inline switch every iteration would call a Fragment (3014 calls in all)
    assert 0 < calls < 2 * 1507 // SETTLED_CALLS + 16


def changes_type(values):
    acc = 0.0
    for v in values:
        acc = acc * 0.5 + v                  # floats for a while, then arrays: the block looks again
    return acc


def test_a_settled_block_sees_new_argument_types():
    values = [float(i) for i in range(200)] + [rng.random(1000) for _ in range(200)]
    jf = assert_same_as_numpy(changes_type, values)
    assert_same_as_numpy(changes_type, values[::-1], jitted=jf)
    keys = {e.key for f in jf.fragments for e in f.entries}
    assert len(keys) >= 2, "the block never looked at the arrays"


def raises_midway(a, stop):
    out = 0.0
    for i in range(10):
        out = out + a[i] * 2.0
        if i == stop:
            out = out + a[i + 100]           # IndexError at the user's line, inline or not
    return out


def test_inline_statements_raise_at_the_users_line():
    jf = jit(raises_midway)
    a = rng.random(10)
    assert_same_as_numpy(raises_midway, a, 20, jitted=jf)
    with pytest.raises(IndexError) as info:
        jf(a, 5)
    assert info.traceback[-1].lineno + 1 == raises_midway.__code__.co_firstlineno + 5


def moves_its_own_index(a, b):
    idx = int(a[0])
    a[0] = 10.0                              # a second run of this block reads index 10: IndexError
    b[idx] = b[idx] * 2.0 + 1.0
    return a, b


def test_a_block_whose_rerun_would_raise_keeps_its_first_result():
    jf = jit(moves_its_own_index)
    for n in (5, 3):
        assert_same_as_numpy(moves_its_own_index, np.zeros(n), np.zeros(n), jitted=jf)



def scalar_loop_kept_python(x, n):
    total = 0.0
    seen = set()
    for k in range(n):
        total = total + x * k - 0.5          # a scalar block: its Python is faster than a Fragment call
        seen.add(k)                          # a set: the loop stays Python
    return total, len(seen)


def test_a_long_loop_calls_a_settled_block_ever_more_rarely():
    """Each time a block settles on Python again its inline run doubles: a long loop calls its
    Fragments a logarithmic number of times (a call every 63 iterations cost more than the loop's
    statements), and gives Python's results."""
    import math

    jf = jit(scalar_loop_kept_python)
    for x, n in ((1.5, 40_000), (-0.25, 40_000), (2.0, 300)):
        assert_same_as_numpy(scalar_loop_kept_python, x, n, jitted=jf)
    blocks = sum(1 for f in jf.fragments if f.entries)
    calls = sum(f.calls for f in jf.fragments)
    assert blocks and calls <= 3 * blocks * (math.log2(40_000 / SETTLED_CALLS) + 2), calls


def nested_kept_python(a, n):
    seen = set()
    total = 0.0
    for i in range(n):
        for j in range(3):
            try:
                x = a[j] * i - 0.5           # scalar blocks in an inner loop, in a try
                total = total + x * x
            except IndexError:
                total = -total
            seen.add(j)                      # a set: both loops stay Python
        k = 0
        while k < 2:
            total = total * 0.5 + k          # and in a while
            k += 1
    return total, len(seen)


def test_blocks_in_nested_loops_read_their_switch_once_per_loop_entry(python_measures_faster):
    """A block that settled on Python costs a local's read an iteration (the rewritten function reads
    each block's switch into a local before its loop and after each Fragment call, where ``next``
    on the switch cost about 35 ns an iteration), and the results are Python's, also where the block
    raises or its types change."""
    jf = jit(nested_kept_python)
    for a, n in ((rng.random(3), 1000), (rng.random(2), 50), (np.arange(3), 300), (rng.random(3).astype(np.float32), 7),
                 (rng.random(3), 0)):
        assert_same_as_numpy(nested_kept_python, a, n, jitted=jf)
    calls = sum(f.calls for f in jf.fragments if not f.block.kind == "loop")
    assert 0 < calls < 200, calls
    code = jf._transformed.function.__code__      # (the block in the while: in its loop region's fallback)
    blocks = [f for f in jf.fragments if f.name in code.co_freevars]
    assert blocks and all(f"__astjit_py_{f.index}" in code.co_varnames for f in blocks)


def test_a_clip_loop_collecting_into_a_list_gives_pythons_results():
    """examples/loop_programs.clip_and_collect (a loop that appends to a list), several calls with
    other values and sizes, NaN, -0.0 and ints among them."""
    from loop_programs import clip_and_collect

    jf = jit(clip_and_collect)
    for a, lo in ((rng.random(500), 0.7), (rng.random(3), 0.1), (np.array([np.nan, -0.0, np.inf, 0.2]), 0.3),
                  (rng.random(40).astype(np.float32), 0.5), (np.arange(10), 4)):
        assert_same_as_numpy(clip_and_collect, a, lo, jitted=jf, rtol=0)


def escape_counts(points, c, maxit):
    counts = []
    for p in points:
        z = complex(p, 0.5)
        k = 0
        while k < maxit and abs(z) < 2.0:    # a loop region whose kernel cannot take a complex power
            z = z ** 2 + c                   # (nor can the outer loop's: it stays Python)
            k += 1
        counts.append(k)
    return counts


def test_a_loop_region_that_falls_back_inside_a_python_loop_runs_inline():
    """A loop region in a loop that stays Python, whose kernel declines its body (a complex power), runs
    as written where it stands once it settles on Python, as a block does: a Fragment call per entry
    cost more than a short loop (0.8x plain Python)."""
    import math

    jf = jit(escape_counts)
    for points, c in ((np.linspace(-1, 1, 3000), complex(-0.4, 0.6)), (np.linspace(-0.5, 0.5, 50), 0.3 + 0j)):
        assert_same_as_numpy(escape_counts, points, c, 50, jitted=jf)
    loops = [f for f in jf.fragments if f.block.kind == "loop"]
    assert loops and all(e.mode == "python" for f in loops for e in f.entries)
    assert sum(f.calls for f in loops) <= 3 * (math.log2(3000 / SETTLED_CALLS) + 2), [f.calls for f in loops]


def scalar_update(err, kp, ki, state):
    out = kp * err + ki * (state + err) * 0.5   # numbers only: Python runs it faster than any kernel
    return out


def test_a_block_of_numbers_outside_loops_calls_its_fragment_ever_more_rarely():
    """Outside loops a block that settled on Python was called again every eighth call, to look at new
    argument types: a method doing a few float operations ran 2.5-3.7x its plain time. Where its
    arguments are all numbers its inline run doubles too (to SETTLED_MOST_OUTSIDE); arrays passed
    later still give Python's results."""
    import math

    from astjit.runtime.fragment import SETTLED_CALLS_OUTSIDE, SETTLED_MOST_OUTSIDE

    jf = jit(scalar_update)
    for k in range(3000):
        args = (0.5 - k * 1e-3, 1.5, 0.25, float(k % 7))
        assert jf(*args) == scalar_update(*args)
    calls = sum(f.calls for f in jf.fragments)
    doublings = math.log2(SETTLED_MOST_OUTSIDE / SETTLED_CALLS_OUTSIDE) + 2
    assert 0 < calls <= doublings + 3000 / SETTLED_MOST_OUTSIDE + 2, calls
    for n in (5, 100_000):
        err = rng.random(n)
        assert_same_as_numpy(scalar_update, err, 1.5, 0.25, rng.random(n), jitted=jf)


def first_element_test(a, x):
    v = a[0] * x + a[1]             # numbers only, whatever a's size
    return v


def test_a_block_of_numbers_read_from_arrays_calls_its_fragment_ever_more_rarely():
    """``a[0] * x + a[1]`` computes numbers whatever ``a``'s size: with an array among its arguments the
    block was still called every eighth call (2.3-3.0x plain Python's time)."""
    import math

    from astjit.runtime.fragment import SETTLED_CALLS_OUTSIDE, SETTLED_MOST_OUTSIDE

    jf = jit(first_element_test)
    arrays = [rng.random(n) for n in (3, 1000, 7)]
    for k in range(3000):
        a = arrays[k % 3]
        assert jf(a, k - 5.0) == first_element_test(a, k - 5.0)
    calls = sum(f.calls for f in jf.fragments)
    doublings = math.log2(SETTLED_MOST_OUTSIDE / SETTLED_CALLS_OUTSIDE) + 2
    assert 0 < calls <= 3 * doublings + 3000 / SETTLED_MOST_OUTSIDE + 4, calls


def keyword_sum(x, **kw):
    z = x + kw["y"]
    return z


def test_a_block_that_cannot_compile_for_a_dict_settles_on_python_outside_loops():
    """A block refused for its argument types (a dict) without an array among them runs inline for
    the next calls, as one that measured Python faster does: it made a Fragment call on every call
    (0.2 us of a 0.13 us function); given arrays through the dict later, it still answers right."""
    jf = jit(keyword_sum)
    for k in range(400):
        assert jf(1.5, y=float(k)) == keyword_sum(1.5, y=float(k))
    assert sum(f.calls for f in jf.fragments) < 100
    a = rng.random(5)
    for _ in range(10):
        got = jf(a, y=a)
        assert got.dtype == a.dtype and np.array_equal(got, keyword_sum(a, y=a))


def small_chain(a):
    return (a * 2.0 + 1.0) * 3.0


def test_a_block_of_arrays_that_settled_on_python_calls_its_fragment_ever_more_rarely_up_to_a_bound():
    """Outside loops, a block whose arrays measured faster as numpy doubles its inline run up to
    SETTLED_CALLS (a Fragment call every eighth call made ``np.exp`` of 100 float64 1.7x plain Python's
    time); a larger array, which a kernel may run faster, is still looked at within that many calls."""
    import math

    from astjit.runtime.fragment import SETTLED_CALLS, SETTLED_CALLS_OUTSIDE

    jf = jit(small_chain, backend="python")         # (Python for every key: its run doubles)
    a = rng.random(100)
    for _ in range(3000):
        assert np.array_equal(jf(a), small_chain(a))
    calls = sum(f.calls for f in jf.fragments)
    assert 0 < calls <= math.log2(SETTLED_CALLS / SETTLED_CALLS_OUTSIDE) + 3000 / (SETTLED_CALLS + 1) + 3, calls
    big = rng.random(1000)
    for _ in range(SETTLED_CALLS + 1):
        assert np.array_equal(jf(big), small_chain(big))
    assert len(jf.fragments[0].entries) == 2
