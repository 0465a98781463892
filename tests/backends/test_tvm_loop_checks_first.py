"""Loops whose checks run first (backends/tvm/loop_checks_first): a loop that reads no array it writes
finds the first position whose check fails with its stores left out, runs the positions before it
without checks, and from there the checked loop. Exceptions, in-place effects up to the failing
position and every variable's value and type must be Python's, wherever the failure is."""

import math
import re

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(4747)


def quantize(a, step, out):
    for i in range(len(a)):
        q, r = divmod(round(a[i] / step), 16)
        out[i] = q * step + r
    return out


def truncate_and_count(a, out):
    """A loop-carried Python int and a name bound only where a test holds, beside the checks."""
    total = 0
    for i in range(a.shape[0]):
        k = int(a[i])
        total += k
        out[i] = total
        if k > 3:
            big = i
    return total, big


def python_float_math(a, out):
    for i in range(a.shape[0]):
        x = float(a[i])
        out[i] = math.sqrt(x) + 1.0 / x
    return out


def rows_of_floors(a, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = math.floor(a[i, j]) * 2
    return out


def reads_what_it_writes(a, out):
    """``out`` is read where it is written: the checks cannot run first (the checked loop runs)."""
    for i in range(1, a.shape[0]):
        out[i] = round(out[i - 1] * 0.5 + a[i])
    return out


def with_bad_values(a, at, value):
    b = a.copy()
    b.flat[at] = value
    return b


def spoiled(n, values=(np.nan, np.inf, -np.inf)):
    """Arrays of ``n`` good values, and copies with one bad value first, in the middle and last."""
    a = rng.standard_normal(n) * 10
    return [a] + [with_bad_values(a, at, v) for v in values for at in sorted({0, n // 2, n - 1})]


def test_quantize_raises_where_python_does():
    calls = [(a, 0.25, np.zeros(len(a))) for n in (1, 9, 1000) for a in spoiled(n)]
    check(quantize, calls + [(a, 0.0, np.zeros(len(a))) for a in spoiled(5)[:2]])


def test_variables_and_flags_keep_python_values():
    calls = []
    for n in (1, 7, 500):
        for a in spoiled(n) + [np.abs(rng.standard_normal(n)), np.full(n, 5.5)]:
            calls.append((a, np.zeros(n)))
    check(truncate_and_count, calls)


def test_python_float_errors():
    calls = []
    for n in (2, 300):
        good = rng.random(n) + 0.5
        calls += [(good, np.zeros(n)), (with_bad_values(good, n // 2, 0.0), np.zeros(n)),
                  (with_bad_values(good, n - 1, -1.0), np.zeros(n)), (with_bad_values(good, 0, np.nan), np.zeros(n))]
    check(python_float_math, calls)


def test_inner_loop_of_a_nest():
    a = rng.standard_normal((20, 30)) * 5
    calls = [(a, np.zeros((20, 30), np.int64)), (with_bad_values(a, 317, np.nan), np.zeros((20, 30), np.int64)),
             (with_bad_values(a, 0, np.inf), np.zeros((20, 30), np.int64)),
             (with_bad_values(a, 599, -np.inf), np.zeros((20, 30), np.int64))]
    check(rows_of_floors, calls)


def test_a_loop_reading_what_it_writes_stays_checked():
    calls = [(a, np.zeros(len(a))) for a in spoiled(50)]
    jitted = check(reads_what_it_writes, calls)
    assert not FIRST_FAILING.search(kernel_text(jitted))


FIRST_FAILING = re.compile(r"(\w+) = T.min\(\1, T.Select\(")      # first = min(first, select(ok, count, k))


def kernel_text(jitted) -> str:
    (entry,) = [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    return entry.segments[0].compiled.artifacts["tir"]()


def test_the_kernel_finds_the_first_failing_position_first():
    """Part 1 takes the minimum failing position; part 2 is a counted loop up to it."""
    jitted = check(quantize, [(a, 0.25, np.zeros(len(a))) for a in spoiled(40)])
    text = kernel_text(jitted)
    assert FIRST_FAILING.search(text), text
    assert re.search(r"for \w+ in range\(\w+\):", text), text
