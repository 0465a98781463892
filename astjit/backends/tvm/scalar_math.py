"""numpy's scalar semantics as TVM expressions: the rules a fused kernel must reproduce.

Each function takes PrimExprs already cast to the ufunc's loop dtype (numpy's ``resolve_dtypes``) and
returns one PrimExpr. Integer division is guarded (TVM would raise SIGFPE), max/min propagate NaN, shift
counts out of range give numpy's answers, float ``//`` and ``%`` follow numpy's fmod-based algorithm.
"""

import ctypes
import ctypes.util
import functools
import math

import numpy as np

from .runtime import tvm_module

tvm = tvm_module()
from tvm import te, tirx  # noqa: E402

LIBM = {
    "sqrt": "sqrt", "cbrt": "cbrt", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
}
LIBM2 = {"arctan2": "atan2", "hypot": "hypot", "copysign": "copysign"}


def dtype_of(expr) -> str:
    """The dtype of a PrimExpr as a string (0.27 exposes it as ``.ty``, older TVM as ``.dtype``)."""
    ty = getattr(expr, "ty", None)
    return str(ty) if ty is not None else str(expr.dtype)


def const(value, dtype):
    return tirx.const(value, dtype)


def shielded(expr, dtype):
    """A float leaf (an array element, a scalar parameter or a constant) hidden from TVM's simplifier.

    The simplifier treats floats as real numbers: it folds ``x * 0`` to 0, ``x - x`` to 0, ``(x + y) - y``
    to x and ``x == x`` to true, which NaN, inf and -0.0 contradict. Its rules match constants and
    structurally equal subtrees; a fresh Let-bound variable per use is neither, and LLVM, IEEE-correct
    without fast-math flags, compiles it to the plain value. Constants and variables pass through a
    same-type reinterpret first: the simplifier substitutes Lets that bind those. Other dtypes are exact
    under its rules and pass unchanged."""
    if not is_float(dtype):
        return expr
    if type(expr).__name__ not in ("BufferLoad", "ProducerLoad") and not isinstance(expr, te.tensor.TensorSlice):
        # constants, parameters and integers made float: opaque to the simplifier's range analysis too.
        # Through the integer of the same width: the analyzer bounds a same-type reinterpret of a
        # constant, and then rejects the Let's second binding where a select's condition holds it
        bits = f"int{tvm.runtime.DataType(dtype).bits}"
        expr = tirx.call_intrin(dtype, "tirx.reinterpret", tirx.call_intrin(bits, "tirx.reinterpret", expr))
    var = tirx.Var("v", dtype)
    return tirx.Let(var, expr, var)


def apply_once(rule, operands, integers=False):
    """``rule(*operands)``, with each compound float operand bound to a Let variable first.

    Rules read an operand several times (``isnan(a) ? a : max(a, b)``); substituting the operand's whole
    expression at each read would grow a chain of such ops exponentially (in compile time too). A Let
    that binds a compound value is kept by the simplifier, so each operand is computed once. The rule
    then sees plain variables: a Let inside a select's condition is analysed once per branch, and TVM
    rejects the second binding when it can bound the value (an integer cast to float). Bool Lets are
    left out: TVM's vectorizer cannot bind a vector of bools. ``integers``: integer operands that hold a
    choice are bound too (integer ``//`` and ``%`` read each operand four times: ``(b % (a // a)) % b``
    of int64 took 10 s to compile)."""
    names, bindings = [], []
    for e in operands:
        dt = dtype_of(e)
        bound = is_float(dt) or integers and dt.startswith(("int", "uint")) and holds_choice(e)
        if bound and not isinstance(e, tirx.FloatImm | tirx.IntImm | tvm.ir.Var):
            if isinstance(e, tirx.Let) and e.body.same_as(e.var):   # a shielded leaf: bind its value
                e = e.value
            var = tirx.Var("t", dt)
            bindings.append((var, _flattened(e, bindings)))
            names.append(var)
        else:
            names.append(e)
    result = rule(*names)
    for var, e in reversed(bindings):
        result = tirx.Let(var, e, result)
    return result


def holds_choice(e) -> bool:
    """Whether ``e`` holds a choice (an ``if_then_else`` or Select), in a Let's body too. An integer
    ``//`` or ``%`` binds such an operand (another ``//`` or ``%``), which repeated four times a level
    grows exponentially, and a float one reads it from a stage (lower). Integer ``//`` and ``%`` leave
    plain arithmetic and reads unbound: bound to Lets, they made the vectorized ``((a + 1) // b) %
    (b - 3)`` of int64 20% slower, and an int32 ``a // b`` too."""
    from .expression_size import _children

    stack = [e] if isinstance(e, tvm.ir.expr.Expr) else []
    while stack:
        node = stack.pop()
        if isinstance(node, tirx.Select) or (isinstance(node, tvm.ir.expr.Call)
                                             and getattr(node.op, "name", None) == "prim.if_then_else"):
            return True
        stack.extend(_children(node))
        if isinstance(node, tirx.Let):            # (its value is among the children, its body is not)
            stack.append(node.body)
    return False


