"""Dot products of rows inside compiled loops (backends/tvm/loop_dots.py), against plain Python: float
rows call numpy's own BLAS function with numpy's pointers and strides, so results agree bit for bit for
every length (long ones split among BLAS's threads), stride and special value."""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops, same  # noqa: F401 - a fixture
from loop_programs import cholesky, gauss_seidel, lower_solve

from astjit import jit
from astjit.backends.tvm import blas

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(29)
# around OpenBLAS's unrolling (16 elements a step on AVX2, 4 on strided vectors) and its threading (10,000)
LENGTHS = (0, 1, 2, 3, 7, 15, 16, 17, 33, 100, 1000, 20_011)


def rows_dot(a, x, out):
    for i in range(a.shape[0]):
        out[i] = np.dot(a[i], x)
    return out


def rows_method(a, x, out):
    for i in range(a.shape[0]):
        out[i] = a[i].dot(x) * 0.5
    return out


def rows_matmul(a, x, out):
    for i in range(a.shape[0]):
        out[i] = a[i] @ x + 1.0
    return out


def columns(a, x):
    total = 0.0
    for j in range(a.shape[1]):
        total += np.dot(a[::2, j], x[::2])       # strided by two rows, and by two elements
    return total


def prefix_dots(a, x, out):
    for i in range(a.shape[0]):
        out[i] = i
        out[i] = np.dot(a[i, :i + 1], x)         # a length that stops matching x: numpy's ValueError
    return out


def spd(n):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_dots_equal_numpys_bit_for_bit(dtype):
    for fn in (rows_dot, rows_method, rows_matmul):
        check(fn, [(rng.standard_normal((3, n)).astype(dtype), rng.standard_normal(n).astype(dtype), np.zeros(3, dtype))
                   for n in LENGTHS])
    check(columns, [(rng.standard_normal((2 * n + 1, 5)).astype(dtype), rng.standard_normal(2 * n + 1).astype(dtype))
                    for n in LENGTHS])
    special = np.array([[np.inf, 1.0, 2.0], [np.nan, 0.0, 1.0], [-np.inf, np.inf, 0.0]], dtype)
    check(rows_dot, [(special, np.array([1.0, -1.0, 2.0], dtype), np.zeros(3, dtype))])


def pairwise_distances(x, out):
    for i in range(x.shape[0]):
        for j in range(i + 1, x.shape[0]):
            out[i, j] = np.linalg.norm(x[i] - x[j])
    return out


def row_and_column_norms(a, out):
    for i in range(a.shape[0]):
        out[i] = np.linalg.norm(a[i]) - np.linalg.norm(a[:, i % a.shape[1]]) * 0.5   # a strided column
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_norms_of_rows_are_numpys_bit_for_bit(dtype):
    """numpy's norm is ``sqrt(x.dot(x))`` of the row raveled (a strided view copied first): the same
    BLAS call on the same contiguous values, then a correctly rounded square root."""
    calls = [(rng.standard_normal((n, 3 + n % 5)).astype(dtype), np.zeros((n, n), dtype)) for n in (1, 2, 7, 30)]
    calls.append((np.array([[np.inf, 0.0], [1.0, np.nan], [1e200, 1e-200], [-0.0, 0.0]], dtype), np.zeros((4, 4), dtype)))
    check(pairwise_distances, calls)
    check(row_and_column_norms, [(rng.standard_normal((n, 4)).astype(dtype) * 10.0 ** (n % 30), np.zeros(n, dtype))
                                 for n in LENGTHS if n])


def long_row_norms(a, out):
    for i in range(a.shape[0]):
        out[i] = np.linalg.norm(a[i]) + np.linalg.norm(a[i, 1:]) * 0.5 - np.linalg.norm(a[i, ::2]) * 0.25
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_norms_of_long_rows_read_in_place_or_copied_are_numpys_bit_for_bit(dtype):
    """A row whose elements are adjacent goes to BLAS as it lies (numpy's ravel gives the view itself;
    8 rows of 50,000 floats copied first ran 0.18x numpy), a strided one as a contiguous copy, in C
    and Fortran order, at lengths around BLAS's unrolling and threading."""
    calls = []
    for n in LENGTHS[1:]:
        a = rng.standard_normal((3, n)).astype(dtype) * 10.0 ** (n % 7)
        calls += [(a, np.zeros(3, dtype)), (np.asfortranarray(a), np.zeros(3, dtype)), (a[:, ::-1], np.zeros(3, dtype))]
    check(long_row_norms, calls)


def test_norms_numpy_computes_otherwise_stay_python():
    jitted = check(int_norms, [(np.arange(12).reshape(3, 4), np.zeros(3))], compiled=False)
    assert "converts other types to float64 first" in str(jitted.explain())


def int_norms(a, out):
    for i in range(a.shape[0]):
        out[i] = np.linalg.norm(a[i])
    return out


