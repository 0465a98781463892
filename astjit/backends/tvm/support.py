"""Which nodes the TVM backend compiles, and the scalar rule for each elementwise op.

A node is supported only when its numpy semantics are reproduced exactly for these types (see
scalar_math); otherwise the reason is returned and numpy runs the node.
"""

import numpy as np

from ...errors import Unsupported
from ...graph.ops import OPS
from ...graph.types import ArrayType, Static, WeakScalar
from . import casts
from . import float64_functions as f64
from . import scalar_math as sm
from .float_sums import is_float_sum
from .sum_order import OtherOrder, summation_order

SUPPORTED_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float32", "float64"}
# Kernels index with int32: a reduction's split pads its extent to a multiple of 128 and a view's flat
# offset multiplies strides, so arrays of 2**30 elements or more stay clear of int32 overflow on numpy.
MAX_ELEMENTS = 2**30 - 1


def _binary(fn):
    return lambda dt: (lambda a, b: fn(a, b))


def _arith(name):
    def make(dt):
        if dt == "bool":
            if name == "add":
                return lambda a, b: sm.tirx.Or(a, b)
            if name == "multiply":
                return lambda a, b: sm.tirx.And(a, b)
            raise Unsupported(f"{name} on bool")
        if not sm.is_float(dt):              # numpy's integers wrap around
            return lambda a, b: sm.wrapping(name, dt, a, b)
        return {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
                "multiply": lambda a, b: a * b}[name]
    return make


def _true_divide(dt):
    if not sm.is_float(dt):
        raise Unsupported("integer true division loop")
    return lambda a, b: a / b


def _floor_divide(dt):
    if sm.is_float(dt):
        return lambda a, b: sm.float_divmod(dt, a, b)[0]
    if dt == "bool":
        raise Unsupported("floor division on bool")
    return lambda a, b: sm.apply_once(lambda x, y: sm.int_floor_divide(dt, x, y), [a, b], integers=True)


def _remainder(dt):
    if sm.is_float(dt):
        return lambda a, b: sm.float_divmod(dt, a, b)[1]
    if dt == "bool":
        raise Unsupported("remainder on bool")
    return lambda a, b: sm.apply_once(lambda x, y: sm.int_remainder(dt, x, y), [a, b], integers=True)


def _bitwise(name):
    def make(dt):
        if sm.is_float(dt):
            raise Unsupported(f"{name} on floats")
        if dt == "bool":
            return {"and": lambda a, b: sm.tirx.And(a, b), "or": lambda a, b: sm.tirx.Or(a, b),
                    "xor": sm.logical_xor}[name]
        return {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}[name]
    return make


def _logical(name):
    def make(dt):
        def rule(a, b):
            a, b = sm.truthy(a, dt), sm.truthy(b, dt)
            if name == "and":
                return sm.tirx.And(a, b)
            if name == "or":
                return sm.tirx.Or(a, b)
            return sm.logical_xor(a, b)
        return rule
    return make


def _compare(fn):
    def make(dt):
        if dt == "bool":                # TVM cannot compile comparisons of bools (LLVM i1): compare as int8
            return lambda a, b: fn(a.astype("int8"), b.astype("int8"))
        return fn
    return make


def _float_only(fn):
    def make(dt):
        if not sm.is_float(dt):
            raise Unsupported("float function on a non-float loop")
        return lambda *xs: fn(dt, *xs)
    return make


def _libm(name):
    return _float_only(lambda dt, x: sm.numpy_nan_sign(name, dt, x, sm.libm(sm.LIBM[name], dt, x)))


def _libm2(name):
    return _float_only(lambda dt, x, y: sm.libm(sm.LIBM2[name], dt, x, y))


def _rounding(fn):
    def make(dt):
        if not sm.is_float(dt):
            return lambda x: x
        return fn
    return make


def _negative(dt):
    if dt == "bool":
        raise Unsupported("negative of bool")
    if sm.is_float(dt):
        return lambda x: -x
    return lambda x: sm.wrapping("subtract", dt, sm.const(0, dt), x)      # -INT_MIN is INT_MIN, as numpy's


def _invert(dt):
    if sm.is_float(dt):
        raise Unsupported("invert of floats")
    if dt == "bool":
        return sm.logical_not
    return lambda x: ~x


def _is(test):
    def make(dt):
        if sm.is_float(dt):
            return {"nan": sm.te.isnan, "inf": sm.te.isinf, "finite": sm.te.isfinite}[test]
        value = test == "finite"
        return lambda x: sm.tirx.const(value, "bool")
    return make


