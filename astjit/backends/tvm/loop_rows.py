"""Whole-row statements inside a compiled loop: ``out[i] = a[i] * 2.0 + 1.0`` where ``a`` is 2-d,
``c[i, :] += w * x[j]``.

numpy runs such a statement as whole-array operations on views: it evaluates the operands in order
(each index checked as it is evaluated), checks that their shapes broadcast, computes the result and
then writes it. The kernel does the same in two steps. First, in Python's order, every index and every
scalar operand is evaluated (with its checks) and every broadcast is checked, raising numpy's own
error (made by numpy from the shapes at raise time). Then a loop over the target's trailing axes
computes each element from the operands' elements and stores it. That second step has no checks, so a
statement that fails has no effects, as in numpy. Elementwise operations only: element ``k`` of the
result depends on element ``k`` of each operand (or its only element, where it broadcasts), so a target
that is also an operand (``a[i] = a[i] * 2``) reads each element before writing it; arrays that share
memory otherwise run the loop as Python (runtime/loop_fragment).

Row elements compute as numpy scalars of their dtype would, which is how numpy's promotion (NEP 50)
treats arrays too: a Python number is weak, a numpy scalar or an array is not.
"""

import operator
from dataclasses import dataclass, replace

import gast
import numpy as np
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from ...errors import Unsupported
from ...frontend.inline import Inlined
from ...frontend.loops import index_items
from .loop_types import BINARY, COMPARE, Scalar, possible_results

# operators whose result of an int row and a Python int has the row's int type (numpy checks the int)
INT_RESULT_OPS = ("Add", "Sub", "Mult", "FloorDiv", "Mod", "BitAnd", "BitOr", "BitXor", "LShift", "RShift")
ROW_AXES = 3            # rows of at most this many axes (the broadcast error carries their extents)
I64 = "int64"
ZERO, ONE = tirx.const(0, I64), tirx.const(1, I64)


@dataclass
class Span:
    """A sliced axis of a view: ``length`` elements at ``start``, ``start + step``, ... (int64)."""
    start: object
    step: object
    length: object


@dataclass
class RowLeaf:
    """An operand that is a view of ``buf``: per axis of ``buf``, a checked integer index or a Span.
    ``view``: the array's name and the index's text (the same text evaluated twice in one statement
    gives the same elements, unless an inlined call writes what the index reads)."""
    buf: object
    axes: list
    view: tuple

    @property
    def shape(self) -> list:
        return [a.length for a in self.axes if isinstance(a, Span)]

    @property
    def dtype(self) -> str:
        return str(self.buf.dtype)

    def at(self, ks) -> list:
        """The indices into ``buf`` of element ``ks`` (one index per axis of the view)."""
        ks = iter(ks)
        return [a.start + next(ks) * a.step if isinstance(a, Span) else a for a in self.axes]


@dataclass
class ScalarLeaf:
    """An operand evaluated before the row loop (a scalar, an element): the same for every element."""
    value: object          # a Val
    shape = ()


@dataclass
class RowOp:
    """An elementwise operation with at least one row operand, and its broadcast shape."""
    kind: str              # "binary", "unary", "compare", "ufunc"
    name: str
    operands: list
    shape: list
    node: object


def is_row_statement(lowering, s) -> bool:
    """Whether an assignment reads or writes a row (fewer integer indices than the array has axes),
    other than inside a reduction (``a[i].sum()`` is a number)."""
    return isinstance(s, gast.Assign | gast.AugAssign) and any(
        isinstance(n, gast.Subscript) and lowering.is_row_read(n) for n in outside_reductions(s, lowering.calls))


