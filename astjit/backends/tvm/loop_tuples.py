"""Tuples of numbers held in names inside a compiled loop (``d = rhs(x, y, z)`` then ``d[0]``,
``s = (a, b, c)``, ``x, y, z = s``, ``k2 = f((s[0] + h * k1[0], ...))``): the state of an ODE step.

A tuple's length is fixed where it is made, so each of its items can live in a scalar variable of its
own: this module rewrites a copy of the loop (and of the functions it inlines) so that a tuple name
``s`` of ``n`` items becomes the names ``__astjit_item0_s`` ... and every use of ``s`` a use of those:
``s[k]`` with a constant ``k`` reads one, ``len(s)`` is ``n``, ``x, y, z = s`` and ``s = (a, b, c)``
are tuple assignments of names, a tuple passed to an inlined function binds one parameter per item,
and ``return s`` in it returns the items. The lowering then sees scalars only, each item keeping its
own type (a Python float stays a Python float, a numpy float64 a numpy float64).

A tuple that comes into the loop (``s = s0`` before it, ``s0`` an argument) is taken apart by the
runner, which checks its items' types at each call (the kernel's key holds only the tuple's length,
runtime/keys); a tuple the loop leaves is built again from its items. Anything else keeps the loop in
Python with a reason: a name that holds tuples of different lengths or a tuple at one place and
another value at another, an index that is not a constant, a tuple used as a whole in an expression
(``s + t``, ``s == t``), tuples of arrays.
"""

import copy
import dataclasses

import gast

from ...errors import Unsupported
from ...frontend.inline import Inlined
from ...runtime.keys import SHORT_TUPLE
from .loop_types import Scalar, type_of_value


def item_name(name: str, k: int) -> str:
    return f"__astjit_item{k}_{name}"


def spelled_items(text: str) -> str:
    """A reason with each item's name as the user writes it (``s[0]``)."""
    import re

    return re.sub(r"__astjit_item(\d+)_(\w+)", r"\2[\1]", text)


def _no(reason, node=None) -> Unsupported:
    from .loops import _no as unsupported

    return unsupported(reason, node)


@dataclasses.dataclass
class TupleNames:
    """The loop with its tuple names taken apart, and how its runner maps the Fragment's live-ins and
    live-outs to the kernel's."""
    loop: object
    calls: dict
    live_in: list            # the kernel's: each tuple live-in replaced by its items' names
    live_out: list
    args: list
    unbound_after: list
    lengths: dict            # tuple name -> its length
    item_types: dict         # live-in tuple name -> the exact type of each item (checked at each call)
    unbound_names: set       # tuple live-outs only the loop may bind


def scalarized(loop, calls, live_in, live_out, args, unbound_after) -> TupleNames | None:
    """The loop's tuple names taken apart (module docstring), or None where it holds none."""
    loop, calls = copy.deepcopy((loop, calls))
    bodies = [[loop]] + [c.body for c in calls.values() if isinstance(c, Inlined)]
    incoming = {}
    for name, value in zip(live_in, args):
        if type(value) is tuple and 1 <= len(value) <= SHORT_TUPLE and all(
                isinstance(type_of_value(v), Scalar) for v in value):
            incoming[name] = value
    # (a tuple argument read by a computed index, ``c[j]``, and only so, is the kernel's array of its
    # items: loop_types.Sequence)
    by_array = _indexed_by_values(bodies) - _used_whole(bodies, calls) - _assigned(bodies)
    lengths = _lengths(bodies, calls, {n: len(v) for n, v in incoming.items() if n not in by_array})
    for name, value in zip(live_in, args):
        if name in lengths and name not in incoming:
            what = (f"a tuple of {len(value)} items (at most {SHORT_TUPLE} are taken apart)"
                    if type(value) is tuple and len(value) > SHORT_TUPLE else
                    "a tuple of other than numbers" if type(value) is tuple else f"a {type(value).__name__}")
            raise _no(f"{name!r} holds {what} before the loop and a tuple of numbers in it")
        if name in lengths and name in incoming and len(incoming[name]) != lengths[name]:
            raise _no(f"{name!r} comes in as a tuple of {len(incoming[name])} and the loop makes it a tuple "
                      f"of {lengths[name]}")
    for n in _walk(bodies):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Tuple) and isinstance(
                n.value, gast.Name) and n.value.id not in lengths:
            raise _no(f"unpacking {n.value.id!r}, which holds no tuple of numbers here (only those are "
                      "unpacked in a compiled loop)", n)
    if not lengths:
        return None
    for k, body in enumerate(bodies):
        _Rewrite(lengths, calls, in_callee=k > 0).statements(body)
    kernel_in, kernel_args, types = [], [], {}
    for name, value in zip(live_in, args):
        if name in lengths:
            kernel_in += [item_name(name, k) for k in range(lengths[name])]
            kernel_args += list(value)
            types[name] = tuple(map(type, value))
        else:
            kernel_in.append(name)
            kernel_args.append(value)

    def expand(names):
        return [m for n in names for m in ([item_name(n, k) for k in range(lengths[n])] if n in lengths else [n])]

    return TupleNames(loop, calls, kernel_in, expand(live_out), kernel_args, expand(unbound_after), lengths, types,
                      set(unbound_after) & set(lengths))


