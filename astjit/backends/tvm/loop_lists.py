"""Lists a compiled loop appends to: ``peaks.append(i)``, ``kept.append(a[i] * 2.0)``.

Python appends each value to the list as the statement runs. The kernel cannot grow a Python list, so
it writes each value (its bits, as int64) into the tail of its status buffer and counts them; the
runner appends them to the list after the call, in order, as Python objects of the value's type
(a Python ``int``/``float``/``bool``, or the numpy scalar type). It does so whether the loop ends,
``return``\\ s or stops on a check that raises: the list then holds what Python would have appended
before the exception.

The buffer's room is fixed for one call, so the kernel first computes, before any effect, how many
values the loop may append at most: per ``append`` statement, the product of bounds on the trip counts
of the loops around it, each computed from what holds at the loop's entry (numbers, ``len()`` and
extents of arrays, ``+``, ``-``, ``*``, ``min``, ``max``) and the intervals of the enclosing loops'
variables (``range(i + 1, n)`` counts at most ``n``). Where the room is short, the kernel stops with status
NEED_ROOM and that bound, and the runner calls it again with a larger buffer (runtime/loop_fragment).
Conditions, checked as the loop is lowered (anything else keeps the loop in Python, with the reason
in explain()):

- the list is a name of the function holding a ``list`` where the loop starts; in the loop it is only
  appended to (no ``len()``, index or other use, no rebinding), and two such names are two lists;
- its values are numbers or bools (not complex); where they have several types (``out.append(i)``
  and ``out.append(a[i])``; ``t = 0.0`` then ``t += dt`` of a numpy float), a second stretch beside
  its values holds each one's type index, and the runner makes each the type it had;
- every loop around an ``append`` is a ``for`` over ``range`` whose arguments are bounded as above
  (its step known at the loop's entry), or over a tuple of constants; or the loop writes no array
  (``effect_free``: a ``while`` that collects event times): there the kernel stops with NEED_ROOM
  where a list's room runs out, its counts zeroed, and the runner calls it again with twice the room
  (nothing it did is seen: the runner appends the values after the call).
"""

from dataclasses import dataclass
from functools import reduce

import gast
import numpy as np
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from ...errors import Unsupported
from ...frontend.loops import assigned_in_body, constant_items, int_constant, shape_axis

I64 = "int64"
F64 = "float64"
NEED_ROOM = -3                 # status[0] where the lists' buffer is too short; status[1]: the room needed
APPENDED_PREFIX = "__astjit_appended_"


@dataclass
class AppendedList:
    """A list the loop appends to: its name, its place among the lists, the pseudo-variable whose
    types the builds learn (the type of the values appended)."""
    name: str
    index: int

    @property
    def variable(self) -> str:
        return APPENDED_PREFIX + self.name


def appended_list_names(loop, calls) -> list:
    """The names the loop appends to with ``name.append(value)`` statements (frontend/loops marks them),
    in the order of their first ``append``."""
    names = []
    for node in gast.walk(loop):
        if isinstance(node, gast.Call) and calls.get(node) == "append" and node.func.value.id not in names:
            names.append(node.func.value.id)
    return names


def other_use(loop, calls, name):
    """A node where ``name`` appears in the loop other than as the list of an ``append``, or None."""
    appends = {id(n.func.value) for n in gast.walk(loop) if isinstance(n, gast.Call) and calls.get(n) == "append"}
    return next((node for node in gast.walk(loop)
                 if isinstance(node, gast.Name) and node.id == name and id(node) not in appends), None)


def _wide(dtype) -> str:
    """The dtype whose bits a value of ``dtype`` keeps in an int64 slot, exactly."""
    return F64 if np.dtype(dtype).kind == "f" else I64