def outside_reductions(node, calls):
    """The nodes of ``node`` (``gast.walk``'s) except those inside a reduction (a call, or ``x @ y`` of
    rows) or the arguments of an inlined function's call (which returns a number)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        op = calls.get(n)
        if not (isinstance(op, Inlined) or str(op or "").startswith("reduce.")):
            todo.extend(gast.iter_child_nodes(n))


class RowStatements:
    """The part of LoopLowering (backends/tvm/loops) that lowers whole-row statements."""

    def row_statement(self, s) -> None:
        target = s.targets[0] if isinstance(s, gast.Assign) else s.target
        if isinstance(target, gast.Name):            # ``v += dt * a``: in place on the whole array
            out = self.whole(target.id, target)
            value = self.row(self.in_place_op(s), s, left=out)
        elif isinstance(s, gast.AugAssign):          # Python: the target's row first, then the value
            out = self.row_leaf(target)
            value = self.row(self.in_place_op(s), s, left=out)
        else:
            value = self.row(s.value, s)
            out = self.row_leaf(target)
        if isinstance(out, ScalarLeaf):
            raise self.refusal("a row stored into one element", s)
        self.check_broadcast(out.shape, value.shape, s, into="inplace" if isinstance(s, gast.AugAssign) else "store")
        self.check_store_type(value, out, s)
        sites = len(self.sites)
        # numpy computes the whole value before storing it: where an operand reads other elements of
        # the target's array (``u[1:-1] = u[:-2] + u[2:]``), the value goes through a scratch buffer.
        # Equal index text means the same elements unless a call inlined into the statement writes
        # the arrays its indices read
        calls = any(isinstance(self.calls.get(n), Inlined) for n in gast.walk(s))
        overlaps = any(isinstance(leaf, RowLeaf) and leaf.buf is out.buf and leaf is not out
                       and (calls or leaf.view != out.view) for leaf in _leaves(value))
        self.row_loop(out, value, target, self.scratch(out.buf) if overlaps else None)
        if len(self.sites) != sites:
            raise self.refusal("a row statement whose elements need checks (an int64 product, a Python or "
                               "numpy int beyond a small int type)", s)

    # -- evaluation in Python's order ----------------------------------------------------------------
    def row(self, e, s, left=None):
        """The operand tree of ``e``, its scalars and indices evaluated now (``left``: the already
        evaluated left operand of an augmented assignment)."""
        if left is None and not self.has_rows(e):
            return ScalarLeaf(self.settled(self.expr(e)))           # no row in it: a scalar, evaluated now
        if isinstance(e, gast.Name) and e.id in self.named_rows:      # a row bound to a name (loop_named_rows)
            return self.named_rows[e.id].tree
        if isinstance(e, gast.Name):                                # a whole array, as a row
            return self.whole(e.id, e)
        if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name) and e.value.id in self.named_rows:
            return self.named_row_item(e)
        if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name) and e.value.id in self.arrays:
            return self.row_leaf(e)
        if isinstance(e, gast.BinOp):
            a = left if left is not None else self.row(e.left, s)
            b = self.row(e.right, s)
            return self.op("binary", type(e.op).__name__, [a, b], e)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub | gast.UAdd):
            return self.op("unary", type(e.op).__name__, [self.row(e.operand, s)], e)
        if isinstance(e, gast.Compare) and len(e.ops) == 1:
            a, b = self.row(e.left, s), self.row(e.comparators[0], s)
            return self.op("compare", type(e.ops[0]).__name__, [a, b], e)
        if isinstance(e, gast.Call):
            name = self.calls.get(e)
            if isinstance(name, str) and (name.startswith("np.") or name == "abs"):
                args = [self.row(a, s) for a in e.args]
                return self.op("ufunc", "absolute" if name == "abs" else name[3:], args, e)
        raise self.refusal(f"a {type(e).__name__} of rows (rows take elementwise operators and numpy "
                           "ufuncs)", e)

    def whole(self, name, node) -> RowLeaf:
        """The array ``name`` as a view of all its elements."""
        buf = self.array(name, node)
        return RowLeaf(buf, _whole(buf.shape), ("whole", name))

    def has_rows(self, e) -> bool:
        """Whether ``e`` reads a row: an array with fewer indices than axes, or a whole array by its name
        (not ``a`` of ``a[i]``, ``a.shape`` or ``len(a)``)."""
        inner = set()
        nodes = list(outside_reductions(e, self.calls))
        for n in nodes:
            if isinstance(n, gast.Subscript | gast.Attribute):
                inner.add(id(n.value))
            elif isinstance(n, gast.Call) and self.calls.get(n) == "len":
                inner.update(id(a) for a in n.args)
        return any(self.is_row_read(n) if isinstance(n, gast.Subscript) else
                   isinstance(n, gast.Name) and (n.id in self.arrays or n.id in self.named_rows)
                   and id(n) not in inner for n in nodes)

    def is_row_read(self, n) -> bool:
        if not isinstance(n.value, gast.Name):
            return False
        buf = self.arrays.get(n.value.id)
        named = self.named_rows.get(n.value.id)
        if buf is None and named is None:
            return False
        ndim = len(buf.shape) if buf is not None else len(named.tree.shape)
        items = index_items(n.slice)
        return len(items) < ndim or any(isinstance(i, gast.Slice) for i in items)

    def row_leaf(self, node):
        """A view ``a[i]``, ``a[i, :]``, ``u[1:-1]``, ``a[i:i + w, j]`` (a row), or ``a[i, j]`` (an element,
        a scalar operand). Python evaluates the index items and slice bounds in order, then numpy
        checks the integers and fits the slices to the extents."""
        buf = self.array(node.value.id, node)
        items = list(index_items(node.slice))
        if len(items) > len(buf.shape):
            raise self.refusal(f"{node.value.id!r} indexed with more indices than its axes", node)
        values = [self.slice_values(i) if isinstance(i, gast.Slice) else self.index_value(i) for i in items]
        axes = []
        for axis, (item, v) in enumerate(zip(items, values)):
            n = buf.shape[axis]
            if isinstance(item, gast.Slice):
                axes.append(self.span(*v, n, item))
            else:
                axes.append(self.checked_index(node, axis, v, n))
        axes += _whole(buf.shape[len(items):])
        if not any(isinstance(a, Span) for a in axes):
            return ScalarLeaf(self.settled(self.load(buf, axes)))
        if sum(isinstance(a, Span) for a in axes) > ROW_AXES:
            raise self.refusal(f"a row of more than {ROW_AXES} axes", node)
        return RowLeaf(buf, axes, (node.value.id, gast.dump(node.slice)))

    def span(self, start, stop, step, n, node) -> Span:
        """A slice fitted to an axis of extent ``n`` as Python fits it (PySlice_AdjustIndices): negative
        bounds count from the end, bounds beyond the axis are clipped, a step of 0 is a ValueError."""
        if step is None:
            step = ONE
        else:
            self.fail(tirx.EQ(step, ZERO), node, lambda values: ValueError("slice step cannot be zero"))
        negative = step < ZERO
        lower = tirx.Select(negative, tirx.const(-1, I64), ZERO)
        upper = tirx.Select(negative, n - ONE, n)

        def fit(v, default):
            if v is None:
                return default
            w = tirx.Select(v < ZERO, v + n, v)
            return self.bind(tirx.Select(w < lower, lower, tirx.Select(w > upper, upper, w)), I64)

        first = fit(start, tirx.Select(negative, upper, lower))
        end = fit(stop, tirx.Select(negative, lower, upper))
        down = tirx.Select(end < first, tirx.floordiv(first - end - ONE, ZERO - step) + ONE, ZERO)
        up = tirx.Select(first < end, tirx.floordiv(end - first - ONE, step) + ONE, ZERO)
        length = self.bind(tirx.Select(negative, down, up), I64)
        return Span(first, step, length)

    def slice_values(self, item) -> list:
        """``start``, ``stop`` and ``step`` of a slice, evaluated in order (None where omitted). The
        step's magnitude must be known below 2**62, so that ``-step`` and the length cannot overflow."""
        values = [None if b is None else self.index_value(b) for b in (item.lower, item.upper)]
        if item.step is None:
            return values + [None]
        step = self.expr(item.step)
        if self.final and (step.bits is None or step.bits > 62):      # (bounds are known in the last build)
            raise self.refusal("a slice step not known to be below 2**62", item.step)
        return values + [self.index_value(item.step, step)]

    def in_place_op(self, s):
        """The operation of ``target op= value`` as a BinOp, marked in place: numpy's error where the
        value does not broadcast names the output's shape too (``(6,) (5,) (6,)``)."""
        node = gast.BinOp(left=s.target, op=s.op, right=s.value)
        self.in_place_ops.add(id(node))
        return node

    def op(self, kind, name, operands, node):
        """An operation with a row among its operands (``row`` evaluates row-free ones as scalars)."""
        if name == "clip" and not all(isinstance(o, ScalarLeaf) for o in operands[1:]):
            # (numpy's clip keeps the value on a tie of 0.0 and -0.0 with a scalar bound, as the
            # kernel's rule does, and gives the bound where the bounds are arrays)
            raise self.refusal("np.clip of rows with a bound that is an array", node)
        shape = list(operands[0].shape)
        for o in operands[1:]:
            shape = self.check_broadcast(shape, o.shape, node, "inplace" if id(node) in self.in_place_ops else None)
        if kind == "binary" and name in INT_RESULT_OPS:
            self.check_python_ints_fit(operands, node)
        self.row_op_nodes.add(id(node))
        return RowOp(kind, name, operands, shape, node)

    def check_python_ints_fit(self, operands, node) -> None:
        """numpy raises OverflowError where a Python int beside a row of a smaller int type does not fit
        that type (NEP 50: ``a[i] * k`` of int32 rows). Checked here, as the operation is evaluated
        (Python's order), once for the statement: the elements' loop takes no checks, and without it
        every row statement of int32, int16 or uint8 rows with a Python int ran the loop as Python.
        The value's span says it fits from then on, so the elements need no check of their own."""
        rows = {o.dtype for o in operands if isinstance(o, RowLeaf)}
        if len(rows) != 1 or not all(isinstance(o, RowLeaf | ScalarLeaf) for o in operands):
            return
        dtype = rows.pop()
        if np.dtype(dtype).kind not in "iu" or dtype in ("int64", "uint64"):
            return
        info = np.iinfo(dtype)
        for o in operands:
            if isinstance(o, ScalarLeaf) and o.value.types and all(t.python and t.kind == "i" for t in o.value.types):
                self.check_int_fits(o.value, dtype, node)
                span = o.value.span
                o.value = replace(o.value, span=(int(info.min), int(info.max)) if span is None else
                                  (max(span[0], int(info.min)), min(span[1], int(info.max))))

    # -- shapes ----------------------------------------------------------------------------------------
    def check_broadcast(self, a, b, node, into=None) -> list:
        """The broadcast shape of ``a`` and ``b`` (``into``: "store" or "inplace" where ``b`` is written
        into ``a``), raising numpy's error where they do not broadcast."""
        if into and len(b) > len(a):
            raise self.refusal("a value with more axes than the row it is stored into", node)
        n = max(len(a), len(b))
        a_full = [None] * (n - len(a)) + list(a)
        b_full = [None] * (n - len(b)) + list(b)
        bad = tirx.const(False, "bool")
        out = []
        for x, y in zip(a_full, b_full):
            if x is None or y is None:
                out.append(x if y is None else y)
                continue
            if into:
                bad = tirx.Or(bad, tirx.And(tirx.NE(x, y), tirx.NE(y, ONE)))
                out.append(x)
            else:
                bad = tirx.Or(bad, tirx.And(tirx.NE(x, y), tirx.And(tirx.NE(x, ONE), tirx.NE(y, ONE))))
                out.append(self.bind(tirx.Select(tirx.EQ(x, ONE), y, x), I64))
        shapes = (len(a), len(b))
        self.fail(bad, node, lambda v: _broadcast_error(v, shapes, into), tuple(a) + tuple(b))
        return out

    def check_store_type(self, value, out, s) -> None:
        types = self.row_types(value)
        target = out.dtype
        for t in types:
            if t.kind == "f" and np.dtype(target).kind in "biu":
                raise self.refusal(f"storing {t} elements into an array of {target}", s)
            if isinstance(s, gast.AugAssign) and not np.can_cast(t.dtype, target, "same_kind"):
                raise self.refusal(f"{type(s.op).__name__}= of {t} elements into an array of {target}", s)

    def row_types(self, node) -> tuple:
        """The element types of a row operand, as numpy scalars of the row's dtype would compute them."""
        if isinstance(node, RowLeaf):
            return (Scalar(node.dtype, False),)
        if isinstance(node, ScalarLeaf):
            return node.value.types
        fn = {"binary": BINARY, "compare": COMPARE, "unary": {"USub": operator.neg, "UAdd": operator.pos},
              }[node.kind][node.name] if node.kind != "ufunc" else getattr(np, node.name)
        operands = [_Typed(self.row_types(o)) for o in node.operands]
        try:
            results = possible_results(fn, operands, node.name)
        except Unsupported as exc:
            raise self.refusal(str(exc), node.node) from None
        return tuple(sorted(set(results.values()), key=lambda t: t.dtype))

    # -- the element loop --------------------------------------------------------------------------------
    def row_loop(self, out, value, target, scratch=None) -> None:
        """Each element of the target computed and stored; with ``scratch``, all of them computed into
        it first, then copied into the target."""
        shape = out.shape

        def compute(value):
            from_array = not isinstance(value, ScalarLeaf)
            def at(ks):
                v = self.row_element(value, ks, len(shape))
                if scratch is None:
                    self.store_at(target, out.buf, out.at(ks), v, from_array)
                else:
                    self.store_at(target, scratch, [flat(ks)], v, from_array)
            self.each_element(shape, at)

        def flat(ks):
            index = ZERO
            for k, n in zip(ks, shape):
                index = index * n + k
            return index

        # numpy broadcasts an operand's axis of length 1: its step is 0. Where no operand broadcasts
        # (most statements), the loop keeps the plain steps, which LLVM can vectorize
        same = tirx.const(True, "bool")
        for leaf in _leaves(value):
            if isinstance(leaf, RowLeaf):
                for n, m in zip(reversed(leaf.shape), reversed(shape)):
                    same = tirx.And(same, tirx.EQ(n, m))
        with T.If(same):
            with T.Then(), self.scope():
                compute(value)
            with T.Else(), self.scope():
                compute(self.broadcast_steps(value))
        if scratch is not None:
            self.each_element(shape, lambda ks: T.buffer_store(out.buf, scratch[flat(ks)], out.at(ks)))

    def each_element(self, shape, emit, ks=()) -> None:
        """A loop nest over ``shape`` calling ``emit(indices)`` in its body; a check emitted there closes
        there (the caller then refuses the statement: its elements must need none)."""
        if len(ks) == len(shape):
            with self.scope():
                emit(list(ks))
            return
        with T.serial(ZERO, shape[len(ks)]) as k:
            self.each_element(shape, emit, (*ks, k))

    def scratch(self, buf):
        """A buffer of ``buf``'s dtype that holds any view of it: one per array and kernel call,
        allocated where the kernel starts (``allocate_scratch``; a build that finds it missing asks
        for it, and the next build has it)."""
        found = self.scratch_buffers.get(buf)
        if found is None:
            self.scratch_wanted.add(self.array_name(buf))
            found = self.scratch_buffers[buf] = _scratch_buffer(buf)
        return found

    def array_name(self, buf) -> str:
        """The name of the array whose own buffer is ``buf`` in this build (a rotated name may hold
        another's: loop_rotation)."""
        return next(n for n, b in self.own_arrays.items() if b is buf)

    def allocate_scratch(self) -> None:
        for name in sorted(self.scratch_wanted):
            self.scratch_buffers[self.arrays[name]] = _scratch_buffer(self.arrays[name])

    def broadcast_steps(self, node):
        """``node`` with each row's axes of length 1 given step 0 (numpy's broadcast), computed once
        before the element loop instead of per element."""
        if isinstance(node, RowOp):
            return RowOp(node.kind, node.name, [self.broadcast_steps(o) for o in node.operands], node.shape,
                         node.node)
        if isinstance(node, RowLeaf):
            axes = [Span(a.start, self.bind(tirx.Select(tirx.EQ(a.length, ONE), ZERO, a.step), I64), a.length)
                    if isinstance(a, Span) else a for a in node.axes]
            return RowLeaf(node.buf, axes, node.view)
        return node

    def row_element(self, node, ks, ndim):
        """The Val of element ``ks`` (indices over the target's trailing axes) of ``node``."""
        if isinstance(node, ScalarLeaf):
            return node.value
        if isinstance(node, RowLeaf):
            return self.load(node.buf, node.at(ks[ndim - len(node.shape):]))
        args = [self.row_element(o, ks, ndim) for o in node.operands]
        if node.kind == "binary" and node.name in ("FloorDiv", "Mod") and isinstance(node.operands[1], ScalarLeaf) \
                and np.dtype(args[0].dtype).kind in "iu" and np.dtype(args[1].dtype).kind in "iu":
            self.numpy_faster_rows = True        # (numpy divides by one number with SIMD: LoopKernel.weigh)
        if node.kind == "binary":
            return self.binary(node.name, args[0], args[1], node.node)
        if node.kind == "compare":
            return self.compare_values(node.name, args[0], args[1], node.node)
        if node.kind == "unary":
            return self.unary_value(node.name, args[0], node.node)
        return self.ufunc(node.name, args, node.node, over_arrays=True)

    def refusal(self, reason, node) -> Unsupported:
        from .loops import _no
        return _no(reason, node)


