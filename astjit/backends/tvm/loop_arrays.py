"""Whole arrays bound to names inside a compiled loop: ``acc = -x - 0.1 * v``, ``v = v + dt * acc``.

In Python each such statement makes a new array and rebinds the name; the old array is left to whoever
else holds it. The kernel gives each such name (a *local array*) one buffer for the whole call, which
the runner allocates (runtime/loop_fragment) and passes in, and computes each new value into it element
by element. That is the same as a new array as long as nothing else can see the buffer, so:

- the value must compute a new array: an elementwise operation or ufunc on whole arrays (names) and
  scalars. ``y = x`` or ``y = a[i]`` would share memory with another name and keeps the loop in Python;
- every array in such a value has the local's shape (the runner checks it per call, and runs the loop
  as Python where one differs: numpy would broadcast to a larger array), and its dtype is the same on
  every assignment (an ``int64`` argument rebound to floats keeps the loop in Python);
- an argument the loop rebinds is copied into its buffer before the loop (the loop may read it before
  the first rebinding), and is never written in place in the loop (that write would reach the caller's
  array before the rebinding and the copy after it). A local made in the loop (``acc``) can be written in
  place: nothing else holds it.

After the loop the runner hands back each rebound argument's buffer as the new array, and the caller's
own array where no assignment ran (an empty range): the same object Python would hold.
"""

from dataclasses import dataclass

import gast

from ...frontend.inline import Inlined
from .loop_rows import RowLeaf, RowOp, _leaves


def written_in_place(stmts, calls) -> set:
    """Names whose arrays these statements (or the functions inlined into them, and theirs) may write in
    place: element and slice targets, ``x += ...``, and arrays passed to an inlined function (which may
    write its parameter)."""
    out = set()
    todo, seen = list(stmts), set()
    while todo:
        for n in gast.walk(todo.pop()):
            if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store) and isinstance(n.value, gast.Name):
                out.add(n.value.id)
            elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                out.add(n.target.id)
            elif isinstance(n, gast.Call) and isinstance(calls.get(n), Inlined):
                out.update(a.id for a in n.args if isinstance(a, gast.Name))
                if id(calls[n]) not in seen:
                    seen.add(id(calls[n]))
                    todo.extend(calls[n].body)
    return out


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


@dataclass
class LocalArray:
    """A live-out name that holds a local array: its status slot says whether the loop rebound it."""
    name: str


@dataclass
class LocalArraySpec:
    """What the runner allocates for a local array: a buffer of ``dtype`` shaped as its shape group."""
    name: str
    dtype: str
    ndim: int
    incoming: bool             # an argument the loop rebinds: its value is copied in first


