"""Loops that rotate array names (``u, v = v, u``: loop_rotation): the kernel writes through each name
into the array it holds in Python, and hands back the same objects Python's names hold."""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import heat_swap

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(21)


def wave(u_prev, u, u_next, c2, steps):
    """A three-way rotation with whole-slice statements: the names come back to their arrays every
    third step."""
    for _ in range(steps):
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u, u_next = u, u_next, u_prev
    return u_prev, u, u_next


def jacobi(u, v, iters):
    for _ in range(iters):
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u, v = v, u
    return u, v


def swap_only(u, w, steps):
    for _ in range(steps):
        u, w = w, u
    return u, w


def skipping(a, b, steps):
    """``continue`` before the rotation skips it on that step; ``break`` after it ends the loop."""
    total = 0.0
    for t in range(steps):
        b[0] = a[0] + 1.0
        if t % 3 == 1:
            continue
        a, b = b, a
        total += a[0]
        if total > 40.0:
            break
    return a, b, total


def converge(u, v, tol):
    """A ``while`` whose test reads scalars only; the rotation is the body's last statement."""
    err = tol + 1.0
    sweeps = 0
    while err > tol:
        err = 0.0
        for i in range(1, u.shape[0] - 1):
            v[i] = 0.5 * (u[i - 1] + u[i + 1])
            err = max(err, abs(v[i] - u[i]))
        sweeps += 1
        u, v = v, u
    return u, sweeps


def reads_past(u, v, k, steps):
    for _ in range(steps):
        for i in range(u.shape[0]):
            v[i] = u[i] + u[i + k]          # IndexError where i + k leaves the array
        u, v = v, u
    return u


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 7])
def test_a_swap_in_a_scalar_loop_nest(steps):
    check(heat_swap, [(rng.random(n), np.zeros(n), 0.2, steps) for n in (12, 3, 40)], compiled=steps > 0)


def test_nans_infs_and_signed_zeros_through_a_swap():
    """``inf - inf`` makes NaNs, which then meet NaNs of the other sign, whose sign is not specified
    (docs/semantics.md): NaNs compare by position, every other value bit for bit."""
    special = np.array([0.0, -0.0, np.nan, 1.0, np.inf, 2.0, -np.inf, -0.0, 3.0, -0.0])
    jitted = jit(heat_swap)
    for steps in (1, 2, 3, 6):
        compiled = jitted(special.copy(), -special, 0.5, steps)
        plain = heat_swap(special.copy(), -special, 0.5, steps)
        assert np.array_equal(np.isnan(compiled), np.isnan(plain))
        assert np.array_equal(compiled[~np.isnan(plain)].view(np.int64), plain[~np.isnan(plain)].view(np.int64))
    assert {e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries} == {"tvm"}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_three_way_rotation_and_a_2d_swap_of_slices(dtype):
    for steps in (0, 1, 2, 4, 9):
        x = np.sin(np.linspace(0, 3, 30)).astype(dtype)
        check(wave, [(x.copy(), x.copy(), np.zeros(30, dtype), 0.1, steps)], compiled=steps > 0)
        u = rng.random((9, 7)).astype(dtype)
        check(jacobi, [(u, u.copy(), steps), (u[:4].copy(), u[:4].copy(), steps)], compiled=steps > 0)


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 5])
def test_the_names_hand_back_the_objects_python_names_hold(steps):
    jitted = jit(wave)
    arrays = [np.linspace(0, 1, 8), np.linspace(1, 2, 8), np.zeros(8)]
    expected_arrays = [a.copy() for a in arrays]
    got = jitted(*arrays, 0.1, steps)
    expected = wave(*expected_arrays, 0.1, steps)
    for g, e in zip(got, expected):
        held = next(k for k, a in enumerate(expected_arrays) if a is e)
        assert g is arrays[held]                 # the same argument, not a copy
        assert np.array_equal(g, e)
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]


def test_continue_before_the_rotation_and_break_after_it():
    check(swap_only, [(np.arange(5.0), np.ones(5), n) for n in (31, 2, 1)])
    check(skipping, [(np.array([1.0, 2.0]), np.array([5.0, 6.0]), n) for n in (0, 1, 2, 5, 30)])


def test_a_while_loop_that_rotates_until_it_converges():
    x = np.linspace(0, 1, 9) ** 2
    check(converge, [(x.copy(), x.copy(), 1e-3), (x.copy(), x.copy(), 10.0), (x[:3].copy(), x[:3].copy(), 1e-9)])


def test_an_index_error_after_some_rotations_leaves_the_arrays_as_python_does():
    check(reads_past, [(rng.random(6), np.zeros(6), 1, 3), (rng.random(6), np.zeros(6), 0, 3),
                       (rng.random(5), np.zeros(5), -2, 4)])


def test_arrays_of_other_shapes_or_sharing_memory_run_the_loop_as_python():
    jitted = jit(heat_swap)
    for u, v in [(rng.random(8), np.zeros(9)), (rng.random(8), np.zeros((8,)))]:
        expected = heat_swap(u.copy(), v.copy(), 0.2, 3)
        assert np.array_equal(jitted(u.copy(), v.copy(), 0.2, 3), expected)
    base = rng.random(12)
    expected = heat_swap(base.copy()[:8], base.copy()[4:], 0.2, 3)   # (copies: no overlap)
    b = base.copy()
    got = jitted(b[:8], b[4:], 0.2, 3)
    b2 = base.copy()
    assert np.array_equal(got, heat_swap(b2[:8], b2[4:], 0.2, 3))
    assert np.array_equal(b, b2)
    assert expected.shape == got.shape


def rotate_in_branch(u, v, steps):
    for t in range(steps):
        v[0] = u[0] + 1.0
        if t % 2:
            u, v = v, u
    return u


def rotate_mixed_types(u, v, steps):
    for _ in range(steps):
        v[0] = u[0] + 1
        u, v = v, u
    return u


def rotate_and_rebind(u, v, steps):
    for _ in range(steps):
        v[0] = u[0] + 1.0
        u, v = v, u
        v = u
    return u


@pytest.mark.parametrize("loop, args, reason", [
    (rotate_in_branch, (np.zeros(3), np.zeros(3), 4), "written in place and rebound"),
    (rotate_mixed_types, (np.zeros(3), np.zeros(3, np.int64), 4), "storing a numpy.float64 into an array of int64"),
    (rotate_and_rebind, (np.zeros(3), np.zeros(3), 4), "rebound"),
])
def test_rotations_the_kernel_cannot_follow_keep_the_loop_in_python(loop, args, reason):
    jitted = check(loop, [args, tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)],
                   compiled=False)
    assert reason in str(jitted.explain()), str(jitted.explain())
