"""Getting the source, resolving names (aliases, globals, closures), calls, signatures and methods.

Every function is compared with the undecorated original on equal copies of its arguments."""

import functools
import importlib
import inspect
import linecache
import sys
import types

import numpy
import numpy as np
import numpy as xp
import pytest
from differential import assert_same_as_numpy, modes
from numpy import exp
from numpy import log as natural_log

import astjit
from astjit import explain, jit

RNG = np.random.default_rng(2)
A = RNG.standard_normal(16)
B = RNG.standard_normal(16)

SCALE = 3.0
OFFSETS = RNG.standard_normal(16)
COUNTER = 0


def compiled(jf) -> bool:
    return bool(modes(jf) & {"tvm", "mixed", "numpy"})


# -- calls to other functions ----------------------------------------------------------------------
def plain_helper(x):
    return x * 2 + 1


@jit
def jitted_helper(x):
    return np.sqrt(np.abs(x)) + 1


def calls_other_functions(a):
    t = a * 3
    u = plain_helper(t)                # unknown call: stays Python
    v = jitted_helper(u)               # a jitted function called from a jitted one
    w = v - a
    return w


def test_calls_to_plain_and_jitted_functions():
    jf = assert_same_as_numpy(calls_other_functions, A)
    assert compiled(jf)
    assert compiled(jitted_helper)
    text = str(explain(jf))
    assert "plain_helper" in text


@jit
def recursive(a, n):
    b = a * 2
    if n == 0:
        return b
    return recursive(b, n - 1) + 1


def test_recursive_jitted_function_compiles_and_recurses_through_the_jitted_global():
    want = recursive.original(A, 3)      # the plain body; its recursive calls go to the jitted global
    assert_same_as_numpy(recursive.original, A, 3, jitted=recursive)
    np.testing.assert_allclose(recursive(A, 3), want, rtol=1e-12)
    assert compiled(recursive)
    assert not [r for r in explain(recursive) if r.kind == "function"]


def make_recursive_closure():
    def countdown(a, n):
        b = a - 1
        if n == 0:
            return b
        return countdown(b * 2, n - 1)

    return countdown


def test_recursive_closure():
    fn = make_recursive_closure()
    jf = assert_same_as_numpy(fn, A, 3)
    assert compiled(jf)
    assert not [r for r in explain(jf) if r.kind == "function"]


# -- nested functions and closures -----------------------------------------------------------------
def make_scaler(k):
    offset = np.full(16, 0.25)

    def kernel(a):
        return a * k + offset

    def set_k(value):
        nonlocal k
        k = value

    return kernel, set_k


def test_closure_variables():
    kernel, _ = make_scaler(2.0)
    assert_same_as_numpy(kernel, A)


def test_closure_variable_rebound_after_jitting_is_seen():
    kernel, set_k = make_scaler(2.0)
    jf = jit(kernel)
    np.testing.assert_array_equal(jf(A), kernel(A))
    set_k(-5.0)
    assert_same_as_numpy(kernel, A, jitted=jf)
    set_k(np.float32(0.5))
    assert_same_as_numpy(kernel, A, jitted=jf)


def outer_with_inner_def(a, n):
    def inner(x):
        return x + n

    y = a * 2
    z = inner(y)
    return z * y


def test_nested_def_inside_jitted_function_stays_python():
    assert_same_as_numpy(outer_with_inner_def, A, 3)


def defines_a_class_and_functions(x):
    class Q:
        k = 2.0

        def scaled(self, v):
            return v * self.k

    def h(v):
        def inner():
            return v
        return inner

    y = x * 3.0 + 1.0
    return y * Q.k, Q, Q.scaled, h, h(y), (lambda v: v), [lambda i=i: i for i in range(1)][0]


def test_nested_classes_functions_and_lambdas_get_pythons_qualified_names():
    plain = defines_a_class_and_functions(A)
    jf = jit(defines_a_class_and_functions)
    for _ in range(2):
        got = jf(A)
        np.testing.assert_array_equal(got[0], plain[0])
        assert [o.__qualname__ for o in got[1:]] == [o.__qualname__ for o in plain[1:]]
        assert got[1].__qualname__ == "defines_a_class_and_functions.<locals>.Q"
    assert jf.fragments, explain(jf)          # the class does not stop the function compiling
    assert "edited" not in str(explain(jf))


