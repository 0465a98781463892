"""Which backend runs which part of a block (backends/partition.py): scalar work beside arrays stays on
numpy, so a new shape of the block's arrays compiles nothing."""

import numpy as np
from differential import assert_same_as_numpy

from astjit import jit
from astjit.backends.partition import SCALAR_WORK_REASON


def start_values(r):
    """The lines before a recurrence's loop: an allocation and negated elements."""
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0 - alpha * alpha
    y[0] = -r[0]
    return y[:1], alpha, beta


def scaled(r):
    alpha = -r[0]
    return r * alpha + 1.0        # array work: a kernel


def test_scalar_work_in_a_block_of_arrays_compiles_nothing():
    jitted = jit(start_values)
    for n in (3, 10, 40, 41):
        r = np.random.default_rng(n).standard_normal(n)
        assert_same_as_numpy(start_values, r, jitted=jitted)
    entries = [e for f in jitted.fragments for e in f.entries]
    # (a block that chose Python runs inline for the next few calls, without looking at their sizes)
    assert 1 <= len(entries) <= 4 and all(e.mode == "python" and not any(s.compiled for s in e.segments
                                                                         if not s.reference) for e in entries)
    assert all(SCALAR_WORK_REASON in e.reasons.values() for e in entries)


def test_scalar_work_feeding_array_work_stays_in_the_kernel():
    jitted = jit(scaled)
    for n in (5, 17):
        assert_same_as_numpy(scaled, np.random.default_rng(n).standard_normal(n), jitted=jitted)
    assert {e.mode for f in jitted.fragments for e in f.entries} <= {"tvm", "mixed"}
    assert not any(r == SCALAR_WORK_REASON for f in jitted.fragments for e in f.entries for r in e.reasons.values())


def test_a_block_of_scalars_alone_is_still_compiled_and_measured():
    """Without arrays the block specializes once: its kernel is compiled, then timed against Python."""
    def formula(x, y):
        return (x * y + 1.0) / (x - y) - x * x

    jitted = jit(formula)
    for x, y in ((np.float64(2.0), np.float64(3.0)), (np.float64(-0.0), np.float64(1.5))):
        assert_same_as_numpy(formula, x, y, jitted=jitted)
    entries = [e for f in jitted.fragments for e in f.entries]
    assert len(entries) == 1 and entries[0].reasons is not None
    assert SCALAR_WORK_REASON not in entries[0].reasons.values()
