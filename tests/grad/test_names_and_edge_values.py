"""astjit.grad where the function's own names, defaults and edge values matter: local imports, names
read through ``locals()``/``eval``/a lambda's default, a parameter named ``slice``, ``__defaults__``
changed between calls, reductions whose count is zero, ``np.dot`` beyond two dimensions, argnums as
numpy integers."""

import warnings

import numpy as np
import pytest
from test_grad import finite_difference

import astjit
from astjit import GradError

act = np.tanh      # a global that a function's own import shadows


def sine_imported_under_a_global_name(x):
    from numpy import sin as act
    return np.sum(act(x))


def numpy_imported_in_the_body(x):
    import numpy as np
    return np.sum(np.sin(x) * x)


def test_a_local_import_is_never_the_global_of_that_name():
    """``from numpy import sin as act`` in the body: act is a local, not the module's ``act`` (tanh),
    whose adjoint was applied (a wrong gradient); ``import numpy as np`` in the body is numpy."""
    x = np.array([0.3, 0.5, -1.2])
    with pytest.raises(GradError, match="act"):
        astjit.grad(sine_imported_under_a_global_name)(x)
    g = astjit.grad(numpy_imported_in_the_body)
    for k in range(3):
        x = np.random.default_rng(k).standard_normal(3 + k)
        np.testing.assert_allclose(g(x), finite_difference(numpy_imported_in_the_body, [x], 0), rtol=1e-6)


def read_through_locals(x):
    return np.sum(locals()["x"] ** 2)


def read_through_eval(x):
    return np.sum(eval("x") ** 2)


def read_through_a_lambda_default(x):
    fn = lambda z=x: z  # noqa: E731
    return np.sum(fn() ** 2)


def counts_its_locals(x):
    n = len(locals())
    return np.sum(x ** 2) * n


@pytest.mark.parametrize("fn", [read_through_locals, read_through_eval, read_through_a_lambda_default,
                                counts_its_locals])
def test_values_read_by_name_or_captured_are_refused(fn):
    """Each gave a zero gradient (or, counting locals, the generated function's variables too)."""
    with pytest.raises(GradError):
        astjit.grad(fn)(np.array([0.3, 0.5]))


def scaled_by_a_parameter_named_slice(x, slice):
    return np.sum(x[1:] ** 2) * slice


def slicing_beside_a_local_named_slice(x):
    slice = 2.0
    return np.sum(x[::2] ** 2) * slice


def test_a_user_name_slice_does_not_break_slicing():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(astjit.grad(scaled_by_a_parameter_named_slice)(x, 2.0), [0.0, 8.0, 12.0])
    np.testing.assert_allclose(astjit.grad(slicing_beside_a_local_named_slice)(x), [4.0, 0.0, 12.0])


def weighted(x, l2=0.1):
    return np.sum(x ** 2) * l2


def test_new_defaults_are_seen():
    g, vg = astjit.grad(weighted), astjit.value_and_grad(weighted)
    x = np.array([1.0, 2.0])
    try:
        np.testing.assert_allclose(g(x), 0.2 * x)
        weighted.__defaults__ = (1.0,)
        np.testing.assert_allclose(g(x), 2.0 * x)
        value, grad = vg(x)
        assert value == 5.0
        np.testing.assert_allclose(grad, 2.0 * x)
    finally:
        weighted.__defaults__ = (0.1,)
    np.testing.assert_allclose(g(x), 0.2 * x)


def mean_of_an_empty_selection(x):
    return np.sum(x) + np.mean(x[x > 10.0])


def sample_variance(x):
    return np.var(x, ddof=1)


def sample_deviation_of_columns(x):
    return np.sum(np.std(x, axis=0, ddof=2))


