"""Calls of the user's own functions inside compiled loops (frontend/inline): their bodies run in the
loop kernel, with Python's results, types, errors and effects."""

import math
import types

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops, run_both, same  # noqa: F401 - a fixture
from loop_programs import mandelbrot, rk4

from astjit import explain, jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(11)
SCALE = 3.0


def sq(x):
    return x * x


def dist(x1, y1, x2, y2):
    """Nested calls, locals and a math function."""
    dx = x2 - x1
    dy = y2 - y1
    return math.sqrt(sq(dx) + sq(dy))


def clip01(v):
    if v < 0:
        return 0                          # an int on this path, the value's own type on the others
    elif v > 1:
        return 1.0
    return v


def scaled(v):
    return v * SCALE                      # a global read at each call


def at(a, i):
    return a[i]                           # an array parameter, indexed: IndexError raised here


def bump(a, i, by):
    a[i] += by                            # writes through an array parameter
    return a[i]


def squares_plus_one(a, out):
    for i in range(len(a)):
        out[i] = sq(a[i]) + 1.0
    return out


def pairwise_total(x, y):
    n = len(x)
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            total += dist(x[i], y[i], x[j], y[j])
    return total


def mixed_helpers(a, k):
    s = 0.0
    for i in range(len(a)):
        s += clip01(a[i]) + scaled(a[i]) + at(a, len(a) - 1 - i)
        bump(a, i, k)
    return s


def reads_past_the_end(a, shift):
    s = 0.0
    for i in range(len(a)):
        s += at(a, i + shift)
        a[i] = s
    return s


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_user_functions_run_inside_the_loop_kernel(dtype):
    values = [(rng.normal(0.5, 1, n) * (3 if dtype == "int32" else 1)).astype(dtype) for n in (6, 0, 1, 17)]
    check(squares_plus_one, [(a, np.zeros(len(a))) for a in values])
    check(pairwise_total, [(a, a[::-1].copy()) for a in values])
    check(mixed_helpers, [(a, k) for a in values for k in (1, 0.5, np.float32(2))],
          compiled=dtype != "int32")       # an int32 array += 0.5 stays Python: it raises (casting)


def test_an_error_inside_a_called_function_is_raised_at_its_line_with_the_same_effects():
    jitted = check(reads_past_the_end, [(rng.random(n), s) for n, s in ((5, 0), (5, 2), (4, -9), (3, 1))])
    a = np.arange(4.0)
    with pytest.raises(IndexError) as info:
        jitted(a, 1)
    frame = info.traceback[-1]
    assert str(frame.path) == __file__ and frame.lineno + 1 == at.__code__.co_firstlineno + 1
    assert list(a) == [1.0, 3.0, 6.0, 3.0]            # the writes before the failing read happened
    # the call's own line comes before the callee's, as in plain Python's traceback
    call_line = reads_past_the_end.__code__.co_firstlineno + 3
    caller = info.traceback[-2]
    assert str(caller.path) == __file__ and caller.lineno + 1 == call_line and caller.name == "reads_past_the_end"


def test_a_rebound_or_redefined_function_is_called_as_it_is_now():
    global sq
    jitted = jit(squares_plus_one)
    a = rng.random(5)
    before = sq
    try:
        assert np.array_equal(jitted(a, np.zeros(5)), squares_plus_one(a, np.zeros(5)))
        sq = lambda x: x + 100.0             # noqa: E731 - rebinding the name
        assert np.array_equal(jitted(a, np.zeros(5)), a + 101.0)
        sq = before
        assert np.array_equal(jitted(a, np.zeros(5)), a * a + 1.0)
        code = sq.__code__
        sq.__code__ = (lambda x: x - 1.0).__code__      # the same object, another body
        assert np.array_equal(jitted(a, np.zeros(5)), a)
        sq.__code__ = code
        assert np.array_equal(jitted(a, np.zeros(5)), a * a + 1.0)
    finally:
        sq = before


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


