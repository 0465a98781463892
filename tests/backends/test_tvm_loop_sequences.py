"""Tuples and lists of numbers read by compiled loops (loop_types.Sequence): the kernel takes their items
as an array, each item read as the Python number it is; any other use keeps the loop in Python."""

import re

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import horner

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(5)
WEIGHTS = (0.25, 0.5, 0.25)


class Settings:
    taps = [1.0, -1.0]


def item_total(c):
    """The sum's type follows the items': an int for ints, a float for floats, numpy's for numpy's."""
    s = 0
    for i in range(len(c)):
        s += c[i]
    return s


def picked(c, idx):
    """Indices from an array: negative ones wrap, one out of range raises the tuple's own IndexError."""
    s = 0.0
    for j in idx:
        s += c[j]
    return s


def smoothed(a, out):
    """A module-level tuple read in the loop."""
    for i in range(1, len(a) - 1):
        out[i] = WEIGHTS[0] * a[i - 1] + WEIGHTS[1] * a[i] + WEIGHTS[2] * a[i + 1]
    return out


def differenced(a, out):
    """A class attribute holding a list, read at each call."""
    for i in range(len(a) - 1):
        out[i] = Settings.taps[0] * a[i + 1] + Settings.taps[1] * a[i]
    return out


def flags_count(flags):
    n = 0
    for f in flags:
        if f:
            n += 1
    return n


def repeated(c, n):
    s = 0.0
    for _ in range(n):
        d = c * 2                               # a tuple's repetition, not arithmetic
        s += len(d)
    return s


def test_a_tuple_or_list_of_floats_is_read_in_the_kernel():
    x = rng.random(9)
    check(horner, [((1.0, -2.0, 0.5, 3.0), x, np.zeros(9)), ([2.0, 1.0], x[:4], np.zeros(4)),
                   ((0.5,), x, np.zeros(9)), ((1.0, 2.0), x[:0], np.zeros(0)),
                   ((np.nan, 1.0, -0.0), x, np.zeros(9)), ((-0.0, np.inf), x[:3], np.zeros(3))])


@pytest.mark.parametrize("items", [
    (1, 2, 3, 2**62, -2**62),
    [1.5, -0.0, float("inf")],
    (np.float32(1.5), np.float32(2.25)),
    [np.int32(7), np.int32(-3)],
    (True, False, True),
])
def test_item_types_are_python_numbers_or_numpy_scalars_as_given(items):
    check(item_total, [(items,), (items[:1],), (type(items)(reversed(items)),)])


def test_a_call_with_items_of_another_type_runs_as_python_with_their_results():
    jitted = check(item_total, [((1.5, 2.5),)])
    for items in [(1, 2), (1.5, 2), (2**70, 1), (), [np.float64(1.0)], (1.5, "a")]:
        try:
            expected = item_total(items)
        except TypeError as exc:
            with pytest.raises(TypeError, match=re.escape(str(exc))):
                jitted(items)
            continue
        got = jitted(items)
        assert type(got) is type(expected) and got == expected, (items, got, expected)


def test_negative_indices_wrap_and_one_out_of_range_raises_the_tuples_index_error():
    idx = [np.array([0, -1, 2, -3]), np.array([1, 3]), np.array([-4]), np.array([], np.int64)]
    check(picked, [((1.0, 2.0, 4.0), i) for i in idx] + [([1.0, 2.0, 4.0], i) for i in idx])
    with pytest.raises(IndexError, match="^tuple index out of range$"):
        jit(picked)((1.0, 2.0, 4.0), np.array([0, 3]))
    with pytest.raises(IndexError, match="^list index out of range$"):
        jit(picked)([1.0, 2.0, 4.0], np.array([-4]))


def test_a_module_level_tuple_or_list_is_read_as_it_is_at_each_call():
    global WEIGHTS
    check(smoothed, [(rng.random(n), np.zeros(n)) for n in (7, 2, 30)])
    jitted = jit(smoothed)
    a = rng.random(6)
    try:
        for weights in [(1.0, 0.0, 0.0), (0.5, 0.0, 0.5), (1, 2, 3)]:
            WEIGHTS = weights
            assert np.array_equal(jitted(a, np.zeros(6)), smoothed(a, np.zeros(6)))
    finally:
        WEIGHTS = (0.25, 0.5, 0.25)
    check(differenced, [(rng.random(n), np.zeros(n)) for n in (5, 1)])
    Settings.taps = [2.0, 0.5]
    check(differenced, [(rng.random(4), np.zeros(4))])


def test_a_tuple_of_bools():
    check(flags_count, [((True, False, True),), ([False] * 5,), ((True,),)])


def test_other_uses_of_a_tuple_keep_the_loop_in_python_and_say_why():
    jitted = check(repeated, [((1.0, 2.0), 3), ((1.0,), 0)], compiled=False)
    assert "'c' holds a tuple of 2, which a compiled loop reads only by a constant index" in str(jitted.explain())


