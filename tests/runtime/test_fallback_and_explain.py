"""Bad input and unsupported code: the jitted function returns what plain Python returns, explain()
names the line and the reason, strict mode raises StrictModeError with file, line and caret, and
ASTJIT_DISABLE runs the original."""

import inspect
import math

import numpy as np
import pytest
from differential import assert_same_as_numpy, modes

import astjit
from astjit import StrictModeError, explain, jit

RNG = np.random.default_rng(7)
A = RNG.standard_normal(8)
B = RNG.standard_normal(8)


def line_of(fn, marker) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def kernel(a, b):
    c = a * 2 + b
    d = c.sum() - a
    return c, d


class Tagged(np.ma.MaskedArray):
    pass


# -- non-array and unusual inputs -----------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),                                  # lists
    (np.ma.masked_array(A, mask=A > 0), B),                              # MaskedArray subclass of ndarray
    (Tagged(A, mask=A < 0), np.ma.masked_array(B, mask=B > 1)),          # a subclass of MaskedArray
    (A.astype(np.complex128) * (1 + 2j), B.astype(np.complex128)),       # complex128
    (A.astype(np.float16), B.astype(np.float16)),                        # float16
    (np.arange(8, dtype=np.uint8), np.arange(8, dtype=np.int8)),         # small ints, mixed sign
    (np.array([True, False] * 4), B),                                    # bool
    (3, 4.5),                                                            # Python scalars
    (np.float32(3), np.int64(4)),                                        # numpy scalars
], ids=["lists", "masked", "masked-subclass", "complex128", "float16", "uint8-int8", "bool", "py-scalars",
        "np-scalars"])
def test_unusual_inputs_give_plain_python_results(args):
    jf = jit(kernel)
    assert_same_as_numpy(kernel, A, B, jitted=jf)            # first compiled for float64 arrays
    assert_same_as_numpy(kernel, *args, jitted=jf)
    assert_same_as_numpy(kernel, A, B, jitted=jf)            # the compiled entry is still right


def scaled(pts, s):
    q = pts * s + 1.0
    return np.sqrt((q * q).sum(axis=1)), q * (0.5, 2.0, -1.0)


def test_a_tuple_used_as_an_array_operand_runs_as_python_for_any_values():
    """numpy makes an array of a tuple or list operand at each call. As a value of the specialization
    each call compared its items and ran numpy's interpreter (a per-axis scale ``(sx, sy, sz)`` 0.6x,
    a tuple of 8 floats 0.17x plain Python): the block runs its Python, whatever the values."""
    jf = jit(scaled)
    pts = RNG.random((5000, 3))
    for s in [(1.0, 2.0, 0.5), (3, -1, 0), (np.nan, -0.0, np.inf), (True, 2.5, 1), [1.0, 2.0, 3.0],
              (2.0,), (1.0, 2.0, 0.5)]:
        assert_same_as_numpy(scaled, pts, s, jitted=jf)
    with pytest.raises(ValueError, match="broadcast"):
        jf(pts, (1.0, 2.0))
    assert modes(jf) == {"python"}
    assert "'s' is a tuple used as an array operand of multiply" in str(explain(jf))
    assert len(jf.fragments[0].entries) == 2           # (one for tuples, one for lists: not per value)


def test_masked_array_is_not_unmasked():
    jf = jit(kernel)
    jf(A, B)
    m = np.ma.masked_array(A, mask=A > 0)
    c, d = jf(m, B)
    assert type(c) is np.ma.MaskedArray and type(d) is np.ma.MaskedArray
    np.testing.assert_array_equal(c.mask, kernel(m, B)[0].mask)


def string_input(a, s):
    t = a * 2
    u = s * 2
    return t, u


def test_string_inputs():
    jf = assert_same_as_numpy(string_input, A, "ab")
    assert_same_as_numpy(string_input, "xy", "ab", jitted=jf)
    assert_same_as_numpy(string_input, [1, 2], (3,), jitted=jf)


