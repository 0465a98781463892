"""Windows whose bounds move between calls: the caller takes the view once the Fragment asks for it
(frontend/window_views), and the results stay numpy's for any bounds, types and errors."""

import io

import numpy as np
import pytest

from astjit import explain, jit
from tests.differential import assert_same_as_numpy

RNG = np.random.default_rng(7)


def window_energy(a, lo, w):
    x = a[lo:lo + w]
    return (x * x).sum() / w + x.mean()


def window_scaled(a, lo, hi):
    return a[lo:hi] * 2.0 + 1.0


def window_kept(a, lo, hi):
    x = a[lo:hi]
    y = x * 3.0
    return x, y


def rows_window(A, i, h):
    return (A[i:i + h] * A[i:i + h]).sum(axis=0)


def columns_window(A, j, w):
    return A[:, j:j + w] * 2.0 - 1.0


def stencil(u, n, c):
    lap = u[0:n - 2] - 2.0 * u[1:n - 1] + u[2:n]
    return u[1:n - 1] + c * lap


def prefix(a, k):
    return (a[:k] * 2.0 + 1.0).sum()


def window_updated(a, lo, hi):
    y = a[lo:hi] * 2.0
    a[0] = 7.0
    return y


def window_maybe_unbound(a, flag, w):
    if flag:
        lo = 3
    return (a[lo:lo + w] * 2.0).sum()


def window_after_rebinding(a, lo, w):
    lo = lo + 1
    x = a[lo:lo + w]
    return x * 2.0 + 1.0


def window_of_rebound_base(a, b, lo, w):
    s = a * 0.5
    a = b
    x = a[lo:lo + w]
    return x * 2.0 + s.sum()


def window_after_shifted_bounds(a, lo, hi):
    s = a[lo:hi] * 1.0
    lo, hi = lo + 1, hi + 1
    return s + a[lo:hi]


def window_bound_in_one_branch(a, b, d, c, hi):
    if c:
        lo = hi - 5
    t = b + d
    x = a[lo:hi]
    return x * 2.0 + t


def window_of_computed_bounds(a, lo, w):
    return a[lo:lo + w] * 2.0


def _fragment(jf):
    (frag,) = [f for f in jf.fragments if f.block.views]
    return frag


def test_a_moving_window_of_one_length_is_taken_by_the_caller_and_compiles_once_per_length():
    jf = jit(window_energy)
    a = RNG.standard_normal(5000)
    for lo in RNG.integers(0, 4900, 30):
        assert_same_as_numpy(window_energy, a, int(lo), 64, jitted=jf)
    frag = _fragment(jf)
    assert frag.windows_switch.cell_contents is True
    assert len(frag.entries) <= 2           # (the first bounds' specialization, then one for length 64)
    assert any(r.kind == "windows" for r in explain(jf))
    for lo in (4990, 5000, 6000, -10, -6000, 0):      # clamped at the ends: other lengths, empty windows
        assert_same_as_numpy(window_energy, a, lo, 64, jitted=jf)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_moving_windows_give_numpys_results_for_each_dtype_and_index_type(dtype):
    jf = jit(window_scaled)
    a = (RNG.standard_normal(300) * 50).astype(dtype)
    bounds = [(0, 40), (5, 45), (100, 140), (np.int64(7), np.int64(47)), (np.uint16(3), 43), (None, 40),
              (260, None), (-40, None), (True, 41), (-1000, 40), (250, 1000), (50, 10)]
    for lo, hi in bounds * 2:
        assert_same_as_numpy(window_scaled, a, lo, hi, jitted=jf)
    assert _fragment(jf).windows_switch.cell_contents is True


def test_a_window_returned_is_a_view_of_the_callers_array():
    jf = jit(window_kept)
    a = RNG.standard_normal(100)
    for lo in range(10):
        x, y = jf(a, lo, lo + 20)
        assert np.shares_memory(x, a) and x.base is not None
        np.testing.assert_array_equal(x, a[lo:lo + 20])
        np.testing.assert_array_equal(y, a[lo:lo + 20] * 3.0)


def test_other_types_and_errors_after_the_switch_are_pythons():
    jf = jit(window_scaled)
    a = RNG.standard_normal(100)
    for lo in range(6):
        assert_same_as_numpy(window_scaled, a, lo, lo + 10, jitted=jf)
    assert _fragment(jf).windows_switch.cell_contents is True
    assert_same_as_numpy(window_scaled, a, 1.5, 10, jitted=jf)            # TypeError, as Python
    assert_same_as_numpy(window_scaled, a, "x", 10, jitted=jf)            # TypeError
    assert_same_as_numpy(window_scaled, list(range(30)), 2, 12, jitted=jf)  # a list: Python's list slice
    assert_same_as_numpy(window_scaled, np.array(3.0), 0, 1, jitted=jf)   # 0-d: IndexError
    assert_same_as_numpy(window_scaled, a, np.int64(2), 12, jitted=jf)
    assert_same_as_numpy(window_scaled, a[::2], 2, 12, jitted=jf)       # a strided base
    assert_same_as_numpy(window_scaled, a, 2, 12, jitted=jf)


