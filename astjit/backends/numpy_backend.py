"""The numpy backend: runs each node by calling the op's reference implementation.

It supports every op, so a partition always exists, and since the reference implementation is the very
callable the user's code would have run, it reproduces numpy exactly (values, dtypes, views, in-place
updates, errors).
"""

import sys

import numpy as np

from ..graph.ops import OPS
from .contract import Backend, Compiled


class NumpyBackend(Backend):
    name = "numpy"
    devices = ("cpu",)
    reference = True

    def supports(self, ctx, node):
        return None

    def compile(self, ctx, segment) -> Compiled:
        return Compiled(self.runner(ctx, segment), "numpy")

    def runner(self, ctx, segment):
        """``run(*inputs)``: each node's reference implementation, in order. An intermediate array is
        let go after its last use, and an elementwise op whose operand is an intermediate array at its
        last use, of the result's dtype and shape, held by nothing else, writes its result into that
        array (``out=``), as numpy reuses an operator's temporary: ``(x - 1.0) * y`` over 1M float64
        took 2.3 ms through fresh arrays, 6x plain numpy's 0.38 ms, as each new 8 MB array faulted
        in fresh pages."""
        position = {n: i for i, n in enumerate(segment.inputs)}
        slots = []
        for k, node in enumerate(segment.nodes):
            position[node] = len(segment.inputs) + k
            arg_slots = [_slot(position, ctx, a) for a in node.args]
            kw_slots = {name: _slot(position, ctx, v) for name, v in node.kwargs.items()}
            slots.append((arg_slots, kw_slots))
        out_positions = [position[n] for n in segment.outputs]
        last_reads = _last_reads(slots, len(segment.inputs), set(out_positions))
        steps = []
        for node, (arg_slots, kw_slots), dropped in zip(segment.nodes, slots, last_reads):
            steps.append((OPS[node.op].impl, arg_slots, kw_slots, dropped,
                          *_reusable_operand(ctx, node, arg_slots, kw_slots, dropped)))

        effect_steps = [k for k, node in enumerate(segment.nodes) if node in ctx.effects]

        def run(*inputs):
            values = list(inputs)
            try:
                for impl, arg_slots, kw_slots, dropped, reuse, ufunc in steps:
                    args = [values[s] if type(s) is int else s.value for s in arg_slots]
                    if kw_slots:
                        kwargs = {k: values[s] if type(s) is int else s.value for k, s in kw_slots.items()}
                        values.append(impl(*args, **kwargs))
                    elif reuse is not None and _free_to_write(values[reuse], args):
                        values.append(ufunc(*args, out=values[reuse]))
                    else:
                        values.append(impl(*args))
                    for s in dropped:
                        values[s] = None
            except Exception as exc:
                failed = len(values) - len(inputs)
                mark_effects_done(exc, any(k < failed for k in effect_steps))
                raise
            return tuple(values[p] for p in out_positions)

        return run


# results of at least this many bytes go into an intermediate: below it, numpy's allocator reuses
# freed memory anyway, and the runner's tests (0.45 us a step) cost more than they save
REUSE_BYTES = 1 << 16
# operators whose ndarray method is not the ufunc alone: ``t ** 0.5`` is np.sqrt (``** -1``
# np.reciprocal, ``** 2`` np.square), whose bits and warnings differ from np.power's for complex numbers
OPERATORS_OF_THEIR_OWN = {"power"}


def _reusable_operand(ctx, node, arg_slots, kw_slots, dropped) -> tuple:
    """(slot, ufunc): an operand of ``node``, an elementwise ufunc of no keywords, that is an
    intermediate read here for the last time with the result's dtype and shape; (None, None) if none."""
    from ..graph.types import ArrayType

    op = OPS[node.op]
    t = ctx.types[node]
    if (op.kind != "elementwise" or op.ufunc is None or kw_slots or not isinstance(t, ArrayType)
            or len(arg_slots) != op.ufunc.nin or op.ufunc.nout != 1 or t.ndim == 0
            or t.size * t.dtype.itemsize < REUSE_BYTES or node.op in OPERATORS_OF_THEIR_OWN):
        return None, None
    for s, operand in zip(arg_slots, node.args):
        ot = ctx.types[operand]
        if s in dropped and isinstance(ot, ArrayType) and ot.dtype == t.dtype and ot.shape == t.shape:
            return s, op.ufunc
    return None, None


def _free_to_write(value, args) -> bool:
    """Whether the result may go into ``value``: a C-contiguous array of its own that only the runner
    holds (the values list and ``args``: ALONE), with C-contiguous array operands (the result's memory
    order is then numpy's own) and no other kind of operand than numbers."""
    if type(value) is not np.ndarray or not (value.flags.c_contiguous and value.flags.owndata
                                             and value.flags.writeable) or sys.getrefcount(value) != ALONE:
        return False
    return all(a.flags.c_contiguous if type(a) is np.ndarray else isinstance(a, int | float | complex | np.generic)
               for a in args)


def _references(value, args) -> int:
    """``value``'s reference count as ``_free_to_write`` sees it (one parameter, the call's own)."""
    return sys.getrefcount(value)


def _alone() -> int:
    """The count of an array that only the runner holds (its values list and ``args``): measured, as
    the interpreter's own references differ between Python versions."""
    values = [np.empty(1)]
    args = [values[0]]
    return _references(values[0], args)


ALONE = _alone()


def _last_reads(slots, n_inputs, kept) -> list:
    """Per step, the positions of the intermediate values (not outputs) it reads for the last time."""
    last = {}
    for k, (arg_slots, kw_slots) in enumerate(slots):
        for s in list(arg_slots) + list(kw_slots.values()):
            if type(s) is int and s >= n_inputs and s not in kept:
                last[s] = k
    dropped = [[] for _ in slots]
    for s, k in last.items():
        dropped[k].append(s)
    return dropped


EFFECTS_DONE = "_astjit_effects_done"


def mark_effects_done(exc, done: bool) -> None:
    """Tell the plan whether an in-place update completed before ``exc``. numpy checks an update fully
    (index, shape, cast) before writing, so an update that raised wrote nothing, and the block's own
    statements can still run from the start and raise at the user's line."""
    try:
        setattr(exc, EFFECTS_DONE, done)
    except AttributeError:  # an exception type without a __dict__: assume the worst
        pass


class _Const:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _slot(position, ctx, operand):
    """An int position for a runtime value, or a _Const holding a static one."""
    from ..graph.types import Static

    t = ctx.types[operand]
    if isinstance(t, Static):
        return _Const(t.value)
    return position[operand]
