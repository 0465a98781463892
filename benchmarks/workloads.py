"""The numpy functions the peer benchmarks time (peers.py, first_call.py): one source for astjit and
numba (jax and torch get their own spellings in peers.py). Kept free of imports beyond numpy, so a
fresh process that imports it times only what it measures."""

import numpy as np


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x):
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5)


def mse(a, b):
    return ((a - b) ** 2).mean()


def matmul_bias_relu(a, w, b):
    return np.maximum(a @ w + b, 0.0)


def affine_chain(x):
    return (x * 2.0 + 1.0) * 0.5 - 3.0


def gaussian(x):
    return np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


def entropy(p):
    return -(p * np.log(p))


def softmax_cross_entropy(z):
    """The mean negative log-likelihood of class 0 under a row softmax (float64: a chain of the
    vectorized exp and log that TVM once took 100 s to compile)."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return -np.mean(np.log(p[:, 0] + 1e-12))


def log_error(x):
    """The mean squared log error of x's first row against its second (float64): two logs in a value a
    float sum reads twice; its kernel took 7.2 s to compile at 1,000 elements before that value got a
    stage of its own."""
    r = np.log(x[0]) - np.log(x[1])
    return (r * r).mean()


def mod_of_clip(x):
    """A float ``%`` whose divisor holds a choice: the kernel took 6 s to compile before that divisor
    was computed in a stage of its own."""
    return np.mod(x, np.clip(x, -0.5, 2.0))


def smoothing_loop(u):
    """A scalar-indexed loop: one loop kernel under astjit (its warm first call loads the kernel but
    lowers the loop again, which imports TVM), numba's home ground."""
    n = u.shape[0]
    v = np.empty_like(u)
    v[0] = u[0]
    v[n - 1] = u[n - 1]
    for i in range(1, n - 1):
        v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]
    return v
