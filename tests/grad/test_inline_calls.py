"""Gradients through the user's own helper functions (grad/inline_calls): each call is inlined before
differentiating, so a model written with helpers differentiates as if written out; rebinding a helper
or a global it reads rebuilds the gradient."""

import io

import numpy as np
import pytest
import user_layers
from test_grad import assert_gradient, finite_difference
from user_layers import dense

import astjit
from astjit import jit

SCALE = 2.0


def activation(z):
    return np.tanh(z) * SCALE


def layer(x, w, b=0.5):
    h = x @ w + b
    return activation(h)


def folded(v):
    if np.sum(v) > 0:
        return v * v
    return -v


def two_layers(x, w1, w2):
    h = layer(x, w1)
    out = layer(h, w2, b=-0.25)
    return np.sum(folded(out) + layer(x, w1, 1.0).mean())


def step(h, x, w):
    return np.tanh(h * w + x)


def recurrence(h, xs, w):
    for t in range(xs.shape[0]):
        h = step(h, xs[t], w)
    return np.sum(h * h)


@jit
def jitted_square(x):
    return x * x


def calls_a_jitted_helper(x):
    return np.sum(jitted_square(x) + jitted_square(np.sin(x)))


def called_by_keyword(x, y):
    return np.sum(layer(w=y, x=x) * 3.0)


def a_statement_call(x, log):
    record(x, log)
    return np.sum(layer(x, x.T))


def record(x, log):
    print(x.shape, file=log)
    return None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradients_through_helpers_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    x, w1, w2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(5, 2))
    assert_gradient(two_layers, (x, w1, w2), (0, 1, 2))
    assert_gradient(recurrence, (rng.normal(size=3), rng.normal(size=(6, 3)), rng.normal(size=3)), (0, 2))
    assert_gradient(calls_a_jitted_helper, (rng.normal(size=(2, 3)),), 0)
    assert_gradient(called_by_keyword, (x, w1), (0, 1))
    log = io.StringIO()
    assert_gradient(a_statement_call, (rng.normal(size=(3, 3)), log), 0)
    assert set(log.getvalue().splitlines()) == {"(3, 3)"}


def test_value_and_grad_gives_the_functions_own_value():
    rng = np.random.default_rng(3)
    vg = astjit.value_and_grad(two_layers, argnums=1)
    for _ in range(3):
        x, w1, w2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(5, 2))
        value, _ = vg(x, w1, w2)
        assert type(value) is type(two_layers(x, w1, w2)) and value == two_layers(x, w1, w2)


def tripled(v):
    return v * 3.0


def test_a_rebound_helper_or_global_rebuilds_the_gradient(monkeypatch):
    rng = np.random.default_rng(4)
    x, w1, w2 = rng.normal(size=(2, 4)), rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    g = astjit.grad(two_layers, argnums=0)
    for change in (None, ("SCALE", -1.5), ("activation", np.sin), ("folded", tripled)):
        if change is not None:
            monkeypatch.setitem(globals(), *change)
        got = g(x, w1, w2)
        want = finite_difference(two_layers, (x, w1, w2), 0)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_show_prints_the_inlined_statements():
    source = astjit.grad(two_layers).source
    assert "__astjit_grad0_h" in source and "layer(" not in source


def through_another_module(x, w):
    return np.sum(dense(x, w) ** 2) + np.sum(user_layers.squash(x))


def make_closure_helper(k):
    def scaled(v):
        return v * k

    return scaled


closure_helper = make_closure_helper(3.0)


def calls_a_closure(x):
    return np.sum(closure_helper(x))


