"""Jitted functions at module level, importable by worker processes: they pickle by reference.

Used by test_pickle_and_dask.py; imports nothing but numpy and astjit so that workers start fast.
"""

import os

import numpy as np

from astjit import jit


@jit
def squash(x, scale):
    """Elementwise: a dask map_blocks of it equals it on the whole array."""
    y = np.tanh(x * scale) * 0.5 + 1.0
    return y


@jit(strict=True)
def normalize(x, scale):
    centered = x - x.mean()
    y = np.exp(centered * scale)
    return y / y.sum()


@jit(backend="numpy")
def affine(a, b):
    return a * 2.0 - b


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    @jit
    def apply(self, x):
        return x * self.factor + 1.0

    @jit
    @staticmethod
    def double(x):
        return x * 2.0 + 1.0

    @jit
    @classmethod
    def triple(cls, x):
        return x * 3.0 + 1.0


def n_entries(jf) -> int:
    """Specializations compiled so far in this process."""
    return sum(len(f.entries) for f in jf.fragments)


def normalize_in_worker(x, scale):
    """(process id, specializations of ``normalize`` in this process before the call, the result)."""
    before = n_entries(normalize)
    return os.getpid(), before, normalize(x, scale)
