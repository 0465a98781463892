"""Tuples of numbers held in names inside compiled loops (backends/tvm/loop_tuples): made, indexed by
constants, unpacked, passed to and returned from inlined functions, carried across iterations and
handed back, each item with Python's own type."""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(46)


def lorenz(s, sigma, rho, beta):
    x, y, z = s
    return (sigma * (y - x), x * (rho - z) - y, x * y - beta * z)


def rk4(s0, dt, n, out):
    """The classic fourth-order Runge-Kutta step of a tuple state."""
    s = s0
    for i in range(n):
        k1 = lorenz(s, 10.0, 28.0, 8 / 3)
        k2 = lorenz((s[0] + dt / 2 * k1[0], s[1] + dt / 2 * k1[1], s[2] + dt / 2 * k1[2]), 10.0, 28.0, 8 / 3)
        k3 = lorenz((s[0] + dt / 2 * k2[0], s[1] + dt / 2 * k2[1], s[2] + dt / 2 * k2[2]), 10.0, 28.0, 8 / 3)
        k4 = lorenz((s[0] + dt * k3[0], s[1] + dt * k3[1], s[2] + dt * k3[2]), 10.0, 28.0, 8 / 3)
        s = (s[0] + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
             s[1] + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]),
             s[2] + dt / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2]))
        out[i, 0], out[i, 1], out[i, 2] = s
    return s


def rhs3(x, y, z):
    return (10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z)


def euler_indexed(x0, n):
    """A helper's tuple kept in a name and read by index."""
    x, y, z = x0, 1.0, 1.0
    for _ in range(n):
        d = rhs3(x, y, z)
        x = x + 0.001 * d[0]
        y = y + 0.001 * d[1]
        z = z + 0.001 * d[-1]
    return x, y, z


def euler_state(x0, n):
    """A tuple made before the loop, carried across iterations and returned."""
    s = (x0, 1.0, 1.0)
    for _ in range(n):
        dx, dy, dz = rhs3(s[0], s[1], s[2])
        s = (s[0] + 0.001 * dx, s[1] + 0.001 * dy, s[2] + 0.001 * dz)
    return s


def ends(t):
    return t[0] + t[-1]


def rotate(s, n):
    """A live-in tuple of any length passed whole to a helper: each length its own kernel."""
    total = 0
    for _ in range(n):
        total += len(s) * ends(s)
    return total


def stepped(p, n):
    """Items of several types: a Python int, a numpy float64, a Python float."""
    for i in range(n):
        a, b, c = p
        p = (a + i, b * 0.5, c - a)
        if i % 2:
            p = (p[0], p[1], p[2] * 2)
    return p


def mixed_state(n, scale):
    s = (0, np.float64(1.5), 2.0)
    for i in range(n):
        s = (s[0] + i, s[1] * scale, s[2] + scale)
    return s


def last_made(n):
    """A tuple only the loop binds, read after it: unbound after an empty range."""
    for i in range(n):
        t = (i, i * 0.5)
    return t


def swapped(a, b):
    return b, a


def through_helpers(v, n):
    """A tuple returned by a helper that returns another helper's tuple, and a tuple name."""
    def flip(t):
        return swapped(t[0], t[1])

    acc = 0.0
    for i in range(n):
        v = flip(v)
        w = v
        acc += w[0] - 2 * w[1] + len(w)
    return acc, v


def stored(s, out):
    for i in range(out.shape[0]):
        out[i, 0], out[i, 1] = s
        s = (s[1], s[0] + out[i, 1])
    return s


def test_rk4_of_the_lorenz_system():
    check(rk4, [(s0, dt, n, np.zeros((max(n, 1), 3))) for n, s0, dt in [
        (50, (1.0, 1.0, 1.0), 0.01), (7, (0.5, -1.0, 20.0), 0.002), (0, (1.0, 2.0, 3.0), 0.01),
        (200, tuple(rng.random(3)), 0.005)]])


def test_a_tuple_from_a_helper_read_by_constant_indices():
    check(euler_indexed, [(1.0, 200), (0.5, 3), (2.0, 0), (np.float64(1.0), 50)])


def test_a_tuple_carried_across_iterations_and_returned():
    check(euler_state, [(1.0, 200), (0.5, 3), (2.0, 0), (3, 10)])


