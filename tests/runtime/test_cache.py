"""Fragment caches: one specialization per (dtype, shape) key, value guards for ints used as shapes,
no recompiles for loop counters, and the recompile limit."""

import warnings

import numpy as np
import pytest
from differential import assert_same_as_numpy, jit_unmeasured, modes

from astjit import RecompileLimitWarning, explain, jit
from astjit.runtime import new_extents
from astjit.runtime.fragment import SETTLED_CALLS_OUTSIDE

RNG = np.random.default_rng(6)


def n_entries(jf) -> list[int]:
    return [len(f.entries) for f in jf.fragments]


def keys(jf) -> set:
    return {e.key for f in jf.fragments for e in f.entries}


def affine(a, b):
    y = a * 2.0 + b
    z = np.tanh(y).sum()
    return y, z


def test_second_call_with_same_shapes_compiles_nothing():
    a, b = RNG.standard_normal(20), RNG.standard_normal(20)
    jf = assert_same_as_numpy(affine, a, b)
    assert modes(jf) <= {"tvm", "mixed"}
    before = n_entries(jf)
    assert before == [1]
    assert_same_as_numpy(affine, RNG.standard_normal(20), RNG.standard_normal(20), jitted=jf)
    assert n_entries(jf) == before
    assert not [r for r in explain(jf) if r.kind == "recompile"]


def test_new_shape_compiles_a_new_specialization_and_keeps_the_old():
    jf = jit(affine)
    big = (RNG.standard_normal(20), RNG.standard_normal(20))
    small = (RNG.standard_normal(7), RNG.standard_normal(7))
    assert_same_as_numpy(affine, *big, jitted=jf)
    assert_same_as_numpy(affine, *small, jitted=jf)
    assert n_entries(jf) == [2]
    shapes = {k[0][1] for k in keys(jf)}
    assert shapes == {(20,), (7,)}
    old = jf.fragments[0].entries[0]
    assert_same_as_numpy(affine, *big, jitted=jf)          # the old entry is used again
    assert n_entries(jf) == [2] and jf.fragments[0].entries[0] is old
    recompiles = [r for r in explain(jf) if r.kind == "recompile"]
    assert len(recompiles) == 1 and "20 -> 7" in recompiles[0].message


def test_new_dtype_and_ndim_compile_new_specializations():
    jf = jit(affine)
    assert_same_as_numpy(affine, RNG.standard_normal(6), RNG.standard_normal(6), jitted=jf)
    a32 = RNG.standard_normal(6).astype(np.float32)
    assert_same_as_numpy(affine, a32, a32, jitted=jf)
    m = RNG.standard_normal((2, 6))
    assert_same_as_numpy(affine, m, m[0], jitted=jf)
    assert n_entries(jf) == [3]
    text = str(explain(jf))
    assert "dtype float64 -> float32" in text and "ndim 1 -> 2" in text


def zeros_of(n, a):
    z = np.zeros(n) + a[0]
    w = np.ones((n, 2)) * n
    return z, w


def test_python_int_as_shape_respects_value_guards(monkeypatch):
    monkeypatch.setattr(new_extents, "EXTENTS_AT_ONCE", 100)    # (each value compiles at its first call)
    jf = jit_unmeasured(zeros_of)
    a = RNG.standard_normal(4)
    for n in (3, 5, 3, 1, 5):
        assert_same_as_numpy(zeros_of, n, a, jitted=jf)
        z, w = jf(n, a)
        assert z.shape == zeros_of(n, a)[0].shape and w.shape == zeros_of(n, a)[1].shape
    # one specialization per distinct n, each guarded by its value; repeated values hit the cache
    assert n_entries(jf) == [3]


def loop_counter(a, n):
    x = a * 1.0
    for i in range(n):
        x = x + i
        x = x * 0.5 - i / 3
    return x


