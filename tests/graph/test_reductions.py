"""sum / mean / max / min / prod × dtypes × shapes × axes, jitted vs plain numpy.

Float inputs of the axis tests are signed powers of two and their small sums, so every summation order
gives the exact result and values compare without tolerance; accuracy against numpy's pairwise sum is
checked separately on random data (the documented tolerance) and on float32 arrays of millions of
elements (1e-6 relative).
"""

import numpy as np
import pytest
from differential import assert_compiled, assert_same_as_numpy

from astjit import jit

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = ["float32", "float64", "int32", "int64", "uint32", "bool"]
SHAPES = [(), (1,), (7,), (16,), (3, 5), (2, 3, 4)]


def exact_values(dtype, shape, seed=0):
    """Data whose sums, means and products do not depend on the order of evaluation."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    dt = np.dtype(dtype)
    if dt == np.bool_:
        v = rng.integers(0, 2, n).astype(bool)
        if n > 2:
            v[1] = True                                  # max of bool: at least one True somewhere
    elif dt.kind == "f":
        v = rng.choice(np.array([-4, -2, -1, -0.5, -0.25, 0.25, 0.5, 1, 2, 4]), n).astype(dt)
    elif dt.kind == "i":
        v = rng.integers(-50, 51, n).astype(dt)
    else:
        v = rng.integers(0, 101, n).astype(dt)
    return v.reshape(shape)


def r_sum(a):
    return a.sum()


def r_mean(a):
    return a.mean()


def r_max(a):
    return a.max()


def r_min(a):
    return a.min()


def r_prod(a):
    return a.prod()


def np_max(a):
    return np.max(a)


def np_functions(a):
    return np.sum(a), np.mean(a), np.max(a), np.min(a), np.prod(a), np.amax(a), np.amin(a)


FULL = {"sum": r_sum, "mean": r_mean, "max": r_max, "min": r_min, "prod": r_prod}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "bool"])
@pytest.mark.parametrize("name", FULL)
def test_full_reduction(name, dtype, shape):
    """Reduce everything: a numpy scalar of numpy's result dtype (int sums to int64, uint to uint64)."""
    jf = assert_same_as_numpy(FULL[name], exact_values(dtype, shape))
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_full_reduction_function_forms(dtype, shape):
    jf = assert_same_as_numpy(np_functions, exact_values(dtype, shape))
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


def all_reductions(a, axis, keepdims):
    return (a.sum(axis=axis, keepdims=keepdims), np.mean(a, axis=axis, keepdims=keepdims),
            a.max(axis=axis, keepdims=keepdims), np.min(a, axis=axis, keepdims=keepdims),
            np.prod(a, axis=axis, keepdims=keepdims))


AXIS_CASES = [
    ((7,), -1, True), ((7,), None, True),
    ((3, 5), 0, False), ((3, 5), 1, False), ((3, 5), (1, 0), True),
    ((2, 3, 4), 0, False), ((2, 3, 4), 1, True), ((2, 3, 4), -1, False), ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), (-1, 0), True), ((2, 3, 4), (), False), ((), (), False),
]


@pytest.mark.parametrize(("shape", "axis", "keepdims"), AXIS_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "bool"])
def test_reduction_axes(dtype, shape, axis, keepdims):
    """The five reductions in one function (one kernel): result[k] names the failing one."""
    jf = assert_same_as_numpy(all_reductions, exact_values(dtype, shape), axis, keepdims)
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


def sum_axis_literal(a):
    return a.sum(axis=1), a.max(axis=-1, keepdims=True), np.mean(a, axis=(0, 2)), a.min(0), a.prod(axis=2)


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_reduction_axes_as_literals(dtype):
    jf = assert_same_as_numpy(sum_axis_literal, exact_values(dtype, (2, 3, 4)))
    assert_compiled(jf)


def reduce_expression(a, b):
    return (a * b + 1).sum(axis=0), (a - b).max(), np.abs(a).mean(axis=-1)


