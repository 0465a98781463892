"""A scan-style model's loss: a tanh recurrence whose per-step outputs are stacked and reduced by a
mean squared error against a target (docs/rewrites.md; benchmarks/scan_then_reduce.py times it and
tests/rewrite checks ``push_reductions_into_loops`` on it)."""

import numpy as np


def scan_loss(h, w, xs, targets):
    outs = []
    for t in range(xs.shape[0]):
        h = np.tanh(h * w + xs[t])
        outs.append(h)
    return np.mean((np.stack(outs) - targets) ** 2)
