"""Views (basic slicing, reshape, transpose), astype and array creation × dtypes × shapes vs numpy.

Views are checked twice: returned as they are (numpy returns a view of the argument, so must the jitted
function) and fused into arithmetic (the kernel reads through the view's index map).
"""

import numpy as np
import pytest
from differential import assert_compiled, assert_same_as_numpy, jit_unmeasured

from astjit import jit
from astjit.runtime import new_extents

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")

DTYPES = ["float32", "float64", "int32", "int64", "uint32", "bool"]
RNG_VIEWS = np.random.default_rng(11)


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.kind == "f":
        v = (rng.standard_normal(n) * 4).astype(dt)
    elif dt.kind == "i":
        v = rng.integers(-20, 21, n).astype(dt)
    else:
        v = rng.integers(0, 41, n).astype(dt)
    return v.reshape(shape)


def assert_same_sharing(fn, *args):
    """The jitted result shares memory with the first argument exactly when numpy's does."""
    want = fn(*args)
    got = jit(fn)(*args)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    for i, (g, w) in enumerate(zip(got, want)):
        view = np.shares_memory(w, args[0])
        assert np.shares_memory(g, args[0]) == view, \
            f"result {i}: numpy {'returns a view' if view else 'copies'}; the jitted function does not"


# -- basic slicing -----------------------------------------------------------------------------------

def take(a, index):
    return a[index]


def take_and_compute(a, index):
    x = a[index]
    return x * 2 + x


INDICES = {
    1: [np.s_[1:-1], np.s_[-3:], np.s_[::2], np.s_[::-1], np.s_[5:1:-2], np.s_[-6:-1:3], np.s_[None, :],
        np.s_[:, np.newaxis], np.s_[...], np.s_[3], np.s_[-1], np.s_[..., None], np.s_[100:], np.s_[2:2]],
    2: [np.s_[1:, ::2], np.s_[::-1, 1:4], np.s_[:, 1], np.s_[-1], np.s_[1, ::-1], np.s_[None, :, None],
        np.s_[..., -1], np.s_[:, None, :], np.s_[0, 0], np.s_[-1, -2], np.s_[::-2, ::-3], np.s_[1:2, 3:4]],
    3: [np.s_[..., 1:3], np.s_[1, :, ::-2], np.s_[:, None, 1], np.s_[-1, -1, -1], np.s_[:, ::2, np.newaxis, ::3],
        np.s_[1, ...], np.s_[:, -1], np.s_[..., None, 0]],
}
SLICE_CASES = [((16,), i) for i in INDICES[1]] + [((3, 5), i) for i in INDICES[2]] + \
    [((2, 3, 4), i) for i in INDICES[3]]


@pytest.mark.parametrize(("shape", "index"), SLICE_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "bool"])
def test_basic_slicing(dtype, shape, index):
    a = values(dtype, shape)
    assert_same_as_numpy(take, a, index)
    jf = assert_same_as_numpy(take_and_compute, a, index)
    if dtype in ("float32", "int32") and a[index].size:
        assert_compiled(jf)


@pytest.mark.parametrize(("shape", "index"), SLICE_CASES, ids=str)
def test_slices_returned_are_views(shape, index):
    assert_same_sharing(take, values("float64", shape), index)


def literal_slices(a):
    return a[1:-1, ::2] + a[:-2, 1::2], a[::-1, None, -1], a[..., 0] * a[:, -1], a[-1, ...] - 1, a[2, 3]


@pytest.mark.parametrize("dtype", DTYPES)
def test_literal_slices_in_source(dtype):
    jf = assert_same_as_numpy(literal_slices, values(dtype, (4, 6)))
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


def outer_difference(a, b):
    return a[:, None] - b[None, :], a[:, np.newaxis] * b


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint32"])
def test_broadcasting_through_new_axes(dtype):
    jf = assert_same_as_numpy(outer_difference, values(dtype, (7,)), values(dtype, (5,), seed=1))
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


def test_index_errors_match_numpy():
    a = values("float32", (2, 3))
    assert_same_as_numpy(take, a, 5)
    assert_same_as_numpy(take, a, (0, 0, 0))
    assert_same_as_numpy(take_and_compute, a, (1, 7))


def scale_through_view(a):
    x = a[::2]
    x *= 10
    return a


def test_in_place_update_through_a_view_reaches_the_argument():
    assert_same_as_numpy(scale_through_view, values("float32", (9,)))
    assert_same_as_numpy(scale_through_view, values("int32", (4, 3)))


# -- reshape, transpose ------------------------------------------------------------------------------

def reshape(a, shape):
    return a.reshape(shape)


def reshape_and_compute(a, shape):
    return a.reshape(shape) * 3 - 1


