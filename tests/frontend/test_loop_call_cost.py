"""A loop region runs as written below the price of its kernel's call, priced from its arguments
(frontend/loop_call_cost): more arrays, written arrays and live-out values make a dearer call, so a
loop over a few positions with several arrays runs as Python where a scalar loop of the same work
calls its kernel; the answers are Python's either way."""

import collections

import gast
import numpy as np
import pytest
from loop_checks import check
from loop_programs import horner as tuple_horner
from loop_programs import list_total

from astjit import jit
from astjit.frontend import loop_call_cost as cost
from astjit.frontend.source import parse_function

rng = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def auto_threshold(monkeypatch):
    monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)


def scalar_sum(n):
    s = 0
    for i in range(n):
        s += i * 3 + 1
    return s


def run_lengths(a, vals, counts, n):
    k = 0
    cur = a[0]
    cnt = 1
    for i in range(1, n):
        if a[i] == cur:
            cnt += 1
        else:
            vals[k] = cur
            counts[k] = cnt
            k += 1
            cur = a[i]
            cnt = 1
    return k, cur, cnt


def units(fn):
    """The kernel call's price for the first loop of ``fn`` (its live-ins: the names it reads that the
    function's parameters or earlier statements bind; its live-outs: the values returned)."""
    _, fndef = parse_function(fn)
    loop = next(s for s in fndef.body if isinstance(s, gast.For))
    names = {n.id for n in gast.walk(loop) if isinstance(n, gast.Name)} - {"range", "len", "i"}
    returned = fndef.body[-1].value
    live_out = [n.id for n in gast.walk(returned) if isinstance(n, gast.Name)]
    return cost.kernel_call_units(loop, sorted(names), live_out, {})


def test_the_price_grows_with_arrays_written_arrays_and_reads_of_elements():
    scalar = units(scalar_sum)
    assert scalar == (cost.CALL_NS + 2 * cost.NUMBER_NS + cost.LIVE_OUT_NS) // cost.UNIT_NS   # n, s in; s out
    # 3 arrays, 2 written (2 other arrays each), n, k, cur, cnt passed in, 3 live-out values; elements read
    expected = (cost.CALL_NS + 3 * cost.ARRAY_NS + 4 * cost.OVERLAP_NS + 4 * cost.NUMBER_NS
                + 3 * cost.LIVE_OUT_NS) // cost.ELEMENT_UNIT_NS
    assert units(run_lengths) == expected
    assert units(run_lengths) * cost.ELEMENT_UNIT_NS > scalar * cost.UNIT_NS
    # attributes of objects read before the call (runtime/plain_attribute) add their reads
    _, fndef = parse_function(scalar_sum)
    loop = fndef.body[1]
    with_attributes = cost.kernel_call_units(loop, ["n", "s"], ["s"], {}, ["__astjit_attr_1p_1n", "__astjit_attr_1p_1k"])
    assert with_attributes == (cost.CALL_NS + 2 * cost.NUMBER_NS + cost.LIVE_OUT_NS
                               + 2 * cost.ATTRIBUTE_NS) // cost.UNIT_NS


def test_a_short_loop_over_several_arrays_runs_as_written_and_a_long_one_calls_its_kernel():
    jf = check(run_lengths, [(a, np.zeros(len(a), np.int64), np.zeros(len(a), np.int64), len(a))
                             for a in (np.array([1, 1, 2]), np.array([4, 4, 4, 4]), np.array([7]))], compiled=False)
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    assert region.calls == 0
    for n in (3000, 5, 400):
        a = rng.integers(0, 3, n)
        got, want = (np.zeros(n, np.int64), np.zeros(n, np.int64)), (np.zeros(n, np.int64), np.zeros(n, np.int64))
        assert jf(a, *got, n) == run_lengths(a, *want, n)
        assert all(np.array_equal(x, y) for x, y in zip(got, want))
    assert region.calls == 2 and all(e.mode == "tvm" for e in region.entries)