def make_counter():
    total = np.zeros(16)

    def add(a):
        nonlocal total
        total = total + a.sum()
        r = total * 2
        return r

    def get():
        return total

    return add, get


def test_nonlocal_statement():
    add_plain, get_plain = make_counter()
    add_jit, get_jit = make_counter()
    jf = jit(add_jit)
    for _ in range(3):
        np.testing.assert_array_equal(jf(A), add_plain(A))
    np.testing.assert_array_equal(get_jit(), get_plain())


def bump_counter(a):
    global COUNTER
    COUNTER = COUNTER + 1
    b = a * COUNTER
    return b


def test_global_statement(monkeypatch):
    monkeypatch.setitem(globals(), "COUNTER", 0)
    want = [bump_counter(A) for _ in range(3)]
    assert COUNTER == 3
    monkeypatch.setitem(globals(), "COUNTER", 0)
    jf = jit(bump_counter)
    got = [jf(A) for _ in range(3)]
    assert COUNTER == 3
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# -- signatures -------------------------------------------------------------------------------------
def with_defaults(a, b=None, scale=2.0, *, shift=1, power=2):
    if b is None:
        b = a
    return (a * scale + b) ** power - shift


def test_default_and_keyword_arguments():
    jf = jit(with_defaults)
    plain = with_defaults
    for args, kwargs in [((A,), {}), ((A, B), {}), ((A,), {"scale": 0.5}), ((A, B, 3.0), {"shift": -2}),
                         ((A,), {"b": B, "power": 3, "shift": 0})]:
        want = plain(*args, **kwargs)
        got = jf(*args, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(TypeError) as want_exc:
        plain(A, B, 1.0, 1)
    with pytest.raises(TypeError) as got_exc:
        jf(A, B, 1.0, 1)
    assert str(got_exc.value) == str(want_exc.value)


def keyword_only(a, *, w, bias=0.5):
    return a * w + bias


def test_keyword_only_arguments():
    jf = jit(keyword_only)
    np.testing.assert_array_equal(jf(A, w=2.0), keyword_only(A, w=2.0))
    np.testing.assert_array_equal(jf(A, bias=1.0, w=B), keyword_only(A, bias=1.0, w=B))
    with pytest.raises(TypeError):
        jf(A, 2.0)
    assert inspect.signature(jf) == inspect.signature(keyword_only)


def star_args(a, *rest, **options):
    total = a * 1.0
    for r in rest:
        total = total + r
    if options.get("double"):
        total = total * 2
    return total, len(rest), sorted(options)


def test_star_args_and_kwargs():
    jf = jit(star_args)
    for args, kwargs in [((A,), {}), ((A, B, B), {}), ((A, B), {"double": True, "x": 1})]:
        want = star_args(*args, **kwargs)
        got = jf(*args, **kwargs)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:] == want[1:]


def positional_only(a, b=2.0, /, c=1.0):
    return a * b - c


def test_positional_only_parameters():
    jf = jit(positional_only)
    np.testing.assert_array_equal(jf(A), positional_only(A))
    np.testing.assert_array_equal(jf(A, 3.0, c=B), positional_only(A, 3.0, c=B))
    with pytest.raises(TypeError):
        jf(a=A)


# -- methods ----------------------------------------------------------------------------------------
class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    @jit
    def forward(self, x):
        h = x * self.w + self.b
        return np.tanh(h)

    def forward_plain(self, x):
        h = x * self.w + self.b
        return np.tanh(h)

    @staticmethod
    @jit
    def activation(x):
        return np.maximum(x, 0.0) * 2

    @jit
    @staticmethod
    def activation2(x):
        return np.minimum(x, 0.0) - 1


class Scaled(Layer):
    @jit
    def forward(self, x):
        base = super().forward(x)
        return base * self.w - 1

    def forward_plain(self, x):
        base = super().forward_plain(x)
        return base * self.w - 1


def test_method_reads_self_attributes():
    layer = Layer(B, 0.5)
    np.testing.assert_allclose(layer.forward(A), layer.forward_plain(A), rtol=1e-12)
    assert compiled(Layer.forward)
    layer.w = B * 3                       # the attribute is read at every call
    np.testing.assert_allclose(layer.forward(A), layer.forward_plain(A), rtol=1e-12)