def np_reshape(a, shape):
    return np.reshape(a, shape) + 1


RESHAPES = [((16,), (4, 4)), ((16,), (2, -1, 2)), ((3, 5), (5, 3)), ((3, 5), -1), ((3, 5), (15, 1)),
            ((2, 3, 4), (6, 4)), ((2, 3, 4), (4, -1)), ((2, 3, 4), (2, 12)), ((1,), ()), ((), (1, 1)),
            ((7,), (7, 1))]


@pytest.mark.parametrize(("shape", "new_shape"), RESHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "bool"])
def test_reshape(dtype, shape, new_shape):
    a = values(dtype, shape)
    assert_same_as_numpy(reshape, a, new_shape)
    jf = assert_same_as_numpy(reshape_and_compute, a, new_shape)
    assert_same_as_numpy(np_reshape, a, new_shape)
    assert_same_sharing(reshape, a, new_shape)
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


def reshape_transposed(a):
    return a.T.reshape(-1) + 1, a[:, :2].reshape(-1)


def test_reshape_that_copies_and_errors():
    a = values("float32", (3, 4))
    jf = assert_same_as_numpy(reshape_transposed, a)
    assert_same_sharing(reshape_transposed, a)
    assert_compiled(jf)
    assert_same_as_numpy(reshape, values("float32", (2, 3)), 4)            # cannot reshape ... into (4,)
    assert_same_as_numpy(reshape, values("float32", (2, 3)), (-1, -1))


def memory_order_reads(x, w):
    return (x.T.ravel("K") * w + np.ravel(x.T, "A") ** 2 + x[:, ::-1].T.ravel("K") * w[::-1],
            x.T.reshape(-1, order="A") * 1.0, np.reshape(x.T, (x.size,), "A") + w, x.ravel("K") - w,
            x.T.ravel("k") * w, np.ravel(x.T, order="a") - w)            # (numpy takes lower case too)


@pytest.mark.parametrize("layout", ["C", "F", "reversed"])
def test_ravel_and_reshape_in_memory_order_fused_into_arithmetic(layout):
    """Order "K" and "A" read the elements as they lie in memory: ``x.T.ravel("K")`` of a C-ordered
    ``x`` is ``x``'s rows, where a kernel's index map for the view read ``x.T``'s (the product with
    ``w`` took its elements in another order). Several shapes, each on its own specialization."""
    jf = jit_unmeasured(memory_order_reads)
    for shape in [(3, 3), (2, 5), (4, 1), (3, 3)]:
        x = RNG_VIEWS.standard_normal(shape)
        x = np.asfortranarray(x) if layout == "F" else (x[::-1, ::-1].copy()[::-1, ::-1] if layout == "reversed" else x)
        assert_same_as_numpy(memory_order_reads, x, np.arange(x.size) + 1.0, jitted=jf)


def transposes(a):
    return a.T, a.T * 2, np.transpose(a) + a.T, a.transpose() - 1


def transpose_axes(a):
    return a.transpose(1, 0, 2) * 2, np.transpose(a, (2, 0, 1)) + 1, a.transpose((0, 2, 1))[::-1, 1:]


def transposes_reduced(a):
    return (a.T * 2).sum(axis=0), (np.transpose(a) + a.T).max(), (a.transpose() - 1).mean(axis=-1)


def _same_layout(got, want):
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert (g.flags.c_contiguous, g.flags.f_contiguous) == (w.flags.c_contiguous, w.flags.f_contiguous)


