"""An executable plan: the segments of one specialization, run in order over a list of slots.

Whatever goes wrong before the first in-place effect has written anything runs the block's original
Python instead, so the user sees numpy's own exception (or result) at their own line; after an effect
has run, re-running would apply it twice, so the error propagates as raised.
"""


from ..backends.numpy_backend import EFFECTS_DONE
from ..graph.types import Static


class Plan:
    def __init__(self, ctx, graph, segments, fallback, n_outputs):
        self.segments = segments
        self.fallback = fallback
        slot = {}
        template = []
        for node in graph.nodes:
            slot[node] = len(template)
            t = ctx.types.get(node)
            template.append(t.value if isinstance(t, Static) else None)
        self.template = template
        self.input_slots = [slot[n] for n in graph.inputs]
        self.steps = []
        first_effect = None
        for k, seg in enumerate(segments):
            self.steps.append((seg.executable, [slot[n] for n in seg.inputs], [slot[n] for n in seg.outputs]))
            if first_effect is None and any(n in ctx.effects for n in seg.nodes):
                first_effect = k
        self.first_effect = len(self.steps) if first_effect is None else first_effect
        self.output_slots = [slot[n] for _, n in graph.outputs]
        self.copy_outputs = [isinstance(ctx.types.get(n), Static) and isinstance(ctx.types[n].value, list)
                             for _, n in graph.outputs]
        self.n_outputs = n_outputs
        # called with (segment, exception) where a compiled segment raises: a backend's bug, which the
        # specialization stops running (runtime/fragment.Fragment.kernel_failed)
        self.kernel_failed = None

    def __call__(self, *args):
        values = list(self.template)
        for s, a in zip(self.input_slots, args):
            values[s] = a
        k = 0
        try:
            for k, (run, ins, outs) in enumerate(self.steps):  # noqa: B007 (k is read below)
                results = run(*[values[i] for i in ins])
                for i, r in zip(outs, results):
                    values[i] = r
        except Exception as exc:
            if self.kernel_failed is not None and not self.segments[k].reference:
                self.kernel_failed(self.segments[k], exc)
            if not (k < self.first_effect or (k == self.first_effect and getattr(exc, EFFECTS_DONE, True) is False)):
                raise
        else:
            out = [list(values[i]) if c else values[i] for i, c in zip(self.output_slots, self.copy_outputs)]
            if self.n_outputs == 0:
                return None
            if self.n_outputs == 1:
                return out[0]
            return tuple(out)
        # nothing was written yet: numpy's error at the user's line (outside the except clause: not
        # chained to the segment's)
        return self.fallback(*args)
