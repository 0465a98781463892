"""astjit.grad against central finite differences in float64, called several times with other values
and shapes; value_and_grad; argnums; dtypes."""

import grad_corpus as corpus
import numpy as np
import pytest

import astjit


def finite_difference(f, args, i, eps=1e-6):
    """Central differences of f with respect to args[i] (an array or a float)."""
    x = args[i]
    if isinstance(x, float):
        a = list(args)
        a[i] = x + eps
        up = f(*a)
        a[i] = x - eps
        return (up - f(*a)) / (2 * eps)
    out = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        a = list(args)
        xp = x.copy()
        xp[index] += eps
        a[i] = xp
        up = f(*a)
        xm = x.copy()
        xm[index] -= eps
        a[i] = xm
        out[index] = (up - f(*a)) / (2 * eps)
    return out


def assert_gradient(f, args, argnums, rtol=1e-6, atol=1e-9):
    nums = (argnums,) if isinstance(argnums, int) else argnums
    g = astjit.grad(f, argnums=argnums)
    expected = [finite_difference(f, args, i) for i in nums]
    for _ in range(2):                   # the second call runs the cached specialization
        got = g(*args)
        got = (got,) if isinstance(argnums, int) else got
        assert len(got) == len(expected)
        for i, e, r in zip(nums, expected, got):
            x = args[i]
            if isinstance(x, float):
                assert isinstance(r, float)
            else:
                assert isinstance(r, np.ndarray), type(r)
                assert r.shape == x.shape and r.dtype == x.dtype, (r.shape, r.dtype, x.shape, x.dtype)
            err = np.max(np.abs(np.asarray(r) - e)) / max(1.0, np.max(np.abs(e)))
            assert err < rtol or np.allclose(r, e, rtol=rtol, atol=atol), (f.__name__, i, err)


def rand(rng, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape)


def _with_zeros(x):
    x[1, 0] = 0.0                        # one zero in row 1
    x[2, 1:] = 0.0                       # two zeros in row 2
    return x


