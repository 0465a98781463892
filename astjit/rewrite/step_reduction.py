"""What ``push_reductions_into_loops`` (rewrite/reduction_into_loop) leaves in a function: a reduction
of stacked per-step arrays, accumulated as the steps come.

``StepReduction(kind, axis, expression, reduced_step, stacked_by)`` stands for ``np.<kind>(
expression(np.<stacked_by>(values), *operands), axis=axis)``: ``add(value, *operands)`` takes one
step, ``result(*operands)`` gives the reduction. Steps of at least ``LARGE_STEP_BYTES`` are reduced one
at a time by ``reduced_step`` (a jitted function: that step's sum, max or min, or over the step axis
its expression, one fused kernel); from ``SMALL_STEP_BYTES`` up they are kept and reduced as a stack
of up to ``CHUNK_BYTES`` by numpy, as the original code reduces the whole stack (a kernel call per step
of a few elements cost 3-4x the original). Smaller steps, numbers among them, are all kept by the
list's own append (``add`` becomes it) and reduced at the end as written: a Python call per step cost
more than the step (10,000 scalar steps: 6.3 ms against the original's 1.3 ms). An operand with one
axis more than the steps' values is taken a run of steps at a time (``operand[k0:k1]``; one whose
step axis has length 1 broadcasts whole), as broadcasting against the stacked array pairs them; a
single step is kept, since its stack broadcasts against the operand's every step.

Totals accumulate in the dtype numpy's reduction of the whole stack accumulates in (a sum of int8 in
int64, a mean of integers in float64, of float16 in float32), and the result has numpy's dtype and
type (a numpy scalar where numpy gives one); a step of another dtype than those before it moves the
totals and the later steps to the dtype np.stack promotes them all to. Where the steps cannot be
reduced apart (no steps, a zero-size step, an operand of any other shape, numpy's floating-point error
state set to raise when the reduction is made), every value is kept and the original reduction runs
at the end, as written.
An error the original raises when it stacks or reduces (steps of different shapes, an operand that
does not broadcast) is raised by ``result``, where the original raises it.
"""

import math

import numpy as np

from ..runtime import fpstate

REDUCE = {"sum": np.sum, "mean": np.sum, "max": np.max, "min": np.min}      # a mean divides at the end
ORIGINAL = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}
COMBINE = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}
STACKS = {"stack": np.stack, "array": np.array, "asarray": np.asarray}
SMALL_STEP_BYTES = 4 * 1024
LARGE_STEP_BYTES = 64 * 1024
CHUNK_BYTES = 256 * 1024


