"""How a body is split into blocks (frontend/blocks, frontend/prepare) and what the rewrite looks like."""

import io
import math

import numpy as np
from differential import assert_same_as_numpy, jit_unmeasured, modes

from astjit import explain, jit

RNG = np.random.default_rng(4)
A = RNG.standard_normal(12)
B = RNG.standard_normal(12)


def lines_of(jf):
    return [f.lines for f in jf.fragments]


def straight_line(a, b):
    """A docstring is not a block."""
    t = a * b
    t = t + 1
    c = np.exp(t)
    return c


def test_consecutive_statements_form_one_block():
    jf = assert_same_as_numpy(straight_line, A, B)
    first = straight_line.__code__.co_firstlineno
    # the return expression is a name: nothing to hoist; the three assignments are one block
    assert lines_of(jf) == [(first + 2, first + 4)]
    assert jf.fragments[0].live_in == ["a", "b"]
    assert jf.fragments[0].live_out == ["c"]
    assert "__astjit_fragment_0(a, b)" in jf.source


def barrier_in_middle(a, b):
    t = a + b
    print_me = repr(t.shape)
    u = t * 2
    return u, print_me


def test_untraceable_statement_splits_blocks_and_is_explained():
    jf = assert_same_as_numpy(barrier_in_middle, A, B)
    first = barrier_in_middle.__code__.co_firstlineno
    assert lines_of(jf) == [(first + 1, first + 1), (first + 3, first + 3)]
    records = [r for r in explain(jf) if r.kind == "statement"]
    assert [r.lineno for r in records] == [first + 2]
    assert "repr" in records[0].message
    assert "print_me = repr(t.shape)" in records[0].source


def test_test_and_return_join_the_block_before():
    def g(a):
        y = a * 2
        if y.sum() > 0:
            z = y + 1
        else:
            z = y - 1
        return np.tanh(z) * 2

    jf = jit(g)
    assert_same_as_numpy(g, A, jitted=jf)
    assert_same_as_numpy(g, -np.abs(A) - 1, jitted=jf)
    first = g.__code__.co_firstlineno
    # y = ... and the hoisted test are one fragment; each branch one; the return expression one
    assert lines_of(jf) == [(first + 1, first + 2), (first + 3, first + 3), (first + 5, first + 5),
                            (first + 6, first + 6)]
    assert "if __astjit_cond_" in jf.source
    assert "return __astjit_ret_" in jf.source


def elif_chain(a, k):
    if a.sum() > 100:
        return a
    elif a.mean() > k:
        y = a * k
    elif k > 1:
        y = a - k
    else:
        y = a + k
    return y


def test_elif_tests_are_evaluated_lazily():
    jf = jit(elif_chain)
    for k in (-10.0, 2.0, 0.0):
        assert_same_as_numpy(elif_chain, A, k, jitted=jf)
    assert_same_as_numpy(elif_chain, A + 100, 0.0, jitted=jf)


def block_without_work(a):
    x = 1
    y = (x, 2)
    z = a
    return z, y


def test_statements_without_array_work_are_not_fragments():
    jf = assert_same_as_numpy(block_without_work, A)
    assert jf.fragments == []


def allocations_and_element_stores(a):
    out = np.empty_like(a)
    out[0] = a[0]
    counts = np.zeros(a.shape[0], dtype=np.int64)
    counts[-1] += 2
    view = out[1:]
    view[...] = a[-1]
    return out, counts, view.T


def test_blocks_that_only_allocate_views_and_store_elements_are_not_fragments():
    # a kernel does none of this faster than numpy: a Fragment would only add a dispatch per call
    for a in (A, B[:3], np.arange(5, dtype=np.int32), np.ones((4, 2), np.float32)):
        jf = assert_same_as_numpy(allocations_and_element_stores, a)
        assert jf.fragments == []


def start_from_math_constants(a):
    m = -math.inf
    lo, hi = -math.pi, math.tau * 2
    for i in range(len(a)):
        m = max(m, a[i])
    return m, lo, hi


def test_arithmetic_on_math_constants_is_a_constant_not_a_fragment():
    # ``-math.inf`` before a loop cost a Fragment dispatch per call (0.1 us), for one negation
    for a in (A, np.arange(3.0), np.zeros(0)):
        jf = assert_same_as_numpy(start_from_math_constants, a)
        assert all(f.block.kind == "loop" for f in jf.fragments)


def barriers(a, b):
    t = a + b
    del b
    s = t if t.sum() > 0 else -t
    u = lambda v: v * 2  # noqa: E731
    w = u(s)
    k = t.sum() and s.sum()
    return w, k