CASES = {
    "elementwise": (corpus.elementwise, lambda r, n: (rand(r, n, low=0.2, high=0.9), rand(r, n, low=0.5, high=2.0)), (0, 1)),
    "powers": (corpus.powers, lambda r, n: (rand(r, n, low=0.2), rand(r, n, low=0.5, high=2.0)), (0, 1)),
    "inverse_trig": (corpus.inverse_trig, lambda r, n: (rand(r, n),), 0),
    "broadcasting": (corpus.broadcasting, lambda r, n: (rand(r, n, 3), rand(r, 3), rand(r, n, 1), 0.7), (0, 1, 2, 3)),
    "reductions": (corpus.reductions, lambda r, n: (rand(r, n, 4),), 0),
    "running_sums": (corpus.running_sums, lambda r, n: (rand(r, n, 3),), 0),
    "joins": (corpus.joins, lambda r, n: (rand(r, 2, n), rand(r, 2, n)), (0, 1)),
    "products_of_elements": (corpus.products_of_elements, lambda r, n: (_with_zeros(rand(r, n + 2, 3)),), 0),
    "ties": (corpus.ties, lambda r, n: (rand(r, n, 3, low=0.1),), 0),
    "selections": (corpus.selections, lambda r, n: (rand(r, n), rand(r, n)), (0, 1)),
    "indexing": (corpus.indexing, lambda r, n: (rand(r, n + 3, 2), np.array([0, 2, 2, 1])), 0),
    "views": (corpus.views, lambda r, n: (rand(r, n, 3), rand(r, 2, n)), (0, 1)),
    "products": (corpus.products, lambda r, n: (rand(r, n, 3), rand(r, 3, 4), rand(r, 4)), (0, 1, 2)),
    "batched": (corpus.batched, lambda r, n: (rand(r, 2, n, 3), rand(r, 3, 2)), (0, 1)),
    "branches": (corpus.branches, lambda r, n: (rand(r, n) + (0.5 if n % 2 else -0.5), n % 3), 0),
    "early_return": (corpus.early_return, lambda r, n: (rand(r, n, low=0.0, high=0.4 if n < 4 else 1.0),), 0),
    "for_loop": (corpus.for_loop, lambda r, n: (rand(r, n), rand(r, n), n), (0, 1)),
    "loop_with_scalar": (corpus.loop_with_scalar, lambda r, n: (rand(r, n), n + 2), 0),
    "nested_loops": (corpus.nested_loops, lambda r, n: (rand(r, n), n), 0),
    "while_loop": (corpus.while_loop, lambda r, n: (rand(r, n, low=-3.0, high=3.0),), 0),
    "break_and_continue": (corpus.break_and_continue, lambda r, n: (rand(r, n) - (0.6 if n % 2 else 0.0), 2 * n), 0),
    "time_steps": (corpus.time_steps, lambda r, n: (rand(r, n + 3), 0.8, 0.1, n + 2), (0, 1, 2)),
    "accumulate": (corpus.accumulate, lambda r, n: (rand(r, 2, n), rand(r, n, n)), (0, 1)),
    "mlp_loss": (corpus.mlp_loss, lambda r, n: (rand(r, 4, n), rand(r, n), rand(r, n, 3), rand(r, 3), rand(r, 5, 4),
                                         np.eye(3)[r.integers(0, 3, 5)]), (0, 1, 2, 3)),
    "over_elements": (corpus.over_elements, lambda r, n: (rand(r, n),), 0),
    "over_rows": (corpus.over_rows, lambda r, n: (rand(r, n, 3), rand(r, 3, 2)), (0, 1)),
    "enumerated": (corpus.enumerated, lambda r, n: (rand(r, n),), 0),
    "zipped": (corpus.zipped, lambda r, n: (rand(r, n) + 1.0, rand(r, n + 1) + 1.0), (0, 1)),
    "iterable_rebound": (corpus.iterable_rebound, lambda r, n: (rand(r, n),), 0),
    "updates_new_arrays": (corpus.updates_new_arrays, lambda r, n: (rand(r, n), n % 2), 0),
    "guarded_sqrt": (corpus.guarded_sqrt, lambda r, n: (rand(r, n) * 2.0 + 0.05,), 0),
    "rnn_loss": (corpus.rnn_loss, lambda r, n: (rand(r, n, n) * 0.5, rand(r, 2, n), rand(r, 6, 2, 2), rand(r, 2, n)),
                 (0, 1, 3)),
    "updates_inactive_arrays": (corpus.updates_inactive_arrays, lambda r, n: (rand(r, n),), 0),
    "loop_target_after_the_loop": (corpus.loop_target_after_the_loop, lambda r, n: (rand(r, n),), 0),
    "filled_and_spaced": (corpus.filled_and_spaced, lambda r, n: (rand(r, n), float(rand(r, 1)[0]), 0.3), (0, 1, 2)),
    "updates_through_calls": (corpus.updates_through_calls, lambda r, n: (rand(r, n),), 0),
    "filled_and_spaced_as_ints": (corpus.filled_and_spaced_as_ints,
                                  lambda r, n: (rand(r, n), 2.3 + float(rand(r, 1)[0]) * 0.1, 7.6), (0, 1, 2)),
    "remainders": (corpus.remainders, lambda r, n: (rand(r, n, low=0.05, high=0.3) + np.arange(n) * 0.7,
                                                    rand(r, n, low=0.9, high=1.1)), (0, 1)),
    "chosen_by_or_and": (corpus.chosen_by_or_and, lambda r, n: (rand(r, n), 0.0 if n % 2 else 0.5, 0.3 * n), (0, 2)),
    "clipped_between_bounds": (corpus.clipped_between_bounds, lambda r, n: (rand(r, n, low=-2.0, high=2.0),
                                                                         float(rand(r, 1)[0]) - 1.0, 0.5 + n * 0.1),
                               (0, 1, 2)),
    "clipped_by_keyword": (corpus.clipped_by_keyword, lambda r, n: (rand(r, n, low=-2.0, high=2.0), 0.5 + n * 0.1),
                           0),
    "reductions_by_position": (corpus.reductions_by_position, lambda r, n: (rand(r, n, 4),), 0),
    "dots_with_a_scalar": (corpus.dots_with_a_scalar, lambda r, n: (rand(r, n), rand(r, n + 1), np.array(0.3 * n)),
                           (0, 1, 2)),
    "ravel_orders": (corpus.ravel_orders, lambda r, n: (rand(r, n, 3),), 0),
    "rebound_to_a_new_shape": (corpus.rebound_to_a_new_shape, lambda r, n: (rand(r, n, 2), rand(r, n)), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    f, make, argnums = CASES[name]
    rng = np.random.default_rng(len(name))
    for n in (3, 4):      # other values (and sizes) on every call
        assert_gradient(f, make(rng, n), argnums)


def test_an_argument_updated_in_place_after_use_is_read_as_it_was():
    x, data = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    expected = finite_difference(lambda x: corpus.updates_a_data_argument(x, data.copy()), (x,), 0)
    given = data.copy()
    got = astjit.grad(corpus.updates_a_data_argument)(x, given)
    assert np.allclose(got, expected, rtol=1e-6) and np.array_equal(given, [0.0, 2.0, 3.0])


def test_an_in_place_update_keeps_the_arrays_dtype_as_numpy():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(2)
    value, grad = astjit.value_and_grad(corpus.accumulates_in_float32, argnums=1)(x, w)
    expected = corpus.accumulates_in_float32(x, w)
    assert value == expected and type(value) is type(expected) and value.dtype == np.float32
    assert np.allclose(grad, finite_difference(lambda w: np.float64(corpus.accumulates_in_float32(x, w)), (w,), 0,
                                               eps=1e-3), rtol=1e-3)
    with pytest.raises(TypeError) as numpy_error:
        corpus.accumulates_in_int(np.ones(3))
    with pytest.raises(TypeError) as grad_error:
        astjit.value_and_grad(corpus.accumulates_in_int)(np.ones(3))
    assert isinstance(numpy_error.value, TypeError) and "same_kind" in str(grad_error.value)


def test_enumerate_with_a_float_start_raises_as_python():
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(TypeError) as python_error:
        corpus.enumerated_from_a_float(x)
    with pytest.raises(TypeError) as grad_error:
        astjit.grad(corpus.enumerated_from_a_float)(x)
    assert str(grad_error.value) == str(python_error.value)
    assert np.array_equal(astjit.grad(corpus.enumerated)(x), x * 0.0 + [2.0, 3.0, 4.0])


def test_casts_keep_the_argument_dtype():
    rng = np.random.default_rng(1)
    g = astjit.grad(corpus.casts)
    for n in (3, 6):
        x = rand(rng, n)
        r = g(x)
        assert r.dtype == np.float64 and np.allclose(r, 2 * x.astype(np.float32), rtol=1e-6)


def test_gradient_of_a_lambda():
    x = np.random.default_rng(3).standard_normal(5)
    assert np.allclose(astjit.grad(lambda v: (v * v).sum())(x), 2 * x, rtol=1e-12)
    value, g = astjit.value_and_grad(lambda v: (v * 3.0).sum())(x)
    assert value == pytest.approx((x * 3.0).sum()) and np.allclose(g, 3.0)


def test_value_and_grad_returns_the_value_of_one_forward_pass():
    rng = np.random.default_rng(2)
    vg = astjit.value_and_grad(corpus.for_loop, argnums=(0, 1))
    for n in (4, 7):
        args = CASES["for_loop"][1](rng, n)
        value, (g0, g1) = vg(*args)
        assert value == pytest.approx(corpus.for_loop(*args), rel=1e-12)
        assert np.allclose(g0, finite_difference(corpus.for_loop, args, 0), rtol=1e-6, atol=1e-9)
        assert g1.shape == args[1].shape
    single = astjit.value_and_grad(corpus.for_loop)(*args)
    assert np.allclose(single[1], g0, rtol=1e-12, atol=1e-15)


def test_float32_gradients_stay_float32():
    rng = np.random.default_rng(3)
    g = astjit.grad(corpus.mlp_loss, argnums=(0, 1))
    for n in (4, 8):
        args = [a.astype(np.float32) for a in CASES["mlp_loss"][1](rng, n)]
        g0, g1 = g(*args)
        assert g0.dtype == np.float32 and g1.dtype == np.float32
        ref = astjit.grad(corpus.mlp_loss, argnums=(0, 1), backend="python")(*[a.astype(np.float64) for a in args])
        assert np.allclose(g0, ref[0], rtol=1e-3, atol=1e-5)
        x = rng.uniform(-1, 1, (n, 3))
        got = astjit.grad(corpus.running_sums)(x.astype(np.float32))
        assert got.dtype == np.float32
        assert np.allclose(got, astjit.grad(corpus.running_sums)(x), rtol=1e-4, atol=1e-5)
        y = rng.uniform(-1, 1, (n, 3))
        got = astjit.grad(corpus.joins, argnums=(0, 1))(x.astype(np.float32), y)     # float32 joined with float64
        assert got[0].dtype == np.float32 and got[1].dtype == np.float64
        assert np.allclose(got[0], astjit.grad(corpus.joins, argnums=0)(x, y), rtol=1e-4, atol=1e-5)


def test_grad_of_a_jitted_function_and_the_python_backend_agree():
    rng = np.random.default_rng(4)
    jitted = astjit.jit(corpus.for_loop)
    args = (rand(rng, 6), rand(rng, 6), 5)
    compiled = astjit.grad(jitted, argnums=(0, 1))(*args)
    plain = astjit.grad(corpus.for_loop, argnums=(0, 1), backend="python")(*args)
    for a, b in zip(compiled, plain):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-14)


def test_python_float_argument_gets_a_float_gradient():
    g = astjit.grad(corpus.broadcasting, argnums=3)
    rng = np.random.default_rng(5)
    args = CASES["broadcasting"][1](rng, 3)
    r = g(*args)
    assert isinstance(r, float)
    assert r == pytest.approx(finite_difference(corpus.broadcasting, args, 3), rel=1e-6)


def test_an_argument_without_contribution_gets_zeros():
    def f(x, y):
        return np.sum(x * 2.0)

    assert np.array_equal(astjit.grad(f, argnums=1)(np.ones(3), np.ones((2, 2))), np.zeros((2, 2)))


def test_ravel_in_memory_order_of_a_fortran_ordered_argument():
    x = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    expected = np.arange(6.0).reshape(2, 3, order="F")
    assert np.array_equal(astjit.grad(lambda v: np.sum(v.ravel("K") * np.arange(6.0)))(x), expected)
    assert np.array_equal(astjit.grad(lambda v: np.sum(np.ravel(v, "A") * np.arange(6.0)))(x), expected)


def test_gradient_of_a_closure_reads_its_enclosing_variables_when_called():
    def scaled_by(c):
        def f(x):
            return np.sum(np.tanh(x * c))

        def rescale(v):
            nonlocal c
            c = v

        return f, rescale

    f, rescale = scaled_by(2.0)
    x = np.random.default_rng(6).standard_normal(4)
    g = astjit.grad(f)
    for c in (2.0, 5.0):
        rescale(c)
        assert np.allclose(g(x), finite_difference(f, (x,), 0), rtol=1e-6, atol=1e-9)
        assert np.allclose(g(x), c * (1.0 - np.tanh(x * c) ** 2), rtol=1e-12)


def test_a_power_of_zero_has_slope_zero_also_at_zero():
    x = np.array([0.0, 1.0, 2.0, 0.0])
    for k in (0, 0.0, 1, 2):
        assert_gradient(corpus.powers_at_zero, (x, k), 0)
    got = astjit.grad(corpus.powers_at_zero)(x.astype(np.float32), 0)
    assert got.dtype == np.float32 and np.array_equal(got, [1.0, 3.0, 2.0, 1.0])


@pytest.mark.parametrize("name", ["mlp_loss", "branches", "rnn_loss"])
def test_strict_gradient_runs_its_tape_and_helpers_as_python(name):
    f, make, argnums = CASES[name]
    args = make(np.random.default_rng(7), 4)
    expected = astjit.grad(f, argnums=argnums)(*args)
    for strict_grad in (astjit.grad(f, argnums=argnums, strict=True), astjit.grad(astjit.jit(f, strict=True),
                                                                                  argnums=argnums)):
        got = strict_grad(*args)
        for e, r in zip(expected if isinstance(argnums, tuple) else (expected,),
                        got if isinstance(argnums, tuple) else (got,)):
            assert np.allclose(r, e, rtol=1e-12, atol=1e-14)


def fmax_fmin_of(x, y):
    return np.sum(np.fmax(x, y) * 2.0) + np.sum(np.fmin(x, y * 3.0))


def test_fmax_and_fmin_send_the_adjoint_to_the_operand_that_is_not_nan():
    """``np.fmax(nan, 1.0)`` is 1.0: its adjoint goes to the 1.0 (as maximum's, it went to neither)."""
    g = astjit.grad(fmax_fmin_of, argnums=(0, 1))
    rng = np.random.default_rng(3)
    for n in (3, 8, 3):
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        x[0], y[1] = np.nan, np.nan
        expected = [finite_difference(fmax_fmin_of, (x, y), i) for i in (0, 1)]
        for got, want in zip(g(x, y), expected):
            assert np.allclose(got, want, rtol=1e-6, atol=1e-9), (got, want)


def last_step_logits(h0, w, wo):
    h = h0
    for t in range(3):
        h = np.tanh(h @ w)
        logits = h @ wo               # only the last step's logits are read after the loop
    return np.sum(logits ** 2)


def reshaped_in_a_branch(x):
    y = x.reshape(-1)
    if np.sum(x) > -100:
        y = x.reshape(-1) * 2.0
        y = np.transpose(x).reshape(-1) * 3.0
        m = x.T @ x  # noqa: F841 (never read)
    return np.sum(y * np.arange(6.0))


def cumsum_overwritten(x):
    for t in range(2):
        y = np.cumsum(x * (t + 1.0), axis=0)
    return np.sum(y ** 2)


@pytest.mark.parametrize("fn, shapes", [(last_step_logits, [(4, 3), (3, 3), (3, 2)]),
                                        (reshaped_in_a_branch, [(2, 3)]), (cumsum_overwritten, [(3, 2)])])
def test_shape_changing_ops_whose_value_a_branch_or_loop_overwrites(fn, shapes):
    """In a branch or loop an adjoint starts as 0.0; where the value is overwritten or not read after
    it, the rule of ``@``, ``reshape``, ``transpose`` or ``cumsum`` got that number and raised."""
    rng = np.random.default_rng(4)
    for scale in (0.5, 1.0):
        args = tuple(rng.standard_normal(s) * scale for s in shapes)
        assert_gradient(fn, args, tuple(range(len(args))))


def linspace_overwritten(c, n):
    for i in range(n):
        line = np.linspace(0.0, c * (i + 1.0), 5)
    return np.sum(line * line)


def test_linspace_whose_value_a_loop_overwrites():
    for n in (1, 2, 3):
        assert_gradient(linspace_overwritten, (0.75, n), 0)


def element_reads(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[0] + w * x[i] * x[i]       # x[0] read at every step, and x[i] twice
    t = x[1:3].sum() + x[::-1][0]
    for v in x:
        s = s + v * t
    return s


def aliased_adjoint(x):
    s = 0.0
    for i in range(x.shape[0]):
        y = x[i] * 2.0
        s = s + y * x[i]
    z = x                       # its adjoint the same array as x's until a read adds to one of them
    return s + (z[0] * z[1]).sum() + x[-1]


@pytest.mark.parametrize("fn", [element_reads, aliased_adjoint])
def test_element_reads_in_a_loop_add_into_one_adjoint_bit_for_bit_as_array_by_array(fn, monkeypatch):
    """An element read's adjoint adds into the argument's adjoint in place (one array per call, not
    one per step: a loop over 1,000 elements allocated and added 1,000 arrays): the same bits as a
    new array per step, for float64 and float32, at several lengths."""
    import importlib

    helpers = importlib.import_module("astjit.grad.helpers")
    rng = np.random.default_rng(11)
    g = astjit.grad(fn, argnums=0)
    args_of = (lambda x: (x, 0.3)) if fn is element_reads else (lambda x: (x,))
    gots = []
    for n, dtype in ((5, np.float64), (17, np.float64), (5, np.float32), (40, np.float32), (5, np.float64)):
        x = rng.uniform(-1, 1, n).astype(dtype)
        gots.append((x, g(*args_of(x))))
    assert_gradient(fn, args_of(rng.uniform(-1, 1, 6)), 0)
    monkeypatch.setattr(helpers, "_SOLE_REFERENCES", 0)          # a new array at every step
    fresh = astjit.grad(fn, argnums=0)
    for x, got in gots:
        want = fresh(*args_of(x))
        assert got.dtype == want.dtype == x.dtype and got.tobytes() == want.tobytes()


def test_an_adjoint_array_held_elsewhere_is_not_added_into():
    import importlib

    helpers = importlib.import_module("astjit.grad.helpers")
    x = np.arange(4.0)
    acc = helpers.scatter_index(1.0, x, 1)
    held = acc
    out = helpers.scatter_add(acc, 2.0, x, 2)
    assert out is not held and held.tolist() == [0.0, 1.0, 0.0, 0.0] and out.tolist() == [0.0, 1.0, 2.0, 0.0]
    del held
    again = helpers.scatter_add(out, 3.0, x, 0)
    assert again is out and out.tolist() == [3.0, 1.0, 2.0, 0.0]          # (only the caller holds it)
    users = np.zeros(4)                                                    # not one helpers made
    assert helpers.scatter_add(users, 1.0, x, 0) is not users and users.tolist() == [0.0] * 4
    assert helpers.scatter_add(out, 1.0, x, [0, 0]) is not out               # repeated positions: np.add.at


@pytest.mark.parametrize("value", [np.float64(1.5), np.float32(1.5), 1.5, np.array(1.5), np.float64(-0.25)])
def test_a_scalar_argument_gets_a_gradient_of_its_own_type(value):
    """np.float64 is a subclass of float: its gradient is an np.float64, a Python float's a float."""
    got = astjit.grad(lambda a: a * a)(value)
    assert type(got) is (type(value) if not isinstance(value, np.ndarray) else np.ndarray)
    assert got == 2 * value


def squarings(x):
    y = x
    for _ in range(3):
        y = y * y
    return y


def test_a_backward_block_over_python_floats_types_its_shape_helpers():
    """``np.shape`` of a loop's Python float is (), known when the block compiles: the gradient's shape
    helpers fold (the block's typing raised KeyError: 'static', which the fallback hid)."""
    g = astjit.grad(squarings)
    for x in (1.1, 0.9, -0.7, 1.1):
        assert g(x) == pytest.approx(8 * x ** 7, rel=1e-12)
    notes = [e.note for f in g.jitted.fragments for e in f.entries]
    assert notes and not any("Error" in n for n in notes), notes


def test_an_argument_named_twice_in_argnums_gets_two_arrays():
    """``argnums=(0, 0)``: two equal gradients, not one array returned twice."""
    g = astjit.grad(lambda x, y: np.sum(x * x * y), argnums=(0, 0, 1))
    x, y = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.25, 2.0])
    for _ in range(3):
        a, b, c = g(x, y)
        assert np.array_equal(a, 2 * x * y) and np.array_equal(b, a) and b is not a
        assert not np.shares_memory(a, b)
        a[0] = 99.0
        assert b[0] == 2 * x[0] * y[0]
    s = astjit.grad(lambda t: t * t, argnums=(0, 0))(1.5)
    assert s == (3.0, 3.0) and all(type(v) is float for v in s)


def product(x):
    return np.prod(x)


@pytest.mark.parametrize(("x", "want"), [
    ([1e300, 1e10, 1.0], [1e10, 1e300, np.inf]),         # the product overflows: not ans / x
    ([1e-300, 1e-100, 1.0], [1e-100, 1e-300, 0.0]),       # it underflows
    ([np.inf, 2.0], [2.0, np.inf]),
    ([np.nan, 2.0], [2.0, np.nan]),
    ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
    ([0.0, 0.0, 2.0], [0.0, 0.0, 0.0]),
])
def test_the_gradient_of_prod_is_the_product_of_the_other_elements(x, want):
    with np.errstate(over="ignore"):
        got = astjit.grad(product)(np.array(x))
    np.testing.assert_array_equal(got, np.array(want))
