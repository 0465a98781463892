"""complex_forms: the rounding it measures for each pair of operand types reproduces Python's own
products and quotients, on operands other than those it measured with."""

import itertools
import math
import operator

import numpy as np
import pytest

from astjit.backends.tvm.complex_forms import (
    _fused_product,
    _numpy_quotient,
    _python_quotient,
    _rounded_product,
    product_form,
    quotient_rounded,
)
from astjit.backends.tvm.loop_types import Scalar, result_type

TYPES = [Scalar("complex128", True), Scalar("complex128", False), Scalar("complex64", False),
         Scalar("float64", True), Scalar("float64", False), Scalar("float32", False), Scalar("int64", True),
         Scalar("int64", False), Scalar("int16", False), Scalar("bool", False)]
PAIRS = [(a, b) for a, b in itertools.product(TYPES, TYPES) if "c" in (a.kind, b.kind)]


def values(t: Scalar, rng, n=200):
    out = []
    for k in range(n):
        re, im = rng.uniform(-5, 5, 2) * (1e-160 if k % 4 == 0 else 1.0)
        if t.kind == "b":
            out.append(t.type(k % 2))
        elif t.kind in "iu":
            out.append(t.type(int(rng.integers(-90, 90))))
        elif t.kind == "f":
            out.append(t.type(re))
        else:
            out.append(t.type(complex(re, im)))
    return out


def same(x, y):
    return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))


@pytest.mark.parametrize("left,right", PAIRS, ids=lambda t: str(t))
def test_the_measured_form_gives_pythons_products_and_quotients(left, right):
    rng = np.random.default_rng(5)
    part = "float32" if result_type(operator.mul, (left, right), "*").dtype == "complex64" else "float64"
    form = product_form(left, right)
    assert form in ("rounded", "fused")
    formula = _rounded_product if form == "rounded" else _fused_product
    with np.errstate(all="ignore"):
        for x, y in zip(values(left, rng), values(right, rng)):
            got, want = complex(x * y), formula(x, y, part)
            assert same(got.real, float(want[0])) and same(got.imag, float(want[1])), (x, y, got, want, form)
        assert quotient_rounded(left, right)
        python = result_type(operator.truediv, (left, right), "/").python
        for x, y in zip(values(left, rng), values(right, rng)):
            if complex(y) == 0:
                continue
            got = complex(x / y)
            want = _python_quotient(x, y) if python else _numpy_quotient(x, y, part)
            assert same(got.real, float(want[0])) and same(got.imag, float(want[1])), (x, y, got, want)


def test_a_numpy_float_times_a_python_complex_is_measured_as_it_runs():
    # the measurement follows the machine: fused exactly where numpy's loop gives the fused zero sign
    x, w = np.float64(1e-200), complex(1.0, -1e-200)
    fused_sign = math.copysign(1, (x * w).imag) < 0
    assert product_form(Scalar("float64", False), Scalar("complex128", True)) == ("fused" if fused_sign else "rounded")
