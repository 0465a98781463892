"""How this interpreter and this numpy round a complex product or quotient, measured once per pair of
operand types, so that a loop kernel computes it the same way or leaves the loop to Python.

Both compute ``(a + bi)(c + di)`` as ``(ac - bd, ad + bc)``, but the C compiler may fuse a product
with the addition after it (one rounding: an FMA) where the CPU has the instruction. numpy's scalar
arithmetic is compiled for the baseline CPU and rounds each product; its complex multiply loop, which
a numpy real meets whenever its type cannot hold the other operand (``np.float64 * complex``,
``np.float32 * complex``), is compiled for AVX-512 too and fuses the first product of each part
there: ``np.float64(1e-200) * complex(1.0, -1e-200)`` has the imaginary part -0.0 where rounded
products give 0.0. A CPython built for a CPU with FMA in its baseline (aarch64) may fuse its own.

``product_form`` answers "rounded" or "fused" (the first product of each part fused:
``fma(ar, br, -(ai * bi))`` and ``fma(ar, bi, ai * br)``), or None where the operation matches
neither; ``quotient_rounded`` whether a quotient is the kernel's rounded formula (CPython's
``_Py_c_quot`` or numpy's scalar division). Each runs the operation itself on random operands and on
operands whose products underflow (the forms differ there in the sign of a zero), and compares it with
the formulas computed exactly."""

import functools
import math
import operator
import random
from fractions import Fraction

import numpy as np

from .loop_types import Scalar, result_type

TINY = {"float64": 1e-200, "float32": 1e-30}     # products of two underflow to a signed zero


def _value(t: Scalar, re, im=0.0):
    """A value of type ``t`` with these parts (a real type takes ``re`` alone)."""
    return t.type(complex(re, im)) if t.kind == "c" else t.type(re)


def _parts(z):
    z = complex(z)
    return z.real, z.imag


def _same(x, y) -> bool:
    return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))


def _round(exact: Fraction, part) -> float:
    """``exact`` (nonzero) correctly rounded to ``part`` (ties to even), a zero keeping its sign."""
    r = float(exact)
    if part == "float32":
        c = np.float32(r)
        candidates = [c, np.nextafter(c, np.float32(np.inf)), np.nextafter(c, np.float32(-np.inf))]
        finite = [x for x in candidates if np.isfinite(x)]
        best = min(abs(Fraction(float(x)) - exact) for x in finite)
        nearest = [x for x in finite if abs(Fraction(float(x)) - exact) == best]
        r = float(min(nearest, key=lambda x: int(np.array(x).view(np.int32)) & 1))
    return math.copysign(r, exact) if r == 0 else r


def _fma(a, b, c, part) -> float:
    """``a * b + c`` rounded once to ``part``, as a fused multiply-add gives it (finite operands)."""
    a, b, c = float(a), float(b), float(c)
    product = Fraction(a) * Fraction(b)
    total = product + Fraction(c)
    if total == 0:      # (IEEE: x + (-x) is +0.0; a zero product's sign, then the sum of two zeros)
        return math.copysign(0.0, a) * math.copysign(0.0, b) + c if product == 0 else 0.0
    return _round(total, part)


def _operand_parts(z, part):
    f = getattr(np, part)
    return [f(v) for v in _parts(z)]


def _rounded_product(x, y, part):
    (ar, ai), (br, bi) = _operand_parts(x, part), _operand_parts(y, part)
    return ar * br - ai * bi, ar * bi + ai * br


def _fused_product(x, y, part):
    (ar, ai), (br, bi) = _operand_parts(x, part), _operand_parts(y, part)
    return _fma(ar, br, -(ai * bi), part), _fma(ar, bi, ai * br, part)


def _result_part(left: Scalar, right: Scalar, fn) -> str:
    """The float dtype of the parts of ``fn(left, right)``'s complex result."""
    return "float32" if result_type(fn, (left, right), "complex arithmetic").dtype == "complex64" else "float64"


def _operands(left: Scalar, right: Scalar, part):
    """Pairs of values of these types: random ones, then ones whose products underflow."""
    rng = random.Random(7)

    def draw(t):
        if t.kind == "b":
            return True
        if t.kind in "iu":
            return rng.randint(1, 100)
        return rng.uniform(-3.0, 3.0)

    for _ in range(64):
        yield _value(left, draw(left), draw(left)), _value(right, draw(right), draw(right))
    tiny = TINY[part]
    for a in (tiny, -tiny, 1.0, -1.0):
        for b in (tiny, -tiny, 1.0, -1.0):
            yield _value(left, a, b), _value(right, -b, a)
            yield _value(left, a, b), _value(right, b, -a)


def _matches(fn, pairs, formula) -> bool:
    for x, y in pairs:
        try:
            got = fn(x, y)
        except ZeroDivisionError:
            continue
        if not all(_same(float(g), float(w)) for g, w in zip(_parts(got), formula(x, y))):
            return False
    return True


@functools.cache
def product_form(left: Scalar, right: Scalar) -> str | None:
    """How ``left * right`` (a complex result) rounds: "rounded", "fused" or None (neither)."""
    part = _result_part(left, right, operator.mul)
    pairs = list(_operands(left, right, part))
    with np.errstate(all="ignore"):
        for form, formula in (("rounded", _rounded_product), ("fused", _fused_product)):
            if _matches(operator.mul, pairs, lambda x, y, formula=formula: formula(x, y, part)):
                return form
    return None


def _numpy_quotient(x, y, part):
    (ar, ai), (br, bi) = _operand_parts(x, part), _operand_parts(y, part)
    one = getattr(np, part)(1.0)
    if abs(br) >= abs(bi):
        if br == 0 and bi == 0:
            return ar / abs(br), ai / abs(br)
        rat = bi / br
        scl = one / (br + bi * rat)
        return (ar + ai * rat) * scl, (ai - ar * rat) * scl
    rat = br / bi
    scl = one / (bi + br * rat)
    return (ar * rat + ai) * scl, (ai * rat - ar) * scl


def _python_quotient(x, y):
    (ar, ai), (br, bi) = _parts(x), _parts(y)
    if abs(br) >= abs(bi):
        rat = bi / br
        denom = br + bi * rat
        return (ar + ai * rat) / denom, (ai - ar * rat) / denom
    rat = br / bi
    denom = br * rat + bi
    return (ar * rat + ai) / denom, (ai * rat - ar) / denom


@functools.cache
def quotient_rounded(left: Scalar, right: Scalar) -> bool:
    """Whether ``left / right`` (a complex result) is the kernel's rounded quotient: CPython's for a
    Python complex result, numpy's scalar division for a numpy one."""
    result = result_type(operator.truediv, (left, right), "complex division")
    part = _result_part(left, right, operator.truediv)
    formula = _python_quotient if result.python else (lambda x, y: _numpy_quotient(x, y, part))
    with np.errstate(all="ignore"):
        return _matches(operator.truediv, list(_operands(left, right, part)), formula)
