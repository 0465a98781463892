"""Complex numbers in a loop kernel (``z = z * z + c`` of a Mandelbrot set). TIR has no complex type, so
a Python ``complex``, a ``numpy.complex128`` or a ``numpy.complex64`` is a Pair of floats (float64,
float32 for complex64), computed with the formulas CPython (3.10 to 3.13) and numpy use, operation for
operation, so that the results agree to the bit (NaN, inf and -0.0 included):

- ``+``, ``-``, ``*`` convert a real operand to ``(x, 0.0)`` first (``(-0.0 + 1j) + 1.0`` has the
  imaginary part ``1.0 + 0.0``), then ``(a + c, b + d)`` and ``(ac - bd, ad + bc)``, as both do;
- ``/``: CPython's ``_Py_c_quot`` for a Python complex (ZeroDivisionError "complex division by zero"),
  numpy's scalar division for numpy's (inf and nan for a zero divisor, as numpy gives them);
- ``abs``: the C library's ``hypot``, as numpy calls it; for a Python complex CPython's own rules
  first (an infinite part gives inf, a NaN part CPython's own NaN, an overflow OverflowError);
- ``==``, ``!=`` (in the type the operands promote to: numpy compares a complex64 with a Python
  complex in complex64), truth, ``.real``, ``.imag``, ``.conjugate()``, ``complex(x)``,
  ``complex(x, y)``.

A variable that holds a real number on some iterations and a complex one on others (``s = 0`` then
``s += w * x[i]``) is stored as a complex128 with its type's tag. Arrays of complex numbers, ``**``,
``cmath``, ordering comparisons and Python complex arithmetic on Python 3.14 are not taken: such a
loop runs as Python."""

import functools
import sys

import gast
import numpy as np

from ...errors import Unsupported
from . import scalar_math as sm
from .complex_forms import product_form, quotient_rounded
from .loop_types import Scalar
from .runtime import tvm_module

tvm = tvm_module()
from tvm import tirx  # noqa: E402
from tvm.tirx.script import builder as T  # noqa: E402

COMPLEX_DTYPES = ("complex64", "complex128")
# CPython 3.14 computes a real operand with a complex one without making it complex first, and its
# quotients recover infinities (C11 Annex G); the formulas here are those of 3.10 to 3.13
PYTHON_COMPLEX_CHANGED = (3, 14)
PARTS = ("real", "imag")


class Pair:
    """A complex value's expressions: its real and imaginary parts, floats of the part dtype."""

    __slots__ = ("re", "im")

    def __init__(self, re, im):
        self.re = re
        self.im = im

    def __repr__(self):
        return f"Pair({self.re}, {self.im})"


def is_complex(dtype) -> bool:
    return str(dtype) in COMPLEX_DTYPES


def part_dtype(dtype) -> str:
    """The float dtype of a complex dtype's parts."""
    return "float32" if str(dtype) == "complex64" else "float64"


def slots(dtype) -> int:
    """Elements of a local holding a value of ``dtype``: two floats for a complex number."""
    return 2 if is_complex(dtype) else 1


def local_buffer(dtype):
    """A local for one value of ``dtype`` (a complex one: its two parts)."""
    if is_complex(dtype):
        return T.alloc_buffer((2,), part_dtype(dtype), scope="global")
    return T.alloc_buffer((1,), dtype, scope="global")


def store_local(buf, expr, dtype) -> None:
    if is_complex(dtype):
        if not isinstance(expr, Pair):
            raise Unsupported(f"a {dtype} local given {expr}")
        T.buffer_store(buf, expr.re, [0])
        T.buffer_store(buf, expr.im, [1])
    else:
        T.buffer_store(buf, expr, [0])


def load_local(buf, dtype):
    if is_complex(dtype):
        part = part_dtype(dtype)
        return Pair(sm.shielded(buf[0], part), sm.shielded(buf[1], part))
    return None


def constant(value: complex, dtype) -> Pair:
    part = part_dtype(dtype)
    return Pair(sm.shielded(tirx.const(value.real, part), part), sm.shielded(tirx.const(value.imag, part), part))


