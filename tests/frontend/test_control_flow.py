"""Control flow stays Python around the compiled blocks: every test runs the undecorated function and the
jitted one on equal copies of the arguments and compares results and in-place effects."""

import contextlib

import numpy as np
import pytest
from differential import assert_same_as_numpy, modes

from astjit import explain, jit
from astjit.runtime.fragment import SETTLED_CALLS_OUTSIDE

RNG = np.random.default_rng(1)
A = RNG.standard_normal(32)
B = RNG.standard_normal(32)


def compiled_fragments(jf) -> int:
    """How many fragments have at least one compiled (non-Python) specialization."""
    return sum(1 for f in jf.fragments if any(e.mode != "python" for e in f.entries))


# -- if / elif / else ---------------------------------------------------------------------------------
def branches(a, k):
    t = a * 2.0
    if k == 0:
        y = t + 1.0
    elif k == 1:
        y = t - 1.0
    elif t.sum() > 0:
        y = t * t
    else:
        y = -t
    return y


@pytest.mark.parametrize("k", [0, 1, 2])
def test_if_elif_else(k):
    jf = jit(branches)
    assert_same_as_numpy(branches, A, k, jitted=jf)
    assert_same_as_numpy(branches, -np.abs(A), k, jitted=jf)
    assert compiled_fragments(jf) >= 2


def if_without_else(a, flag):
    y = a + 1
    if flag:
        y = y * 3
    return y * 2


def test_if_without_else_joins_correctly():
    jf = jit(if_without_else)
    assert_same_as_numpy(if_without_else, A, True, jitted=jf)
    assert_same_as_numpy(if_without_else, A, False, jitted=jf)


# -- for loops --------------------------------------------------------------------------------------
def for_range(a, n):
    acc = np.zeros_like(a)
    for i in range(n):
        acc = acc + a * i
        tmp = acc - 1
    return acc, tmp


def test_for_over_range():
    jf = assert_same_as_numpy(for_range, A, 5)
    assert compiled_fragments(jf) >= 1
    assert_same_as_numpy(for_range, A, 1, jitted=jf)


def for_range_empty(a, n):
    y = a * 1.5
    for i in range(n):
        y = y + i
    return y


def test_for_over_empty_range_keeps_value():
    assert_same_as_numpy(for_range_empty, A, 0)


def for_list_of_arrays(arrays, w):
    total = np.zeros(arrays[0].shape)
    for x in arrays:
        total = total + x * w
    return total


def test_for_over_list_of_arrays():
    arrays = [RNG.standard_normal(8) for _ in range(4)]
    jf = assert_same_as_numpy(for_list_of_arrays, arrays, 0.5)
    assert compiled_fragments(jf) >= 1


def for_zip(xs, ys):
    out = 0.0
    for x, y in zip(xs, ys):
        out = out + (x * y).sum()
    return out


def test_for_over_zip():
    xs = [RNG.standard_normal(6) for _ in range(3)]
    ys = [RNG.standard_normal(6) for _ in range(3)]
    assert_same_as_numpy(for_zip, xs, ys)


def for_enumerate_else(a, items):
    y = a.copy()
    for i, v in enumerate(items):
        y = y * v + i
    else:
        y = y - 1
    return y


def test_for_enumerate_with_else():
    assert_same_as_numpy(for_enumerate_else, A, [1.0, 2.0, 0.5])


# -- while, break, continue -------------------------------------------------------------------------
def while_converge(a):
    err = np.abs(a).max()
    steps = 0
    while err > 1e-3:
        a = a * 0.5
        err = np.abs(a).max()
        steps += 1
    return a, err, steps


def test_while_loop():
    assert_same_as_numpy(while_converge, A)


def while_true_break(x):
    while True:
        y = x * 2
        x = y + 1
        if x.max() > 100:
            break
    return y, x


def test_while_true_with_break():
    assert_same_as_numpy(while_true_break, np.abs(A))


def loop_continue(a, n):
    s = np.zeros_like(a)
    t = s
    for i in range(n):
        s = s + a
        t = s * 2
        if i % 2:
            continue
        s = t
    return s, t


def test_continue_back_edge_liveness():
    assert_same_as_numpy(loop_continue, A, 5)


def break_in_for(a, limit):
    acc = a * 0
    for i in range(100):
        acc = acc + a
        if acc.sum() > limit:
            break
    return acc, i


def test_break_in_for_keeps_loop_variable():
    assert_same_as_numpy(break_in_for, np.abs(A), 50.0)


# -- early return -----------------------------------------------------------------------------------
def early_return(a, b):
    c = a - b
    if c.mean() > 0:
        return c * 2
    d = c + a
    if d.min() < -100:
        return d
    for i in range(3):
        d = d * 0.5
        if i == 1:
            return d + 100
    return d


def test_early_return_in_branches_and_loops():
    jf = jit(early_return)
    assert_same_as_numpy(early_return, A + 10, B, jitted=jf)
    assert_same_as_numpy(early_return, A - 10, B, jitted=jf)
    assert_same_as_numpy(early_return, A - 1000, B, jitted=jf)