@pytest.mark.parametrize("shape", [(), (1,), (7,), (16,), (3, 5), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose(dtype, shape):
    """A transposed result has numpy's (Fortran) memory order: elementwise results of transposes that
    leave the block are made by numpy; feeding a reduction, transposes stay fused in the kernel."""
    a = values(dtype, shape)
    jf = assert_same_as_numpy(transposes, a)
    _same_layout(jf(a), transposes(a))
    if len(shape) == 3:
        assert_same_as_numpy(transpose_axes, a)
    if dtype in ("float32", "int32") and len(shape) < 2:
        assert_compiled(jf)
    if len(shape) >= 1 and dtype != "bool":
        reduced = assert_same_as_numpy(transposes_reduced, a)
        _same_layout(reduced(a), transposes_reduced(a))
        # 2-d and 3-d: numpy adds a transposed operand's float elements in its memory order, which a
        # kernel does not reproduce (backends/tvm/sum_order): those sums run on numpy
        if dtype == "float32" and len(shape) <= 1:
            assert_compiled(reduced)


def transpose_plus(a, b):
    return a.T + b, a @ b.T


def transpose_with(a, axes):
    return a.transpose(axes)


def test_transpose_broadcast_and_errors():
    a = values("float32", (3, 5))
    assert_same_as_numpy(transpose_plus, a, values("float32", (5, 3)))
    assert_same_as_numpy(transpose_plus, a, values("float32", (3,)))          # broadcast (5,3)+(3,) ok; @ raises
    assert_same_sharing(transpose_with, a, (1, 0))
    assert_same_as_numpy(transpose_with, a, (0, 0))                            # repeated axis in transpose
    assert_same_as_numpy(transpose_with, a, (0, 1, 2))                         # axes don't match array


def broadcast(a, shape):
    return np.broadcast_to(a, shape)


def broadcast_and_compute(a, b, shape):
    return np.broadcast_to(a, shape) * b + 1


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_broadcast_to(dtype):
    for shape, target in [((3,), (4, 3)), ((1, 3), (2, 5, 3)), ((4, 1), (4, 6)), ((), (2, 2)), ((5,), (5,))]:
        a = values(dtype, shape, seed=len(target))
        assert_same_sharing(broadcast, a, target)            # a read-only view of the argument, as numpy's
        got = jit(broadcast)(a, target)
        assert not got.flags.writeable and got.shape == target
        if dtype != "bool":
            assert_same_as_numpy(broadcast_and_compute, a, values(dtype, target, seed=1), target)
    assert_same_as_numpy(broadcast, values(dtype, (3,)), (4, 2))              # not broadcastable: ValueError
    if dtype.startswith("float"):
        special = np.array([np.nan, np.inf, -0.0], dtype)
        assert_same_as_numpy(broadcast_and_compute, special, values(dtype, (2, 3), seed=2), (2, 3))


# -- astype --------------------------------------------------------------------------------------------

def cast(a, dtype):
    return a.astype(dtype)


def cast_and_compute(a, dtype):
    return a.astype(dtype) * 2


def cast_literal(a):
    return a.astype(np.int32), a.astype(np.float32) + 1, a.astype(bool), a.astype("float64")


CASTS = [("float32", "int32"), ("float64", "int64"), ("float64", "int32"), ("float32", "float64"),
         ("float64", "float32"), ("int32", "float32"), ("int64", "float32"), ("uint32", "float64"),
         ("int64", "int32"), ("int32", "uint32"), ("uint32", "int32"), ("bool", "float32"), ("int32", "bool"),
         ("float32", "bool"), ("float64", "uint32"), ("float32", "int8"), ("int64", "int8"), ("int32", "int32")]


@pytest.mark.parametrize("shape", [(), (7,), (16,), (3, 5)], ids=str)
@pytest.mark.parametrize(("src", "dst"), CASTS, ids="->".join)
def test_astype(src, dst, shape):
    a = values(src, shape)
    if a.dtype.kind == "f" and a.size > 7:
        a.flat[:7] = [np.nan, -0.0, 2.5, -1.5, 0.5, 255.9, -2.7]
    if a.dtype.kind in "iu" and a.size > 3:
        a.flat[:3] = [np.iinfo(src).max, 300, 0]
    assert_same_as_numpy(cast, a, dst)
    jf = assert_same_as_numpy(cast_and_compute, a, dst)
    if src in ("float32", "int32") and dst in ("int32", "float64", "float32", "bool"):
        assert_compiled(jf)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_astype_out_of_range_floats_as_on_x86(dtype):
    """Undefined in C (numpy-semantics 1.7): NaN, inf and out-of-range floats give INT_MIN on x86."""
    a = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1e19, -1e19, 2.5, -2.5, 300, 1e10, -0.0, 7, 8, 9, 10],
                 dtype=dtype)
    for dst in ("int32", "int64", "bool", "int8", "uint8", "uint32"):
        assert_same_as_numpy(cast, a, dst)
        jf = assert_same_as_numpy(cast_and_compute, a, dst)
        if dst in ("int32", "int64", "bool") and dtype == "float32":
            assert_compiled(jf)


def test_astype_literal_dtypes_and_complex():
    jf = assert_same_as_numpy(cast_literal, values("float32", (3, 5)))
    assert_compiled(jf)
    assert_same_as_numpy(cast_literal, values("int64", (7,)))
    z = values("float64", (5,)) + 1j * values("float64", (5,), seed=1)
    assert_same_as_numpy(cast_literal, z)                                       # ComplexWarning, falls back
    assert_same_as_numpy(cast, values("float32", (4,)), "complex128")


def test_astype_returns_a_copy():
    a = values("float32", (7,))
    assert_same_sharing(cast, a, "float32")
    assert_same_sharing(cast, a, "float64")


# -- creation --------------------------------------------------------------------------------------------