class StepReduction:
    __slots__ = ("kind", "axis", "expression", "reduced_step", "stack", "count", "total", "size", "kept",
                 "kept_bytes", "chunk_start", "keep_all", "reduce_at", "takes", "error", "stack_error", "shape",
                 "accumulate", "result_dtype", "jitted_step", "options", "dtype", "add")

    def __init__(self, kind, axis, expression, reduced_step, stacked_by="stack"):
        self.kind = kind
        self.axis = axis                    # None (every axis) or 0 (the step axis)
        self.expression = expression        # expression(stacked, *operands): elementwise
        self.reduced_step = reduced_step
        self.stack = STACKS[stacked_by]
        self.count = 0                      # steps added
        self.total = None
        self.size = 0                       # elements reduced (for a mean over every axis)
        self.kept = []                      # values not reduced yet: steps chunk_start, chunk_start + 1, ...
        self.kept_bytes = 0
        self.chunk_start = 0
        # under an error state that raises, numpy's reaction to the whole stack is part of the result
        self.keep_all = not fpstate.kernels_allowed()
        self.reduce_at = CHUNK_BYTES        # kept bytes that make a chunk (0: every step; inf: never)
        self.takes = None                   # per operand: "whole", "first" (step axis of 1) or "step"
        self.error = None                   # the first error reducing a chunk or stacking: no more steps kept
        self.stack_error = None             # the error stacking the values (different shapes): raised first
        self.shape = None                   # the first step's shape
        self.dtype = None                   # the steps' dtype, as np.stack promotes them so far
        self.accumulate = None              # the dtype totals are kept in
        self.result_dtype = None            # a mean's dtype
        self.jitted_step = True             # whether reduced_step sums in the accumulation dtype
        self.options = {}                   # numpy's reduction of a chunk: {"dtype": ...} where not its own
        # add(value, *operands) takes one step: _add, or where every value is kept, the list's own append
        self.add = self._add
        if self.keep_all:
            self._keep_all()

    def _keep_all(self):
        """Keep every value from now on, as the original's list holds it, at the cost of its append."""
        self.keep_all = True
        append = self.kept.append
        if self.expression.__code__.co_argcount == 1:       # no operands
            self.add = append
        else:
            def add(value, *operands):
                append(value)
            self.add = add

    def _add(self, value, *operands):
        self.count += 1
        if self.keep_all:
            self.kept.append(value)          # as the original's list holds it
            return
        step = value
        if type(value) is not np.ndarray:
            value = np.asanyarray(value)
            if type(value) is not np.ndarray:            # a subclass: a masked array, a matrix
                if self.total is None and self.chunk_start == 0:
                    # (nothing reduced yet: every value kept, the original's reduction at the end; a
                    # jitted step's sum skipped a masked array's masked elements, np.stack's does not)
                    self._keep_all()
                    self.kept.append(step)
                    return
                value = np.asarray(value)                 # (its data, as np.stack takes it)
        if value.shape != self.shape:        # the first step (no shape yet), or one np.stack refuses
            if self.count == 1:
                self._plan(value, operands)
                if self.keep_all:
                    self._keep_all()
                    self.kept.append(step)
                    return
            elif self.stack_error is None:
                self.stack_error = _stack_error(self.stack, self.shape, value)
                self.error = self.error or self.stack_error
        if self.error is None:
            if value.dtype != self.dtype:     # np.stack would give every step the dtype of all
                try:
                    self._promote(value.dtype, operands)
                except Exception as exc:      # (no common dtype: the original's np.stack raises it, after
                    self.error = exc          # the loop)
                    return
                value = value.astype(self.dtype, copy=False)
            self.kept.append(value)
            self.kept_bytes += value.nbytes
            if self.kept_bytes >= self.reduce_at:
                self._reduce_kept(operands)

    def _plan(self, value, operands):
        """From the first step: how operands are taken, when steps are reduced, and in which dtype."""
        self.shape = value.shape
        self.dtype = value.dtype
        self.takes = [_take(np.ndim(o), np.shape(o), value.ndim) for o in operands]
        # a step under SMALL_STEP_BYTES costs the original less than a call of _add: its list is kept;
        # so are the values where an operand is an array subclass (a masked operand's mean counts only
        # unmasked elements, which the steps' totals cannot tell; a subclass step: _add keeps them all)
        self.keep_all = value.nbytes < SMALL_STEP_BYTES or None in self.takes or not all(_plain(o) for o in operands)
        if self.keep_all:
            return
        self.reduce_at = 0 if value.nbytes >= LARGE_STEP_BYTES else CHUNK_BYTES
        key = (self.expression.__code__, self.kind, self.axis, value.dtype, *map(_dtype_or_type, operands))
        dtypes = _dtypes.get(key)
        if dtypes is None:
            dtypes = _dtypes[key] = _accumulation(self.kind, self.axis,
                                                  _expression_dtype(self.expression, value, operands))
        if dtypes is False:
            self.keep_all = True
        else:
            self.accumulate, self.result_dtype, self.jitted_step, self.options = dtypes

    def _promote(self, dtype, operands):
        """A step of another dtype: the steps from now on are taken in the dtype numpy stacks them all
        in, and the totals and the result in its reduction's (the steps reduced before keep the
        rounding of their own dtype)."""
        self.dtype = np.promote_types(self.dtype, dtype)
        dtypes = _accumulation(self.kind, self.axis,
                               _expression_dtype(self.expression, np.ones((), self.dtype), operands))
        if dtypes is False:           # the expression refuses the promoted dtype: so does the original
            try:
                self.expression(np.ones((), self.dtype), *operands)
            except Exception as exc:
                self.error = exc
            else:
                self.error = TypeError(f"steps of {self.dtype} cannot be reduced")
            return
        self.accumulate, self.result_dtype, self.jitted_step, self.options = dtypes
        if self.total is not None:
            self.total = self.total.astype(self.accumulate)

    def _reduce_kept(self, operands):
        """Reduce the kept steps into the total: one step by the jitted function, several as a stack."""
        if self.count == 1 and "step" in self.takes:
            return                  # a lone step broadcasts against an operand's whole step axis: see result
        k0, k1 = self.chunk_start, self.chunk_start + len(self.kept)
        try:
            one = len(self.kept) == 1 and self.jitted_step
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
                reduced = REDUCE[self.kind](self.expression(value, *parts), axis=self.axis, **self.options)
                shape = value.shape[1:] if self.axis == 0 else value.shape
            if self.axis is None:
                self.size += math.prod(np.broadcast_shapes(shape, *[np.shape(p) for p in parts]))
            if self.total is None:   # a copy: a step's own array must not become the result
                if isinstance(reduced, np.ndarray) or getattr(reduced, "dtype", None) != self.accumulate:
                    reduced = np.asarray(reduced).astype(self.accumulate)
                if self.kind in ("sum", "mean"):
                    # numpy's sum starts from its identity, 0: a lone step's -0.0 (reduced_step sums
                    # nothing over the step axis) comes out as numpy's 0.0
                    reduced = np.add(reduced, 0, dtype=self.accumulate)
                self.total = reduced
            else:
                self.total = COMBINE[self.kind](self.total, reduced, dtype=self.accumulate)
        except Exception as exc:     # the original raises it after the loop, where the list is reduced
            self.error = exc
        self.chunk_start = k1
        self.kept, self.kept_bytes = [], 0

    def result(self, *operands):
        if self.count == 0 or self.keep_all:
            return ORIGINAL[self.kind](self.expression(self.stack(self.kept), *operands), axis=self.axis)
        if self.stack_error is not None:
            raise self.stack_error
        if self.count == 1 and "step" in self.takes:
            # numpy broadcasts the stack of one step, (1, ...), against every step of the operand
            return ORIGINAL[self.kind](self.expression(self.stack(self.kept), *operands), axis=self.axis)
        if self.kept and self.error is None:
            self._reduce_kept(operands)
        if self.error is not None:
            raise self.error
        for o, take in zip(operands, self.takes):
            if take == "step" and np.shape(o)[0] != self.count:
                raise _mismatch(o, self.count)
        total = self.total
        if self.kind == "mean":
            if self.axis is None:
                return self.result_dtype.type(total / self.size)
            total = np.true_divide(total, self.count, dtype=self.accumulate).astype(self.result_dtype, copy=False)
        return total[()] if total.ndim == 0 else total        # numpy gives a scalar, not a 0-d array


