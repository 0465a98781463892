"""The work estimate of a loop (frontend/loops.work_expression): the lengths of its ranges."""

import itertools

import gast

from astjit.frontend.loop_iteration import BUILTIN_CELLS
from astjit.frontend.loops import ARRAY_WORK_CELLS, _WorkEstimate, int_constant, shape_axis


def _evaluate(expr, names):
    import ast

    tree = ast.fix_missing_locations(gast.gast_to_ast(gast.Expression(body=expr)))
    return eval(compile(tree, "<estimate>", "eval"), {**BUILTIN_CELLS, **ARRAY_WORK_CELLS}, names)


def _range_args(text):
    return gast.parse(text).body[0].value.args


def test_a_stepped_range_is_counted_by_arithmetic_as_long_as_range():
    """A constant step's length by arithmetic (no range object at each use), negative or zero where
    the range is empty, as the two-argument form's ``stop - start``."""
    for step in (1, 2, 3, -1, -2, -5):
        count = _WorkEstimate.count(_range_args(f"range(a, b, {step})"))
        assert "range" not in {n.func.id.removeprefix("__astjit_") for n in gast.walk(count)
                               if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)}
        for a, b in itertools.product(range(-7, 8), repeat=2):
            got = _evaluate(count, {"a": a, "b": b})
            want = len(range(a, b, step))
            assert got == want if want else got <= 0, (a, b, step, got, want)


def test_a_step_that_is_not_a_constant_asks_range():
    count = _WorkEstimate.count(_range_args("range(a, b, c)"))
    assert _evaluate(count, {"a": 9, "b": 0, "c": -4}) == 3


def test_int_constants_and_shape_axes():
    def expr(text):
        return gast.parse(text).body[0].value

    assert [int_constant(expr(t)) for t in ("3", "-3", "+3", "--3", "x", "3.0", "True", "-x")] == [
        3, -3, 3, 3, None, None, None, None]
    assert [shape_axis(expr(t)) for t in ("a.shape[0]", "a.shape[-1]", "a.shape[k]")] == [0, -1, None]
