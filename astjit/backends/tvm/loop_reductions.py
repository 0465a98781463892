"""Sums and means of a 1-d row inside a compiled loop: ``a[i:i + w].sum()``, ``np.mean(x[i] * y)``.

numpy adds float elements pairwise (module pairwise: its order, as TIR). The kernel follows the same
order (the split as a loop over an explicit stack), so its float sums equal numpy's bit for bit, for any
stride; an expression of rows is summed element by element as it is computed, as numpy sums the
temporary array it would make. Integer sums are int64, wrapping as numpy's; unsigned ones (numpy sums
them as uint64) stay Python.
"""

import gast
import numpy as np
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from . import pairwise
from . import scalar_math as sm
from .loop_rows import I64, ONE, ZERO, RowLeaf, RowOp
from .loop_types import Scalar
from .pairwise import BUFFER

EXTREMES = ("max", "min", "argmax", "argmin")


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
        """numpy's sum of ``x(0) ... x(n - 1)`` (int64 indices) in ``dtype`` (pairwise.pairwise_sum)."""
        return pairwise.pairwise_sum(x, n, dtype, self.bind, chunk)


def reduction_operand(e):
    """The row a reduction call reduces: ``a[i]`` of ``a[i].sum()``, ``x`` of ``np.sum(x)``."""
    return e.func.value if isinstance(e.func, gast.Attribute) and not e.args else e.args[0]
