"""Indices that are negative at a loop's entry, Python's wrap-around (``x[i - 1]`` from ``i = 0``, a
periodic boundary): proven within ``-extent <= index < extent`` (backends/tvm/loop_bounds.py), they
run in the unchecked copy of the loop, wrapped there. An index below ``-extent`` or at ``extent`` and
above still raises IndexError where Python does, with the writes before it kept (the checked copy).

Each function is called on one jitted function with sizes 0, 1, 2 and larger, where the proof holds
and where it fails.
"""

import re

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]
rng = np.random.default_rng(46)


def neighbours(c, o):
    n = len(c)
    for i in range(len(o)):
        o[i] = c[i - 1] + c[i] + c[(i + 1) % n]
    return o


def test_a_periodic_neighbour_wraps_at_every_size():
    """c[i - 1] reads c[-1] at i = 0; an ``o`` longer than ``c`` sends c[i] past its end (IndexError
    after the earlier elements were written)."""
    check(neighbours, [(rng.random(n), np.zeros(n)) for n in (1, 2, 3, 17, 100)]
          + [(rng.random(5), np.zeros(7)), (rng.random(4), np.zeros(0)), (rng.random(6), np.zeros(3))])


def two_back(c, o):
    for i in range(len(o)):
        o[i] = 1.0
        o[i] += c[i - 2]
    return o


def test_an_index_below_minus_the_extent_raises_after_the_writes_before_it():
    """c[i - 2] at i = 0 is c[-2]: in range for len(c) >= 2, an IndexError for len(c) == 1 after
    o[0] was set; past the end of a short ``c`` later."""
    check(two_back, [(rng.random(1), np.zeros(3)), (rng.random(2), np.zeros(2)), (rng.random(2), np.zeros(5)),
                     (rng.random(8), np.zeros(8)), (rng.random(1), np.zeros(0)), (rng.random(3), np.zeros(1))])


def stepping_down(c, o):
    for i in range(0, -len(o), -1):
        o[-i] = c[i - 1] * 2.0 - c[i]
    return o


def test_a_negative_step_wraps_each_index():
    """i runs 0, -1, -2, ...: c[i - 1] and c[i] wrap from the end; an ``o`` longer than ``c`` goes
    below -len(c)."""
    check(stepping_down, [(rng.random(n), np.zeros(n)) for n in (1, 2, 5, 33)]
          + [(rng.random(3), np.zeros(5)), (rng.random(4), np.zeros(0))])


def ising_energy(s, h):
    n, m = s.shape
    e = 0.0
    for i in range(n):
        for j in range(m):
            e -= s[i, j] * (s[i - 1, j] + s[i, j - 1] + h)
    return e


def test_a_periodic_lattice_in_both_axes():
    spins = [rng.choice(np.array([-1, 1], np.int8), size) for size in ((1, 1), (2, 1), (1, 2), (2, 2), (5, 7))]
    check(ising_energy, [(s, 0.5) for s in spins] + [(spins[-1].T, -1.0), (np.zeros((0, 3), np.int8), 0.0)])


def rule_step(c, o, rule):
    n = len(c)
    for i in range(n):
        o[i] = (rule >> (4 * c[i - 1] + 2 * c[i] + c[(i + 1) % n])) & 1
    return o


def test_a_cellular_automaton_on_uint8():
    cells = [rng.integers(0, 2, n).astype(np.uint8) for n in (1, 2, 3, 64)]
    check(rule_step, [(c, np.zeros_like(c), rule) for c in cells for rule in (30, 110)])


def kernel_text(jitted) -> str:
    fragment = next(f for f in jitted.fragments if f.block.kind == "loop")
    return fragment.entries[0].segments[0].compiled.artifacts["tir"]()


def test_the_wrapped_index_runs_in_the_counted_loop():
    """The proven copy is a plain ``for`` (no ``while``, the checked form) that wraps c[i - 1], and
    its entry asks c[i - 1] only for ``-len(c) <= i - 1``."""
    jitted = check(neighbours, [(rng.random(50), np.zeros(50))])
    text = kernel_text(jitted)
    entry = text[:text.index("for v in")]
    proven = text[text.index("for v in"):text.index("else:")]
    assert "while" not in proven
    assert re.search(r"T\.Select\((\w+) < T\.int64\(0\), \1 \+ c_n0, \1\)", proven)
    assert re.search(r"- T\.int64\(1\) >= T\.int64\(0\) - c_n0", entry)