def test_a_scalar_loop_below_its_price_runs_as_written():
    """``s += i * 3 + 1`` is 4 units a position: up to the price's worth of positions run as written,
    one more calls the kernel; the answers are Python ints either way."""
    jf = jit(scalar_sum)
    assert jf(0) == 0
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    assert region.block.tiny_work == units(scalar_sum)
    most = region.block.tiny_work // 4
    for n in (1, most, most + 1, 10_000, 3):
        got = jf(n)
        assert got == scalar_sum(n) and type(got) is int
    assert region.calls == 2


def newton_steps(x, target, tol, coef):
    it = 0
    while abs(x * x - target) > tol and it < 60:
        fx = 0.0
        for c in coef:                 # a trip's work depends on len(coef)
            fx = fx * x + c
        x = x - (x * x - target) / (2.0 * x)
        it += 1
    return x, it


@pytest.mark.parametrize("coef, tol, kernel", [((1.0, 2.0), 0.5, False), ((1.0, 2.0), 1e-3, False),
                                                ((0.0,) * 400, 1e-12, True)])
def test_a_while_loops_first_trips_are_counted_from_its_trips_work(coef, tol, kernel):
    """Where a trip's work depends on values, as many first trips run as written as twice the
    kernel's price allows (counted before the loop): a Newton iteration of short trips ends as
    Python, one of trips dearer than that runs its kernel from the first trip."""
    jf = jit(newton_steps)
    for x in (1.5, 1.25, 1.4):
        assert jf(x, 2.0, tol, coef) == newton_steps(x, 2.0, tol, coef)
    region = next(f for f in jf.fragments if f.block.kind == "loop" and f.block.is_while)
    assert (region.calls > 0) == kernel


class Settings:
    n = 3
    h = 0.5


def fill(out):
    for i in range(Settings.n):
        out[i] = i * Settings.h
    return out


def test_a_loop_reading_attributes_is_weighed_with_their_values(monkeypatch):
    """The region takes ``Settings.n`` and ``Settings.h`` as arguments; its estimate reads them where
    they stand: a short range runs as written, a long one calls the kernel (an estimate naming the
    region's argument instead raised NameError, and every call went one way)."""
    jf = jit(fill)
    for n in (3, 2, 5000, 4, 800):
        monkeypatch.setattr(Settings, "n", n)
        got, want = jf(np.zeros(n)), fill(np.zeros(n))
        assert np.array_equal(got, want)
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    assert region.calls == 2


def test_names_bound_to_numbers_right_before_the_loop_are_not_tested_for_arrays():
    """``s = 0.0`` just before the loop: the estimate does not test ``s`` for an array on every call
    (about 35 ns each); a name assigned something else later, or by a call, still is."""
    from astjit.frontend.entry_facts import numbers_at_entry

    def preceding():
        s = 0.0
        c, k = -1, True
        t = len(s)
        u = 2
        u = abs(u)
        v = 3.5
        return s, c, k, t, u, v

    _, fndef = parse_function(preceding)
    assert numbers_at_entry(fndef.body[:-1], {"t": ("extent", "s", 0, 0)}) == {"s", "c", "k", "t", "v"}

    def compensated(a):
        s = 0.0
        c = 0.0
        for i in range(len(a)):
            y = a[i] - c
            t = s + y
            c = (t - s) - y
            s = t
        return s

    jf = jit(compensated)
    for a in (rng.random(3), rng.random(1000), np.array([1e16, 1.0, -1e16]), rng.random(2).astype(np.float32)):
        got = jf(a)
        assert got == compensated(a) and type(got) is type(compensated(a))
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    assert {"s", "c"} <= region.block.numbers_at_entry and region.calls == 1     # (the 1000 values)
    from astjit.frontend.loop_guard import weighed_names
    assert not {"s", "c"} & set(weighed_names(region.block))


