"""Row-wise kernels (backends/tvm/schedule._by_rows): softmax-shaped blocks computed row by row, with
their exponentials kept in a row buffer, give numpy's results (special values included) at every size;
kernels of other shapes keep the generic schedule."""

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import jit


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def scaled_softmax(x, t):
    z = np.tanh(x / t)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), e


def schedules(jf):
    return {s.description for f in jf.fragments for e in f.entries for s in e.segments if s.backend == "tvm"}


def rows_of(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 16), (64, 1024), (5, 7, 16), (300, 40)])
def test_softmax_by_rows_matches_numpy(dtype, shape):
    jf = jit(softmax, backend="tvm")
    for seed in range(3):
        assert_same_as_numpy(softmax, rows_of(shape, dtype, seed), jitted=jf)
    assert schedules(jf) == {"tvm kernel (rows)"}


@pytest.mark.parametrize("shape", [(6, 10), (6, 8), (40,)])
def test_other_row_lengths_use_the_generic_schedule(shape):
    """Rows that are not a multiple of the vector width, or a single vector, or no rows at all."""
    jf = jit(softmax, backend="tvm")
    assert_same_as_numpy(softmax, rows_of(shape, np.float32, 0), jitted=jf)
    assert schedules(jf) == {"tvm kernel (scheduled)"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_per_row(dtype):
    x = rows_of((6, 16), dtype, 1)
    x[0, 3] = np.nan                 # a NaN row stays NaN
    x[1, :] = -np.inf                # all -inf: 0/0
    x[2, 5] = np.inf                 # inf - inf
    x[3, :] = 0.0
    x[4, 2] = -0.0
    x[5, :] = np.finfo(dtype).max
    jf = jit(softmax, backend="tvm")
    with np.errstate(invalid="ignore"):
        assert_same_as_numpy(softmax, x, jitted=jf)
    assert schedules(jf) == {"tvm kernel (rows)"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_and_a_kept_value_also_returned(dtype):
    x = rows_of((32, 64), dtype, 2)
    # shifted - log(sum) cancels near each row's maximum: an ulp of the log is the absolute error
    assert_same_as_numpy(log_softmax, x, atol=4 * np.finfo(dtype).eps * 8)
    jf = jit(scaled_softmax, backend="tvm")
    for t in (0.5, 2.0, 3.0):
        assert_same_as_numpy(scaled_softmax, x, t, jitted=jf)
