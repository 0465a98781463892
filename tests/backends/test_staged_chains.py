"""Chains of the vectorized float64 exp and log (lower.SegmentLowering._stage_operands): where one
value's expression, Lets substituted, grows past what TVM compiles quickly, its operands are computed
in stages of their own. Results stay numpy's (special values included), every size reuses the same
rules, and kernels without such chains keep their single loop."""

import numpy as np
import pytest
from differential import assert_compiled, assert_same_as_numpy

from astjit import jit

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def log_of_exp(x):
    return np.log(np.exp(x))


def exp_of_exp(x):
    return np.exp(np.exp(x) - 3.0)


def weighted_log_exp(x, y):
    return np.sum(y * np.log(np.exp(x)))


def reversed_chain(x):
    return np.log(np.exp(x)[::-1] + 1.0)


def softmax_cross_entropy(z, onehot):
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.mean(np.sum(onehot * np.log(p + 1e-12), axis=1))


def just_exp(x):
    return np.exp(x) * 2.0


def tir_of(jf):
    return "\n".join(s.compiled.artifacts["tir"]() for f in jf.fragments for e in f.entries
                     for s in e.segments if s.backend == "tvm")


def tolerance(dtype):
    """float32: exp's ulp (numpy's and ours differ by up to 2.4 ulp) grows through the chain (exp of a
    value near 30 turns an ulp of its argument into 3e-6 of the result; log near 1 into an absolute
    error); float64: differential's default."""
    return {"rtol": 2e-5, "atol": 1e-6} if dtype == np.float32 else {}


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(7,), (1000,), (33, 17)])
def test_chains_match_numpy_at_every_size(dtype, shape):
    for fn in (log_of_exp, exp_of_exp, reversed_chain):
        jf = jit(fn, backend="tvm")
        for seed in range(3):
            assert_same_as_numpy(fn, values(shape, dtype, seed), jitted=jf, **tolerance(dtype))
        assert_compiled(jf)
    jf = jit(weighted_log_exp, backend="tvm")
    for seed in range(3):
        assert_same_as_numpy(weighted_log_exp, values(shape, dtype, seed), values(shape, dtype, seed + 7),
                             jitted=jf, **tolerance(dtype))
    assert_compiled(jf)


def test_float64_log_of_exp_runs_in_stages():
    jf = jit(log_of_exp, backend="tvm")
    assert_same_as_numpy(log_of_exp, values((100,), np.float64, 0), jitted=jf)
    assert "stage" in tir_of(jf)
    plain = jit(just_exp, backend="tvm")
    assert_same_as_numpy(just_exp, values((100,), np.float64, 0), jitted=plain)
    assert "stage" not in tir_of(plain)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values_through_a_staged_chain(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 709.0, 710.0, -745.0, -746.0, 1e-310, 5.0, -5.0],
                 dtype=dtype)
    for fn in (log_of_exp, exp_of_exp, reversed_chain):
        assert_same_as_numpy(fn, x, backend="tvm")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(256, 10), (64, 16), (3, 5)])
def test_softmax_cross_entropy(dtype, shape):
    """A float64 cross-entropy took TVM 100 s to compile before its chain was staged."""
    jf = jit(softmax_cross_entropy, backend="tvm")
    rng = np.random.default_rng(0)
    for seed in range(3):
        z = values(shape, dtype, seed)
        onehot = np.eye(shape[1], dtype=dtype)[rng.integers(0, shape[1], shape[0])]
        assert_same_as_numpy(softmax_cross_entropy, z, onehot, jitted=jf)
    z[0, 1] = np.nan
    assert_same_as_numpy(softmax_cross_entropy, z, onehot, jitted=jf)
    assert_compiled(jf)


def mod_of_clip(a, lo, hi):
    return np.mod(a, np.clip(a, lo, hi))


def floor_of_nested_maximum(a, b):
    return np.floor_divide(a, np.maximum(a < b, np.clip(a, -2.0, b))) + np.mod(b, a * 2.0)