def test_staticmethod_both_decorator_orders():
    np.testing.assert_array_equal(Layer.activation(A), np.maximum(A, 0.0) * 2)
    np.testing.assert_array_equal(Layer(B, 0).activation(A), np.maximum(A, 0.0) * 2)
    np.testing.assert_array_equal(Layer.activation2(A), np.minimum(A, 0.0) - 1)
    np.testing.assert_array_equal(Layer(B, 0).activation2(A), np.minimum(A, 0.0) - 1)


class Private:
    def __init__(self, w):
        self.__w = w

    @jit
    def scale(self, x):
        y = x * self.__w
        return y + 1

    @jit
    def scale_super(self, x):
        y = x * self.__w
        return y + super().__hash__() * 0


def test_method_with_private_attribute():
    p = Private(B)
    np.testing.assert_array_equal(p.scale(A), A * B + 1)
    np.testing.assert_array_equal(p.scale_super(A), A * B)


def test_method_with_private_attribute_compiles():
    p = Private(B)
    p.scale(A)
    assert compiled(Private.scale), explain(Private.scale)
    assert "self, '_Private__w')" in Private.scale.source      # as Python compiles it in the class


_Mangled__g = 2.0


class _Mangled:
    __k = 3.0

    def __init__(self):
        self.__v = A

    def method(self, x, __p=1.0):
        global __g
        y = x * self.__k + self.__v * __g + __p

        class Inner:
            __k = 5.0                           # Inner's own: _Inner__k

            def get(self):
                return self.__k
        return y * Inner().get(), [__i * 2 for __i in range(2)], (lambda __q: __q + self.__k)(1.0)

    def defines_private_def(self, x):
        def __h(v):
            return v * 2
        return __h(x + 1.0)

    lam = (lambda self, x: x * self.__k + 1.0)  # noqa: E731


@pytest.mark.parametrize("name", ["method", "defines_private_def", "lam"])
def test_private_names_of_a_class_run_as_in_the_class(name):
    obj = _Mangled()
    plain = getattr(obj, name)
    jf = jit(getattr(_Mangled, name))
    for _ in range(2):
        got, want = jf(obj, A), plain(A)
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            np.testing.assert_array_equal(g, w)
    text = str(explain(jf))
    assert "edited" not in text
    if name == "defines_private_def":           # bound as _Mangled__h, named __h: astjit says why not
        assert "it defines __h (line" in text and "inside class _Mangled" in text
    else:
        assert compiled(jf), text


def _(x):
    return x + 1000


class UsesUnderscore(Layer):
    @jit
    def forward(self, x):
        y = super().forward(x)
        z = y * 2 + self.w
        return _(z)

    def forward_plain(self, x):
        y = super().forward_plain(x)
        z = y * 2 + self.w
        return _(z)


def test_super_method_calling_a_global_named_underscore():
    u = UsesUnderscore(B, 0.0)
    np.testing.assert_allclose(u.forward(A), u.forward_plain(A), rtol=1e-12)
    assert compiled(UsesUnderscore.__dict__["forward"])


def test_super_call_in_jitted_method():
    s = Scaled(B, 0.25)
    np.testing.assert_allclose(s.forward(A), s.forward_plain(A), rtol=1e-12)
    assert compiled(Scaled.__dict__["forward"])


# -- name resolution: aliases and globals ----------------------------------------------------------
def aliases(a):
    x = xp.log(xp.abs(a) + 1)
    y = exp(x) + natural_log(a * a + 2)
    z = numpy.sqrt(y)
    return z


def test_import_aliases_resolve_to_numpy():
    jf = assert_same_as_numpy(aliases, A)
    assert modes(jf) <= {"tvm", "mixed"}
    assert not [r for r in explain(jf) if r.kind == "statement"]


def uses_globals(a):
    y = a * SCALE + OFFSETS
    return y


def test_global_constant_and_array_rebinding_is_seen(monkeypatch):
    jf = assert_same_as_numpy(uses_globals, A)
    monkeypatch.setitem(globals(), "SCALE", -7.5)
    assert_same_as_numpy(uses_globals, A, jitted=jf)
    monkeypatch.setitem(globals(), "OFFSETS", RNG.standard_normal(16))
    assert_same_as_numpy(uses_globals, A, jitted=jf)
    monkeypatch.setitem(globals(), "OFFSETS", RNG.standard_normal((2, 16)).astype(np.float32))
    assert_same_as_numpy(uses_globals, A, jitted=jf)
    monkeypatch.setitem(globals(), "SCALE", 2)
    assert_same_as_numpy(uses_globals, A, jitted=jf)