def test_loop_counter_used_as_scalar_does_not_recompile():
    jf = assert_same_as_numpy(loop_counter, RNG.standard_normal(9), 12)
    assert modes(jf) <= {"tvm", "mixed"}
    loop = [f for f in jf.fragments if f.block.kind == "loop"]      # x = x + i: one kernel for the loop
    assert len(loop) == 1 and [e.mode for e in loop[0].entries] == ["tvm"]
    assert not [r for r in explain(jf) if r.kind == "recompile"]


def scalar_kinds(a, s):
    return a * s + 1


def test_python_scalar_types_key_by_type_not_value():
    jf = jit_unmeasured(scalar_kinds)
    a = RNG.standard_normal(5)
    for s in (1.5, 2.5, -3.0):
        assert_same_as_numpy(scalar_kinds, a, s, jitted=jf)
    assert n_entries(jf) == [1]
    for s in (2, True, np.float32(2.0), np.int8(3)):
        assert_same_as_numpy(scalar_kinds, a, s, jitted=jf)
    assert n_entries(jf) == [5]


def test_recompile_limit_falls_back_to_python(monkeypatch):
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", "2")
    monkeypatch.setattr(new_extents, "EXTENTS_AT_ONCE", 100)    # (each length compiles at its first call)
    jf = jit(affine)
    with pytest.warns(RecompileLimitWarning):
        for n in (3, 4, 5, 6, 3, 6):
            assert_same_as_numpy(affine, RNG.standard_normal(n), RNG.standard_normal(n), jitted=jf)
    frag = jf.fragments[0]
    assert len(frag.entries) == 2                         # no more compiles past the limit
    assert {e.key[0][1] for e in frag.entries} == {(3,), (4,)}
    limits = [r for r in explain(jf) if r.kind == "limit"]
    assert len(limits) == 1 and "ASTJIT_RECOMPILE_LIMIT" in limits[0].message
    assert limits[0].lineno == affine.__code__.co_firstlineno + 1


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_a_recompile_limit_below_one_runs_the_function_as_python_and_says_why(monkeypatch, limit):
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", limit)
    jf = jit(affine)
    for n in (3, 4):
        assert_same_as_numpy(affine, RNG.standard_normal(n), RNG.standard_normal(n), jitted=jf)
    assert jf.fragments == []
    assert f"ASTJIT_RECOMPILE_LIMIT is {limit}: nothing is compiled" in str(explain(jf))


def test_reaching_the_recompile_limit_warns_once_at_the_users_line(monkeypatch):
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", "2")
    monkeypatch.setattr(new_extents, "EXTENTS_AT_ONCE", 100)    # (each length compiles at its first call)
    jf = jit(affine)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in (3, 4, 5, 6, 7):
            assert_same_as_numpy(affine, RNG.standard_normal(n), RNG.standard_normal(n), jitted=jf)
    limit = [w for w in caught if issubclass(w.category, RecompileLimitWarning)]
    assert len(limit) == 1
    assert limit[0].filename == __file__ and limit[0].lineno == affine.__code__.co_firstlineno + 1
    assert "'a' dimension 0: 4 -> 5" in str(limit[0].message)


def reshaped(a, n):
    return a.reshape(n, -1) * 2.0


def test_the_warning_names_a_value_that_keeps_changing(monkeypatch):
    monkeypatch.setattr(new_extents, "EXTENTS_AT_ONCE", 100)    # (each value compiles at its first call)
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", "2")
    jf = jit(reshaped)
    a = RNG.standard_normal(24)
    with pytest.warns(RecompileLimitWarning, match="'n' value 3 -> 4"):
        for n in (2, 3, 4):
            assert_same_as_numpy(reshaped, a, n, jitted=jf)


def test_recompile_limit_zero_runs_everything_as_python(monkeypatch):
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", "0")
    jf = jit(loop_counter)
    assert_same_as_numpy(loop_counter, RNG.standard_normal(4), 3, jitted=jf)
    assert n_entries(jf) == [0] * len(jf.fragments)