def test_ragged_inputs_raise_numpys_error():
    ragged = [[1.0, 2.0], [3.0]]
    assert_same_as_numpy(kernel, ragged, B)                  # list * 2 + array: numpy's ValueError
    objs = np.empty(2, dtype=object)
    objs[0], objs[1] = np.ones(2), np.ones(3)
    assert_same_as_numpy(kernel, objs, objs)


def test_object_and_string_dtype_arrays_fall_back_and_are_explained():
    jf = jit(kernel)
    objs = np.array([1, 2.5, 3], dtype=object)
    assert_same_as_numpy(kernel, objs, objs, jitted=jf)
    text = str(explain(jf))
    assert f"{__file__}:{line_of(kernel, 'c = a * 2 + b')}" in text
    assert "object" in text


# -- unknown calls ------------------------------------------------------------------------------------
def user_function(x):
    return x[::-1] * 3


def unknown_calls(m, v, log):
    w = m @ v
    x = np.linalg.solve(m, v)
    print("solved", file=log)
    y = user_function(x) + w
    z = y * 2
    return z


class Sink:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def __eq__(self, other):
        return type(other) is Sink and other.text == self.text


def test_unknown_calls_run_as_python_and_are_explained():
    m = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
    v = RNG.standard_normal(4)
    jf = assert_same_as_numpy(unknown_calls, m, v, Sink())
    records = [r for r in explain(jf) if r.kind == "statement"]
    by_line = {r.lineno: r.message for r in records}
    solve = line_of(unknown_calls, "np.linalg.solve")
    printed = line_of(unknown_calls, "print(")
    user = line_of(unknown_calls, "user_function(x)")
    assert "solve" in by_line[solve]
    assert "print" in by_line[printed]
    assert "user_function" in by_line[user]
    text = str(explain(jf))
    for line in (solve, printed, user):
        assert f"{__file__}:{line}" in text
    assert "np.linalg.solve(m, v)" in text
    assert modes(jf) & {"tvm", "mixed"}                       # the other blocks still compile


# -- strict mode --------------------------------------------------------------------------------------
def solve_strict(m, v):
    w = m * 2
    x = np.linalg.solve(w, v)
    return x


def check_strict_message(exc, fn, marker):
    message = str(exc.value)
    line = line_of(fn, marker)
    assert __file__ in message
    assert f"line {line}" in message
    lines = message.splitlines()
    src = next(i for i, text in enumerate(lines) if i > 0 and marker in text)
    assert src + 1 < len(lines) and set(lines[src + 1].strip()) == {"^"}, message
    return message


def test_strict_mode_unknown_call_raises_with_file_line_and_caret():
    jf = jit(solve_strict, strict=True)
    m = np.eye(3) + 1
    v = np.ones(3)
    with pytest.raises(astjit.StrictModeError) as exc:
        jf(m, v)
    message = check_strict_message(exc, solve_strict, "np.linalg.solve")
    assert "solve" in exc.value.reason
    assert exc.value.lineno == line_of(solve_strict, "np.linalg.solve")
    caret_line = message.splitlines()[-1]
    source_line = message.splitlines()[-2]
    # the caret points into the call
    assert source_line[caret_line.index("^"):].startswith("np.linalg.solve")


def strict_dtype(a):
    b = a * 2
    return b


def test_strict_mode_unsupported_input_raises_with_file_line_and_caret():
    jf = jit(strict_dtype, strict=True)
    np.testing.assert_array_equal(jf(A), A * 2)
    with pytest.raises(astjit.StrictModeError) as exc:
        jf(np.array(["a", "b"]))
    check_strict_message(exc, strict_dtype, "b = a * 2")


