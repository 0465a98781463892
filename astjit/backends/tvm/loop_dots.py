"""Dot products of two 1-d rows inside a compiled loop: ``np.dot(a[i, :j], a[j, :j])``, ``a[i].dot(x)``,
``L[i, :i] @ x[:i]`` (Cholesky, LU, triangular solves, Gauss-Seidel sweeps), and the Euclidean norm of a
row, ``np.linalg.norm(x[i] - x[j])`` (pairwise distances), numpy's square root of the row's dot with itself.

For float64 and float32 rows the kernel calls numpy's own BLAS function with the pointers and strides
numpy would pass (backends/tvm/blas), so the sum comes out in BLAS's order, bit for bit: ``0.0 +
?dot(n, x, incx, y, incy)``, and for ``np.dot`` of one element the product itself. numpy passes BLAS
only strides that are positive multiples of the item size; an array of other strides (reversed,
broadcast, misaligned) makes numpy copy it first (``np.dot``) or add the products one by one (``@``), so
such arrays make the loop run as Python: the kernel bails before the loop starts where an array a dot
reads has a non-positive stride on an axis longer than one (``bail_on_blas_strides``), and the runner
where one is misaligned (runtime/loop_fragment). A slice a dot reads must step by a positive
constant. int64 rows are summed one product at a time from 0, wrapping as numpy's ``LONG_dot`` does.
"""

import gast
import numpy as np
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from ...frontend.loops import index_items
from .loop_rows import I64, ONE, ZERO, RowLeaf, RowOp, Span
from .loop_types import Scalar


def slices_step_forward(node) -> bool:
    """Whether every slice of subscript ``node`` steps by a positive constant (or by 1)."""
    return all(not isinstance(item, gast.Slice) or item.step is None
               or isinstance(item.step, gast.Constant) and type(item.step.value) is int and item.step.value > 0
               for item in index_items(node.slice))


def dot_operands(e) -> tuple:
    """The two rows of ``np.dot(x, y)``, ``x.dot(y)`` or ``x @ y``."""
    if isinstance(e, gast.BinOp):
        return e.left, e.right
    if isinstance(e.func, gast.Attribute) and len(e.args) == 1:
        return e.func.value, e.args[0]
    return e.args[0], e.args[1]


