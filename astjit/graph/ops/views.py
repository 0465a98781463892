"""View ops: basic indexing, reshape, transpose, .T, ravel, expand_dims, squeeze, broadcast_to.

Their index maps are not written by hand: inference applies the real numpy operation to an untouched
``np.empty`` of the input's shape and reads the view's element offset and strides back. Any view numpy
can make of a C-contiguous array is then an affine map a backend can fuse, with numpy's exact
semantics (negative steps, newaxis, ellipsis, integer indices).
"""

import operator

import numpy as np

from ...errors import Unsupported
from ..types import ArrayType, Static, untouched
from .registry import register


def _data_address(a) -> int:
    return a.__array_interface__["data"][0]


def affine_view_info(base: np.ndarray, view) -> dict | None:
    """Element offset and strides of ``view`` into the C-contiguous ``base``, or None if not a view."""
    if not isinstance(view, np.ndarray) or (view.size and not np.may_share_memory(base, view)):
        return None
    item = base.itemsize
    offset = (_data_address(view) - _data_address(base)) // item if view.size else 0
    strides = tuple(s // item for s in view.strides)
    return {"offset": offset, "strides": strides, "shape": view.shape}


def runtime_index(ctx, node):
    """A representative for an index whose integers are only known at run time (a loop counter), or
    None if the index has other runtime parts. Integer indices fix the result's shape whatever their
    value, so such an index needs no value guard (and no recompile per value); it runs on numpy."""
    from ..types import Opaque, WeakScalar

    t = ctx.types[node]
    if isinstance(t, Static):
        return None
    if isinstance(t, Opaque) and node.op == "input":          # a tuple of ints passed as an argument
        k = ctx.input_index[node]
        length = len(ctx.args[k])
        ctx.length_guards[k] = length
        return (0,) * length
    if t == WeakScalar(int) or (isinstance(t, ArrayType) and t.scalar and t.dtype.kind in "iu"):
        return 0
    if node.op == "tuple" and not node.kwargs:
        parts, dynamic = [], False
        for o in node.args:
            ot = ctx.types[o]
            if isinstance(ot, Static):
                parts.append(ot.value)
                continue
            rep = runtime_index(ctx, o)
            if rep is None:
                return None
            parts.append(rep)
            dynamic = True
        return tuple(parts) if dynamic else None
    return None


def infer_view(ctx, node):
    from ..infer import type_of_result

    base_node = node.args[0]
    base_t = ctx.types[base_node]
    if not isinstance(base_t, ArrayType):
        raise Unsupported(f"{node.op} of a {base_t} is left to Python")
    if node.op == "getitem" and not base_t.scalar:
        rep = runtime_index(ctx, node.args[1])
        if rep is not None:
            ctx.runtime_index.add(node)
            return type_of_result(untouched(base_t)[rep])
    for o in node.operands[1:]:
        t = ctx.types[o]
        if not isinstance(t, Static):
            if isinstance(t, ArrayType):
                raise Unsupported("indexing with an array (fancy or boolean indexing) is left to Python")
            ctx.static_value(o, "an index or shape")
    statics = {o: ctx.types[o].value for o in node.operands[1:]}
    base = untouched(base_t)
    from .registry import OPS

    impl = OPS[node.op].impl
    args = [base] + [statics[o] for o in node.args[1:]]
    kwargs = {k: statics[v] for k, v in node.kwargs.items()}
    result = impl(*args, **kwargs)
    if isinstance(result, np.ndarray) and result.dtype.kind not in "biufc":
        raise Unsupported(f"{node.op} gives dtype {result.dtype}")
    if not base_t.scalar and not _reads_memory_order(node.op, args, kwargs):
        probe = result
        if node.op == "getitem" and not isinstance(result, np.ndarray):
            index = args[1] if isinstance(args[1], tuple) else (args[1],)
            probe = base[index + (Ellipsis,)] if Ellipsis not in index else None
        info = affine_view_info(base, probe) if probe is not None else None
        if info is not None:
            ctx.info[node] = info
    return type_of_result(result)


def _reads_memory_order(op, args, kwargs) -> bool:
    """Whether the view takes the elements in their order in memory (``ravel``/``reshape`` with order
    "K" or "A"): the base stood for by a C-contiguous array of its shape may be a transposed view
    (``x.T.ravel("K")`` reads ``x`` row by row, not ``x.T``), so no index map fits every base; numpy
    runs it."""
    if op in ("ravel", "np.ravel"):
        order = kwargs.get("order", args[1] if len(args) > 1 else "C")
    elif op == "np.reshape":
        order = kwargs.get("order", args[2] if len(args) > 2 else "C")
    elif op == "reshape":
        order = kwargs.get("order", "C")
    else:
        return False
    return isinstance(order, str) and order.upper() in ("K", "A")        # (numpy takes "k" and "a" too)


def _getitem_sig(a, index, /):
    pass


def _reshape_method(a, *shape, order="C"):
    return a.reshape(*shape, order=order)


def _reshape_sig(a, *shape, order="C"):
    pass


def _np_reshape_sig(a, shape=None, order="C", *, newshape=None, copy=None):
    pass


def _transpose_method(a, *axes):
    return a.transpose(*axes)


def _transpose_sig(a, *axes):
    pass


def _np_transpose_sig(a, axes=None):
    pass


def _ravel_method(a, order="C"):
    return a.ravel(order)


def _ravel_sig(a, order="C"):
    pass


def _expand_dims_sig(a, axis):
    pass


def _squeeze_sig(a, axis=None):
    pass


def _broadcast_to_sig(array, shape, subok=False):
    pass


def _attr_T(a):
    return a.T


def _attr_T_sig(a, /):
    pass


register("getitem", operator.getitem, "view", signature=_getitem_sig, infer=infer_view)
register("reshape", _reshape_method, "view", signature=_reshape_sig, method="reshape", infer=infer_view)
register("np.reshape", np.reshape, "view", signature=_np_reshape_sig, numpy=(np.reshape,), infer=infer_view)
register("transpose", _transpose_method, "view", signature=_transpose_sig, method="transpose",
         infer=infer_view)
register("np.transpose", np.transpose, "view", signature=_np_transpose_sig, numpy=(np.transpose,),
         infer=infer_view)
register("T", _attr_T, "view", signature=_attr_T_sig, attribute="T", infer=infer_view)
register("ravel", _ravel_method, "view", signature=_ravel_sig, method="ravel", infer=infer_view)
register("np.ravel", np.ravel, "view", signature=_ravel_sig, numpy=(np.ravel,), infer=infer_view)
register("np.expand_dims", np.expand_dims, "view", signature=_expand_dims_sig, numpy=(np.expand_dims,),
         infer=infer_view)
register("np.squeeze", np.squeeze, "view", signature=_squeeze_sig, numpy=(np.squeeze,), infer=infer_view)
register("np.broadcast_to", np.broadcast_to, "view", signature=_broadcast_to_sig, numpy=(np.broadcast_to,),
         infer=infer_view)
