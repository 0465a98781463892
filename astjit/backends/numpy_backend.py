"""The numpy backend: runs each node by calling the op's reference implementation.

It supports every op, so a partition always exists, and since the reference implementation is the very
callable the user's code would have run, it reproduces numpy exactly (values, dtypes, views, in-place
updates, errors).
"""

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
        """``run(*inputs)``: each node's reference implementation, in order."""
        position = {n: i for i, n in enumerate(segment.inputs)}
        steps = []
        for k, node in enumerate(segment.nodes):
            position[node] = len(segment.inputs) + k
            impl = OPS[node.op].impl
            arg_slots = [_slot(position, ctx, a) for a in node.args]
            kw_slots = {name: _slot(position, ctx, v) for name, v in node.kwargs.items()}
            steps.append((impl, arg_slots, kw_slots))
        out_positions = [position[n] for n in segment.outputs]

        effect_steps = [k for k, node in enumerate(segment.nodes) if node in ctx.effects]

        def run(*inputs):
            values = list(inputs)
            try:
                for impl, arg_slots, kw_slots in steps:
                    args = [values[s] if type(s) is int else s.value for s in arg_slots]
                    if kw_slots:
                        kwargs = {k: values[s] if type(s) is int else s.value for k, s in kw_slots.items()}
                        values.append(impl(*args, **kwargs))
                    else:
                        values.append(impl(*args))
            except Exception as exc:
                failed = len(values) - len(inputs)
                mark_effects_done(exc, any(k < failed for k in effect_steps))
                raise
            return tuple(values[p] for p in out_positions)

        return run


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
