"""Arrays of ever new lengths: after EXTENTS_AT_ONCE lengths of one pattern compiled, a new length runs
the block's Python until it recurs (runtime/new_extents), with numpy's results throughout. These tests
are of blocks without a rank-generic twin, as blocks the loop region's syntax refuses (its twin, which
takes such lengths where it compiles: tests/frontend/test_rank_generic.py)."""

from types import SimpleNamespace

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import explain, jit
from astjit.runtime import new_extents
from astjit.runtime.fragment import Fragment
from astjit.runtime.new_extents import (
    AGAIN,
    EXTENTS_AT_ONCE,
    LONGER_TO_TRY,
    NEVER,
    SIGHTINGS_TO_COMPILE,
    WAIT,
    WORTH_COUNTING,
    NewExtents,
    extent_pattern,
    saving_per_call,
    sightings_to_repay,
)

RNG = np.random.default_rng(46)


@pytest.fixture(autouse=True)
def no_rank_generic_twin(monkeypatch):
    monkeypatch.setattr(Fragment, "_rank_generic", lambda self, args: None)


def chain(a, b):
    c = (a * 2.0 + b) * 0.5 - a
    return c, c.sum()


def centered_energy(x):
    y = x - x.mean()
    return (y * y).sum() / len(x)


def lengths(jf) -> set:
    return {e.key[0][1] for f in jf.fragments for e in f.entries}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_ever_new_lengths_compile_two_and_give_numpys_results(dtype):
    jf = jit(chain)
    for n in range(10, 40):
        a, b = (RNG.standard_normal(n) * 10).astype(dtype), (RNG.standard_normal(n) * 10).astype(dtype)
        assert_same_as_numpy(chain, a, b, jitted=jf)
    assert lengths(jf) == {(10,), (11,)}
    notes = [r for r in explain(jf) if r.kind == "extents"]
    assert len(notes) == 1 and "new lengths" in notes[0].message
    assert notes[0].lineno == chain.__code__.co_firstlineno + 1
    assert not [r for r in explain(jf) if r.kind == "limit"]


def test_a_length_that_recurs_is_compiled(monkeypatch, kernels_measure_faster):
    # (how often depends on what the first lengths' measurement found: here, the minimum)
    monkeypatch.setattr(new_extents, "sightings_to_repay", lambda same, size, facts: SIGHTINGS_TO_COMPILE)
    jf = jit(centered_energy)
    for n in (100, 200, 300, 400):
        assert_same_as_numpy(centered_energy, RNG.standard_normal(n), jitted=jf)
    assert (300,) not in lengths(jf)
    for _ in range(40):          # (between two Fragment calls, the block runs inline: fragment.settle_python)
        assert_same_as_numpy(centered_energy, RNG.standard_normal(300), jitted=jf)
    assert (300,) in lengths(jf) and (400,) not in lengths(jf)


def test_a_new_dtype_or_rank_compiles_at_its_first_call():
    jf = jit(chain)
    for n in (5, 6, 7):
        assert_same_as_numpy(chain, RNG.standard_normal(n), RNG.standard_normal(n), jitted=jf)
    a = RNG.standard_normal(8).astype(np.float32)
    for _ in range(10):          # (the block runs inline for a few calls after one that ran its Python)
        assert_same_as_numpy(chain, a, a + 1, jitted=jf)
    for _ in range(10):
        assert_same_as_numpy(chain, RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)), jitted=jf)
    keys = {e.key for f in jf.fragments for e in f.entries}
    assert {k[0][0] for k in keys} == {np.dtype(np.float64), np.dtype(np.float32)}
    assert any(len(k[0][1]) == 2 for k in keys)


def test_strict_mode_compiles_every_length():
    jf = jit(chain, strict=True)
    for n in range(3, 9):
        assert_same_as_numpy(chain, RNG.standard_normal(n), RNG.standard_normal(n), jitted=jf)
    assert lengths(jf) == {(n,) for n in range(3, 9)}


