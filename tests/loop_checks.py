"""Differential checks for compiled loops: plain Python and ``@jit`` called on copies of the same
arguments must agree on results, exceptions and the arguments afterwards."""

import math

import numpy as np
import pytest
from differential import misaligned

from astjit import jit


def copies(args):
    return [_copy(a) if isinstance(a, np.ndarray) else list(a) if type(a) is list else a for a in args]


def _copy(a):
    """A copy of the array ``a``, misaligned where ``a`` is (numpy reads such arrays in buffers)."""
    return np.copy(a) if a.flags.aligned else misaligned(a)


def run_both(fn, jitted, args):
    """(plain outcome, jitted outcome): each the result and the arguments afterwards, or the exception."""
    out = []
    for f in (fn, jitted):
        a = copies(args)
        try:
            out.append(("ok", f(*a), a))
        except Exception as exc:
            out.append(("raised", (type(exc), str(exc)), a))
    return out


def same(x, y) -> bool:
    if isinstance(x, tuple | list):
        return type(x) is type(y) and len(x) == len(y) and all(same(a, b) for a, b in zip(x, y))
    if isinstance(x, np.ndarray) and x.dtype.kind == "c":
        return isinstance(y, np.ndarray) and y.dtype == x.dtype and same(x.real, y.real) and same(x.imag, y.imag)
    if isinstance(x, np.ndarray):
        return isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape and np.array_equal(
            x, y, equal_nan=True) and np.array_equal(np.signbit(x), np.signbit(y))
    if type(x) is not type(y):
        return False
    if isinstance(x, complex | np.complexfloating):
        return same(x.real, y.real) and same(x.imag, y.imag)
    if isinstance(x, float | np.floating):
        return (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))
    return x == y


def check(fn, calls, compiled=True):
    """Plain and jitted agree on every call: results (values and types), arguments afterwards,
    exceptions (type and message). With ``compiled``, the loop ran as a kernel."""
    jitted = jit(fn)
    for args in calls:
        (k1, r1, a1), (k2, r2, a2) = run_both(fn, jitted, args)
        assert k1 == k2, (fn.__name__, args, r1, r2)
        assert same(r1, r2) if k1 == "ok" else r1 == r2, (fn.__name__, r1, r2)
        for x, y in zip(a1, a2):
            assert same(x, y), (fn.__name__, "argument after the call", x, y)
    loops = [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    if compiled:
        assert loops and all(e.mode == "tvm" for e in loops), [(e.mode, e.note) for e in loops]
    return jitted


@pytest.fixture
def kernels_for_tiny_loops(monkeypatch):
    """Small test arrays run the kernel too (by default a loop of a few statements runs as Python)."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", "0")


def peaked(rng, n, at, dtype=np.float64):
    """``n`` values below 0.5 with a 2 at position ``at`` (none where ``at`` is outside): a search's
    input that stops where the test says."""
    a = (rng.random(n) * 0.5).astype(dtype)
    if 0 <= at < n:
        a[at] = 2
    return a