def test_a_dot_of_one_element_keeps_numpys_sign_of_zero():
    """``np.dot`` of one element is the product (-0.0 stays), ``@`` adds it to 0.0 (+0.0)."""
    a, x = np.full((3, 1), -0.0), np.ones(1)
    jitted = check(rows_dot, [(a, x, np.zeros(3))])
    assert np.signbit(jitted(a, x, np.zeros(3))).all()
    check(rows_method, [(a, x, np.zeros(3))])
    check(rows_matmul, [(a, x, np.zeros(3))])


def test_int64_dots_add_one_product_at_a_time_wrapping():
    big = rng.integers(-2**40, 2**40, (4, 9))
    check(rows_dot, [(big, big[0].copy(), np.zeros(4, np.int64)), (big[:, :0], big[0, :0].copy(),
                                                                   np.zeros(4, np.int64))])


def test_factorizations_and_sweeps_agree_with_python():
    sizes = (1, 2, 5, 40, 130)
    check(cholesky, [(spd(n) * scale,) for n in sizes for scale in (1.0, 3.0)])
    lowers = [np.tril(rng.standard_normal((n, n))) + n * np.eye(n) for n in sizes]
    check(lower_solve, [(lower, rng.standard_normal(len(lower)), np.zeros(len(lower))) for lower in lowers])
    check(lower_solve, [(lower.astype(np.float32), np.ones(len(lower), np.float32), np.zeros(len(lower), np.float32))
                        for lower in lowers])
    check(gauss_seidel, [(spd(n), rng.standard_normal(n), np.zeros(n), sweeps) for n in sizes for sweeps in (1, 3)])


def test_arrays_numpy_would_copy_run_the_loop_as_python():
    """Reversed, broadcast or misaligned arrays: numpy copies them before BLAS (or adds one product at a
    time), so the kernel bails before the loop starts and the loop runs as written. (Called with the
    views themselves: ``check`` would pass copies.)"""
    a, x = rng.standard_normal((4, 40)), rng.standard_normal(40)
    memory = np.zeros(4 * 640 + 1, np.uint8)         # rows of 40 elements 16 bytes apart, at an odd address
    misaligned = np.ndarray((4, 40), np.float64, buffer=memory.data, offset=1, strides=(640, 16))
    misaligned[...] = a
    layouts = [(a, x), (a[::-1], x), (a, x[::-1]), (a, np.broadcast_to(x[1:2], (40,))), (np.broadcast_to(x, (4, 40)), x),
               (np.asfortranarray(a), x), (a[:, ::-1], x), (misaligned, x), (a, x)]
    for fn in (rows_dot, rows_matmul):
        jitted = jit(fn)
        for rows, vector in layouts:
            assert same(jitted(rows, vector, np.zeros(4)), fn(rows, vector, np.zeros(4))), (fn.__name__, rows.strides)
        loops = [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
        assert loops and all(mode == "tvm" for mode in loops), loops


def test_a_length_mismatch_raises_numpys_error_after_the_earlier_effects():
    calls = [(rng.standard_normal((5, 3)), rng.standard_normal(n), np.zeros(5)) for n in (2, 3, 1)]
    check(prefix_dots, calls)
    jitted = jit(rows_matmul)
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        jitted(np.ones((3, 4)), np.ones(5), np.zeros(3))


def matrix_vector(a, x, out):
    for i in range(a.shape[0]):
        out[i] = (a @ x)[i]
    return out


def reversed_step(a, x, out):
    for i in range(a.shape[0]):
        out[i] = np.dot(a[i, ::-1], x)
    return out


def test_dots_that_stay_python_say_why():
    a, x = rng.standard_normal((3, 4)), rng.standard_normal(4)
    cases = [(rows_dot, (a.astype(np.float32), x, np.zeros(3)), "a dot product of float32 and float64"),
             (reversed_step, (a, x, np.zeros(3)), "step is not a positive constant"),
             (matrix_vector, (a, x, np.zeros(3)), "")]
    for fn, args, reason in cases:
        jitted = check(fn, [args, tuple(np.copy(v) * 2 for v in args)], compiled=False)
        assert reason in str(jitted.explain())


def test_numpys_blas_dot_is_found_and_checked():
    """numpy's wheel bundles OpenBLAS: its dot functions are found and gave np.dot's bits."""
    if not blas._loaded_libraries():
        pytest.skip("this numpy uses no BLAS library loaded as its own file")
    for dtype in ("float64", "float32"):
        found = blas.dot_function(dtype)
        assert found is not None and found.library in blas._loaded_libraries()


def matmul_rows(a, b, out):
    for i in range(a.shape[0]):
        out[i] = a[i] @ b[i]
    return out


def test_each_dot_is_one_call_of_blas_per_position():
    """``x @ y`` of rows calls BLAS once per position: with the checks run first, a first pass called
    it at every position too (rows of 20,000 floats took 1.6x plain Python's time)."""
    calls = [(rng.random((n, m)), rng.random((n, m)), np.zeros(n)) for n, m in ((20, 3000), (3, 40), (7, 1))]
    jitted = check(matmul_rows, calls)
    tir = jitted.fragments[0].entries[0].segments[0].compiled.artifacts["tir"]()
    assert tir.count("ddot") <= 2, tir      # (one in each of two loops the kernel picks between)
