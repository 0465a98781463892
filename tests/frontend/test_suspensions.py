"""Generators test their guard again where they resume (frontend/suspensions): a global rebound between
two ``next()`` calls reaches the compiled code after it as it reaches the plain generator's Python.
(Async functions run as Python: nothing to test there.)"""

import numpy as np
from loop_checks import same

from astjit import jit

# (functions numpy and the kernels compute exactly: transcendental ones may differ by an ulp)
ACT = np.square
SCALE = 2.0


def scaled_steps(x, n):
    for _ in range(n):
        out = np.empty_like(x)
        for i in range(len(x)):            # a loop kernel that inlines ACT
            out[i] = ACT(x[i]) * SCALE
        yield out
        y = ACT(x) + SCALE                 # a block that resolved ACT
        yield y


def drive(gen_fn, x, rebinds):
    """The values a generator of ``gen_fn`` yields, with module globals rebound before each ``next``
    as ``rebinds`` says (one (ACT, SCALE) per value)."""
    global ACT, SCALE
    values = []
    try:
        g = gen_fn(x, len(rebinds) // 2)
        for act, scale in rebinds:
            ACT, SCALE = act, scale
            values.append(next(g))
    finally:
        ACT, SCALE = np.square, 2.0
    return values


def test_a_global_rebound_between_resumptions_reaches_compiled_loops_and_blocks():
    jitted = jit(scaled_steps)
    rng = np.random.default_rng(0)
    schedules = [
        [(np.square, 2.0)] * 4,                                            # the guard holds throughout
        [(np.square, 2.0), (np.negative, 3.0), (np.negative, 3.0), (np.floor, 0.5)],
        [(np.floor, 1.0), (np.floor, 1.0), (np.square, -1.0), (np.abs, 2.0)],
        [(np.square, 2.0)] * 6,
    ]
    for n, schedule in zip((300, 64, 1000, 17), schedules):
        x = rng.standard_normal(n)
        assert same(drive(jitted, x, schedule), drive(scaled_steps, x, schedule))
    assert jitted.fragments[0].entries and all(e.runs == "compiled" for e in jitted.fragments[0].entries)


def closure_steps(fn):
    def steps(x, n):
        for _ in range(n):
            out = np.empty_like(x)
            for i in range(len(x)):
                out[i] = fn(x[i]) + 1.0
            yield out

    def rebind(new):
        nonlocal fn
        fn = new

    return steps, rebind


def test_a_closure_variable_rebound_between_resumptions():
    x = np.linspace(-2.0, 2.0, 200)
    results = []
    for wrap in (lambda f: f, jit):
        steps, rebind = closure_steps(np.square)
        g = wrap(steps)(x, 3)
        first = next(g)
        rebind(np.floor)
        second = next(g)
        rebind(np.abs)
        results.append([first, second, next(g)])
    assert same(results[1], results[0])


def yield_in_headers(x):
    out = np.zeros_like(x)
    while (yield out.copy()) is None:          # a suspension in a loop's test
        if (yield 0) is None:                  # and in an ``if``'s
            for i in range(len(x)):
                out[i] = ACT(x[i]) * SCALE
        try:
            yield out.copy()
        except KeyError:                       # resumed by ``throw``
            for i in range(len(x)):
                out[i] = ACT(x[i]) + SCALE
            yield out.copy()


def test_suspensions_in_headers_and_a_throw_recheck_where_they_resume():
    global ACT
    x = np.linspace(-1.0, 1.0, 300)
    results = []
    for fn in (yield_in_headers, jit(yield_in_headers)):
        values = []
        try:
            for _ in range(2):                  # (the second time through, the kernels are compiled)
                ACT = np.square
                g = fn(x)
                values.append(next(g))
                ACT = np.negative               # rebound before the loop's test resumes
                values.append(g.send(None))
                ACT = np.floor                  # before the if's test resumes: its loop's function
                values.append(g.send(None))
                ACT = np.abs                    # before the throw: the handler's loop's
                values.append(g.throw(KeyError))
                ACT = np.square
                values.append(next(g))
                try:
                    g.send(1)
                except StopIteration:
                    values.append("done")
        finally:
            ACT = np.square
        results.append(values)
    assert results[0][-1] == "done" and same(results[1], results[0])


def double(x):
    return x * 2.0


def triple(x):
    return x * 3.0


def yield_in_try_block_in_else(a):
    try:
        yield 1
    except KeyError:
        pass
    else:
        for i in range(a.shape[0]):
            a[i] = ACT(a[i])
    yield a.copy()


def yield_in_handler_block_in_finally(a):
    try:
        raise ValueError
    except ValueError:
        yield 1
    finally:
        for i in range(a.shape[0]):
            a[i] = ACT(a[i])
    yield a.copy()


def test_a_block_in_a_trys_else_or_finally_after_a_suspension_sees_the_rebinding():
    global ACT
    for gen in (yield_in_try_block_in_else, yield_in_handler_block_in_finally):
        results = []
        for fn in (gen, jit(gen), jit(gen)):
            try:
                ACT = double
                g = fn(np.arange(3000.0))
                next(g)
                ACT = triple                    # rebound while the generator is suspended
                results.append(next(g))
            finally:
                ACT = np.square
        assert same(results[1], results[0]) and same(results[2], results[0]), gen.__name__


def test_show_prints_no_rechecks():
    jitted = jit(scaled_steps)
    assert "resume" not in jitted.source and "stale" not in jitted.source