@pytest.mark.parametrize("dtype", [np.complex128, np.float16])
def test_strict_mode_raises_where_nothing_in_the_block_compiles(dtype):
    """A block whose every op runs on numpy (complex or float16 data) ran as Python under strict=True."""
    jf = jit(strict_dtype, strict=True)
    np.testing.assert_array_equal(jf(A), A * 2)
    with pytest.raises(astjit.StrictModeError, match="nothing in this block compiles") as exc:
        jf(A.astype(dtype))
    check_strict_message(exc, strict_dtype, "b = a * 2")
    assert_same_as_numpy(strict_dtype, A.astype(dtype))       # the default runs it as Python


def branches(a, flag):
    if flag:
        return a * 2.0 + 1.0
    return a - 1.0


def test_explain_says_which_blocks_no_call_has_reached(kernels_measure_faster):
    """Before any call (and for a branch not taken so far) explain said every block compiled."""
    jf = jit(branches)
    assert str(explain(jf)) == ("branches: nothing fell back so far; 2 blocks not reached by a call yet (each "
                                "compiles at the first call that runs it).")
    assert_same_as_numpy(branches, np.ones(5), True, jitted=jf)
    assert "1 block not reached" in str(explain(jf))
    assert_same_as_numpy(branches, np.ones(5), False, jitted=jf)
    assert "not reached" not in str(explain(jf))


def smoothed(a, out):
    for i in range(1, len(a) - 1):
        out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]
    return out


def test_a_compiled_loops_body_is_not_a_block_waiting_for_a_call():
    """The loop's body is a block of its own, run only where the loop runs as Python: a loop compiled
    whole left explain saying it was not reached yet."""
    jf = jit(smoothed)
    assert "1 block not reached" in str(explain(jf))
    for n in (50, 60, 50):
        assert_same_as_numpy(smoothed, np.linspace(0, 1, n), np.zeros(n), jitted=jf)
    assert "not reached" not in str(explain(jf))


def strict_combined(a, b, m):
    c = a * 2 + b
    return c.sum(), m @ a


def test_strict_mode_leaves_numpys_own_errors_to_raise_at_the_users_line():
    """Arguments that make numpy raise (shapes that do not broadcast, a matmul's core dimensions, a bad
    operand type) are the user's error, raised as numpy raises it, not a StrictModeError."""
    jf = jit(strict_combined, strict=True)
    rng = np.random.default_rng(0)
    good = (rng.random(4), rng.random(4), rng.random((3, 4)))
    assert_same_as_numpy(strict_combined, *good, jitted=jf)
    for args in ((rng.random(4), rng.random(5), good[2]), (good[0], good[1], rng.random((3, 5))),
                 (good[0], "x", good[2])):
        with pytest.raises(Exception) as plain:
            strict_combined(*args)
        with pytest.raises(type(plain.value)) as jitted:
            jf(*args)
        assert not isinstance(jitted.value, StrictModeError) and str(jitted.value) == str(plain.value)
        assert jitted.traceback[-1].lineno == plain.traceback[-1].lineno
    assert_same_as_numpy(strict_combined, *good, jitted=jf)


def strict_reads_locals(a):
    b = a * 2
    return sorted(locals())


def test_strict_mode_raises_with_file_line_and_caret_where_the_function_reads_its_locals():
    """strict=True raised the base AstjitError, with no file and no caret, for a call of locals()."""
    jf = jit(strict_reads_locals, strict=True)
    with pytest.raises(astjit.StrictModeError) as exc:
        jf(A)
    check_strict_message(exc, strict_reads_locals, "locals()")
    assert exc.value.lineno == line_of(strict_reads_locals, "locals()")
    assert jit(strict_reads_locals)(A) == strict_reads_locals(A)          # the default runs it as Python


def test_strict_mode_is_an_astjit_error_and_default_mode_does_not_raise():
    assert issubclass(astjit.StrictModeError, astjit.AstjitError)
    m = np.eye(3) + 1
    v = np.ones(3)
    assert_same_as_numpy(solve_strict, m, v)