def _whole(shape) -> list:
    """Spans of whole axes."""
    return [Span(ZERO, ONE, n) for n in shape]


def _scratch_buffer(buf):
    size = ONE
    for n in buf.shape:
        size = size * n
    return T.alloc_buffer((tirx.Max(size, ONE),), str(buf.dtype), scope="global")


@dataclass
class _Typed:
    """An operand known by its possible types only (what ``possible_results`` reads)."""
    types: tuple


def _leaves(node):
    if isinstance(node, RowOp):
        for o in node.operands:
            yield from _leaves(o)
    else:
        yield node


def _broadcast_error(values, ranks, into) -> BaseException:
    """numpy's own error for these shapes: the operation is run on views of them that hold no memory."""
    a = tuple(int(v) for v in values[:ranks[0]])
    b = tuple(int(v) for v in values[ranks[0]:ranks[0] + ranks[1]])
    x = np.broadcast_to(np.zeros(()), a)
    y = np.broadcast_to(np.zeros(()), b)
    try:
        if into:
            target = np.lib.stride_tricks.as_strided(np.zeros(1), a, [0] * len(a), writeable=True)
            if into == "store":
                target[...] = y
            else:
                np.add(target, y, out=target)
        else:
            np.add(x, y)
    except ValueError as exc:
        return exc
    return ValueError(f"shapes {a} and {b} do not broadcast")