def queue(arrivals, services, cap):
    t_free = waited = 0.0
    served = i = 0
    while True:
        if i >= len(arrivals):          # (len() of an array is a number: scalar work)
            break
        a = arrivals[i]
        start = a if a > t_free else t_free
        if start - a > cap:
            break
        waited += start - a
        t_free = start + services[i]
        served += 1
        i += 1
    return served, waited, t_free


def test_an_array_only_measured_does_not_make_a_trip_whole_array_work():
    """``stop = i >= len(arrivals)`` computes with a number: its array does not price the trip as a
    whole-array statement, so a short queue's trips run as written without the kernel's call."""
    jf = jit(queue)
    for n in (1, 3, 5):
        a, s = np.cumsum(rng.random(n)), rng.random(n) * 0.5
        for _ in range(3):
            assert jf(a, s, 2.0) == queue(a, s, 2.0)
    assert jf.fragments[0].calls == 0
    a, s = np.cumsum(rng.random(2000)), rng.random(2000) * 0.5
    check(queue, [(a, s, 2.0), (a, s, 0.1)], compiled=True)


def list_horner(coeffs, x):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def list_heavy(xs):
    tot = 0.0
    for v in xs:
        w = v * 0.5 + 1.0
        tot += (v * v + 1.0) / (w * w + 2.0) * 2.0 - v / 3.0 + v * v * v + w * w / (w + 3.0)
    return tot


@pytest.mark.filterwarnings("ignore::RuntimeWarning")       # (Horner's rule at -1.5 overflows)
def test_a_cheap_loop_over_a_list_runs_as_written_at_any_length_and_over_an_array_calls_its_kernel():
    """Converting a list costs the kernel's runner about 45 ns an item, more than a cheap position of
    the loop costs as Python: over lists and tuples such a loop runs as written, however long."""
    for fn, extra in ((list_total, ()), (list_horner, (0.9,)), (list_horner, (-1.5,))):
        jf = jit(fn)
        region = next(f for f in jf.fragments if f.block.kind == "loop")
        for n in (20, 3000, 100_000):
            xs = rng.random(n).tolist()
            for seq in (xs, tuple(xs)):
                assert jf(seq, *extra) == fn(seq, *extra)
        for edges in ([-0.0, 0.25], [-0.0], [1.0, float("inf")], [float("nan"), 2.0], [-float("inf"), 0.75]):
            got, want = jf(edges, *extra), fn(edges, *extra)
            assert type(got) is type(want) and np.array_equal(got, want, equal_nan=True)
            assert np.signbit(got) == np.signbit(want)
        assert region.calls == 0
        a = rng.random(3000)
        assert jf(a, *extra) == fn(a, *extra)
        assert region.calls == 1 and [e.mode for e in region.entries] == ["tvm"]


def test_a_costly_loop_over_a_long_list_calls_its_kernel():
    jf = jit(list_heavy)
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    for n in (5000, 5001):
        xs = rng.random(n).tolist()
        assert jf(xs) == list_heavy(xs)
    assert region.calls == 2 and all(e.mode == "tvm" for e in region.entries)


def pairs_of(xs, ys):
    tot = 0.0
    for x in xs:
        for y in ys:
            tot += x * y
    return tot


def test_a_costly_loop_over_a_short_list_runs_as_written():
    """A position worth more than a list item's conversion, over a few items: the kernel's call with
    its lists converted (about 0.5 us a list besides its items) costs more than the loop as written
    (over two lists of 3 floats a loop nest called its kernel at 4-18x plain Python's time)."""
    for fn, args in ((list_heavy, lambda n: (rng.random(n).tolist(),)),
                     (pairs_of, lambda n: (rng.random(n).tolist(), tuple(rng.random(n))))):
        jf = jit(fn)
        region = next(f for f in jf.fragments if f.block.kind == "loop")
        for n in (1, 2, 3, 5):
            given = args(n)
            assert jf(*given) == fn(*given)
        assert region.calls == 0, fn.__name__
        given = args(3000)
        assert jf(*given) == fn(*given)
        assert region.calls == 1 and [e.mode for e in region.entries] == ["tvm"], fn.__name__