UFUNC_RULES = {
    "add": _arith("add"), "subtract": _arith("subtract"), "multiply": _arith("multiply"),
    "divide": _true_divide, "floor_divide": _floor_divide, "remainder": _remainder,
    "bitwise_and": _bitwise("and"), "bitwise_or": _bitwise("or"), "bitwise_xor": _bitwise("xor"),
    "logical_and": _logical("and"), "logical_or": _logical("or"), "logical_xor": _logical("xor"),
    "logical_not": lambda dt: (lambda x: sm.logical_not(sm.truthy(x, dt))),
    "left_shift": lambda dt: (lambda a, b: sm.left_shift(dt, a, b)),
    "right_shift": lambda dt: (lambda a, b: sm.right_shift(dt, a, b)),
    "less": _compare(lambda a, b: a < b), "less_equal": _compare(lambda a, b: a <= b),
    "greater": _compare(lambda a, b: a > b), "greater_equal": _compare(lambda a, b: a >= b),
    # == and != on PrimExprs build Python-side EqualOp objects, not expressions: use the nodes
    "equal": _compare(lambda a, b: sm.tirx.EQ(a, b)),
    "not_equal": lambda dt: _compare(lambda a, b: sm.not_equal(dt, a, b))(dt),
    "maximum": lambda dt: (lambda a, b: sm.maximum(dt, a, b)),
    "minimum": lambda dt: (lambda a, b: sm.minimum(dt, a, b)),
    "fmax": lambda dt: (lambda a, b: sm.fmax(dt, a, b)),
    "fmin": lambda dt: (lambda a, b: sm.fmin(dt, a, b)),
    "negative": _negative, "positive": lambda dt: (lambda x: x), "invert": _invert,
    "absolute": lambda dt: (lambda x: sm.absolute(dt, x)),
    "fabs": _float_only(lambda dt, x: sm.te.abs(x)),
    "sign": lambda dt: (lambda x: sm.sign(dt, x)),
    "square": lambda dt: (lambda x: x * x) if sm.is_float(dt) else (lambda x: sm.wrapping("multiply", dt, x, x)),
    "floor": _rounding(lambda x: sm.te.floor(x)), "ceil": _rounding(lambda x: sm.te.ceil(x)),
    "trunc": _rounding(lambda x: sm.te.trunc(x)), "rint": _rounding(lambda x: sm.te.round(x)),
    "isnan": _is("nan"), "isinf": _is("inf"), "isfinite": _is("finite"),
}
def _tanh(dt):
    if dt == "float32":                     # vectorized rational approximation: <= 4.1e-7 relative error
        return lambda x: sm.numpy_nan_sign("tanh", dt, x, sm.tanh_float32(x))   # (a NaN passes through it)
    return _float64_vectorized("tanh", f64.tanh_float64)(dt)


def _float64_vectorized(name, function):
    """``name``'s rule: ``function`` (backends/tvm/float64_functions) for float64, with numpy's sign on
    a NaN result; the C library's for float32."""
    def rule(dt):
        if dt == "float64":
            return lambda x: sm.numpy_nan_sign(name, dt, x, function(x))
        return _libm(name)(dt)
    return rule


for _name in sm.LIBM:
    UFUNC_RULES[_name] = _libm(_name)
UFUNC_RULES["tanh"] = _tanh
UFUNC_RULES["expm1"] = _float64_vectorized("expm1", f64.expm1_float64)


def _exp(dt):
    if dt == "float32":                     # vectorized; at most 1 ulp from the exact value (numpy: 2.4)
        return lambda x: sm.numpy_nan_sign("exp", dt, x, sm.exp_float32(x))     # (a NaN passes through it)
    if dt == "float64":                     # vectorized; below 0.9 ulp from the exact value (numpy: 0.73)
        return sm.exp_float64
    return _libm("exp")(dt)


def _log(dt):
    if dt == "float64":                     # vectorized; below 0.85 ulp from the exact value (numpy: 0.61)
        return sm.log_float64
    return _libm("log")(dt)


UFUNC_RULES["exp"] = _exp
UFUNC_RULES["log"] = _log
UFUNC_RULES["sqrt"] = _float_only(lambda dt, x: sm.tirx.sqrt(x))   # correctly rounded: LLVM's vector sqrt
for _name in sm.LIBM2:
    UFUNC_RULES[_name] = _libm2(_name)