def test_cache_survives_many_calls_without_growth():
    jf = jit(loop_counter)
    a = RNG.standard_normal(16)
    for n in range(6):
        assert_same_as_numpy(loop_counter, a, n, jitted=jf)
    assert all(c <= 1 for c in n_entries(jf))


def index_by_counter(a, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = a[i] * 2 + i
    return out


def test_loop_counter_used_as_index_is_correct():
    assert_same_as_numpy(index_by_counter, RNG.standard_normal(20), 20)


def test_loop_counter_used_as_index_does_not_recompile():
    jf = jit(index_by_counter)
    jf(RNG.standard_normal(20), 20)
    assert all(len(f.entries) <= 1 for f in jf.fragments)


def rows_by_counter(x, n):
    out = np.zeros_like(x)
    for i in range(n):
        out[i] = np.exp(x[i]) * 2
        out[i, 0] += x[-i - 1, 1]
    return out


def test_runtime_integer_indices_on_2d_arrays_do_not_recompile():
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    jf = assert_same_as_numpy(rows_by_counter, x, 6)
    assert all(len(f.entries) <= 1 for f in jf.fragments)


def test_runtime_index_out_of_bounds_raises_numpys_index_error():
    x = RNG.standard_normal((3, 3))
    assert_same_as_numpy(rows_by_counter, x, 4)


def _calls(jf):
    return [f.calls for f in jf.fragments]


def test_the_dispatch_for_the_key_in_use_gives_way_to_any_other_key():
    """After repeated calls with one key the Fragment dispatches through code for that key; calls with
    other shapes, dtypes, ranks and types, alternating, must still reach their own specializations."""
    jf = jit_unmeasured(affine)
    args = [(RNG.standard_normal(20), RNG.standard_normal(20)),
            (RNG.standard_normal(7), RNG.standard_normal(7)),
            (RNG.standard_normal(7).astype(np.float32), RNG.standard_normal(7).astype(np.float32)),
            (RNG.standard_normal((2, 3)), RNG.standard_normal(3)),
            (RNG.standard_normal(20), 1.5),
            (RNG.standard_normal(20), np.float32(1.5))]
    for round_ in range(4):
        for a, b in args:
            for _ in range(3 if round_ == 0 else 1):        # first: settle each key (compile, then hot)
                assert_same_as_numpy(affine, a.copy(), b, jitted=jf)
    frag = jf.fragments[0]
    assert len(frag.entries) == len(args)
    assert frag.calls == 3 * len(args) + 3 * len(args)
    # keys that alternate used up the installs: the full dispatch serves them, without generating code
    assert frag.dispatch_cell.cell_contents is frag.dispatch


def test_calls_with_one_key_go_through_a_dispatch_for_that_key():
    jf = jit_unmeasured(affine)
    a, b = RNG.standard_normal(20), RNG.standard_normal(20)
    for _ in range(3):
        assert_same_as_numpy(affine, a, b, jitted=jf)
    frag = jf.fragments[0]
    hot = frag.dispatch_cell.cell_contents
    assert hot is not frag.dispatch and hot.key == frag.make_key((a, b))
    assert_same_as_numpy(affine, RNG.standard_normal(5), b[:5], jitted=jf)     # another key: compiled
    assert len(frag.entries) == 2 and frag.calls == 4


def test_an_equal_dtype_that_is_another_object_still_hits_its_specialization():
    jf = jit_unmeasured(affine)
    a, b = RNG.standard_normal(9), RNG.standard_normal(9)
    for _ in range(4):
        assert_same_as_numpy(affine, a, b, jitted=jf)
    other = np.dtype(np.float64, metadata={"unit": "m"})          # == float64, not the same object
    assert other == np.float64 and other is not a.dtype
    for _ in range(20):
        assert_same_as_numpy(affine, a.astype(other), b.astype(other), jitted=jf)
    assert len(jf.fragments[0].entries) == 1 and jf.fragments[0].calls == 24


def test_a_block_that_settled_on_python_follows_new_argument_types_within_a_few_calls(python_measures_faster):
    """A block whose measurement chose Python for one key runs its statements inline for the next
    SETTLED_CALLS_OUTSIDE calls (no Fragment call), then compiles for the next key it is called with;
    the answers are numpy's throughout."""
    def small_argmax(x, y):
        return (x * y).argmax(axis=1)

    jf = jit(small_argmax)
    small = (RNG.random((4, 4)), RNG.random((4, 4)))
    for _ in range(3):
        assert_same_as_numpy(small_argmax, *small, jitted=jf)
    fragment = jf.fragments[0]
    assert [e.runs for e in fragment.entries] == ["python"]
    calls = fragment.calls
    large = (RNG.random((300, 500)), RNG.random((300, 500)))
    for _ in range(SETTLED_CALLS_OUTSIDE + 1):
        assert_same_as_numpy(small_argmax, *large, jitted=jf)
    assert 0 < fragment.calls - calls <= 2            # (measured, then settled on its Python again)
    assert [e.key[0][1] for e in fragment.entries] == [(4, 4), (300, 500)]


def scaled_sweep(a, out, c):
    n, m = a.shape
    for i in range(n):
        for j in range(1, m):
            out[i, j] = c * a[i, j] + out[i, j - 1]
    return out


def test_the_dispatch_of_a_loop_kernel_leaves_array_checks_to_the_kernel_and_still_finds_other_keys():
    """A whole-loop Fragment's dispatch for the key in use tests only the arguments' types; an array of
    another dtype, layout or memory (a view overlapping what the loop writes, a read-only input) is
    refused by the kernel's own checks and reaches its own specialization or the loop's Python."""
    jf = jit(scaled_sweep)
    base = RNG.standard_normal((30, 40))
    for _ in range(4):
        assert_same_as_numpy(scaled_sweep, base, np.zeros((30, 40)), 0.5, jitted=jf)
    frag = next(f for f in jf.fragments if f.block.kind == "loop")
    assert getattr(frag.dispatch_cell.cell_contents, "key", None) is not None      # the key's own dispatch
    locked = base.copy()
    locked.flags.writeable = False
    shared = RNG.standard_normal((30, 80))
    others = [(base.astype(np.float32), np.zeros((30, 40), np.float32), 0.5),
              (np.asfortranarray(base), np.asfortranarray(np.zeros((30, 40))), 1.5),
              (base[:, ::2], np.zeros((30, 20)), -2.0),
              (locked, np.zeros((30, 40)), 0.25),
              (shared[:, :40], shared[:, 20:60], 3.0),           # overlapping: Python's order
              (base, np.zeros((30, 40)), 7)]                     # an int scale: another key
    calls = frag.calls
    for round_ in range(3):
        for a, out, c in others + [(base, np.zeros((30, 40)), 0.5 + round_)]:
            if np.shares_memory(a, out):
                copy = shared.copy()
                scaled_sweep(copy[:, :40], copy[:, 20:60], c)
                jf(a, out, c)
                np.testing.assert_array_equal(shared, copy)
                shared[:] = RNG.standard_normal((30, 80))
                continue
            want = scaled_sweep(a.copy(), out.copy(), c)
            got = jf(a, out, c)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    assert frag.calls == calls + 3 * (len(others) + 1)
    at = frag.live_in.index("a")
    modes_by_dtype = {(e.key[at][0], e.key[at][2]) for e in frag.entries if e.mode == "tvm"}
    assert {(np.dtype(np.float32), True), (np.dtype(np.float64), False)} <= modes_by_dtype


def filled_like(x, y):
    return np.zeros(x.shape) + y * 2.0


def test_the_dispatch_for_a_kernel_tests_the_arrays_the_kernel_does_not_take():
    """The dispatch for the key in use leaves the dtype and shape of the arrays the kernel takes to the
    kernel's own checks; an array the block reads only for its shape is not the kernel's to check, so
    another shape of it still reaches its own specialization."""
    jf = jit_unmeasured(filled_like)
    y = RNG.standard_normal(6)
    for _ in range(4):
        assert_same_as_numpy(filled_like, np.ones((4, 6)), y, jitted=jf)
    frag = jf.fragments[0]
    assert getattr(frag.dispatch_cell.cell_contents, "key", None) is not None
    for round_ in range(2):
        for x, yy in [(np.ones((3, 6)), y), (np.ones((4, 6), np.float32), y), (np.ones((4, 6)), y[::-1]),
                      (np.ones((4, 6)), y.astype(np.float32)), (np.ones((2, 5, 6)), y), (np.ones((4, 6)), y)]:
            assert_same_as_numpy(filled_like, x, yy, jitted=jf)
    assert {e.key[0][1] for e in frag.entries} >= {(4, 6), (3, 6), (2, 5, 6)}


def damped(x, v, dt, steps):
    for _ in range(steps):                  # x and v rebound: the kernel copies them into buffers of its own
        acc = -x - 0.1 * v
        v = v + dt * acc
        x = x + dt * v
    return x, v


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_arrays_a_loop_kernel_only_copies_are_still_checked_against_the_key():
    """A loop that rebinds whole arrays copies them into buffers of the key's dtype, not through the
    kernel's argument checks: after the dispatch became the key's own, float32 or int arrays must
    still reach their own specialization (float32 results stay float32, as numpy gives)."""
    jf = jit(damped)
    for n in (40, 300, 41, 300):
        x, v = RNG.standard_normal(n), RNG.standard_normal(n)
        assert_same_as_numpy(damped, x, v, 0.01, 30, jitted=jf)
    frag = next(f for f in jf.fragments if f.block.kind == "loop")
    assert getattr(frag.dispatch_cell.cell_contents, "key", None) is not None
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0])
    for round_ in range(2):
        for x, v in [(RNG.standard_normal(50).astype(np.float32), RNG.standard_normal(50).astype(np.float32)),
                     (np.arange(50), RNG.standard_normal(50)),
                     (np.tile(specials, 5), np.tile(specials[::-1], 5)),
                     (RNG.standard_normal(50), RNG.standard_normal(50).astype(np.float32))]:
            want = damped(x.copy(), v.copy(), 0.01, 20 + round_)
            got = jf(x.copy(), v.copy(), 0.01, 20 + round_)
            for w, g in zip(want, got):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("variable, value, expected", [
    ("ASTJIT_RECOMPILE_LIMIT", "abc", "an integer"), ("ASTJIT_LOG", "bogus,cache", "'bogus' logs nothing")])
