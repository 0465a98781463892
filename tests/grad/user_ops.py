"""A user's own op with an adjoint rule registered through the public API (tests/grad/test_user_rules)."""

import numpy as np

import astjit


def softplus(x):
    return np.log1p(np.exp(x))


@astjit.adjoint(softplus)
def _softplus_adjoint(g, ans, x):
    return g / (1.0 + np.exp(-x))


def model(x, w):
    return np.sum(softplus(x * w) ** 2)


def unregistered(x):
    return np.sum(np.sinc(x))


activation = np.tanh


def with_a_global_activation(x):
    return np.sum(activation(x) * x)
