"""Live-in / live-out of blocks (frontend/liveness), checked directly on the statements marked
``# block`` and end to end: the jitted function must agree with the original on every case."""

import linecache

import gast
import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import jit
from astjit.frontend.liveness import FunctionLiveness
from astjit.frontend.source import parse_function

RNG = np.random.default_rng(3)
A = RNG.standard_normal(8)
B = RNG.standard_normal(8)
COUNTER = 1


def marked_block(fn):
    """Liveness of the consecutive statements of ``fn`` whose line is marked '# block'."""
    module, fndef = parse_function(fn)
    filename = fn.__code__.co_filename
    liveness = FunctionLiveness(module, fndef)
    marked = [n for n in gast.walk(fndef) if isinstance(n, gast.stmt)
              and "# block" in linecache.getline(filename, n.lineno)]
    marked.sort(key=lambda n: n.lineno)
    assert marked, "no statement marked '# block'"
    for body in (getattr(n, f, None) for n in gast.walk(fndef) for f in ("body", "orelse", "finalbody")):
        if isinstance(body, list) and marked[0] in body:
            i = body.index(marked[0])
            assert body[i:i + len(marked)] == marked, "marked statements must be consecutive"
            break
    result = liveness.block(marked)
    return set(result["live_in"]), set(result["live_out"])


def killed_in_block(a, b):
    t = a * b  # block
    t = t + len(a)  # block
    c = np.exp(t)  # block
    return c


def loop_carried(s, a, n):
    for i in range(n):
        t = s + a  # block
        s = t * 0.5  # block
    return t


def read_in_one_branch(a, flag):
    x = a + 1  # block
    y = a * 2  # block
    if flag:
        y = x * 3
    else:
        y = -a
    return y


def augmented(a, b):
    a += b  # block
    c = a * 1  # block
    c *= 2  # block
    return a, c


def with_comprehension(a, k):
    x = 3  # block
    ys = [x * k for x in range(len(a))]  # block
    w = np.sum(a) + x  # block
    return ys, w


def after_nested_def(a):
    def g():
        return y

    y = a * 2  # block
    z = a + 1  # block
    return g(), z


def uses_global(a):
    global COUNTER
    COUNTER = COUNTER + 1  # block
    b = a * COUNTER  # block
    return b


def while_body(a):
    err = 1.0
    while err > 1e-3:
        a = a * 0.5  # block
        err = np.abs(a).max()  # block
    return a


def read_in_handler(a):
    try:
        t = a + 1  # block
        u = t * 2  # block
    except ValueError:
        return t
    return u


def loop_with_continue(s, a, n):
    for i in range(n):
        s = s + a  # block
        t = s * 2  # block
        if i % 2:
            continue
        s = t
    return s


def while_true(x):
    while True:
        y = x * 2  # block
        x = y + 1  # block
        if x.sum() > 100:
            break
    return y


def make_nonlocal():
    total = 0.0

    def add(a):
        nonlocal total
        total = total + a.sum()  # block
        r = total * 2  # block
        return r

    return add


def dead_after_block(a):
    t = a + 1  # block
    u = t * 2  # block  # noqa: F841
    return a


def overwritten_before_read(a):
    t = a + 1  # block
    t = a * 3
    return t


CASES = [
    (killed_in_block, {"a", "b"}, {"c"}),
    (loop_carried, {"s", "a"}, {"t", "s"}),
    (read_in_one_branch, {"a"}, {"x"}),
    (augmented, {"a", "b"}, {"a", "c"}),
    (with_comprehension, {"k", "a"}, {"ys", "w"}),
    (after_nested_def, {"a"}, {"y", "z"}),
    (uses_global, {"COUNTER", "a"}, {"COUNTER", "b"}),
    (while_body, {"a"}, {"a", "err"}),
    (read_in_handler, {"a"}, {"t", "u"}),
    (loop_with_continue, {"s", "a"}, {"s", "t"}),
    (while_true, {"x"}, {"y", "x"}),
    (make_nonlocal(), {"total", "a"}, {"total", "r"}),
    (dead_after_block, {"a"}, set()),
    (overwritten_before_read, {"a"}, set()),
]


@pytest.mark.parametrize("fn, live_in, live_out", CASES, ids=[c[0].__name__ for c in CASES])
def test_block_liveness(fn, live_in, live_out):
    assert marked_block(fn) == (live_in, live_out)


def test_local_names_exclude_global_and_nonlocal_and_include_augmented_targets():
    module, fndef = parse_function(uses_global)
    assert "COUNTER" not in FunctionLiveness(module, fndef).local_names
    module, fndef = parse_function(make_nonlocal())
    assert "total" not in FunctionLiveness(module, fndef).local_names
    module, fndef = parse_function(augmented)
    names = FunctionLiveness(module, fndef).local_names
    assert {"a", "b", "c"} <= names


def test_beniget_warnings_are_not_printed(capsys):
    def refers_to_unbound(a):
        return undefined_name + a  # noqa: F821

    module, fndef = parse_function(refers_to_unbound)
    FunctionLiveness(module, fndef)
    assert capsys.readouterr().out == ""


# -- end to end: the same functions, jitted, agree with numpy --------------------------------------
def test_liveness_cases_run_correctly(monkeypatch):
    monkeypatch.setitem(globals(), "COUNTER", 1)
    assert_same_as_numpy(killed_in_block, A, B)
    assert_same_as_numpy(loop_carried, A, B, 4)
    assert_same_as_numpy(read_in_one_branch, A, True)
    assert_same_as_numpy(read_in_one_branch, A, False)
    assert_same_as_numpy(augmented, A, B)
    assert_same_as_numpy(with_comprehension, A, 2.0)
    assert_same_as_numpy(after_nested_def, A)
    assert_same_as_numpy(while_body, A * 10)
    assert_same_as_numpy(read_in_handler, A)
    assert_same_as_numpy(read_in_handler, A.astype(np.int64))
    assert_same_as_numpy(loop_with_continue, A, B, 5)
    assert_same_as_numpy(while_true, np.abs(A))
    assert_same_as_numpy(dead_after_block, A)
    assert_same_as_numpy(overwritten_before_read, A)


def test_global_case_runs_correctly(monkeypatch):
    monkeypatch.setitem(globals(), "COUNTER", 1)
    want = [uses_global(A) for _ in range(3)]
    monkeypatch.setitem(globals(), "COUNTER", 1)
    jf = jit(uses_global)
    got = [jf(A) for _ in range(3)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert COUNTER == 4


def test_nonlocal_case_runs_correctly():
    plain, jitted = make_nonlocal(), jit(make_nonlocal())
    for _ in range(3):
        assert jitted(A) == plain(A)


def swap(a, b, n):
    for _ in range(n):
        a, b = b, a + b
    return a, b


def test_tuple_swap_in_loop():
    assert_same_as_numpy(swap, A, B, 5)


def target_reads_earlier_target(a):
    i = 1
    i, a[i] = 0, 5.0
    return a, i


def test_target_that_reads_an_earlier_target():
    # frontend-notes 3(a): beniget reports `i` as live-in; the statement must not be compiled wrongly
    assert_same_as_numpy(target_reads_earlier_target, A)


def walrus_and_del(a):
    t = a + 1
    y = (n := a.sum()) + n
    u = t * 2
    del t
    return y, u


def test_walrus_and_del_stay_python():
    assert_same_as_numpy(walrus_and_del, A)