def growing_prefix_sums(a):
    out = []
    for i in range(1, len(a) + 1):
        out.append((a[:i] * 2.0 + 1.0).sum())
    return out


def test_slices_growing_in_a_python_loop_compile_at_most_two_lengths():
    jf = jit(growing_prefix_sums)
    for n in (30, 31):
        assert_same_as_numpy(growing_prefix_sums, RNG.standard_normal(n), jitted=jf)
    assert sum(len(f.entries) for f in jf.fragments) <= EXTENTS_AT_ONCE + 2


FLOAT64 = np.dtype(np.float64)


def entry(shape, runs="compiled", measured=None, compile_seconds=0.2, value_guards=None):
    return SimpleNamespace(key=key(shape), runs=runs, measured=measured, compile_seconds=compile_seconds,
                           value_guards=value_guards or {})


def key(shape):
    return ((FLOAT64, shape, True), float)


def test_the_pattern_keeps_what_broadcasting_depends_on():
    assert extent_pattern(key((5, 1))) == extent_pattern(key((9, 1))) != extent_pattern(key((9, 2)))
    assert extent_pattern(key((0,))) != extent_pattern(key((2,))) == extent_pattern(key((2000,)))
    assert extent_pattern((float, int)) is None


def test_a_length_is_deferred_until_its_sightings():
    entries = [entry((10,)), entry((20,))]
    rule = NewExtents()
    for _ in range(SIGHTINGS_TO_COMPILE - 1):
        assert rule.defer(entries, key((30,))) in (WAIT, AGAIN)
    assert rule.defer(entries, key((30,))) is None
    assert rule.defer(entries[:EXTENTS_AT_ONCE - 1], key((40,))) is None     # (the first lengths compile)
    assert rule.defer(entries, key((20,))) is None      # (a key compiled already: its value guards differ)


def test_python_measured_faster_at_every_length_never_compiles_one_not_much_longer():
    entries = [entry((1000,), "python"), entry((2000,), "python")]
    rule = NewExtents()
    assert rule.defer(entries, key((500,))) == NEVER
    assert rule.defer(entries, key((LONGER_TO_TRY * 2000,))) == NEVER
    for _ in range(SIGHTINGS_TO_COMPILE - 1):
        assert rule.defer(entries, key((LONGER_TO_TRY * 2000 + 1,))) in (WAIT, AGAIN)
    assert rule.defer(entries, key((LONGER_TO_TRY * 2000 + 1,))) is None   # (much longer: it may win there)
    mixed = [entry((1000,), "python"), entry((2000,))]
    assert rule.defer(mixed, key((500,))) == WAIT and rule.defer(mixed, key((500,))) == AGAIN
    assert rule.defer(mixed, key((500,))) is None


def test_the_record_of_lengths_met_stays_bounded(monkeypatch):
    monkeypatch.setattr(new_extents, "REMEMBERED", 4)
    entries, rule = [entry((10,)), entry((11,))], NewExtents()
    for n in range(12, 30):
        rule.defer(entries, key((n,)))
    assert len(rule.sightings) <= 4 and len(rule._facts) <= 4


def test_a_length_waits_for_the_calls_that_repay_its_compile():
    """Compiled lengths that saved 1e-8 s an element at their measurement, compiled in 0.5 s: a length
    of 10,000 needs 5,000 calls, one of a million 50; without a saving measured, the minimum. After
    its second call, the Fragment's cached runner counts the rest (``left``); then it compiles."""
    measured = [entry((10_000,), measured=(1e-4, 2e-4), compile_seconds=0.5),
                entry((20_000,), measured=(3e-4, 4e-4), compile_seconds=0.5)]
    facts = NewExtents().facts
    assert sightings_to_repay(measured, 10_000, facts) == 5000
    assert sightings_to_repay(measured, 1_000_000, facts) == 50
    assert sightings_to_repay(measured, 10**9, facts) == SIGHTINGS_TO_COMPILE
    assert sightings_to_repay([entry((10,)), entry((20,))], 30, facts) == SIGHTINGS_TO_COMPILE
    slower = [entry((10,), "python", measured=(2e-6, 1e-6)), entry((20,), measured=(3e-6, 2e-6))]
    assert sightings_to_repay(slower, 30, facts) == SIGHTINGS_TO_COMPILE
    rule = NewExtents()
    assert rule.defer(measured, key((15_000,))) == WAIT and rule.defer(measured, key((15_000,))) == AGAIN
    assert rule.left(key((15_000,))) == 3334 - 2
    rule.repaid(key((15_000,)))
    assert rule.defer(measured, key((15_000,))) is None
    assert [rule.defer(measured, key((1_000_000,))) for _ in range(49)] == [WAIT] + [AGAIN] * 48
    assert rule.defer(measured, key((1_000_000,))) is None


