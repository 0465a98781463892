"""Matrix products. They run on numpy's BLAS: the TVM wheel has no BLAS and a TE matmul is 5-100x
slower (tvm-notes section 5), so Fragments end at a matmul and resume after it."""

import operator

import numpy as np

from ...errors import RaisesAsPython, Unsupported
from ..types import ArrayType
from .registry import register


def matmul_shape(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        raise RaisesAsPython("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise RaisesAsPython(f"matmul: mismatch in core dimension ({a2[-1]} vs {b2[-2]})")
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    shape = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def infer_matmul(ctx, node):
    from ..infer import evaluate, infer_elementwise, type_of_result

    a, b = (ctx.types[n] for n in node.args[:2])
    if len(node.args) != 2 or node.kwargs:
        raise Unsupported(f"{node.op} with extra arguments is left to Python")
    if not (isinstance(a, ArrayType) and isinstance(b, ArrayType)):
        raise Unsupported(f"{node.op} of non-arrays is left to Python")
    if node.op == "np.dot":
        if a.ndim == 0 or b.ndim == 0:
            return infer_elementwise(ctx, node)
        if a.ndim > 2 or b.ndim > 2:
            raise Unsupported("np.dot of arrays with more than 2 dimensions is left to Python")
    shape = matmul_shape(a.shape, b.shape)
    reps = {node.args[0]: np.ones((1,) * a.ndim, a.dtype), node.args[1]: np.ones((1,) * b.ndim, b.dtype)}
    result = evaluate(node, lambda n: reps[n])
    t = type_of_result(result)
    return ArrayType(t.dtype, shape, shape == () and not isinstance(result, np.ndarray))


register("matmul", operator.matmul, "linalg", infer=infer_matmul)
register("np.matmul", np.matmul, "linalg", numpy=(np.matmul,), infer=infer_matmul)
register("np.dot", np.dot, "linalg", numpy=(np.dot,), infer=infer_matmul)
register("dot", lambda a, b: a.dot(b), "linalg", method="dot", infer=infer_matmul)