def test_items_keep_their_own_types():
    check(stepped, [((1, np.float64(2.5), 3.0), 5), ((1, np.float64(2.5), 3.0), 0), ((2, 2.0, 0.5), 4)])
    check(mixed_state, [(5, 0.5), (0, 2.0), (7, np.float64(1.25)), (3, 2)])


def test_live_in_tuples_of_several_lengths():
    check(rotate, [((1.0, 2.0, 3.0), 4), ((1, 2), 3), ((0.5,), 2), (tuple(range(8)), 1), ((2.0, 1.0, 3.0), 0)])


def test_a_tuple_bound_only_in_the_loop_is_unbound_after_an_empty_one():
    check(last_made, [(4,), (1,), (0,)])


def test_tuples_through_nested_helpers():
    check(through_helpers, [((1.0, 2.0), 5), ((3.0, 1.0), 0)])
    # (items of two types swapped at each step: a variable's type changes with the step, the loop's
    # Python runs, with a key of its own and the reason in explain)
    jitted = check(through_helpers, [((1, 2.5), 4), ((3.0, np.float64(1.0)), 0)], compiled=False)
    assert "depending on the types the variables hold" in str(jitted.explain())


def found(s, n):
    """A ``return`` out of the loop of a tuple's items."""
    for i in range(n):
        s = (s[1], s[0] + i)
        if s[0] > 10:
            return s[0], s[-1]
    return None


def test_a_return_of_items_out_of_the_loop():
    check(found, [((1, 2), 10), ((1, 2), 2), ((0.5, 1.5), 8)])


def test_a_tuple_unpacked_into_elements():
    check(stored, [((1.0, 2.0), np.zeros((4, 2))), ((1, 2), np.zeros((3, 2), np.int64)),
                   ((0.5, 0.25), np.zeros((0, 2)))])


def test_new_item_types_run_the_loops_python():
    """The kernel's key holds a tuple's length; items of other types run the loop as Python."""
    jitted = jit(euler_state)
    assert jitted(1.0, 10) == euler_state(1.0, 10)
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]
    for args in [(np.float32(1.0), 10), (1, 10)]:
        got, want = jitted(*args), euler_state(*args)
        assert got == want and list(map(type, got)) == list(map(type, want))


def varying_length(n):
    s = (1.0,)
    for i in range(n):
        if i > 2:
            s = (1.0, 2.0)
    return s


def computed_index(n):
    s = (1.0, 2.0, 3.0)
    t = 0.0
    for i in range(n):
        t += s[i % 3]
        s = (s[1], s[2], s[0])
    return t


def concatenated(n):
    s, t = (1.0, 2.0), (0.0,)
    for _ in range(n):
        t = s + t
    return t


def arrays_in_a_tuple(x, n):
    for _ in range(n):
        d = (x * 2.0, 1.0)
        x = d[0] + d[1]
    return x


def out_of_range(s, n):
    t = 0.0
    for _ in range(n):
        t += s[3]
    return t


def unpacked_short(s, n):
    t = 0.0
    for _ in range(n):
        a, b = s
        t += a + b
    return t


def unpacked_array(v, n):
    t = 0.0
    for i in range(n):
        a, b = v
        t += a * b + i
    return t


@pytest.mark.parametrize("fn, args, reason", [
    (unpacked_array, (np.array([1.0, 2.0]), 3), "unpacking 'v', which holds no tuple of numbers here"),
    (varying_length, (5,), "holds a tuple of 1 at one place and of 2 at another"),
    (computed_index, (5,), "indexed by something other than a constant"),
    (concatenated, (3,), "holds a tuple of 1 at one place and another value here"),
    (arrays_in_a_tuple, (np.ones(4), 3), "a tuple of arrays keeps the loop in Python"),
    (out_of_range, ((1.0, 2.0, 3.0), 2), "out of a tuple of 3 (Python raises IndexError)"),
    (unpacked_short, ((1.0, 2.0, 3.0), 2), "unpacking a tuple of 3 into 2 targets"),
])
def test_other_tuples_stay_python_and_say_why(fn, args, reason):
    jitted = check(fn, [args], compiled=False)
    assert reason in str(jitted.explain())