def test_barrier_kinds_are_reported():
    jf = assert_same_as_numpy(barriers, A, B)
    text = str(explain(jf))
    assert "conditional expression" in text
    assert "lambda" in text
    assert "'and'/'or'" in text


def expression_statements(a, out):
    out.append(1)
    np.exp(a)
    b = a * 2
    return b, out


def test_expression_statements_stay_python():
    jf = assert_same_as_numpy(expression_statements, A, [])
    reasons = " ".join(r.message for r in explain(jf))
    assert "expression statement" in reasons


def match_statement(a, mode):
    match mode:
        case "double":
            y = a * 2
        case "neg":
            y = -a
        case _:
            y = a + 0.5
    return y


def test_match_statement_bodies_are_blocks():
    jf = jit(match_statement)
    for mode in ("double", "neg", "other"):
        assert_same_as_numpy(match_statement, A, mode, jitted=jf)
    assert "match mode" in jf.source
    assert len(jf.fragments) == 3 and modes(jf) <= {"tvm", "mixed"}


def annotated(a: np.ndarray, n: int = 2) -> np.ndarray:
    y: np.ndarray = a * n
    return y


def test_annotations_are_kept_on_the_function_not_reevaluated():
    jf = assert_same_as_numpy(annotated, A)
    assert jf.__annotations__ == annotated.__annotations__
    assert jf.__name__ == "annotated" and jf.__doc__ == annotated.__doc__


def test_show_prints_source_and_fragments():
    jf = jit(straight_line)
    jf(A, B)
    buf = io.StringIO()
    jf.show(file=buf)
    text = buf.getvalue()
    assert "__astjit_fragment_0" in text and "live-in (a, b)" in text and "live-out (c)" in text
    info = jf.cache_info()
    assert list(info) == ["__astjit_fragment_0"] and len(info["__astjit_fragment_0"]) == 1


def tuple_unpack_and_subscript(a):
    x, y = a * 2, a + 1
    m, n = a.shape[0], a.ndim
    b = a.copy()
    b[1:4] = x[:3]
    b[0] = y[-1] + m + n
    return b, x


def test_tuple_unpacking_and_subscript_assignment_in_a_block():
    jf = assert_same_as_numpy(tuple_unpack_and_subscript, A)
    assert len(jf.fragments) == 1


def scaled_by_its_dims(x, t):
    n, m = x.shape
    p, (q,) = t
    return x * n + m * p - q


def test_unpacking_a_shape_or_tuple_of_another_length_raises_as_python_does():
    """``n, m = x.shape`` is how a function insists on 2-d input: a 3-d array (or a tuple of three)
    raises Python's ValueError, at every call and whatever was compiled before, never unpacks its
    first items; a number raises TypeError. (Unmeasured: every call reaches the compiled path.)"""
    jf = jit_unmeasured(scaled_by_its_dims)
    two_d = RNG.standard_normal((3, 4))
    for x, t in [(two_d, (2.0, (1.5,))), (two_d[:2], (-1.0, [0.5])), (np.ones((2, 3, 4)), (2.0, (1.5,))),
                 (two_d, (2.0, (1.5,), 3.0)), (two_d, (2.0, (1.5, 2.5))), (np.ones(5), (2.0, (1.5,))),
                 (two_d, (2.0, ())), (two_d, (2.0, 7)), (two_d, (2.0, (1.5,))), (np.ones((2, 3, 4)), (1.0, (0.0,)))]:
        assert_same_as_numpy(scaled_by_its_dims, x, t, jitted=jf)
    assert "tvm" in modes(jf)


def errstate_body(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        x = a / 0
        y = x * 2 + 1
    return y


def test_errstate_body_is_one_block_because_errstate_never_suppresses():
    jf = assert_same_as_numpy(errstate_body, np.array([1.0, -1.0, 0.0]))
    assert len(jf.fragments) == 1 and len(jf.fragments[0].block.stmts) == 2


def rows_affine(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0 + 1.0
    return out


def test_a_loop_regions_python_form_calls_its_body_block_in_every_transform():
    """The loop's Python (where the kernel is not used) runs its body's block as a Fragment, whichever
    order the statement lists were allocated in: the rewrite once depended on their ids, so a body's
    block was sometimes plain Python, differently from one process to the next."""
    from astjit.frontend.transform import transform

    for _ in range(40):
        transformed = transform(rows_affine)
        assert [f.block.kind for f in transformed.fragments] == ["loop", "block"]
        body_call = f"__astjit_fragment_{transformed.fragments[1].index}"
        # referenced by the rewritten function itself, not only by the region's fallback function
        assert body_call in transformed.function.__code__.co_freevars