# -- try / except / finally -------------------------------------------------------------------------
def try_finally(a, b, log):
    try:
        t = a + 1
        u = t * b                      # raises ValueError when the shapes do not broadcast
        log.append("body")
    except ValueError:
        u = t * 2                      # t was written before the failing statement
        log.append("handler")
    else:
        u = u + 1
        log.append("else")
    finally:
        v = u.sum()
        log.append("finally")
    return u, v, log


def test_try_except_else_finally_without_error():
    assert_same_as_numpy(try_finally, A, B, [])


def test_exception_raised_inside_a_block_reaches_handler():
    # the compiled block fails (shape mismatch): the handler must still see `t`
    jf = assert_same_as_numpy(try_finally, A, B[:5], [])
    assert_same_as_numpy(try_finally, A, B, [], jitted=jf)


def with_suppress_partial(a, b):
    t = a * 0
    with contextlib.suppress(ValueError):
        t = a + 1
        u = t * b                      # fails for a mismatched b; `t` above must stay assigned
        t = u
    return t


def test_suppressed_exception_inside_with_block_keeps_earlier_assignments():
    jf = assert_same_as_numpy(with_suppress_partial, A, B[:5])
    # (the refused block of small arrays runs inline for a few calls: then the new types compile)
    for _ in range(SETTLED_CALLS_OUTSIDE + 2):
        assert_same_as_numpy(with_suppress_partial, A, B, jitted=jf)
    assert compiled_fragments(jf) >= 2


def try_reassigned_after_raise(a, n):
    v = 0.0
    try:
        v = (a * 2.0).sum()
        w = a.reshape(n, -1)           # ValueError where n does not divide a.size
        v = w.sum()                    # beniget links `return v` to this assignment and the first only
    except ValueError:
        pass
    return v


def finally_reads_handler_value(a, n, out):
    v = 0.0
    try:
        a.reshape(3, -1)               # always fails for 32 elements
    except ValueError:
        v = (a * 2.0).sum()
        w = a.reshape(n, -1)
        v = w.sum()
    finally:
        out[0] = v                     # sees the handler's first assignment when its reshape fails
    return v


def finally_reads_else_value(a, n, out):
    v = 0.0
    try:
        a.sum()
    except ValueError:
        pass
    else:
        v = (a * 2.0).sum()
        w = a.reshape(n, -1)
        v = w.sum()
    finally:
        out[0] = v
    return v


@pytest.mark.parametrize("n", [7, 4, 7])
def test_handler_sees_a_try_body_assignment_overwritten_later_in_the_body(n):
    jf = jit(try_reassigned_after_raise)
    for a in (A, B, A * 3):
        assert_same_as_numpy(try_reassigned_after_raise, a, n, jitted=jf)


@pytest.mark.parametrize("fn", [finally_reads_handler_value, finally_reads_else_value])
def test_finally_sees_handler_and_else_assignments_before_a_raise(fn):
    jf = jit(fn)
    for n in (5, 4, 5, 8):
        for a in (A, -B):
            assert_same_as_numpy(fn, a, n, np.zeros(1), jitted=jf)


def test_blocks_inside_try_still_compile():
    jf = jit(try_finally)
    jf(A, B, [])
    assert compiled_fragments(jf) >= 2


def try_reraise(a, b):
    try:
        c = a + b
    finally:
        d = a * 2
    return c, d


def test_exception_propagates_through_finally():
    assert_same_as_numpy(try_reraise, A, B[:3])   # numpy raises; the jitted function raises the same


def try_inplace_then_error(a, b):
    try:
        a += 1
        c = a * b
    except ValueError:
        c = a
    return c


def test_inplace_effect_before_error_applied_once():
    assert_same_as_numpy(try_inplace_then_error, A.copy(), B[:4])


# -- with -------------------------------------------------------------------------------------------
class Recorder:
    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, *exc):
        self.events.append("exit")
        return False

    def __eq__(self, other):
        return type(other) is Recorder and self.events == other.events


def with_statements(a, rec):
    with rec as r:
        y = a * 3 + 1
        r.events.append("body")
    with np.errstate(divide="ignore"):
        z = y / 0.0
    with contextlib.suppress(ValueError):
        z = z + a[:3]
    return y, z, rec


def test_with_statements():
    jf = assert_same_as_numpy(with_statements, A, Recorder())
    assert compiled_fragments(jf) >= 1


# -- nested loops -----------------------------------------------------------------------------------
def nested_loops(m, n, a):
    out = np.zeros((m, n))
    for i in range(m):
        row = a * i
        for j in range(n):
            out[i, j] = row[j] + j
            row = row * 0.5
    return out


def test_nested_loops():
    jf = assert_same_as_numpy(nested_loops, 3, 4, A[:4])
    assert_same_as_numpy(nested_loops, 2, 4, A[:4], jitted=jf)