def _flattened(e, bindings):
    """``e`` without its outer Lets, which go to ``bindings`` (their values flattened first, in order).

    A Let whose value holds further Lets makes TVM's LLVM code generator analyse each inner value again
    for every enclosing binding: two chained float ``%`` took minutes to compile. Every Let variable is
    a fresh object bound once, and values are pure, so one flat sequence of bindings means the same."""
    while isinstance(e, tirx.Let) and not e.body.same_as(e.var):
        bindings.append((e.var, _flattened(e.value, bindings)))
        e = e.body
    return e


def logical_not(x):
    """``not x`` on bools. TVM rewrites ``Not(a <= b)`` to ``b < a``, which is false where numpy's answer
    is true (a NaN operand); an exclusive or with true is not rewritten."""
    return tirx.bitwise_xor(x, const(True, "bool"))


def logical_xor(a, b):
    return tirx.bitwise_xor(a, b)


def libm_symbol(name, dtype) -> str:
    """The C library's function of ``name`` for ``dtype`` (``sinf`` for float32)."""
    return name + ("f" if dtype == "float32" else "")


def libm(name, dtype, *args):
    return tirx.call_pure_extern(dtype, libm_symbol(name, dtype), *args)


# CPython's own NaN constant (Py_NAN), which some of its functions return for any NaN input where the C
# library passes the input's sign on (``math.atan2``, ``abs`` of a complex): its sign is the build's
PYTHON_NAN_SIGN = math.copysign(1.0, math.atan2(-math.nan, 0.0))


def python_nan(value, *inputs):
    """``value`` (a float64 expression), CPython's NaN where one of ``inputs`` is a NaN. By copysign:
    LLVM takes a select between a NaN constant and the C library's NaN for the same value."""
    is_nan = functools.reduce(tirx.Or, [te.isnan(x) for x in inputs])
    sign = shielded(tirx.const(PYTHON_NAN_SIGN, "float64"), "float64")
    return tirx.Select(is_nan, tirx.copysign(value, sign), value)


# an input outside each function's domain, whose NaN's sign may differ between the C library and numpy
DOMAIN_PROBES = {"log": -2.0, "log2": -2.0, "log10": -2.0, "log1p": -2.0, "arcsin": 2.0, "arccos": 2.0,
                 "arccosh": 0.5, "arctanh": 2.0, "sin": float("inf"), "cos": float("inf"), "tan": float("inf")}


@functools.cache
def _numpy_nan_signs(name, dtype):
    """numpy's signs (-1.0 or 1.0) for the NaN of ``name`` at a NaN input, a -NaN input and an input
    outside the domain (None where there is none), where one differs from the C library's that the
    kernels call; None where all agree. Measured once, on this machine: numpy's own loops (on AVX-512,
    ``log10(-2.0)`` is -nan where glibc gives +nan, and ``arccos`` of a NaN flips its sign)."""
    inputs = [np.nan, -np.nan] + ([DOMAIN_PROBES[name]] if name in DOMAIN_PROBES else [])
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("m")), libm_symbol(LIBM[name], dtype))
    except (OSError, AttributeError, TypeError):
        return None
    c_type = ctypes.c_float if dtype == "float32" else ctypes.c_double
    fn.restype, fn.argtypes = c_type, [c_type]
    with np.errstate(all="ignore"):
        theirs = [getattr(np, name)(np.full(16, x, dtype))[0] for x in inputs]
    ours = [np.dtype(dtype).type(fn(x)) for x in inputs]
    if not all(np.isnan(t) and np.isnan(o) for t, o in zip(theirs, ours)):
        return None
    if [np.signbit(t) for t in theirs] == [np.signbit(o) for o in ours]:
        return None
    signs = [-1.0 if np.signbit(t) else 1.0 for t in theirs]
    return signs[0], signs[1], signs[2] if len(signs) > 2 else None


def numpy_nan_sign(name, dtype, x, result):
    """``result`` of the C library's ``name`` at ``x``, with numpy's sign on a NaN result
    (_numpy_nan_signs)."""
    signs = _numpy_nan_signs(name, dtype)
    if signs is None:
        return result
    positive, negative, domain = (None if v is None else const(v, dtype) for v in signs)

    def rule(r, x):
        at_nan = tirx.copysign(r, te.if_then_else(tirx.copysign(const(1.0, dtype), x) < const(0.0, dtype),
                                                  negative, positive))
        outside = tirx.copysign(r, domain) if domain is not None else r
        return te.if_then_else(te.isnan(x), at_nan, te.if_then_else(te.isnan(r), outside, r))

    return apply_once(rule, [result, x])


def is_float(dtype):
    return dtype.startswith("float")


def is_unsigned(dtype):
    return dtype.startswith("uint")


def bits(dtype):
    return int("".join(c for c in dtype if c.isdigit()) or 8)


def nan_max(a, b):
    return te.if_then_else(te.isnan(a), a, te.if_then_else(te.isnan(b), b, te.max(a, b)))


