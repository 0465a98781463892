"""The command line: ``python -m astjit`` and the ``astjit`` console script, run as a user runs them."""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from astjit import jit
from astjit.inspection.shapes import ShapeSpecError, parse_shapes, specialize_statically

EXAMPLE = textwrap.dedent("""\
    import numpy as np

    from astjit import jit

    LIMIT = 3


    def f(a, b):
        c = a + b
        d = np.exp(c) * 2
        return d.sum(), d


    def uses_solve(a, b):
        x = np.linalg.solve(a, b)
        return x * 2


    @jit(strict=True)
    def strict_solve(m, v):
        x = np.linalg.solve(m, v)
        return x * 2


    class K:
        @classmethod
        def c(cls, x):
            return x * 2 + 1

        @classmethod
        @jit
        def jitted_c(cls, x):
            return x * 2 + 1

        @staticmethod
        def s(x):
            return x * 2 + 1

        def m(self, x):
            return x * 2 + 1

        def reads_w(self, x):
            return x * self.w + 1


    def loopy(a, out, n):
        for i in range(n):
            out[i] = a[i] * 2 + 1
        return out
    """)
SOLVE_LINE = EXAMPLE.splitlines().index("    x = np.linalg.solve(a, b)") + 1
SHAPES = "a=float32[64],b=float32[64]"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "example.py"
    path.write_text(EXAMPLE)
    return path


def console_script():
    found = shutil.which("astjit", path=os.path.dirname(sys.executable))
    if found is None:
        pytest.skip("the astjit console script is not installed next to this Python")
    return [found]


def run(*args, script=False):
    command = console_script() if script else [sys.executable, "-m", "astjit"]
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    return subprocess.run(command + [str(a) for a in args], capture_output=True, text=True, timeout=120,
                          env=env)


def ok(result):
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


# -- show ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("script", [False, True], ids=["python -m astjit", "astjit"])
def test_show_prints_the_transformed_source(example, script):
    out = ok(run("show", f"{example}:f", script=script))
    assert "def f(a, b):" in out
    assert "__astjit_fragment_0(" in out
    assert "\x1b[" not in out                      # piped: plain text


def test_fragments_list_the_graph_and_its_subgraphs(example):
    out = ok(run("show", f"{example}:f", "--fragments", "--shapes", SHAPES))
    assert "= add(" in out and "= np.exp(" in out
    assert "float32[64]" in out                    # types from the --shapes specialization
    assert "subgraph 0" in out


@pytest.mark.parametrize("kind, marker", [("tir", "@T.prim_func"), ("llvm", "define"),
                                          ("cuda", "__global__")])
def test_code_prints_the_generated_kernel(example, kind, marker):
    out = ok(run("show", f"{example}:f", "--shapes", SHAPES, "--code", kind))
    assert f"# ---- {kind} code of subgraph 0 (tvm) ----" in out
    assert marker in out                           # CUDA C is generated without a GPU


def test_a_loop_kernel_is_listed_without_an_empty_node_list(example):
    out = ok(run("show", f"{example}:loopy", "--fragments", "--shapes", "a=float64[10],out=float64[10],n=int"))
    assert "#     subgraph 0: tvm loop kernel\n" in out


def test_color_always_colours_even_when_piped(example):
    pytest.importorskip("pygments")
    out = ok(run("show", f"{example}:f", "--color", "always"))
    assert "\x1b[" in out
    assert "\x1b[" not in ok(run("show", f"{example}:f", "--color", "never"))


@pytest.mark.parametrize("method", ["c", "jitted_c", "s", "m"])
def test_show_a_method_looked_up_on_its_class(example, method):
    out = ok(run("show", f"{example}:K.{method}", "--shapes", "x=float64[8]", "--fragments"))
    assert f"# K.{method}, as astjit runs it" in out
    assert "cache entry [x=float64[8]]" in out      # specialized: the receiver needs no --shapes entry
    assert "# note" not in out


def test_shapes_of_a_method_reading_its_instance_say_so(example):
    out = ok(run("show", f"{example}:K.reads_w", "--shapes", "x=float64[8]"))
    assert "it reads self.w, of the instance the method is called on, which --shapes cannot make up" in out
    assert "argument 'self'" not in out and "__astjit_attr" not in out.split("# note")[-1]


# -- explain ------------------------------------------------------------------------------------------

