"""Integer +, - and * in compiled loops (scalar_math.wrapping): numpy ints wrap, Python ints stay exact
or raise the documented OverflowError, whatever the operands, and the form compiles to plain
instructions (no LLVM vector reduction left in the kernel, which kept such loops scalar and slow).
"""

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import explain

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]
rng = np.random.default_rng(47)
I64 = np.iinfo(np.int64)


def running_max_minus(x, out, k):
    for i in range(1, len(x)):
        out[i] = max(out[i - 1] - k, x[i])
    return out


def minus(x, out, k):
    for i in range(len(x)):
        out[i] = x[i] - k
    return out


def plus_times(x, out, k):
    for i in range(len(x)):
        out[i] = (x[i] + k) * k - x[i]
    return out


def edges(n):
    """int64 values at both ends of the type and in between."""
    base = np.array([I64.max, I64.min, I64.max - 1, I64.min + 1, 0, -1, 1, 2**62, -(2**62)], np.int64)
    return np.concatenate([base, rng.integers(I64.min, I64.max, n, dtype=np.int64, endpoint=True)])


@pytest.mark.parametrize("fn", [running_max_minus, minus, plus_times])
def test_int64_elements_and_a_python_int_wrap_as_numpy(fn):
    calls = [(edges(n), np.zeros(9 + n, np.int64), k) for n in (0, 1, 7, 100) for k in (3, -1, 2**40, -(2**47))]
    calls += [(np.arange(1, dtype=np.int64), np.zeros(1, np.int64), 5), (rng.integers(-9, 9, 50), np.zeros(50, np.int64), 0)]
    check(fn, calls)


def python_ints(n, k):
    s = 0
    for i in range(n):
        s = s - k
    return s


def test_python_ints_leaving_int64_raise_the_documented_overflow_error():
    check(python_ints, [(3, 5), (10, -(2**62)), (1, 2**62), (2, 2**62), (0, 2**62), (5, -(2**61))])


def fnv1a_64(data):
    h = 14695981039346656037
    for b in data:
        h ^= int(b)
        h = (h * 1099511628211) % 2**64
    return h


def test_an_int_starting_beyond_int64_keeps_the_loop_python_and_says_so():
    """A loop whose int starts as a constant beyond int64 would run its Python at every call, after the
    kernel's runner tested its arguments: it stays Python from the start, and explain says why."""
    jitted = check(fnv1a_64, [(rng.integers(0, 256, n).astype(np.uint8),) for n in (0, 1, 8, 50)], compiled=False)
    assert not [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    assert "'h' starts as 14695981039346656037, an int beyond int64" in str(explain(jitted))


def fnv1a_rounds(data, rounds):
    h = 14695981039346656037
    for _ in range(rounds):
        for b in data:
            h = (h ^ int(b)) * 1099511628211 % 2**64
    return h


def test_an_int_starting_beyond_int64_keeps_the_loops_inside_python_too():
    jitted = check(fnv1a_rounds, [(rng.integers(0, 256, n).astype(np.uint8), r) for n, r in ((8, 3), (0, 2), (30, 1))],
                   compiled=False)
    assert not [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    assert "'h' starts, in an outer loop, as an int beyond int64" in str(explain(jitted))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64])
def test_every_integer_dtype_wraps_as_numpy(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0, 1, info.max // 2, info.min // 2 + 1], dtype)

    def mixed(x, y, out):
        for i in range(len(x)):
            out[i] = (x[i] - y[i]) * y[i] + x[i] - (-y[i])
        return out

    check(mixed, [(x, x[::-1].copy(), np.zeros_like(x)), (x, np.roll(x, 2), np.zeros_like(x)),
                  (x[:1], x[1:2], np.zeros(1, dtype))])


def llvm_text(jitted) -> str:
    fragment = next(f for f in jitted.fragments if f.block.kind == "loop")
    return fragment.entries[0].segments[0].compiled.artifacts["llvm"]()


def test_a_difference_compiles_to_a_plain_instruction():
    jitted = check(running_max_minus, [(edges(50), np.zeros(59, np.int64), 3)])
    text = llvm_text(jitted)
    assert "llvm.vector.reduce" not in text and "sub i64" in text