def _walk(bodies):
    for body in bodies:
        for s in body:
            yield from gast.walk(s)


def _assigned(bodies) -> set:
    return {n.id for n in _walk(bodies) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _used_whole(bodies, calls) -> set:
    """Names read other than by an index or ``len()`` (an argument tuple read only so is the kernel's
    array of its items: loop_types.Sequence)."""
    read_by_index = set()
    for n in _walk(bodies):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
            read_by_index.add(id(n.value))
        elif isinstance(n, gast.Call) and calls.get(n) == "len" and len(n.args) == 1:
            read_by_index.add(id(n.args[0]))
    return {n.id for n in _walk(bodies) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            and id(n) not in read_by_index}


def _indexed_by_values(bodies) -> set:
    """Names read by an index other than a constant (``c[j]``)."""
    return {n.value.id for n in _walk(bodies) if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)
            and _constant_index(n.slice) is None}


def _constant_index(k):
    """The int of a constant index (``0``, ``-1``), else None."""
    negative = isinstance(k, gast.UnaryOp) and isinstance(k.op, gast.USub)
    c = k.operand if negative else k
    if not (isinstance(c, gast.Constant) and type(c.value) is int):
        return None
    return -c.value if negative else c.value


def _lengths(bodies, calls, lengths) -> dict:
    """name -> length of every name that holds a tuple: those coming in (``lengths``), those assigned a
    tuple display, another tuple name or the call of an inlined function that returns tuples, and the
    parameters of inlined functions passed tuples. Raises Unsupported where a name holds tuples of
    different lengths."""
    lengths = dict(lengths)

    def note(name, n, node):
        if lengths.setdefault(name, n) != n:
            raise _no(f"{name!r} holds a tuple of {lengths[name]} at one place and of {n} at another", node)

    changed = True
    while changed:
        before = dict(lengths)
        for n in _walk(bodies):
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name):
                length = _length_of(n.value, lengths, calls)
                if length is not None:
                    note(n.targets[0].id, length, n)
            elif isinstance(n, gast.Call) and isinstance(calls.get(n), Inlined):
                for param, arg in zip(calls[n].params, n.args):
                    length = _length_of(arg, lengths, calls, calling=True)
                    if length is not None:
                        note(param, length, arg)
        changed = lengths != before
    return lengths


def _length_of(e, lengths, calls, calling=False):
    """The length of the tuple ``e`` gives, where it is a tuple display, a tuple name or the call of an
    inlined function returning tuples of one length; else None. ``calling``: ``e`` is passed to an
    inlined function (a call's value is a tuple only where it is unpacked or bound to a name)."""
    if isinstance(e, gast.Tuple):
        return len(e.elts)
    if isinstance(e, gast.Name):
        return lengths.get(e.id)
    if not calling and isinstance(e, gast.Call) and isinstance(calls.get(e), Inlined):
        return returned_length(calls[e], lengths, calls)
    return None


def returned_length(callee, lengths, calls):
    """The length of the tuples an inlined function returns, or None where it returns other values
    (or not yet known tuples)."""
    found = set()
    for s in _walk([callee.body]):
        if isinstance(s, gast.Return):
            found.add(_length_of(s.value, lengths, calls) if s.value is not None else None)
    if len(found) == 1:
        return found.pop()
    if len(found - {None}) > 1:
        raise _no(f"{callee.name} returns tuples of different lengths")
    return None