def nan_min(a, b):
    return te.if_then_else(te.isnan(a), a, te.if_then_else(te.isnan(b), b, te.min(a, b)))


def maximum(dtype, a, b):
    if dtype == "bool":
        return tirx.Or(a, b)
    return nan_max(a, b) if is_float(dtype) else te.max(a, b)


def minimum(dtype, a, b):
    if dtype == "bool":
        return tirx.And(a, b)
    return nan_min(a, b) if is_float(dtype) else te.min(a, b)


def clip_bound(dtype, a, bound, lower: bool, keep_on_tie: bool = True):
    """One side of np.clip: NaN in either operand propagates (``a``'s first), and on a tie of equal
    zeros ``a`` is kept where ``keep_on_tie`` (numpy's loop for bounds that are one value:
    ``clip(-0.0, 0.0, 0.0)`` is -0.0), else the bound (its loop for arrays of bounds)."""
    if not is_float(dtype):
        return maximum(dtype, a, bound) if lower else minimum(dtype, a, bound)
    if keep_on_tie:
        keep = a >= bound if lower else a <= bound
    else:
        keep = a > bound if lower else a < bound
    return te.if_then_else(te.isnan(a), a, te.if_then_else(te.isnan(bound), bound,
                                                            te.if_then_else(keep, a, bound)))


@functools.cache
def scalar_tie_winner(name, dtype):
    """Which zero numpy's ``name`` (maximum, minimum, fmax, fmin) gives for numpy scalars of ``dtype``
    that compare equal, 0.0 and -0.0: "first", "second", "positive" or "negative". Its scalar loops
    choose otherwise than its array loops (float64 ``np.fmin(0.0, -0.0)`` is 0.0, of arrays of 20
    elements -0.0) and per dtype; measured once, on this machine."""
    f, zero = getattr(np, name), getattr(np, dtype)
    with np.errstate(all="ignore"):
        signs = [np.signbit(f(zero(x), zero(y))) for x, y in ((0.0, -0.0), (-0.0, 0.0))]
    return {(False, True): "first", (True, False): "second", (False, False): "positive",
            (True, True): "negative"}[tuple(map(bool, signs))]


def scalar_extreme(name, dtype, a, b):
    """numpy's ``name`` of two numpy scalars, its choice between equal zeros included."""
    rule = {"maximum": maximum, "minimum": minimum, "fmax": fmax, "fmin": fmin}[name]
    if not is_float(dtype):
        return rule(dtype, a, b)
    winner = scalar_tie_winner(name, dtype)
    tie = {"first": a, "second": b, "positive": te.abs(a), "negative": -te.abs(a)}[winner]
    return te.if_then_else(tirx.EQ(a, b), tie, rule(dtype, a, b))


def fmax(dtype, a, b):
    if not is_float(dtype):
        return maximum(dtype, a, b)
    return te.if_then_else(te.isnan(a), b, te.if_then_else(te.isnan(b), a, te.max(a, b)))


def fmin(dtype, a, b):
    if not is_float(dtype):
        return minimum(dtype, a, b)
    return te.if_then_else(te.isnan(a), b, te.if_then_else(te.isnan(b), a, te.min(a, b)))


def truthy(expr, dtype):
    if dtype == "bool":
        return expr
    if is_float(dtype):                 # NaN is true; LLVM's ordered != would say false
        return tirx.Or(tirx.NE(expr, const(0, dtype)), te.isnan(expr))
    return tirx.NE(expr, const(0, dtype))


def not_equal(dtype, a, b):
    """a != b; for floats unordered (NaN != anything), as numpy, not LLVM's ordered compare."""
    if is_float(dtype):
        return tirx.Or(tirx.NE(a, b), tirx.Or(te.isnan(a), te.isnan(b)))
    return tirx.NE(a, b)


def signed_against_unsigned(name, s, s_dtype, u, u_dtype, unsigned_compare):
    """numpy's exact comparison ``s <name> u`` of int64 with uint64 (its ``qQ->?`` loops): a negative
    ``s`` is below every unsigned value; otherwise both compare as unsigned, by ``unsigned_compare``
    (the loop's own rule). A plain compare would read 2**64 - 1 as -1."""
    negative = s < const(0, s_dtype)
    same_sign = unsigned_compare(tirx.reinterpret(u_dtype, s), u)
    if name in ("less", "less_equal", "not_equal"):
        return tirx.Or(negative, same_sign)
    return tirx.And(logical_not(negative), same_sign)


def widen(expr, src, dst):
    """``expr`` (of dtype ``src``) cast to ``dst``. TVM rewrites a widening cast of signed arithmetic as
    arithmetic on widened operands (``int64(a + b)`` to ``int64(a) + int64(b)``), assuming it never
    overflows; numpy wraps in ``src`` first. A reinterpret round trip hides the arithmetic from that.
    Integer conversions that do not keep every value (narrowing, or a change of sign) go through
    ``wrap_int``."""
    integers = src.startswith(("int", "uint")) and dst.startswith(("int", "uint"))
    if integers and not isinstance(expr, tirx.IntImm) and not _keeps_values(src, dst):
        return wrap_int(expr, src, dst)
    if src.startswith("int") and dst.startswith("int") and bits(dst) > bits(src) \
            and not isinstance(expr, tirx.IntImm):
        expr = tirx.reinterpret(src, tirx.reinterpret("u" + src, expr))
    return expr.astype(dst)


