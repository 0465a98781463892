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


def test_failures_in_later_chunks():
    """Positions run in chunks of 2048: a failure at a chunk's first or last position, or in the
    last, shorter chunk, after earlier chunks stored everything."""
    a = rng.standard_normal(5000) * 10
    calls = [(with_bad_values(a, at, np.nan), 0.25, np.zeros(5000)) for at in (2047, 2048, 4095, 4096, 4999)]
    check(quantize, [(a, 0.25, np.zeros(5000))] + calls)


G = np.zeros(4)


def fill_inner(x, m):
    for j in range(m):
        G[j] = math.sqrt(x + j)          # a loop of its own, with its own value check
    return x


def fill(x, m):
    return fill_inner(x, m)


def calls_a_looping_helper(a, out, m):
    """The helper inlined two calls down holds a loop: the outer loop keeps its checked body."""
    for i in range(len(a)):
        out[i] = round(fill(float(a[i]), m) * 2.0)
    return out


def test_a_loop_whose_inlined_helper_loops():
    a = np.arange(1.0, 11.0)
    calls = [(a, np.zeros(10), 4), (with_bad_values(a, 5, np.nan), np.zeros(10), 4),
             (with_bad_values(a, 0, -50.0), np.zeros(10), 4), (with_bad_values(a, 9, np.inf), np.zeros(10), 3)]
    check(calls_a_looping_helper, calls)


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


def recurrence(v, m):
    for j in range(m):
        v[j + 1] = 1.0 / (float(v[j]) - 1.0)       # reads v[j], written at the previous position
    return 0.0


def runs_a_helper_loop(y, reps):
    """The helper's loop reads the array it writes under its parameter's name: it stays checked."""
    for _ in range(reps):
        recurrence(y, len(y) - 1)
    return y


def copy_over(src, dst, m):
    for j in range(m):
        dst[j] = 1.0 / float(src[j + 1])
    return 0.0


def helper_given_one_array_twice(y, reps):
    for _ in range(reps):
        copy_over(y, y, len(y) - 1)
    return y


def test_a_helper_loop_reading_what_it_writes():
    calls = [(np.full(n, 2.0), 1) for n in (6, 3000)] + [(np.array([3.0, 0.5, 2.0, 4.0]), 2)]
    check(runs_a_helper_loop, calls)
    check(helper_given_one_array_twice, [(np.array([1.0, 2.0, 4.0, 0.5, 1.0, 8.0]), 1),
                                         (np.array([1.0, 2.0, 0.5, 2.0, 1.0]), 3)])