def _scaled(numerator, denominator):
    """numpy's npy_degrees and npy_radians (and CPython's math.degrees, math.radians): one product by
    the constant rounded in the loop's own type, as they compute it."""
    def rule(dt, x):
        kind = np.dtype(dt).type
        return x * sm.const(float(kind(numerator) / kind(denominator)), dt)
    return _float_only(rule)


for _name in ("degrees", "rad2deg"):
    UFUNC_RULES[_name] = _scaled(180.0, np.pi)
for _name in ("radians", "deg2rad"):
    UFUNC_RULES[_name] = _scaled(np.pi, 180.0)


def _static_number(ctx, node):
    t = ctx.types[node]
    if isinstance(t, Static) and isinstance(t.value, int | float | np.integer | np.floating) \
            and not isinstance(t.value, bool):
        return t.value
    return None


def _power(ctx, node, operands, loop):
    """numpy's float power: its ufunc loop takes an exponent it reads once for the whole inner loop (a
    scalar, or a one-element array broadcast) as a fast path (x * x for 2, sqrt for 0.5, 1 / x for -1),
    and numpy's scalar math (``np.float64(x) ** 0.5``) calls pow for every exponent, as does its float16
    loop (where only the ``**`` operator takes the fast paths, ahead of the ufunc). Of these only
    sqrt and pow differ, at -inf and -0.0 (sqrt gives nan and -0.0, pow inf and 0.0)."""
    dt = loop[0]
    exponent = _static_number(ctx, operands[1])
    if sm.is_float(dt):
        def pow_(a, b):
            return sm.libm("pow", dt, a, b)

        scalar_math = node.op == "power" and not any(
            isinstance(ctx.types[o], ArrayType) and not ctx.types[o].scalar for o in operands)
        if exponent == 0.5 and scalar_math:
            return pow_
        if dt == "float16" and node.op == "np.power":
            # (numpy's float16 loop has no fast path: powf of each element, so np.power(a, 0.5) of -inf
            # is inf and of -0.0 is 0.0; the operator, a ** 0.5, is np.sqrt's nan and -0.0)
            return pow_
        if exponent == 2:
            return lambda a, b: a * a
        if exponent == 0.5:
            return lambda a, b: sm.libm("sqrt", dt, a)
        if exponent == -1:
            return lambda a, b: sm.const(1.0, dt) / a
        if exponent == 1:
            return lambda a, b: a
        if exponent == 0:
            return lambda a, b: sm.const(1.0, dt)
        if exponent is None and not scalar_math and _read_once(ctx, node, operands[1]):
            # an exponent known only at run time (``x ** p``): numpy's fast paths, tested per element
            # on a value the whole loop shares (pow of each element for p = 2 ran 30x numpy's time)
            def fast_or_pow(a, b):
                chosen = pow_(a, b)
                for value, fast in ((0.0, lambda: sm.const(1.0, dt)), (1.0, lambda: a),
                                    (-1.0, lambda: sm.const(1.0, dt) / a), (0.5, lambda: sm.libm("sqrt", dt, a)),
                                    (2.0, lambda: a * a)):
                    chosen = sm.te.if_then_else(sm.tirx.EQ(b, sm.const(value, dt)), fast(), chosen)
                return chosen
            return fast_or_pow
        return pow_
    if dt == "bool" or exponent is None or exponent < 0 or exponent != int(exponent) or exponent > 64:
        raise Unsupported("integer power needs a constant exponent from 0 to 64")
    e = int(exponent)
    return lambda a, b: sm.int_power(dt, a, e)


def _read_once(ctx, node, operand) -> bool:
    """Whether numpy's inner loop reads ``operand`` with stride 0: a scalar or 0-d value, or a
    one-element array broadcast to a larger result (numpy's iterator gives an array broadcast along
    one axis of several, such as (3, 1) against (3, 9), a stride of its own: measured)."""
    t, out = ctx.types[operand], ctx.types[node]
    if not isinstance(t, ArrayType) or t.scalar or t.ndim == 0:
        return True
    return t.size == 1 and out.size > 1


def _bound_operands(node):
    bound = OPS[node.op].signature.bind(*node.args, **node.kwargs)
    return bound.arguments


# Integer arithmetic that can wrap around. numpy wraps; TVM's simplifier and its LLVM code (nsw/nuw
# flags on every add, sub and mul) assume it never overflows, so a fused kernel could fold (a + 1) > a
# to True. +, -, *, negation, abs and square compile to wrapping forms (scalar_math.wrapping); integer
# powers and left shifts run on numpy: a wrong answer is worse than a slow one.
WRAPPING = {"power", "left_shift"}
WRAP_REASON = "integer powers and left shifts that may wrap around run on numpy (TVM assumes no overflow)"