def uses_np(a):
    return np.exp(a) + 1


def test_rebinding_module_global_np_retransforms(monkeypatch):
    jf = assert_same_as_numpy(uses_np, A)
    first = jf._transformed
    fake = types.ModuleType("fake_numpy")
    fake.exp = numpy.sin                  # `np.exp` now means numpy.sin
    monkeypatch.setitem(globals(), "np", fake)
    assert_same_as_numpy(uses_np, A, jitted=jf)
    numpy.testing.assert_allclose(jf(A), numpy.sin(A) + 1, rtol=1e-12)
    assert jf._transformed is not first
    monkeypatch.setitem(globals(), "np", numpy)          # back to numpy: exp again
    assert_same_as_numpy(uses_np, A, jitted=jf)
    numpy.testing.assert_allclose(jf(A), numpy.exp(A) + 1, rtol=1e-12)


def uses_np_object(a):
    return np.exp(a) * 2


def test_rebinding_np_to_a_non_module_runs_python(monkeypatch):
    jf = assert_same_as_numpy(uses_np_object, A)
    monkeypatch.setitem(globals(), "np", types.SimpleNamespace(exp=lambda x: [1, 2]))
    assert uses_np_object(A) == [1, 2, 1, 2]
    assert jf(A) == uses_np_object(A)


def late_bound(a):
    return later_defined(a) * 2  # noqa: F821


def test_name_defined_after_decoration(monkeypatch):
    jf = jit(late_bound)
    monkeypatch.setitem(globals(), "later_defined", np.negative)
    assert_same_as_numpy(late_bound, A, jitted=jf)


def shadows_np(np, a):
    return np.exp(a)


class FakeNumpy:
    @staticmethod
    def exp(x):
        return x + 100

    def __eq__(self, other):
        return type(other) is FakeNumpy


def test_parameter_shadowing_a_module_name():
    assert_same_as_numpy(shadows_np, FakeNumpy(), A)


# -- lambdas, notebook cells, source unavailable ----------------------------------------------------
scaled_exp = jit(lambda a, k=2.0: np.exp(a) * k + 1.0)
lambda_pair = (jit(lambda x: x * 2.0 + 1.0), jit(lambda x: (x - 3.0).sum()))
nested_call_lambda = jit(
    lambda x, y: np.maximum(x, y) * 0.5
)


def test_lambdas_compile():
    for n in (5, 9, 5):
        a = np.linspace(-1.0, 1.0, n)
        assert_same_as_numpy(scaled_exp.original, a, jitted=scaled_exp)
        assert_same_as_numpy(scaled_exp.original, a, 3.0, jitted=scaled_exp)
        assert_same_as_numpy(lambda_pair[0].original, a, jitted=lambda_pair[0])
        assert_same_as_numpy(lambda_pair[1].original, a, jitted=lambda_pair[1])
        assert_same_as_numpy(nested_call_lambda.original, a, a[::-1].copy(), jitted=nested_call_lambda)
    for jf in (scaled_exp, *lambda_pair, nested_call_lambda):
        assert {e.mode for f in jf.fragments for e in f.entries} & {"tvm", "mixed"}, jf.explain()
    # the source is Python (a def named lambda_); the function running is still named <lambda>
    assert "def lambda_(a, k=2.0):" in scaled_exp.source
    for jf in (scaled_exp, *lambda_pair, nested_call_lambda):
        compile(jf.source, "<source>", "exec")
        assert jf._function.__code__.co_name == jf._function.__name__ == "<lambda>"


# the same constants, names and arguments on one line: each lambda's own source, found by position
twin_lambdas = (jit(lambda x: x - 1.0), jit(lambda x: 1.0 - x), jit(lambda a: a.T.T[1:] + 1), jit(lambda a: a[1:].T + 1))


