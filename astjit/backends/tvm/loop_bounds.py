"""Prove at the entry of a loop that its element indices stay inside their arrays.

An index such as ``i - 1``, ``j + k`` or ``(i + 1) % n`` in the loop over ``j`` takes values in an
interval that the loop's range and the values of the names the loop does not assign (``i``, ``k``,
``n``, extents) fix before its first iteration. When every such interval lies within ``0 <=
index < extent``, no access in the loop can raise ``IndexError`` or wrap a negative index, so the
loop runs a copy of its body without those per-access checks (backends/tvm/loops); otherwise it
runs the checked body, which stops where Python stops. An index whose interval starts below 0 on
every entry (``x[i - 1]`` from ``i = 0``: a periodic boundary, which Python wraps to the last
element) is proven within ``-extent <= index < extent`` instead: the unchecked copy then wraps it
(``index + extent`` where it is negative) and still needs no check.

The same holds through a nest of ``for`` loops: the variable of a loop inside, ``j`` in
``for j in range(i + 1, n)``, takes values in an interval of its range's arguments, themselves
intervals of the outer loop's variable and invariant names, so the outer loop's entry can prove the
accesses of the whole nest, and the nest runs without checks (and without a test at each inner
loop's entry).

The intervals are computed in int64 from operands whose magnitudes are bounded (``Val.bits``), so
that the computation itself cannot overflow; an index that is not such an expression of Python ints
is simply left checked.
"""

from dataclasses import dataclass

import gast
from tvm import tirx
from tvm.sym.analyzer import Analyzer

from ...frontend.loops import constant_items
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
    """Intervals of index expressions in a loop nest.

    ``counters``: loop variable -> its Interval over the loop, for the loops around the expressions
    at hand; ``assigned``: the names the nest binds (not invariant); ``leaf(node)``: the lowering's
    value of a name, constant, extent or ``len()`` (a Val; None for any other call), read at the
    nest's entry."""

    def __init__(self, counters: dict, assigned, leaf):
        self.counters = counters
        self.assigned = assigned
        self.leaf = leaf
        self.positive_divisors = set()      # ids of ``x % d`` nodes whose interval assumes d > 0

    def of(self, node) -> Interval | None:
        if isinstance(node, gast.Name):
            if node.id in self.counters:
                return self.counters[node.id]
            if node.id in self.assigned:
                return None
            return self.point(node)
        if isinstance(node, gast.Constant):
            if type(node.value) is not int:
                return None
            return self.point(node)
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute):     # x.shape[k]
            return self.point(node)
        if isinstance(node, gast.Call):         # ``len(x)``, also the generated one of ``for v in x``
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


    def loop_interval(self, loop) -> Interval | None:
        """The interval of a nested ``for``'s variable over all its iterations: between its range's
        start and its stop's last value (a constant step; ``range(stop)`` from 0), or the int items of
        a tuple; None where unknown."""
        if isinstance(loop.iter, gast.Tuple):
            items = constant_items(loop.iter)
            if items is None or type(items[0]) is not int:
                return None
            bits = max(abs(v) for v in items).bit_length()
            return Interval(tirx.const(min(items), I64), tirx.const(max(items), I64), bits)
        args = loop.iter.args
        if len(args) == 3:
            step = _constant(args[2])
            if not step:
                return None
        else:
            step = 1
        start = Interval(tirx.const(0, I64), tirx.const(0, I64), 0) if len(args) == 1 else self.of(args[0])
        stop = self.of(args[-1] if len(args) < 3 else args[1])
        if start is None or stop is None:
            return None
        bits = max(start.bits, stop.bits) + 1
        if bits > MAX_BITS:
            return None
        one = tirx.const(1, I64)
        lo, hi = (start.lo, stop.hi - one) if step > 0 else (stop.lo + one, start.hi)
        return Interval(lo, hi, bits, start.conditions + stop.conditions)


def in_bounds_conditions(interval: Interval, extent) -> tuple[list, bool]:
    """(conditions, wraps): what must hold at the loop's entry for ``interval`` to index an axis of
    ``extent`` on every iteration without an IndexError, and whether the index must be wrapped.

    Where the interval's start is negative on every entry (``min(0, n - 1) - 1``, ``x[i - 1]`` over
    ``range(n)``), ``0 <= index`` can never be proven, so ``-extent <= index`` is, with a wrap. Elsewhere
    the proof asks ``0 <= index``, as a wrap in every iteration would cost a loop whose index is never
    negative its contiguous vector loads."""
    zero = tirx.const(0, I64)
    wraps = Analyzer().can_prove(interval.lo < zero)
    low = interval.lo >= (zero - extent if wraps else zero)
    return [*interval.conditions, low, interval.hi < extent], wraps


def walk_nest(stmts, bounds: IndexBounds, visit, counted: set) -> None:
    """``visit(access)`` for each element access in ``stmts``, with ``bounds.counters`` holding the
    interval of each nested ``for``'s variable inside that loop (``counted``: the names a nested
    ``for`` may hold there: bound nowhere else in the nest, so they hold the range's values)."""
    for s in stmts:
        if isinstance(s, gast.For):
            for n in _accesses_in(s.iter):
                visit(n)
            name = s.target.id
            outer = bounds.counters.pop(name, None)
            interval = bounds.loop_interval(s) if name in counted else None
            if interval is not None:
                bounds.counters[name] = interval
            walk_nest(s.body, bounds, visit, counted)
            bounds.counters.pop(name, None)
            if outer is not None:
                bounds.counters[name] = outer
            walk_nest(s.orelse, bounds, visit, counted)
            continue
        for _, child in gast.iter_fields(s):
            children = child if isinstance(child, list) else [child]
            if children and isinstance(children[0], gast.stmt):
                walk_nest(children, bounds, visit, counted)
                continue
            for c in children:
                if isinstance(c, gast.AST):
                    for n in _accesses_in(c):
                        visit(n)


def nested_counters(loop) -> set:
    """The variables of the ``for`` loops nested in ``loop`` that nothing else in it binds."""
    stores = {}
    for n in (n for s in loop.body for n in gast.walk(s)):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            stores[n.target.id] = stores.get(n.target.id, 0) + 1
    return {n.target.id for s in loop.body for n in gast.walk(s)
            if isinstance(n, gast.For) and isinstance(n.target, gast.Name) and stores.get(n.target.id) == 1}


def _accesses_in(node):
    for n in gast.walk(node):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
            yield n


def _constant(node):
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        value = _constant(node.operand)
        return None if value is None else -value
    return None


def element_accesses(stmts):
    """The ``a[...]`` element reads and writes in ``stmts`` (not ``x.shape[k]``)."""
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
                yield n


def has_while(loop) -> bool:
    return any(isinstance(n, gast.While) for s in loop.body for n in gast.walk(s))


def has_nested_loops(loop) -> bool:
    return any(isinstance(n, gast.For | gast.While) for s in loop.body for n in gast.walk(s))


def has_jumps(loop) -> bool:
    return any(isinstance(n, gast.Break | gast.Continue | gast.Return) for s in loop.body for n in gast.walk(s))