class AppendedLists:
    """The part of LoopLowering (backends/tvm/loops) that lowers ``append`` to lists."""

    def find_appended_lists(self, live_in, args) -> None:
        """The lists the loop appends to, checked (``self.lists``), and their pseudo-variables."""
        self.lists = []
        self.unbounded_appends = set()        # ids of the appends that check their room as they run
        for name in appended_list_names(self.loop, self.calls):
            value = args[live_in.index(name)] if name in live_in else None
            if type(value) is not list:
                raise Unsupported(f"{name!r} is a {type(value).__name__}: a compiled loop appends only to a list")
            used = other_use(self.loop, self.calls, name)
            if used is not None:
                raise self.refusal(f"the list {name!r} is appended to and also used otherwise in the loop "
                                   "(a compiled loop only appends to a list)", used)
            self.lists.append(AppendedList(name, len(self.lists)))

    def list_names(self) -> set:
        return {lst.name for lst in self.lists}

    # -- the status buffer's layout: counts after the live-out slots, then one stretch per list ---------
    def count_slot(self, lst) -> int:
        return self.status_fixed + lst.index

    @property
    def data_start(self) -> int:
        return self.status_fixed + len(self.lists)

    def tagged(self, lst) -> bool:
        """Whether ``lst`` gets values of several types (``t = 0.0`` then ``t += dt`` of a numpy float:
        a Python float first, numpy's after): a second stretch holds each value's type index."""
        var = self.variables.get(lst.variable)
        return var is not None and len(var.types) > 1

    def stretch(self, lst):
        """Where ``lst``'s values start (its types' stretch follows, where ``tagged``)."""
        before = sum(1 + self.tagged(other) for other in self.lists[:lst.index])
        return tirx.const(self.data_start, I64) + tirx.const(before, I64) * self.room()

    def room(self):
        """How many values each list's stretch of the status buffer holds."""
        stretches = sum(1 + self.tagged(lst) for lst in self.lists)
        return tirx.floordiv(self.status.shape[0] - self.data_start, stretches)

    def zero_append_counts(self) -> None:
        """At the kernel's start, before any check that may stop it: no value appended yet (the
        runner reads the counts however the kernel ends, and reuses its status buffers)."""
        for lst in self.lists:
            T.buffer_store(self.status, tirx.const(0, I64), [self.count_slot(lst)])

    def check_append_room(self) -> None:
        """Before any effect: stop with NEED_ROOM where a list's stretch is shorter than the most
        values the loop may append to it, the most in status[1]."""
        self.unbounded_appends = set()
        if not self.lists:
            return
        most = tirx.const(0.0, F64)
        for lst in self.lists:
            most = tirx.Max(most, self.most_appends(lst))
        self.need_room(tirx.And(self.ok[0], most > self.room().astype(F64)),
                       tirx.Min(most, tirx.const(float(2**62), F64)).astype(I64))

    def need_room(self, cond, need) -> None:
        """Where ``cond`` holds, stop with NEED_ROOM, ``need`` values per list in status[1] and no value
        appended: the runner calls the kernel again with that much room."""
        with T.If(cond):
            with T.Then():
                T.buffer_store(self.status, tirx.const(NEED_ROOM, I64), [0])
                T.buffer_store(self.status, need, [1])
                self.zero_append_counts()
                T.buffer_store(self.ok, tirx.const(False, "bool"), [0])

    def most_appends(self, lst):
        """The most values the loop may append to ``lst`` (a float64: products of trip counts may
        exceed int64 where the runner declines them anyway); an append whose count is not known adds
        nothing here, and checks its room as it runs (``unbounded_appends``)."""
        total = tirx.const(0.0, F64)
        for site, loops in _append_sites(self.loop, self.calls, lst.name):
            times, counters = tirx.const(1.0, F64), {}
            for loop in loops:
                trips = self.static_trips(loop, counters)
                if trips is None:
                    if self.effect_free:
                        self.unbounded_appends.add(id(site))
                        times = tirx.const(0.0, F64)
                        break
                    raise self.refusal(f"an append to {lst.name!r} inside a loop whose trip count is not known "
                                       "where the compiled loop starts (a while loop, or a range() of values "
                                       "the loop computes), in a loop that writes arrays", site)
                times = times * trips
            total = total + times
        return total

    def static_trips(self, loop, counters):
        """A bound on a for loop's trip count, a float64 expression of what holds at the kernel's start
        (``counters``: the interval of each enclosing loop's variable, which this adds the loop's
        to), or None."""
        if isinstance(loop, gast.While):
            return None
        if isinstance(loop.iter, gast.Tuple):
            return tirx.const(float(len(constant_items(loop.iter))), F64)
        args = loop.iter.args
        zero, one = tirx.const(0.0, F64), tirx.const(1.0, F64)
        step = self.static_int(args[2]) if len(args) == 3 else one     # (a zero step raises first)
        bounds = [self.static_interval(a, counters) for a in args[:2]]
        if step is None or any(b is None for b in bounds):
            return None
        (start_lo, start_hi), (stop_lo, stop_hi) = ((zero, zero), bounds[0]) if len(bounds) == 1 else bounds
        up = step > zero
        span = tirx.Select(up, stop_hi - start_lo, start_hi - stop_lo)
        trips = tirx.Max(zero, tirx.ceil(span / tirx.Max(tirx.Select(up, step, zero - step), one)))
        if loop.target.id not in assigned_in_body(loop):
            # the variable's values: from the start's least to the stop's greatest (less one), or back
            counters[loop.target.id] = (tirx.Select(up, start_lo, stop_lo + one),
                                        tirx.Select(up, stop_hi - one, start_hi))
        return trips

    def static_interval(self, node, counters):
        """(least, greatest) of an int expression over the loop, float64 expressions of what holds at
        the kernel's start and of the enclosing loops' variables (``counters``), or None."""
        if isinstance(node, gast.Name) and node.id in counters:
            return counters[node.id]
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add | gast.Sub | gast.Mult):
            a, b = self.static_interval(node.left, counters), self.static_interval(node.right, counters)
            if a is None or b is None:
                return None
            if isinstance(node.op, gast.Add):
                return a[0] + b[0], a[1] + b[1]
            if isinstance(node.op, gast.Sub):
                return a[0] - b[1], a[1] - b[0]
            products = [x * y for x in a for y in b]
            return reduce(tirx.Min, products), reduce(tirx.Max, products)
        if isinstance(node, gast.Call) and self.calls.get(node) in ("min", "max") and len(node.args) >= 2:
            parts = [self.static_interval(a, counters) for a in node.args]
            if any(p is None for p in parts):
                return None
            pick = tirx.Min if self.calls[node] == "min" else tirx.Max
            return reduce(pick, [p[0] for p in parts]), reduce(pick, [p[1] for p in parts])
        value = self.static_int(node)
        return None if value is None else (value, value)

    def static_int(self, node):
        """An int expression of the loop's entry values (a float64), or None."""
        value = int_constant(node)
        if value is not None:
            return tirx.const(float(value), F64)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            value = self.static_int(node.operand)
            return None if value is None else tirx.const(0.0, F64) - value
        if isinstance(node, gast.Name):
            var = self.variables.get(node.id)
            t = self.incoming.get(node.id)
            if var is None or t is None or t.kind not in "iu" or len(var.types) != 1 or node.id in self.assigned:
                return None
            return var.buffer[0].astype(F64)
        if isinstance(node, gast.Call) and self.calls.get(node) == "len" and len(node.args) == 1:
            return self.static_extent(node.args[0], 0)
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute) \
                and node.value.attr == "shape":
            k = shape_axis(node)
            return self.static_extent(node.value.value, k) if k is not None else None
        if isinstance(node, gast.Attribute) and node.attr == "size" and isinstance(node.value, gast.Name):
            buf = self.arrays.get(node.value.id)
            if buf is None or node.value.id in self.local_types:
                return None
            size = tirx.const(1.0, F64)
            for extent in buf.shape:
                size = size * extent.astype(F64)
            return size
        return None

    def static_extent(self, node, k):
        if not isinstance(node, gast.Name) or node.id in self.local_types:
            return None
        buf = self.arrays.get(node.id)
        if buf is None or not -len(buf.shape) <= k < len(buf.shape):
            return None
        return buf.shape[k].astype(F64)

    # -- the statement ------------------------------------------------------------------------------
    def append(self, e) -> None:
        """``name.append(value)``: the value into the list's stretch, the count up by one."""
        lst = next(x for x in self.lists if x.name == e.func.value.id)
        value = self.settled(self.expr(e.args[0]))
        self.assign(lst.variable, value, e)
        var = self.variables[lst.variable]
        if not set(value.types) <= set(var.types):
            return                                   # (a stale layout: the next build fits)
        if any(t.kind == "c" for t in var.types):
            raise self.refusal(f"complex values appended to {lst.name!r}", e)
        from .loops import _bits_as_int64, _cast

        wide = _wide(var.dtype)
        count = self.bind(self.status[self.count_slot(lst)], I64)
        if id(e) in self.unbounded_appends:      # out of room: run again with twice as much, from the start
            self.need_room(count >= self.room(), self.room() * tirx.const(2, I64))
            self.go_on_if_ok()
        else:
            # (the entry check makes room for every append; this one only keeps a wrong bound from
            # writing past the buffer)
            self.fail(count >= self.room(), e, lambda values: AssertionError(
                "astjit: a compiled loop appended more values than it made room for (a bug in astjit)"))
        at = self.stretch(lst) + count
        held = _cast(value.expr, value.dtype, var.dtype)       # (in the dtype holding each type's values)
        T.buffer_store(self.status, _bits_as_int64(_cast(held, var.dtype, wide), wide), [at])
        if self.tagged(lst):
            T.buffer_store(self.status, var.tag[0].astype(I64), [at + self.room()])
        T.buffer_store(self.status, count + tirx.const(1, I64), [self.count_slot(lst)])

    def appended_types(self) -> list:
        """Per list: the Scalar types of its values, in the order of their index (None where the loop
        appends nothing to it)."""
        return [(lst.name, tuple(self.variables[lst.variable].types) if self.var_types.get(lst.variable) else None)
                for lst in self.lists]


