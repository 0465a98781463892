"""Gradients through the user's own helper functions (grad/inline_calls): each call is inlined before
differentiating, so a model written with helpers differentiates as if written out; rebinding a helper
or a global it reads rebuilds the gradient."""

import io

import numpy as np
import pytest
import user_layers
from test_grad import assert_gradient, finite_difference
from user_layers import dense

import astjit
from astjit import jit

SCALE = 2.0


def activation(z):
    return np.tanh(z) * SCALE


def layer(x, w, b=0.5):
    h = x @ w + b
    return activation(h)


def folded(v):
    if np.sum(v) > 0:
        return v * v
    return -v


def two_layers(x, w1, w2):
    h = layer(x, w1)
    out = layer(h, w2, b=-0.25)
    return np.sum(folded(out) + layer(x, w1, 1.0).mean())


def step(h, x, w):
    return np.tanh(h * w + x)


def recurrence(h, xs, w):
    for t in range(xs.shape[0]):
        h = step(h, xs[t], w)
    return np.sum(h * h)


@jit
def jitted_square(x):
    return x * x


def calls_a_jitted_helper(x):
    return np.sum(jitted_square(x) + jitted_square(np.sin(x)))


def called_by_keyword(x, y):
    return np.sum(layer(w=y, x=x) * 3.0)


def a_statement_call(x, log):
    record(x, log)
    return np.sum(layer(x, x.T))


def record(x, log):
    print(x.shape, file=log)
    return None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradients_through_helpers_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    x, w1, w2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(5, 2))
    assert_gradient(two_layers, (x, w1, w2), (0, 1, 2))
    assert_gradient(recurrence, (rng.normal(size=3), rng.normal(size=(6, 3)), rng.normal(size=3)), (0, 2))
    assert_gradient(calls_a_jitted_helper, (rng.normal(size=(2, 3)),), 0)
    assert_gradient(called_by_keyword, (x, w1), (0, 1))
    log = io.StringIO()
    assert_gradient(a_statement_call, (rng.normal(size=(3, 3)), log), 0)
    assert set(log.getvalue().splitlines()) == {"(3, 3)"}


def test_value_and_grad_gives_the_functions_own_value():
    rng = np.random.default_rng(3)
    vg = astjit.value_and_grad(two_layers, argnums=1)
    for _ in range(3):
        x, w1, w2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(5, 2))
        value, _ = vg(x, w1, w2)
        assert type(value) is type(two_layers(x, w1, w2)) and value == two_layers(x, w1, w2)


def tripled(v):
    return v * 3.0


def test_a_rebound_helper_or_global_rebuilds_the_gradient(monkeypatch):
    rng = np.random.default_rng(4)
    x, w1, w2 = rng.normal(size=(2, 4)), rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    g = astjit.grad(two_layers, argnums=0)
    for change in (None, ("SCALE", -1.5), ("activation", np.sin), ("folded", tripled)):
        if change is not None:
            monkeypatch.setitem(globals(), *change)
        got = g(x, w1, w2)
        want = finite_difference(two_layers, (x, w1, w2), 0)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_show_prints_the_inlined_statements():
    source = astjit.grad(two_layers).source
    assert "__astjit_grad0_layer_h" in source and "layer(" not in source


def through_another_module(x, w):
    return np.sum(dense(x, w) ** 2) + np.sum(user_layers.squash(x))


def make_closure_helper(k):
    def scaled(v):
        return v * k

    return scaled


closure_helper = make_closure_helper(3.0)


def calls_a_closure(x):
    return np.sum(closure_helper(x))


def test_helpers_of_another_module_read_their_own_globals(monkeypatch):
    """A helper of another module reads its module's globals (``GAIN``, numpy as ``xp``), and
    rebinding one there, or the helper, rebuilds the gradient."""
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    g = astjit.grad(through_another_module, argnums=(0, 1))
    for change in (None, ("GAIN", -3.0), ("squash", tripled)):
        if change is not None:
            monkeypatch.setattr(user_layers, *change)
        gx, gw = g(x, w)
        np.testing.assert_allclose(gx, finite_difference(through_another_module, (x, w), 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gw, finite_difference(through_another_module, (x, w), 1), rtol=1e-6, atol=1e-8)


def test_a_closure_is_not_inlined():
    with pytest.raises(astjit.GradError, match="cannot inline the call of closure_helper"):
        astjit.grad(calls_a_closure)(np.ones(3))
