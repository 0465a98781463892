"""Sums and means of a 1-d row inside a compiled loop: ``a[i:i + w].sum()``, ``np.mean(x[i] * y)``.

numpy adds float elements pairwise (``pairwise_sum`` in numpy's loops_utils.h.src): fewer than 8
elements one by one; 8 to 128 elements in eight partial sums ``r[j] = x[j] + x[j + 8] + ...``, combined
as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the last ``n % 8`` one by one; more than
128 split at half the length rounded down to a multiple of 8, each half summed so and the two added.
The reduction starts from +0.0 (``np.array([-0.0]).sum()`` is 0.0). Where the elements are cast as they
are summed (the float64 mean of ints, bools), numpy reads them through buffers of 8192 elements and adds
the pairwise sum of each buffer to the total in turn. The kernel follows the same order
(the split as a loop over an explicit stack), so its float sums equal numpy's bit for bit, for any
stride; an expression of rows is summed element by element as it is computed, as numpy sums the
temporary array it would make. Integer sums are int64, wrapping as numpy's; unsigned ones (numpy sums
them as uint64) stay Python.
"""

import gast
import numpy as np
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from . import scalar_math as sm
from .loop_rows import I64, ONE, ZERO, RowLeaf, RowOp
from .loop_types import Scalar

EXTREMES = ("max", "min", "argmax", "argmin")
BLOCK = 128                 # numpy's PW_BLOCKSIZE
BUFFER = 8192              # numpy's default ufunc buffer size, in elements
STACK = 64                  # splits halve the length: 64 levels cover any int64 length