def test_an_environment_value_astjit_does_not_read_is_named_in_a_warning(monkeypatch, variable, value, expected):
    """(such values were ignored silently: a typo left the default in place without a word)"""
    from astjit import ConfigurationWarning, config

    monkeypatch.setenv(variable, value)
    monkeypatch.setattr(config, "_warned", set())
    with pytest.warns(ConfigurationWarning, match=expected):
        jf = jit(scaled_sum)
        assert_same_as_numpy(scaled_sum, np.arange(5.0), jitted=jf)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigurationWarning)          # once per variable and value
        assert_same_as_numpy(scaled_sum, np.arange(7.0), jitted=jf)


def scaled_sum(a):
    b = a * 2.0 + 1.0
    return b.sum()


def scaled_total(a, k):
    return (a * k + 1.0).sum()


def scaled_rows(a, out, k):
    for i in range(a.shape[0]):
        out[i] = a[i] * k + 1.0
    return out


@pytest.mark.parametrize("backend", [None, "numpy"])
def test_a_specialization_keeps_its_calls_numbers_not_its_arrays(backend, monkeypatch):
    """A block's or loop's specialization lives as long as the jitted function: the arrays of the call
    that made it are not kept (a 160 MB argument outlived the call, up to 16 per block)."""
    import gc
    import weakref

    monkeypatch.setenv("ASTJIT_TINY_LOOP", "0")
    for fn, make in ((scaled_total, lambda: (np.arange(50.0), 3.0)),
                     (scaled_rows, lambda: (np.ones((4, 6)), np.zeros((4, 6)), 2.5))):
        jf = jit(fn) if backend is None else jit(fn, backend=backend)
        args = make()
        expected = fn(*make())
        np.testing.assert_array_equal(jf(*args), expected)
        refs = [weakref.ref(a) for a in args if isinstance(a, np.ndarray)]
        del args
        gc.collect()
        assert all(r() is None for r in refs), fn.__name__
        np.testing.assert_array_equal(jf(*make()), expected)          # (the specialization still runs)
        assert any(f.entries for f in jf.fragments)


