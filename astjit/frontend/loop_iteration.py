"""Loops over arrays as counted loops: ``for x in a``, ``for i, x in enumerate(a)`` and
``for x, y in zip(a, b)`` become ``for`` loops over ``range`` that read each item by index, the only
kind of ``for`` a loop kernel runs::

    for i, (x, y) in enumerate(zip(a, b)):          for i in range(min(len(a), len(b))):
        ...                                    ->       x = a[i]
                                                        y = b[i]
                                                        ...

Iterating a numpy array reads ``a[k]`` at each step (a numpy scalar for a 1-d array, a row for more
axes), as the indexed form does, so the two agree as long as the loop does not rebind the names it
iterates (Python's iterator keeps the object it started with): such a loop is refused. Only the
kernel is lowered from this form; a loop that runs as Python (a tiny loop, a fallback) runs as written,
so a list, a dict or a generator keeps Python's own iteration.
"""

import builtins
import operator

import gast
import numpy as np

LEN_CALL, RANGE_CALL, MIN_CALL, INDEX_CALL = "len", "range", "min", "index"


def builtin_name(op: str) -> str:
    """The name a generated call of builtin ``op`` reads where the loop's work is estimated in Python
    (frontend/loop_guard): a cell of the rewritten function (BUILTIN_CELLS), whatever the user's
    module defines."""
    return f"__astjit_{op}"


def estimate_int(v) -> int:
    """A ``range`` argument as the Python int a loop's work estimate computes with (frontend/loops):
    a numpy integer converted (its own arithmetic wraps and warns near its type's limits, where
    Python's never does), anything else a TypeError, without running the user's code (an object's
    ``__index__`` runs once, where ``range`` calls it): the estimate then runs the loop as written."""
    if type(v) is int or type(v) is bool or isinstance(v, np.integer):
        return int(v)
    raise TypeError(f"not an int the estimate takes: {type(v).__name__}")


ESTIMATE_INT_CALL, TYPE_CALL, INT_CALL, ISINSTANCE_CALL, INTEGER_CALL = (
    "estimate_int", "type", "int", "isinstance", "integer")
BUILTIN_CELLS = {**{builtin_name(op): getattr(builtins, op) for op in (LEN_CALL, RANGE_CALL, MIN_CALL, TYPE_CALL,
                                                                        INT_CALL, ISINSTANCE_CALL)},
                 builtin_name(INDEX_CALL): operator.index, builtin_name(ESTIMATE_INT_CALL): estimate_int,
                 builtin_name(INTEGER_CALL): np.integer}
# attribute of a generated ``x = a[k]``: the work estimate (frontend/loops.work_expression) leaves it out,
# as the loop written ``for x in a`` reads the item in the ``for`` statement itself
ITEM_READ = "astjit_item_read"


class NotIterable(Exception):
    """Why a loop's iteration has no counted form; ``node`` is where."""

    def __init__(self, reason, node):
        super().__init__(reason)
        self.reason = reason
        self.node = node