@pytest.mark.parametrize("shapes", [((3, 5), (3, 5)), ((3, 5), (5,)), ((4, 1), (1, 6))], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32"])
def test_reduction_of_fused_broadcast_expression(dtype, shapes):
    a, b = exact_values(dtype, shapes[0]), exact_values(dtype, shapes[1], seed=1)
    jf = assert_same_as_numpy(reduce_expression, a, b)
    if dtype in ("float32", "int32"):
        assert_compiled(jf)


# -- accuracy and special values ----------------------------------------------------------------------

def sum_and_mean(a):
    return a.sum(), a.mean(), a.sum(axis=-1), a.mean(axis=0)


@pytest.mark.parametrize("shape", [(7,), (129,), (3, 100), (40, 9)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_sum_of_random_data_within_documented_tolerance(dtype, shape):
    a = np.random.default_rng(3).standard_normal(shape).astype(dtype) + 1
    jf = assert_same_as_numpy(sum_and_mean, a)
    if dtype == "float32":
        assert_compiled(jf)


def big_sums(a):
    return a.sum(), a.mean(), (a * a).sum()


@pytest.mark.parametrize("n", [2_000_003, 4_000_000])
def test_float32_sum_of_millions_of_elements(n):
    """Within 1e-6 relative of numpy's pairwise sum (a naive float32 loop is off by ~1e-4)."""
    rng = np.random.default_rng(n)
    a = rng.random(n, dtype=np.float32)
    jf = assert_same_as_numpy(big_sums, a, rtol=1e-6)
    assert_compiled(jf)
    b = rng.standard_normal(n).astype(np.float32)
    assert_same_as_numpy(big_sums, b, rtol=1e-6, jitted=jf)
    ones = np.ones(n, np.float32)
    assert jf(ones)[0] == np.float32(n)                  # exact: counts past 2**24 would stall naively


def test_float32_sum_of_2_25_ones_is_exact():
    a = np.ones(2**25, np.float32)
    jf = jit(r_sum)
    got = jf(a)
    assert type(got) is np.float32 and got == a.sum() == 2**25       # a naive float32 loop stops at 2**24
    assert_compiled(jf)


def row_sums(a):
    return a.sum(axis=1), a.mean(axis=1)


def column_sums(a):
    return a.sum(axis=0), a.mean(axis=0)


def test_float32_axis_sums_of_a_big_matrix():
    a = np.random.default_rng(7).random((3000, 700), dtype=np.float32)
    jf = assert_same_as_numpy(row_sums, a, rtol=1e-6)       # numpy: pairwise per row
    assert_compiled(jf)
    # numpy adds the rows of a C array one after another for axis=0, in float32 (its column sums are off
    # the exact sum by up to ~3e-6 here): the kernel adds them so, and gives numpy's bits
    jc = jit(column_sums, backend="tvm")     # (the kernel, whatever a measurement would choose)
    got = jc(a)
    want = column_sums(a)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w)
    assert_compiled(jc)


def nan_reductions(a):
    return a.max(), a.min(), a.sum(), a.max(axis=-1), a.min(axis=0), a.prod(axis=-1), a.mean(axis=-1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf_propagate_through_reductions(dtype):
    a = np.random.default_rng(1).standard_normal((5, 37)).astype(dtype)
    a[1, 20] = np.nan                     # in a vectorized lane
    a[2, 0] = np.nan
    a[2, 36] = np.nan                     # in the tail
    a[3, 5] = np.inf
    a[3, 6] = -np.inf                     # inf - inf = nan in the sum
    a[4, 7] = np.inf
    jf = assert_same_as_numpy(nan_reductions, a)
    assert_same_as_numpy(nan_reductions, a[::-1].copy(), jitted=jf)
    assert_same_as_numpy(nan_reductions, np.full((2, 9), -np.inf, dtype), jitted=None)
    if dtype == "float32":
        assert_compiled(jf)


def test_int_reductions_do_not_wrap_like_the_input_dtype():
    a = np.full(3, 2**31 - 1, np.int32)
    jf = assert_same_as_numpy(r_sum, a)
    assert jf(a) == 6442450941
    assert_same_as_numpy(r_sum, np.full(5, 2**32 - 1, np.uint32))          # uint64 result
    assert_same_as_numpy(r_prod, np.full(40, 3, np.int64))                  # int64 wraps like numpy
    assert_same_as_numpy(r_mean, np.array([2**31 - 1, 2**31 - 1, -2**31], np.int32))
    assert_same_as_numpy(r_sum, np.ones(300, bool))
    assert_same_as_numpy(r_max, np.array([-2**31, -5], np.int32))
    assert_same_as_numpy(r_min, np.array([2**32 - 1, 2**31], np.uint32))


def wrapped_sums_compared(a):
    return a.sum() > 0, (a * 3).sum() < 0, a.sum(axis=-1) >= 0, np.prod(a[..., :3], axis=-1) > 0


@pytest.mark.parametrize("n", [4, 1000, 100_004])
def test_wrapped_int64_sums_and_products_compare_as_numpys(n):
    """A signed sum or product that wraps (numpy's int64) compares by its wrapped value in the same
    kernel: TVM's signed adds are marked as never overflowing, and LLVM folded ``sum > 0`` from the
    unwrapped one (True for a sum numpy wraps to -4.6e18)."""
    a = np.full((2, n), 2**62, np.int64)
    a[:, 0] = 2**62 - 1
    a[:, 1:4] = [2**62, 2**62, -5]
    jf = assert_same_as_numpy(wrapped_sums_compared, a)
    assert jf(a)[2].tolist() == [False, False]            # each row wraps to -4.6e18
    rng = np.random.default_rng(3)
    for _ in range(6):
        assert_same_as_numpy(wrapped_sums_compared, rng.integers(-2**63, 2**63, (2, n), dtype=np.int64), jitted=jf)
    assert_same_as_numpy(wrapped_sums_compared, rng.integers(-2**31, 2**31, (2, n), dtype=np.int32))
    assert_compiled(jf)


def test_complex128_reductions_fall_back_with_same_answer():
    z = exact_values("float64", (3, 5)) + 1j * exact_values("float64", (3, 5), seed=1)
    assert_same_as_numpy(all_reductions, z, 1, False)
    assert_same_as_numpy(all_reductions, z, None, True)


# -- empty inputs and errors ---------------------------------------------------------------------------

def max_axis(a, axis):
    return a.max(axis=axis)


def sum_axis(a, axis):
    return a.sum(axis=axis)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_zero_size_reductions(dtype):
    empty = np.zeros(0, dtype)
    for fn in (r_sum, r_prod, r_mean, r_max, r_min, np_max):
        assert_same_as_numpy(fn, empty)            # max/min: numpy's ValueError, with its message
    m = np.zeros((0, 3), dtype)
    assert_same_as_numpy(max_axis, m, 1)            # shape (0,)
    assert_same_as_numpy(max_axis, m, 0)            # ValueError
    assert_same_as_numpy(sum_axis, m, 0)            # [0, 0, 0]
    assert_same_as_numpy(all_reductions, np.zeros((3, 0), dtype), 0, False)


def test_axis_errors_match_numpy():
    a = exact_values("float32", (2, 3))
    assert_same_as_numpy(sum_axis, a, 2)                   # AxisError
    assert_same_as_numpy(sum_axis, a, -3)
    assert_same_as_numpy(sum_axis, a, (0, 0))              # duplicate value in 'axis'
    assert_same_as_numpy(sum_axis, exact_values("int32", (2, 3, 4)), (0, -3))
    assert_same_as_numpy(max_axis, a, 5)


def reduce_then_use(a):
    s = a.sum(axis=0)
    return s / s.max(), a.max() - a.min()


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_reduction_results_used_in_later_arithmetic(dtype):
    jf = assert_same_as_numpy(reduce_then_use, exact_values(dtype, (6, 10)))
    assert_compiled(jf)


def maximum_of(a):
    return a.max()


def total_of(a):
    return a.sum(dtype=None) * 1.0


@pytest.mark.slow
def test_reductions_over_more_than_2_to_the_31_minus_127_elements():
    """Kernels index with int32; a reduction split padded the extent past 2**31 and returned its initial
    value (-inf for max). np.empty's untouched pages read as zeros without using memory."""
    a = np.empty(2**31 - 1, np.float32)
    assert jit(maximum_of)(a) == a.max() == 0.0
    assert jit(total_of)(a[: 2**31 - 100]) == 0.0


def all_positive_below_one(a):
    return (a > 0).min() < 1, a.sum(axis=0) > 0


def test_reduction_of_one_element_followed_by_a_comparison():
    """A reduction of extent 1 was scheduled as a spatial block and its epilogue folded into every
    step, so the first call's answer stuck (found by the generated-program campaign)."""
    jf = jit(all_positive_below_one, backend="tvm")
    for values in ([1.0], [np.nan], [1.0], [0.5], [-1.0]):
        assert_same_as_numpy(all_positive_below_one, np.array(values), jitted=jf)
    assert_compiled(jf)


def variances(a):
    return a.var(), np.var(a, axis=0), a.std(axis=-1, keepdims=True), np.std(a, axis=0, ddof=1)


def normalized(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def var_ddof(a, ddof):
    return np.var(a * 1.0, axis=-1, ddof=ddof)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint32"])
@pytest.mark.parametrize("shape", [(7, 1), (1, 6), (5, 8), (3, 4, 5), (1, 1)])
def test_var_and_std_compile_and_agree_with_numpy(dtype, shape):
    """var and std (numpy's two passes: the mean, then the mean squared deviation from it) in one
    kernel with what feeds and reads them, for every axis form, keepdims and ddof; a single element
    gives 0 (NaN for NaN and infinities), ddof at least the count gives inf or NaN, as numpy's."""
    rng = np.random.default_rng(3)
    a = (rng.random(shape) * 20 - 5).astype(dtype) if dtype[0] != "u" else rng.integers(0, 50, shape).astype(dtype)
    tol = {"rtol": 2e-6, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    jf = assert_same_as_numpy(variances, a, **tol)
    assert_same_as_numpy(variances, a[::-1].copy() * 2, jitted=jf, **tol)
    assert_compiled(jf)
    if dtype[0] == "f":
        assert_compiled(assert_same_as_numpy(normalized, a, **tol))


def test_var_and_std_of_special_values_and_degrees_of_freedom():
    a = np.array([[np.nan, 1.0, 2.0], [np.inf, 3.0, 3.0], [-0.0, 0.0, 5.0]])
    jf = assert_same_as_numpy(variances, a)
    assert_compiled(jf)
    jd = None
    for ddof in (0, 1, 2, 3, 4):                       # 3 and 4: no degrees of freedom left (inf, nan)
        jd = assert_same_as_numpy(var_ddof, a, ddof, jitted=jd)
    assert_same_as_numpy(var_ddof, np.ones((2, 3), np.float32), 1)
    assert_same_as_numpy(variances, np.zeros((0, 4)))  # empty: numpy's nan (and its warning), on numpy


def truth_tests(a, b):
    x = a * 2 - b
    return np.any(x > 1), np.all(x > -1), x.any(axis=0), (x < 0).all(axis=-1, keepdims=True), np.any(a), a.all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (2, 3, 4), (1, 9)])
def test_any_and_all_compile_and_agree_with_numpy(dtype, shape):
    """any and all over every axis form in one kernel with their operands: NaN counts as true (as
    numpy's), -0.0 as zero, every dtype; results are numpy bools and bool arrays."""
    a = exact_values(dtype, shape)
    b = exact_values(dtype, shape[-1:], seed=1)
    if dtype == "bool":
        b = b.astype(np.int8)
    jf = assert_same_as_numpy(truth_tests, a, b)
    assert_same_as_numpy(truth_tests, np.zeros_like(a), b, jitted=jf)
    assert_same_as_numpy(truth_tests, np.ones_like(a), np.zeros_like(b), jitted=jf)
    assert_compiled(jf)


def test_any_and_all_of_nan_and_signed_zeros():
    a = np.array([[np.nan, -0.0, 0.0], [0.0, -0.0, 0.0], [1.0, np.inf, -np.inf]])
    jf = assert_same_as_numpy(truth_tests, a, np.zeros(3))
    assert_same_as_numpy(truth_tests, a.astype(np.float32), np.full(3, -0.0, np.float32), jitted=jf)
    assert_compiled(jf)


def arg_extremes(a, b):
    x = a * 2 - b
    return x.argmax(), np.argmin(x, axis=0), x.argmax(axis=-1), np.argmax(x, axis=1, keepdims=True), np.argmin(a)


@pytest.mark.parametrize("dtype", DTYPES + ["uint8", "int8"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (4, 1), (2, 3, 4)])
def test_argmax_and_argmin_compile_and_agree_with_numpy(dtype, shape):
    """The first index of the extreme element, flat over every axis for axis=None, with ties (the
    exact values repeat) going to the earliest index, as numpy's."""
    a = exact_values(dtype, shape)
    b = exact_values(dtype, shape[-1:], seed=1)
    if dtype == "bool":
        b = b.astype(np.int8)
    jf = assert_same_as_numpy(arg_extremes, a, b)
    assert_same_as_numpy(arg_extremes, a[::-1].copy(), b, jitted=jf)
    assert_same_as_numpy(arg_extremes, np.zeros_like(a), b, jitted=jf)
    assert_compiled(jf)


def test_argmax_and_argmin_of_nan_infinities_signed_zeros_and_empty_arrays():
    """The first NaN wins both (numpy's rule); -0.0 and 0.0 tie; an empty axis raises numpy's
    ValueError."""
    a = np.array([[1.0, np.nan, 3.0, np.nan], [np.inf, -np.inf, -0.0, 0.0], [0.0, -0.0, 2.0, 2.0]])
    jf = assert_same_as_numpy(arg_extremes, a, np.zeros(4))
    assert_same_as_numpy(arg_extremes, a.astype(np.float32), np.zeros(4, np.float32), jitted=jf)
    assert_same_as_numpy(arg_extremes, a[1:], np.zeros(4), jitted=jf)
    assert_compiled(jf)
    assert_same_as_numpy(arg_extremes, np.zeros((0, 3)), np.zeros(3))


def r_sum_last(a):
    return a.sum(axis=-1)


def r_mean_first(a):
    return np.mean(a, axis=0)


@pytest.mark.parametrize("fn", [r_sum, r_mean, r_sum_last, r_mean_first])
@pytest.mark.parametrize("shape", [(1,), (1, 3), (3, 1), (1, 1), (2, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_of_negative_zeros_are_numpys_positive_zero(fn, shape, dtype):
    """numpy adds to its identity 0.0, also where one element is reduced: the sum of [-0.0] is 0.0."""
    jf = jit(fn, backend="tvm")
    for a in (np.full(shape, -0.0, dtype), np.full(shape, 0.0, dtype), exact_values(dtype, shape, 3)):
        assert_same_as_numpy(fn, a, jitted=jf)


def pair_moments(m, x):
    s = (m[None, :] * (x[:, None] - x[None, :])).sum(axis=0)
    v = np.var(m[None, :] - x[:, None], axis=0)
    return s, s * s - s, np.mean(x[:, None] * m[None, :], axis=0), v, v * v + v, np.std(x[None, :] * 2.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reductions_of_one_element_of_a_broadcast_expression_compile(dtype):
    """A reduction over an axis of length 1 of a compound value, read twice: TVM's LLVM code generator
    rejected the kernel (a Let variable bound twice) and the block ran on numpy, printing TVM's
    warnings."""
    jf = jit(pair_moments, backend="tvm")
    rng = np.random.default_rng(5)
    for n in (1, 1, 3, 1, 1):
        m, x = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
        if n == 1:
            x[0] = -0.0
        assert_same_as_numpy(pair_moments, m, x, jitted=jf)
    for special in (np.nan, np.inf, -np.inf, -0.0):
        m, x = np.array([1.5], dtype), np.array([special], dtype)
        assert_same_as_numpy(pair_moments, m, x, jitted=jf)
    assert_compiled(jf)