def test_row_windows_move_and_column_windows_stay_correct():
    A = RNG.standard_normal((200, 16)).astype(np.float32)
    jr = jit(rows_window)
    for i in range(0, 150, 7):
        assert_same_as_numpy(rows_window, A, i, 8, jitted=jr)
    assert _fragment(jr).windows_switch.cell_contents is True
    jc = jit(columns_window)
    for j in range(10):
        assert_same_as_numpy(columns_window, A, j, 4, jitted=jc)
    assert _fragment(jc).windows_switch.cell_contents is False       # (a column window is strided)


def test_bounds_that_stay_put_and_lengths_that_keep_growing_leave_the_caller_as_it_was():
    js = jit(stencil)
    u = RNG.standard_normal(64)
    for c in (0.1, 0.2, 0.3, 0.4):
        assert_same_as_numpy(stencil, u, 64, c, jitted=js)
    assert _fragment(js).windows_switch.cell_contents is False
    jp = jit(prefix)
    a = RNG.standard_normal(500)
    for k in range(100, 120):
        assert_same_as_numpy(prefix, a, k, jitted=jp)
    assert _fragment(jp).windows_switch.cell_contents is False


def test_blocks_updating_arrays_in_place_and_unbound_names_keep_pythons_order():
    jf = jit(window_updated)
    for lo in range(8):
        assert_same_as_numpy(window_updated, RNG.standard_normal(50), lo, lo + 10, jitted=jf)
    assert not any(f.block.views for f in jf.fragments)
    ju = jit(window_maybe_unbound)
    a = RNG.standard_normal(50)
    for flag in (True, True, False, True, False):
        assert_same_as_numpy(window_maybe_unbound, a, flag, 5, jitted=ju)


def test_show_prints_the_windows_the_caller_takes():
    jf = jit(window_energy)
    jf(RNG.standard_normal(100), 3, 10)
    out = io.StringIO()
    jf.show(file=out)
    assert "a[lo:lo + w]" in out.getvalue() and "__astjit_windows_0" in out.getvalue()


@pytest.mark.parametrize("fn", [window_after_rebinding, window_after_shifted_bounds])
def test_a_bound_rebound_earlier_in_the_block_is_read_at_its_new_value(fn, kernels_measure_faster):
    jf = jit(fn)
    a = np.arange(100.0)
    for lo in range(1, 40, 2):
        assert_same_as_numpy(fn, a, lo, lo + 4 if fn is window_after_shifted_bounds else 4, jitted=jf)


def test_a_base_rebound_earlier_in_the_block_is_the_array_read(kernels_measure_faster):
    jf = jit(window_of_rebound_base)
    a, b = np.arange(100.0), -np.arange(100.0)
    for lo in range(1, 40, 2):
        assert_same_as_numpy(window_of_rebound_base, a, b, lo, 4, jitted=jf)


def test_a_bound_unbound_at_the_block_raises_where_python_raises(kernels_measure_faster):
    jf = jit(window_bound_in_one_branch)
    a = RNG.standard_normal(20)
    for hi in range(6, 16):
        assert_same_as_numpy(window_bound_in_one_branch, a, np.ones(5), np.ones(5), True, hi, jitted=jf)
    assert _fragment(jf).windows_switch.cell_contents is True
    for d, c in ((np.ones(4), False), (np.ones(5), False), (np.ones(4), True)):
        assert_same_as_numpy(window_bound_in_one_branch, a, np.ones(5), d, c, 6, jitted=jf)


def test_numpy_int_bounds_computed_with_warn_once_as_python_does(kernels_measure_faster):
    """``lo + w`` of numpy ints may wrap and warn: the caller does not take such a window (it would
    warn, and the block's Python again)."""
    import warnings

    jf = jit(window_of_computed_bounds)
    a = np.arange(300.0)
    for lo in range(0, 30, 3):
        assert_same_as_numpy(window_of_computed_bounds, a, lo, 10, jitted=jf)
    assert _fragment(jf).windows_switch.cell_contents is True
    for fn in (window_of_computed_bounds, jf):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(a, np.uint8(250), np.uint8(10))
        assert [str(w.message) for w in caught] == ["overflow encountered in scalar add"]


def test_windows_of_lengths_met_again_are_not_counted_through_the_fragment(monkeypatch, kernels_measure_faster):
    """A window moved at each call whose length changes every few calls: a length met again runs the
    block's Python inline (counted through the Fragment, each call taking its views too, it ran 0.65x
    plain numpy)."""
    from astjit.runtime import new_extents

    monkeypatch.setattr(new_extents, "sightings_to_repay", lambda same, size, facts: 50)
    jf = jit(window_energy)
    a = RNG.standard_normal(5000)
    for k in range(240):
        w = 100 + 37 * (k // 30)
        assert_same_as_numpy(window_energy, a, int(RNG.integers(0, 1000)), w, jitted=jf)
    frag = _fragment(jf)
    assert frag.windows_switch.cell_contents is True
    counting = [r for r in frag.cache.values() if getattr(r, "__name__", "") == "run"]
    assert not counting