def _append_sites(loop, calls, name):
    """(call node, the for/while loops around it from ``loop`` inwards) per ``name.append`` in ``loop``."""
    def walk(node, loops):
        if isinstance(node, gast.For | gast.While):
            loops = loops + [node]
        if isinstance(node, gast.Call) and calls.get(node) == "append" and node.func.value.id == name:
            yield node, loops
        for child in gast.iter_child_nodes(node):
            yield from walk(child, loops)

    yield from walk(loop, [])


SHORT_MIXED_LIST = 24         # values of several types converted one by one below this many (list_converter)


def list_converter(types):
    """``convert(slots[, tags])``: the int64 slots a list's values were written to, as the Python
    objects Python's ``append`` would have put in the list (Python numbers, or numpy scalars of the
    type); with several ``types``, each value's by its index in ``tags`` (the values in the dtype that
    holds them all, exactly: an int there is below 2**53)."""
    if len(types) == 1:
        return _list_converter(types[0])
    from .loop_types import storage_dtype

    held = np.dtype(_wide(storage_dtype(types)))

    def maker(t):
        """What makes a value of type ``t`` of a Python number in ``held``; None: the number itself."""
        if t.python:
            return bool if t.kind == "b" else int if t.kind in "iu" and held == np.float64 else None
        return t.type

    makers = [maker(t) for t in types]

    def as_objects(t, values):
        """``values`` (in ``held``) as the objects of type ``t``, converted together."""
        if t.python:
            return (values.astype(bool) if t.kind == "b" else values.astype(np.int64) if t.kind in "iu"
                    else values).tolist()
        return list(values.astype(t.dtype))

    def convert(slots, tags):
        # every value converted to each type, together, then each taken from its type's column (one
        # constructor call per value, with a test of its type, cost 420 ns a value: a loop appending
        # x[i] or 0 ran 3x plain Python)
        values = slots.view(held) if held == np.float64 else slots
        if len(values) < SHORT_MIXED_LIST:      # (a few values: one call each is cheaper than columns)
            return [v if make is None else make(v)
                    for v, make in zip(values.tolist(), [makers[k] for k in tags.tolist()])]
        columns = [as_objects(t, values) for t in types]
        return [columns[k][i] for i, k in enumerate(tags.tolist())]

    return convert


def _list_converter(t):
    dtype = np.dtype(t.dtype)
    wide = np.dtype(_wide(t.dtype))

    if t.python:
        if dtype == np.float64:
            return lambda slots: slots.view(np.float64).tolist()
        if dtype == np.int64:
            return lambda slots: slots.tolist()
        return lambda slots: slots.astype(bool).tolist()
    if wide == np.float64:
        return lambda slots: list(slots.view(np.float64).astype(dtype))
    return lambda slots: list(slots.astype(dtype))