def test_lambdas_sharing_a_line_with_the_same_names_each_run_their_own_body():
    for n in (4, 7):
        a = np.arange(n * 3.0).reshape(n, 3) - 2.0
        for jf in twin_lambdas:
            got, want = jf(a), jf.original(a)
            assert got.shape == want.shape and np.array_equal(got, want), jf.source


def test_function_of_a_notebook_cell_compiles():
    """IPython registers each cell's text in linecache under a name like <ipython-input-3-...>."""
    name = "<ipython-input-7-5f3a2b>"
    text = "import numpy as np\n\ndef cell_kernel(a, b):\n    c = a * b + 1.0\n    return np.tanh(c).sum()\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {}
    exec(compile(text, name, "exec"), ns)
    jf = jit(ns["cell_kernel"])
    for n in (4, 7, 4):
        a, b = np.linspace(0, 1, n), np.linspace(1, 2, n)
        assert_same_as_numpy(ns["cell_kernel"], a, b, jitted=jf)
    assert {e.mode for f in jf.fragments for e in f.entries} & {"tvm", "mixed"}


def test_exec_function_runs_as_python_with_a_reason():
    ns = {}
    exec("def made(a):\n    return a + 1\n", ns)
    jf = jit(ns["made"])                               # decorating never fails
    for v in (np.arange(3.0), np.arange(5)):
        assert_same_as_numpy(ns["made"], v, jitted=jf)
    message = str(jf.explain())
    assert "made" in message and "<string>" in message and "runs as Python" in message
    with pytest.raises(astjit.SourceUnavailableError) as info:
        jit(ns["made"], strict=True)
    assert isinstance(info.value, astjit.StrictModeError) and str(info.value).startswith('File "<string>", line 1: ')


def test_very_long_expression_falls_back_at_call_time():
    """Python's own parser recurses once per term; a sum of a few hundred terms must not fail jit()."""
    terms = " + ".join(f"a[{i % 4}] * {i}.0" for i in range(400))
    name = "<astjit-test-long-expression>"
    text = f"def long_sum(a):\n    return {terms}\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    ns = {}
    exec(compile(text, name, "exec"), ns)
    jf = jit(ns["long_sum"])
    for v in (np.arange(4.0), np.arange(4.0) * 2):
        assert jf(v) == ns["long_sum"](v)


def reads_locals(a):
    b = a * 2.0
    c = b + 1.0
    return sorted(k for k in locals()), c


def evaluates(a):
    b = a * 2.0  # noqa: F841 (read by eval)
    return eval("b + 1.0")


def test_functions_reading_their_locals_run_as_python():
    for fn in (reads_locals, evaluates):
        jf = jit(fn)
        for n in (3, 5):
            assert_same_as_numpy(fn, np.arange(float(n)), jitted=jf)
        assert "runs as Python" in str(jf.explain()) and "()" in str(jf.explain())


async def doubled_later(a):
    return a * 2.0


async def doubles(a):
    yield a * 2.0


@pytest.mark.parametrize("fn", [doubled_later, doubles])
def test_async_functions_run_as_python_and_say_so(fn):
    """explain() said 'the source found for doubled_later is not its def statement'."""
    import asyncio

    jf = jit(fn)
    call = jf(A)
    if inspect.isasyncgen(call):
        result = asyncio.run(anext(call))
        expected = asyncio.run(anext(fn(A)))
    else:
        result, expected = asyncio.run(call), asyncio.run(fn(A))
    np.testing.assert_array_equal(result, expected)
    [record] = jf.records()
    assert record.message == "async functions are not compiled: the function runs as Python"
    with pytest.raises(astjit.StrictModeError, match="async functions are not compiled") as info:
        jit(fn, strict=True)
    assert (info.value.filename, info.value.lineno) == (__file__, fn.__code__.co_firstlineno)


@pytest.mark.parametrize("obj", [np.exp, len, np.sum, functools.partial(np.add, 1), 42, "text", Layer,
                                 types.SimpleNamespace()])
@pytest.mark.parametrize("strict", [False, True])
def test_non_function_raises_a_type_error_at_decoration(obj, strict):
    """Not a Python function: a NotAFunctionError (a TypeError and a SourceUnavailableError) whether
    strict or not, as jit's docstring says."""
    with pytest.raises(astjit.NotAFunctionError, match="def") as info:
        jit(obj, strict=strict)
    assert isinstance(info.value, TypeError) and isinstance(info.value, astjit.SourceUnavailableError)


