"""Sums and means of a 1-d row inside a compiled loop: ``a[i:i + w].sum()``, ``np.mean(x[i] * y)``.

numpy adds float elements pairwise (module pairwise: its order, as TIR). The kernel follows the same
order (the split as a loop over an explicit stack), so its float sums equal numpy's bit for bit, for any
stride; an expression of rows is summed element by element as it is computed, as numpy sums the
temporary array it would make. Integer sums are int64, wrapping as numpy's; unsigned ones (numpy sums
them as uint64) stay Python.

``any`` and ``all`` of a row are numpy bools (an element is true where it is not zero, NaN included).
``max``, ``min``, ``argmax`` and ``argmin`` of a row of at least one vector of lanes (16 elements of 4
or 8 bytes, 32 of 2, 64 of 1), a row as it is or an expression of rows (``np.abs(a[i]).max()``), keep
running extremes in vector lanes (``lane_extreme``); a shorter row is scanned element by element, as
numpy's scalar loop does.
"""

import gast
import numpy as np
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from . import pairwise
from . import scalar_math as sm
from .float_sums import BUFFER
from .loop_rows import I64, ONE, ZERO, RowLeaf, RowOp
from .loop_types import Scalar

EXTREMES = ("max", "min", "argmax", "argmin")
TRUTH_RUN = 1024              # elements any() and all() test between two tests of whether one decided


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
            return self.extreme(kind, tree, elem, e)
        if kind in ("any", "all"):
            return self.truth_reduction(kind, tree, elem, e)
        if elem.kind == "u":
            raise self.refusal(f"{kind}() of {elem.dtype} elements (numpy sums them as uint64)", e)
        if kind == "mean" or elem.kind == "f":
            acc = elem.dtype if elem.kind == "f" else "float64"
        else:
            acc = I64                                        # bool and signed ints sum as int64
        row = tree                       # (a lone row: no broadcast, its own steps)
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
            chunk = BUFFER if elem.dtype != acc else None
            if isinstance(row, RowLeaf):      # a row's elements: loads, eight partial sums in one vector
                if chunk is None:
                    # (numpy adds a misaligned array's elements in buffers: the runner checks alignment)
                    self.summed_arrays |= {n for n, b in self.own_arrays.items() if b is row.buf}
                def element(k, j=ZERO):
                    return _cast(row.buf[tuple(row.at([k + j]))], elem.dtype, acc)

                result = pairwise.pairwise_sum(element, n, acc, self.bind, chunk, lanes=True)
            else:
                result = self.pairwise_sum(x, n, acc, chunk=chunk)
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
        row = tree                       # (a lone row: no broadcast, its own steps)
        tree = self.broadcast_steps(tree)
        x = lambda k: self.row_element(tree, [k], 1).expr          # noqa: E731
        numpy_fn = getattr(np, kind)
        self.fail(tirx.EQ(n, ZERO), e, lambda vals: _raised(numpy_fn, np.zeros(0, elem.dtype)))
        sites = len(self.sites)
        best = T.alloc_buffer((1,), elem.dtype, scope="global")
        at = T.alloc_buffer((1,), I64, scope="global")
        scan = n > ZERO
        if elem.kind in "fiu":
            lanes = max(16, 64 // np.dtype(elem.dtype).itemsize)
            # (a computed row, ``np.abs(a[i]).max()``: its elements computed in the lanes as numpy's
            # temporary would hold them; scanned element by element it ran 2-5x slower than numpy)
            element = (lambda k: row.buf[tuple(row.at([k]))]) if isinstance(row, RowLeaf) else x   # noqa: E731
            with T.If(n >= tirx.const(lanes, I64)):
                with T.Then():
                    lane_extreme(kind, element, n, elem.dtype, lanes, best, at, computed=not isinstance(row, RowLeaf))
            scan = tirx.And(scan, n < tirx.const(lanes, I64))      # (a row shorter than the lanes)
        with T.If(scan):
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

    def truth_reduction(self, kind, tree, elem, e):
        """``any``/``all`` of a row: a numpy bool, whether some (every) element is not zero (NaN is
        not zero); of an empty row False (True), as numpy's."""
        from .loops import Val

        if elem.kind not in "biuf":
            raise self.refusal(f"{kind}() of {elem.dtype} elements", e)
        n = tree.shape[0]
        tree = self.broadcast_steps(tree)
        sites = len(self.sites)
        start = tirx.const(kind == "all", "bool")
        seen = T.alloc_buffer((1,), "bool", scope="global")
        T.buffer_store(seen, start, [0])
        run = tirx.const(TRUTH_RUN, I64)
        # in runs of TRUTH_RUN elements, the runs after one that decided skipped (numpy's bool loops stop
        # there: a full scan of rows of 100,000 true bools for any() ran 0.4x plain Python)
        acc = T.alloc_buffer((1,), "int8", scope="local")
        with T.serial(ZERO, tirx.floordiv(n + run - ONE, run)) as c:
            with T.If(seen[0] if kind == "all" else sm.logical_not(seen[0])):
                with T.Then():
                    T.buffer_store(acc, start.astype("int8"), [0])
                    with T.serial(ZERO, tirx.Min(run, n - c * run)) as j, self.scope():
                        v = self.row_element(tree, [c * run + j], 1).expr
                        # (not ``v != 0``: TVM's float NE is LLVM's ordered one, false for NaN, true here)
                        true = v if elem.dtype == "bool" else sm.logical_not(tirx.EQ(v, tirx.const(0, elem.dtype)))
                        bit = true.astype("int8")
                        T.buffer_store(acc, tirx.bitwise_or(acc[0], bit) if kind == "any" else
                                       tirx.bitwise_and(acc[0], bit), [0])
                    T.buffer_store(seen, acc[0] != tirx.const(0, "int8"), [0])
        if len(self.sites) != sites:
            raise self.refusal(f"{kind}() of elements that need checks", e)
        return Val(self.bind(seen[0], "bool"), (Scalar("bool", False),))

    def pairwise_sum(self, x, n, dtype, chunk=None):
        """numpy's sum of ``x(0) ... x(n - 1)`` (int64 indices) in ``dtype`` (pairwise.pairwise_sum)."""
        return pairwise.pairwise_sum(x, n, dtype, self.bind, chunk)


def reduction_operand(e):
    """The row a reduction call reduces: ``a[i]`` of ``a[i].sum()``, ``x`` of ``np.sum(x)``."""
    return e.func.value if isinstance(e.func, gast.Attribute) and not e.args else e.args[0]


def lane_extreme(kind, element, n, dtype, lanes, best, at, computed=False) -> None:
    """``max``/``min``/``argmax``/``argmin`` of ``element(0) ... element(n - 1)`` (``n`` at least one
    lane's worth) into ``best[0]`` and ``at[0]``, over ``lanes`` running extremes updated in one
    vectorized loop; the scan element by element took 1 ns an element, five times numpy's vectorized
    loop, and a loop over 100 rows of 10,000 floats ran 5x slower than its Python. Each lane keeps its
    first extreme (a strict comparison), and of equal extremes the lowest index wins, so the index is
    numpy's first one. Where the lanes saw a NaN, the first NaN wins (its value, its index); a float
    max or min of zero is the last zero (-0.0 or 0.0), as numpy's scalar loop keeps it: each found by
    a scan that stops there. ``computed``: ``element`` computes an element of an expression of rows,
    whose values it may bind to locals of one element each (LoopLowering.bind), which the lanes of a
    vectorized loop cannot share: each lane's worth is computed into a scratch row first, by a serial
    loop, and the lanes read it."""
    is_float = np.dtype(dtype).kind == "f"
    width = tirx.const(lanes, I64)
    if computed:
        scratch = T.alloc_buffer((lanes,), dtype, scope="global")

        def lanes_from(start):
            with T.serial(ZERO, width) as j:
                T.buffer_store(scratch, element(start + j), [j])
            return lambda k: scratch[k - start]
    else:
        def lanes_from(start):
            return element
    wins = (lambda v, m: v > m) if kind.endswith("max") else (lambda v, m: v < m)
    lane_best = T.alloc_buffer((lanes,), dtype, scope="global")
    lane_at = T.alloc_buffer((lanes,), I64, scope="global")
    # (NaN flags as wide as the elements: int8 flags beside float64 lanes left LLVM a scalar mess)
    flag = f"int{8 * np.dtype(dtype).itemsize}"
    lane_nan = T.alloc_buffer((lanes,), flag, scope="global")
    nan_of = (lambda v: sm.te.isnan(v).astype(flag)) if is_float else (lambda v: tirx.const(0, flag))

    first = lanes_from(ZERO)
    with T.vectorized(ZERO, width) as j:
        T.buffer_store(lane_best, first(j), [j])
        T.buffer_store(lane_at, j, [j])
        T.buffer_store(lane_nan, nan_of(first(j)), [j])
    full = n - tirx.floormod(n, width)
    with T.serial(ONE, tirx.floordiv(full, width)) as b:
        these = lanes_from(b * width)
        with T.vectorized(ZERO, width) as j:
            k = b * width + j
            v = these(k)
            beats = wins(v, lane_best[j])
            T.buffer_store(lane_at, tirx.Select(beats, k, lane_at[j]), [j])      # (before the value it tests)
            T.buffer_store(lane_best, tirx.Select(beats, v, lane_best[j]), [j])
            T.buffer_store(lane_nan, lane_nan[j] | nan_of(v), [j])
    # the lanes' extremes halved in turn (lane j against lane j + half), then the last ``n % lanes``
    # elements (later than any: the strict test holds)
    half = lanes // 2
    while half:
        with T.vectorized(ZERO, tirx.const(half, I64)) as j:
            v, k = lane_best[j + half], lane_at[j + half]
            better = tirx.Or(wins(v, lane_best[j]), tirx.And(tirx.EQ(v, lane_best[j]), k < lane_at[j]))
            T.buffer_store(lane_at, tirx.Select(better, k, lane_at[j]), [j])
            T.buffer_store(lane_best, tirx.Select(better, v, lane_best[j]), [j])
            T.buffer_store(lane_nan, lane_nan[j] | lane_nan[j + half], [j])
        half //= 2
    T.buffer_store(best, lane_best[0], [0])
    T.buffer_store(at, lane_at[0], [0])
    nan = T.alloc_buffer((1,), flag, scope="global")
    T.buffer_store(nan, lane_nan[0], [0])

    def take(v, k, better):
        T.buffer_store(at, tirx.Select(better, k, at[0]), [0])
        T.buffer_store(best, tirx.Select(better, v, best[0]), [0])

    with T.serial(full, n) as k:
        v = element(k)
        take(v, k, wins(v, best[0]))
        T.buffer_store(nan, nan[0] | nan_of(v), [0])
    if not is_float:
        return
    # a NaN: the first one wins (its value, its index), found by a scan that stops there; a max or min
    # of zero: numpy's scalar loop keeps the last zero (either sign), found from the end. (A rescan of
    # the whole row through the scalar loop cost 5 ns an element: 25x plain Python's time over rows of
    # ReLU outputs, whose min is 0.)
    # (each scan tests its element in its body: an element of a computed row may be bound to a
    # variable first, which a loop's condition cannot hold)
    pos = T.alloc_buffer((1,), I64, scope="global")
    going = T.alloc_buffer((1,), I64, scope="global")

    def scan(start, stop, step, found):
        """``pos`` from ``start`` by ``step`` to the first element that is ``found``, else ``stop``."""
        T.buffer_store(pos, start, [0])
        T.buffer_store(going, ONE, [0])
        with T.While(going[0] != ZERO):
            with T.If(tirx.Or(tirx.EQ(pos[0], stop), found(element(pos[0])))):
                with T.Then():
                    T.buffer_store(going, ZERO, [0])
                with T.Else():
                    T.buffer_store(pos, pos[0] + step, [0])
        T.buffer_store(best, element(pos[0]), [0])

    with T.If(nan[0] != tirx.const(0, flag)):
        with T.Then():
            scan(ZERO, n - ONE, ONE, sm.te.isnan)
            T.buffer_store(at, pos[0], [0])
        if not kind.startswith("arg"):
            with T.Else():
                with T.If(tirx.EQ(best[0], tirx.const(0, dtype))):
                    with T.Then():
                        scan(n - ONE, ZERO, -ONE, lambda v: tirx.EQ(v, tirx.const(0, dtype)))
