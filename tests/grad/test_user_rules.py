"""An adjoint rule registered by the user for their own function: used where the function is called,
inlined into the generated code; an op without a rule is a GradError naming it."""

import numpy as np
import pytest
import user_ops
from test_grad import finite_difference

import astjit


def test_a_registered_rule_is_used_and_inlined():
    g = astjit.grad(user_ops.model, argnums=(0, 1))
    assert "softplus(" in g.source and "np.exp(-" in g.source      # the forward call and the inlined rule
    rng = np.random.default_rng(0)
    for n in (3, 6):
        args = (rng.standard_normal(n), rng.standard_normal(n))
        gx, gw = g(*args)
        assert np.allclose(gx, finite_difference(user_ops.model, args, 0), rtol=1e-6, atol=1e-9)
        assert np.allclose(gw, finite_difference(user_ops.model, args, 1), rtol=1e-6, atol=1e-9)


def test_without_a_rule_the_op_is_named():
    with pytest.raises(astjit.GradError, match="no adjoint rule for numpy.sinc"):
        astjit.grad(user_ops.unregistered)(np.ones(3))


def test_a_rule_must_take_g_and_ans_first():
    with pytest.raises(astjit.AstjitError, match="must take"):
        @astjit.adjoint(np.sinc)
        def bad(x, g):
            return g


def test_a_rebound_global_changes_the_gradient():
    g = astjit.grad(user_ops.with_a_global_activation)
    x = np.linspace(-1.0, 1.0, 5)
    try:
        for activation in (np.tanh, np.sin, np.tanh, np.exp):
            user_ops.activation = activation
            expected = finite_difference(user_ops.with_a_global_activation, (x,), 0)
            assert np.allclose(g(x), expected, rtol=1e-6, atol=1e-9), activation
    finally:
        user_ops.activation = np.tanh


def bucket(x):
    return np.floor(x * 4.0)


def weighted_by_bucket(x):
    return np.sum(x * bucket(x))


def test_a_function_declared_non_differentiable_carries_no_gradient():
    """astjit.non_differentiable, exported beside astjit.adjoint (astjit.grad is the function, so
    astjit.grad.non_differentiable is not reachable): the gradient treats bucket(x) as a constant."""
    astjit.non_differentiable(bucket)
    x = np.array([0.1, 0.6, 1.3, -0.7])           # away from bucket's steps
    assert np.array_equal(astjit.grad(weighted_by_bucket)(x), bucket(x))
    assert np.allclose(astjit.grad(weighted_by_bucket)(x), finite_difference(weighted_by_bucket, (x,), 0))


class Activations:
    chosen = np.tanh


def through_a_class_attribute(x):
    return np.sum(Activations.chosen(x) * x)


def test_a_rebound_class_attribute_or_closure_changes_the_gradient():
    """The generated guard tests each attribute chain through a class, and each closure cell, at every
    call (numpy's own functions only by the module's name)."""
    g = astjit.grad(through_a_class_attribute)
    x = np.linspace(-1.0, 1.0, 5)
    try:
        for activation in (np.tanh, np.sin, np.tanh, np.exp):
            Activations.chosen = activation
            expected = finite_difference(through_a_class_attribute, (x,), 0)
            assert np.allclose(g(x), expected, rtol=1e-6, atol=1e-9), activation
    finally:
        Activations.chosen = np.tanh

    def make():
        act = np.tanh

        def f(x):
            return np.sum(act(x) * x)

        def rebind(new):
            nonlocal act
            act = new
        return f, rebind

    f, rebind = make()
    g = astjit.grad(f)
    for activation in (np.tanh, np.sin, np.exp):
        rebind(activation)
        assert np.allclose(g(x), finite_difference(f, (x,), 0), rtol=1e-6, atol=1e-9), activation
