"""Elementwise ops: Python operators, numpy ufuncs and ufunc-like functions (where, clip, astype).

Operators and the numpy functions are separate ops (``add`` vs ``np.add``) because they differ on
Python scalars (``1 + 2`` is an int, ``np.add(1, 2)`` a numpy scalar); on arrays both are the ufunc.
"""

import operator

import numpy as np

from .registry import register

BINARY_OPERATORS = {
    "add": (operator.add, np.add),
    "subtract": (operator.sub, np.subtract),
    "multiply": (operator.mul, np.multiply),
    "true_divide": (operator.truediv, np.true_divide),
    "floor_divide": (operator.floordiv, np.floor_divide),
    "remainder": (operator.mod, np.remainder),
    "power": (operator.pow, np.power),
    "bitwise_and": (operator.and_, np.bitwise_and),
    "bitwise_or": (operator.or_, np.bitwise_or),
    "bitwise_xor": (operator.xor, np.bitwise_xor),
    "left_shift": (operator.lshift, np.left_shift),
    "right_shift": (operator.rshift, np.right_shift),
    "less": (operator.lt, np.less),
    "less_equal": (operator.le, np.less_equal),
    "greater": (operator.gt, np.greater),
    "greater_equal": (operator.ge, np.greater_equal),
    "equal": (operator.eq, np.equal),
    "not_equal": (operator.ne, np.not_equal),
}
UNARY_OPERATORS = {
    "negative": (operator.neg, np.negative),
    "positive": (operator.pos, np.positive),
    "invert": (operator.invert, np.invert),
}

for _name, (_fn, _ufunc) in BINARY_OPERATORS.items():
    register(_name, _fn, "elementwise", ufunc=_ufunc, array_params=("a", "b"))
for _name, (_fn, _ufunc) in UNARY_OPERATORS.items():
    register(_name, _fn, "elementwise", ufunc=_ufunc, array_params=("a",))
register("abs", abs, "elementwise", ufunc=np.absolute, array_params=("a",), builtins=(abs,))

UFUNCS = [
    np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder, np.power,
    np.negative, np.positive, np.absolute, np.fabs, np.sign, np.square, np.sqrt, np.cbrt, np.reciprocal,
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p,
    np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.arctan2, np.hypot,
    np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh,
    np.floor, np.ceil, np.trunc, np.rint,
    np.maximum, np.minimum, np.fmax, np.fmin,
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift,
    np.isnan, np.isinf, np.isfinite, np.signbit, np.copysign,
    np.degrees, np.radians, np.deg2rad, np.rad2deg,
]


def _ufunc_signature(ufunc):
    params = ", ".join(f"x{i}" for i in range(ufunc.nin))
    namespace = {}
    exec(f"def sig({params}, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None):\n"
         "    pass", namespace)
    return namespace["sig"]


for _ufunc in UFUNCS:
    register("np." + _ufunc.__name__, _ufunc, "elementwise", ufunc=_ufunc,
             signature=_ufunc_signature(_ufunc), numpy=(_ufunc,),
             array_params=tuple(f"x{i}" for i in range(_ufunc.nin)))


def _where_sig(condition, x, y, /):
    pass


def _clip_sig(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    pass


def _astype_impl(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    return a.astype(dtype, order=order, casting=casting, subok=subok, copy=copy)


def _astype_sig(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    pass


def _clip_method(a, *args, **kwargs):
    return a.clip(*args, **kwargs)


def _copy_method(a, order="C"):
    return a.copy(order=order)


def _copy_sig(a, order="C"):
    pass


register("np.where", np.where, "elementwise", signature=_where_sig, numpy=(np.where,),
         array_params=("condition", "x", "y"))
register("np.clip", np.clip, "elementwise", signature=_clip_sig, numpy=(np.clip,),
         array_params=("a", "a_min", "a_max", "min", "max"))
register("clip", _clip_method, "elementwise", signature=_clip_sig, method="clip",
         array_params=("a", "a_min", "a_max", "min", "max"))
register("astype", _astype_impl, "elementwise", signature=_astype_sig, method="astype",
         array_params=("a",))
register("copy", _copy_method, "elementwise", signature=_copy_sig, method="copy", array_params=("a",),
         fold=False)
register("np.copy", np.copy, "elementwise", signature=_copy_sig, numpy=(np.copy,), array_params=("a",),
         fold=False)