def no_return(x):
    x + 1


def scale_by(x, k=2.0):
    return x * k


def looped(x):
    for _ in range(2):
        x = x * 2
    return x


def with_closure(y):
    def inner(x):
        return x + y
    return inner


closure = with_closure(2.0)
other_module = types.ModuleType("other")
exec("def triple(x):\n    return 3 * x\n", other_module.__dict__)
triple = other_module.triple


def recursive_loop(a, out):
    for i in range(len(a)):
        out[i] = fact(a[i])
    return out


def no_return_loop(a, out):
    for i in range(len(a)):
        out[i] = no_return(a[i]) is None
    return out


def keyword_loop(a, out):
    for i in range(len(a)):
        out[i] = scale_by(a[i], **{"k": 3.0})
    return out


def looped_loop(a, out):
    for i in range(len(a)):
        out[i] = looped(a[i])
    return out


def closure_loop(a, out):
    for i in range(len(a)):
        out[i] = closure(a[i])
    return out


def other_module_loop(a, out):
    for i in range(len(a)):
        out[i] = triple(a[i])
    return out


@pytest.mark.parametrize("loop, reason", [
    (recursive_loop, "nested more than 4 deep (or recursive)"),
    (no_return_loop, "may end without 'return value'"),
    (keyword_loop, "unpacks *args or **kwargs"),
    (closure_loop, "is a closure"),
    (other_module_loop, "defined in another module"),
])
def test_calls_that_cannot_be_inlined_keep_the_loop_in_python_and_say_why(loop, reason):
    calls_ = [(np.arange(n, dtype="int64" if loop is recursive_loop else "float64"), np.zeros(n)) for n in (4, 0, 6)]
    jitted = check(loop, calls_, compiled=False)
    assert reason in str(jitted.explain()), str(jitted.explain())


def clamp_into(out, i, v, lo):
    """A procedure: ends with a bare return, ``return None``, or by falling off its end."""
    if v < lo:
        out[i] = lo
        return
    out[i] = v
    if v > 0.9:
        return None
    out[i] = v * 2


def clamp_loop(x, out):
    for i in range(len(x)):
        clamp_into(out, i, x[i], 0.25)
    return out


def spread(out, i, v):
    for d in (-1, 0, 1):
        out[i + d] += v                 # past the ends: IndexError in the callee, the stores before it kept


def spread_loop(x, out):
    for i in range(len(x)):
        spread(out, i, x[i])
    return out


def bump_and_give(out, i):
    out[i] += 1
    return i * 2                        # its value unused by the caller


def bump_twice(out, i):
    bump_and_give(out, i)
    bump_and_give(out, i + 1)


def pairs_loop(out):
    for i in range(0, len(out) - 1, 2):
        bump_twice(out, i)
    return out


def count_into(c, v):
    if v != v:
        raise ValueError(f"nan at count {c[0]}")
    c[0] += 1


def count_loop(x, c):
    for i in range(len(x)):
        count_into(c, x[i])
    return c


def test_a_call_whose_value_is_unused_may_end_without_returning_one():
    check(clamp_loop, [(rng.random(50), np.zeros(50)), (rng.random(1), np.zeros(1)),
                       (np.array([0.1, np.nan, -0.0, 0.95, 0.5]), np.zeros(5)),
                       (rng.random(9).astype(np.float32), np.zeros(9, np.float32))])
    check(spread_loop, [(rng.random(5), np.zeros(5)), (rng.random(1), np.zeros(1)), (rng.random(3), np.zeros(4))])
    check(pairs_loop, [(np.zeros(10),), (np.zeros(7, np.int32),), (np.zeros(2),)])
    check(count_loop, [(rng.random(10), np.zeros(1, np.int64)), (np.array([1.0, np.nan, 2.0]), np.zeros(1))])


def no_value_read(a, i):
    if a[i] > 0.5:
        return a[i]


def no_value_read_loop(a, out):
    for i in range(len(a)):
        out[i] = no_value_read(a, i) is None
    return out


