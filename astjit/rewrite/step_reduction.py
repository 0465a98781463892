"""What ``push_reductions_into_loops`` (rewrite/reduction_into_loop) leaves in a function: a reduction
of stacked per-step arrays, accumulated as the steps come.

``StepReduction(kind, axis, expression, reduced_step)`` stands for ``np.<kind>(expression(
np.stack(values), *operands), axis=axis)``: ``add(value, *operands)`` takes one step, ``result(
*operands)`` gives the reduction. Steps of at least ``LARGE_STEP_BYTES`` are reduced one at a time by
``reduced_step`` (a jitted function: that step's sum, max or min, or over the step axis its
expression, one fused kernel); smaller ones are kept and reduced as a stack of up to
``CHUNK_BYTES`` by numpy, as the original code reduces the whole stack (a kernel call per step of a
few elements cost 3-4x the original). An operand with one axis more than the steps' values is taken
a run of steps at a time (``operand[k0:k1]``; one whose step axis has length 1 broadcasts whole), as
broadcasting against the stacked array pairs them; any other shape of operand (or a zero-size step)
keeps all the values and reduces the stack at the end, as the original code did. An error computing
a step is raised by ``result``, where the original code would have raised it.
"""

import math

import numpy as np

REDUCE = {"sum": np.sum, "mean": np.sum, "max": np.max, "min": np.min}      # a mean divides at the end
COMBINE = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}
LARGE_STEP_BYTES = 64 * 1024
CHUNK_BYTES = 256 * 1024


class StepReduction:
    __slots__ = ("kind", "axis", "expression", "reduced_step", "count", "total", "size", "kept", "kept_bytes",
                 "chunk_start", "keep_all", "reduce_at", "takes", "error", "dtype")

    def __init__(self, kind, axis, expression, reduced_step):
        self.kind = kind
        self.axis = axis                    # None (every axis) or 0 (the step axis)
        self.expression = expression        # expression(stacked, *operands): elementwise
        self.reduced_step = reduced_step
        self.count = 0                      # steps added
        self.total = None
        self.size = 0                       # elements reduced (for a mean over every axis)
        self.kept = []                      # values not reduced yet: steps chunk_start, chunk_start + 1, ...
        self.kept_bytes = 0
        self.chunk_start = 0
        self.keep_all = False               # the steps cannot be reduced apart: the stack at the end
        self.reduce_at = CHUNK_BYTES        # kept bytes that make a chunk (0: every step; inf: never)
        self.takes = None                   # per operand: "whole", "first" (step axis of 1) or "step"
        self.error = None
        self.dtype = None

    def add(self, value, *operands):
        if type(value) is not np.ndarray:
            value = np.asanyarray(value)
        if not self.count:
            self.takes = [_take(np.ndim(o), np.shape(o), value.ndim) for o in operands]
            self.keep_all = value.size == 0 or None in self.takes
            self.reduce_at = math.inf if self.keep_all else 0 if value.nbytes >= LARGE_STEP_BYTES else CHUNK_BYTES
        self.count += 1
        if self.error is None:
            self.kept.append(value)
            self.kept_bytes += value.nbytes
            if self.kept_bytes >= self.reduce_at:
                self._reduce_kept(operands)

    def _reduce_kept(self, operands):
        """Reduce the kept steps into the total: one step by the jitted function, several as a stack."""
        k0, k1 = self.chunk_start, self.chunk_start + len(self.kept)
        try:
            one = len(self.kept) == 1
            parts = []
            for o, take in zip(operands, self.takes):
                if take == "step" and k1 > np.shape(o)[0]:
                    raise _mismatch(o, k1)
                if take == "whole":
                    parts.append(o)
                elif one:
                    parts.append(o[0] if take == "first" else o[k0])
                else:
                    parts.append(o if take == "first" else o[k0:k1])
            if one:
                value = self.kept[0]
                reduced = self.reduced_step(value, *parts)
                shape = value.shape
            else:
                value = np.stack(self.kept)
                reduced = REDUCE[self.kind](self.expression(value, *parts), axis=self.axis)
                shape = value.shape[1:] if self.axis == 0 else value.shape
            if self.axis is None:
                self.size += math.prod(np.broadcast_shapes(shape, *[np.shape(p) for p in parts]))
            self.dtype = np.asarray(reduced).dtype
            self.total = reduced if self.total is None else COMBINE[self.kind](self.total, reduced)
        except Exception as exc:     # the original raises it after the loop, where the list is reduced
            self.error = exc
        self.chunk_start = k1
        self.kept, self.kept_bytes = [], 0

    def result(self, *operands):
        if self.count == 0:
            raise ValueError("need at least one array to stack")
        if self.keep_all:
            reduce = np.mean if self.kind == "mean" else REDUCE[self.kind]
            return reduce(self.expression(np.stack(self.kept), *operands), axis=self.axis)
        if self.kept and self.error is None:
            self._reduce_kept(operands)
        if self.error is not None:
            raise self.error
        for o, take in zip(operands, self.takes):
            if take == "step" and np.shape(o)[0] != self.count:
                raise _mismatch(o, self.count)
        if self.kind != "mean":
            return self.total
        # numpy's mean: a float or complex sum's dtype, else float64
        mean_dtype = self.dtype if self.dtype.kind in "fc" else np.dtype(np.float64)
        if self.axis is None:
            return mean_dtype.type(self.total / self.size)
        return np.asarray(self.total / self.count).astype(mean_dtype, copy=False)


def _take(ndim, shape, value_ndim):
    if ndim <= value_ndim:
        return "whole"
    if ndim == value_ndim + 1:
        return "first" if shape[0] == 1 else "step"
    return None


def _mismatch(operand, steps):
    return ValueError(f"operands could not be broadcast together: {steps} stacked steps against an operand of "
                      f"shape {np.shape(operand)}")