class _Rewrite:
    """Each use of a tuple name as a use of its items' names, in place."""

    def __init__(self, lengths, calls, in_callee):
        self.in_callee = in_callee          # (the loop's own ``return`` leaves the function)
        self.lengths = lengths
        self.calls = calls
        self.temporaries = 0

    def items(self, name, ctx):
        return [gast.Name(id=item_name(name, k), ctx=ctx(), annotation=None, type_comment=None)
                for k in range(self.lengths[name])]

    def item_values(self, e):
        """The items of a tuple display or a tuple name, as expressions."""
        if isinstance(e, gast.Tuple):
            return [self.expr(x) for x in e.elts]
        return self.items(e.id, gast.Load)

    def statements(self, stmts) -> None:
        out = []
        for s in stmts:
            out.extend(self.statement(s))
        stmts[:] = out

    def statement(self, s) -> list:
        for name in ("body", "orelse"):
            if isinstance(getattr(s, name, None), list):
                self.statements(getattr(s, name))
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            target, value = s.targets[0], s.value
            if isinstance(target, gast.Name) and target.id in self.lengths:
                if _length_of(value, self.lengths, self.calls) is None:
                    raise _no(f"{target.id!r} holds a tuple of {self.lengths[target.id]} at one place and "
                              "another value here", s)
                targets = self.items(target.id, gast.Store)
                if isinstance(value, gast.Call):
                    s.value = self.expr(value)                     # ``k1 = rhs(...)``: unpacked
                else:
                    values = self.item_values(value)
                    s.value = gast.copy_location(gast.Tuple(elts=values, ctx=gast.Load()), value)
                s.targets = [gast.copy_location(gast.Tuple(elts=targets, ctx=gast.Store()), target)]
                return [s]
            if isinstance(target, gast.Tuple) and isinstance(value, gast.Name) and value.id in self.lengths:
                if len(target.elts) != self.lengths[value.id]:
                    raise _no(f"unpacking a tuple of {self.lengths[value.id]} into {len(target.elts)} "
                              "targets (Python raises ValueError)", s)
                s.value = gast.copy_location(gast.Tuple(elts=self.items(value.id, gast.Load), ctx=gast.Load()),
                                             value)
                s.targets = [self.expr(target)]
                return [s]
        if isinstance(s, gast.Return) and s.value is not None and not isinstance(s.value, gast.Tuple):
            length = _length_of(s.value, self.lengths, self.calls)
            if length is not None and not self.in_callee:
                raise _no("a return out of the loop of a tuple held in a name", s)
            if length is not None and isinstance(s.value, gast.Name):
                s.value = gast.copy_location(gast.Tuple(elts=self.items(s.value.id, gast.Load), ctx=gast.Load()),
                                             s.value)
                return [s]
            if length is not None:                                 # ``return rhs(...)``: through names
                self.temporaries += 1
                name = f"__astjit_returned{self.temporaries}_{id(s)}"
                self.lengths[name] = length
                bind = gast.copy_location(gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                                                         type_comment=None)],
                                                      value=s.value, type_comment=None), s)
                s.value = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
                return self.statement(bind) + self.statement(s)
        for field, child in gast.iter_fields(s):
            if field in ("body", "orelse"):
                continue
            if isinstance(child, gast.AST):
                setattr(s, field, self.expr(child))
            elif isinstance(child, list):
                setattr(s, field, [self.expr(c) if isinstance(c, gast.AST) else c for c in child])
        return [s]

    def expr(self, e):
        if isinstance(e, gast.Name) and e.id in self.lengths and not isinstance(e.ctx, gast.Load):
            raise _no(f"{e.id!r} holds a tuple of {self.lengths[e.id]} at one place and is bound otherwise "
                      "here", e)
        if isinstance(e, gast.Name) and e.id in self.lengths:
            raise _no(f"{e.id!r} holds a tuple of {self.lengths[e.id]}, which a compiled loop reads only by a "
                      "constant index, unpacking, len() or passing it to a function of yours", e)
        if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name) and e.value.id in self.lengths:
            return gast.copy_location(self.item(e), e)
        if isinstance(e, gast.Call) and self.calls.get(e) == "len" and len(e.args) == 1 and isinstance(
                e.args[0], gast.Name) and e.args[0].id in self.lengths:
            return gast.copy_location(gast.Constant(value=self.lengths[e.args[0].id], kind=None), e)
        if isinstance(e, gast.Call) and isinstance(self.calls.get(e), Inlined):
            self.pass_tuples(e)
            return e
        for field, child in gast.iter_fields(e):
            if isinstance(child, gast.AST):
                setattr(e, field, self.expr(child))
            elif isinstance(child, list):
                setattr(e, field, [self.expr(c) if isinstance(c, gast.AST) else c for c in child])
        return e

    def item(self, e):
        """``s[k]`` of a constant ``k`` (``-1`` counts from the end): the item's name."""
        n = self.lengths[e.value.id]
        index = _constant_index(e.slice)
        if index is None or not isinstance(e.ctx, gast.Load):
            what = "written" if not isinstance(e.ctx, gast.Load) else "indexed by something other than a constant"
            raise _no(f"{e.value.id!r} holds a tuple of {n}, {what}: only constant indices compile", e)
        if not -n <= index < n:
            raise _no(f"a constant index {index} out of a tuple of {n} (Python raises IndexError)", e)
        return gast.Name(id=item_name(e.value.id, index % n), ctx=gast.Load(), annotation=None, type_comment=None)

    def pass_tuples(self, e) -> None:
        """A call of an inlined function: a tuple argument becomes its items, its parameter one per item."""
        callee = self.calls[e]
        params, args = [], []
        for param, arg in zip(callee.params, e.args):
            if param in self.lengths:
                if _length_of(arg, self.lengths, self.calls, calling=True) != self.lengths[param]:
                    raise _no(f"{callee.name} is passed a tuple of another length here", arg)
                params += [item_name(param, k) for k in range(self.lengths[param])]
                args += self.item_values(arg)
            else:
                params.append(param)
                args.append(self.expr(arg))
        e.args = args
        self.calls[e] = dataclasses.replace(callee, params=params)