def test_a_short_loop_nest_over_lists_of_numpy_scalars_calls_its_kernel():
    """Arithmetic on numpy scalars (``list(arr)``'s items) costs about three times Python's: a nest over
    two lists of 6 such items weighs more than the kernel's call and calls it (as written, a heavier nest
    over 3 ran 1.1-1.3x plain Python's time, the kernel 0.7x); over 6 Python floats it runs as written."""
    jf = jit(pairs_of)
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    xs, ys = list(rng.random(6)), list(rng.random(6))
    assert jf(xs, ys) == pairs_of(xs, ys) and region.calls == 1
    floats, others = [float(v) for v in xs], [float(v) for v in ys]
    assert jf(floats, others) == pairs_of(floats, others) and region.calls == 1


def test_a_loop_over_a_tuple_of_python_floats_that_reads_elements_is_priced_as_numpy_scalar_work():
    """``acc = acc * x[k] + c`` computes with numpy scalars whatever the tuple holds: priced at Python's
    fast end, Horner's rule over 3 coefficients for each of 8 elements ran as written, 0.7x plain
    Python with the estimate's test; priced as element work it calls its kernel. One element stays
    as written."""
    jf = jit(tuple_horner)
    region = jf.fragments[0]
    coeffs = (1.0, -2.0, 0.5)
    for n, calls in ((1, 0), (8, 1), (9, 2), (1, 2)):
        x = rng.random(n)
        got, want = jf(coeffs, x, np.zeros(n)), tuple_horner(coeffs, x, np.zeros(n))
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert region.calls == calls, n
    assert [e.mode for e in region.entries] == ["tvm"]


def median_filter_3x3(img):
    h, w = img.shape
    out = img.copy()
    win = np.empty(9)
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            k = 0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    win[k] = img[i + di, j + dj]
                    k += 1
            for a in range(9):
                for b in range(8 - a):
                    if win[b] > win[b + 1]:
                        win[b], win[b + 1] = win[b + 1], win[b]
            out[i, j] = win[4]
    return out


def test_a_nest_of_two_negative_lengths_runs_as_written():
    """``range(1, h - 1)`` twice on a 1x1 image is -1 positions of -1 positions: their product read as
    a large positive work and called the kernel for a loop that does nothing (12x plain Python's time)."""
    jf = jit(median_filter_3x3)
    for shape in ((1, 1), (2, 2), (1, 1), (1, 3), (3, 1)):
        img = rng.random(shape)
        assert np.array_equal(jf(img), median_filter_3x3(img))
    region = next(f for f in jf.fragments if f.block.kind == "loop")
    assert region.calls == 0
    img = rng.random((30, 30))
    assert np.array_equal(jf(img), median_filter_3x3(img))
    assert region.calls == 1


def matmul_into(A, B, C):
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(n):
                s += A[i, k] * B[k, j]
            C[i, j] = s
    return 0


def repeat_matmul(A, B, C, reps):
    for r in range(reps):
        matmul_into(A, B, C)
    return C


def test_a_few_calls_of_a_helper_that_loops_call_the_kernel():
    """The estimate counts a call as one operation: three calls of a 40x40 matrix product (a loop
    nest in the helper) read as a tiny loop and ran as Python (0.9x plain Python)."""
    calls = [(rng.random((40, 40)), rng.random((40, 40)), np.zeros((40, 40)), reps) for reps in (3, 1, 2, 0)]
    jitted = check(repeat_matmul, calls)
    assert jitted.fragments[0].block.tiny_work == 0
    assert jitted.fragments[0].calls >= 3


class Stepper:
    def __init__(self, steps, dt):
        self.reads = 0
        self.steps = steps
        self._dt = dt
        self.u = np.linspace(0.0, 1.0, 10)


class CountedStepper(Stepper):
    @property
    def dt(self):
        self.reads += 1
        return self._dt


class PlainStepper(Stepper):
    def __init__(self, steps, dt):
        super().__init__(steps, dt)
        self.dt = dt