def test_explain_names_file_line_and_the_unsupported_call(example):
    out = ok(run("explain", f"{example}:uses_solve", script=True))
    assert f"{example}:{SOLVE_LINE}:" in out
    assert "np.linalg.solve" in out and "not supported yet" in out
    assert "x = np.linalg.solve(a, b)" in out      # the user's own line


def test_explain_lists_the_fallbacks_of_a_strict_function_instead_of_raising(example):
    out = ok(run("explain", f"{example}:strict_solve"))
    assert "np.linalg.solve" in out and "not supported yet" in out
    assert "x = np.linalg.solve(m, v)" in out


def test_explain_of_a_fully_compiled_function(example):
    out = ok(run("explain", f"{example}:f"))
    assert "nothing fell back" in out


# -- errors: one line on stderr, exit status 2 ---------------------------------------------------------

@pytest.mark.parametrize("target, extra, message", [
    ("missing.py:f", (), "no such file"),
    ("example.py:nonexistent", (), "has no function 'nonexistent'"),
    ("example.py:LIMIT", (), "is an int, not a function"),
    ("syntax_error.py:f", (), "SyntaxError"),
    ("exits.py:f", (), "sys.exit(3)"),
    ("raises.py:f", (), "RuntimeError: first line"),
    ("example.py", (), "expected FILE.py:FUNCTION"),
    ("example.py:f", ("--shapes", "a=flot32[3]"), "unknown dtype 'flot32'"),
    ("example.py:f", ("--shapes", "a[3]"), "expected name=type"),
    ("example.py:f", ("--shapes", "a=float32[3],b=M8"), "no datetime64 scalar can stand in"),
    ("example.py:f", ("--shapes", "a=float32[3],q=int"), "'q', not an argument of f(a, b)"),
    ("example.py:f", ("--code", "tir"), "--code needs --shapes"),
])
def test_user_errors_give_one_line_and_status_2(example, target, extra, message):
    folder = example.parent
    (folder / "syntax_error.py").write_text("def f(:\n    pass\n")
    (folder / "exits.py").write_text("import sys\nsys.exit(3)\n")
    (folder / "raises.py").write_text("raise RuntimeError('first line\\nsecond line')\n")
    result = subprocess.run([sys.executable, "-m", "astjit", "show", target, *extra], cwd=folder,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("astjit: error: ")
    assert message in lines[0]
    assert result.stdout == ""


def test_explain_reports_errors_the_same_way(example):
    result = run("explain", f"{example.parent}/missing.py:f", script=True)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"astjit: error: no such file: {example.parent}/missing.py"]


# -- parse_shapes ---------------------------------------------------------------------------------------

def test_parse_shapes_arrays():
    values = parse_shapes("a=float32[1000], b = float64[3, 4],c=int8[],d=bool[2,0]")
    assert list(values) == ["a", "b", "c", "d"]
    for name, dtype, shape in [("a", np.float32, (1000,)), ("b", np.float64, (3, 4)),
                               ("c", np.int8, ()), ("d", np.bool_, (2, 0))]:
        assert isinstance(values[name], np.ndarray)
        assert values[name].dtype == dtype and values[name].shape == shape


def test_parse_shapes_large_arrays_are_not_filled():
    big = parse_shapes("x=float32[1024,1024]")["x"]
    assert big.shape == (1024, 1024) and big.dtype == np.float32


def test_parse_shapes_scalars():
    values = parse_shapes("n=int,x=float,flag=bool,z=complex,k=5,eps=1e-5,s=float32,i=int64")
    assert values["n"] == 1 and type(values["n"]) is int
    assert type(values["x"]) is float and type(values["flag"]) is bool and type(values["z"]) is complex
    assert values["k"] == 5 and type(values["k"]) is int
    assert values["eps"] == 1e-5 and type(values["eps"]) is float
    assert type(values["s"]) is np.float32 and type(values["i"]) is np.int64


def test_parse_shapes_empty():
    assert parse_shapes("") == {}
    assert parse_shapes("  ") == {}