class FellBack(Exception):
    """Raised by the kernel's runner where it would run the loop's Python (before any effect): the
    tuples' runner runs it with the arguments as they came, tuples and all."""


def fall_back(*args):
    raise FellBack


def tuple_runner(tuples: TupleNames, live_in, live_out, inner, fallback):
    """``run(*live_in)``: each tuple live-in taken apart for ``inner`` (the kernel's runner, whose own
    fallback is ``fall_back``), where its items have the types the kernel was compiled for (else the
    loop's Python), and each tuple live-out built again from its items; a name the loop may leave
    unbound is unbound where its first item is. Generated straight-line, as it runs at every call."""
    from ...runtime.fragment import UNBOUND
    from ...runtime.loop_fragment import Returned

    params = [f"a{p}" for p in range(len(live_in))]
    namespace = {"inner": inner, "fallback": fallback, "FellBack": FellBack, "Returned": Returned,
                 "UNBOUND": UNBOUND}
    lines = [f"def run({', '.join(params)}):"]
    tests, passed = [], []
    for p, name in enumerate(live_in):
        if name not in tuples.item_types:
            passed.append(params[p])
            continue
        for k, t in enumerate(tuples.item_types[name]):
            namespace[f"t{p}_{k}"] = t
            tests.append(f"type(a{p}[{k}]) is not t{p}_{k}")
            passed.append(f"a{p}[{k}]")
    everything = ", ".join(params)
    if tests:
        lines += [f"    if {' or '.join(tests)}:", f"        return fallback({everything})"]
    lines += ["    try:", f"        r = inner({', '.join(passed)})", "    except FellBack:",
              f"        return fallback({everything})", "    if type(r) is Returned:", "        return r"]
    outputs = [f"o{j}" for j in range(len(tuples.live_out))]
    if len(outputs) == 1:
        lines.append("    o0 = r")
    elif outputs:
        lines.append(f"    ({', '.join(outputs)},) = r")
    items, j = [], 0
    for name in live_out:
        if name not in tuples.lengths:
            items.append(outputs[j])
            j += 1
            continue
        n = tuples.lengths[name]
        made = f"({', '.join(outputs[j:j + n])},)"
        items.append(f"(UNBOUND if {outputs[j]} is UNBOUND else {made})" if name in tuples.unbound_names else made)
        j += n
    result = "None" if not items else items[0] if len(items) == 1 else f"({', '.join(items)},)"
    lines.append(f"    return {result}")
    exec(compile("\n".join(lines) + "\n", "<astjit tuple runner>", "exec"), namespace)
    return namespace["run"]


def tuple_items_in_arrays(tuples: TupleNames, lowering) -> None:
    """Tuples of arrays or rows keep the loop in Python (their items would be the kernel's buffers,
    and the tuple's items the runner's to hand back)."""
    items = {item_name(n, k) for n, length in tuples.lengths.items() for k in range(length)}
    held = set(lowering.arrays) | set(lowering.local_types) | set(lowering.named_rows) | set(
        lowering.named_row_sizes)
    for name in sorted(items & held):
        raise _no(f"{spelled_items(name)} holds an array or a row: a tuple of arrays keeps the loop in Python")