def relax(o):
    u = o.u
    for _ in range(o.steps):
        u = u + o.dt * (1.0 - u)
    return u


def test_the_estimate_reads_no_property_python_would_not():
    """The estimate of a loop's work reads the attributes the loop's call takes as Python reads them
    for that call (a plain attribute's value): a counting property was read once more than Python
    reads it (4 reads for 3 steps, 1 for none). A property leaves the loop to Python; plain attributes
    still weigh the loop, which calls its kernel where it is large."""
    jitted = jit(relax)
    for steps in (3, 0, 1, 3):
        plain, jo = CountedStepper(steps, 0.1), CountedStepper(steps, 0.1)
        assert np.array_equal(jitted(jo), relax(plain))
        assert jo.reads == plain.reads == steps
    jitted = jit(relax)
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    for steps in (400, 2, 400):
        before = loop.calls
        assert np.array_equal(jitted(PlainStepper(steps, 0.01)), relax(PlainStepper(steps, 0.01)))
        assert loop.calls - before == (steps > 2)


class Batches:
    """``len()`` hands out the pending batches once (a stateful ``__len__``)."""

    def __init__(self, n):
        self.pending, self.len_calls = n, 0

    def __len__(self):
        self.len_calls += 1
        n, self.pending = self.pending, 0
        return n


class Grid:
    def __init__(self, n):
        self.n, self.reads = n, 0

    @property
    def shape(self):
        self.reads += 1
        return (self.n, 1)


def total_of(a, obj):
    s = 0.0
    for i in range(len(obj)):
        s += a[i]
    return s


def total_over(a, grid):
    s = 0.0
    for i in range(grid.shape[0]):
        s += a[i]
    return s


def first_of(a, obj, v):
    k = -1
    for i in range(len(obj)):
        if a[i] > v:
            k = i
            break
    return k


class Holder:
    def __init__(self, obj):
        self.obj = obj


def held_batches(n):
    """Batches behind an attribute, which the loop's call reads from the object (a hoisted attribute)."""
    return Holder(Batches(n))


def total_held(a, holder):
    s = 0.0
    for i in range(len(holder.obj)):
        s += a[i]
    return s


def counted_by(d, n, out):
    for i in range(n):
        for j in range(d[i]):
            out[i] += 1.0
    return out


def test_the_estimate_measures_and_indexes_only_plain_values():
    """The estimate reads ``len()``, ``.shape`` and items only of arrays, lists, tuples, dicts and numbers,
    whose reads have no effect: a user's ``__len__`` and a ``shape`` property ran twice (a stateful one
    gave 0.0 where Python gave the sum), and an inner ``range(d[i])`` read at the outer range's first
    and last values gave a defaultdict keys -1 and 0 that Python, looping zero times, never made."""
    a = np.arange(1000.0)
    for fn, make, extra in ((total_of, Batches, ()), (total_over, Grid, ()), (first_of, Batches, (700.5,)),
                            (total_held, held_batches, ())):
        jitted = jit(fn)
        for n in (500, 3, 0, 900, 500):
            plain, jo = make(n), make(n)
            assert jitted(a, jo, *extra) == fn(a, plain, *extra)
            jo, plain = getattr(jo, "obj", jo), getattr(plain, "obj", plain)
            assert getattr(jo, "len_calls", getattr(jo, "reads", None)) == 1 == getattr(
                plain, "len_calls", getattr(plain, "reads", None))
    jitted = jit(counted_by)
    for n in (0, 3, 0, 5, 200):
        plain, jd = collections.defaultdict(int, {1: 2}), collections.defaultdict(int, {1: 2})
        assert np.array_equal(jitted(jd, n, np.zeros(200)), counted_by(plain, n, np.zeros(200)))
        assert dict(jd) == dict(plain)


def oscillate(x, v, dt, steps):
    for _ in range(steps):
        acc = -x - 0.1 * v
        v = v + dt * acc
        x = x + dt * v
    return x, v


