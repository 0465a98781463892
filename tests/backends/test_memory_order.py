"""Results keep numpy's memory order: elementwise results of Fortran-ordered or transposed operands
are Fortran-ordered (numpy's order='K'), with the same values, whatever the layout of earlier calls."""

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import jit


def affine(a, b):
    return a * 2.0 + b


def of_transpose(a, b):
    return a.T * 2.0 + 1.0, (a.T + b.T).sum(axis=0)


def update_then_scale(a, out):
    out[0] = 1.0
    return np.exp(a) * 3.0


def assert_same_layout(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.flags.c_contiguous == w.flags.c_contiguous and g.flags.f_contiguous == w.flags.f_contiguous, (
            g.flags, w.flags)


@pytest.mark.parametrize("fn", [affine, of_transpose])
def test_fortran_and_transposed_operands_keep_numpys_order(fn):
    jf = jit(fn)
    rng = np.random.default_rng(0)
    base = rng.normal(size=(5, 7))
    for a, b in [(base, base + 1), (np.asfortranarray(base), np.asfortranarray(base * 2)),
                 (base, base * 3), (base.T.copy().T, np.asfortranarray(base)), (base[:, :6:2], base[:, 1::2])]:
        want = fn(a.copy(order="K"), b.copy(order="K"))
        got = jf(a, b)
        assert_same_as_numpy(fn, a, b, jitted=jf)
        assert_same_layout(got, want)


def test_fortran_input_after_an_update():
    jf = jit(update_then_scale)
    base = np.linspace(0, 1, 12).reshape(3, 4)
    for a in (base, np.asfortranarray(base), base):
        want = update_then_scale(a.copy(order="K"), np.zeros(2))
        got = jf(a, np.zeros(2))
        assert_same_as_numpy(update_then_scale, a, np.zeros(2), jitted=jf)
        assert_same_layout(got, want)


def sliced_transpose(a):
    return a.T[1:, :] + 1


def strided_transpose(a):
    return a.T[::2] * 2.0 - a.T[1::2]


def reshaped_transpose(a):
    return a.reshape(a.shape[1], a.shape[0]).T[1:] > 0


def transpose_of_3d_sliced(b):
    return b.transpose(2, 1, 0)[1:] + 1


# a view of a view has strides over its operand as if that were C-contiguous: a.T[1:] looked like a
# C-ordered slice, and its elementwise result came out C-ordered where numpy's is Fortran-ordered
@pytest.mark.parametrize("fn, shape", [(sliced_transpose, (30, 31)), (strided_transpose, (40, 10)),
                                       (reshaped_transpose, (12, 10)), (transpose_of_3d_sliced, (6, 7, 9))],
                         ids=lambda v: v.__name__ if callable(v) else str(v))
def test_views_of_transposed_views_keep_numpys_order(fn, shape):
    rng = np.random.default_rng(1)
    for backend in ("tvm", None):
        jf = jit(fn, backend=backend)
        for _ in range(3):
            a = rng.normal(size=shape)
            got, want = jf(a), fn(a)
            assert got.dtype == want.dtype and got.strides == want.strides and np.array_equal(got, want)