# -- comprehensions and generator expressions stay Python --------------------------------------------
def comprehensions(a, n):
    x = 3
    parts = [a * k for k in range(n)]
    total = sum(p.sum() for p in parts)
    squares = {k: (a ** 2).sum() * k for k in range(n)}
    w = np.sum(a) + x
    return parts, total, squares[n - 1], w


def test_comprehensions_and_generators_left_as_python():
    jf = assert_same_as_numpy(comprehensions, A, 3)
    text = str(explain(jf))
    assert "comprehension" in text or "generator" in text


def comprehension_shadowing(a):
    x = a + 1
    ys = [x * 2 for x in range(3)]
    return x * 10, ys


def test_comprehension_variable_does_not_leak():
    assert_same_as_numpy(comprehension_shadowing, A)


def test_loop_body_is_compiled_not_python():
    jf = jit(for_range)
    jf(A, 3)
    loop_body = [f for f in jf.fragments if "i" in f.live_in]
    assert len(loop_body) == 1
    assert {e.mode for e in loop_body[0].entries} <= {"tvm", "mixed"}
    assert modes(jf) & {"tvm", "mixed"}


# -- more statement forms ---------------------------------------------------------------------------
def generator(a, n):
    x = a * 1.0
    for i in range(n):
        x = x * 0.5 + i
        yield x.sum()
    y = x + 1
    yield y


def test_generator_function():
    jf = jit(generator)
    got, want = list(jf(A, 3)), list(generator(A, 3))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert compiled_fragments(jf) >= 1


def return_in_try_finally(a, log):
    try:
        b = a * 2
        return b + 1
    finally:
        log.append((a * 3).sum())


def test_return_inside_try_with_finally():
    assert_same_as_numpy(return_in_try_finally, A, [])


def loop_except_continue(arrays, b):
    out = []
    for a in arrays:
        try:
            c = a + b
            d = c * 2
        except ValueError:
            continue
        out.append(d)
    return out


def test_loop_with_failing_iterations_caught_and_continued():
    arrays = [np.ones(3), np.ones(2), np.arange(3.0), np.ones((2, 3)), np.ones(4)]
    assert_same_as_numpy(loop_except_continue, arrays, np.arange(3.0))


def for_else_break(a, n):
    y = a * 1
    for i in range(n):
        y = y + 1
        if y.max() > 3:
            break
    else:
        y = y * 100
    return y


def while_else(a):
    i = 0
    y = a * 1
    while i < 3:
        y = y * 2
        i += 1
    else:
        y = y - 1
    return y, i


def test_loop_else_clauses():
    z = np.zeros(3)
    jf = assert_same_as_numpy(for_else_break, z, 2)
    assert_same_as_numpy(for_else_break, z, 6, jitted=jf)
    assert_same_as_numpy(while_else, np.ones(3))


def with_assert(a):
    b = a + 1
    assert b.sum() > 0, "negative"
    return b


def test_assert_statement():
    jf = assert_same_as_numpy(with_assert, np.ones(3))
    # pytest rewrites the asserts of this module (the plain function's message gets an explanation
    # appended); astjit compiles the source as written, so compare the first line
    with pytest.raises(AssertionError) as want:
        with_assert(-np.ones(3))
    with pytest.raises(AssertionError) as got:
        jf(-np.ones(3))
    assert str(got.value).splitlines()[0] == str(want.value).splitlines()[0] == "negative"


def maybe_unbound(a, flag):
    if flag:
        t = a + 1
    u = t * 2
    return u


def test_unbound_local_error_is_pythons():
    jf = jit(maybe_unbound)
    assert_same_as_numpy(maybe_unbound, A, True, jitted=jf)
    assert_same_as_numpy(maybe_unbound, A, False, jitted=jf)      # UnboundLocalError, same message


def branch_of_four(x, mode):
    if mode == 0:
        y = x * 2.0
    elif mode == 1:
        y = x + 1.0
    elif mode == 2:
        y = x - 3.0
    else:
        y = -x
    return y


def test_a_block_outside_loops_reads_its_switch_only_where_it_runs():
    """Each block's ``if next(switch):`` stays where the block is: read at the function's start, the
    twelve blocks of an if/elif chain cost a ``next`` each on every call, run or not."""
    class Counted:
        reads = 0

        def __next__(self):
            self.reads += 1
            return False                   # (the Fragment call)

    jitted = jit(branch_of_four)
    x = np.arange(5.0)
    for mode in (0, 1, 2, 3) * 3:
        np.testing.assert_array_equal(jitted(x, mode), branch_of_four(x, mode))
    first = next(f for f in jitted.fragments if f.block.lineno == branch_of_four.__code__.co_firstlineno + 2)
    counted = first.python_switch.cell_contents = Counted()
    for _ in range(3):
        np.testing.assert_array_equal(jitted(x, 3), branch_of_four(x, 3))
    assert counted.reads == 0
    np.testing.assert_array_equal(jitted(x, 0), branch_of_four(x, 0))
    assert counted.reads == 1
