"""Rows bound to names inside a compiled loop: ``d = pos[j] - pos[i]``, ``row = X[i]``, ``for k in pts``
(a row of a 2-d array per iteration), ``dist(X[i], X[j])`` (rows passed to an inlined function).

Python binds such a name to a view of an array (``X[i]``) or to a new small array (``pos[j] - pos[i]``),
and the statements after it read it: ``d[0]``, ``np.sum(d * d)``, ``acc[i] += m * d / r ** 3``. The
kernel binds no memory to the name. It evaluates the value's indices, slice bounds and scalar operands
where Python evaluates them (each index checked there, and the broadcast too, raising numpy's error at
that line), keeps them in locals, and gives each read of the name the value's expression over those
locals: a view reads its array's elements, a new array computes its elements from its operands as it
is read. The name is a *named row*.

A view reads the array as it is when read, as numpy's view does. A new array must read what its
operands held at the assignment, so a named row that computes is taken only where no statement between
the assignment and a read writes an array it reads. Conditions, checked before the loop is lowered
(``named_row_sites``) and as it is (``bind_named_row``):

- one assignment ``name = <value with a row or slice in it>`` in the loop (or in an inlined function's
  body), every read of the name in the statements after it in the same block, none before it (each
  iteration reads what it assigned), and none after the loop (the kernel cannot hand back an array);
- the name is not written (``d[0] = 1``, ``d += 1``: a named row is only read);
- its arrays are not rebound in the loop (a local array, a rotation: the name would follow them).
"""

from dataclasses import dataclass
from itertools import count

import gast
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from ...frontend.loops import index_items
from .loop_arrays import written_in_place
from .loop_dots import slices_step_forward
from .loop_rows import I64, ONE, ZERO, RowLeaf, RowOp, ScalarLeaf, Span, _leaves

_SERIAL = count()


@dataclass
class NamedRow:
    """What a named row holds in this build: its operand tree over locals, and, for a view of one array,
    whether its slices step by positive constants (``blas``: a dot may pass it to BLAS as it is)."""
    tree: object
    blas: bool

    @property
    def view(self) -> bool:
        return isinstance(self.tree, RowLeaf)


def named_row_sites(bodies, live_out, arguments) -> dict:
    """name -> (its assignment, the statements after it in its block) for each name that may be a named
    row: assigned once, by a plain ``name = value``, read only in the statements after that assignment,
    never updated in place or rebound otherwise, and not read after the loop. ``bodies``: statement
    lists (the loop, the inlined functions' bodies)."""
    sites, stores, reads, augmented = {}, {}, {}, set()

    def visit(stmts):
        for k, s in enumerate(stmts):
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
                sites.setdefault(s.targets[0].id, []).append((s, stmts[k + 1:]))
            if not isinstance(s, gast.FunctionDef | gast.ClassDef):
                for inner in (getattr(s, name, None) for name in ("body", "orelse", "finalbody")):
                    if isinstance(inner, list):
                        visit(inner)

    def loads(stmts, name):
        return sum(1 for t in stmts for n in gast.walk(t)
                   if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load))

    for body in bodies:
        visit(body)
        for n in (n for s in body for n in gast.walk(s)):
            if isinstance(n, gast.Name):
                counts = stores if isinstance(n.ctx, gast.Store) else reads if isinstance(n.ctx, gast.Load) else {}
                counts[n.id] = counts.get(n.id, 0) + 1
            elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                augmented.add(n.target.id)
    return {name: found[0] for name, found in sites.items()
            if len(found) == 1 and stores.get(name) == 1 and name not in augmented | live_out | arguments
            and loads(found[0][1], name) == reads.get(name, 0)}