def positive_part(a):
    b = a * 2.0 + 1.0
    return b[b > 0]                       # boolean indexing: numpy's, for every shape


def test_a_block_that_never_compiles_does_not_warn_at_the_recompile_limit():
    """Each new shape is an entry, but one that runs as Python whatever the shape: padding arrays
    would change nothing, so the limit is not a warning there."""
    jf = jit(positive_part)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecompileLimitWarning)
        for n in range(10, 32):
            assert_same_as_numpy(positive_part, np.linspace(-1, 1, n), jitted=jf)
    assert all(e.mode == "python" for f in jf.fragments for e in f.entries)


def weighted_by(a, t):
    return a * t[0] + t[1]


def test_a_tuple_guard_hits_by_identity_and_by_value_and_misses_on_other_bits():
    """A tuple of numbers a specialization was made for is compared item by item (0.3 us an item at each
    call: a 200-item tuple ran 60x plain numpy's time), except where the very same object comes again:
    it holds the same value for good. An equal new tuple hits too; -0.0 for 0.0, or another NaN, does
    not stay with the old specialization's value."""
    jf = jit(weighted_by)
    a = RNG.random(4)
    long = tuple(float(v) for v in RNG.random(200))
    for t in (long, long, tuple(long), (2.0, 0.0), (2.0, -0.0), (2.0, float("nan")), (2.0, 0.0), long):
        for _ in range(3):
            r = jf(a, t)
            want = weighted_by(a, t)
            assert r.dtype == want.dtype
            np.testing.assert_array_equal(r, want)
            assert np.array_equal(np.signbit(r), np.signbit(want))


