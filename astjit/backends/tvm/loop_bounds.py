"""Prove at the entry of an innermost loop that its element indices stay inside their arrays.

An index such as ``i - 1``, ``j + k`` or ``(i + 1) % n`` in the loop over ``j`` takes values in an
interval that the loop's range and the values of the names the loop does not assign (``i``, ``k``,
``n``, extents) fix before its first iteration. When every such interval lies within ``0 <=
index < extent``, no access in the loop can raise ``IndexError`` or wrap a negative index, so the
loop runs a copy of its body without those per-access checks (backends/tvm/loops); otherwise it
runs the checked body, which stops where Python stops.

The intervals are computed in int64 from operands whose magnitudes are bounded (``Val.bits``), so
that the computation itself cannot overflow; an index that is not such an expression of Python ints
is simply left checked.
"""

from dataclasses import dataclass

import gast
from tvm import tirx

from .loop_types import Scalar

I64 = "int64"
PYTHON_INT = Scalar(I64, True)
MAX_BITS = 62                    # an interval end computed from operands below this stays in int64


@dataclass
class Interval:
    lo: object                   # int64 TIR expressions, inclusive
    hi: object
    bits: int                    # |lo|, |hi| < 2**bits
    conditions: tuple = ()       # what must also hold for the interval to be right (a divisor > 0)


class IndexBounds:
    """Intervals of index expressions in one innermost loop.

    ``counter``: the loop's variable and ``span``, its Interval over the loop; ``assigned``: the names
    the loop binds (not invariant); ``leaf(node)``: the lowering's value of a name, constant, extent
    or ``len()`` (a Val), read at the loop's entry."""

    def __init__(self, counter, span: Interval, assigned, leaf):
        self.counter = counter
        self.span = span
        self.assigned = assigned
        self.leaf = leaf
        self.positive_divisors = set()      # ids of ``x % d`` nodes whose interval assumes d > 0

    def of(self, node) -> Interval | None:
        if isinstance(node, gast.Name):
            if node.id == self.counter:
                return self.span
            if node.id in self.assigned:
                return None
            return self.point(node)
        if isinstance(node, gast.Constant):
            if type(node.value) is not int:
                return None
            return self.point(node)
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute):     # x.shape[k]
            return self.point(node)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "len":
            return self.point(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            a = self.of(node.operand)
            if a is None:
                return None
            zero = tirx.const(0, I64)
            return Interval(zero - a.hi, zero - a.lo, a.bits, a.conditions)
        if isinstance(node, gast.BinOp):
            return self.binary(node)
        return None

    def point(self, node) -> Interval | None:
        v = self.leaf(node)
        if v is None or v.types != (PYTHON_INT,) or v.bits is None or v.bits > MAX_BITS:
            return None
        return Interval(v.expr, v.expr, v.bits)

    def binary(self, node) -> Interval | None:
        op = type(node.op).__name__
        if op == "Mod":                     # Python's x % d lies in [0, d - 1] for d > 0, whatever x is
            d = self.of(node.right)
            if d is None:
                return None
            one = tirx.const(1, I64)
            self.positive_divisors.add(id(node))
            return Interval(tirx.const(0, I64), d.hi - one, d.bits,
                            d.conditions + (d.lo > tirx.const(0, I64),))
        a, b = self.of(node.left), self.of(node.right)
        if a is None or b is None:
            return None
        conditions = a.conditions + b.conditions
        if op in ("Add", "Sub"):
            bits = max(a.bits, b.bits) + 1
            if bits > MAX_BITS:
                return None
            if op == "Add":
                return Interval(a.lo + b.lo, a.hi + b.hi, bits, conditions)
            return Interval(a.lo - b.hi, a.hi - b.lo, bits, conditions)
        if op == "Mult":
            x, constant = (a, _constant(node.right)) if _constant(node.right) is not None else (b, _constant(node.left))
            if constant is None:
                return None
            bits = a.bits + b.bits
            if bits > MAX_BITS:
                return None
            c = tirx.const(constant, I64)
            ends = (x.lo * c, x.hi * c) if constant >= 0 else (x.hi * c, x.lo * c)
            return Interval(*ends, bits, conditions)
        if op == "FloorDiv":
            constant = _constant(node.right)
            if constant is None or constant <= 0:
                return None
            c = tirx.const(constant, I64)
            return Interval(tirx.floordiv(a.lo, c), tirx.floordiv(a.hi, c), a.bits, conditions)
        return None


def _constant(node):
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    return None


def element_accesses(stmts):
    """The ``a[...]`` element reads and writes in ``stmts`` (not ``x.shape[k]``)."""
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
                yield n


def innermost(loop) -> bool:
    return not any(isinstance(n, gast.For | gast.While) for s in loop.body for n in gast.walk(s))


def has_jumps(loop) -> bool:
    return any(isinstance(n, gast.Break | gast.Continue | gast.Return) for s in loop.body for n in gast.walk(s))