class RowReductions:
    """The part of LoopLowering (backends/tvm/loops) that lowers ``.sum()`` and ``.mean()`` of rows."""

    def reduction(self, kind, operand, e):
        from .loops import Val, _cast, _wrapping_int64

        tree = self.row(operand, e)
        if not isinstance(tree, RowLeaf | RowOp):
            raise self.refusal(f"{kind}() of a scalar", e)
        if len(tree.shape) != 1:
            raise self.refusal(f"{kind}() of a row of {len(tree.shape)} axes (numpy's order of adding "
                               "depends on the memory layout)", e)
        types = self.row_types(tree)
        if len(types) != 1 or types[0].python:
            raise self.refusal(f"{kind}() of elements of type {'/'.join(map(str, types))}", e)
        elem = types[0]
        if kind in EXTREMES:
            return self.extreme(kind, self.broadcast_steps(tree), elem, e)
        if elem.kind == "u":
            raise self.refusal(f"{kind}() of {elem.dtype} elements (numpy sums them as uint64)", e)
        if kind == "mean" or elem.kind == "f":
            acc = elem.dtype if elem.kind == "f" else "float64"
        else:
            acc = I64                                        # bool and signed ints sum as int64
        tree = self.broadcast_steps(tree)
        n = tree.shape[0]
        sites = len(self.sites)

        def x(k):
            v = self.row_element(tree, [k], 1)
            return _cast(v.expr, v.dtype, acc)

        if acc == I64:
            total = T.alloc_buffer((1,), I64, scope="global")
            T.buffer_store(total, ZERO, [0])
            with T.serial(ZERO, n) as k:
                T.buffer_store(total, _wrapping_int64("Add", total[0], x(k)), [0])
            result = self.bind(total[0], I64)
        else:
            # elements cast to the sum's type go through numpy's buffers of BUFFER elements
            result = self.pairwise_sum(x, n, acc, chunk=BUFFER if elem.dtype != acc else None)
        if len(self.sites) != sites:
            raise self.refusal(f"{kind}() of elements that need checks", e)
        if kind == "sum":
            return Val(result, (Scalar(acc, False),))
        count = self.bind(n.astype(acc), acc)
        return Val(self.bind(result / count, acc), (Scalar(acc, False),))

    def extreme(self, kind, tree, elem, e):
        """``max``/``min`` (a numpy scalar of the elements' type) or ``argmax``/``argmin`` (an int64 index)
        of a row, as numpy gives them: the first NaN wins (its value, its index), else the extreme
        element (the first one's index; of equal values, the zero numpy's scalar loop keeps, which its
        vectorized loop over longer rows need not); an empty row raises numpy's ValueError at the line."""
        from .loops import Val, _raised

        n = tree.shape[0]
        x = lambda k: self.row_element(tree, [k], 1).expr          # noqa: E731
        numpy_fn = getattr(np, kind)
        self.fail(tirx.EQ(n, ZERO), e, lambda vals: _raised(numpy_fn, np.zeros(0, elem.dtype)))
        sites = len(self.sites)
        best = T.alloc_buffer((1,), elem.dtype, scope="global")
        at = T.alloc_buffer((1,), I64, scope="global")
        with T.If(n > ZERO):
            with T.Then(), self.scope():
                T.buffer_store(best, x(ZERO), [0])
                T.buffer_store(at, ZERO, [0])
                with T.serial(ONE, n) as k, self.scope():
                    v = self.bind(x(k), elem.dtype)
                    if elem.dtype == "bool":
                        beats = tirx.And(v, tirx.Not(best[0])) if kind.endswith("max") else tirx.And(
                            tirx.Not(v), best[0])
                    elif kind.startswith("arg"):            # the first extreme element's index
                        beats = v > best[0] if kind == "argmax" else v < best[0]
                    else:                                    # a tie takes the later (-0.0, 0.0: maxsd's)
                        beats = v >= best[0] if kind == "max" else v <= best[0]
                    if elem.kind == "f":         # a NaN seen stays; a NaN beats any number
                        beats = tirx.And(tirx.Not(sm.te.isnan(best[0])), tirx.Or(sm.te.isnan(v), beats))
                    with T.If(beats):
                        with T.Then():
                            T.buffer_store(best, v, [0])
                            T.buffer_store(at, k, [0])
        if len(self.sites) != sites:
            raise self.refusal(f"{kind}() of elements that need checks", e)
        if kind.startswith("arg"):
            return Val(self.bind(at[0], I64), (Scalar(I64, False),), span=(0, 2**48 - 1))
        return Val(self.bind(best[0], elem.dtype), (Scalar(elem.dtype, False),))

    def pairwise_sum(self, x, n, dtype, chunk=None):
        """numpy's sum of ``x(0) ... x(n - 1)`` (int64 indices) in ``dtype``: ``0.0 + pairwise(x)``; with
        ``chunk`` (elements cast as they are summed: numpy's buffered reduction), the pairwise sums of
        consecutive chunks of that many elements, added one after another to 0.0."""
        zero = self.bind(tirx.const(0.0, dtype), dtype)      # a local: TVM would fold ``0.0 + s`` to ``s``
        total = T.alloc_buffer((1,), dtype, scope="global")
        part = T.alloc_buffer((1,), dtype, scope="global")
        T.buffer_store(total, zero, [0])
        if chunk is None:
            self.pairwise(x, n, dtype, zero, part)
            T.buffer_store(total, zero + part[0], [0])
        else:
            size = tirx.const(chunk, I64)
            with T.serial(ZERO, tirx.floordiv(n + size - ONE, size)) as c:
                lo = self.bind(c * size, I64)
                self.pairwise(lambda k: x(lo + k), self.bind(tirx.Min(size, n - lo), I64), dtype, zero, part)
                T.buffer_store(total, total[0] + part[0], [0])
        return self.bind(total[0], dtype)

    def pairwise(self, x, n, dtype, zero, out) -> None:
        """numpy's ``pairwise_sum`` of ``x(0) ... x(n - 1)`` into ``out[0]``."""
        with T.If(n < tirx.const(8, I64)):
            with T.Then():
                T.buffer_store(out, zero, [0])
                with T.serial(ZERO, n) as k:
                    T.buffer_store(out, out[0] + x(k), [0])
            with T.Else():
                with T.If(n <= tirx.const(BLOCK, I64)):     # one block: no stack to walk
                    with T.Then():
                        self.block_sum(x, ZERO, n, dtype, out)
                    with T.Else():
                        self.split_sums(x, n, dtype, out)

    def split_sums(self, x, n, dtype, total) -> None:
        """The recursion of numpy's pairwise sum, for ``n >= 8``, as a loop over an explicit stack:
        each frame a range (``lo``, ``count``) and how far it got (0: nothing summed, 1: its first half
        summed into ``left``, 2: its second half summed into ``right``)."""
        lo = T.alloc_buffer((STACK,), I64, scope="global")
        count = T.alloc_buffer((STACK,), I64, scope="global")
        stage = T.alloc_buffer((STACK,), I64, scope="global")
        left = T.alloc_buffer((STACK,), dtype, scope="global")
        right = T.alloc_buffer((STACK,), dtype, scope="global")
        top = T.alloc_buffer((1,), I64, scope="global")
        value = T.alloc_buffer((1,), dtype, scope="global")
        T.buffer_store(top, ZERO, [0])
        T.buffer_store(lo, ZERO, [0])
        T.buffer_store(count, n, [0])
        T.buffer_store(stage, ZERO, [0])
        t = top[0]

        def push(start, length):
            start, length, above = self.bind(start, I64), self.bind(length, I64), self.bind(t + ONE, I64)
            T.buffer_store(top, above, [0])
            T.buffer_store(lo, start, [above])
            T.buffer_store(count, length, [above])
            T.buffer_store(stage, ZERO, [above])

        def deliver():
            """Hand ``value`` to the frame below, or make it the total."""
            T.buffer_store(top, t - ONE, [0])
            with T.If(t < ZERO):
                with T.Then():
                    T.buffer_store(total, value[0], [0])
                with T.Else():
                    with T.If(tirx.EQ(stage[t], ONE)):
                        with T.Then():
                            T.buffer_store(left, value[0], [t])
                        with T.Else():
                            T.buffer_store(right, value[0], [t])

        with T.While(t >= ZERO):
            half = tirx.floordiv(count[t], tirx.const(2, I64))
            half = half - tirx.floormod(half, tirx.const(8, I64))
            with T.If(count[t] <= tirx.const(BLOCK, I64)):
                with T.Then():
                    self.block_sum(x, lo[t], count[t], dtype, value)
                    deliver()
                with T.Else():
                    with T.If(tirx.EQ(stage[t], ZERO)):
                        with T.Then():
                            T.buffer_store(stage, ONE, [t])
                            push(lo[t], half)
                        with T.Else():
                            with T.If(tirx.EQ(stage[t], ONE)):
                                with T.Then():
                                    T.buffer_store(stage, tirx.const(2, I64), [t])
                                    push(lo[t] + half, count[t] - half)
                                with T.Else():
                                    T.buffer_store(value, left[t] + right[t], [0])
                                    deliver()

    def block_sum(self, x, lo, n, dtype, out) -> None:
        """numpy's sum of 8 to 128 elements: eight partial sums, combined in a fixed tree, then the
        last ``n % 8`` elements one by one."""
        start = self.bind(lo, I64)
        length = self.bind(n, I64)
        r = T.alloc_buffer((8,), dtype, scope="global")
        for j in range(8):
            T.buffer_store(r, x(start + j), [j])
        full = length - tirx.floormod(length, tirx.const(8, I64))
        with T.serial(ONE, tirx.floordiv(full, tirx.const(8, I64))) as b:
            for j in range(8):
                T.buffer_store(r, r[j] + x(start + b * 8 + j), [j])
        T.buffer_store(out, ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])), [0])
        with T.serial(full, length) as k:
            T.buffer_store(out, out[0] + x(start + k), [0])


def reduction_operand(e):
    """The row a reduction call reduces: ``a[i]`` of ``a[i].sum()``, ``x`` of ``np.sum(x)``."""
    return e.func.value if isinstance(e.func, gast.Attribute) and not e.args else e.args[0]
