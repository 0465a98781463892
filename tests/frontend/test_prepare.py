"""Hoisting ``if`` tests into assignments (frontend/prepare) and joining them back for code that runs as
written (a loop's as-written path): the joined tree is the source's own."""

import ast
import textwrap

import gast

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