# -- ASTJIT_DISABLE -------------------------------------------------------------------------------
def test_disable_runs_plain_python(monkeypatch):
    monkeypatch.setenv("ASTJIT_DISABLE", "1")
    jf = jit(kernel)
    assert_same_as_numpy(kernel, A, B, jitted=jf)
    assert jf._transformed is None and jf.fragments == []
    assert_same_as_numpy(kernel, [1.0, 2.0], [3.0, 4.0], jitted=jf)


def test_disable_says_so_in_explain_and_show(monkeypatch, capsys):
    monkeypatch.setenv("ASTJIT_DISABLE", "1")

    @jit
    def decorated(a):
        return a * 2 + 1

    assert_same_as_numpy(decorated.original, A, jitted=decorated)
    assert [r.message for r in explain(decorated)] == ["ASTJIT_DISABLE is set: the function runs as Python"]
    assert decorated.source.split("\n")[0].endswith(".decorated runs as Python: ASTJIT_DISABLE is set")
    compile(decorated.source, "<source>", "exec")            # the def as it runs, without its @jit
    decorated.show()
    shown = capsys.readouterr().out
    assert "as Python runs it" in shown and "as astjit runs it" not in shown and "@jit" not in shown
    assert "def decorated(a):" in shown and "return a * 2 + 1" in shown


def test_disable_set_after_first_call_does_not_break_calls(monkeypatch):
    jf = assert_same_as_numpy(kernel, A, B)
    monkeypatch.setenv("ASTJIT_DISABLE", "1")
    assert_same_as_numpy(kernel, A, B, jitted=jf)


def test_disable_zero_means_enabled(monkeypatch):
    monkeypatch.setenv("ASTJIT_DISABLE", "0")
    jf = assert_same_as_numpy(kernel, A, B)
    assert modes(jf) & {"tvm", "mixed"}


def test_backend_python_runs_every_fragment_as_python():
    jf = assert_same_as_numpy(kernel, A, B, backend="python")
    assert modes(jf) == {"python"}


def test_explain_requires_a_jitted_function():
    with pytest.raises(TypeError):
        explain(kernel)


def test_explain_of_a_fully_compiled_function_reports_no_fallback():
    jf = jit(kernel)
    jf(A, B)
    # a "measured" note (Python chosen by timing, DESIGN section 4) may appear; nothing failed
    assert not [r for r in explain(jf) if r.kind not in ("measured",)]
    assert modes(jf) == {"tvm"}


@pytest.mark.parametrize("args, mention", [
    (([1.0, 2.0], [3.0, 4.0]), "list"),
    ((np.ma.masked_array(A, mask=A > 0), B), "MaskedArray"),
    ((Tagged(A, mask=A < 0), B), "Tagged"),
    ((A.astype(np.complex128), B), "complex128"),
    ((A.astype(np.float16), B.astype(np.float16)), "float16"),
    (("ab", 2), "str"),
], ids=["list", "masked", "masked-subclass", "complex128", "float16", "str"])
def test_explain_names_the_line_and_the_unsupported_input(args, mention):
    jf = assert_same_as_numpy(kernel, *args)           # same result, or numpy's own exception
    line = line_of(kernel, "c = a * 2 + b")
    records = [r for r in explain(jf) if r.lineno == line and r.kind == "fallback"]
    assert records, str(explain(jf))
    assert any(mention in r.message for r in records), str(explain(jf))
    assert f"{__file__}:{line}" in str(explain(jf))


def annotated(x):
    y: float
    y = x * 2.0
    return y


def yields_steps(x):
    for i in range(3):
        yield x * i


def deletes_in_a_loop(x):
    total = 0.0
    for i in range(len(x)):
        t = x[i] * 2.0
        total += t
        del t
    return total


