"""What astjit.grad refuses: a GradError at the user's own line naming the reason; TypeErrors for
arguments and results it cannot differentiate."""

import inspect

import grad_errors_corpus as corpus
import numpy as np
import pytest

import astjit
from astjit import GradError


def marker_line(name):
    lines, start = inspect.getsourcelines(corpus)
    for k, line in enumerate(lines):
        if f"# marker: {name}" in line:
            return k + 1
    raise AssertionError(name)


@pytest.mark.parametrize(("name", "args", "words"), [
    ("no_rule", (np.ones(3),), "no adjoint rule for numpy.sort"),
    ("updates_argument", (np.ones(3),), "updates an argument in place"),
    ("writes_element", (np.ones(3),), "in-place update of an array the gradient flows through"),
    ("aliased_update", (np.ones(3),), "another name or view also holds"),
    ("returns_in_loop", (np.ones(3), 4), "`return` inside a loop"),
    ("loops_over_a_list", (np.ones(3), [np.ones(3)]), "must be `for ... in range(...)`"),
    ("may_not_return", (np.ones(3),), "must return a value on every path"),
    ("calls_a_keyword_only_helper", (np.ones(3),), "cannot inline the call of keyword_only_helper (keyword_only_helper "
                                                    "takes *args, **kwargs or keyword-only parameters)"),
    ("calls_a_helper_without_a_rule", (np.ones(3),), "no adjoint rule for numpy.sort"),   # (at the helper's line)
    ("calls_itself", (np.ones(3), 2), "nested too deeply (or recursive)"),
    ("joins_too_many", (np.ones(3),), "of at most 8 arrays"),
    ("appends_in_a_loop", (np.ones(3),), "`.append()` puts a value the gradient flows through in a container"),
    ("appends_in_a_while_loop", (np.ones(3),), "`.append()` puts a value the gradient flows through"),
    ("fills_a_dict_in_a_loop", (np.ones(3),), "in-place update of an array the gradient flows through"),
    ("sums_a_list_comprehension", (np.ones(3),), "a comprehension over values the gradient flows through"),
    ("sums_a_generator", (np.ones(3),), "a comprehension over values the gradient flows through"),
    ("comprehension_into_a_name", (np.ones(3),), "a comprehension over values the gradient flows through"),
    ("assignment_expression_in_a_test", (np.ones(3),), "an assignment expression (`:=`)"),
    ("updates_a_row_in_place", (np.ones((2, 3)),), "another name or view also holds"),
    ("zips_with_a_list", (np.ones(2), ["a", "bb"]), "each iterable must be an array the gradient flows"),
    ("updates_a_conditional_alias", (np.ones(3), True), "another name or view also holds"),
    ("updates_an_unpacked_alias", (np.ones(3),), "another name or view also holds"),
    ("updates_an_astype_alias", (np.ones(3),), "another name or view also holds"),
    ("updates_an_unknown_result", (np.ones(3),), "another name or view also holds"),
    ("assignment_expression_in_a_loop", (np.ones(3), 3), "an assignment expression (`:=`)"),
    ("updates_a_chained_target", (np.ones(3),), "another name or view also holds"),
    ("updates_an_einsum_view", (np.ones(3),), "another name or view also holds"),
    ("updates_a_diff_of_order_zero", (np.ones(3),), "another name or view also holds"),
    ("writes_into_out", (np.ones(3),), "a call with an `out` array"),
    ("writes_into_a_positional_out", (np.ones(3),), "a call with an `out` array"),
    ("writes_into_an_active_out", (np.ones(3), np.ones(3)), "a call with an `out` array"),
    ("reduces_into_a_positional_out", (np.ones((2, 3)),), "a call with an `out` array"),
    ("makes_a_list", (np.ones(3),), "no adjoint rule for the method .tolist()"),
    ("spaces_with_a_step", (np.ones(3),), "np.linspace(..., retstep=...) cannot be differentiated"),
])
def test_refused_at_the_users_line(name, args, words):
    g = astjit.grad(getattr(corpus, name))
    with pytest.raises(GradError) as info:
        g(*args)
    err = info.value
    assert words in err.reason, err.reason
    assert err.filename == corpus.__file__ and err.lineno == marker_line(name)
    assert f'File "{corpus.__file__}", line {err.lineno}' in str(err)
    with pytest.raises(GradError):                  # the same answer on the next call
        g(*args)


def test_the_error_is_raised_by_show_too():
    with pytest.raises(GradError, match="sort"):
        astjit.grad(corpus.no_rule).show()


def test_non_scalar_result_is_a_type_error():
    with pytest.raises(TypeError, match="returning a real scalar"):
        astjit.grad(corpus.returns_an_array)(np.ones(3))


def test_integer_argument_is_a_type_error():
    def f(x):
        return np.sum(x * 2)

    with pytest.raises(TypeError, match="must be a float array"):
        astjit.grad(f)(np.arange(3))
    assert np.array_equal(astjit.grad(f)(np.arange(3.0)), np.full(3, 2.0))