def test_arrays_bound_by_whole_array_statements_price_the_kernel_call():
    """Each array a whole-array statement binds is a buffer of the kernel's call (about 0.5 us): one step
    of three such statements over 64 points (2.1 us as Python) ran the kernel (3.0 us), 1.4x plain
    Python's time. It runs as written now; more steps call the kernel. Answers are Python's both ways."""
    jitted = check(oscillate, [(np.linspace(0, 1, 64), np.linspace(0, 0.5, 64), 0.01, s) for s in (1, 6, 0, 1)],
                   compiled=False)
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    for steps, calls in ((1, 0), (6, 1), (1, 0)):
        before = loop.calls
        jitted(np.linspace(0, 1, 64), np.linspace(0, 0.5, 64), 0.01, steps)
        assert loop.calls - before == calls, steps


def halve_past(x, n, thr):
    s = 0.0
    for i in range(n):
        s += x[i]
        if s > thr:
            x = x * 0.5
    return s, x


def test_a_large_array_the_loop_may_rebind_prices_its_copy():
    """The kernel works on a copy of an array the loop indexes and may rebind: three positions over a
    1,000,000-element argument copied 8 MB at each call (211 us where the Python took 0.4 us). The copy
    weighs with the loop's work: a few positions run as written, a loop over the whole array calls the
    kernel; answers are Python's either way."""
    rng = np.random.default_rng(8)
    big, small = rng.random(200_000), rng.random(16)
    jitted = check(halve_past, [(big, 3, 1e9), (big, 3, 0.5), (small, 16, 1e9), (big, 200_000, 1e9)],
                   compiled=False)
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    for x, n, kernel in ((big, 3, False), (big, 200_000, True), (big, 3, False)):
        before = loop.calls
        s, _ = jitted(x, n, 1e9)
        assert s == halve_past(x, n, 1e9)[0] and (loop.calls - before == 1) is kernel


class Rod:
    def __init__(self, n):
        self.u = np.linspace(0.0, 1.0, n)
        self.alpha = 0.1
        self.reads = 0

    @property
    def steps(self):
        self.reads += 1
        return 3


def diffuse(rod):
    u = rod.u
    for _ in range(rod.steps):
        for i in range(1, len(u) - 1):
            u[i] = u[i] + rod.alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    return u


def test_a_property_in_an_outer_range_leaves_the_inner_loop_compiled():
    """The estimate of a loop whose range reads a property cannot read it (Python reads it once, where
    the loop starts): the loop's Fragment runs its Python, whose inner loop still calls its kernel,
    where running the loop as written made the whole nest Python (1.3x plain instead of 0.03x)."""
    jitted = jit(diffuse)
    for n in (400, 50, 400):
        plain, jr = Rod(n), Rod(n)
        np.testing.assert_array_equal(jitted(jr), diffuse(plain))
        assert jr.reads == plain.reads == 1
    inner = [f for f in jitted.fragments if f.block.kind == "loop" and f.block.lineno != diffuse.__code__.co_firstlineno + 2]
    assert any(f.calls for f in inner), [(f.block.lineno, f.calls) for f in jitted.fragments]


def chained(x, v, steps):
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = s9 = s10 = s11 = s12 = s13 = s14 = s15 = 0.0
    for _ in range(steps):
        x = x + 0.01 * v
        s0 = s0 * 0.5 + x[0]
        s1 = s1 * 0.5 + s0
        s2 = s2 * 0.5 + s1
        s3 = s3 * 0.5 + s2
        s4 = s4 * 0.5 + s3
        s5 = s5 * 0.5 + s4
        s6 = s6 * 0.5 + s5
        s7 = s7 * 0.5 + s6
        s8 = s8 * 0.5 + s7
        s9 = s9 * 0.5 + s8
        s10 = s10 * 0.5 + s9
        s11 = s11 * 0.5 + s10
        s12 = s12 * 0.5 + s11
        s13 = s13 * 0.5 + s12
        s14 = s14 * 0.5 + s13
        s15 = s15 * 0.5 + s14
    return x, s15