def zeros_plus(a):
    return np.zeros(a.shape) + a, np.zeros(a.shape, dtype=np.int32) + a


def ones_times(a):
    return np.ones(a.shape, dtype=np.float32) * a, np.ones(a.shape, dtype=bool) & (a > 0)


def full_minus(a):
    return np.full(a.shape, 7, dtype=np.uint32) - a, np.full(a.shape, 2.5) - a, np.full(a.shape, -1) + a


def like_forms(a):
    return np.zeros_like(a) + 1, np.ones_like(a, dtype=np.float32) + a, np.full_like(a, 3) * a


CREATIONS = {"zeros": zeros_plus, "ones": ones_times, "full": full_minus, "like": like_forms}


@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CREATIONS)
def test_creation_fused_with_arithmetic(name, dtype, shape):
    a = values(dtype, shape)
    jf = assert_same_as_numpy(CREATIONS[name], a)
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


def make_arrays():
    return (np.zeros((3, 4)), np.ones(5, dtype=np.int32), np.full((2, 3), 7, dtype=np.uint32),
            np.full(4, np.nan, dtype=np.float32), np.ones((2, 2), dtype=bool), np.zeros(3, dtype=np.int64),
            np.full((), 2.5), np.full((2, 2), True), np.zeros((0, 3), dtype=np.float32))


def test_creation_without_array_inputs():
    assert_same_as_numpy(make_arrays)


def make_sized(n, value):
    return np.full((n, 2), value, dtype=np.float32), np.zeros(n, dtype=np.int32), np.ones((2, n))


def test_creation_with_sizes_from_arguments():
    jf = assert_same_as_numpy(make_sized, 3, 1.5)
    assert_same_as_numpy(make_sized, 5, -2.0, jitted=jf)
    assert_same_as_numpy(make_sized, 0, 1.0, jitted=jf)
    assert_same_as_numpy(make_sized, -1, 1.0)                            # negative dimensions: ValueError


def zeros_plus_sum(a, shape):
    return np.zeros(shape) + a.sum()


def full_like_times(a, shape):
    return np.ones_like(a, shape=shape) * a[0]


def test_a_shape_numpy_refuses_raises_its_error_and_is_never_truncated(monkeypatch):
    """numpy takes a shape's extents through ``__index__``: a float, even a whole one, or a bool raises
    TypeError (``int()`` took ``(2.7, 3)`` as ``(2, 3)``); a numpy integer or an array of ints is a shape.
    (Unmeasured, each new shape compiled at once: every call reaches the specialization's typing.)"""
    monkeypatch.setattr(new_extents, "EXTENTS_AT_ONCE", 100)
    a = np.arange(1.0, 4.0)
    for fn in (zeros_plus_sum, full_like_times):
        jf = jit_unmeasured(fn)
        for shape in [(2, 3), (2.0, 3.0), 4, (2.7, 3), True, (True, 2), 4.0, np.float64(2), (np.int8(2), 3),
                      np.array([2, 3]), (2, -1), (2, 3), (np.True_,), [3]]:
            assert_same_as_numpy(fn, a, shape, jitted=jf)


def full_uint8(value):
    return np.full(3, value, dtype=np.uint8)


def test_full_with_a_python_int_that_does_not_fit():
    assert_same_as_numpy(full_uint8, 255)
    assert_same_as_numpy(full_uint8, 300)                                # OverflowError like numpy
    assert_same_as_numpy(full_uint8, -1)


def make_empty(n):
    return np.empty((n, 3), dtype=np.float32), np.empty(n), np.empty((2, n), dtype=np.int32)


def test_empty_gives_shape_and_dtype():
    """np.empty's values are unspecified: only the shapes and dtypes are compared."""
    jf = jit(make_empty)
    for n in (0, 1, 4):
        got, want = jf(n), make_empty(n)
        for g, w in zip(got, want):
            assert type(g) is np.ndarray
            assert g.dtype == w.dtype and g.shape == w.shape
            assert g.flags.writeable and g.flags.c_contiguous


def empty_like_filled(a):
    e = np.empty_like(a)
    e[...] = 2.0
    return np.empty_like(a, dtype=np.float32).shape, e * a + np.zeros_like(a)


def test_empty_like_compiles():
    jf = jit(empty_like_filled)
    for n in (3, 8, 3):
        assert_same_as_numpy(empty_like_filled, np.linspace(0, 1, n), jitted=jf)
    entry = jf.fragments[0].entries[0]
    nodes = [n for n in entry.ctx.graph.nodes if n.op == "np.empty_like"]
    assert nodes and all(n in entry.ctx.types for n in nodes) and entry.mode != "python", entry.note