def test_helpers_of_another_module_read_their_own_globals(monkeypatch):
    """A helper of another module reads its module's globals (``GAIN``, numpy as ``xp``), and
    rebinding one there, or the helper, rebuilds the gradient."""
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    g = astjit.grad(through_another_module, argnums=(0, 1))
    for change in (None, ("GAIN", -3.0), ("squash", tripled)):
        if change is not None:
            monkeypatch.setattr(user_layers, *change)
        gx, gw = g(x, w)
        np.testing.assert_allclose(gx, finite_difference(through_another_module, (x, w), 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gw, finite_difference(through_another_module, (x, w), 1), rtol=1e-6, atol=1e-8)


def test_a_closure_is_not_inlined():
    with pytest.raises(astjit.GradError, match="cannot inline the call of closure_helper"):
        astjit.grad(calls_a_closure)(np.ones(3))


def weighted_loss(x):
    return user_layers.weighted(x * x) + np.sum(activation(x))


def test_data_globals_of_another_module_and_helpers_of_both_modules_are_guarded(monkeypatch):
    """A helper of another module reading an array and a number of its module: rebinding either
    there rebuilds the gradient (the values are the gradient function's cells); so does rebinding a
    helper of the function's own module read after one of another module."""
    x = np.array([0.5, -1.0, 2.0])
    g = astjit.value_and_grad(weighted_loss)
    for change in (None, ("WEIGHTS", np.array([10.0, 20.0, 30.0])), ("GAIN", 5.0)):
        if change is not None:
            monkeypatch.setattr(user_layers, *change)
        value, got = g(x)
        assert value == weighted_loss(x)
        np.testing.assert_allclose(got, finite_difference(weighted_loss, (x,), 0), rtol=1e-6, atol=1e-8)
    monkeypatch.setitem(globals(), "activation", tripled)
    np.testing.assert_allclose(g(x)[1], finite_difference(weighted_loss, (x,), 0), rtol=1e-6, atol=1e-8)


def pair(v):
    if np.sum(v) > 0:
        return v * 2.0, v * 3.0
    return v, v * v


def applied(act, v, k=2.0):
    return np.sum(act(v)) * k


def squared(v):
    return v * v


def unpacks_a_pair(x):
    a, b = pair(x)
    return np.sum(a * b)


def passes_a_function(x):
    return applied(np.tanh, x) + applied(np.sin, x, 0.5)


def updates_after_a_call(x):
    y = x * 1.0
    y += squared(y)
    z = squared(y)
    y += 1.0
    return np.sum(y * z)


def iterates_a_result(x):
    s = 0.0
    for v in squared(x):
        s = s + v * 3.0
    return s


def annotated(x):
    y: float = np.sum(x * x)
    total: float  # noqa: F842  (binds nothing)
    for k in range(2):
        y: float = y * 1.5
    return y * np.sum(x)


@pytest.mark.parametrize("fn", [unpacks_a_pair, passes_a_function, updates_after_a_call, iterates_a_result, annotated])
def test_more_call_forms_match_finite_differences(fn):
    rng = np.random.default_rng(6)
    for sign in (1.0, -1.0):
        assert_gradient(fn, (sign * rng.uniform(0.1, 1.0, size=4),), 0)


CALLS = []


def counted_sum(v):
    CALLS.append(1)
    return np.sum(v * 2.0)


def compares_in_a_chain(x, n):
    if 0 < n < counted_sum(x):
        return np.sum(x * 3.0)
    return np.sum(x)


def test_a_helper_in_a_chained_comparison_runs_only_where_python_runs_it():
    x = np.array([0.3, 0.4, 0.5])
    for n, calls in ((-1, 0), (1, 1)):
        CALLS.clear()
        got = astjit.grad(compares_in_a_chain)(x, n)
        np.testing.assert_allclose(got, finite_difference(compares_in_a_chain, (x, n), 0), rtol=1e-6)
        CALLS.clear()
        astjit.grad(compares_in_a_chain)(x, n)
        assert len(CALLS) == calls


def bump(d):
    d += 1.0
    return np.sum(d)


def reads_before_a_changing_call(x, d):
    return np.sum(x * np.sum(d)) + bump(d) * np.sum(x)


def walrus_beside_a_helper(x, m):
    return np.sum(x) * ((m := m + 1.0) + reads_the_global_c(x * m))


def changes_in_a_statement_of_its_own(x, d):
    t = bump(d)
    return np.sum(x * np.sum(d)) + t * np.sum(x)


C = 100.0


def reads_the_global_c(v):
    return np.sum(v * C)


def test_what_the_inlining_refuses_and_what_it_keeps():
    x = np.array([1.0, 2.0])
    d = np.ones(2)             # (np.sum(d) before bump changes d, as Python reads it: 2 + 4)
    np.testing.assert_allclose(astjit.grad(reads_before_a_changing_call)(x, d), np.full(2, 6.0))
    assert np.array_equal(d, np.full(2, 2.0))
    with pytest.raises(astjit.GradError, match="an assignment expression"):
        astjit.grad(walrus_beside_a_helper)(x, 1.0)
    d = np.ones(2)
    got = astjit.grad(changes_in_a_statement_of_its_own)(x, d)
    assert np.array_equal(d, np.full(2, 2.0))                # (the helper ran once, as in Python)
    np.testing.assert_allclose(got, np.full(2, 8.0))           # (sum(d) after the helper, plus its result)
    with pytest.raises(astjit.GradError, match="reads the global 'C', a local or closure variable of f"):
        astjit.grad(closure_over_c())(x)


def closure_over_c():
    C = 2.0

    def f(x):
        return np.sum(x * C) + reads_the_global_c(x)
    return f


def sorts(v):
    w = v * 2.0
    return np.sort(w)


def calls_a_sorting_helper(x):
    return np.sum(sorts(x))


def test_errors_inside_a_helper_name_its_own_variables():
    with pytest.raises(astjit.GradError) as info:
        astjit.grad(calls_a_sorting_helper)(np.ones(3))
    assert "__astjit" not in str(info.value) and "numpy.sort" in str(info.value)


def draws_then_calls(x, seed):
    np.random.seed(seed)
    return np.sum(x * np.random.rand(2)) * 3.0 + noisy(x)


def noisy(v):
    return np.sum(v * np.random.rand(2))


def indexes_then_divides(x, i, n):
    return np.sum(x[i] * 2.0 + ratio(1.0, n) * x)


def ratio(a, b):
    return a / b


def passes_an_unbound_name(x, flag):
    if flag:
        w = 1.0
    return np.sum(scaled_by(x, w))


def scaled_by(v, w):
    return v * w


def test_helpers_run_in_pythons_order():
    """Random draws, exceptions and unbound names come as Python's order has them: what the statement
    evaluates before the call is computed before the helper's statements."""
    x = np.array([0.5, 1.5])
    value, _ = astjit.value_and_grad(draws_then_calls)(x, 3)
    assert value == draws_then_calls(x, 3)
    with pytest.raises(IndexError):
        astjit.grad(indexes_then_divides)(x, 5, 0.0)
    with pytest.raises(ZeroDivisionError):
        astjit.grad(indexes_then_divides)(x, 1, 0.0)
    with pytest.raises(UnboundLocalError):
        astjit.grad(passes_an_unbound_name)(x, False)
    np.testing.assert_allclose(astjit.grad(passes_an_unbound_name)(x, True), np.ones(2))


def logged_scale(v, w):
    CALLS.append(1)
    return v * w


def binds_its_argument_in_the_body(x):
    s = 0.0
    for v in logged_scale(x, w):  # noqa: F821  (w is bound only inside the loop: Python raises here)
        w = 2.0
        s = s + np.sum(v) * w
    return s


def test_an_argument_bound_only_in_the_body_of_its_loop_is_read_at_the_call():
    """What is bound at a ``for`` is what its iterable sees, not what the end of its body binds: the
    helper's statements ran before the argument raised."""
    for fn in (binds_its_argument_in_the_body, astjit.grad(binds_its_argument_in_the_body)):
        CALLS.clear()
        with pytest.raises(UnboundLocalError):
            fn(np.ones(2))
        assert CALLS == []