def _name(name, ctx=None):
    return gast.Name(id=name, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _call(op, args, calls):
    node = gast.Call(func=_name(builtin_name(op)), args=args, keywords=[])
    calls[node] = op                  # the kernel reads the op from here, whatever the name says
    return node


class CountedForm:
    """Rewrite one ``for`` over arrays in place; ``builtin(node)`` says which builtin (``enumerate``,
    ``zip``) a called name is, None for anything else; ``calls`` receives the generated calls' ops."""

    def __init__(self, loop, builtin, calls, assigned: set, counter: str):
        self.loop = loop
        self.builtin = builtin
        self.calls = calls
        self.assigned = assigned
        self.counter = counter
        self.iterated = []            # the array names, in order: their lengths bound the loop

    def rewrite(self) -> None:
        loop = self.loop
        source_node = loop.iter
        source, target, counter = loop.iter, loop.target, self.counter
        if (self.is_call(source, "enumerate") and len(source.args) == 1 and not source.keywords
                and isinstance(target, gast.Tuple)
                and len(target.elts) == 2 and isinstance(target.elts[0], gast.Name)):
            # ``for i, x in enumerate(a)``: ``i`` is the counter itself
            source, target, counter = source.args[0], target.elts[1], target.elts[0].id
        reads = self.items(source, target, counter)
        rebound = [n for n in self.iterated if n in self.assigned]
        if rebound:
            raise NotIterable(f"the loop rebinds {rebound[0]!r}, which it iterates over", loop.iter)
        lengths = [_call(LEN_CALL, [_name(n)], self.calls) for n in dict.fromkeys(self.iterated)]
        count = lengths[0] if len(lengths) == 1 else _call(MIN_CALL, lengths, self.calls)
        new_iter = _call(RANGE_CALL, [count], self.calls)
        loop.target = _name(counter, gast.Store())
        loop.iter = new_iter
        for s in reads:
            setattr(s, ITEM_READ, True)
        loop.body = reads + loop.body
        for node in [loop.target, *(n for s in reads for n in gast.walk(s)), *gast.walk(new_iter)]:
            if getattr(node, "lineno", None) is None:        # (the user's targets keep their own)
                gast.copy_location(node, source_node)

    def is_call(self, node, name) -> bool:
        keywords = {"start"} if name == "enumerate" else set()      # (``enumerate(a, start=1)``)
        return (isinstance(node, gast.Call) and {k.arg for k in node.keywords} <= keywords
                and isinstance(node.func, gast.Name) and self.builtin(node.func) == name)

    def items(self, source, target, index) -> list:
        """Assignments of ``target`` from ``source``'s item at the counter named ``index`` (recording
        the arrays iterated)."""
        if isinstance(source, gast.Name):
            if not isinstance(target, gast.Name):
                raise NotIterable("unpacking an array's items in the loop target", target)
            self.iterated.append(source.id)
            value = gast.Subscript(value=_name(source.id), slice=_name(index), ctx=gast.Load())
            return [gast.Assign(targets=[target], value=value, type_comment=None)]
        if self.is_call(source, "enumerate") and len(source.args) + len(source.keywords) in (1, 2) \
                and len(source.args) >= 1:
            if not (isinstance(target, gast.Tuple) and len(target.elts) == 2):
                raise NotIterable("enumerate() with a loop target that is not a pair", target)
            first, rest = target.elts
            if not isinstance(first, gast.Name):
                raise NotIterable("enumerate() with a counter that is not one name", first)
            start = (source.args[1] if len(source.args) == 2 else source.keywords[0].value if source.keywords
                     else gast.Constant(value=0, kind=None))
            if not (isinstance(start, gast.Constant) and type(start.value) is int) and not (
                    isinstance(start, gast.Name) and start.id not in self.assigned):
                raise NotIterable("enumerate() from a start that is not an int constant or a name the "
                                  "loop leaves unchanged", start)
            # (enumerate takes its start's __index__: a Python int whatever int type it is given)
            count = gast.Assign(targets=[first], type_comment=None,
                                value=gast.BinOp(left=_name(index), op=gast.Add(),
                                                 right=_call(INDEX_CALL, [start], self.calls)))
            return [count] + self.items(source.args[0], rest, index)
        if self.is_call(source, "zip") and source.args:
            if not (isinstance(target, gast.Tuple) and len(target.elts) == len(source.args)):
                raise NotIterable("zip() with a loop target that does not unpack each of its items", target)
            return [s for arg, t in zip(source.args, target.elts) for s in self.items(arg, t, index)]
        raise NotIterable("a loop over something other than range(...), a tuple of constants, an array "
                          "by name, enumerate() or zip() of arrays", source)


def reversed_range(node, calls):
    """``reversed(range(stop))`` and ``reversed(range(start, stop))`` as the ``range`` counting down
    (``range(stop - 1, start - 1, -1)``), for the kernel's copy of the loop; the loop as written keeps
    the original (range's own errors for arguments that are not ints)."""
    args = node.args[0].args
    start, stop = (gast.Constant(value=0, kind=None), args[0]) if len(args) == 1 else args

    def less_one(bound):
        return gast.BinOp(left=bound, op=gast.Sub(), right=gast.Constant(value=1, kind=None))

    new = _call(RANGE_CALL, [less_one(stop), less_one(start), gast.Constant(value=-1, kind=None)], calls)
    for n in gast.walk(new):
        if getattr(n, "lineno", None) is None:
            gast.copy_location(n, node)
    return new