def test_the_shortest_compile_judges_and_tvms_import_is_no_compile():
    """A block's first compile pays the compiler's warm-up and, in a new process, TVM's import (0.7-1.6
    s): the shortest compile of the pattern judges the next one's cost, and a specialization's compile
    time leaves the import out."""
    facts = NewExtents().facts
    first_and_second = [entry((10_000,), measured=(1e-4, 2e-4), compile_seconds=1.5),
                        entry((20_000,), measured=(3e-4, 4e-4), compile_seconds=0.1)]
    assert sightings_to_repay(first_and_second, 10_000, facts) == 1000
    from astjit.backends.tvm import IMPORT_SECONDS

    jf = jit(prefix_sum)
    fragment = jf.fragments[0]
    real = Fragment.make_specialization

    def importing(self, key, args):          # (as if this compile imported TVM for 5 s)
        IMPORT_SECONDS[0] += 5.0
        return real(self, key, args)

    try:
        Fragment.make_specialization = importing
        assert_same_as_numpy(prefix_sum, np.arange(10.0), 4, jitted=jf)
    finally:
        Fragment.make_specialization = real
    assert fragment.entries and all(e.compile_seconds < 5.0 for e in fragment.entries)


def prefix_sum(a, k):
    return (a[:k] * 2.0 + 1.0).sum()


def test_new_values_of_a_slice_bound_compile_two_and_give_numpys_results():
    """``a[:k]`` specializes on k's value: 40 values of k compiled 16 kernels (1.6 s, numpy 1.6 ms)."""
    jf = jit(prefix_sum)
    a = RNG.standard_normal(500)
    for k in range(100, 140):
        assert_same_as_numpy(prefix_sum, a, k, jitted=jf)
    assert sum(len(f.entries) for f in jf.fragments) == EXTENTS_AT_ONCE
    assert [r for r in explain(jf) if r.kind == "extents"]


def test_a_value_is_deferred_until_its_sightings():
    guarded = [entry((10,), value_guards={1: 3}), entry((10,), value_guards={1: 4})]
    rule = NewExtents()
    for _ in range(SIGHTINGS_TO_COMPILE - 1):
        assert rule.defer(guarded, key((10,)), (None, 5)) in (WAIT, AGAIN)
    assert rule.defer(guarded, key((10,)), (None, 5)) is None
    assert rule.defer(guarded[:1], key((10,)), (None, 6)) is None       # (the first values compile)
    assert rule.defer([entry((10,)), entry((10,))], key((10,)), (None, 6)) is None   # (no value guarded)
    assert rule.defer(guarded, key((10,)), (None, slice(1, 2))) is None   # (unhashable: compiled as before)
    python = [entry((10,), "python", value_guards={1: 3}), entry((10,), "python", value_guards={1: 4})]
    assert rule.defer(python, key((10,)), (None, 7)) == NEVER


class Halving:
    """numpy defers ``array * w`` to ``w.__rmul__``, which calls the jitted function again on a shorter
    array: the block's Python runs inside the block's own call, at every length."""
    __array_ufunc__ = None

    def __rmul__(self, a):
        return REENTERED[0](a[:-1], self) if len(a) > 1 else a * 2.0