def test_a_procedure_whose_value_is_read_keeps_the_loop_in_python():
    jitted = check(no_value_read_loop, [(rng.random(6), np.zeros(6)), (rng.random(3), np.zeros(3))], compiled=False)
    assert "may end without 'return value'" in str(jitted.explain())


@jit
def jitted_sq(x):
    return x * x


def jitted_callee_loop(a, out):
    for i in range(len(a)):
        out[i] = jitted_sq(a[i]) - 1.0
    return out


def argument_order(a, b, i, j):
    s = 0.0
    for _ in range(2):
        s += dist(a[i], b[j], a[j], b[i])       # each argument evaluated before the call, in order
    return s


def test_a_jitted_callee_and_argument_order():
    check(jitted_callee_loop, [(rng.random(n), np.zeros(n)) for n in (3, 0, 8)])
    a, b = rng.random(4), rng.random(3)
    check(argument_order, [(a, b, 0, 2), (a, b, 3, 1), (a, b, 5, 7), (a, b, -1, -3), (a, b, 1, -9)])



def maybe_unbound(x):
    if x > 0.5:
        y = x * 2
    return y                                  # UnboundLocalError where x <= 0.5


def maybe_unbound_loop(a, out):
    for i in range(len(a)):
        out[i] = maybe_unbound(a[i])
    return out


def bound_on_every_path(x):
    if x > 0.5:
        y = x * 2
    elif x < 0.25:
        return -1.0
    else:
        y = x
    y += 1.0
    return y


def bound_loop(a, out):
    for i in range(len(a)):
        out[i] = bound_on_every_path(a[i])
    return out


def test_a_callee_that_may_read_an_unbound_local_stays_python():
    """Python raises UnboundLocalError; a kernel variable would keep the last call's value."""
    jitted = check(maybe_unbound_loop, [(np.array([0.9, 0.7]), np.zeros(2)), (np.array([0.9, 0.1]), np.zeros(2))],
                   compiled=False)
    assert "may read 'y' before assigning it" in str(jitted.explain())
    check(bound_loop, [(rng.random(n), np.zeros(n)) for n in (9, 0, 3)])


# callees with loops of their own (loop_programs.mandelbrot calls escape): a return inside them ends every
# loop of the callee

def first_pair_sum(m, r, target):
    for i in range(m.shape[1]):
        for j in range(i + 1, m.shape[1]):
            if m[r, i] + m[r, j] == target:
                return i * 1000 + j
    return -1


def pair_sums(m, out):
    for r in range(m.shape[0]):
        out[r] = first_pair_sum(m, r, 7)
    return out


def norm(v):
    s = 0.0
    for x in v:
        s += x * x
    return math.sqrt(s)


def capped_total(v, cap):
    t = 0.0
    k = 0
    while k < len(v):
        t += v[k]
        if t > cap:
            break
        k += 1
    return t


def call_loops(a, b, out):
    for i in range(len(out)):
        out[i] = norm(a) * i + capped_total(b, i) + looped(a[i % len(a)])
    return out


def test_callees_with_loops_compile():
    check(mandelbrot, [(np.zeros((h, w), np.int64), it) for h, w, it in ((6, 9, 20), (0, 3, 5), (12, 7, 60))])
    m = rng.integers(0, 8, (5, 12))
    check(pair_sums, [(m, np.zeros(5, np.int64)), (m[:, :3].copy(), np.zeros(5, np.int64)),
                      (np.zeros((2, 0), np.int64), np.zeros(2, np.int64))])
    check(call_loops, [(rng.random(n), rng.random(n), np.zeros(k)) for n, k in ((4, 6), (1, 3), (30, 2))])
    check(looped_loop, [(np.arange(n, dtype="float64"), np.zeros(n)) for n in (4, 0, 6)])