def as_pair(expr, src, dst, cast) -> Pair:
    """``expr`` of dtype ``src`` (complex or real) as a complex of ``dst``; ``cast``: the kernel's
    conversion between real dtypes (loops._cast)."""
    part = part_dtype(dst)
    if is_complex(src):
        return Pair(cast(expr.re, part_dtype(src), part), cast(expr.im, part_dtype(src), part))
    if src == "bool" or np.dtype(src).kind in "iu" or src != part:
        expr = cast(expr, src, part)
    return Pair(expr, sm.shielded(tirx.const(0.0, part), part))


def add(x: Pair, y: Pair) -> Pair:
    return Pair(x.re + y.re, x.im + y.im)


def subtract(x: Pair, y: Pair) -> Pair:
    return Pair(x.re - y.re, x.im - y.im)


def multiply(x: Pair, y: Pair) -> Pair:
    return Pair(x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re)


def fused_multiply(x: Pair, y: Pair, part) -> Pair:
    """The product as numpy's complex multiply loop computes it where it is compiled with FMA: the
    first product of each part rounded once with the sum (complex_forms)."""
    return Pair(sm.libm("fma", part, x.re, y.re, -(x.im * y.im)), sm.libm("fma", part, x.re, y.im, x.im * y.re))


def numpy_divide(x: Pair, y: Pair, part, bind) -> Pair:
    """numpy's complex scalar division (Smith's method, a reciprocal scale): inf and nan for a zero
    divisor, NaN through the second branch for a NaN in the divisor."""
    abs_re, abs_im = bind(sm.te.abs(y.re)), bind(sm.te.abs(y.im))
    one = sm.shielded(tirx.const(1.0, part), part)
    first = abs_re >= abs_im
    both_zero = tirx.And(abs_re == tirx.const(0.0, part), abs_im == tirx.const(0.0, part))
    rat = bind(tirx.Select(first, y.im / y.re, y.re / y.im))
    scl = bind(tirx.Select(first, one / (y.re + y.im * rat), one / (y.im + y.re * rat)))
    re = tirx.Select(first, (x.re + x.im * rat) * scl, (x.re * rat + x.im) * scl)
    im = tirx.Select(first, (x.im - x.re * rat) * scl, (x.im * rat - x.re) * scl)
    return Pair(tirx.Select(both_zero, x.re / abs_re, re), tirx.Select(both_zero, x.im / abs_re, im))


def python_divide(x: Pair, y: Pair, bind):
    """CPython's ``_Py_c_quot``: (quotient, divisor is zero). A NaN in the divisor gives NaN parts."""
    abs_re, abs_im = bind(sm.te.abs(y.re)), bind(sm.te.abs(y.im))
    first = abs_re >= abs_im
    second = abs_im >= abs_re
    zero = tirx.And(first, abs_re == tirx.const(0.0, "float64"))
    rat = bind(tirx.Select(first, y.im / y.re, y.re / y.im))
    denom = bind(tirx.Select(first, y.re + y.im * rat, y.re * rat + y.im))
    nan = sm.shielded(tirx.const(float("nan"), "float64"), "float64")
    re = tirx.Select(first, (x.re + x.im * rat) / denom, tirx.Select(second, (x.re * rat + x.im) / denom, nan))
    im = tirx.Select(first, (x.im - x.re * rat) / denom, tirx.Select(second, (x.im * rat - x.re) / denom, nan))
    return Pair(re, im), zero


def python_abs(z: Pair, bind):
    """CPython's ``abs`` of a complex: (value, overflowed): an infinite part gives inf, else a NaN part
    CPython's NaN, else hypot, which overflowed where it is infinite (hypot is NaN exactly where a part
    is NaN and none infinite)."""
    re, im = bind(sm.te.abs(z.re)), bind(sm.te.abs(z.im))
    inf = tirx.const(float("inf"), "float64")
    h = bind(sm.libm("hypot", "float64", z.re, z.im))
    finite = tirx.And(re < inf, im < inf)        # (false for a NaN)
    value = tirx.Select(re == inf, re, tirx.Select(im == inf, im, sm.python_nan(h, h)))
    return value, tirx.And(finite, h == inf)


