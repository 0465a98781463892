"""Loops over rows of functions numpy's SVML loop runs faster (runtime/loop_weighing): the kernel and
the loop's Python are timed on the program's own calls, per size class, and the faster runs on. The
choice is timing: the tests drive it with a fake clock, and check values and effects either way."""

import numpy as np
import pytest

from astjit import explain, jit
from astjit.backends.tvm.support import svml_faster
from astjit.runtime import loop_weighing


class Clock:
    """``time.perf_counter`` advancing by what the runs below say they cost."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Fragment:
    def __init__(self):
        self.records = []
        self.owner_name, self.block = "f", type("Block", (), {"lineno": 3})()

    def _record(self, kind, message):
        self.records.append((kind, message))


def runs(clock, costs, log, name):
    def run(*args):
        log.append((name, args))
        clock.now += costs[name](*args)
        return name
    return run


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(loop_weighing.time, "perf_counter", c)
    return c


def weighed(clock, kernel_cost, python_cost, first_args):
    log, fragment = [], Fragment()
    costs = {"kernel": kernel_cost, "python": python_cost}
    run = loop_weighing.weighed(runs(clock, costs, log, "kernel"), runs(clock, costs, log, "python"), fragment,
                                first_args)
    return run, log, fragment


WEIGHING = ["kernel", "python", "kernel", "python", "kernel", "python", "kernel"]


def test_python_faster_on_long_rows_and_the_kernel_on_short_ones(clock):
    """Each call runs one of the two, once: the kernel (not timed: its first calls after the compile
    are slow), the loop's Python (not timed: it compiles its blocks), then alternating, then the faster
    for that size class."""
    run, log, fragment = weighed(clock, lambda a, n: a.size * 2e-9, lambda a, n: 1e-6 * n + a.size * 1e-9,
                                 (np.zeros(4), 4))
    long_rows, short_rows = np.zeros(200_000), np.zeros(5_000)
    chosen = [run(long_rows, 20) for _ in range(9)]
    assert chosen == WEIGHING + ["python", "python"]
    assert len(log) == 9
    chosen = [run(short_rows, 20) for _ in range(9)]      # (another class: 2e-9 * 5000 < 2e-5 + 5e-6)
    assert chosen == WEIGHING + ["kernel", "kernel"]
    assert [kind for kind, _ in fragment.records] == ["measured"]
    assert "beat its kernel" in fragment.records[0][1]
    assert run.weighed[(long_rows.size.bit_length(), (20).bit_length())] is False


def test_small_arrays_run_the_kernel_unweighed(clock):
    """Arrays all shorter than WEIGHED_FROM elements: numpy's faster loop cannot repay its calls."""
    run, log, fragment = weighed(clock, lambda a, b: 1.0, lambda a, b: 1e-3, (np.zeros(4), np.zeros(4)))
    small = np.zeros(loop_weighing.WEIGHED_FROM - 1)
    assert [run(small, np.zeros(3)) for _ in range(5)] == ["kernel"] * 5
    assert run(small, np.zeros(loop_weighing.WEIGHED_FROM)) == "kernel"       # (weighing starts)
    assert not fragment.records


def test_a_tie_and_the_first_runs_keep_the_kernel(clock):
    """The first run of each (the kernel's just compiled, the loop's Python compiling its blocks) is
    not timed; a tie goes to the kernel."""
    runs_of = {"kernel": [], "python": []}

    def cost(which):
        def run(a):
            runs_of[which].append(1)
            return 1.0 if len(runs_of[which]) == 1 else 1e-3
        return run

    run, log, fragment = weighed(clock, cost("kernel"), cost("python"), (np.zeros(5000),))
    assert [run(np.zeros(5000)) for _ in range(9)] == WEIGHING + ["kernel"] * 2
    assert not fragment.records


def test_size_classes_are_bounded(clock, monkeypatch):
    monkeypatch.setattr(loop_weighing, "REMEMBERED", 30)
    run, log, fragment = weighed(clock, lambda a, n: 1.0, lambda a, n: 1e-3, (np.zeros(5000), 1))
    a = np.zeros(5000)
    for k in range(loop_weighing.CLASSES_AT_MOST):
        run(a, 2**k)
    assert [run(a, 1) for _ in range(7)] == ["python", "kernel", "python", "kernel", "python", "kernel", "python"]
    assert [run(a, 2**40) for _ in range(4)] == ["kernel"] * 4     # (a class beyond the bound)
    assert sum(type(state) is not bool for state in run.weighed.values()) == loop_weighing.CLASSES_AT_MOST - 1
    for k in range(40, 64):                                           # (what is remembered is bounded)
        run(np.zeros(k), 2**k)
    assert len(run.weighed) <= loop_weighing.REMEMBERED


