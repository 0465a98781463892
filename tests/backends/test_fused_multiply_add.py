"""Kernels never fuse a float product with a sum (backends/tvm/runtime): numpy rounds ``a * b + c``
twice. A kernel where no fusion can form is compiled with every host feature (AVX-512 where the CPU
has it, which LLVM ties to FMA); one where it can, without FMA. Both give numpy's bits."""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import jit
from astjit.backends.tvm.runtime import (
    host_target,
    host_target_with_every_feature,
    may_fuse_multiply_add,
    tvm_module,
)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

rng = np.random.default_rng(5)
tvm = tvm_module()
from tvm.script import tirx as T  # noqa: E402 - after astjit imported TVM its own way


@T.prim_func
def product_and_sum(a: T.Buffer((8,), "float64"), b: T.Buffer((8,), "float64")):
    for i in range(8):
        b[i] = a[i] * 3.0 + 1.0


@T.prim_func
def squared_by_pow_and_sum(a: T.Buffer((8,), "float64"), b: T.Buffer((8,), "float64")):
    for i in range(8):
        b[i] = T.call_pure_extern("float64", "pow", a[i], 2.0) + a[i]


@T.prim_func
def expanded_tanh(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    for i in range(8):
        b[i] = T.tanh(a[i])


@T.prim_func
def int_product_and_sum(a: T.Buffer((8,), "int64"), b: T.Buffer((8,), "int64")):
    for i in range(8):
        b[i] = a[i] * 3 + 1


@T.prim_func
def conversions(a: T.Buffer((8,), "float64"), b: T.Buffer((8,), "int64")):
    for i in range(8):
        b[i] = T.Cast("int64", T.nearbyint(a[i] / 2.0))


@T.prim_func
def sums_only(a: T.Buffer((8,), "float64"), b: T.Buffer((8,), "float64")):
    for i in range(8):
        b[i] = a[i] + a[i] - 1.0          # LLVM makes a[i] + a[i] a product by 2.0


@T.prim_func
def halved_and_summed(a: T.Buffer((8,), "float64"), b: T.Buffer((8,), "float64")):
    for i in range(8):
        b[i] = a[i] / 2.0 + 1.0           # LLVM makes the division a product by 0.5


@T.prim_func
def one_sum(a: T.Buffer((8,), "float64"), b: T.Buffer((8,), "float64")):
    for i in range(8):
        b[i] = a[i] - 1.0


@T.prim_func
def quotient_alone(a: T.Buffer((8,), "float64"), b: T.Buffer((8,), "float64")):
    for i in range(8):
        b[i] = 1.0 / a[i]


@pytest.mark.parametrize("func, fuses", [
    (product_and_sum, True), (squared_by_pow_and_sum, True),
    (expanded_tanh, True), (sums_only, True), (halved_and_summed, True), (int_product_and_sum, False),
    (conversions, False), (one_sum, False), (quotient_alone, False),
])
def test_which_kernels_may_fuse(func, fuses):
    assert may_fuse_multiply_add(tvm.IRModule({"main": func})) is fuses


def test_the_two_targets_differ_only_in_fma():
    assert "-fma" in str(host_target()) and "-fma" not in str(host_target_with_every_feature())


def affine(x, y, z):
    return x * y + z


def rounded(x, out):
    for i in range(x.shape[0]):
        out[i] = round(x[i])
    return out


def horner(c, x, out):
    for i in range(x.shape[0]):
        acc = 0.0
        for k in range(c.shape[0]):
            acc = acc * x[i] + c[k]
        out[i] = acc
    return out


@pytest.mark.usefixtures("kernels_for_tiny_loops")
def test_products_and_sums_round_twice_as_numpys():
    """Values where a fused multiply-add gives other bits: 0.1 * 10.0 - 1.0 is 0.0 rounded twice,
    5.55e-17 fused."""
    x = np.full(1000, 0.1)
    y = np.full(1000, 10.0)
    z = np.full(1000, -1.0)
    got = jit(affine)(x, y, z)
    assert np.array_equal(got, x * y + z) and not got.any()
    c = rng.standard_normal(7)
    xs = rng.standard_normal(3000)
    check(horner, [(c, xs, np.zeros(3000)), (c[:3], xs[:50], np.zeros(50))])


def halved_plus(x, y):
    return x / 2.0 + y


def row_means_plus(x, y):
    return x.mean(axis=1) + y


def doubled_plus(x, y, out):
    for i in range(x.shape[0]):
        out[i] = (x[i] + x[i]) + y[i]
    return out


@pytest.mark.usefixtures("kernels_for_tiny_loops")
def test_products_llvm_makes_of_quotients_and_sums_round_twice():
    """``5e-324 / 2`` rounds to 0.0 before the sum (fused: -5e-324); ``1e308 + 1e308`` overflows
    before the difference (fused: 1e308)."""
    tiny, n = 5e-324, 1000
    x, y = np.full(n, tiny), np.full(n, -tiny)
    for fn, args in [(halved_plus, (x, y)), (row_means_plus, (np.tile([tiny, 0.0], (n, 1)), y))]:
        want, got = fn(*args), jit(fn)(*args)
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want)), fn.__name__
    check(doubled_plus, [(np.full(n, 1e308), np.full(n, -1e308), np.zeros(n)),
                         (rng.standard_normal(50), rng.standard_normal(50), np.zeros(50))])


@pytest.mark.usefixtures("kernels_for_tiny_loops")
def test_conversions_without_products_are_numpys():
    values = [rng.standard_normal(n) * 1e6 for n in (1, 7, 5000)] + [np.array([0.5, 1.5, 2.5, -0.5, -2.5, 1e15 + 0.5])]
    check(rounded, [(v, np.zeros(len(v), np.int64)) for v in values])
