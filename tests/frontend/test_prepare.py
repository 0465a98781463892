"""Hoisting ``if`` tests into assignments (frontend/prepare) and joining them back for code that runs as
written (a loop's as-written path): the joined tree is the source's own."""

import ast
import textwrap

import gast
import numpy as np
import pytest
from differential import assert_values_match

from astjit import jit
from astjit.frontend.prepare import Hoister, rejoin_tests

SOURCE = textwrap.dedent("""\
    def f(xs, t):
        for v in xs:
            if v > 0.5:
                t += v * 2.0
            elif v < -1.0:
                t -= v
            else:
                try:
                    if abs(v) > 0.25:
                        t = t * v
                except ValueError:
                    if t > 1.0:
                        t = 0.0
                finally:
                    if v == t:
                        t += 1.0
        return t
""")


def _unparsed(tree) -> str:
    return ast.unparse(gast.gast_to_ast(tree))


def test_hoisted_tests_join_their_ifs_again_at_every_depth():
    tree = gast.parse(SOURCE)
    fndef = tree.body[0]
    fndef.body = Hoister(lambda expr: True).body(fndef.body)
    hoisted = _unparsed(tree)
    assert hoisted.count("__astjit_cond_") >= 8           # (tests stored and read, at several depths)
    rejoin_tests(fndef)
    assert _unparsed(tree) == ast.unparse(ast.parse(SOURCE))


def test_a_name_that_is_not_a_hoisted_test_stays():
    source = "def g(a):\n    c = a > 0\n    if c:\n        a = -a\n    return a\n"
    tree = gast.parse(source)
    rejoin_tests(tree.body[0])
    assert _unparsed(tree) == ast.unparse(ast.parse(source))


class Counted:
    """An attribute read through a property: each read counts."""

    def __init__(self, value):
        self._value, self.reads = value, 0

    @property
    def value(self):
        self.reads += 1
        return self._value


def returns_a_read_then_its_count(xs):
    data = Counted(xs[0] + 1.0)
    return np.sum(np.stack([xs[0], xs[1]]) - data.value), data.reads, xs[0] * 2.0


def returns_a_call_then_an_array_it_changed(xs):
    return xs.sort(), xs * 2.0, xs[0] + 1.0


READS = 0


class CountedGlobally:
    @property
    def value(self):
        global READS
        READS += 1
        return 2.0


def returns_a_global_then_what_counts_it(xs):
    global READS
    READS = 0
    d = CountedGlobally()
    return READS, np.sum(xs * d.value)


def returns_a_maybe_unbound_name_then_an_index(xs):
    if xs.shape[0] > 100:
        x = 1.0
    return x, xs[50]  # noqa: F821


def returns_an_undefined_global_then_a_broadcast(xs):
    return UNDEFINED_GLOBAL, xs + xs[:2]  # noqa: F821


@pytest.mark.parametrize("fn", [returns_a_read_then_its_count, returns_a_call_then_an_array_it_changed,
                                returns_a_global_then_what_counts_it, returns_a_maybe_unbound_name_then_an_index,
                                returns_an_undefined_global_then_a_broadcast])
def test_a_returned_tuple_keeps_its_values_in_order(fn):
    """A value that stays in the ``return`` (it runs as Python) is computed before the values after it:
    those are hoisted before the ``return`` only up to it."""
    jf = jit(fn)
    for k in range(4):
        xs = np.random.default_rng(k).standard_normal((3 + k, 5 + k))
        try:
            want = fn(xs.copy())
        except Exception as exc:       # (the first value's error, not a later one's)
            with pytest.raises(type(exc)):
                jf(xs)
            continue
        got = jf(xs)
        assert_values_match(got, want)