def test_source_unavailable_is_an_astjit_error():
    assert issubclass(astjit.SourceUnavailableError, astjit.AstjitError)


# -- wrappers, classmethods, edited files ------------------------------------------------------------
def doubling(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args) * 2

    return wrapper


@doubling
def wrapped(a):
    return a + 1


def test_functools_wraps_wrapper_keeps_the_wrappers_behaviour():
    jf = jit(wrapped)                     # getsource finds the wrapped body; astjit must not use it
    assert_same_as_numpy(wrapped, A, jitted=jf)
    records = [r for r in explain(jf) if r.kind == "function"]
    assert records and "does not match" in records[0].message


class WithClassMethods:
    w = 2.0

    @jit
    @classmethod
    def outer_jit(cls, x):
        return x * cls.w + 1

    @classmethod
    @jit
    def inner_jit(cls, x):
        return x * cls.w - 1


def test_classmethods_both_decorator_orders():
    for obj in (WithClassMethods, WithClassMethods()):
        np.testing.assert_array_equal(obj.outer_jit(A), A * 2.0 + 1)
        np.testing.assert_array_equal(obj.inner_jit(A), A * 2.0 - 1)


def test_file_edited_after_import_runs_the_imported_code(tmp_path, monkeypatch):
    path = tmp_path / "edited_module.py"
    path.write_text("import numpy as np\n\n\ndef scale(a):\n    b = a * 2\n    return b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_module")
    try:
        path.write_text("import numpy as np\n\n\ndef scale(a):\n    b = a * 3\n    return b\n")
        jf = jit(module.scale)
        assert_same_as_numpy(module.scale, A, jitted=jf)
        assert any("does not match" in r.message for r in explain(jf))
        assert "a * 3" not in jf.source and "is not what runs, so it is not shown" in jf.source
        with pytest.raises(astjit.StrictModeError, match="does not match") as info:   # with its file and def
            jit(module.scale, strict=True)(A)
        assert isinstance(info.value, astjit.SourceUnavailableError)
        assert (info.value.filename, info.value.lineno) == (str(path), 4), info.value
    finally:
        sys.modules.pop("edited_module", None)


@pytest.mark.parametrize("before, after", [("a - 1.0", "1.0 - a"), ("a * 2.0 + b", "a + 2.0 * b"),
                                           ("np.maximum(a, b)", "np.maximum(b, a) if False else np.maximum(a, a)")])