REENTERED = [None]


def reentering(a, w):
    b = a + 1.0
    c = b * w
    return c


def test_a_deferred_blocks_python_may_call_the_function_again():
    """The block's Python of a deferred length runs outside the Fragment's lock (it deadlocked when a
    nested call with another new length reached the same Fragment)."""
    import threading

    REENTERED[0] = reentering
    want = reentering(np.arange(40.0), Halving())
    REENTERED[0] = jitted = jit(reentering)
    got = []
    worker = threading.Thread(target=lambda: got.append(jitted(np.arange(40.0), Halving())), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the jitted call deadlocked"
    assert np.array_equal(got[0], want)


def test_a_length_run_as_python_for_good_is_cached_and_forced_backends_compile_every_length():
    jf = jit(chain)
    for n in (1000, 1001):
        assert_same_as_numpy(chain, RNG.standard_normal(n), RNG.standard_normal(n), jitted=jf)
    fragment = jf.fragments[0]
    for e in fragment.entries:        # (as if the block's Python won at both: shorter lengths never compile)
        e.mode_chosen = "python"
    for _ in range(3):
        assert_same_as_numpy(chain, RNG.standard_normal(500), RNG.standard_normal(500), jitted=jf)
    new_key = next(k for k in fragment.cache if k[0][1] == (500,))
    assert fragment.cache[new_key] == fragment.python_runner and len(fragment.entries) == 2
    forced = jit(chain, backend="tvm")
    for n in range(10, 16):
        assert_same_as_numpy(chain, RNG.standard_normal(n), RNG.standard_normal(n), jitted=forced)
    assert lengths(forced) == {(n,) for n in range(10, 16)}


def test_a_length_met_again_is_counted_from_the_cache_and_compiles_once_repaid(monkeypatch, kernels_measure_faster):
    monkeypatch.setattr(new_extents, "sightings_to_repay", lambda same, size, facts: 12)
    jf = jit(centered_energy)
    for n in (100, 200):
        assert_same_as_numpy(centered_energy, RNG.standard_normal(n), jitted=jf)
    calls = 0
    while (300,) not in lengths(jf):
        calls += 1
        assert calls < 200, "never compiled"
        assert_same_as_numpy(centered_energy, RNG.standard_normal(300), jitted=jf)
    assert calls <= 12 + 2 * 8                  # (its first calls may run inline: settle_python)


def test_lengths_met_again_share_one_generated_counting_runner(monkeypatch, kernels_measure_faster):
    """Each length met again gets its own counting runner, made by one factory the Fragment generates
    once (generating each cost 0.35 ms: 6 us a call where random lengths arrived)."""
    monkeypatch.setattr(new_extents, "sightings_to_repay", lambda same, size, facts: 50)
    jf = jit(centered_energy)
    for n in (100, 200) + tuple(n for n in range(300, 312) for _ in range(30)):
        assert_same_as_numpy(centered_energy, RNG.standard_normal(n), jitted=jf)
    fragment = next(f for f in jf.fragments if f.entries)
    counting = [r for k, r in fragment.cache.items() if getattr(r, "__name__", "") == "run" and k[0][1][0] >= 300]
    assert len(counting) >= 10 and len({id(r) for r in counting}) == len(counting)
    assert len({r.__code__ for r in counting}) == 1


def test_a_length_whose_kernel_would_save_less_than_counting_costs_runs_python_for_good():
    """Kernels that saved 0.3 us a call on 40-50 elements: a length of 59 would save less than its
    counted calls cost; one of 100,000 would save enough to be counted."""
    small_wins = [entry((40,), measured=(0.8e-6, 1.1e-6)), entry((50,), measured=(0.85e-6, 1.15e-6))]
    assert saving_per_call(small_wins, 59, NewExtents().facts) < WORTH_COUNTING
    rule = NewExtents()
    assert rule.defer(small_wins, key((59,))) == NEVER
    assert rule.defer(small_wins, key((100_000,))) == WAIT