@pytest.mark.parametrize("fn, args, marker, reason", [
    (annotated, (A,), "y: float", "an annotation without a value stays Python"),
    (yields_steps, (A,), "yield x * i", "a yield keeps this loop in Python"),
    (deletes_in_a_loop, (A,), "del t", "a del statement keeps this loop in Python"),
], ids=["annotation", "yield", "del"])
def test_explain_names_a_statements_kind_in_words(fn, args, marker, reason):
    """explain said "a AnnAssign statement stays Python" and "a expr statement keeps this loop in Python"."""
    jf = jit(fn)
    result = jf(*args)
    if inspect.isgenerator(result):
        result = list(result)
    records = [r for r in explain(jf) if r.lineno == line_of(fn, marker)]
    assert any(r.message.startswith(reason) for r in records), str(explain(jf))


def store_at(a, i, v):
    b = a * 2.0
    a[i] = v
    return b


def test_out_of_range_item_assignment_raises_at_the_users_line():
    import traceback

    jf = jit(store_at)
    a = np.zeros(4)
    for i in (1, 3, -4):
        jf(a, i, float(i))
    with pytest.raises(IndexError) as exc:
        jf(a, 10, 1.0)
    last = traceback.extract_tb(exc.value.__traceback__)[-1]
    assert last.filename == __file__ and last.line.strip() == "a[i] = v", last
    assert_same_as_numpy(store_at, np.zeros(4), 7, 1.0, jitted=jf)


def scaled_roots(x, out):
    for i in range(len(x)):
        r = math.sqrt(abs(x[i]) + 1.0)
        out[i] = x[i] / r
    return out


def test_explain_leaves_out_statements_of_a_loop_whose_calls_all_ran_its_kernel():
    """A statement that compiles only inside its loop's kernel (``math.sqrt`` of an element) was
    reported as running as Python "where its loop does" although the loop had compiled."""
    jf = jit(scaled_roots)
    for n in (2000, 5000):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_array_equal(jf(x, np.zeros(n)), scaled_roots(x, np.zeros(n)))
    assert not any("where its loop does" in r.message for r in explain(jf)), explain(jf)
    assert all(e.runs == "compiled" for f in jf.fragments for e in f.entries if f.block.kind == "loop")


def _scaled(x):
    return x * 3.0


def calls_a_helper(a):
    b = a + 1.0
    return _scaled(b) - 2.0


def test_a_call_of_the_users_own_function_is_named_as_such():
    """Not "is not supported yet" (a user's function is no missing feature): the call runs as Python,
    a compiled loop would inline it."""
    a = np.arange(5.0)
    jf = jit(calls_a_helper)
    for _ in range(2):
        np.testing.assert_array_equal(jf(a), calls_a_helper(a))
    messages = [r.message for r in explain(jf)]
    assert any("_scaled is your function: its call runs as Python" in m for m in messages), messages
    assert not any("not supported yet" in m for m in messages)


def sets_error_state(x):
    old = np.seterr(all="ignore")
    y = np.sqrt(x - 0.5) * 2.0
    np.seterr(**old)
    return y


def test_a_function_of_an_installed_library_is_not_called_the_users():
    """numpy's ``np.seterr`` is a Python function, but numpy's, not the user's: explain says it is not
    supported, and the result is numpy's."""
    jf = jit(sets_error_state)
    for x in (np.linspace(0, 1, 7), np.linspace(0.5, 2, 5)):
        np.testing.assert_array_equal(jf(x), sets_error_state(x))
    messages = [r.message for r in explain(jf)]
    assert any("np.seterr (numpy.seterr) is not supported yet" in m for m in messages), messages
    assert not any("your function" in m for m in messages), messages


def affine_numbers(x, w, b):
    return w * x + b


def test_explain_says_a_block_on_numbers_runs_as_python():
    """A block that only ever computes numbers runs its Python (faster than any kernel call) with
    nothing recorded: explain() says so rather than calling it compiled."""
    jf = jit(affine_numbers)
    for x in (1.0, 2.5, -3.0):
        assert jf(x, 2.0, 3.0) == affine_numbers(x, 2.0, 3.0)
    text = str(explain(jf))
    assert "a block runs as Python" in text and "every block compiled" not in text