def _keeps_values(src, dst):
    """Whether every ``src`` integer is a ``dst`` integer."""
    if is_unsigned(src) == is_unsigned(dst):
        return bits(dst) >= bits(src)
    return is_unsigned(src) and bits(dst) > bits(src)


def wrap_int(expr, src, dst):
    """``expr`` converted to ``dst`` modulo 2**bits(dst), as numpy (C) converts integers that do not fit.
    TVM bounds a cast by the intersection of its operand's range and ``dst``'s, as if it never wrapped:
    ``int64(x)`` of a uint64 x counts as >= 0, so ``int64(x) != 0`` becomes ``0 < int64(x)`` and
    ``max(int64(x), 0)`` becomes ``int64(x)``, false for x >= 2**63. A reinterpret, whose value TVM does
    not bound, carries each change of sign, and the operand of a narrowing cast is read through one."""
    sb, db = bits(src), bits(dst)
    if db > sb:                   # signed to a wider unsigned: sign-extend, then read the bits as unsigned
        return tirx.reinterpret(dst, widen(expr, src, f"int{db}"))
    if db < sb:                   # keep the low bits of the operand's unbounded bit pattern
        expr = tirx.call_intrin(f"uint{sb}", "tirx.reinterpret", expr).astype(f"uint{db}")
    # (of the same width, int8 -> uint8: the bits read as the other type, 200 for -56)
    return expr if dtype_of(expr) == dst else tirx.reinterpret(dst, expr)


def int_floor_divide(dtype, a, b):
    zero = const(0, dtype)
    safe_b = te.if_then_else(b == zero, const(1, dtype), b)
    if is_unsigned(dtype):
        return te.if_then_else(b == zero, zero, tirx.floordiv(a, safe_b))
    minus_one = const(-1, dtype)
    safe_b = te.if_then_else(b == minus_one, const(1, dtype), safe_b)
    # x // -1 is -x, and INT_MIN // -1 is INT_MIN in numpy: the negation in its wrapping form (a plain
    # 0 - a is marked as never overflowing, and LLVM folded ``(a // -1) > 0`` to ``a < 0``, True at
    # INT_MIN, whose quotient numpy wraps to INT_MIN)
    negated = wrapping("subtract", dtype, zero, a)
    return te.if_then_else(b == zero, zero,
                           te.if_then_else(b == minus_one, negated, tirx.floordiv(a, safe_b)))


def int_remainder(dtype, a, b):
    zero = const(0, dtype)
    safe_b = te.if_then_else(b == zero, const(1, dtype), b)
    if is_unsigned(dtype):
        return te.if_then_else(b == zero, zero, tirx.floormod(a, safe_b))
    minus_one = const(-1, dtype)
    safe_b = te.if_then_else(b == minus_one, const(1, dtype), safe_b)
    return te.if_then_else(tirx.Or(b == zero, b == minus_one), zero, tirx.floormod(a, safe_b))


def float_divmod(dtype, a, b):
    """numpy's npy_divmod: (floor quotient, remainder with the divisor's sign). Each step is bound to a
    Let variable: the steps read each other several times, and inlining them would multiply the
    expression's size. Selects, not if_then_else: TVM does not vectorize an if_then_else with a division
    in a branch, and float division cannot trap."""
    bindings = []

    def bind(expr):
        var = tirx.Var("d", dtype)
        bindings.append((var, expr))
        return var

    zero = const(0.0, dtype)
    mod = raw = bind(libm("fmod", dtype, a, b))
    div = bind((a - mod) / b)
    signs_differ = tirx.Or(tirx.And(b < zero, logical_not(mod < zero)), tirx.And(logical_not(b < zero), mod < zero))
    fix = tirx.And(tirx.NE(mod, zero), signs_differ)
    mod = bind(tirx.Select(fix, mod + b, tirx.Select(tirx.EQ(mod, zero), libm("copysign", dtype, zero, b),
                                                             mod)))
    div = bind(tirx.Select(fix, div - const(1.0, dtype), div))
    floor = bind(te.floor(div))
    floordiv = tirx.Select(div - floor > const(0.5, dtype), floor + const(1.0, dtype), floor)
    floordiv = tirx.Select(tirx.EQ(div, zero), libm("copysign", dtype, zero, a / b), floordiv)
    floordiv = tirx.Select(tirx.EQ(b, zero), a / b, floordiv)
    mod = tirx.Select(tirx.EQ(b, zero), raw, mod)
    # The LLVM that TVM 0.27 links rewrites fmod(a, b) as ``frem nnan a, b`` where it can tell that a is
    # never infinite and b never zero (an integer made float, a NaN constant), though a NaN operand makes
    # that poison: the kernel of ``int_array % np.nan`` stored nothing. A NaN operand (both results NaN
    # in numpy) is therefore selected last, on the results: testing a and b inside the steps above made
    # TVM's code generator, which analyses each Let's value again in the next, take minutes on nested
    # divisions.
    operand_nan = tirx.Or(te.isnan(a), te.isnan(b))
    floordiv = tirx.Select(operand_nan, a + b, floordiv)
    mod = tirx.Select(operand_nan, a + b, mod)

    def wrapped(result):
        for var, expr in reversed(bindings):
            result = tirx.Let(var, expr, result)
        return result

    return wrapped(floordiv), wrapped(mod)