@pytest.mark.parametrize("text, message", [
    ("a[3]", "expected name=type"),
    ("a=flot32[3]", "unknown dtype 'flot32' for 'a'"),
    ("a=float32[3", "for 'a'"),
    ("n=integer", "unknown dtype 'integer' for 'n'"),
    ("a=float64[1000000000000,1000000]", "no array of that size can stand in"),     # (was a MemoryError traceback)
    # (these were taken silently: the last of two entries won, empty entries were dropped)
    ("a=float32[3],a=float64[2]", "--shapes gives 'a' twice"),
    ("a=float32[3],,b=int", "an empty entry"),
    (" , ", "an empty entry"),
    ("a=float32[3],", "an empty entry"),
    ("=float32[3]", "expected name=type"),
    # (numpy's ValueError and SyntaxError for these texts were tracebacks)
    ("k=10**30", "unknown dtype '10**30' for 'k'"),
    ("k=M8[ns]", "no datetime64[ns] scalar can stand in"),
])
def test_parse_shapes_errors(text, message):
    with pytest.raises(ShapeSpecError) as info:
        parse_shapes(text)
    assert message in str(info.value)


def add_then_scale(a, b):
    c = a + b
    return c * 2


def test_specialize_statically_notes_arguments_without_shapes():
    jf = jit(add_then_scale)
    notes = specialize_statically(jf, parse_shapes("a=float32[8]"))
    assert "no --shapes entry for argument 'b'" in notes
    assert any("is not specialized: 'b' has no --shapes entry" in n for n in notes)
    assert all(not frag.entries for frag in jf.fragments)  # nothing compiled, nothing ran


def positive_sum(a):
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0.0:
            s += a[i]
    return s


def rebound_sum(a, flag):
    s = 0
    if flag:
        s = a[0]
    for i in range(a.shape[0]):
        s += a[i]
    return s


def test_a_local_bound_to_a_number_written_out_specializes_its_loop():
    """``s = 0.0`` before the loop: the loop's kernel is specialized for a Python float ``s``."""
    jf = jit(positive_sum)
    notes = specialize_statically(jf, parse_shapes("a=float64[100]"))
    loop = next(f for f in jf.fragments if f.block.kind == "loop")
    assert not any("'s'" in n for n in notes), notes
    assert [e.mode for e in loop.entries] == ["tvm"]
    assert jf(np.arange(-3.0, 4.0)) == positive_sum(np.arange(-3.0, 4.0))


def test_a_local_bound_otherwise_too_stays_unknown():
    jf = jit(rebound_sum)
    notes = specialize_statically(jf, parse_shapes("a=float64[100],flag=bool"))
    assert any("'s' comes from Python code" in n for n in notes), notes


def rebound_by_a_for(a):
    s = 0
    for s in a:
        pass
    return s * 2.0


def rebound_by_a_walrus(a):
    s = 1
    if (s := 2.5) > 0:
        pass
    return a * s


def rebound_by_with(a):
    import contextlib

    k = 2
    with contextlib.nullcontext(5) as k:  # noqa: F811 - the name bound again, as the test needs
        pass
    return a[:k] * 1.0


@pytest.mark.parametrize("fn", [rebound_by_a_for, rebound_by_a_walrus, rebound_by_with])
def test_a_local_bound_by_other_statements_is_not_a_literal(fn):
    """Any other binding of the name (a ``for``, ``with`` or walrus target) leaves it unknown: the
    Fragment after it is not specialized with the literal's type."""
    jf = jit(fn)
    specialize_statically(jf, parse_shapes("a=float64[6]"))
    late = [f for f in jf.fragments if f.block.kind != "loop" and f.lines[0] > jf.fragments[0].lines[0]]
    assert all(not f.entries for f in late), [(f.name, f.entries) for f in late]


GLOBAL_SCALE = 2.5


def scaled_by_a_declared_global(a):
    global GLOBAL_SCALE
    return a * GLOBAL_SCALE


def test_a_global_declaration_is_no_literal():
    """``global GLOBAL_SCALE`` binds no local: the Fragment reads the global's value (a float)."""
    jf = jit(scaled_by_a_declared_global)
    specialize_statically(jf, parse_shapes("a=float64[4]"))
    (fragment,) = jf.fragments
    assert [e.mode for e in fragment.entries] == ["tvm"], [(e.mode, e.key) for e in fragment.entries]


def ones_of_length(a, n):
    b = np.ones(n) * a[0]
    return b


def test_a_stand_in_too_large_to_allocate_leaves_its_readers_unspecialized():
    jf = jit(ones_of_length)
    specialize_statically(jf, parse_shapes("a=float64[6],n=1000000000000"))
