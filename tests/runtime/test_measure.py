"""The first call of a compiled specialization times it against the block's own Python and keeps the
faster; a tie goes to the Python. Timings are replaced here by fixed ones, so the choice itself is tested
without timing anything (the suite never asserts on real timings)."""

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import jit
from astjit.runtime import measure


def affine(a, b):
    return a * 2.0 + b


@pytest.mark.parametrize("compiled_us, python_us, chosen", [
    (10.0, 10.0, "python"),        # a tie: the block's Python
    (10.0, 9.5, "python"),         # Python faster by 5% (a margin for the kernel used to keep it)
    (9.5, 10.0, "tvm"),            # the kernel faster by 5%
    (1.0, 50.0, "tvm")])
def test_the_faster_side_is_kept_and_a_tie_goes_to_python(monkeypatch, compiled_us, python_us, chosen):
    jf = jit(affine)
    frag = jf.fragments[0]                 # (transformed: its fallback is the block's Python)
    rng = np.random.default_rng(2)

    def fixed(fn, args, repeats, fresh=None):
        return (python_us if fn is frag.fallback else compiled_us) * 1e-6

    monkeypatch.setattr(measure, "_best", fixed)
    for _ in range(3):
        assert_same_as_numpy(affine, rng.standard_normal(50), rng.standard_normal(50), jitted=jf)
    [entry] = jf.fragments[0].entries
    assert entry.mode == "tvm" and entry.mode_chosen == chosen
