"""A name that may be unbound when a block starts (assigned in a loop that may not run, in one branch,
deleted, bound by a handler that did not run) raises UnboundLocalError at the statement that reads it,
after the block's earlier statements ran (their in-place updates and numpy's own errors), as in Python."""

import contextlib
import traceback

import gast
import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import jit
from astjit.frontend.bound import DefinitelyBound


def loop(a, n):
    for i in range(n):
        v = a * 2
    a[0] = 7.0
    return v + 1


def branch(a, n):
    if n > 1:
        v = a * 2
    a[0] = 7.0
    return v + 1


def both_branches(a, n):
    if n > 1:
        v = a * 2
    else:
        v = a * 3
    a[0] = 7.0
    return v + 1


def branch_returns(a, n):
    if n > 1:
        v = a * 2
    else:
        return a
    a[0] = 7.0
    return v + 1


def deleted(a, n):
    v = a * 2
    if n > 1:
        del v
    a[0] = 7.0
    return v + 1


def deleted_in_loop(a, n):
    v = a * 2
    for i in range(n):
        a[1] = i
        w = v * 2
        if i == 1:
            del v
    a[0] = 7.0
    return w + 1


def while_else(a, n):
    i = 0
    while i < n:
        i += 1
        if i == 3:
            v = a * 2
            break
    else:
        v = a * 5
    a[0] = 7.0
    return v + 1


def while_break(a, n):
    i = 0
    while True:
        i += 1
        if i > n:
            break
        v = a * i
    a[0] = 7.0
    return v + 1


def try_except(a, n):
    try:
        if n > 1:
            raise KeyError
        v = a * 2
    except KeyError:
        pass
    a[0] = 7.0
    return v + 1


def try_except_binds(a, n):
    try:
        if n > 1:
            raise KeyError
        v = a * 2
    except KeyError:
        v = a * 3
    a[0] = 7.0
    return v + 1


def except_name_unbinds(a, n):
    e = a * 2
    try:
        if n > 1:
            raise KeyError
    except KeyError as e:  # noqa: F841 (unbinds e, the point of the test)
        pass
    a[0] = 7.0
    return e + 1


def try_finally(a, n):
    try:
        if n > 1:
            v = a * 2
    finally:
        a[1] = 5.0
        w = a * 3
    a[0] = 7.0
    return v + w


def try_finally_read(a, n):
    v = a
    try:
        if n > 2:
            return a
        if n > 1:
            del v
    finally:
        a[1] = 5.0
        w = v * 3
    return w


def with_suppress(a, n):
    with contextlib.suppress(KeyError):
        if n > 1:
            raise KeyError
        v = a * 2
    a[0] = 7.0
    return v + 1


def with_errstate(a, n):
    with np.errstate(all="ignore"):
        if n > 1:
            v = a * 2
        w = a * 4
    a[0] = 7.0
    return v + w


def nested_loop_def(a, n):
    for i in range(n):
        for j in range(n):
            v = a * j
        a[0] = 7.0
        a = v + 1
    return a


def loop_var(a, n):
    for i in range(n):
        pass
    a[0] = 7.0
    return a + i


def match_case(a, n):
    match n:
        case 0:
            v = a * 2
        case 1:
            pass
        case _:
            v = a * 3
    a[0] = 7.0
    return v + 1


def aug_assign(a, n):
    if n > 1:
        v = a * 1
    a[0] = 7.0
    v += 1
    return v


def two_maybe(a, n):
    if n > 1:
        v = a * 2
    if n > 2:
        w = a * 3
    a[0] = 7.0
    x = v + 1
    a[1] = 9.0
    return x + w


CASES = [loop, branch, both_branches, branch_returns, deleted, deleted_in_loop, while_else, while_break,
         try_except, try_except_binds, except_name_unbinds, try_finally, try_finally_read, with_suppress,
         with_errstate, nested_loop_def, loop_var, match_case, aug_assign, two_maybe]


def outcome(fn, a, n):
    """(result or exception type, message, line), and the argument afterwards."""
    try:
        r = fn(a, n)
        return ("returned", np.asarray(r).tolist(), None), a.tolist()
    except Exception as exc:
        return (type(exc).__name__, str(exc), traceback.extract_tb(exc.__traceback__)[-1].lineno), a.tolist()


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_unbound_local_raises_where_python_raises_it(fn):
    jf = jit(fn, backend="tvm")
    for n in (0, 1, 2, 3, 4, 0, 2, 1, 3):
        assert outcome(jf, np.ones(3), n) == outcome(fn, np.ones(3), n), f"n={n}"


def import_binds(a, n):
    if n > 1:
        import math as m
    a[0] = 7.0
    return a * m.pi


@pytest.mark.xfail(strict=True, reason="known: an attribute of a local (m.pi, self.w) is read by the "
                   "caller before the Fragment call, so an unbound m raises before a[0] = 7.0 runs")