def test_reductions_over_no_elements_give_numpys_nan_not_an_error():
    """numpy's result is NaN there; the adjoints divided Python numbers and raised ZeroDivisionError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(astjit.grad(mean_of_an_empty_selection)(np.array([1.0, 2.0])), [1.0, 1.0])
        assert np.isnan(astjit.grad(sample_variance)(np.array([3.0]))).all()
        got = astjit.grad(sample_deviation_of_columns)(np.array([[1.0, 2.0], [3.0, 5.0]]))
        assert got.shape == (2, 2) and np.isnan(got).all()
        x = np.array([1.0, 2.5, 4.0])
        np.testing.assert_allclose(astjit.grad(sample_variance)(x), finite_difference(sample_variance, [x], 0),
                                   rtol=1e-6)


def dot_squared(a, b):
    return np.sum(np.dot(a, b) ** 2)


@pytest.mark.parametrize("shapes", [((2, 3, 4), (4, 2)), ((2, 3, 4), (5, 4, 2)), ((4,), (3, 4, 2)),
                                    ((2, 3, 4), (4,)), ((3, 4), (2, 4, 5))])
def test_dot_beyond_two_dimensions(shapes):
    """It raised NotImplementedError when the gradient ran."""
    rng = np.random.default_rng(len(shapes[0]) + len(shapes[1]))
    g = astjit.grad(dot_squared, argnums=(0, 1))
    for _ in range(2):
        a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
        ga, gb = g(a, b)
        np.testing.assert_allclose(ga, finite_difference(dot_squared, [a, b], 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gb, finite_difference(dot_squared, [a, b], 1), rtol=1e-6, atol=1e-8)


def test_argnums_as_numpy_integers_and_clear_errors_otherwise():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_allclose(astjit.grad(dot_squared, argnums=np.int64(1))(a, b), 2 * np.dot(a, b) * a)
    ga, gb = astjit.grad(dot_squared, argnums=(np.int32(0), 1))(a, b)
    np.testing.assert_allclose(ga, 2 * np.dot(a, b) * b)
    for bad in (1.0, None, True, "0"):
        with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
            astjit.grad(dot_squared, argnums=bad)


def centered_copy(v):
    out = v.copy()
    out -= np.mean(out)
    return out


def centered_in_place(v):
    out = v
    out -= np.mean(out)
    return out


def spread_of_a_centered_copy(x):
    return np.sum(centered_copy(x) ** 2)


def spread_of_an_argument_centered_in_place(x):
    y = x * 1.0
    return np.sum(centered_in_place(y) ** 2) + np.sum(y)


def test_a_helper_updating_its_own_copy_in_place_is_differentiated():
    """``return out`` binds the helper's result to its local ``out``, which nothing reads after: the
    update of a copy no other name holds is differentiated as written in the function (it was refused
    as an update of a shared array). A helper updating the array its caller passed stays refused."""
    g = astjit.grad(spread_of_a_centered_copy)
    for k in range(3):
        x = np.random.default_rng(k).standard_normal(4 + k)
        np.testing.assert_allclose(g(x), finite_difference(spread_of_a_centered_copy, [x], 0), rtol=1e-6)
    with pytest.raises(GradError):
        astjit.grad(spread_of_an_argument_centered_in_place)(np.array([1.0, 2.0, 4.0]))


SHAPES_SEEN = []


def records_its_shape(x):
    SHAPES_SEEN.append(x.shape)
    SHAPES_SEEN.append(len(x))
    return np.sum(x ** 2)


def sorts_its_argument(x):
    x.sort()
    return np.sum(x ** 2)


def keeps_its_argument(x):
    SHAPES_SEEN.append(x)
    return np.sum(x ** 2)


def test_a_statement_reading_only_what_carries_no_gradient_runs_as_written():
    """``log.append(x.shape)`` was refused as a statement reading a differentiated value; a call given
    the value itself (``x.sort()``, ``log.append(x)``) still is."""
    SHAPES_SEEN.clear()
    g = astjit.grad(records_its_shape)
    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(g(x), 2 * x)
    assert SHAPES_SEEN == [(3,), 3]
    for fn in (sorts_its_argument, keeps_its_argument):
        with pytest.raises(GradError):
            astjit.grad(fn)(x.copy())


def counts_its_names(x):
    return np.sum(x ** 2) * len(dir())


class Settings:
    def __init__(self):
        self.scale, self.shift = 2.0, 1.0


def counts_an_objects_fields(x, settings):
    return np.sum(x * len(vars(settings)))


def cosine_with_its_own_import(v):
    import numpy as np
    return np.cos(v) * 2.0


def doubled(v):
    return v * 2.0


def sum_of_cosines_from_a_helper(x):
    return np.sum(cosine_with_its_own_import(x))


def doubled_then_shifted_in_place(x):
    y = doubled(x)
    y += 1.0
    return np.sum(y * y)


def variance_past_its_count(x):
    return np.var(x, ddof=5)


def test_more_names_and_helper_forms():
    """``dir()`` (the locals) is refused, ``vars(obj)`` is not; a helper's own ``import numpy as np``
    is numpy; a name bound to a helper's new array may be updated in place; ``ddof`` past the count
    gives numpy's inf and no finite gradient (the adjoint divided by a negative count)."""
    x = np.array([0.3, -1.2, 0.7, 2.0])
    with pytest.raises(GradError, match="dir"):
        astjit.grad(counts_its_names)(x)
    np.testing.assert_array_equal(astjit.grad(counts_an_objects_fields)(x, Settings()), [2.0] * 4)
    np.testing.assert_allclose(astjit.grad(sum_of_cosines_from_a_helper)(x), -2.0 * np.sin(x), rtol=1e-12)
    for k in range(3):
        x = np.random.default_rng(k).standard_normal(3 + k)
        np.testing.assert_allclose(astjit.grad(doubled_then_shifted_in_place)(x),
                                   finite_difference(doubled_then_shifted_in_place, [x], 0), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value, grad = astjit.value_and_grad(variance_past_its_count)(np.array([1.0, 2.0, 4.0, 7.0]))
    assert value == np.inf and not np.isfinite(grad).any()
