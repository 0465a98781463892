"""Reductions: sum, prod, mean, max, min, var, std, any, all, argmax, argmin (functions and methods),
with axis and keepdims (and ``ddof`` for var and std); ``np.add.reduce`` and the reduce of multiply,
maximum and minimum (axis 0 by default), which canonicalization (graph/passes) makes sum, prod, max
and min."""

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ...errors import Unsupported
from ..types import ArrayType
from .registry import register

NO_IDENTITY = {"max", "min", "argmax", "argmin", "maximum.reduce", "minimum.reduce"}
ARG_REDUCTIONS = ("argmax", "argmin")     # to a position, not a value


def _sig(a, axis=None, dtype=None, out=None, keepdims=False):
    pass


def _minmax_sig(a, axis=None, out=None, keepdims=False):
    pass


def _var_sig(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    pass


def _arg_sig(a, axis=None, out=None, *, keepdims=False):
    pass


def infer_reduction(ctx, node):
    from ..infer import evaluate, type_of_result

    op_name = node.op.removeprefix("np.")
    a_node = node.args[0]
    a = ctx.types[a_node]
    if not isinstance(a, ArrayType):
        return type_of_result(evaluate(node, lambda n: _rep(ctx, n)))
    if "out" in node.kwargs and ctx.static_value(node.kwargs["out"]) is not None:
        raise Unsupported(f"{node.op}(..., out=...) is left to Python")
    axis, keepdims, dtype = _static_params(ctx, node)
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    reduced = 1
    for ax in axes:
        reduced *= a.shape[ax]
    if reduced == 0 and op_name in NO_IDENTITY:
        raise Unsupported(f"zero-size array to reduction operation {op_name}")
    result = evaluate(node, lambda n: _rep(ctx, n, a_node))
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    else:
        shape = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    # sorted: backends pair reduce axes with the input's dimensions in order (axis=(1, 0) is (0, 1))
    ctx.info[node] = {"axes": tuple(sorted(axes)), "keepdims": bool(keepdims), "dtype": dtype,
                      "ddof": _static_ddof(ctx, node)}
    t = type_of_result(result)
    return ArrayType(t.dtype, shape, isinstance(result, np.generic) and shape == ())


def _static_params(ctx, node):
    from .registry import OPS

    bound = OPS[node.op].signature.bind(*node.args, **node.kwargs)
    values = {"axis": OPS[node.op].signature.parameters["axis"].default}   # np.add.reduce's is 0
    for name in ("axis", "keepdims", "dtype"):
        if name in bound.arguments:
            values[name] = ctx.static_value(bound.arguments[name], f"{name}=")
    return values.get("axis"), values.get("keepdims", False), values.get("dtype")


def _static_ddof(ctx, node):
    from .registry import OPS

    bound = OPS[node.op].signature.bind(*node.args, **node.kwargs)
    if "ddof" not in bound.arguments:
        return 0
    ddof = ctx.static_value(bound.arguments["ddof"], "ddof=")
    if isinstance(ddof, bool) or not isinstance(ddof, int | np.integer):
        raise Unsupported("var/std with a ddof that is not an int")
    return int(ddof)


def _rep(ctx, n, array_node=None):
    from ..types import representative

    t = ctx.types[n]
    if n is array_node and isinstance(t, ArrayType) and not t.scalar:
        return np.ones((1,) * t.ndim, t.dtype)
    return representative(t)


def _method(name):
    def impl(a, *args, **kwargs):
        return getattr(a, name)(*args, **kwargs)

    impl.__name__ = name
    return impl


for _name, _fn, _sigfn in [
    ("sum", np.sum, _sig), ("prod", np.prod, _sig), ("mean", np.mean, _sig),
    ("max", np.max, _minmax_sig), ("min", np.min, _minmax_sig),
    ("var", np.var, _var_sig), ("std", np.std, _var_sig),
    ("any", np.any, _minmax_sig), ("all", np.all, _minmax_sig),
    ("argmax", np.argmax, _arg_sig), ("argmin", np.argmin, _arg_sig),
]:
    _numpy = [_fn]
    if _name == "max":
        _numpy.append(np.amax)
    if _name == "min":
        _numpy.append(np.amin)
    register("np." + _name, _fn, "reduction", signature=_sigfn, numpy=tuple(_numpy), array_params=("a",),
             infer=infer_reduction)
    register(_name, _method(_name), "reduction", signature=_sigfn, method=_name, array_params=("a",),
             infer=infer_reduction)


def _ufunc_reduce_sig(a, axis=0, dtype=None, out=None, keepdims=False):
    pass


def _ufunc_reduce_minmax_sig(a, axis=0, out=None, keepdims=False):
    pass


for _ufunc in (np.add, np.multiply, np.maximum, np.minimum):
    register(f"np.{_ufunc.__name__}.reduce", _ufunc.reduce, "reduction", array_params=("a",),
             signature=_ufunc_reduce_minmax_sig if _ufunc in (np.maximum, np.minimum) else _ufunc_reduce_sig,
             infer=infer_reduction)
