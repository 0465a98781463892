"""A straight-line block meeting ever new lengths runs its rank-generic twin (frontend/rank_generic):
one loop kernel for any length, with numpy's results."""

import numpy as np
import pytest

from astjit import explain, jit
from tests.differential import assert_same_as_numpy

RNG = np.random.default_rng(11)


def centered_energy(x):
    d = x - 1.0
    return (d * d).mean()


def quotients(a, b):
    return (a * 3 + b) // 2, a % 7


def scaled_pair(x, y):
    d = x - y
    e = d * 2.0 + 1.0
    return e, d


def updated(x):
    y = x * 2.0
    x[0] = 1.0
    return y


def _lengths(count, low=1000, high=60_000):
    return [int(n) for n in RNG.integers(low, high, count)]


def test_new_lengths_run_one_kernel_for_any_length_with_numpys_bits():
    jf = jit(centered_energy)
    for n in _lengths(24):
        assert_same_as_numpy(centered_energy, RNG.standard_normal(n), jitted=jf)
    (frag,) = jf.fragments
    assert [e.runs for e in frag._twin.entries] == ["compiled"]
    assert any("one kernel made for any length" in r.message for r in explain(jf))
    # (the sum in numpy's pairwise order: the same bits, not only close)
    x = RNG.standard_normal(77_777)
    assert jf(x) == centered_energy(x)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16])
def test_new_lengths_of_integer_blocks(dtype):
    jf = jit(quotients)
    for n in _lengths(20):
        a = RNG.integers(0, 1000, n).astype(dtype)
        b = RNG.integers(1, 9, n).astype(dtype)
        assert_same_as_numpy(quotients, a, b, jitted=jf)


def test_results_of_the_twin_are_fresh_arrays_at_each_call():
    jf = jit(scaled_pair)
    kept = []
    for n in _lengths(20, 2000, 20_000):
        x, y = RNG.standard_normal(n), RNG.standard_normal(n)
        kept.append(((x, y), jf(x, y)))
    for (x, y), (e, d) in kept:
        np.testing.assert_array_equal(d, x - y)
        np.testing.assert_array_equal(e, (x - y) * 2.0 + 1.0)
        assert e.flags.owndata and d.flags.owndata
    assert not np.shares_memory(kept[-1][1][0], kept[-2][1][0])


def test_blocks_updating_arrays_in_place_have_no_twin():
    jf = jit(updated)
    for n in _lengths(8):
        assert_same_as_numpy(updated, RNG.standard_normal(n), jitted=jf)
    assert all(f.block.make_twin is None for f in jf.fragments)


def window_energy(a, lo, w):
    x = a[lo:lo + w]
    return (x * x).sum() + x.mean()


def test_a_block_reading_windows_has_a_twin_that_reads_them_from_their_arrays():
    """Windows of ever new lengths at moving bounds: the twin (a loop kernel reading ``a[lo:lo + w]`` at
    any bounds) is made without the windows the caller may take."""
    jf = jit(window_energy)
    a = RNG.standard_normal(300_000)
    for k in range(40):
        lo, w = int(RNG.integers(0, 100_000)), int(RNG.integers(5000, 150_000))
        assert_same_as_numpy(window_energy, a, lo, w, jitted=jf)
    (frag,) = jf.fragments
    twin = frag.block.make_twin()
    assert twin is not None and twin.live_in == ["a", "lo", "w"]


def test_short_new_lengths_keep_the_blocks_python_inline():
    """Below TWIN_FROM elements a new length runs the block's Python inline (reaching the twin through a
    miss of the block's Fragment cost more than the work)."""
    jf = jit(centered_energy)
    for n in _lengths(40, 100, 1000):
        assert_same_as_numpy(centered_energy, RNG.standard_normal(n), jitted=jf)
    (frag,) = jf.fragments
    assert frag._twin is None


def test_the_twin_is_weighed_against_the_blocks_python(monkeypatch):
    """The twin's Python is numpy's whole-array work: weighed however long its kernel runs; where
    Python wins, the block's Fragment settles on it."""
    from astjit.runtime import loop_weighing

    timed = loop_weighing._timed

    def python_faster(run, args):
        out, _ = timed(run, args)
        return out, (0.0 if getattr(run, "__name__", "").startswith("__astjit_block") else 1e-3)

    monkeypatch.setattr(loop_weighing, "_timed", python_faster)
    jf = jit(centered_energy)
    for n in _lengths(60, 20_000, 60_000):
        assert_same_as_numpy(centered_energy, RNG.standard_normal(n), jitted=jf)
    (frag,) = jf.fragments
    assert frag._twin and all(hasattr(e.runner, "weighed") for e in frag._twin.entries)
    assert "numpy's whole-array loops run the block faster" in str(explain(jf))


def one_array_two_names(a, b):
    c = a * b
    d = c
    return c, d, (c + 1).mean()


def a_view_published(a):
    y = a[1:]
    return y, (a * 2.0).sum()


@pytest.mark.parametrize("fn", [one_array_two_names, a_view_published])
def test_a_block_publishing_one_array_twice_or_a_view_has_no_twin(fn):
    """The twin's kernel gives each live-out a buffer of its own: ``d = c`` came back as two arrays,
    ``c[0] = 1`` no longer seen through ``d``."""
    jf = jit(fn)
    for n in _lengths(8, 16_384, 100_000):
        args = (RNG.standard_normal(n), RNG.standard_normal(n))[:fn.__code__.co_argcount]
        got, want = jf(*args), fn(*args)
        if fn is one_array_two_names:
            assert got[0] is got[1] and want[0] is want[1]
        else:
            assert np.shares_memory(got[0], args[0])
        assert_same_as_numpy(fn, *args, jitted=jf)
    assert all(f.block.make_twin is None for f in jf.fragments)