_dtypes: dict = {}       # (expression's code, kind, axis, dtypes) -> _accumulation's answer


def _accumulation(kind, axis, dtype):
    """(the dtype numpy's reduction of the stack accumulates in, a mean's dtype, whether reduced_step
    may reduce a step alone, the options a chunk's np.sum needs to accumulate in it) for an expression
    of ``dtype``; False where the dtype is not known."""
    if dtype is None:
        return False
    summed = np.sum(np.zeros(1, dtype)).dtype                # numpy's sum: small integers in int64 / uint64
    if kind == "sum":
        return summed, None, True, {}
    if kind != "mean":
        return dtype, None, True, {}
    # numpy's mean: integers and booleans in float64, float16 in float32 (then float16 again)
    accumulate = np.dtype(np.float64) if dtype.kind in "iub" else np.dtype(np.float32) if dtype == np.float16 \
        else dtype
    # over every axis reduced_step sums in ``summed``: float16 would overflow where float32 does not,
    # and int64 / uint64 wrap where float64 does not (a step of smaller integers cannot reach 2**63)
    jitted = axis == 0 or summed == accumulate or dtype.kind in "iub" and dtype.itemsize < 8
    return (accumulate, np.dtype(np.float16) if dtype == np.float16 else accumulate, jitted,
            {} if accumulate == dtype else {"dtype": accumulate})


def _plain(operand) -> bool:
    """A number, a numpy scalar or a base-class ndarray (no subclass with its own reductions)."""
    return type(operand) in (bool, int, float, complex, np.ndarray) or isinstance(operand, np.generic)


def _dtype_or_type(operand):
    if type(operand) in (bool, int, float, complex):
        return type(operand)
    dtype = getattr(operand, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(operand).dtype


def _expression_dtype(expression, value, operands):
    """The dtype of ``expression`` on the stacked values, from 0-d samples of the same dtypes (numpy's
    promotion does not look at values); None where it cannot be told."""
    samples = [o if type(o) in (bool, int, float, complex) else np.ones((), np.asarray(o).dtype) for o in operands]
    try:
        with np.errstate(all="ignore"):
            return np.asarray(expression(np.ones((), value.dtype), *samples)).dtype
    except Exception:
        return None


def _take(ndim, shape, value_ndim):
    if ndim <= value_ndim:
        return "whole"
    if ndim == value_ndim + 1:
        return "first" if shape[0] == 1 else "step"
    return None


def _stack_error(stack, shape, value):
    """numpy's error stacking a value of ``shape`` and ``value`` (of another shape)."""
    try:
        stack([np.broadcast_to(np.zeros((), value.dtype), shape), value])
    except Exception as exc:
        return exc
    return ValueError(f"all input arrays must have the same shape: {shape} and {value.shape}")


def _mismatch(operand, steps):
    return ValueError(f"operands could not be broadcast together: {steps} stacked steps against an operand of "
                      f"shape {np.shape(operand)}")