def exp_rows(a, out):
    for i in range(a.shape[0]):
        out[i] = np.exp(a[i]) * 0.5
    return out


def log_steps(x, n):
    for _ in range(n):
        x = np.log(x + 1.0)
    return x


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_weighed_loops_agree_with_numpy_whichever_runs(dtype):
    """Values and effects on every call, through the timed calls and after the choice, for rows long
    and short (numpy's exp and log against the kernel's: a few ulp apart)."""
    rng = np.random.default_rng(4)
    jf, jg = jit(exp_rows), jit(log_steps)
    tol = {"rtol": 4e-7 if dtype == "float32" else 4e-16, "atol": 0}
    for shape in [(20, 5000)] * 8 + [(50, 40)] * 8 + [(3, 5000), (0, 7), (20, 5000)]:
        a = rng.normal(0, 3, shape).astype(dtype)
        out, expected = np.full(shape, np.nan, dtype), np.full(shape, np.nan, dtype)
        result = jf(a, out)
        assert result is out
        np.testing.assert_allclose(out, exp_rows(a, expected), **tol)
        x = rng.random(shape[1]).astype(dtype)
        got = jg(x, shape[0] % 7)
        assert got.dtype == x.dtype and got.shape == x.shape
        # (a few steps, each a few ulp apart: an ulp of x moves x + 1.0 by an ulp of 1.0)
        np.testing.assert_allclose(got, log_steps(x, shape[0] % 7), rtol=20 * tol["rtol"],
                                   atol=4 * np.finfo(dtype).eps)
    spec = next(e for f in jf.fragments if f.block.kind == "loop" for e in f.entries)
    assert spec.mode == "tvm"
    assert hasattr(spec.runner, "weighed") == svml_faster("exp", dtype)
    if svml_faster("exp", dtype):
        assert len(spec.runner.weighed) >= 3           # three size classes of ``a``
    assert "could not" not in explain(jf)


def int_quotients(a, k, out):
    for i in range(a.shape[0]):
        out[i] = a[i] // k + a[i] % k
    return out


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint16"])
def test_rows_of_ints_divided_by_one_number_are_weighed_and_exact(dtype):
    """numpy divides a row by one number with SIMD, faster than the kernel over long rows: such loops
    are weighed too, and give numpy's values (floor division, the divisor's sign, by zero: 0) either way."""
    from loop_checks import check

    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    calls = []
    for shape, k in [((20, 3000), 7)] * 7 + [((30, 20), -3 if info.min else 3)] * 7 + [((4, 5), 0), ((0, 3), 5)]:
        a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        # (a numpy scalar of the rows' type: a Python int beside a small int type needs checks per element)
        calls.append((a, k if dtype == "int64" else np.dtype(dtype).type(k), np.zeros(shape, dtype)))
    with np.errstate(divide="ignore"):
        jitted = check(int_quotients, calls)
    spec = next(e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries)
    assert len(spec.runner.weighed) >= 2           # (the classes of 60,000 and 600 elements)


def test_a_call_nested_in_the_loops_python_does_not_break_the_schedule(clock):
    """The loop's Python may call the function again (recursion): the inner calls weigh the same
    class while the outer one runs; every call still runs one of the two, and the class settles."""
    depth = []

    def python(a):
        if not depth:
            depth.append(1)
            for _ in range(7):
                run(a)
            depth.pop()
        clock.now += 1e-3
        return "python"

    def kernel(a):
        clock.now += 1.0
        return "kernel"

    run = loop_weighing.weighed(kernel, python, Fragment(), (np.zeros(5000),))
    results = [run(np.zeros(5000)) for _ in range(9)]
    assert set(results) <= {"kernel", "python"}
    assert run.weighed[(13,)] is False


def test_threads_weighing_one_class_together(clock):
    """Threads calling together: a class another thread decided, or weighed past its schedule, runs
    the code chosen (the second read of a class's state raised AttributeError)."""
    run, log, fragment = weighed(clock, lambda a: 1.0, lambda a: 1e-3, (np.zeros(5000),))
    a = np.zeros(5000)
    key = (a.size.bit_length(),)
    run(a)
    run.weighed[key] = True                     # (decided by another thread between the two reads)
    assert loop_weighing_weigh(run)(key, (a,)) == "kernel"
    run.weighed[key] = {"warming": [1.0], "kernel": [1.0] * 4, "python": [1e-3] * 3, "compiling": [1.0]}
    assert run(a) == "python" and run.weighed[key] is False


def loop_weighing_weigh(run):
    return run.__globals__["weigh"]


# -- a ``while`` whose first trips ran as written (weighed_while) -------------------------------------