def test_a_chain_of_calls_each_reading_the_last_compiles():
    check(rk4, [(1.0, 0.0, 10.0, 100), (-2.5, 1.0, 3.0, 7), (0.0, 0.0, 1.0, 0), (np.float64(1.5), 0.0, 2.0, 9),
                (-0.0, 0.0, 1.0, 3), (math.nan, 0.0, 1.0, 4), (math.inf, 0.0, 1.0, 2)])


def maybe_unbound_in_loop(v):
    t = 0.0
    for x in v:
        if x > 0.5:
            last = x
        t = last
    return t


def unbound_loop(a, out):
    for i in range(len(out)):
        out[i] = maybe_unbound_in_loop(a)
    return out


def test_a_callee_reading_a_name_its_loop_may_not_have_assigned_stays_python():
    jitted = check(unbound_loop, [(np.array([0.9, 0.1]), np.zeros(2)), (np.array([0.1, 0.9]), np.zeros(2))],
                   compiled=False)
    assert "maybe_unbound_in_loop may read 'last' before assigning it" in str(jitted.explain())


def floor_div(x, y):
    return x // y


def divides_into(n, d, out):
    for i in range(n):
        out[i] = floor_div(i, d - i)
    return out


def three_ahead(a, i):
    return a[i + 3]


def reads_ahead(a, out):
    for i in range(len(a)):
        out[i] = three_ahead(a, i) + 1.0
    return out


def test_a_callee_that_raises_stops_the_store_of_its_value():
    """Python raises before the assignment: the element keeps its old value (it was stored anyway)."""
    check(divides_into, [(30, 7, np.zeros(30, np.int64)), (5, 9, np.zeros(5, np.int64))])
    check(reads_ahead, [(np.arange(30.0), np.zeros(30)), (np.arange(3.0), np.zeros(3))])


def nested_helpers(a, k):
    def scaled(v):                      # reads the caller's k and offset when called, as a closure does
        return v * k + offset

    def both(v):                        # calls another function defined here
        return scaled(v) - sq(v)

    offset = 1.0
    out = 0.0
    for i in range(len(a)):
        if i % 3 == 0:
            offset = a[i] * 0.5         # the closure sees the value assigned in the loop
        out += both(a[i])
    return out, offset


def test_functions_defined_in_the_caller_are_inlined_with_closure_reads():
    a = rng.standard_normal(30)
    check(nested_helpers, [(a, 2.0), (a[:4], -1.5), (a[:0], 3.0), (a.astype(np.float32), 2.0),
                           (np.arange(7), 2), (np.array([np.nan, -0.0, np.inf]), 0.0)])


def defined_after_the_loop(a):
    s = 0.0
    for i in range(len(a)):
        s += late(a[i])                 # noqa: F821 - UnboundLocalError, as Python
    def late(v):                        # noqa: E306
        return v
    return s


def defined_twice(a, flag):
    def f(v):
        return v + 1.0
    if flag:
        def f(v):                       # noqa: F811 - which f runs depends on the call
            return v * 10.0
    s = 0.0
    for i in range(len(a)):
        s += f(a[i])
    return s


def with_default(a):
    def f(v, w=2.0):
        return v * w
    s = 0.0
    for i in range(len(a)):
        s += f(a[i])
    return s


def test_functions_defined_in_the_caller_that_may_change_run_as_python():
    a = rng.standard_normal(8)
    check(defined_after_the_loop, [(a,), (a[:0],)], compiled=False)
    for fn, calls in ((defined_twice, [(a, True), (a, False)]), (with_default, [(a,)])):
        jitted = check(fn, calls, compiled=False)
        assert "a call of f (only scalar functions run inside a compiled loop) keeps this loop in Python" in str(
            jitted.explain())


def lorenz_rhs(x, y, z):
    return 10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z


def euler_lorenz(x, y, z, h, n):
    """A helper returning a tuple of values, unpacked at the call: the ODE right-hand side."""
    for _ in range(n):
        dx, dy, dz = lorenz_rhs(x, y, z)
        x += h * dx
        y += h * dy
        z += h * dz
    return x, y, z


