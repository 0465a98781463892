"""Slices with bounds inside compiled loops (backends/tvm/loop_rows.py), against plain Python:
``u[1:-1] = u[1:-1] + c * (u[:-2] - 2 * u[1:-1] + u[2:])`` time steps, windows ``a[i:i + w]``, steps,
negative bounds and steps, bounds past the ends, numpy's errors."""

import itertools

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import heat, heat2d

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(11)


def heat_inplace(u, steps, alpha):
    for _ in range(steps):
        u[1:-1] += alpha * (u[:-2] - 2 * u[1:-1] + u[2:])
    return u


def shift_right(a, steps):
    for _ in range(steps):
        a[1:] = a[:-1] + 1                       # element by element in place this would smear a[0]
    return a


def windows(a, w, out):
    for i in range(a.shape[0] - w + 1):
        out[i, :] = a[i:i + w] * 2.0
    return out


def sliced(a, out, lo, hi, st):
    for i in range(a.shape[0]):
        out[i, lo:hi:st] = a[i, lo:hi:st] * 2.0 + 1.0
    return out


def reversed_rows(a, lo, hi, st):
    for i in range(a.shape[0]):
        a[i, lo:hi:st] = a[i, hi:lo:-st] - a[i, lo:hi:st]
    return a


def prefix(a):
    for i in range(1, a.shape[0]):
        a[i:] += a[i - 1]
    return a


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_time_steps_on_slices_match_numpy(dtype):
    """Results equal numpy's bit for bit, including where the update reads elements it overwrites."""
    arrays = [rng.normal(0, 1, n).astype(dtype) for n in (0, 1, 2, 3, 17, 200)]
    # IEEE values; NaNs of one sign only (which sign nan + -nan gives is not fixed, even within numpy)
    arrays.append(np.array([np.nan, 1.0, -0.0, 2.0, 0.0, -0.0], dtype))
    arrays.append(np.array([np.inf, 1.0, -0.0, 2.0, -np.inf, 0.0, -0.0], dtype))
    check(heat, [(a, steps, alpha) for a in arrays for steps, alpha in ((0, 0.1), (3, 0.25), (40, np.float32(0.2)))])
    check(heat_inplace, [(a, 5, 0.1) for a in arrays])
    check(shift_right, [(a, 4) for a in arrays])
    check(prefix, [(a,) for a in arrays])
    grids = [rng.normal(0, 1, s).astype(dtype) for s in ((2, 2), (3, 3), (5, 8), (16, 9))]
    check(heat2d, [(g, steps, 0.2) for g in grids for steps in (1, 7)] + [(grids[2].T.copy(order="F"), 3, 0.1)])


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
def test_windows_follow_the_loop_variable(dtype):
    a = (rng.normal(0, 10, 30)).astype(dtype)
    ok = [(a, w, np.zeros((31 - w, w))) for w in (1, 4, 30)]
    # a window past the end is shorter: numpy's broadcast error, at the user's line, with no effects
    bad = [(a, 4, np.zeros((30, 4))), (a, 31, np.zeros((1, 31)))]
    check(windows, ok + bad)


def test_slice_bounds_and_steps_fit_as_python_fits_them():
    bounds = [None, 0, 2, -3, 7, -20, 20]
    steps = [None, 1, 2, -1, -2, 3, 0]
    calls = [(rng.random((3, 9)), np.zeros((3, 9)), lo, hi, st)
             for lo, hi, st in itertools.product(bounds, bounds, steps)
             if None not in (lo, hi, st)]                     # (None arguments keep a loop in Python)
    check(sliced, calls)
    check(reversed_rows, [(rng.random((2, 8)), lo, hi, st) for lo, hi, st in
                          ((0, 7, 1), (1, 6, 2), (-1, 0, 1), (2, 5, 3), (7, 0, 1))])


def test_new_extents_and_bounds_reuse_the_kernel():
    from astjit import jit

    jitted = jit(heat)
    for n in (5, 50, 500):
        u = rng.random(n)
        want = heat(u.copy(), 3, 0.1)
        assert np.array_equal(jitted(u.copy(), 3, 0.1), want)
    loops = [f for f in jitted.fragments if f.block.kind == "loop"]
    assert len(loops) == 1 and len(loops[0].entries) == 1 and loops[0].entries[0].mode == "tvm"


def none_bound(a, k):
    for i in range(a.shape[0]):
        a[i, :k] = 0.0
    return a


def test_slices_that_stay_python_say_why():
    jitted = check(none_bound, [(rng.random((3, 4)), None), (rng.random((3, 4)), 2)], compiled=False)
    assert "'k' is a NoneType" in str(jitted.explain())


SHIFT = np.zeros(1, np.int64)


def shift_and_one():
    SHIFT[0] += 1
    return 1.0


def moving_target(a):
    SHIFT[0] = 0
    for _ in range(3):
        # the value reads a[k:k + 2], the call moves k, then the target is a[k + 1:k + 3]: the same index
        # text, other elements (numpy reads the value before it writes)
        a[SHIFT[0]:SHIFT[0] + 2] = a[SHIFT[0]:SHIFT[0] + 2] + shift_and_one()
    return a


def test_the_same_index_text_after_an_inlined_call_that_moves_it():
    check(moving_target, [(rng.random(6),), (np.arange(8.0),)])


def test_a_few_steps_on_slices_call_the_kernel(monkeypatch):
    """A statement on slices is several numpy calls: four steps of it are worth a kernel call (a loop of
    at most ASTJIT_TINY_LOOP plain statements runs as written)."""
    from astjit import jit

    monkeypatch.setenv("ASTJIT_TINY_LOOP", "24")
    jitted = jit(heat)
    u = rng.random(50)
    assert np.array_equal(jitted(u.copy(), 4, 0.1), heat(u.copy(), 4, 0.1))
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    assert [e.mode for e in loop.entries] == ["tvm"]