def left_shift(dtype, a, b):
    n = const(bits(dtype), dtype)
    out_of_range = b >= n if is_unsigned(dtype) else tirx.Or(b < const(0, dtype), b >= n)
    safe = te.if_then_else(out_of_range, const(0, dtype), b)
    return te.if_then_else(out_of_range, const(0, dtype), a << safe)


def right_shift(dtype, a, b):
    n = const(bits(dtype), dtype)
    if is_unsigned(dtype):
        safe = te.if_then_else(b >= n, const(0, dtype), b)
        return te.if_then_else(b >= n, const(0, dtype), a >> safe)
    out_of_range = tirx.Or(b < const(0, dtype), b >= n)
    safe = te.if_then_else(out_of_range, const(0, dtype), b)
    fill = te.if_then_else(a < const(0, dtype), const(-1, dtype), const(0, dtype))
    return te.if_then_else(out_of_range, fill, a >> safe)


def sign(dtype, x):
    zero, one = const(0, dtype), const(1, dtype)
    if is_unsigned(dtype):
        return te.if_then_else(x > zero, one, zero)
    minus = const(-1, dtype)
    value = te.if_then_else(x > zero, one, te.if_then_else(x < zero, minus, zero))
    return te.if_then_else(te.isnan(x), x, value) if is_float(dtype) else value


def absolute(dtype, x):
    if dtype == "bool" or is_unsigned(dtype):
        return x
    if is_float(dtype):
        return te.abs(x)
    return te.if_then_else(x < const(0, dtype), wrapping("subtract", dtype, const(0, dtype), x), x)


WRAPPING_OPS = ("add", "subtract", "multiply")


def wrapping(op: str, dtype, x, y):
    """``x + y``, ``x - y`` or ``x * y`` (``op``: the ufunc's name) modulo 2**bits, as numpy's integers
    give them. TVM's simplifier assumes integer arithmetic never overflows (it folds ``(a + 1) > a`` to
    True) and its LLVM code marks 32- and 64-bit adds, subtracts and multiplies as never overflowing.
    So the operation is computed where it cannot overflow: in the signed integer of twice the width, of
    the operands sign-extended (an unsigned operand read as the signed integer of its width first: the
    low bits of a sum, difference or product do not depend on the operands' signedness), and its low
    bits are taken through a reinterpret, whose value TVM does not bound (wrap_int). LLVM narrows the
    truncated wide operation of extended operands to one plain instruction of the dtype, without the
    no-overflow flags, which its loop vectorizer takes like any other."""
    wide = f"int{2 * bits(dtype)}"
    x, y = _sign_extended(x, dtype, wide), _sign_extended(y, dtype, wide)
    value = {"add": x + y, "subtract": x - y, "multiply": x * y}[op]
    # (one the simplifier folds to a number, ``b - b``, ``b * 0``: TVM's LLVM code generator refuses a
    # reinterpret of the constant 0 it would become, and the block ran on numpy)
    folded = _folded(value, op, x, y)
    if isinstance(folded, tirx.IntImm):
        b = bits(dtype)
        low = int(folded.value) % 2**b
        return const(low - 2**b if not is_unsigned(dtype) and low >= 2 ** (b - 1) else low, dtype)
    return wrap_int(value, wide, dtype)


def _folded(value, op, x, y):
    """``value`` (``x op y``) as the simplifier folds it, or None where it cannot say: the analyzer
    hashes what it simplifies, which a read of a TE tensor does not support; there, a difference of
    equal operands and a product with a constant 0 are the folds."""
    try:
        return _analyzer().simplify(value)
    except Exception:
        pass
    try:
        if op == "subtract" and tvm.ir.structural_equal(x, y):
            return tirx.IntImm(value.dtype, 0)
    except Exception:
        return None
    zero = [v for v in (x, y) if isinstance(v, tirx.IntImm) and int(v.value) == 0]
    return tirx.IntImm(value.dtype, 0) if op == "multiply" and zero else None


@functools.cache
def _analyzer():
    from tvm.sym.analyzer import Analyzer

    return Analyzer()


def _sign_extended(x, dtype, wide):
    """``x`` read as the signed integer of its width, in the wider ``wide`` (a constant directly: TVM
    cannot reinterpret one)."""
    b = bits(dtype)
    if isinstance(x, tirx.IntImm):
        value = int(x.value) % 2**b
        return const(value - 2**b if value >= 2 ** (b - 1) else value, wide)
    if is_unsigned(dtype):
        x = tirx.reinterpret(f"int{b}", x)
    return x.astype(wide)