class NamedRows:
    """The part of LoopLowering (backends/tvm/loops) that binds rows to names and reads them."""

    def is_named_row_assignment(self, s) -> bool:
        """``name = value`` at the site of a named row, where the value reads a row, a slice or another
        named row (a value of whole arrays only stays a local array: loop_arrays)."""
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            return False
        site = self.named_row_sites.get(s.targets[0].id)
        if site is None or site[0] is not s or not self.has_rows(s.value):
            return False
        return any(isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and self.is_row_read(n)
                   or isinstance(n, gast.Name) and n.id in self.named_rows for n in gast.walk(s.value))

    def bind_named_row(self, s) -> None:
        name = s.targets[0].id
        self.bind_row_value(name, s.value, s, self.named_row_sites[name][1])

    def bind_row_value(self, name, value, s, after) -> None:
        """Evaluate ``value`` (its indices, bounds, scalars and broadcast, checked in Python's order) and
        bind ``name`` to its operand tree; ``after``: the statements that may read the name."""
        tree = self.row(value, s)
        if isinstance(tree, ScalarLeaf):
            raise self.refusal(f"{name!r} is bound to a number here and to a row elsewhere", s)
        rebound = set(self.local_types) | self.rotated_names()
        leaves = [leaf for leaf in _leaves(tree) if isinstance(leaf, RowLeaf)]
        bases = {self.array_name(leaf.buf) for leaf in leaves}
        if bases & rebound:
            raise self.refusal(f"a row of {sorted(bases & rebound)[0]!r}, an array the loop rebinds, bound to "
                               f"{name!r}", s)
        if not isinstance(tree, RowLeaf):                     # a new array, computed as it is read
            types = self.row_types(tree)
            if len(types) != 1:
                raise self.refusal(f"the array assigned to {name!r} has a dtype that depends on the iteration", s)
            written = written_in_place(after, self.calls)
            origins = written | {self.array_origin.get(w, w) for w in written}
            read = bases | {leaf.view[0] for leaf in leaves}
            if read & origins:
                raise self.refusal(f"{name!r} is a new array computed from {sorted(read & origins)[0]!r}, which "
                                   "the statements after it write before reading it", s)
        blas = isinstance(tree, RowLeaf) and self.steps_forward(value)
        self.named_rows[name] = NamedRow(self.frozen(tree, name, s), blas)
        self.arrays.pop(name, None)

    def steps_forward(self, value) -> bool:
        """Whether a view's slices all step by positive constants, through the named views it is a view of
        (a dot passes such a view to BLAS as numpy does)."""
        if isinstance(value, gast.Name):
            return value.id not in self.named_rows or self.named_rows[value.id].blas
        return isinstance(value, gast.Subscript) and slices_step_forward(value) and self.steps_forward(value.value)

    def allocate_named_row_slots(self) -> None:
        """Where the kernel starts: the locals that keep each named row's indices, bounds and scalars
        from its assignment to its reads (a local made inside the assignment's own checks would be out of
        scope in the statements after it). A build that finds too few asks for more; the next one has them."""
        self.named_row_slots = {name: {dtype: T.alloc_buffer((n,), dtype, scope="global") for dtype, n in sizes.items()}
                                for name, sizes in sorted(self.named_row_sizes.items())}
        self.materialized_buffers = {}
        for key, (dtype, bases) in sorted(self.materialized_needs.items()):
            size = ONE
            for name in bases:
                n = ONE
                for extent in self.own_arrays[name].shape:
                    n = n * extent
                size = tirx.Max(size, n)
            self.materialized_buffers[key] = T.alloc_buffer((size,), dtype, scope="global")

    def materialized(self, tree, key, node) -> RowLeaf:
        """A 1-d row expression computed into a contiguous buffer of its own, as numpy's temporary array
        (what a dot product hands to BLAS). Its length is at most the size of the largest array it reads,
        which is the buffer's size (allocated where the kernel starts; a build that finds it missing
        asks for it, and the next build has it)."""
        types = self.row_types(tree)
        bases = tuple(sorted({self.array_name(leaf.buf) for leaf in _leaves(tree) if isinstance(leaf, RowLeaf)}))
        if len(types) != 1 or len(tree.shape) != 1 or not bases:
            raise self.refusal("a dot product of a row expression of more than one dtype or axis", node)
        want = (types[0].dtype, bases)
        buf = self.materialized_buffers.get(key)
        if buf is None or self.materialized_needs.get(key) != want:
            self.materialized_needs[key] = want
            self.locals_grown = True
            raise self.stale(f"{key}", node)
        n = tree.shape[0]
        wide = self.broadcast_steps(tree)
        sites = len(self.sites)

        def at(ks):
            v = self.row_element(wide, ks, 1)
            T.buffer_store(buf, v.expr if v.dtype == want[0] else v.expr.astype(want[0]), [ks[0]])

        self.each_element([n], at)
        if len(self.sites) != sites:
            raise self.refusal("a dot product of a row expression whose elements need checks", node)
        return RowLeaf(buf, [Span(ZERO, ONE, n)], ("materialized", key))

    def frozen(self, tree, name, s):
        """``tree`` with each computed index, bound and scalar stored into the name's slots and read from
        there, and each view tagged as this name's own (a store into an array read through a named row
        never takes the row for the target's own elements: loop_rows compares index texts)."""
        slots = self.named_row_slots.get(name, {})
        used = {}

        def put(expr, dtype):
            if expr is None or isinstance(expr, tirx.IntImm | tirx.FloatImm | tirx.Var):
                return expr
            k = used.get(dtype, 0)
            used[dtype] = k + 1
            buf = slots.get(dtype)
            if buf is None or k >= buf.shape[0]:
                return expr
            T.buffer_store(buf, expr, [k])
            return buf[k]

        def walk(node):
            if isinstance(node, RowLeaf):
                axes = [Span(put(a.start, I64), put(a.step, I64), put(a.length, I64)) if isinstance(a, Span)
                        else put(a, I64) for a in node.axes]
                return RowLeaf(node.buf, axes, (node.view[0], ("named", name, next(_SERIAL))))
            if isinstance(node, RowOp):
                operands = [walk(o) for o in node.operands]
                return RowOp(node.kind, node.name, operands, [put(n, I64) for n in node.shape], node.node)
            v = node.value
            tag = put(v.tag, "int8") if v.tag is not None else None
            return ScalarLeaf(type(v)(put(v.expr, v.dtype), v.types, tag, v.bits, v.span, v.ub))

        out = walk(tree)
        known = self.named_row_sizes.get(name, {})
        if any(n > known.get(dtype, 0) for dtype, n in used.items()):
            self.named_row_sizes[name] = {d: max(n, known.get(d, 0)) for d, n in {**known, **used}.items()}
            self.locals_grown = True
            raise self.stale(name, s)
        return out

    def named_row(self, name, node) -> NamedRow:
        found = self.named_rows.get(name)
        if found is None:
            raise self.refusal(f"{name!r} is not bound to a row here", node)
        return found

    def named_row_item(self, node):
        """``d[k]``, ``row[1:]``, ``row[i, :]`` of a named row: an element (a ScalarLeaf) where every axis
        takes an integer, else a view of a named view. Indices are checked as numpy checks them."""
        found = self.named_row(node.value.id, node)
        items = list(index_items(node.slice))
        shape = found.tree.shape
        if len(items) > len(shape):
            raise self.refusal(f"{node.value.id!r} indexed with more indices than its axes", node)
        if any(isinstance(i, gast.Slice) for i in items) or len(items) < len(shape):
            if not found.view:
                raise self.refusal(f"a row or slice of {node.value.id!r}, a new array bound to a name", node)
            return self._sub_view(found.tree, items, node)
        values = [self.index_value(i) for i in items]
        ks = [self.checked_index(node, axis, v, n) for axis, (v, n) in enumerate(zip(values, shape))]
        sites = len(self.sites)
        tree = self.broadcast_steps(found.tree) if not found.view else found.tree
        value = self.settled(self.row_element(tree, ks, len(shape)))
        if len(self.sites) != sites:
            raise self.refusal(f"an element of {node.value.id!r} that needs checks", node)
        return ScalarLeaf(value)

    def _sub_view(self, leaf, items, node) -> RowLeaf:
        """The view ``leaf[items]``: each integer item fixes one of its sliced axes, each slice narrows one."""
        values = [self.slice_values(i) if isinstance(i, gast.Slice) else self.index_value(i) for i in items]
        spans = [k for k, a in enumerate(leaf.axes) if isinstance(a, Span)]
        axes = list(leaf.axes)
        for axis, (item, v, k) in enumerate(zip(items, values, spans)):
            a = axes[k]
            if isinstance(item, gast.Slice):
                part = self.span(*v, a.length, item)
                axes[k] = Span(self.bind(a.start + part.start * a.step, I64), self.bind(part.step * a.step, I64),
                               part.length)
            else:
                axes[k] = self.bind(a.start + self.checked_index(node, axis, v, a.length) * a.step, I64)
        if not any(isinstance(a, Span) for a in axes):
            return ScalarLeaf(self.settled(self.load(leaf.buf, axes)))
        return RowLeaf(leaf.buf, axes, (leaf.view[0], ("named", node.value.id, next(_SERIAL))))
