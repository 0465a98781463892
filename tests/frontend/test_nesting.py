"""frontend/nesting: deeply nested source (a sum of hundreds of terms) parses and transforms with room
on the recursion limit, which goes back to what it was, also with threads inside at once."""

import ast
import importlib.util
import sys
import threading

import numpy as np
import pytest

from astjit import explain, jit
from astjit.frontend.nesting import FRAMES_PER_LEVEL, nesting_depth, room_for_nesting


def test_the_depth_of_a_long_sum_is_its_length():
    tree = ast.parse("a" + " + a" * 500)
    assert 500 <= nesting_depth(tree) <= 505          # (Module, Expr, then one BinOp per term)


def test_ordinary_code_leaves_the_limit_as_it_is():
    limit = sys.getrecursionlimit()
    with room_for_nesting(20):
        assert sys.getrecursionlimit() == limit
    assert sys.getrecursionlimit() == limit


def test_deep_code_raises_the_limit_until_it_leaves():
    limit = sys.getrecursionlimit()
    with room_for_nesting(600):
        assert sys.getrecursionlimit() == limit + FRAMES_PER_LEVEL * 600
        with room_for_nesting(100):                   # (inside: no lower)
            assert sys.getrecursionlimit() == limit + FRAMES_PER_LEVEL * 600
    assert sys.getrecursionlimit() == limit


def test_the_limit_goes_back_when_the_last_thread_leaves():
    limit = sys.getrecursionlimit()
    first_in, second_in, first_may_leave, first_left = (threading.Event() for _ in range(4))
    seen = []

    def first():
        with room_for_nesting(600):
            first_in.set()
            first_may_leave.wait(10)
        first_left.set()

    def second():
        first_in.wait(10)
        with room_for_nesting(900):
            second_in.set()
            first_may_leave.set()
            first_left.wait(10)
            seen.append(sys.getrecursionlimit())       # the first left: still the second's room
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [limit + FRAMES_PER_LEVEL * 900]
    assert sys.getrecursionlimit() == limit


def test_a_limit_the_program_set_meanwhile_is_kept():
    limit = sys.getrecursionlimit()
    try:
        with room_for_nesting(600):
            sys.setrecursionlimit(limit + 7)
        assert sys.getrecursionlimit() == limit + 7
    finally:
        sys.setrecursionlimit(limit)


def written(tmp_path, name, expression):
    path = tmp_path / f"{name}.py"
    path.write_text(f"import numpy as np\n\n\ndef f(a, b):\n    return {expression}\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.parametrize("terms", [300, pytest.param(1500, marks=pytest.mark.slow)])   # (1500: 10 s)
def test_a_long_sum_parses_and_compiles(tmp_path, terms):
    """250 terms ran out of the default limit in gast's conversion: the function ran as Python."""
    f = written(tmp_path, f"sum_{terms}", " + ".join(["a * b"] * terms))
    limit = sys.getrecursionlimit()
    jf = jit(f, strict=True, backend="tvm")     # (unmeasured: explain's last line names no measurement)
    a, b = np.arange(50.0), np.arange(50.0) - 7
    np.testing.assert_array_equal(jf(a, b), f(a, b))
    assert str(explain(jf)).endswith("every block compiled; nothing fell back.")
    assert sys.getrecursionlimit() == limit


def test_a_deep_chain_of_views_falls_back_with_a_reason(tmp_path):
    """A chain of views deeper than the compile passes take (their recursion is not capped as a chain
    of elementwise ops is) runs as Python, with numpy's values, and explain says why."""
    f = written(tmp_path, "views", "(a" + ".T" * 1001 + ") + b")
    jf = jit(f)
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    np.testing.assert_array_equal(jf(a, b), f(a, b))
    assert "RecursionError" in str(explain(jf))
