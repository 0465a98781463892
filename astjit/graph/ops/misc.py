"""Static attributes (shape, ndim, size, dtype, len), Python glue (tuples, slices, float()) and
in-place effects (augmented assignment, item assignment)."""

import functools
import operator

import numpy as np

from ...errors import Unsupported
from ..types import ArrayType, Static, WeakScalar, untouched
from .registry import register


def _attr(name):
    def impl(a):
        return getattr(a, name)

    impl.__name__ = name
    return impl


def _one_sig(a, /):
    pass


def infer_static_attribute(ctx, node):
    """shape/ndim/size/dtype/len of an array are known in a specialization; ``np.shape``, ``np.ndim``
    and ``np.size`` of a Python number too (``()``, 0, 1 whatever its value: a gradient's shape
    helpers read them of a loop's Python floats, astjit/grad)."""
    from ..infer import evaluate, infer_python

    t = ctx.types[node.args[0]]
    if isinstance(t, ArrayType):
        dummy = untouched(t)
        return Static(evaluate(node, lambda n: dummy))
    if isinstance(t, WeakScalar) and node.op in ("np.shape", "np.ndim", "np.size"):
        number = t.representative()
        return Static(evaluate(node, lambda n: number))
    return infer_python(ctx, node)


for _name in ("shape", "ndim", "size", "dtype"):
    register(_name, _attr(_name), "static", signature=_one_sig, attribute=_name, infer=infer_static_attribute)
register("len", len, "static", signature=_one_sig, builtins=(len,), infer=infer_static_attribute)
register("np.shape", np.shape, "static", signature=_one_sig, numpy=(np.shape,), infer=infer_static_attribute)
register("np.ndim", np.ndim, "static", signature=_one_sig, numpy=(np.ndim,), infer=infer_static_attribute)
register("np.size", np.size, "static", signature=_one_sig, numpy=(np.size,), infer=infer_static_attribute)


def _build_tuple(*items):
    return tuple(items)


def _build_slice(start, stop, step):
    return slice(start, stop, step)


register("tuple", _build_tuple, "python")
register("slice", _build_slice, "python")
register("float", float, "python", builtins=(float,))
register("int", int, "python", builtins=(int,))
register("bool", bool, "python", builtins=(bool,))


def infer_scalar_type_call(ctx, node):
    """``np.float32(x)``: of an array with axes, an array of that dtype and x's shape (like
    ``x.astype``); else a scalar, typed by running it on a representative (a 0-d array, which gives a
    scalar: an array of shape (2, 2) was typed as a float32 scalar, and a kernel reading it as one
    raised ValueError)."""
    from ..infer import infer_python
    from ..types import ArrayType
    from .registry import OPS

    if len(node.args) == 1 and not node.kwargs:
        t = ctx.types[node.args[0]]
        if isinstance(t, ArrayType) and not t.scalar and t.shape != ():
            return ArrayType(np.dtype(OPS[node.op].impl), t.shape)
    return infer_python(ctx, node)


# numpy scalar types called as functions (np.float32(x)) convert like astype for arrays.
for _t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
           np.uint32, np.uint64, np.bool_, np.complex64, np.complex128):
    register("np." + _t.__name__, _t, "python", numpy=(_t,), infer=infer_scalar_type_call)

INPLACE_OPERATORS = {
    "iadd": (operator.iadd, np.add),
    "isub": (operator.isub, np.subtract),
    "imul": (operator.imul, np.multiply),
    "itruediv": (operator.itruediv, np.true_divide),
    "ifloordiv": (operator.ifloordiv, np.floor_divide),
    "imod": (operator.imod, np.remainder),
    "ipow": (operator.ipow, np.power),
    "iand": (operator.iand, np.bitwise_and),
    "ior": (operator.ior, np.bitwise_or),
    "ixor": (operator.ixor, np.bitwise_xor),
    "ilshift": (operator.ilshift, np.left_shift),
    "irshift": (operator.irshift, np.right_shift),
    "imatmul": (operator.imatmul, np.matmul),
}


def infer_inplace(ctx, node):
    """``x op= y``: mutates x when it is an array, otherwise rebinds x like ``x = x op y``."""
    from ..infer import evaluate, infer_elementwise
    from ..types import representative

    target = ctx.types[node.args[0]]
    if not (isinstance(target, ArrayType) and not target.scalar):
        return infer_elementwise(ctx, node)
    value = ctx.types[node.args[1]]
    if isinstance(value, ArrayType) and np.broadcast_shapes(target.shape, value.shape) != target.shape:
        raise Unsupported(f"non-broadcastable output operand with shape {target.shape}")
    if node.op == "imatmul":
        raise Unsupported("@= is left to Python")
    evaluate(node, lambda n: np.ones((), target.dtype) if n is node.args[0] else representative(ctx.types[n]))
    if isinstance(value, WeakScalar) and value.kind is int and target.dtype.kind in "iu":
        ctx.guard_int_range(node.args[1], target.dtype)
    ctx.effects.add(node)
    return target


for _name, (_fn, _ufunc) in INPLACE_OPERATORS.items():
    register(_name, _fn, "effect", ufunc=_ufunc, infer=infer_inplace, fold=True)


def _setitem(a, index, value):
    a[index] = value
    return a


def infer_setitem(ctx, node):
    from ..types import representative

    target = ctx.types[node.args[0]]
    if not (isinstance(target, ArrayType) and not target.scalar):
        raise Unsupported(f"item assignment into a {target} is left to Python")
    from .views import runtime_index

    index = runtime_index(ctx, node.args[1])
    if index is None:
        index = ctx.static_value(node.args[1], "an index")
    value = ctx.types[node.args[2]]
    if isinstance(value, ArrayType):
        probe = np.broadcast_to(np.ones((), value.dtype), value.shape)
    else:
        probe = representative(value)
    dummy = np.empty(target.shape, target.dtype)
    with np.errstate(all="ignore"):
        dummy[index] = probe
    ctx.effects.add(node)
    return target


register("setitem", _setitem, "effect", infer=infer_setitem, fold=False)


def _build_list(*items):
    return list(items)


register("list", _build_list, "python")


@functools.cache
def _unpacker(count: int):
    """``def unpack(value): t0, ..., t{count-1} = value``: Python's own unpacking, its ValueError
    ("too many values to unpack", "not enough values") and TypeError (a number) included."""
    names = ", ".join(f"t{i}" for i in range(count)) + ","
    namespace: dict = {}
    exec(f"def unpack(value):\n    {names} = value\n    return {names}\n", namespace)
    return namespace["unpack"]


def _unpacked_item(value, index, count):
    """Target ``index`` of ``t0, ..., t{count-1} = value``: a value without exactly ``count`` items
    raises as the assignment does (``n, m = x.shape`` of a 3-d array), where indexing would not."""
    return _unpacker(count)(value)[index]


register("item", _unpacked_item, "python")