def wraps_integers(ctx, node) -> bool:
    """Integer arithmetic compiled in its wrapping form (scalar_math.wrapping)."""
    op = OPS.get(node.op)
    if op is None or op.ufunc is None or op.ufunc.__name__ not in WRAPPING_FORMS:
        return False
    dtype = getattr(ctx.types.get(node), "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "iu"


WRAPPING_FORMS = sm.WRAPPING_OPS + ("negative", "absolute", "square")
# numpy multiplies the factors one by one in its own dtype: whether a partial product overflows to inf
# (and inf * 0 to nan) or underflows to 0 depends on that order, which a kernel's split reduction and
# its float64 accumulator change (float32 [3e38, 3e38, 0]: numpy nan, a kernel 0). Two factors round once.
FLOAT_PRODUCT_REASON = "float products of more than two factors run on numpy (overflow depends on their order)"


def elementwise_rule(ctx, node):
    """(rule over loop-dtype exprs, operand nodes, loop dtypes) for an elementwise node."""
    op = OPS[node.op]
    out_dtype = str(ctx.types[node].dtype)
    from .lower import python_kind

    if op.ufunc is not None and op.kind == "elementwise":
        if node.kwargs:
            raise Unsupported(f"{node.op} with keyword arguments")
        operands = list(node.args)
        kinds = tuple(python_kind(ctx, o) for o in operands)
        loop = [str(d) for d in op.ufunc.resolve_dtypes(kinds + (None,) * op.ufunc.nout)]
        _check_dtypes(loop)
        name = op.ufunc.__name__
        # ``k is int``: ``int in kinds`` would also match dtype('int64'), which equals int
        if name in _COMPARISONS and loop[0][0] in "iu" and any(k is int for k in kinds):
            loop = _exact_int_comparison(ctx, operands, kinds, loop)
        if name in _COMPARISONS and loop[0] != loop[1]:     # int64 with uint64: numpy's mixed loops
            return _mixed_sign_comparison(name, loop[0], loop[1]), operands, loop[:2]
        if name in WRAPPING and loop[0][0] in "iu":
            raise Unsupported(WRAP_REASON)
        if name == "power":
            return _power(ctx, node, operands, loop), operands, loop[:-1]
        make = UFUNC_RULES.get(name)
        if make is None:
            raise Unsupported(f"np.{name} has no TVM lowering yet")
        return make(loop[0]), operands, loop[: op.ufunc.nin]
    if node.op == "np.where":
        c, x, y = node.args
        return (lambda c, x, y: sm.te.if_then_else(c, x, y)), [c, x, y], ["bool", out_dtype, out_dtype]
    if node.op in ("np.clip", "clip"):
        args = _bound_operands(node)
        lo = _effective_clip_bound(ctx, args["a"], args.get("a_min", args.get("min")), lower=True)
        hi = _effective_clip_bound(ctx, args["a"], args.get("a_max", args.get("max")), lower=False)
        bounds = [b for b in (lo, hi) if b is not None and not _is_none(ctx, b)]
        if out_dtype[0] in "iu" or out_dtype == "bool":
            for b in bounds:
                v = _static_number(ctx, b)
                if isinstance(ctx.types[b], WeakScalar) or (v is not None and not _fits(v, out_dtype)):
                    raise Unsupported("integer clip with a bound outside the dtype")
        has_lo = lo is not None and not _is_none(ctx, lo)
        has_hi = hi is not None and not _is_none(ctx, hi)
        out_t = ctx.types[node]
        if has_lo and has_hi and out_dtype[0] == "f" and any(_broadcast_bound(ctx, b, out_t) for b in bounds):
            raise Unsupported("np.clip with a bound of several values broadcast to the result's shape: which "
                              "zero numpy gives on a tie of 0.0 and -0.0 depends on how its loop meets the arrays")
        keep_on_tie = all(_constant_in_clip_loop(ctx, b, out_t) for b in bounds)

        def rule(a, *bs):
            bs = list(bs)
            if has_lo != has_hi:
                # numpy's clip with one bound is np.maximum or np.minimum, which return the bound on a
                # tie (np.clip(-0.0, 0.0, None) is 0.0)
                return (sm.maximum if has_lo else sm.minimum)(out_dtype, a, bs[0])
            if has_lo:
                a = sm.clip_bound(out_dtype, a, bs.pop(0), lower=True, keep_on_tie=keep_on_tie)
            if has_hi:
                a = sm.clip_bound(out_dtype, a, bs.pop(0), lower=False, keep_on_tie=keep_on_tie)
            return a

        operands = [args["a"]] + bounds
        return rule, operands, [out_dtype] * len(operands)
    if node.op == "astype":
        src = ctx.types[node.args[0]]
        src_dt = str(src.dtype) if isinstance(src, ArrayType) else None
        if src_dt is None:
            raise Unsupported("astype of a non-array")
        if _is_none(ctx, node.args[0]) or len(node.args) + len(node.kwargs) != 2:
            raise Unsupported("astype with extra arguments")
        if out_dtype == "bool":
            return (lambda a: sm.truthy(a, src_dt)), [node.args[0]], [src_dt]
        return casts.converter(src_dt, out_dtype), [node.args[0]], [src_dt]
    if node.op in ("copy", "np.copy"):
        if len(node.args) != 1 or node.kwargs:
            raise Unsupported("copy with an order argument")
        return (lambda a: a), [node.args[0]], [out_dtype]
    raise Unsupported(f"{node.op} has no TVM lowering yet")


_COMPARISONS = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
_MIRRORED = {"less": "greater", "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal",
             "equal": "equal", "not_equal": "not_equal"}


def _mixed_sign_comparison(name, a_dtype, b_dtype):
    """The rule comparing a signed with an unsigned operand (either order) exactly."""
    if sm.is_unsigned(a_dtype):                  # u < s is s > u
        mirrored = _mixed_sign_comparison(_MIRRORED[name], b_dtype, a_dtype)
        return lambda a, b: mirrored(b, a)
    unsigned = UFUNC_RULES[name](b_dtype)
    return lambda a, b: sm.signed_against_unsigned(name, a, a_dtype, b, b_dtype, unsigned)


def _exact_int_comparison(ctx, operands, kinds, loop):
    """numpy compares a Python int by its exact value (``uint32_arr == -1`` is all False, ``int32_arr <
    2**40`` all True), where the loop dtype would wrap it: compare in int64, which holds both exactly.
    An int beyond int64 cannot be passed to the kernel, which then falls back to the original code."""
    if loop[0] == "uint64":
        raise Unsupported("uint64 compared with a Python int")
    for o, k in zip(operands, kinds):
        v = _static_number(ctx, o)
        if k is int and v is not None and not _fits(v, "int64"):
            raise Unsupported("comparison with a Python int beyond int64")
    return ["int64"] * len(operands) + loop[len(operands):]


def _effective_clip_bound(ctx, a, bound, lower):
    """numpy's clip of an integer array drops a Python int bound at or beyond the dtype's range before
    clipping (``np.clip(int8_array, np.inf, 255)`` is ``np.maximum(a, inf)``, all inf); None when
    dropped. Such a bound known only at run time is left to numpy."""
    a_t = ctx.types[a]
    if bound is None or not isinstance(a_t, ArrayType) or a_t.dtype.kind not in "iu":
        return bound
    t = ctx.types[bound]
    if not (isinstance(t, WeakScalar) and t.kind is int or isinstance(t, Static) and type(t.value) is int):
        return bound
    value = _static_number(ctx, bound)
    if value is None:
        raise Unsupported("np.clip of integers with a Python int bound known only at run time")
    info = np.iinfo(a_t.dtype)
    return None if (value <= info.min if lower else value >= info.max) else bound


def _constant_in_clip_loop(ctx, bound, out_t) -> bool:
    """Whether numpy's clip loop reads ``bound`` as one value for all elements (a number, a 0-d array,
    one element spread over several): with both bounds so, its loop keeps the element on a tie of
    equal zeros (``np.clip(-0.0, 0.0, 1.0)`` is -0.0); with either bound an array of elements (or a
    one-element array clipping one element) it returns the bound (``np.clip(x, zeros, 1.0)`` gives
    0.0 where ``x`` is -0.0)."""
    t = ctx.types[bound]
    if not isinstance(t, ArrayType) or t.ndim == 0:
        return True
    out_size = out_t.size if isinstance(out_t, ArrayType) else 1
    return t.size == 1 and out_size > 1


def _broadcast_bound(ctx, bound, out_t) -> bool:
    """Whether ``bound`` is an array of several values broadcast to the result's shape (``(n, 1)`` or
    ``(1, m)`` against ``(n, m)``). numpy's clip keeps the element on a tie of equal zeros where its
    inner loop reads both bounds as one value and gives the bound otherwise; which axis that loop runs
    along depends on all operands' shapes and strides (both bounds ``(n, 1)``, or ``x`` broadcast along
    the rows: the element; one bound a number: the bound), which a kernel does not follow."""
    t = ctx.types[bound]
    if not isinstance(t, ArrayType) or t.ndim == 0 or t.size == 1 or not isinstance(out_t, ArrayType):
        return False
    return (1,) * (out_t.ndim - t.ndim) + tuple(t.shape) != tuple(out_t.shape)


def _is_none(ctx, node):
    t = ctx.types[node]
    return isinstance(t, Static) and t.value is None


def _fits(v, dtype):
    info = np.iinfo(dtype) if dtype != "bool" else None
    return info is None or info.min <= v <= info.max


def _check_dtypes(dtypes):
    for d in dtypes:
        if d not in SUPPORTED_DTYPES:
            raise Unsupported(f"dtype {d} is not compiled by the TVM backend")


def supports(ctx, node):
    """None if TVM compiles ``node`` exactly, else the reason (the node then runs on numpy)."""
    op = OPS[node.op]
    t = ctx.types[node]
    if op.kind not in ("elementwise", "reduction", "view", "creation"):
        return {"linalg": f"{node.op} runs on numpy's BLAS",
                "effect": "in-place updates run on numpy",
                "python": f"{node.op}() runs as Python",
                "static": None}.get(op.kind, f"{node.op} runs on numpy")
    if not isinstance(t, ArrayType):
        return "scalar arithmetic on Python numbers runs as Python"
    if str(t.dtype) not in SUPPORTED_DTYPES:
        return f"dtype {t.dtype} is not compiled by the TVM backend"
    if t.size == 0:
        return "empty arrays run on numpy"
    if t.size > MAX_ELEMENTS:
        return "arrays of 2**30 elements or more run on numpy"
    has_array = op.kind == "creation"
    for o in node.operands:
        ot = ctx.types[o]
        if isinstance(ot, ArrayType):
            if str(ot.dtype) not in SUPPORTED_DTYPES:
                return f"operand dtype {ot.dtype} is not compiled by the TVM backend"
            if ot.size == 0 or ot.size > MAX_ELEMENTS:
                return "operand size not compiled"
            if ot.scalar and ot.dtype == np.uint64:
                return "uint64 scalars run on numpy"
            has_array = True
        elif isinstance(ot, WeakScalar) and ot.kind is complex:
            return "complex numbers run on numpy"
    if not has_array:
        return "no array operand"
    try:
        if op.kind == "elementwise":
            if _follows_a_transposed_operand(ctx, node):
                return "its numpy result takes the memory order of a transposed operand"
            if is_float_divmod(ctx, node) and any(_computed_by_float_divmod(ctx, o, set()) for o in node.args):
                return NESTED_DIVMOD_REASON
            elementwise_rule(ctx, node)
        elif op.kind == "reduction":
            info = ctx.info.get(node)
            if info is None or info.get("dtype") is not None:
                return f"{node.op} with dtype= runs on numpy"
            src = ctx.types[node.args[0]]
            if not isinstance(src, ArrayType) or src.scalar:
                return "reduction of a scalar"
            if node.op.removeprefix("np.") == "prod" and str(t.dtype)[0] in "iu":
                return WRAP_REASON
            if node.op.removeprefix("np.") == "prod" and str(t.dtype)[0] == "f" \
                    and np.prod([src.shape[a] for a in info["axes"]], dtype=np.int64) > 2:
                return FLOAT_PRODUCT_REASON
            if _follows_a_transposed_operand(ctx, node):
                return "its numpy result takes the memory order of a transposed operand"
            if is_float_sum(ctx, node) and ctx.device == "cpu":     # (a GPU's sums have an order of their own)
                summation_order(ctx, node)
        elif op.kind == "view":
            if node in ctx.runtime_index:
                return "indexing by a runtime integer runs on numpy"
            if node not in ctx.info:
                return f"{node.op} here makes a copy, not a view"
        elif op.kind == "creation":
            if ctx.info[node]["fill"] is None:
                fill = n_fill(node)
                ft = ctx.types[fill]
                if isinstance(ft, ArrayType) and not (ft.scalar or ft.shape == ()):
                    return "array fill value"
                if isinstance(ft, Static) and not isinstance(ft.value, int | float | bool | np.generic):
                    return "fill value type"
                fill_dtype = ft.dtype if isinstance(ft, ArrayType) else None
                if not isinstance(ft, Static) and str(t.dtype)[0] in "iub" and (
                        (isinstance(ft, WeakScalar) and ft.kind is float) or (fill_dtype is not None
                                                                               and fill_dtype.kind == "f")):
                    return "a float fill value converted to an integer dtype runs on numpy"
    except (Unsupported, OtherOrder) as exc:
        return str(exc)
    return None


# numpy's float // and % take a dozen selects each; TVM's LLVM code generator analyses them again for
# every enclosing one, so a kernel with one such op feeding another took seconds to compile, and three
# chained took minutes. The outer one runs on numpy, between kernels.
NESTED_DIVMOD_REASON = "float // or % of a float // or % result runs on numpy (its kernel compiles slowly)"
_DIVMOD = ("floor_divide", "remainder")


def is_float_divmod(ctx, node) -> bool:
    op = OPS[node.op]
    t = ctx.types[node]
    return op.ufunc is not None and op.ufunc.__name__ in _DIVMOD and isinstance(t, ArrayType) \
        and t.dtype.kind == "f"


def _computed_by_float_divmod(ctx, node, seen) -> bool:
    """Whether a float // or % is among the elementwise ops that compute ``node`` (within the graph)."""
    if node in seen or _kind(node) != "elementwise":
        return False
    seen.add(node)
    return is_float_divmod(ctx, node) or any(_computed_by_float_divmod(ctx, o, seen) for o in node.args)


def _follows_a_transposed_operand(ctx, node) -> bool:
    """numpy lays an elementwise result out in its operands' memory order ('K'): ``a.T * 2`` is
    Fortran-ordered, and so is a reduction's result over the axes it keeps (``a.T.sum(axis=-1)``).
    Kernels write C order, so such a result is left to numpy when it leaves the kernel (a live-out, or
    read by numpy); inside a kernel, feeding a reduction whose own result is in C order, it does not show."""
    return _transposed_layout(ctx, node) and _escapes(ctx, node)


def _transposed_layout(ctx, node) -> bool:
    """Whether numpy may give this elementwise or reduction result another order than C (conservatively:
    some operand is a view with permuted strides, or such a result itself; a reduction looks at its
    array operand's strides along the axes it keeps)."""
    memo = ctx.transposed_layout
    if node not in memo:
        memo[node] = False
        t = ctx.types[node]
        if isinstance(t, ArrayType) and len(t.shape) >= 2:
            operands, reduced = node.operands, ()
            if _kind(node) == "reduction":
                operands, reduced = node.args[:1], ctx.info.get(node, {}).get("axes", ())
            for o in operands:
                info = ctx.info.get(o)
                if info is not None and "strides" in info:
                    strides = _strides_in_memory(ctx, o)
                    steps = [abs(s) for k, (s, d) in enumerate(zip(strides or (), info["shape"]))
                             if k not in reduced and d > 1 and s]
                    if strides is None or any(x < y for x, y in zip(steps, steps[1:])):
                        memo[node] = True
                elif _kind(o) in ("elementwise", "reduction") and _transposed_layout(ctx, o):
                    memo[node] = True
    return memo[node]


def _strides_in_memory(ctx, node):
    """A view's strides (in elements) in the memory of the array it views, or None where they do not
    follow from its index map. A view's own strides (graph/ops/views) are over its operand as if that
    were C-contiguous: ``a.T[1:]`` slices ``a.T`` with strides (301, 1) where memory has (1, 301), so a
    view of a view takes its operand's memory strides through its index map (``_per_dimension``)."""
    info = ctx.info.get(node)
    if info is None or "strides" not in info:
        return None
    operand = node.args[0] if node.args else None
    if operand is None or ctx.info.get(operand) is None or "strides" not in ctx.info[operand]:
        return tuple(info["strides"])       # a view of an input (C-contiguous: others run as numpy)
    inner = _strides_in_memory(ctx, operand)
    if inner is None:
        return None
    from .lower import _per_dimension

    shape = tuple(ctx.info[operand]["shape"])
    c_strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    per_dim = _per_dimension(info["offset"], info["strides"], info["shape"], shape, c_strides)
    if per_dim is None:
        return None
    strides = [0] * len(info["shape"])
    for (_, terms), memory_step in zip(per_dim, inner):
        for k, step in terms:
            strides[k] += step * memory_step
    return tuple(strides)


def _escapes(ctx, node) -> bool:
    if ctx.users is None:
        ctx.users = ctx.graph.users()
    users = ctx.users
    if any(out is node for _, out in ctx.graph.outputs):
        return True
    # a reduction shows its operand's order too, in its own result's order over the axes it keeps, and
    # one numpy runs adds its operand's elements in their memory order (a float sum: other bits)
    return any(_kind(u) not in ("elementwise", "reduction") or _kind(u) == "elementwise" and _escapes(ctx, u)
               or _kind(u) == "reduction" and (_follows_a_transposed_operand(ctx, u)
                                                or ctx.device == "cpu" and supports(ctx, u) is not None)
               for u in users[node])


def _kind(node):
    op = OPS.get(node.op)
    return op.kind if op is not None else node.op           # "input" and "const" have no op entry


def n_fill(node):
    return node.kwargs.get("fill_value") or node.args[1]


# The functions a kernel computes with a call of the C library per element (about 10-20 ns each),
# where numpy's own loop is vectorized: with AVX512_SKX numpy uses SVML for all of these but float64
# sin and cos (0.2-1.4 ns an element measured, a libm call 10-30x that); with AVX2 and FMA3 only
# float32 sin, cos, log (float32 exp and tanh, float64 exp and log are vectorized in kernels too).
_KERNEL_VECTORIZED = {("exp", "float32"), ("tanh", "float32"), ("exp", "float64"), ("log", "float64"),
                      ("tanh", "float64"), ("expm1", "float64"), ("sqrt", "float32"), ("sqrt", "float64"),
                      ("copysign", "float32"), ("copysign", "float64")}


def numpy_loop_faster(name: str, dtype: str) -> bool:
    """Whether numpy's loop of ufunc ``name`` over ``dtype`` is vectorized on this CPU where a kernel
    calls the C library per element: over whole arrays, numpy's own call is then the faster one."""
    if (name not in sm.LIBM and name not in sm.LIBM2) or (name, dtype) in _KERNEL_VECTORIZED:
        return False
    features = _cpu_features()
    if features.get("AVX512_SKX"):
        return not (dtype == "float64" and name in ("sin", "cos"))
    if features.get("AVX2") and features.get("FMA3"):
        return dtype == "float32" and name in ("sin", "cos", "log")
    return False


def _cpu_features() -> dict:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # another numpy layout: assume the C library's speed
        return {}
    return __cpu_features__


# kernel-vectorized functions whose numpy loop is faster still with AVX512_SKX (SVML): float64 exp
# 0.85 ns an element against the kernel's 2 ns, float64 log, float32 exp and tanh likewise, float64
# tanh 1.6 ns against 3.9 (1,000 elements, on a loaded machine), expm1
_SVML_FASTER = {("exp", "float32"), ("tanh", "float32"), ("exp", "float64"), ("log", "float64"),
                ("tanh", "float64"), ("expm1", "float64")}
# elementwise ops beside each such function from which the kernel's single pass wins anyway (numpy's
# pass for each costs about 0.2 ns an element more than the kernel's share of it)
SVML_FASTER_OPS = 7


def svml_faster(name: str, dtype: str) -> bool:
    """Whether numpy's SVML loop of ``name`` over ``dtype`` runs faster than the kernel's own vectorized
    code on this CPU (``_SVML_FASTER``, with AVX512_SKX)."""
    return (name, dtype) in _SVML_FASTER and bool(_cpu_features().get("AVX512_SKX"))


def numpy_loop_faster_in(ctx, nodes) -> bool:
    """Whether a kernel of these nodes applies a function over arrays that numpy's loop runs
    vectorized (``numpy_loop_faster``), or one numpy's SVML loop runs faster than the kernel's own
    vectorized code beside fewer than SVML_FASTER_OPS other array ops each: for a block that cannot be
    timed against its numpy (``out[i] = np.exp(a[i])`` writing a row of a 48 MB array: 11 us a call
    compiled, 3.5 us as Python)."""
    faster = others = 0
    for n in nodes:
        t = ctx.types.get(n)
        if not (getattr(t, "shape", None) and not getattr(t, "scalar", True)):
            continue
        name = n.op[3:] if n.op.startswith("np.") else None
        if name is not None and numpy_loop_faster(name, str(t.dtype)):
            return True
        if name is not None and svml_faster(name, str(t.dtype)):
            faster += 1
        elif n.op not in ("input", "const"):
            others += 1
    return faster > 0 and others < SVML_FASTER_OPS * faster