def test_unbound_base_of_a_hoisted_attribute():
    assert outcome(jit(import_binds, backend="tvm"), np.ones(3), 0) == outcome(import_binds, np.ones(3), 0)


def test_definitely_bound():
    tree = gast.parse("""
def f(a, *args, k=1, **kw):
    x = 1
    if a:
        y = 2
        z = 3
    else:
        y = 4
        return
    s1
    for i in a:
        w = 1
    s2
    try:
        t = 1
    except E as e:
        t = 2
    finally:
        s3
    s4
    del x
    s5
    with g() as (h, j):
        q = 1
    s6
""")
    fndef = tree.body[0]
    bound = DefinitelyBound(fndef)
    at = {s.value.id: bound(s) for s in gast.walk(fndef)
          if isinstance(s, gast.Expr) and isinstance(s.value, gast.Name)}
    assert at["s1"] == {"a", "args", "k", "kw", "x", "y", "z"}
    assert at["s2"] == at["s1"]                      # the loop may not run: no i, no w
    assert at["s3"] == at["s1"]                      # the try body may have raised anywhere
    assert at["s4"] == at["s1"] | {"t"}              # e is unbound after its handler
    assert at["s5"] == at["s4"] - {"x"}
    assert at["s6"] == at["s5"] | {"h", "j"}         # g() may suppress an exception before q = 1


def last_index(a, t):
    for i in range(len(a)):
        if a[i] > t:
            break
    return i                              # unbound for an empty array: UnboundLocalError


def found_twice(a, t):
    for i in range(len(a)):
        if a[i] > t:
            found = a[i]
    return found * 2                      # unbound where no element passed


def first_over(m, t):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] > t:
                return i, j
    return i, j


def last_doubled(a):
    for x in a:
        y = x * 2
    return y


@pytest.mark.usefixtures("kernels_for_tiny_loops")
def test_names_only_a_compiled_loop_binds_are_unbound_after_it_where_it_did_not():
    """A search's ``i`` read after the loop: the loop compiles, and where it bound nothing (an empty
    range, no element passing a test) reading the name raises UnboundLocalError, as in Python."""
    a = np.array([0.1, 0.9, 0.3])
    check(last_index, [(a, 0.5), (a, 2.0), (a[:0], 0.5), (a[:1], 0.0), (a, 0.05)])
    check(found_twice, [(a, 0.5), (a, 2.0), (a[:0], 0.5), (a.astype(np.float32), 0.2)])
    check(first_over, [(np.eye(3), 0.5), (np.zeros((2, 2)), 0.5), (np.zeros((0, 2)), 0.5), (np.zeros((2, 0)), 0.5)])
    check(last_doubled, [(a,), (a[:0],), (np.arange(4),)])


def test_a_search_handed_over_to_its_kernel_binds_its_variable():
    """A search runs its first positions as Python, then hands the rest to its kernel (which binds the
    name at the position it starts from); an empty array leaves it unbound."""
    from loop_programs import last_below

    a = np.linspace(0, 1, 1000)
    jf = check(last_below, [(a, 0.999), (a, 0.001), (a, 2.0), (a[:0], 0.5), (a[:3], 0.5), (a[:8], 0.9)],
               compiled=False)
    assert jf.fragments[0].block.resume_at > 0 and jf.fragments[0].calls > 0


def newton_roots(a, out, tol):
    for k in range(len(a)):
        x = a[k] if a[k] > 1 else 1.0
        while True:                     # runs at least once, left by the break: nx is bound after it
            nx = 0.5 * (x + a[k] / x)
            if abs(nx - x) <= tol * nx:
                break
            x = nx
        out[k] = nx
    return out


def test_what_every_break_of_a_while_true_leaves_bound_is_bound_after_it():
    fndef = gast.parse("def f():\n    while True:\n        a = 1\n        if a:\n            b = 2\n            break\n"
                       "        c = 3\n    x = b").body[0]
    assert DefinitelyBound(fndef)(fndef.body[1]) == {"a", "b"}
    a = np.random.default_rng(1).random(40) * 10
    check(newton_roots, [(a, np.zeros(40), 1e-12), (np.array([0.5, 4.0, 1e6]), np.zeros(3), 1e-14),
                         (np.zeros(0), np.zeros(0), 1e-12)])


def columns_of_first_hits(m, thr):
    out = 0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] > thr:
                break
        else:
            continue                    # no hit in this row: j is read only after a break, which binds it
        out += j
    return out


def test_what_every_break_leaves_bound_is_bound_after_a_for_whose_else_leaves():
    fndef = gast.parse("def f(a):\n    for i in a:\n        if i:\n            j = 1\n            break\n"
                       "    else:\n        return\n    x = j").body[0]
    assert DefinitelyBound(fndef)(fndef.body[1]) == {"a", "i", "j"}
    rng = np.random.default_rng(4)
    check(columns_of_first_hits, [(rng.random((5, 4)), 0.7), (rng.random((5, 4)), 2.0), (np.zeros((0, 2)), 0.5),
                                  (rng.random((3, 0)), 0.5)])