class LocalArrays:
    """The part of LoopLowering (backends/tvm/loops) that lowers assignments of whole arrays to names."""

    def is_array_assignment(self, s) -> bool:
        """``name = <array expression>`` (or a name already known to hold a local array)."""
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            return False
        name = s.targets[0].id
        return name in self.local_types or name in self.array_types or self.has_rows(s.value)

    def array_assignment(self, s) -> None:
        self.emit_array_assignments([self.array_value(s)])

    def fused_array_assignments(self, stmts) -> None:
        """Consecutive ``name = <elementwise expression of whole arrays and numbers>`` statements of one
        shape group as one element loop: element ``k`` of each value reads element ``k`` of its arrays
        only, so computing every statement at ``k`` before any at ``k + 1`` gives what one statement after
        the other gives, in one pass over memory instead of one per statement. Their scalar operands are
        numbers and variables (``fusable``), which no statement of the group changes."""
        plans = [self.array_value(s) for s in stmts]
        if len({self.shape_root(target.id) for target, _, _ in plans}) == 1:
            self.emit_array_assignments(plans)
            return
        for plan in plans:
            self.emit_array_assignments([plan])

    def fusable(self, s) -> bool:
        """An assignment of an elementwise expression to a name whose scalar parts are constants and
        variables (no element, shape or reduction read, no call but numpy ufuncs)."""
        if not self.is_array_assignment(s):
            return False
        for n in gast.walk(s.value):
            if isinstance(n, gast.Subscript | gast.Attribute | gast.IfExp | gast.BoolOp):
                return False
            if isinstance(n, gast.Call) and not (isinstance(self.calls.get(n), str) and (
                    self.calls[n].startswith("np.") or self.calls[n] == "abs")):
                return False
        return True

    def emit_array_assignments(self, plans) -> None:
        """The element loop computing each planned value into its local array, in order per element."""
        first, out, _ = plans[0]
        shape = out.shape
        sites = len(self.sites)

        def at(ks):
            for target, local, value in plans:
                self.store_at(target, local.buf, local.at(ks), self.row_element(value, ks, len(shape)))

        self.each_element(shape, at)
        if len(self.sites) != sites:
            raise self.refusal(f"the array assigned to {first.id!r} needs checks per element (a Python int "
                               "beyond a small int type, a division of Python numbers)", first)
        for target, _, _ in plans:
            if target.id in self.live_out:
                self.mark_rebound(self.live_out.index(target.id))

    def array_value(self, s):
        """(the target name's node, its local array as a whole view, the value's operand tree) of
        ``name = value``, after the checks that keep the kernel's buffer equal to Python's new array."""
        name = s.targets[0].id
        if name in self.incoming:
            raise self.refusal(f"{name!r} holds a number before the loop and an array in it", s)
        value = self.row(s.value, s)
        if isinstance(value, RowLeaf) and value.view[0] == "whole":
            self.check_copy(name, value.view[1], s)
        elif not isinstance(value, RowOp):
            raise self.refusal(f"binding {name!r} to a view or a number (only a new array computed from "
                               "whole arrays is kept in the kernel)", s)
        leaves = [leaf for leaf in _leaves(value) if isinstance(leaf, RowLeaf)]
        for leaf in leaves:
            if leaf.view[0] != "whole":
                raise self.refusal(f"a row or slice in the array assigned to {name!r} (only whole arrays "
                                   "and numbers)", s)
        types = self.row_types(value)
        if len(types) != 1:
            raise self.refusal(f"the array assigned to {name!r} has a dtype that depends on the iteration", s)
        found = (types[0].dtype, len(value.shape))
        if not found[1]:
            raise self.refusal(f"a 0-d array assigned to {name!r} (numpy's operations on 0-d arrays give "
                               "scalars)", s)
        known = self.local_types.get(name)
        if known is None:                      # a new local array: the next build passes its buffer
            self.local_types[name] = found
            self.locals_grown = True
            raise self.stale(name, s)
        if known != found:
            raise self.refusal(f"{name!r} changes from a {known[1]}-d {known[0]} array to a {found[1]}-d "
                               f"{found[0]} one in the loop", s)
        for leaf in leaves:
            other = self.array_origin.get(leaf.view[1], leaf.view[1])
            if len(self.arrays[other].shape) != found[1]:
                raise self.refusal(f"arrays of different ranks in the array assigned to {name!r}", s)
            self.same_shape(name, other)
        return s.targets[0], self.whole(name, s), value

    def check_copy(self, name, other, s) -> None:
        """``x = y``: Python makes ``x`` another name of ``y``'s array; the kernel copies ``y``'s buffer
        into ``x``'s, which nothing can tell apart when ``y`` is an array made in the loop (no caller
        holds it, and it is dead after the loop) and neither is written in place in the loop."""
        other = self.array_origin.get(other, other)
        if other in self.array_types:
            raise self.refusal(f"binding {name!r} to the array {other!r} holds (the caller's array, or one "
                               "made before the loop, under two names)", s)
        for n in (name, other):
            if n in self.in_place:
                raise self.refusal(f"binding {name!r} to the array {other!r} holds, where {n!r} is written "
                                   "in place in the loop", s)

    def has_array_items(self, s) -> bool:
        """``a, b = ...`` where a target or a value is an array."""
        return any(isinstance(t, gast.Name) and (t.id in self.local_types or t.id in self.array_types)
                   for t in s.targets[0].elts) or any(self.has_rows(e) for e in s.value.elts)

    def array_tuple_assignment(self, s) -> None:
        """``x, v = x + dt * v, v - dt * x``: Python evaluates every value, then binds the names. Each
        array value is computed into a local of its own first (``__astjit_next_x``), then copied; where
        every item is an elementwise array value, all of that is one pass (``fused_array_assignments``)."""
        pairs = list(zip(s.targets[0].elts, s.value.elts))
        for t, e in pairs:
            if isinstance(e, gast.Name) and e.id in self.arrays:
                self.check_copy(t.id, e.id, s)
        staged = [gast.copy_location(gast.Assign(targets=[_store(f"__astjit_next_{t.id}")], value=e,
                                                 type_comment=None), s) for t, e in pairs]
        copies = [gast.copy_location(gast.Assign(targets=[t], value=_load(f"__astjit_next_{t.id}"),
                                                 type_comment=None), s) for t, _ in pairs]
        if all(self.fusable(a) for a in staged):
            self.fused_array_assignments(staged + copies)
            return
        arrays = [self.has_rows(e) or t.id in self.local_types or t.id in self.array_types for t, e in pairs]
        values = [self.array_assignment(a) if is_array else self.settled(self.expr(e))
                  for is_array, a, (_, e) in zip(arrays, staged, pairs)]
        for is_array, copy, (t, _), value in zip(arrays, copies, pairs, values):
            if is_array:
                self.array_assignment(copy)
            else:
                self.assign(t.id, value, s)

    def check_in_place(self, s) -> None:
        """``x += ...`` on a whole array: in place, so not on an argument the loop also rebinds."""
        name = self.array_origin.get(s.target.id, s.target.id)
        if name in self.incoming_locals:
            raise self.refusal(f"{s.target.id!r} is updated in place and rebound in the same loop", s)

    # -- shape groups ----------------------------------------------------------------------------------
    def same_shape(self, a, b) -> None:
        """Record that arrays ``a`` and ``b`` must have one shape (union-find)."""
        ra, rb = self.shape_root(a), self.shape_root(b)
        if ra != rb:
            self.shape_parent[ra] = rb

    def shape_root(self, name):
        while self.shape_parent.get(name, name) != name:
            name = self.shape_parent[name]
        return name

    def shape_groups(self) -> list:
        """Each local array's group of names that must share its shape, arguments first (the runner
        takes the shape of the first); a group with no argument cannot be allocated."""
        groups = {}
        for name in sorted(set(self.shape_parent) | set(self.shape_parent.values()) | set(self.local_types)):
            groups.setdefault(self.shape_root(name), []).append(name)
        out = []
        for members in groups.values():
            incoming = [n for n in members if n in self.array_types]
            if not incoming:
                raise self.refusal(f"the shape of {members[0]!r} comes from no argument", self.loop)
            out.append(incoming + [n for n in members if n not in self.array_types])
        return out

    def local_arrays(self) -> list:
        return [LocalArraySpec(name, dtype, ndim, name in self.incoming_locals)
                for name, (dtype, ndim) in sorted(self.local_types.items())]