def test_an_edit_with_the_same_constants_and_names_runs_the_imported_code(tmp_path, monkeypatch, before, after):
    name = f"edited_same_names_{abs(hash(before))}"
    path = tmp_path / f"{name}.py"
    path.write_text(f"import numpy as np\n\n\ndef f(a, b):\n    return {before}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    try:
        path.write_text(f"import numpy as np\n\n\ndef f(a, b):\n    return {after}\n")
        linecache.checkcache(str(path))
        jf = jit(module.f)
        for n in (5, 9):
            assert_same_as_numpy(module.f, np.linspace(-1, 1, n), np.linspace(2, 0, n), jitted=jf)
        assert any("does not match" in r.message for r in explain(jf))
    finally:
        sys.modules.pop(name, None)


# -- closures reading a local that a compiled block assigns, assigned again later ------------------
def closure_reads_the_first_assignment(a):
    b = a * 2.0
    g = lambda: b + 1.0  # noqa: E731
    r = g()
    b = a * 3.0
    return r, b


def closure_reads_a_block_after_a_python_assignment(a):
    x = np.linalg.norm(a)
    peek = lambda: x  # noqa: E731
    x = a[0] * 4.0
    m = peek()
    x = a * 5.0
    return m, x


def closure_reads_a_loop_accumulator(a):
    s = 0.0

    def total():
        return s

    for i in range(len(a)):
        s += a[i]
    r = total()
    s = None
    return r, s


@pytest.mark.parametrize("fn", [closure_reads_the_first_assignment, closure_reads_a_block_after_a_python_assignment,
                                closure_reads_a_loop_accumulator], ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_closure_sees_what_a_compiled_block_assigned(fn, backend):
    """A closure's read was linked to the name's last assignment only, so the block's assignment looked
    dead: the closure found its cell unbound (NameError), stale (the norm), or the loop's start (0.0)."""
    jf = jit(fn, backend=backend)
    for n in (5, 100_000, 7, 50_000):
        a = np.arange(1.0, n + 1)
        got, want = jf(a), fn(a)
        for g, w in zip(got, want):
            assert type(g) is type(w) and (g is w or np.array_equal(g, w))


def closure_made_before_a_block_that_raises(a, o, box):
    b = None
    box.append(lambda: b)
    b = a * 2.0
    c = b + o                      # raises for an o that does not broadcast
    return c


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_closure_sees_what_a_block_assigned_before_a_later_statement_raised(backend):
    """The block of both statements raised without publishing ``b``: the closure, called after the
    exception left the function, returned None where Python's returns the array."""
    jf = jit(closure_made_before_a_block_that_raises, backend=backend)
    for n in (100_000, 3, 100_000):
        a = np.arange(float(n))
        for fn in (closure_made_before_a_block_that_raises, jf):
            box = []
            with pytest.raises(ValueError):
                fn(a, np.ones(n + 1), box)
            assert isinstance(box[0](), np.ndarray) and np.array_equal(box[0](), a * 2.0)
        assert np.array_equal(jf(a, np.ones(n), []), closure_made_before_a_block_that_raises(a, np.ones(n), []))


act = np.tanh
SCALE = 2.0


def declares_a_global_it_calls(x):
    global act
    y = act(x) * 2.0
    return y


def rebinds_a_global_it_calls(x):
    y = x * 2.0
    if x.shape[0] > 0:
        global act, SCALE
        y = act(y) * SCALE + 1.0
    act = np.sin if act is np.tanh else np.tanh
    SCALE = SCALE + 1.0
    return y


def rebinds_a_global_between_its_reads(x, swap):
    global act
    y = act(x)
    if swap:
        act = np.cos
    z = act(y) + 1.0
    return z


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_global_the_body_rebinds_is_read_as_python_reads_it(backend):
    """``global act`` then ``act = np.cos`` under an ``if``: a later block that had resolved ``act``
    called the old function (where the declaration stood after the guard's read, the function never
    compiled and hid it)."""
    global act
    jf = jit(rebinds_a_global_between_its_reads, backend=backend)
    for k in range(6):
        x = np.linspace(0, 1, (5, 3000)[k % 2])
        act = np.sin
        expected = rebinds_a_global_between_its_reads(x, k in (3, 4))
        after = act
        act = np.sin
        got = jf(x, k in (3, 4))
        assert np.array_equal(got, expected) and act is after
    act = np.tanh


def rebinds_a_global_by_import(x, flag):
    global act
    if flag:
        from numpy import cos as act
    return act(x) * 2.0 + 1.0


def rebinds_a_global_by_def(x, flag):
    global act
    if flag:
        def act(v):
            return np.cos(v)
    return act(x) * 2.0 + 1.0


@pytest.mark.parametrize("fn", [rebinds_a_global_by_import, rebinds_a_global_by_def])
def test_a_global_the_body_binds_by_import_or_def_is_read_as_python_reads_it(fn):
    global act
    jf = jit(fn, backend="tvm")
    for flag in (False, False, True, False, True):
        x = np.linspace(0, 1, 3000)
        act = np.sin
        expected = fn(x, flag)
        act = np.sin
        assert np.array_equal(jf(x, flag), expected)
    act = np.tanh


def test_global_declarations_after_reads_compile():
    """``global NAME`` for a function the body calls: the guard prologue read the name before the
    declaration, Python refused the rewritten function and the whole function ran as Python."""
    global act, SCALE
    for fn in (declares_a_global_it_calls, rebinds_a_global_it_calls):
        act, SCALE = np.tanh, 2.0
        jf = jit(fn)
        plain = []
        for n in (2000, 2000, 3000, 2000):
            plain.append(fn(np.linspace(-1, 1, n)))
        act, SCALE = np.tanh, 2.0
        for n, expected in zip((2000, 2000, 3000, 2000), plain):
            got = jf(np.linspace(-1, 1, n))
            assert np.array_equal(got, expected) and got.dtype == expected.dtype
        assert act is np.tanh and jf.fragments
        assert "could not transform" not in str(jf.explain())
    act, SCALE = np.tanh, 2.0