class RowDots:
    """The part of LoopLowering (backends/tvm/loops) that lowers dot products of rows."""

    def dot(self, e) -> object:
        from .loops import Val, _wrapping_int64

        # (a call of the library: checks run first would call it twice per position, ``x @ y`` as well
        # as ``np.dot``; rows of 20,000 floats took 1.6x plain Python's time so)
        self.note_access("other")
        matmul = isinstance(e, gast.BinOp)
        nodes = dot_operands(e)
        rows = [self.row(node, e) for node in nodes]          # in Python's order, each index checked
        # an expression of rows: numpy computes it into a new array first, then hands that to BLAS
        rows = [self.materialized(row, (id(e), k), e) if isinstance(row, RowOp) and len(row.shape) == 1 else row
                for k, row in enumerate(rows)]
        for node, row in zip(nodes, rows):
            if not isinstance(row, RowLeaf) or len(row.shape) != 1:
                raise self.refusal("a dot product of other than two 1-d views of arrays", e)
            if isinstance(node, gast.Subscript) and not slices_step_forward(node):
                raise self.refusal("a dot product of a slice whose step is not a positive constant", e)
            if row.view[0] != "materialized" and not self.steps_forward(node):    # (a named view's own slices)
                raise self.refusal("a dot product of a view whose slices step by other than positive constants", e)
        x, y = rows
        if x.dtype != y.dtype:
            raise self.refusal(f"a dot product of {x.dtype} and {y.dtype} elements", e)
        dtype = x.dtype
        if dtype not in ("float64", "float32", I64):
            raise self.refusal(f"a dot product of {dtype} elements", e)
        n, m = x.shape[0], y.shape[0]
        self.fail(tirx.NE(n, m), e, lambda v: _length_error(v, dtype, matmul), (n, m))
        if dtype == I64:
            total = T.alloc_buffer((1,), I64, scope="global")
            T.buffer_store(total, ZERO, [0])
            with T.serial(ZERO, n) as k:
                product = _wrapping_int64("Mult", self.row_element(x, [k], 1).expr, self.row_element(y, [k], 1).expr)
                T.buffer_store(total, _wrapping_int64("Add", total[0], product), [0])
            return Val(self.bind(total[0], I64), (Scalar(I64, False),))
        return Val(self.blas_dot(x, y, n, dtype, matmul, e), (Scalar(dtype, False),))

    def norm(self, e) -> object:
        """``np.linalg.norm(x)`` of a 1-d float row: numpy's ``sqrt(x.dot(x))`` of ``x.ravel()``, a
        contiguous array (a copy where the view is strided). The row is computed into a contiguous
        buffer of the kernel's (a strided view passed to BLAS as it is could be summed in another
        order than its copy), the dot is BLAS's, as ``dot`` calls it, and the square root correctly
        rounded, as numpy's."""
        from .loops import Val

        row = self.row(e.args[0], e)
        if not isinstance(row, RowLeaf | RowOp) or len(row.shape) != 1:
            raise self.refusal("np.linalg.norm of other than a 1-d row", e)
        types = self.row_types(row)
        if len(types) != 1 or types[0].dtype not in ("float64", "float32"):
            raise self.refusal(f"np.linalg.norm of {'/'.join(map(str, types))} elements (numpy converts "
                               "other types to float64 first)", e)
        dtype = types[0].dtype
        # a view whose elements are adjacent (``a[i]`` of a C-contiguous array) is what numpy's ravel
        # hands to BLAS itself: no copy (each of 8 rows of 50,000 floats copied first ran 0.18x numpy)
        x = row if _adjacent(row) else self.materialized(row, (id(e), 0), e)
        squares = self.blas_dot(x, x, x.shape[0], dtype, False, e)
        return Val(self.bind(tirx.sqrt(squares), dtype), (Scalar(dtype, False),))

    def blas_dot(self, x, y, n, dtype, matmul, e):
        from .blas import dot_function

        blas = dot_function(dtype)
        if blas is None:
            raise self.refusal(f"a dot product of {dtype} rows (numpy's BLAS function was not found among the "
                               "loaded libraries, or did not give np.dot's results)", e)
        self.blas_libraries.add(blas.library)
        args = []
        for row in (x, y):
            axis = next(k for k, a in enumerate(row.axes) if isinstance(a, Span))
            if row.view[0] == "materialized":        # (a contiguous buffer of the kernel's own)
                stride = ONE
            else:
                self.blas_wanted.add(self.array_name(row.buf))
                stride = row.buf.strides[axis]       # (every array buffer is declared with its strides)
            pointer = tirx.call_intrin("handle", "tirx.address_of", tirx.BufferLoad(row.buf, row.at([ZERO])))
            args += [pointer, (stride * row.axes[axis].step).astype(blas.int_dtype)]
        zero = self.bind(tirx.const(0.0, dtype), dtype)       # a local: TVM would fold ``0.0 + r`` to ``r``
        out = T.alloc_buffer((1,), dtype, scope="global")
        call = tirx.call_extern(dtype, blas.symbol, n.astype(blas.int_dtype), *args)
        if matmul:
            T.buffer_store(out, zero + call, [0])
        else:                                  # np.dot of one element: the product, as it is
            with T.If(tirx.EQ(n, ONE)):
                with T.Then():
                    T.buffer_store(out, self.row_element(x, [ZERO], 1).expr * self.row_element(y, [ZERO], 1).expr, [0])
                with T.Else():
                    T.buffer_store(out, zero + call, [0])
        return self.bind(out[0], dtype)

    def bail_on_blas_strides(self) -> None:
        """Before the loop: arrays a dot product reads (found by an earlier build) with a stride of 0 or
        less on an axis longer than one run the loop as Python (numpy would not hand them to BLAS)."""
        self.blas_checked = set(self.blas_wanted)
        bad = tirx.const(False, "bool")
        for name in sorted(self.blas_checked):
            buf = self.arrays.get(name)
            if buf is None:
                continue
            for extent, stride in zip(buf.shape, buf.strides):
                bad = tirx.Or(bad, tirx.And(extent > ONE, stride <= ZERO))
        self.bail_if(bad)


def _adjacent(row) -> bool:
    """Whether ``row`` is a 1-d view of an array whose elements lie next to each other: its sliced axis
    has the stride 1 (known: the array's key says it is C-contiguous) and steps by 1."""
    if not isinstance(row, RowLeaf) or row.view[0] == "materialized":
        return False
    spans = [(k, a) for k, a in enumerate(row.axes) if isinstance(a, Span)]
    if len(spans) != 1:
        return False
    axis, span = spans[0]
    stride = row.buf.strides[axis] if row.buf.strides else None
    return all(isinstance(v, tirx.IntImm) and v.value == 1 for v in (stride, span.step))


def _length_error(values, dtype, matmul) -> ValueError:
    """numpy's own error for a dot of vectors of ``values[0]`` and ``values[1]`` elements."""
    a, b = np.empty(values[0], dtype), np.empty(values[1], dtype)
    try:
        a @ b if matmul else np.dot(a, b)
    except ValueError as exc:
        return exc
    return ValueError(f"shapes ({values[0]},) and ({values[1]},) not aligned")