def test_tuples_are_the_same_only_item_for_item_by_type_and_bits():
    """The C-level comparison of tuples of plain items (``_plainly_same``) keeps apart what the item by
    item test keeps apart: another type at a position, -0.0 for 0.0, nested tuples of other types."""
    from astjit.runtime.fragment import _same_value

    nan = float("nan")
    for a, b, same in [((1, 2), (1, 2), True), ((1, 2), (1.0, 2), False), ((True,), (1,), False),
                       ((0.0, 1.0), (-0.0, 1.0), False), ((nan,), (nan,), True), ((nan,), (float("nan"),), True),
                       ((1, "a", None), (1, "a", None), True), (((1,),), ((1.0,),), False), ((1.5, 2), (1.5, 2), True),
                       (tuple(range(40)), tuple(list(range(40))), True), ((1, 2.0), (1.0, 2), False),
                       ((np.float64(0.0),), (np.float64(-0.0),), False), ((1, 2), (1, 2, 3), False)]:
        assert _same_value(a, b) is same and _same_value(b, a) is same, (a, b)


def test_only_tuples_and_slices_of_numbers_are_guarded_by_identity():
    from astjit.runtime.fragment import _immutable

    assert _immutable((1, 2.0, (3, "x", None))) and _immutable(slice(1, None, 2))
    assert not _immutable(([1],)) and not _immutable((np.zeros(2),)) and not _immutable([1, 2])
    assert not _immutable(slice(np.int64(1), 3))