def weighed_while(clock, kernel_cost, python_cost, first_args):
    log, fragment = [], Fragment()
    costs = {"kernel": kernel_cost, "python": python_cost, "settled": python_cost}
    run = loop_weighing.weighed_while(runs(clock, costs, log, "kernel"), runs(clock, costs, log, "python"),
                                      runs(clock, costs, log, "settled"), fragment, first_args)
    return run, log, fragment


def test_a_while_whose_remaining_trips_are_few_settles_on_its_python(clock):
    """Each weighing call returns the kernel's result; the first runs the kernel alone, the second the
    Python too (untimed: it compiles), then both run on the call's own values and are timed, then the
    settled runner (the rewritten function's loop as written)."""
    run, log, fragment = weighed_while(clock, lambda x: 1e-6, lambda x: 3e-7, (1.0,))
    weighing = loop_weighing.WHILE_WEIGHED + 2
    assert [run(float(k)) for k in range(weighing)] == ["kernel"] * weighing
    assert [name for name, _ in log] == ["kernel"] + ["kernel", "python"] * (weighing - 1)
    assert log[3] == ("kernel", (2.0,)) and log[4] == ("python", (2.0,))      # (both on the call's own values)
    assert [run(2.0) for _ in range(3)] == ["settled"] * 3
    assert [kind for kind, _ in fragment.records] == ["measured"]
    assert "too few to repay the kernel's call" in fragment.records[0][1]
    assert "(0.3 us) beat its kernel (1.0 us)" in fragment.records[0][1]       # (per call)


def test_a_while_whose_python_is_clearly_slower_stops_timing_it(clock):
    """The Python's times over WHILE_CLEAR times the kernel's: the kernel wins at the second timed call
    (timing a long Python at every weighing call made such loops 0.45x plain Python; the Python's first
    run is not timed: it compiles the blocks the loop holds)."""
    run, log, fragment = weighed_while(clock, lambda x: 1e-6, lambda x: 5e-6, (1.0,))
    assert [run(1.0) for _ in range(12)] == ["kernel"] * 12
    assert [name for name, _ in log] == ["kernel"] + ["kernel", "python"] * 3 + ["kernel"] * 8
    assert run.weighed == {(): True} and not fragment.records


def test_a_long_kernel_call_is_not_timed_against_python(clock):
    """Where the kernel's second call takes over WHILE_LONG_SECOND, its Python would cost far more: it
    never runs; where two timed calls took over WHILE_LONG, it stops."""
    run, log, fragment = weighed_while(clock, lambda x: 2 * loop_weighing.WHILE_LONG_SECOND, lambda x: 1e-7,
                                       (1.0,))
    assert [run(1.0) for _ in range(10)] == ["kernel"] * 10
    assert [name for name, _ in log] == ["kernel"] * 10
    run, log, fragment = weighed_while(clock, lambda x: 2 * loop_weighing.WHILE_LONG, lambda x: 1e-7, (1.0,))
    assert [run(1.0) for _ in range(10)] == ["kernel"] * 10
    assert [name for name, _ in log] == ["kernel"] + ["kernel", "python"] * 3 + ["kernel"] * 6


def test_a_while_weighs_its_pythons_errors_and_warnings_as_its_own(clock):
    """The Python run after the kernel's raises what the loop raises; numpy's warnings are the kernel's
    run's alone."""
    states = []

    def python(x):
        states.append(np.geterr()["over"])
        if x < 0:
            raise ZeroDivisionError("float division by zero")
        return 1e-7

    run, log, fragment = weighed_while(clock, lambda x: 1e-6, python, (1.0,))
    run(1.0)
    with pytest.raises(ZeroDivisionError):
        run(-1.0)
    assert states and set(states) == {"ignore"}


def binary_search(a, v):
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


def escape_time(c, most):
    z = 0.0
    n = 0
    while abs(z) <= 2.0 and n < most:
        z = z * z + c
        n += 1
    return n, z


def clear_until(a, v):
    i = 0
    while i < len(a) and a[i] != v:
        a[i] = 0
        i += 1
    return i