def equal(x: Pair, y: Pair):
    return tirx.And(tirx.EQ(x.re, y.re), tirx.EQ(x.im, y.im))


def not_equal(x: Pair, y: Pair):
    """Unordered: a NaN part makes a number unequal to itself (TVM's simplifier would turn
    ``not (x == y)`` into LLVM's ordered ``!=``, false for NaN)."""
    dtype = sm.dtype_of(x.re)
    return tirx.Or(sm.not_equal(dtype, x.re, y.re), sm.not_equal(dtype, x.im, y.im))


def truth(z: Pair):
    """Python's truth of a complex: a nonzero part, NaN included."""
    zero = tirx.const(0.0, sm.dtype_of(z.re))
    return not_equal(z, Pair(zero, zero))


class ComplexValues:
    """LoopLowering's complex arithmetic (a mixin): the operations above on Vals of complex types."""

    def complex_operands(self, fn, operands, what, node, r=None):
        """The single result type of ``fn`` over the operands (``r``, unless given), and each operand as
        a Pair of ``r``'s dtype (or the widest operand's where ``r`` is not complex: a comparison's bool)."""
        r = r or self.common(fn, operands, what, node)
        target = r.dtype if is_complex(r.dtype) else max((v.dtype for v in operands if is_complex(v.dtype)),
                                                         key=COMPLEX_DTYPES.index)
        for v in operands:
            if not is_complex(v.dtype) and any(t.python and t.kind in "iu" for t in v.types):
                self.check_exact_as_float(v, node, "an int above 2**53 made complex")
        return r, [self.pair_of(v, target) for v in operands]

    def pair_of(self, v, dtype) -> Pair:
        from .loops import _cast

        pair = as_pair(v.expr, v.dtype, dtype, _cast)
        return Pair(self.bind(pair.re, part_dtype(dtype)), self.bind(pair.im, part_dtype(dtype)))

    def complex_binary(self, op, a, b, node):
        from .loop_types import BINARY
        from .loops import Val, _no

        if op not in ("Add", "Sub", "Mult", "Div"):
            raise _no(f"the operator {op} on complex numbers", node)
        types, tag = self.result_types(BINARY[op], (a, b), f"the operator {op}")
        if len(types) == 1 and is_complex(types[0].dtype):
            return self.complex_arithmetic(op, types[0], a, b, node)
        if not all(is_complex(t.dtype) for t in types):
            raise _no(f"the operator {op} gives {' or '.join(map(str, types))} depending on the types the "
                      "variables hold", node)
        # a variable that is a Python complex on some iterations and a complex64 on others (``s = 0j``
        # then ``s += w * x[i]`` of float32 elements): computed in each type, the tag picks one
        from .loop_types import storage_dtype
        from .loops import _cast, by_tag

        storage = storage_dtype(types)
        per_type = [_cast(self.complex_arithmetic(op, t, a, b, node, tirx.EQ(tag, tirx.const(k, "int8"))).expr,
                          t.dtype, storage) for k, t in enumerate(types)]
        return Val(Pair(by_tag(tag, [z.re for z in per_type]), by_tag(tag, [z.im for z in per_type])), types, tag)

    def complex_arithmetic(self, op, r, a, b, node, where=None):
        """``a op b`` computed as a complex of type ``r``; ``where``: on the iterations where that is
        the result's type (a Python division by zero raises only there)."""
        from .loop_types import BINARY
        from .loops import Val, _no

        if r.python and sys.version_info >= PYTHON_COMPLEX_CHANGED:
            raise _no("arithmetic of Python complex numbers on Python 3.14 or later (the kernel computes "
                      "3.10-3.13's: 3.14 changed mixed real and complex operands and division)", node)
        r, (x, y) = self.complex_operands(BINARY[op], (a, b), f"the operator {op}", node, r)
        if op == "Add":
            return Val(add(x, y), (r,))
        if op == "Sub":
            return Val(subtract(x, y), (r,))
        part = part_dtype(r.dtype)
        fused = self.rounding(op, a, b, r, node)
        if op == "Mult":
            if fused is None:
                return Val(multiply(x, y), (r,))
            plain, one_rounding = multiply(x, y), fused_multiply(x, y, part)
            return Val(Pair(tirx.Select(fused, one_rounding.re, plain.re), tirx.Select(fused, one_rounding.im, plain.im)), (r,))
        bind = lambda e: self.bind(e, part)  # noqa: E731
        if not r.python:
            return Val(numpy_divide(x, y, part, bind), (r,))
        quotient, zero = python_divide(x, y, bind)
        self.fail(zero if where is None else tirx.And(where, zero), node, lambda values: ZeroDivisionError("complex division by zero"))
        return Val(quotient, (r,))

    def rounding(self, op, a, b, r, node):
        """Where ``a op b`` giving ``r`` rounds as numpy's fused complex multiply: None (nowhere), or the
        condition on the operands' types (complex_forms measures each pair of types). A pair that
        rounds otherwise than the kernel can keeps the loop in Python."""
        from .loop_types import BINARY, possible_results
        from .loops import _no

        combos = [c for c, t in possible_results(BINARY[op], (a, b), f"the operator {op}").items() if t == r]
        forms = {c: product_form(*c) if op == "Mult" else "rounded" if quotient_rounded(*c) else None
                 for c in combos} if op in ("Mult", "Div") else {}
        for combo, form in forms.items():
            if form is None:
                raise _no(f"the operator {op} of {' and '.join(map(str, combo))} rounds otherwise than a "
                          "kernel computes it on this machine", node)
        fused = [c for c, form in forms.items() if form == "fused"]
        if not fused:
            return None
        return functools.reduce(tirx.Or, [self.combination_holds((a, b), c) for c in fused])

    def complex_unary(self, op, v, node):
        from .loops import Val, _no

        if op == "Not":
            zero = tirx.const(0.0, sm.dtype_of(v.expr.re))
            return Val(equal(v.expr, Pair(zero, zero)), (Scalar("bool", True),))
        if op == "UAdd":
            return Val(v.expr, v.types, v.tag)
        if op == "USub":
            return Val(Pair(-v.expr.re, -v.expr.im), v.types, v.tag)
        raise _no(f"unary {op} of a complex number", node)

    def complex_compare(self, op, a, b, node):
        from .loop_types import BINARY, COMPARE
        from .loops import _no

        if op not in ("Eq", "NotEq"):
            raise _no(f"the comparison {op} of complex numbers (Python raises TypeError)", node)
        # compared in the type the operands promote to: numpy compares a complex64 with a Python complex
        # (or a float32 with one) in complex64, rounding the Python number first
        r = self.common(BINARY["Add"], (a, b), "promotion", node)
        _, (x, y) = self.complex_operands(COMPARE[op], (a, b), f"the comparison {op}", node, r)
        return equal(x, y) if op == "Eq" else not_equal(x, y)

    def complex_abs(self, v, node):
        """``abs`` of a complex: the C library's hypot for numpy's (in its parts' dtype), CPython's rules
        for a Python complex; a value of several complex types (``z = np.complex64(0)`` then
        ``z = z * z + c`` of a complex128 ``c``) in each type, the tag picking one."""
        from .loop_types import storage_dtype
        from .loops import Val, _cast, _no, by_tag

        types, tag = self.result_types(abs, (v,), "abs")
        if any(not is_complex(t.dtype) for t in v.types):
            raise _no("abs() of a value that is complex on some iterations only", node)
        storage = storage_dtype(types)
        values = []
        for k, t in enumerate(v.types):
            part = part_dtype(t.dtype)
            z = Pair(*(self.bind(_cast(x, part_dtype(v.dtype), part), part) for x in (v.expr.re, v.expr.im)))
            if t.python:
                value, overflowed = python_abs(z, lambda e, part=part: self.bind(e, part))
                here = tirx.EQ(v.tag, tirx.const(k, "int8")) if v.tag is not None else None
                self.fail(overflowed if here is None else tirx.And(here, overflowed), node,
                          lambda values: OverflowError("absolute value too large"))
            else:
                value = sm.libm("hypot", part, z.re, z.im)
            values.append(_cast(value, part, storage))
        return Val(self.bind(by_tag(v.tag, values), storage), tuple(types), tag)

    def make_complex(self, args, node):
        """``complex(x)`` and ``complex(x, y)`` of real numbers (and ``complex(z)``): a Python complex."""
        from .loops import Val, _cast, _no

        r = Scalar("complex128", True)
        if len(args) == 1 and is_complex(args[0].dtype):
            return Val(as_pair(args[0].expr, args[0].dtype, r.dtype, _cast), (r,))
        if not 1 <= len(args) <= 2 or any(is_complex(v.dtype) for v in args):
            raise _no("complex() of a complex and another number", node)
        # (an int is made a float correctly rounded, by CPython as by the kernel's conversion)
        parts = [_cast(v.expr, v.dtype, "float64") for v in args]
        im = parts[1] if len(parts) == 2 else sm.shielded(tirx.const(0.0, "float64"), "float64")
        return Val(Pair(parts[0], im), (r,))

    def complex_cast(self, dtype, v, node):
        """``np.complex64(x)``, ``np.complex128(x)`` of a number: its parts in the dtype's floats. numpy
        makes a Python int a float through a Python float first (two roundings for complex64), a
        numpy int directly."""
        from .loops import Val, _cast, _no

        if len(v.types) > 1 and any(t.kind in "iu" for t in v.types):
            raise _no(f"np.{dtype}() of a value that is an int on some iterations only", node)
        expr, src = v.expr, v.dtype
        if any(t.python and t.kind in "iu" for t in v.types):
            expr, src = _cast(expr, src, "float64"), "float64"
        return Val(as_pair(expr, src, dtype, _cast), (Scalar(dtype, False),))

    def complex_part(self, e):
        """``v.real``, ``v.imag`` of a number (a real number's ``imag`` is its type's zero)."""
        from .loop_types import storage_dtype
        from .loops import Val, _cast, _no

        v = self.expr(e.value)
        part_of = lambda x: getattr(x, e.attr)  # noqa: E731
        if is_complex(v.dtype):
            # a sum that is a Python complex first and numpy's after: its part is a Python float or a
            # numpy float, the tag says which (the floats of each type are exact in the part's dtype)
            types, tag = self.result_types(part_of, (v,), f".{e.attr}")
            if len(types) > 1 and any(t.kind != "f" for t in types):
                raise _no(f".{e.attr} gives {' or '.join(map(str, types))} depending on the types the "
                          "variables hold", e)
            part = getattr(v.expr, "re" if e.attr == "real" else "im")
            return Val(_cast(part, part_dtype(v.dtype), storage_dtype(types)), tuple(types), tag)
        r = self.common(part_of, (v,), f".{e.attr}", e)
        if e.attr == "real":
            return Val(_cast(v.expr, v.dtype, r.dtype), (r,), bits=v.bits, span=v.span)
        return Val(sm.shielded(tirx.const(0, r.dtype), r.dtype), (r,), bits=0, span=(0, 0))

    def conjugate(self, e):
        from .loops import Val, _cast, _no

        v = self.expr(e.func.value)
        r = self.common(lambda x: x.conjugate(), (v,), ".conjugate()", e)
        if is_complex(v.dtype):
            return Val(Pair(v.expr.re, -v.expr.im), (r,))
        if r.kind == "b" or any(t.kind == "b" for t in v.types):
            raise _no(".conjugate() of a bool", e)
        return Val(_cast(v.expr, v.dtype, r.dtype), (r,), bits=v.bits, span=v.span)


def is_part(e) -> bool:
    return isinstance(e, gast.Attribute) and e.attr in PARTS and isinstance(e.ctx, gast.Load)
