"""Helpers of another module than the losses differentiated through them (tests/grad/test_inline_calls)."""

import numpy as xp  # (spelled otherwise than the caller's numpy)

GAIN = 2.0


def squash(z):
    return xp.tanh(z) * GAIN


def dense(x, w):
    return squash(x @ w) + len(x.shape)