def int_power(dtype, x, exponent: int):
    """x ** exponent for a static exponent >= 0, wrapping like numpy (square and multiply)."""
    result = const(1, dtype)
    base = x
    first = True
    while exponent:
        if exponent & 1:
            result = base if first else result * base
            first = False
        exponent >>= 1
        if exponent:
            base = base * base
    return result


TANH_NUMERATOR = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
                  1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)
TANH_DENOMINATOR = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)


def tanh_float32(x):
    """tanhf as vectorizable arithmetic: the rational approximation of ``topi.fast_tanh`` (x clamped to
    [-9, 9], odd numerator of degree 13 over an even denominator of degree 6), except near zero, where
    tanh(x) rounds to x itself (|x| < 2**-12: x**3/3 is below half an ulp) and the polynomial would
    lose the relative precision of tiny and denormal inputs. NaN and -0.0 pass through. A Select (both
    sides computed) rather than an if_then_else, which TVM does not vectorize with a division inside."""
    f32 = "float32"
    c = lambda v: const(v, f32)  # noqa: E731

    def body(x, clamped):
        x2 = clamped * clamped
        p = c(TANH_NUMERATOR[0])
        for coefficient in TANH_NUMERATOR[1:]:
            p = x2 * p + c(coefficient)
        q = c(TANH_DENOMINATOR[0])
        for coefficient in TANH_DENOMINATOR[1:]:
            q = x2 * q + c(coefficient)
        return tirx.Select(tirx.LT(te.abs(x), c(2.0 ** -12)), x, clamped * p / q)

    # max(-9, min(9, x)) with the constant first returns NaN for a NaN x (x86 min/max return their
    # second operand when one is NaN), so NaN needs no test of its own; an isnan in the select's
    # condition next to this Let stops TVM from vectorizing the loop.

    return apply_once(body, [x, te.max(c(-9.0), te.min(c(9.0), x))])


def exp_float32(x):
    """expf as vectorizable arithmetic: Cody-Waite reduction, a degree-6 polynomial (Cephes), and
    scaling by 2**n in two steps so that overflow gives inf and tiny results round once into the
    denormals, like libm. NaN passes through."""
    f32, i32 = "float32", "int32"
    c = lambda v: const(v, f32)  # noqa: E731
    xc = te.min(te.max(x, c(-110.0)), c(90.0))
    n = te.round(xc * c(1.44269504088896341))
    r = xc - n * c(0.693359375)
    r = r - n * c(-2.12194440e-4)
    p = c(1.9875691500e-4)
    for coefficient in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1):
        p = p * r + c(coefficient)
    y = p * r * r + r + c(1.0)
    ni = n.astype(i32)
    n1 = tirx.shift_right(ni, const(1, i32))
    n2 = ni - n1
    scale1 = tirx.reinterpret(f32, tirx.shift_left(n1 + const(127, i32), const(23, i32)))
    scale2 = tirx.reinterpret(f32, tirx.shift_left(n2 + const(127, i32), const(23, i32)))
    return te.if_then_else(te.isnan(x), x, y * scale1 * scale2)


class _Steps:
    """Intermediate values of a float algorithm, each bound to a Let variable: the simplifier treats
    floats as real numbers and would otherwise merge ``(x - k*c1) - k*c2`` into ``x - k*(c1 + c2)``,
    losing the extra precision that two-constant reductions exist for. ``done(result)`` wraps the
    result in the bindings, in order."""

    def __init__(self):
        self.bindings = []

    def __call__(self, expr):
        var = tirx.Var("t", dtype_of(expr))
        self.bindings.append((var, expr))
        return var

    def done(self, result):
        for var, value in reversed(self.bindings):
            result = tirx.Let(var, value, result)
        return result


LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10   # ln 2 = LN2_HI + LN2_LO
EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
         -1.65339022054652515390e-06, 4.13813679705723846039e-08)
LOG_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
          2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
          1.479819860511658591e-01)


def _power_of_two(k, f64="float64"):
    """2.0**k for an int64 k in [-1022, 1023], built from its exponent bits."""
    i64 = "int64"
    return tirx.reinterpret(f64, tirx.shift_left(k + const(1023, i64), const(52, i64)))


def exp_float64(x):
    """exp as vectorizable arithmetic (the algorithm of Sun's fdlibm ``e_exp.c``): x = k ln 2 + r with
    |r| <= ln 2 / 2 in two constants, a degree-5 polynomial in r*r through a rational form, and 2**k
    applied in two halves so that overflow gives inf and tiny results round once into the denormals.
    x is first clamped to [-746, 710], beyond which exp is 0 or inf anyway; NaN passes through."""
    f64, i64 = "float64", "int64"
    c = lambda v: const(v, f64)  # noqa: E731
    s = _Steps()
    xc = s(te.min(te.max(x, c(-746.0)), c(710.0)))
    k = s(te.round(xc * c(1.44269504088896338700e+00)))
    hi = s(xc - k * c(LN2_HI))
    lo = s(k * c(LN2_LO))
    r = s(hi - lo)
    t = s(r * r)
    p = c(EXP_P[-1])
    for coefficient in reversed(EXP_P[:-1]):
        p = c(coefficient) + t * p
    cr = s(r - t * p)
    y = s(c(1.0) - ((lo - (r * cr) / (c(2.0) - cr)) - hi))
    ki = s(k.astype(i64))
    k1 = s(tirx.shift_right(ki, const(1, i64)))
    result = y * _power_of_two(k1) * _power_of_two(ki - k1)
    return s.done(tirx.Select(te.isnan(x), x, result))