@pytest.mark.parametrize("python_wins", [True, False])
def test_while_loops_agree_with_python_whichever_runs(monkeypatch, python_wins):
    """The weighing's choice forced either way (a fake ``_timed``): every call still gives what plain
    Python gives, and where Python won, explain says why."""
    timed = loop_weighing._timed

    def fake(run, args):
        out, _ = timed(run, args)
        is_python = getattr(run, "__name__", "").startswith("__astjit_block")
        return out, (0.0 if is_python == python_wins else 1e-6)

    monkeypatch.setattr(loop_weighing, "_timed", fake)
    rng = np.random.default_rng(3)
    search, escape, clear = jit(binary_search), jit(escape_time), jit(clear_until)
    for k in range(24):
        a = np.sort(rng.uniform(0, 100, int(rng.integers(1, 3000))))
        v = float(rng.uniform(-5, 105))
        assert search(a, v) == binary_search(a, v)
        c, most = float(rng.uniform(-2.1, 0.4)), int(rng.integers(1, 200))
        got, want = escape(c, most), escape_time(c, most)
        assert got == want and type(got[1]) is type(want[1])
        b = rng.integers(0, 5, 200)
        b2 = b.copy()
        assert clear(b, 3) == clear_until(b2, 3) and np.array_equal(b, b2)
    said = str(explain(search)) + str(explain(escape))
    assert ("too few to repay the kernel's call" in said) == python_wins
    # (once the kernel won, it runs without the weighing's call around it)
    entries = [e for f in search.fragments if f.block.kind == "loop" for e in f.entries]
    assert entries and all(hasattr(e.runner, "weighed") == python_wins for e in entries)
    assert "too few" not in str(explain(clear))     # (it writes an array: never weighed)


def test_once_a_class_chooses_the_kernel_every_class_runs_it(clock):
    """The settled runner runs the loop as written for the next calls of every class (the rewritten
    function's switch is the Fragment's): where another class's loops are long, every class runs the
    kernel instead."""
    run, log, fragment = weighed_while(clock, lambda n: 1e-6, lambda n: 3e-7 if n < 4 else 1e-3, (1,))
    weighing = loop_weighing.WHILE_WEIGHED + 2
    assert [run(1) for _ in range(weighing)] == ["kernel"] * weighing
    assert run(1) == "settled"
    assert [run(1000) for _ in range(weighing)] == ["kernel"] * weighing
    assert run.weighed == {(1,): True, (10,): True}
    assert [run(1) for _ in range(3)] == ["kernel"] * 3


def escape_times(cs, most):
    out = []
    for c in cs:
        z, n = 0.0, 0
        while abs(z) <= 2.0 and n < most:
            z = z * z + c
            n += 1
        out.append(f"{n}")                # (keeps the outer loop Python)
    return out


def test_a_while_inside_a_loop_of_pythons_is_not_weighed():
    """The run as written that the weighing settles on would cover the rest of the outer loop,
    whatever the classes of its later trips: such a ``while`` keeps its kernel."""
    jitted = jit(escape_times)
    cs = list(np.linspace(-2.1, 0.4, 40))
    for most in (5, 50, 500) * 4:
        assert jitted(cs, most) == escape_times(cs, most)
    inner = next(f for f in jitted.fragments if f.block.kind == "loop" and f.block.in_loop)
    assert inner.entries and not any(hasattr(e.runner, "weighed") for e in inner.entries)


def dot_of(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
    return s


def logistic(x, r, steps):
    for _ in range(steps):
        x = r * x * (1.0 - x)
    return x


def horner(c, x):
    y = np.zeros_like(x)
    for k in range(len(c)):
        y = y * x + c[k]
    return y


def scaled_into(a, out):
    for i in range(len(a)):
        out[i] = 2.0 * a[i]
    return out


def test_for_loops_are_not_weighed_and_agree_with_python(monkeypatch):
    """A ``for`` loop is not weighed, with effects or without (its Python's first run compiled the
    blocks of its body, 50-60 ms at the second call of a whole-array time step, for nothing where the
    kernel won): whatever the timings, its kernel runs, with plain Python's results."""
    timed = loop_weighing._timed

    def python_faster(run, args):
        out, _ = timed(run, args)
        return out, (0.0 if getattr(run, "__name__", "").startswith("__astjit_block") else 1e-6)

    monkeypatch.setattr(loop_weighing, "_timed", python_faster)
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "0")
    rng = np.random.default_rng(5)
    jd, jl, jh, js = jit(dot_of), jit(logistic), jit(horner), jit(scaled_into)
    for k in range(20):
        n = int(rng.integers(1, 400))
        a, b = rng.standard_normal(n), rng.standard_normal(n)
        assert jd(a, b) == dot_of(a, b)
        x, steps = float(rng.uniform(0.1, 0.9)), int(rng.integers(0, 60))
        assert jl(x, 3.7, steps) == logistic(x, 3.7, steps)
        c = rng.standard_normal(4)
        np.testing.assert_array_equal(jh(c, a), horner(c, a))
        out1, out2 = np.zeros(n), np.zeros(n)
        np.testing.assert_array_equal(js(a, out1), scaled_into(a, out2))
    for jitted in (jd, jl, jh, js):
        entries = [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
        assert entries and not any(hasattr(e.runner, "weighed") for e in entries)
        assert "too few" not in str(explain(jitted))