def test_a_short_tuple_compiles_for_its_length():
    """A tuple of up to 8 items keys the kernel by its length (the loop over it has a known trip count,
    unrolled by LLVM): another length is another kernel, a longer tuple one kernel for any length."""
    x = rng.random(50)
    calls = [((1.0, -2.0, 0.5), x, np.zeros(50)), ((0.5, 1.5, -1.0), x, np.zeros(50)),
             ((1.0, 2.0, 3.0, 4.0, 5.0), x, np.zeros(50)), ((2.0,), x[:7], np.zeros(7)),
             (tuple(rng.random(9)), x, np.zeros(50)), (tuple(rng.random(12)), x, np.zeros(50)),
             ((1.0, 2.0), x, np.zeros(10))]
    jitted = check(horner, calls)
    keys = [e.key[0] for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    assert sorted(99 if k.length is None else k.length for k in keys) == [1, 2, 3, 5, 99]


def test_items_of_another_type_than_the_first_calls_get_a_kernel_of_their_own():
    """A tuple's key holds the type its items share: numpy floats after Python floats (or ints, numpy
    float32) compile a kernel of their own, where the first one's key kept sending them to the loop's
    Python, slower than plain Python. Items of mixed types run as Python."""
    x = rng.random(20)
    kinds = [float, np.float64, int, np.float32, float, np.float64]
    calls = [(tuple(map(t, (1.0, -2.0, 3.0, 0.5))), x, np.zeros(20)) for t in kinds]
    calls += [(tuple(map(t, rng.integers(-3, 4, 11))), x, np.zeros(20)) for t in (float, np.float64, int)]
    jitted = check(horner, calls)
    keys = {e.key[0] for f in jitted.fragments if f.block.kind == "loop" for e in f.entries}
    assert {(k.length, k.item) for k in keys} == {(4, float), (4, np.float64), (4, int), (4, np.float32),
                                                  (None, float), (None, np.float64), (None, int)}
    assert "runs as Python" not in str(jitted.explain())
    mixed = check(horner, [((1, -0.5, 2, 0.25), x, np.zeros(20)), ((1.0, 2), x, np.zeros(20))], compiled=False)
    assert "mixed" in str(mixed.explain()) or "items" in str(mixed.explain()), str(mixed.explain())


def test_a_tuple_key_is_its_length_and_item_type_whichever_tuple_came_before():
    """The key of the tuple keyed last is remembered by identity (the same constant tuple at each
    call); any other tuple is keyed from its items."""
    from astjit.runtime.keys import tuple_key

    coeffs = (1.0, 2.0)
    for value, length, item in [(coeffs, 2, float), (coeffs, 2, float), ((), 0, None), ((1, 2), 2, int),
                                (tuple(np.arange(3.0)), 3, np.float64), ((1, 2.0), 2, None), (coeffs, 2, float),
                                ((True,) * 9, None, bool), ((), 0, None)]:
        key = tuple_key(value)
        assert (key.length, key.item) == (length, item), value


def test_a_long_tuple_is_keyed_by_its_first_item_and_converted_only_with_items_of_its_type():
    """Typing each item of a long tuple cost 1.8 ms a call at 100,000 items: its key reads the first
    item's type, and the runner's conversion tests the others."""
    from astjit.runtime.keys import TYPED_ITEMS_AT_MOST, tuple_key

    many = tuple(float(v) for v in rng.random(TYPED_ITEMS_AT_MOST + 1))
    assert (tuple_key(many).length, tuple_key(many).item) == (None, float)
    mixed = many[:-1] + (1,)
    assert (tuple_key(mixed).length, tuple_key(mixed).item) == (None, float)
    check(item_total, [(many,), (mixed,), (many,), (many[:TYPED_ITEMS_AT_MOST - 1] + (1, 2.5),)], compiled=False)
    # a tuple of mixed items first: its key's kernel is made for the first item's type, which the
    # all-float tuples after it run
    jitted = check(item_total, [(mixed,), (many,), (mixed,), (many[::-1],)])
    assert {e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries} == {"tvm"}


def test_a_list_is_keyed_by_its_first_items_type():
    """``list(a)`` gives numpy floats: after a list of Python floats its items got the loop's Python (the
    first kernel refuses them), each step calling the body's block, 0.55x plain Python. Now each item
    type compiles a kernel of its own; mixed items still run as Python."""
    x = rng.random(30)
    values = [1.0, -2.0, 3.0, 0.5, 0.25]
    calls = [([t(v) for v in values], x, np.zeros(30)) for t in (float, np.float64, np.float32, float, np.float64)]
    calls += [(list(rng.random(7)), x, np.zeros(30)), (rng.random(6).tolist(), x, np.zeros(30))]
    jitted = check(horner, calls)
    keys = {e.key[0] for f in jitted.fragments if f.block.kind == "loop" for e in f.entries}
    assert {k.item for k in keys} == {float, np.float64, np.float32}
    assert "runs as Python" not in str(jitted.explain())
    check(horner, [([1.0, np.float64(2.0)], x, np.zeros(30)), ([], x, np.zeros(30))], compiled=False)