def test_bad_argnums():
    def f(x, y):
        return np.sum(x * y)

    with pytest.raises(ValueError, match="out of range"):
        astjit.grad(f, argnums=2)
    with pytest.raises(TypeError, match="argnums"):
        astjit.grad(f, argnums="x")
    with pytest.raises(TypeError, match="higher derivatives"):
        astjit.grad(astjit.grad(f))


def _after_an_empty_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x * i)
    return s + i


def _first_assigned_in_a_branch(x, flag):
    s = np.sum(x * x)
    if flag:
        t = np.sum(np.tanh(x))
    return s + t


def _first_assigned_in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        t = np.tanh(x * (i + 1.0))
        s = s + np.sum(t * t)
    return s * t[0]


def _first_assigned_in_a_while(x, n):
    k = 0
    s = np.sum(x)
    while k < n:
        t = np.sin(x * k)
        s = s + np.sum(t)
        k += 1
    return s + np.sum(t)


@pytest.mark.parametrize("fn, args, unbound", [
    (_first_assigned_in_a_while, (3,), None), (_first_assigned_in_a_while, (0,), "t"),
    (_after_an_empty_loop, (3,), None), (_after_an_empty_loop, (0,), "i"),
    (_first_assigned_in_a_branch, (True,), None), (_first_assigned_in_a_branch, (False,), "t"),
    (_first_assigned_in_a_loop, (2,), None), (_first_assigned_in_a_loop, (0,), "t"),
])
def test_a_variable_the_users_code_reads_unbound_raises_unbound_local_error(fn, args, unbound):
    """The gradient saves a variable's old value before each assignment; one not bound yet stays
    unbound for the user's code (it was bound to None: ``s + i`` after an empty loop raised TypeError)."""
    x = np.linspace(0.1, 0.9, 4)
    for g in (astjit.grad(fn), astjit.value_and_grad(fn)):
        for _ in range(2):
            if unbound is not None:
                with pytest.raises(UnboundLocalError, match=f"'{unbound}'"):
                    fn(x, *args)
                with pytest.raises(UnboundLocalError, match=f"'{unbound}'"):
                    g(x, *args)
                continue
            got = g(x, *args)
            got = got[1] if isinstance(got, tuple) else got
            h = 1e-6
            want = np.array([(fn(x + h * e, *args) - fn(x - h * e, *args)) / (2 * h) for e in np.eye(4)])
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def _int_accumulator(x):
    acc = np.zeros(3, dtype=np.int64)
    acc += x
    return np.sum(acc * x)


def _int_divided(x):
    acc = np.ones(3, dtype=np.int32)
    acc /= x
    return np.sum(acc * x)


def _broadcast_into_a_row(x):
    acc = np.zeros(3)
    acc -= x[:, None] * x
    return np.sum(acc)


@pytest.mark.parametrize("fn", [_int_accumulator, _int_divided, _broadcast_into_a_row])
def test_an_in_place_update_numpy_refuses_raises_numpys_error(fn):
    """The gradient's ``acc op= v`` raises what numpy's in-place op raises: its exception type (a
    UFuncTypeError for a float into an int array) and message (it raised copyto's TypeError)."""
    x = np.linspace(0.5, 1.5, 3)
    with pytest.raises(Exception) as plain:
        fn(x)
    for g in (astjit.grad(fn), astjit.value_and_grad(fn)):
        with pytest.raises(Exception) as got:
            g(x)
        assert type(got.value) is type(plain.value) and str(got.value) == str(plain.value)


def _used_from_the_second_step(x, n):
    s = 0.0
    for k in range(n):
        u = x * 2.0
        if k > 0:
            s = s + np.sum(u * u)
    return s


def _used_until_a_break(x, n):
    s = np.sum(x)
    for k in range(n):
        u = np.sin(x) * k
        if k == 2:
            break
        s = s + np.sum(u)
    return s


def _never_used(x, n):
    s = np.sum(x * x)
    for _ in range(n):
        u = np.exp(x)          # noqa: F841 - computed, never reaches the result
    return s


@pytest.mark.parametrize("fn", [_used_from_the_second_step, _used_until_a_break, _never_used])
def test_an_array_that_reaches_the_result_on_some_iterations_only_gets_its_gradient(fn):
    """A value computed in a loop and used under an ``if`` (or before a ``break``, or not at all):
    on the iterations that did not use it its adjoint is still 0.0, which the backward pass reshaped to
    the operand's shape (an internal ValueError); it adds as a zero."""
    x = np.linspace(0.2, 1.4, 5)
    g = astjit.grad(fn)
    for n in (0, 1, 2, 3, 5):
        got = g(x, n)
        h = 1e-6
        want = np.array([(fn(x + h * e, n) - fn(x - h * e, n)) / (2 * h) for e in np.eye(5)])
        assert got.shape == x.shape and got.dtype == x.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_strict_blames_the_users_line_not_the_gradients_own_helpers():
    with pytest.raises(astjit.StrictModeError) as info:
        astjit.grad(corpus.solves_a_system, strict=True)(np.ones(3), np.eye(3))
    err = info.value
    assert err.filename == corpus.__file__ and err.lineno == marker_line("solves_a_system")
    assert "np.linalg.solve" in str(err)