def log_float64(x):
    """log as vectorizable arithmetic (the algorithm of fdlibm ``e_log.c``): x = 2**k (1 + f) with
    sqrt(2)/2 <= 1 + f < sqrt(2) read from the exponent bits (denormals scaled by 2**54 first),
    s = f / (2 + f), a degree-14 polynomial in s, and k ln 2 added in two constants. Zero gives -inf,
    negative numbers numpy's NaN (sign bit set), +inf itself; NaN passes through."""
    f64, i64 = "float64", "int64"
    c = lambda v: const(v, f64)  # noqa: E731
    s = _Steps()
    tiny = s(x < c(2.0 ** -1022))
    xs = s(tirx.Select(tiny, x * c(2.0 ** 54), x))
    bits = s(tirx.reinterpret(i64, xs))
    k0 = s(tirx.shift_right(bits, const(52, i64)) - const(1023, i64)
           - tirx.Select(tiny, const(54, i64), const(0, i64)))
    m = s(tirx.reinterpret(f64, tirx.bitwise_or(tirx.bitwise_and(bits, const((1 << 52) - 1, i64)),
                                                  const(1023 << 52, i64))))
    big = s(m > c(1.4142135623730951))
    f = s(tirx.Select(big, m * c(0.5), m) - c(1.0))
    dk = s((k0 + tirx.Select(big, const(1, i64), const(0, i64))).astype(f64))
    q = s(f / (c(2.0) + f))
    z = s(q * q)
    w = s(z * z)
    t1 = w * (c(LOG_LG[1]) + w * (c(LOG_LG[3]) + w * c(LOG_LG[5])))
    t2 = z * (c(LOG_LG[0]) + w * (c(LOG_LG[2]) + w * (c(LOG_LG[4]) + w * c(LOG_LG[6]))))
    rr = s(t2 + t1)
    hfsq = s(c(0.5) * f * f)
    result = s(dk * c(LN2_HI) - ((hfsq - (q * (hfsq + rr) + dk * c(LN2_LO))) - f))
    inf = c(float("inf"))
    special = tirx.Select(te.isnan(x), x, tirx.Select(tirx.EQ(x, c(0.0)), c(-float("inf")),
                                                      tirx.Select(tirx.EQ(x, inf), inf, c(-float("nan")))))
    return s.done(tirx.Select(tirx.And(x > c(0.0), x < inf), result, special))


def transcendental(op: str) -> bool:
    """A costly function (exp, log, tanh, power...; sqrt excluded: one instruction), for the schedule's
    cost estimate and for which intermediates are worth keeping in a buffer."""
    name = op.removeprefix("np.")
    return name != "sqrt" and (name in LIBM or name in LIBM2 or name in ("power", "float_power"))


DBL_MIN = 2.2250738585072014e-308
VELTKAMP = 134217729.0           # 2**27 + 1: splits a double into two halves whose products are exact


def _exact_product(s, x, y):
    """(z, zz): z = x * y rounded and zz its exact error (Dekker's product: each half of a
    Veltkamp split is exact; CPython 3.12's ``dl_mul``, whose ``fma`` gives the same error)."""
    z = s(x * y)
    xh, xl = _split(s, x)
    yh, yl = _split(s, y)
    zz = s(s(s(s(s(xh * yh) - z) + s(xh * yl)) + s(xl * yh)) + s(xl * yl))
    return z, zz


def _fast_sum(s, a, b):
    """(a + b rounded, its exact error) for |a| >= |b| (CPython's ``dl_fast_sum``)."""
    total = s(a + b)
    return total, s(s(a - total) + b)


def _split(s, a):
    t = s(a * const(VELTKAMP, "float64"))
    hi = s(t - s(t - a))
    return hi, s(a - hi)


