"""The pass pipeline: canonical spellings (x.sum(), np.sum(x), np.add.reduce(x) become one op), its
order and logging, and that the block's own graph never changes."""

import logging

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import jit
from astjit.graph import passes


def spelled_three_ways(x):
    return x.sum(), np.sum(x), np.add.reduce(x, axis=None)


def ufunc_reduces(a):
    return np.add.reduce(a), np.multiply.reduce(a), np.maximum.reduce(a), np.minimum.reduce(a, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_ufunc_reduce_matches_numpy(dtype):
    jf = jit(ufunc_reduces)
    rng = np.random.default_rng(1)
    for shape in [(3, 4), (5, 2), (1, 7)]:
        a = (rng.random(shape) * 4).astype(dtype)
        assert_same_as_numpy(ufunc_reduces, a, jitted=jf)


def test_ufunc_reduce_errors_as_numpy():
    jf = jit(ufunc_reduces)
    assert_same_as_numpy(ufunc_reduces, np.zeros((0, 3)), jitted=jf)    # maximum.reduce of nothing raises


def test_canonical_spelling_is_one_op():
    jf = jit(spelled_three_ways)
    x = np.arange(6.0)
    assert_same_as_numpy(spelled_three_ways, x, jitted=jf)
    entry = jf.fragments[0].entries[-1]
    ops = [n.op for n in entry.ctx.graph.nodes if n.op.endswith("sum") or "reduce" in n.op]
    assert ops == ["np.sum", "np.sum", "np.sum"]
    original = [n.op for n in jf.fragments[0].graph.nodes if n.op.endswith("sum") or "reduce" in n.op]
    assert original == ["sum", "np.sum", "np.add.reduce"], "the block's own graph changed"


def method_on_python_number(t):
    return np.add(t, 1.0), abs(t)


def test_spellings_stay_apart_on_python_numbers():
    """np.add of two Python floats is a numpy scalar, ``+`` a Python float: not made one op there."""
    jf = jit(method_on_python_number)
    for t in (2.5, -1.0, 3.0):
        assert_same_as_numpy(method_on_python_number, t, jitted=jf)


def on_numpy_scalars(z, x, i):
    return abs(z[i]) ** 2, np.absolute(z[i]), np.power(x[i], x[i + 1]), x[i] ** x[i + 1]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_spellings_stay_apart_on_numpy_scalars(dtype):
    """``abs`` of a complex numpy scalar is C's hypot, ``np.absolute`` numpy's loop: they differ in the
    last bit for about one value in three, so ``abs(z[i])`` is not respelled ``np.absolute``."""
    jf = jit(on_numpy_scalars)
    rng = np.random.default_rng(4)
    z = (rng.random(64) + 1j * rng.random(64)).astype(dtype)
    x = rng.random(65) * 3
    for i in range(64):
        assert_same_as_numpy(on_numpy_scalars, z, x, i, jitted=jf, rtol=0)


def powers_both_ways(a, p):
    return np.power(a, 0.5), a ** 0.5, np.power(a, p), a ** p, np.power(a, 2) - a ** 2


def bool_powers(b):
    return np.power(b, 2), b ** 2


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_np_power_of_bools_is_int64_and_the_operator_int8(backend):
    """``b ** 2`` takes np.square (int8 for bools), ``np.power(b, 2)`` the ufunc's int64 loop."""
    jf = jit(bool_powers) if backend is None else jit(backend=backend)(bool_powers)
    for n in (3, 17):
        assert_same_as_numpy(bool_powers, np.arange(n) % 3 == 0, jitted=jf)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("backend", [None, "tvm"])
def test_np_power_is_not_the_operator(dtype, backend):
    """``a ** 0.5`` takes numpy's fast path ahead of the ufunc (np.sqrt: nan and -0.0 for -inf and
    -0.0); ``np.power``'s float16 loop calls powf (inf and 0.0), its complex loop cpow: the two stay
    apart, compiled or not."""
    jf = jit(powers_both_ways) if backend is None else jit(backend=backend)(powers_both_ways)
    rng = np.random.default_rng(8)
    for n in (4, 9, 33):
        a = rng.standard_normal(n) * 3
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(n)
        a = a.astype(dtype)
        a[:3] = [-np.inf, -0.0, 0.0]
        for p in (0.5, 2.0, -1.0):          # (other exponents: pow, within the tolerances of semantics.md)
            with np.errstate(all="ignore"):
                assert_same_as_numpy(powers_both_ways, a, p, jitted=jf, rtol=0)


def test_pipeline_is_declared_and_logged(monkeypatch, caplog):
    assert passes.describe() == "canonicalize -> rewrite"
    monkeypatch.setenv("ASTJIT_LOG", "passes")
    jf = jit(spelled_three_ways)
    with caplog.at_level(logging.INFO, logger="astjit"):
        jf(np.arange(4.0))
    text = caplog.text
    assert "canonicalize -> rewrite" in text and "after canonicalize" in text


def squared_by_operator(x):
    return x ** 2 + 1.0


def squared_by_ufunc(x):
    return np.power(x, 2) + 1.0


@pytest.mark.parametrize("pattern", [lambda x: x ** 2, lambda x: np.power(x, 2)])
def test_a_power_rule_matches_both_spellings_where_they_compute_the_same(pattern):
    """``np.power`` is ``**`` for float32 and float64 arrays (numpy's loops take the operator's fast
    paths too): a rule written either way fires on both; on float16 np.power stays apart."""
    import astjit
    from astjit.rewrite import Rule

    rule = Rule(pattern, lambda x: x * x, name="squares")
    for fn, dtype, fires in ((squared_by_operator, np.float64, True), (squared_by_ufunc, np.float64, True),
                             (squared_by_ufunc, np.float32, True), (squared_by_ufunc, np.float16, False)):
        jf = jit(rewrites=[rule])(fn)
        x = np.linspace(-2, 2, 50).astype(dtype)
        for _ in range(3):
            assert_same_as_numpy(fn, x, jitted=jf, rtol=0)
        assert ("rule squares" in str(astjit.explain(jf))) is fires, (fn.__name__, dtype)