def split(v, lo):
    if v < lo:
        return 0, v - lo                   # an int here, a float below; the same arity on each path
    return v // 1.0, v % 1.0


def split_all(a, lo, out):
    count = 0
    for i in range(len(a)):
        whole, frac = split(a[i], lo)
        out[i] = whole + frac
        if whole > 0:
            count += 1
    return count


def ratio_pair(p, q):
    return p / q, q / p


def ratios(a, b, out):
    for i in range(len(a)):
        r, s = ratio_pair(a[i], b[i])
        out[i] = r - s
    return out


def wrong_arity(v):
    if v > 0:
        return v, v
    return v, v, v


def wrong_arity_loop(a, out):
    for i in range(len(a)):
        p, q = wrong_arity(a[i])
        out[i] = p + q
    return out


def test_a_helper_returning_a_tuple_is_unpacked_in_the_kernel():
    """``dx, dy, dz = rhs(x, y, z)``: each item in its own local, with its own type on each path;
    errors inside the helper are raised at its line with the effects Python leaves."""
    check(euler_lorenz, [(1.0, 1.0, 1.0, 1e-3, n) for n in (0, 1, 50, 2000)] + [(0.5, -2.0, 20.0, 1e-2, 300)])
    check(split_all, [(rng.random(n) * 4 - 2, 0.5, np.zeros(n)) for n in (0, 5, 40)]
          + [(np.array([1.5, np.nan, -np.inf, 3.0]), 0.0, np.zeros(4))])
    # ZeroDivisionError of Python floats at the helper's line, after the earlier elements were stored
    check(ratios, [([1.0, 2.0, 3.0], [2.0, 0.5, 4.0], np.zeros(3)), ([1.0, 2.0, 0.0], [2.0, 0.0, 1.0], np.zeros(3))],
          compiled=False)
    check(ratios, [(rng.random(n) + 0.1, rng.random(n) + 0.1, np.zeros(n)) for n in (1, 30)]
          + [(np.array([1.0, 0.0, 2.0]), np.array([2.0, 3.0, 0.0]), np.zeros(3))])


def test_a_helper_returning_tuples_of_other_lengths_stays_python():
    jitted = check(wrong_arity_loop, [(rng.random(n) - 0.5, np.zeros(n)) for n in (0, 6)], compiled=False)
    assert "returns something other than a tuple of 2 values" in str(jitted.explain()), str(jitted.explain())


def affine(x, scale=2.0, shift=0):
    return x * scale + shift


def with_keywords(a, out):
    for i in range(len(a)):
        out[i] = affine(a[i]) + affine(a[i], shift=1) + affine(a[i], 0.5, shift=-3) + affine(x=a[i], scale=3)
    return out


def keywords_out_of_order(a, out):
    for i in range(len(a)):
        out[i] = affine(shift=a[i], x=a[len(a) - 1 - i])
    return out


def twice_given(a, out):
    for i in range(len(a)):
        out[i] = affine(a[i], x=2.0)
    return out


def test_calls_with_keywords_and_default_values():
    """Keyword arguments go to their parameters and defaults (numbers) are the function's own values
    at each call: rebinding ``__defaults__`` transforms the caller again."""
    a = np.array([0.1, -0.0, np.nan, 3.0])
    jitted = check(with_keywords, [(a, np.zeros(4)), (a.astype(np.float32), np.zeros(4, np.float32)),
                                   (np.arange(3), np.zeros(3))])
    saved = affine.__defaults__
    try:
        affine.__defaults__ = (10.0, 1)
        assert np.array_equal(jitted(a, np.zeros(4)), with_keywords(a, np.zeros(4)), equal_nan=True)
    finally:
        affine.__defaults__ = saved
    # keyword arguments written out of order evaluate in the written order: an index error among them
    # stays Python's; a keyword given twice raises Python's TypeError
    check(keywords_out_of_order, [(a, np.zeros(4))], compiled=False)
    check(twice_given, [(a, np.zeros(4))], compiled=False)


