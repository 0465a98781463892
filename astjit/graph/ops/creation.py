"""Array creation with a static shape: zeros, ones, empty, full and their ``_like`` forms."""

import numpy as np

from ...errors import Unsupported
from ..types import ArrayType, Static, WeakScalar
from .registry import register

_NO_BYTES = np.dtype([])          # a structured dtype without fields: itemsize 0


def _shape_tuple(shape) -> tuple:
    """numpy's own reading of a shape argument, without allocating: its TypeError for a float or a
    bool (``int()`` took ``(2.7, 3)`` as ``(2, 3)``), its ValueError for a negative extent."""
    return np.empty(shape, _NO_BYTES).shape


def infer_creation(ctx, node):
    from ..infer import type_of_result
    from .registry import OPS

    op = OPS[node.op]
    bound = op.signature.bind(*node.args, **node.kwargs)
    values = {}
    for name, operand in bound.arguments.items():
        t = ctx.types[operand]
        if name == "fill_value" and not isinstance(t, Static):
            if isinstance(t, ArrayType) and not (t.scalar or t.shape == ()):
                raise Unsupported("full() with an array fill value is left to Python")
            from ..types import representative
            values[name] = representative(t)
        elif name in ("a", "prototype"):
            if not isinstance(t, ArrayType):
                raise Unsupported(f"{node.op} of a {t} is left to Python")
            values[name] = np.empty((), t.dtype)
            like_shape = t.shape
        else:
            values[name] = ctx.static_value(operand, f"{name}= of {node.op}")
    if values.get("shape") is not None:
        shape = _shape_tuple(values["shape"])
        values["shape"] = ()
    else:
        shape = like_shape
    if values.get("order", "C") not in ("C", "K", "A", None):
        raise Unsupported("Fortran-ordered creation is left to Python")
    prototype = [values.pop(name) for name in ("a", "prototype") if name in values]
    result = op.impl(*prototype, **values)   # np.empty_like names it 'prototype', the others 'a'

    t = type_of_result(result)
    if t.dtype.kind not in "biufc":
        raise Unsupported(f"{node.op} makes dtype {t.dtype}")
    fill_value = bound.arguments.get("fill_value")
    if fill_value is not None and t.dtype.kind in "iu" and ctx.types[fill_value] == WeakScalar(int):
        ctx.guard_int_range(fill_value, t.dtype)      # numpy: OverflowError for -1 into uint16
    ctx.info[node] = {"fill": _fill_value(node.op, values)}
    return ArrayType(t.dtype, shape, False)


def _fill_value(op_name, values):
    name = op_name.removeprefix("np.").removesuffix("_like")
    if name in ("zeros", "empty"):
        return 0
    if name == "ones":
        return 1
    return None  # full: the fill_value operand


def _zeros_sig(shape, dtype=float, order="C"):
    pass


def _full_sig(shape, fill_value, dtype=None, order="C"):
    pass


def _like_sig(a, dtype=None, order="K", subok=True, shape=None):
    pass


def _full_like_sig(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    pass


for _fn in (np.zeros, np.ones, np.empty):
    register("np." + _fn.__name__, _fn, "creation", signature=_zeros_sig, numpy=(_fn,), infer=infer_creation,
             fold=False)
register("np.full", np.full, "creation", signature=_full_sig, numpy=(np.full,), infer=infer_creation,
         fold=False)
for _fn in (np.zeros_like, np.ones_like, np.empty_like):
    register("np." + _fn.__name__, _fn, "creation", signature=_like_sig, numpy=(_fn,), infer=infer_creation,
             fold=False)
register("np.full_like", np.full_like, "creation", signature=_full_like_sig, numpy=(np.full_like,),
         infer=infer_creation, fold=False)