def mod_of_product(a, s):
    return np.mod(a, a * s + 1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_float_divmod_of_a_choice_reads_it_from_a_stage(dtype):
    """The sign and zero tests of a float ``//`` or ``%`` read its operands several times: an operand
    holding a choice (``clip``, a NaN-aware ``maximum``) is computed in a stage of its own
    (lower.SegmentLowering._stage_choices). Inline, TVM's passes took 0.7 s each over such a kernel
    (4-6 s to compile ``np.mod(a, np.clip(a, lo, hi))``, 20-50 s nested in ``np.maximum``), though its
    size, Lets substituted, was far below the staging threshold."""
    rng = np.random.default_rng(12)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-300, -5.5, 3.0], dtype)
    clip = jit(mod_of_clip, backend="tvm")
    nested = jit(floor_of_nested_maximum, backend="tvm")
    for n in (8, 1000):
        a = np.concatenate([specials, (rng.standard_normal(n) * 4).astype(dtype)])
        b = np.concatenate([specials[::-1], (rng.standard_normal(n) * 4).astype(dtype)])
        for lo, hi in ((-1.0, 2.0), (0.5, 0.5), (np.nan, 3.0)):
            assert_same_as_numpy(mod_of_clip, a, lo, hi, jitted=clip)
        assert_same_as_numpy(floor_of_nested_maximum, a, b, jitted=nested)
    assert "stage" in tir_of(clip) and "stage" in tir_of(nested)
    plain = jit(mod_of_product, backend="tvm")          # (no choice: one loop, no stage)
    assert_same_as_numpy(mod_of_product, a, 2.0, jitted=plain)
    assert "stage" not in tir_of(plain)


def test_a_choice_under_a_let_is_found():
    """scalar_math.holds_choice walks a Let's body too (clip's value is Lets around its selects): without
    it the choices of such values went unseen."""
    from astjit.backends.tvm import scalar_math as sm
    from astjit.backends.tvm.runtime import tvm_module

    tvm = tvm_module()
    x, t = tvm.tirx.Var("x", "float64"), tvm.tirx.Var("t", "float64")
    choice = tvm.te.if_then_else(t > x, t, x)
    assert sm.holds_choice(tvm.tirx.Let(t, x + 1.0, choice))
    assert not sm.holds_choice(tvm.tirx.Let(t, x + 1.0, t * x))


def log_argmax(a):
    return np.log(a).argmax(), np.log(a).argmin()


def floor_quotient_extremes(a):
    v = a // 3.0
    return v.argmin(), v.argmax()


def wrapped_remainder_powers(a):
    v1 = (a - 1) % 2.5
    return (v1 + v1 * v1 + v1 * v1 * v1).mean()


@pytest.mark.parametrize("fn, dtype", [(log_argmax, np.float64), (log_argmax, np.float32),
                                       (floor_quotient_extremes, np.float64),
                                       (wrapped_remainder_powers, np.int64), (wrapped_remainder_powers, np.float64)])
def test_branchy_operands_of_arg_reductions_and_sums_compile_quickly(fn, dtype):
    """``np.log(a).argmax()`` took 13 s to compile at each new length, ``(a // 3.0).argmin()`` 3 s, a
    float ``%`` read three times under a mean 5 s: such operands are computed in stages of their own
    (a buffer ``stage<id>`` in the kernel). The results stay numpy's."""
    rng = np.random.default_rng(8)
    jf = jit(fn, backend="tvm")
    for n in (7, 1000, 1001):
        a = (rng.random(n) * 50 + 0.5).astype(dtype)
        if dtype != np.int64 and fn is not wrapped_remainder_powers:
            a[n // 3] = np.nan
        assert_same_as_numpy(fn, a, jitted=jf)
    tir = [s.compiled.artifacts["tir"] for f in jf.fragments for e in f.entries for s in e.segments
           if s.backend == "tvm" and s.compiled is not None]
    assert tir and all("stage" in (t() if callable(t) else t) for t in tir)
