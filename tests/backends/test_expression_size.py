"""backends/tvm/expression_size: the size of an expression as TVM's passes walk it, Let variables
substituted by their values and inlined stages by their bodies."""

import pytest

tvm = pytest.importorskip("tvm")
from tvm import te, tirx  # noqa: E402

from astjit.backends.tvm import scalar_math as sm  # noqa: E402
from astjit.backends.tvm.expression_size import substituted_size  # noqa: E402


def let_chain(depth, reads):
    """t0 = x; t(k+1) = t(k) + t(k) + ... (``reads`` times): 3^depth paths for reads=3 and depth levels."""
    x = tirx.Var("x", "float64")
    variables = [tirx.Var(f"t{k}", "float64") for k in range(depth)]
    values = [x]
    for k in range(1, depth):
        v = variables[k - 1]
        value = v
        for _ in range(reads - 1):
            value = value + v
        values.append(value)
    expr = variables[-1]
    for var, value in reversed(list(zip(variables, values))):
        expr = tirx.Let(var, value, expr)
    return expr


@pytest.mark.parametrize("reads", [1, 2, 3])
def test_a_let_chain_counts_every_path(reads):
    # level k's value has (reads - 1) adds and reads copies of level k-1: size(k) = reads*size(k-1) + reads-1
    for depth in (1, 4, 9):
        expected = 1
        for _ in range(depth - 1):
            expected = reads * expected + reads - 1
        assert substituted_size(let_chain(depth, reads)) == expected


def test_counting_stops_past_the_limit():
    assert substituted_size(let_chain(40, 3), limit=1000) <= 4000
    assert substituted_size(let_chain(20, 3)) > 3 ** 19


def test_float64_exp_of_log_substitutes_to_hundreds_of_thousands():
    """What made float64 log(exp(x)) take TVM 10 s: each alone is a few thousand nodes."""
    x = tirx.Var("x", "float64")
    exp, log = (sm.apply_once(f, [x]) for f in (sm.exp_float64, sm.log_float64))
    chained = sm.apply_once(sm.log_float64, [sm.apply_once(sm.exp_float64, [x])])
    assert substituted_size(exp) < 2_000 and substituted_size(log) < 5_000
    assert substituted_size(chained) > 100 * substituted_size(log)


def test_a_stage_load_counts_as_its_body_when_inlined():
    a = te.placeholder((8,), "float64", name="a")
    kept = te.compute((8,), lambda i: a[i] * 2.0 + 1.0, name="keep7")
    i = tirx.Var("i", "int64")
    expr = kept[i] + kept[i]
    assert substituted_size(expr, inlined={"keep7": 100}) == substituted_size(expr) + 200
    assert substituted_size(expr, inlined={"other": 100}) == substituted_size(expr)


def written_size(e, limit=100_000) -> int:
    """The node count of ``e`` as written (each path once, a Let's variable a leaf): what a chain of
    rules repeats where it reads an operand several times without binding it."""
    from astjit.backends.tvm.expression_size import _children

    count, stack = 0, [e]
    while stack and count < limit:
        node = stack.pop()
        count += 1
        stack.extend(_children(node))
        if isinstance(node, tirx.Let):
            stack.append(node.body)
    return count


def test_integer_floor_division_and_remainder_bind_their_operands():
    """Integer ``//`` and ``%`` read each operand four times: nested, the expression as written grew
    fourfold a level (``(b % (a // a)) % b`` of int64 took 10 s to compile); bound once, it grows by a
    constant."""
    from astjit.backends.tvm import support

    remainder, floor_divide = support._remainder("int64"), support._floor_divide("int64")
    a, b = tirx.Var("a", "int64"), tirx.Var("b", "int64")
    e, sizes = a, []
    for _ in range(4):
        e = remainder(floor_divide(e, b), a)
        sizes.append(written_size(e))
    steps = [y - x for x, y in zip(sizes, sizes[1:])]
    assert len(set(steps)) == 1, sizes