def test_the_hot_dispatch_compares_a_new_length_before_the_kernel_would_refuse_it():
    """Arrays of another length go to the full dispatch without a call of the kernel, whose refusal is
    an exception costing 0.3 ms (190 ms, the first in a process whose kernels came from the disk cache);
    the kernel still refuses another layout or dtype of the same shape itself."""
    from astjit.runtime import fpstate
    from astjit.runtime.dispatch import make_hot_dispatch

    for _ in range(2):          # (numpy's quiet error state, known as such: the hot path's last test)
        fpstate.kernels_allowed()
    ran = []

    def kernel_runner(a0, a1, a2):
        ran.append(a0.shape)
        return "kernel"

    kernel_runner.checked_by_kernel = frozenset({0, 1})
    kernel_runner.refused = lambda refused: kernel_runner
    part = (np.dtype(np.float64), (20,), True)
    hot = make_hot_dispatch((part, part, float), kernel_runner, lambda *args: "full dispatch", [0])
    assert hot(np.ones(20), np.ones(20), 1.5) == "kernel" and ran == [(20,)]
    for x in (np.ones(7), np.ones((20, 1)), np.ones(21)):
        assert hot(x, x, 1.5) == "full dispatch"
    assert hot(np.ones(20), np.ones(20), 2) == "full dispatch" and ran == [(20,)]


def test_a_hot_dispatch_compares_two_alternating_keys():
    """Keys that alternate (a loop's first trip, a name holding a number, then arrays) stay on a hot
    dispatch of both, in the order last hit first; a third key goes to the full dispatch."""
    from astjit.runtime import fpstate
    from astjit.runtime.dispatch import make_hot_dispatch

    for _ in range(2):
        fpstate.kernels_allowed()
    number = (float, (np.dtype(np.float64), (8,), True))
    arrays = ((np.dtype(np.float64), (8,), True), (np.dtype(np.float64), (8,), True))
    hot = make_hot_dispatch(arrays, lambda y, x: "arrays", lambda *args: "full dispatch", [0],
                            others=[(number, lambda y, x: "number")])
    assert hot(np.ones(8), np.ones(8)) == "arrays" and hot(0.5, np.ones(8)) == "number"
    assert hot(np.float32(0.5), np.ones(8)) == "full dispatch" and hot(np.ones(9), np.ones(8)) == "full dispatch"


def horner_from_zero(x, coeffs):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def test_a_block_whose_first_trip_takes_a_number_keeps_both_keys_hot(kernels_measure_faster):
    jf = jit(horner_from_zero)
    x = RNG.standard_normal(1000)
    for _ in range(40):
        coeffs = [float(v) for v in RNG.standard_normal(12)]
        assert_same_as_numpy(horner_from_zero, x, coeffs, jitted=jf)
    block = next(f for f in jf.fragments if f.block.kind == "block" and f.entries)
    assert block.dispatch_cell.cell_contents is not block.dispatch and len(block._hot) == 2


def doubled_plus(x, y):
    return 2.0 * x + y


def test_a_refused_block_of_small_arrays_settles_on_its_python():
    """Fortran-ordered arrays, which numpy runs in their own layout, refuse the kernel: over small arrays
    the block then runs inline for the next calls (a Fragment call on each cost 0.6 us of a 0.8 us
    function); over large ones each call still reaches the Fragment, whose next types may compile."""
    jf = jit(doubled_plus)
    frag = jf.fragments[0]
    fragment_calls = []
    for n in (10, 100):               # (100 elements, then 10,000: more than SMALL_REFUSED)
        x, y = np.asfortranarray(RNG.random((n, n))), np.asfortranarray(RNG.random((n, n)))
        for _ in range(70):           # (the inline runs settled before end within SETTLED_CALLS)
            assert_same_as_numpy(doubled_plus, x, y, jitted=jf)
        before = frag.calls
        for _ in range(200):
            assert_same_as_numpy(doubled_plus, x, y, jitted=jf)
        fragment_calls.append(frag.calls - before)
    assert 0 < fragment_calls[0] <= 20 and fragment_calls[1] == 200, fragment_calls
    assert [e.mode for e in frag.entries] == ["python", "python"]
