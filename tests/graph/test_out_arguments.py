"""Calls writing into an existing array through ``out``, by position or keyword (``np.exp(d, d)``,
``np.clip(d, 0, 1.5, d)``, ``d.clip(0, 1.5, d)``, ``np.sum(a, 0, None, o)``): the statement runs as
Python, so the array holds what numpy writes, once per call (a kernel computed a new array and lost the
write, or the first call's timing applied the update again and again)."""

import numpy as np
import pytest

from astjit import explain, jit


def exp_into(d):
    t = np.exp(d, d)
    return np.sum(t)


def sqrt_into(d):
    t = np.sqrt(d, d)
    return np.sum(t)


def clip_into(d):
    t = np.clip(d, 0.0, 1.5, d)
    return np.sum(t) * 2.0


def clip_method_into(d):
    t = d.clip(0.0, 1.5, d)
    return np.sum(t) * 2.0


def add_into(d):
    t = np.add(d, 1.0, d)
    return np.sum(t * 3.0)


def sum_into(a, o):
    np.sum(a * 2.0, 0, None, o)
    return o * 1.5


def clip_keyword_into(d):
    t = np.clip(d, 0.0, 1.5, out=d)
    return np.sum(t) * 2.0


@pytest.mark.parametrize("fn", [exp_into, sqrt_into, clip_into, clip_method_into, add_into, clip_keyword_into])
def test_an_update_through_out_happens_once_as_numpy_does_it(fn):
    jitted = jit(fn)
    for k in range(8):
        plain_d, jit_d = (np.array([0.25, 2.3 + k, -0.0, 4.0]) for _ in range(2))
        want, got = fn(plain_d), jitted(jit_d)
        assert np.array_equal(jit_d, plain_d, equal_nan=True) and np.array_equal(np.signbit(jit_d), np.signbit(plain_d))
        assert type(got) is type(want) and (got == want or np.isnan(got) and np.isnan(want))


def test_a_reduction_into_a_positional_out():
    jitted = jit(sum_into)
    for k in range(6):
        a = np.arange(12.0).reshape(3, 4) + k
        o1, o2 = np.zeros(4), np.zeros(4)
        want, got = sum_into(a, o1), jitted(a, o2)
        assert np.array_equal(o1, o2) and np.array_equal(got, want)
    assert "writes into an existing array" in str(explain(jitted))
