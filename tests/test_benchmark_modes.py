"""The benchmarks' report of what each fragment runs (benchmarks/_timing.describe_modes), which their
README documents: a loop region reads as one, never as a mode of None."""

import sys
from pathlib import Path

import numpy as np

from astjit import jit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _timing  # noqa: E402


def test_a_loop_region_is_described_as_a_loop_kernel():
    step = jit(_timing.load_example("quickstart").step)
    rng = np.random.default_rng(0)
    step(*(rng.standard_normal(16).astype(np.float32) for _ in range(3)), 10)
    described = _timing.describe_modes(step)
    assert "3:tvm(loop)" in described.split() and "None" not in described, described
    assert None not in _timing.chosen_modes(step)


def test_a_loop_its_guard_always_ran_as_written_is_described_as_not_called():
    def total(a):
        t = 0.0
        for i in range(a.shape[0]):
            t += a[i]
        return t

    jitted = jit(total)
    assert jitted(np.zeros(0)) == 0.0
    assert _timing.describe_modes(jitted) == "fragments 0:not called"