def scaled_by_a_rebound_closure(x, out, k):
    def sc(v):                          # reads the caller's k, which the loop rebinds
        return v * k

    for i in range(x.shape[0]):
        out[i] = sc(x[i])
        k = k + 1
    return out, k


def test_a_local_function_sees_what_the_loop_assigns_also_where_the_kernel_declines():
    """Where the kernel declined (a float stored into an int64 array, arrays sharing memory), the loop
    ran as a function of its own, rebinding its own copy of ``k``: ``sc`` read the cell, 2.5 at every
    position. The loop now runs as written in the function itself there."""
    a = rng.standard_normal(300)
    shared = a.copy()
    jf = check(scaled_by_a_rebound_closure, [(a, np.zeros(300), 2.0), (a[:7], np.zeros(7), -1.5)])
    for args in [(np.arange(300), np.zeros(300, np.int64), 2.5), (shared, shared, 2.0), (a, np.zeros(300), 0.5)]:
        (k1, r1, a1), (k2, r2, a2) = run_both(scaled_by_a_rebound_closure, jf, args)
        assert k1 == k2 == "ok" and same(r1, r2) and all(same(x, y) for x, y in zip(a1, a2))


class Springs:
    k = 1.5


def spring_force(x):
    return -Springs.k * x + math.pi * 0.0


def spring_steps(x, v, steps):
    for s in range(steps):
        for i in range(len(x)):
            v[i] += 0.01 * spring_force(x[i])
            x[i] += 0.01 * v[i]
    return x


def test_attributes_of_globals_read_in_a_called_function_are_read_before_the_loop():
    """``Springs.k`` and ``math.pi`` in an inlined function kept its caller's loop in Python; they are
    now read right before the loop, at each call, as in the loop's own statements."""
    calls = [(rng.random(5), np.zeros(5), 3), (rng.random(2), np.zeros(2), 1), (rng.random(7), np.zeros(7), 0)]
    jitted = check(spring_steps, calls)
    Springs.k = -0.5                     # (a new value: read at the next call)
    try:
        for args in calls:
            (k1, r1, a1), (k2, r2, a2) = run_both(spring_steps, jitted, args)
            assert k1 == k2 == "ok" and same(r1, r2) and all(same(x, y) for x, y in zip(a1, a2))
        Springs.k = 2                    # (an int now: its own specialization)
        for args in calls:
            (k1, r1, a1), (k2, r2, a2) = run_both(spring_steps, jitted, args)
            assert k1 == k2 == "ok" and same(r1, r2) and all(same(x, y) for x, y in zip(a1, a2))
    finally:
        Springs.k = 1.5


def scaled_by(x, settings):
    return settings.k * x


def steps_with_settings(x, settings):
    for s in range(2):
        for i in range(len(x)):
            x[i] = scaled_by(x[i], settings)
    return x


def test_an_attribute_of_a_parameter_read_in_a_called_function_is_explained_once():
    """Each loop of the nest meets the inner line: explain() listed its reason once per loop."""
    settings = types.SimpleNamespace(k=0.5)
    jitted = check(steps_with_settings, [(rng.random(5), settings), (rng.random(2), settings)], compiled=False)
    reasons = [r.message for r in explain(jitted) if "the attribute .k" in r.message]
    assert len(reasons) == 1 and "pass its value in" in reasons[0] and "scaled_by" in reasons[0]


def reads_a_shadowed_global(x, Springs):
    for i in range(len(x)):
        x[i] = spring_force(x[i])
    return x


def test_a_called_functions_global_that_the_caller_shadows_keeps_the_loop_in_python():
    shadow = types.SimpleNamespace(k=100.0)
    jitted = check(reads_a_shadowed_global, [(rng.random(4), shadow), (rng.random(3), shadow)], compiled=False)
    assert any("a local of this function too" in r.message for r in explain(jitted))
