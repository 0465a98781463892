"""What ``push_reductions_into_loops`` (rewrite/reduction_into_loop) leaves in a function: a reduction
of stacked per-step arrays, accumulated as the steps come.

``StepReduction(kind, axis, expression, reduced_step)`` stands for ``np.<kind>(expression(
np.stack(values), *operands), axis=axis)``: ``add(value, *operands)`` takes one step (``reduced_step``,
a jitted function, gives that step's sum, max or min, or over the step axis its expression),
``result(*operands)`` gives the reduction. An operand with one axis more than the steps' values is taken a step at a time
(``operand[k]``, or ``operand[0]`` where that axis has length 1), as broadcasting against the stacked
array would pair them; any other shape of operand (or a zero-size step) keeps the values and reduces
the stacked array at the end, as the original code did. An error computing a step is raised by
``result``, where the original code would have raised it.
"""

import math

import numpy as np

REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}
COMBINE = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}


class StepReduction:
    __slots__ = ("kind", "axis", "expression", "reduced_step", "count", "total", "size", "kept", "takes", "error",
                 "dtype")

    def __init__(self, kind, axis, expression, reduced_step):
        self.kind = kind
        self.axis = axis                    # None (every axis) or 0 (the step axis)
        self.expression = expression        # expression(stacked, *operands): elementwise
        self.reduced_step = reduced_step
        self.count = 0                      # steps added
        self.total = None
        self.size = 0                       # elements reduced (for a mean over every axis)
        self.kept = None                    # the values themselves, where steps cannot be reduced apart
        self.takes = None                   # per operand: "whole", "first" or "step"
        self.error = None
        self.dtype = None

    def add(self, value, *operands):
        value = np.asanyarray(value)
        if self.count == 0:
            self.takes = [_take(np.ndim(o), np.shape(o), value.ndim) for o in operands]
            if value.size == 0 or None in self.takes:
                self.kept = []
        k = self.count
        self.count += 1
        if self.kept is not None:
            self.kept.append(value)
            return
        if self.error is not None:
            return
        try:
            parts = []
            for o, take in zip(operands, self.takes):
                if take == "step" and k >= np.shape(o)[0]:
                    raise _mismatch(value, o, k + 1)
                parts.append(o if take == "whole" else o[0] if take == "first" else o[k])
            reduced = self.reduced_step(value, *parts)
            if self.axis is None:
                self.size += math.prod(np.broadcast_shapes(value.shape, *[np.shape(p) for p in parts]))
            self.dtype = np.asarray(reduced).dtype
            self.total = reduced if self.total is None else COMBINE[self.kind](self.total, reduced)
        except Exception as exc:     # the original raises it after the loop, where the list is reduced
            self.error = exc

    def result(self, *operands):
        if self.count == 0:
            raise ValueError("need at least one array to stack")
        if self.kept is not None:
            return REDUCE[self.kind](self.expression(np.stack(self.kept), *operands), axis=self.axis)
        if self.error is not None:
            raise self.error
        for o, take in zip(operands, self.takes):
            if take == "step" and np.shape(o)[0] != self.count:
                raise _mismatch(None, o, self.count)
        if self.kind != "mean":
            return self.total
        mean_dtype = np.mean(np.zeros(1, self.dtype)).dtype
        if self.axis is None:
            return mean_dtype.type(self.total / self.size)
        return np.asarray(self.total / self.count).astype(mean_dtype, copy=False)


def _take(ndim, shape, value_ndim):
    if ndim <= value_ndim:
        return "whole"
    if ndim == value_ndim + 1:
        return "first" if shape[0] == 1 else "step"
    return None


def _mismatch(value, operand, steps):
    return ValueError(f"operands could not be broadcast together: {steps} stacked steps against an operand of "
                      f"shape {np.shape(operand)}")
