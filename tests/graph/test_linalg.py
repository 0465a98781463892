"""matmul / @ / dot × dtypes × shapes vs numpy: products run on numpy's BLAS, the arithmetic around them
in kernels (mixed specializations)."""

import numpy as np
import pytest
from differential import assert_same_as_numpy, modes

from astjit.graph.ops import OPS

DTYPES = ["float32", "float64", "int32", "int64", "uint32", "bool"]


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.integers(-4, 5, int(np.prod(shape, dtype=np.int64)))
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return (v > 0).reshape(shape)
    if dt.kind == "u":
        v = np.abs(v)
    return v.astype(dt).reshape(shape) + (dt.type(0.5) if dt.kind == "f" else 0)


def matmul_op(a, b):
    return a @ b


def np_matmul(a, b):
    return np.matmul(a, b)


def np_dot(a, b):
    return np.dot(a, b)


def dot_method(a, b):
    return a.dot(b)


PRODUCTS = {"@": matmul_op, "np.matmul": np_matmul, "np.dot": np_dot, "dot": dot_method}
SHAPE_PAIRS = [((3, 4), (4, 5)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((1, 1), (1, 7)),
               ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 2))]


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", PRODUCTS)
def test_matrix_products(name, dtype, shapes):
    a, b = values(dtype, shapes[0]), values(dtype, shapes[1], seed=1)
    assert_same_as_numpy(PRODUCTS[name], a, b)         # np.dot of 3-d arrays: numpy's own result too


@pytest.mark.parametrize("dtypes", [("int32", "float32"), ("float32", "float64"), ("bool", "int32"),
                                    ("uint32", "int64")], ids="-".join)
def test_matrix_products_mixed_dtypes(dtypes):
    a, b = values(dtypes[0], (3, 4)), values(dtypes[1], (4, 2), seed=1)
    for fn in PRODUCTS.values():
        assert_same_as_numpy(fn, a, b)


def affine(x, w, b):
    return np.tanh(x @ w + b) * 2 - 1, (x @ w).sum(axis=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_arithmetic_around_a_product_is_compiled(dtype):
    x, w, b = values(dtype, (6, 4)), values(dtype, (4, 3), seed=1), values(dtype, (3,), seed=2)
    jf = assert_same_as_numpy(affine, x, w, b)
    if dtype == "float32":
        assert modes(jf) == {"mixed"}, jf.explain()
        for frag in jf.fragments:
            for entry in frag.entries:
                left = {n.op for n in entry.reasons if OPS[n.op].kind in ("elementwise", "reduction")}
                assert not left, left


def test_product_errors_match_numpy():
    a = values("float32", (2, 3))
    assert_same_as_numpy(matmul_op, a, a)            # matmul: Input operand 1 has a mismatch ...
    assert_same_as_numpy(np_dot, a, a)               # shapes (2,3) and (2,3) not aligned ...
    assert_same_as_numpy(matmul_op, a, 2.0)          # scalar operands are not allowed
    assert_same_as_numpy(np_dot, a, 2.0)             # np.dot with a scalar multiplies
    assert_same_as_numpy(np_dot, np.float32(3), a)