def test_numbers_rebound_beside_a_whole_array_statement_are_not_priced_as_arrays():
    """Only names holding arrays add buffers to the kernel's price: numbers rebound in the same loop
    (``s1 = s1 * 0.5 + s0``) priced as arrays kept a few steps in Python (24 such names: 12 steps, 8x the
    kernel's time)."""
    jitted = check(chained, [(np.zeros(4), np.ones(4), s) for s in (12, 1, 12)], compiled=False)
    loop = next(f for f in jitted.fragments if f.block.kind == "loop")
    before = loop.calls
    jitted(np.zeros(4), np.ones(4), 12)
    assert loop.calls == before + 1


class Counted(np.ndarray):
    reads = 0

    @property
    def nbytes(self):
        Counted.reads += 1
        return super().nbytes


def test_the_copy_price_reads_nothing_of_an_ndarray_subclass():
    """The price of copying an array the loop rebinds reads its ``nbytes``, only of an ndarray itself:
    a subclass's may be a property, which Python would not read."""
    x = np.linspace(0.0, 1.0, 50).view(Counted)
    jitted = jit(halve_past)
    for n in (1, 5, 40):
        s, _ = jitted(x, n, 1e9)
        assert s == halve_past(x, n, 1e9)[0]
    assert Counted.reads == 0


def sum_until(a, m, n):
    s = 0.0
    for i in range(m, n):
        s += a[0] * i
        if i > m + 3:
            break
    return s


def square_nest(a, n):
    s = 0
    for i in range(n):
        for j in range(n):
            s += a[0]
            if j > 2:
                break
        if i > 2:
            break
    return s


def triangle(a, n):
    s = 0.0
    for i in range(n):
        for j in range(i):
            s += a[0] * j
    return s


@pytest.mark.parametrize("fn, args", [
    (sum_until, (np.int64(-5), np.int64(2**63 - 1))),
    (sum_until, (np.int64(-2**63), np.int64(2**63 - 1))),
    (sum_until, (np.int32(-5), np.int32(2**31 - 1))),
    (sum_until, (np.int64(2**62), np.int64(2**63 - 1))),
    (square_nest, (np.int64(2**63 - 1),)),
    (square_nest, (np.int32(6000),)),          # (n * n positions: beyond int32)
    (triangle, (np.uint64(0),)),               # (the inner range's last value: 0 - 1)
    (triangle, (np.int8(-128),)),
])
def test_the_estimate_over_numpy_int_bounds_warns_of_nothing(fn, args):
    """The work estimate takes a range's arguments as Python ints: numpy's int arithmetic on bounds
    near their type's limit warned of an overflow plain Python never computes, at the loop's line."""
    import warnings

    jitted = jit(fn)
    a = np.ones(4)
    for _ in range(4):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = jitted(a, *args)
        assert [str(w.message) for w in caught] == []
        want = fn(a, *args)
        assert got == want and type(got) is type(want)


class IntLike:
    """An int-like object counting how often Python asks it for its int."""
    asked = 0

    def __init__(self, value):
        self.value = value

    def __index__(self):
        IntLike.asked += 1
        return self.value


def scaled_until(a, m, n):
    s = 0.0
    for i in range(m, n):
        s += a[0] * i
        if i > 6:
            break
    return s


def test_the_estimate_runs_no_index_method_python_would_not():
    """``range(n)`` asks ``n.__index__`` once; the estimate before the loop takes numpy and Python ints
    only, and runs the loop as written for anything else (it asked each argument a second time)."""
    jitted = jit(scaled_until)
    a = np.ones(4)
    for k in range(6):
        IntLike.asked = 0
        want = scaled_until(a, IntLike(k), IntLike(k + 10))
        plain_asks, IntLike.asked = IntLike.asked, 0
        assert jitted(a, IntLike(k), IntLike(k + 10)) == want
        assert IntLike.asked == plain_asks == 2