def python_hypot(x, y, step, before_312: bool):
    """CPython's ``math.hypot`` of two floats (mathmodule.c ``vector_norm``), which differs from the C
    library's ``hypot`` in the last bit of a few results in a thousand: both coordinates scaled by the
    power of two below the larger magnitude, their squares and the running sum kept as exact pairs, a
    square root with one step of differential correction, scaled back. ``before_312``: the form of
    Python 3.10 and 3.11 (Veltkamp halves summed into three fractions; a subnormal larger magnitude
    below 2**-1024 divides instead of scaling), else that of 3.12 and later (exact products; such a
    magnitude first scaled up by DBL_MIN). An infinity wins over NaN; NaN next; zeros give +0.0.
    Measured equal to each version's own on millions of inputs of every magnitude.

    ``step(expr)`` computes each step into a local (a loop kernel's ``bind``): the simplifier, which
    treats floats as real numbers, would undo the exact sums, and Lets this many deep take TVM's code
    generator minutes."""
    f64, i64 = "float64", "int64"
    c = lambda v: const(v, f64)  # noqa: E731
    s = step
    zero = s(c(0.0))             # (a local: the simplifier would drop ``0.0 + v``, which is not v for -0.0)
    ax, ay = s(te.abs(x)), s(te.abs(y))
    big = s(tirx.Select(ay > ax, ay, ax))
    tiny = s(big < c(2.0 ** -1024))                       # frexp's exponent below -1023
    if before_312:
        vx, vy, top = ax, ay, big
    else:
        pre = s(tirx.Select(tiny, c(DBL_MIN), c(1.0)))
        vx, vy, top = s(ax / pre), s(ay / pre), s(big / pre)
    bits = s(tirx.reinterpret(i64, top))
    biased = s(tirx.bitwise_and(tirx.shift_right(bits, const(52, i64)), const(0x7FF, i64)))
    # frexp(top) = m * 2**e with m in [0.5, 1): for a normal top e = biased - 1022; a subnormal one
    # is normalized by 2**54 first
    normal = s(biased > const(0, i64))
    shifted = s(tirx.bitwise_and(tirx.shift_right(tirx.reinterpret(i64, top * c(2.0 ** 54)), const(52, i64)),
                                 const(0x7FF, i64)))
    e = s(tirx.Select(normal, biased - const(1022, i64), shifted - const(1022 + 54, i64)))
    e = s(tirx.Max(e, const(-1023, i64)))                  # (the other branch's: any scale will do)
    # 2**-e, subnormal for e = 1024 (a magnitude of 2**1023 or more): built 2**54 higher, then scaled
    low = s(e > const(1022, i64))
    exponent = s(const(1023, i64) - e + tirx.Select(low, const(54, i64), const(0, i64)))
    power = s(tirx.reinterpret(f64, tirx.shift_left(exponent, const(52, i64))))
    scale = s(tirx.Select(low, power * c(2.0 ** -54), power))
    if before_312:
        norm = _norm_311(s, c, zero, vx, vy, scale)
        # below 2**-1024: each coordinate divided by the larger, squared and summed (compensated)
        csum, frac = c(1.0), zero
        for v in (vx, vy):
            csum, err = _fast_sum(s, csum, s(s(v / top) * s(v / top)))
            frac = s(frac + err)
        norm = s(tirx.Select(tiny, s(top * s(tirx.sqrt(s(s(csum - c(1.0)) + frac)))), norm))
    else:
        norm = s(pre * _norm_312(s, c, zero, vx, vy, scale))
    inf = c(float("inf"))
    nan = c(float("nan"))
    return tirx.Select(tirx.Or(te.isinf(x), te.isinf(y)), inf,
                       tirx.Select(tirx.Or(te.isnan(x), te.isnan(y)), nan,
                                   tirx.Select(tirx.EQ(big, c(0.0)), c(0.0), norm)))


def _norm_312(s, c, zero, vx, vy, scale):
    csum, frac1, frac2 = c(1.0), zero, zero
    for v in (vx, vy):
        xs = s(v * scale)
        hi, lo = _exact_product(s, xs, xs)
        csum, err = _fast_sum(s, csum, hi)
        frac1, frac2 = s(frac1 + lo), s(frac2 + err)
    h = s(tirx.sqrt(s(s(csum - c(1.0)) + s(frac1 + frac2))))
    hi, lo = _exact_product(s, s(zero - h), h)
    csum, err = _fast_sum(s, csum, hi)
    frac1, frac2 = s(frac1 + lo), s(frac2 + err)
    r = s(s(csum - c(1.0)) + s(frac1 + frac2))
    h = s(h + s(r / s(c(2.0) * h)))
    return s(h / scale)


def _norm_311(s, c, zero, vx, vy, scale):
    csum, frac1, frac2, frac3 = c(1.0), zero, zero, zero

    def add(csum, frac, p):
        csum, err = _fast_sum(s, csum, p)
        return csum, s(frac + err)

    for v in (vx, vy):
        hi, lo = _split(s, s(v * scale))
        csum, frac1 = add(csum, frac1, s(hi * hi))
        csum, frac2 = add(csum, frac2, s(s(c(2.0) * hi) * lo))
        frac3 = s(frac3 + s(lo * lo))
    h = s(tirx.sqrt(s(s(csum - c(1.0)) + s(s(frac1 + frac2) + frac3))))
    hi, lo = _split(s, h)
    csum, frac1 = add(csum, frac1, s(s(zero - hi) * hi))
    csum, frac2 = add(csum, frac2, s(s(c(-2.0) * hi) * lo))
    frac3 = s(frac3 + s(s(zero - lo) * lo))
    r = s(s(csum - c(1.0)) + s(s(frac1 + frac2) + frac3))
    return s(s(h + s(r / s(c(2.0) * h))) / scale)
