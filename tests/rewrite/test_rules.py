"""Rewrite rules (astjit.rewrite): each shipped rule firing and not firing, a user's rule, where=,
fastmath gating, registration, and the errors of a rule that cannot be used."""

import math

import numpy as np
import pytest
from differential import assert_same_as_numpy

import astjit
from astjit import jit, rewrite
from astjit.rewrite import Rule, RuleError


def fired(jf) -> list:
    return sorted({r.message.split()[1] for r in jf.records() if r.kind == "rewrite"})


def bits_equal(got, want):
    assert type(got) is type(want)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "c":
        bits_equal(got.real, want.real)
        bits_equal(got.imag, want.imag)
        return
    assert np.array_equal(got, want, equal_nan=True)
    if want.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))


SPECIALS = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-310]


def values(dtype, n):
    rng = np.random.default_rng(n)
    if np.dtype(dtype).kind == "f":
        return np.array((SPECIALS * n)[:n] + list(rng.standard_normal(n)), dtype)[:n] if n > 0 else np.zeros(0, dtype)
    if np.dtype(dtype).kind == "c":     # numpy's complex x * 1 is a full product: (inf+0j) * 1 is inf+nanj
        parts = values(np.float64, 2 * n)
        return (parts[:n] + 1j * parts[n:][::-1]).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.random(n) > 0.5
    info = np.iinfo(dtype)
    return np.array([info.min, info.max, 0, 1, -1 if info.min else 2, 7, 3, 5][:n] + [4] * max(0, n - 8), dtype)


def times_one(x):
    return x * 1 + x * 0.5


def one_times(x):
    return (1 * x) * 3


def plus_zero(x):
    return (x + 0) * 2


def minus_zero(x):
    return (x - 0) * 2


def double_negation(x):
    return -(-x) * 2  # noqa: B002


def same_astype(x):
    return x.astype(x.dtype) * 2


def dot_of_sum(x, y):
    return np.sum(x * y) + 1.0


CASES = [  # (function, rule, dtypes where it fires, dtypes where it must not)
    (times_one, "multiply_by_one", [np.float32, np.float64, np.int64], [np.complex128]),
    (one_times, "multiply_by_one_left", [np.float64, np.int32], [np.complex64]),
    (plus_zero, "add_zero", [np.int32, np.int64], [np.float64, np.float32]),
    (minus_zero, "subtract_zero", [np.float64, np.int16], []),
    (double_negation, "double_negation", [np.float32, np.int8, np.uint16], [np.bool_]),
    (same_astype, "astype_same_dtype", [np.float32, np.int64], []),
]


@pytest.mark.parametrize("fn, rule, fires, stays", CASES, ids=[c[1] for c in CASES])
def test_shipped_exact_rule_fires_with_the_same_bits(fn, rule, fires, stays):
    for dtype in fires + stays:
        jf = jit(fn, backend="tvm")
        for n in (8, 13, 8):
            x = values(dtype, n)
            try:
                want = fn(x.copy())
            except Exception as exc:
                with pytest.raises(type(exc)):
                    jf(x.copy())
                continue
            bits_equal(jf(x.copy()), want)
        assert (rule in fired(jf)) == (dtype in fires), (dtype, fired(jf))


def test_identity_rule_never_makes_an_alias():
    """``y = x * 1`` is a new array: writing into it must not reach x, returning it must not be x."""

    def write_into(x):
        y = x * 1
        y[0] = 99.0
        return y

    def returned(x):
        return x * 1

    for fn in (write_into, returned):
        jf = jit(fn, backend="tvm")
        for n in (4, 6):
            x = np.arange(float(n))
            out = jf(x)
            assert x[0] == 0.0 and out is not x
        assert "multiply_by_one" not in fired(jf)


def times_one_then_add_one(x):
    y = x * 1
    x += 1
    return y + 0.5


def same_astype_then_setitem(x):
    y = x.astype(x.dtype)
    x[0] = 99
    return y * 2


def negated_twice_then_view_written(x):
    y = -(-x)  # noqa: B002
    v = x[1:]
    v *= 3
    return y - 1.0


def minus_zero_then_add_one(x):
    y = x - 0
    x += 1
    return y * 2


def times_one_then_other_array_written(x):
    y = x * 1
    z = x + 2.0
    z += 1
    return y + z


@pytest.mark.parametrize("fn", [times_one_then_add_one, same_astype_then_setitem, negated_twice_then_view_written,
                                minus_zero_then_add_one])
def test_identity_rule_refused_where_its_value_is_written_before_the_read(fn):
    """``y = x * 1; x += 1; return y + 0.5``: y holds x's values from before the write; replaced by x
    it would read the written ones."""
    for backend in ("tvm", None):
        jf = jit(fn, backend=backend) if backend else jit(fn)
        for n in (5, 6, 5):
            assert_same_as_numpy(fn, np.arange(float(n)), jitted=jf)


def test_identity_rule_still_fires_past_a_write_into_an_array_of_the_block():
    jf = jit(times_one_then_other_array_written, backend="tvm")
    for n in (5, 6):
        assert_same_as_numpy(times_one_then_other_array_written, np.arange(float(n)), jitted=jf)
    assert "multiply_by_one" in fired(jf)


def sum_of_strided_times_one(a):
    return np.sum(a[:, ::2] * 1), np.sum(a * 1)


def mean_of_view_minus_zero(a):
    return np.mean(a[::2] - 0), np.max(-(-a.T[::-1]))  # noqa: B002


def sum_of_same_astype_of_reversed(a):
    return np.sum(a.T[::-1].astype(np.float64)), (a[:, 1:] * 1) @ np.ones(a.shape[1] - 1)


@pytest.mark.parametrize("fn", [sum_of_strided_times_one, mean_of_view_minus_zero, sum_of_same_astype_of_reversed])
def test_identity_rule_keeps_the_order_a_reduction_adds_in(fn):
    """numpy sums in memory order: ``np.sum(a[:, ::2] * 1)`` adds a new C-contiguous array's elements,
    ``np.sum(a[:, ::2])`` the view's in another order (other bits on 300x1001 floats); a strided argument
    (``a`` as ``x.T``) likewise. The rule still fires on a C-contiguous argument."""
    rng = np.random.default_rng(3)
    for backend in ("tvm", None):
        jf = jit(fn, backend=backend) if backend else jit(fn)
        for shape in ((300, 1001), (301, 1000), (300, 1001)):
            for a in (rng.standard_normal(shape), rng.standard_normal(shape[::-1]).T):
                for g, w in zip(jf(a), fn(a)):
                    bits_equal(g, w)
    if fn is sum_of_strided_times_one:
        assert "multiply_by_one" in fired(jf)           # (np.sum(a * 1) of the C-contiguous argument)


def test_rule_refused_where_the_type_would_change():
    """``x * 1`` of an int array by a float 1.0 is float64: replacing it by x would change the dtype."""

    def by_float_one(x):
        return (x * 1.0) + 1

    jf = assert_same_as_numpy(by_float_one, np.arange(5, dtype=np.int32), backend="tvm")
    assert "multiply_by_one" not in fired(jf)


def test_sum_of_products_to_dot():
    assert "sum_of_products_to_dot" not in {r.name for r in rewrite.active_rules()}    # not by default
    jf = jit(dot_of_sum, backend="tvm", rewrites=["sum_of_products_to_dot"])
    rng = np.random.default_rng(0)
    for n, dtype in ((100, np.float64), (257, np.float64), (64, np.float32)):
        x, y = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
        assert_same_as_numpy(dot_of_sum, x, y, jitted=jf, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert "sum_of_products_to_dot" in fired(jf)
    other = jit(dot_of_sum, backend="tvm", rewrites=["sum_of_products_to_dot"])
    assert_same_as_numpy(dot_of_sum, np.ones((3, 4)), np.ones((3, 4)), jitted=other)   # 2-D: not a dot
    assert_same_as_numpy(dot_of_sum, np.arange(5), np.arange(5), jitted=other)         # ints: sum promotes
    assert "sum_of_products_to_dot" not in fired(other)


def shared_log(x):
    t = np.log(x)
    return np.exp(t), t + 1


def exp_log(x):
    return np.exp(np.log(x)) * 2


def test_fastmath_rules_run_only_when_asked():
    x = np.array([0.5, 2.0, 3.0, 1e-3])
    plain = jit(exp_log, backend="tvm")
    plain(x)
    assert "exp_of_log" not in fired(plain)
    fast = jit(exp_log, backend="tvm", fastmath=True)
    np.testing.assert_allclose(fast(x), exp_log(x), rtol=1e-15)
    np.testing.assert_array_equal(fast(x), x * 2)              # the rule's own answer, bit for bit
    assert "exp_of_log" in fired(fast)
    named = jit(exp_log, backend="tvm", rewrites=["exp_of_log"])
    named(x)
    assert "exp_of_log" in fired(named)


def test_pattern_does_not_match_across_a_value_used_twice():
    jf = jit(shared_log, backend="tvm", fastmath=True)
    x = np.array([0.5, 2.0, 3.0])
    got, want = jf(x), shared_log(x)
    for g, w in zip(got, want):        # compiled exp and log: within their documented ulps of numpy's
        np.testing.assert_allclose(g, w, rtol=1e-15)
    assert "exp_of_log" not in fired(jf)


def constants(x):
    return (x * 2.0) * 3.0 + 1


def test_folding_constants_under_fastmath():
    jf = jit(constants, backend="tvm", fastmath=True)
    for n in (5, 9):
        x = np.linspace(-1, 1, n)
        np.testing.assert_allclose(jf(x), constants(x), rtol=1e-15)
    assert "fold_constant_products" in fired(jf)
    ctx = jf.fragments[0].entries[-1].ctx
    from astjit.graph.types import ArrayType

    assert sum(n.op == "multiply" and isinstance(ctx.types[n], ArrayType) for n in ctx.graph.nodes) == 1


def int_constant_chains(x):
    return (x * 2) * 0.5, (x + 1) + 0.5, (x * 3) * 5


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8])
def test_constant_folds_leave_integer_wrapping_alone(dtype):
    """``(x * 2) * 0.5`` of int8 wraps in int8 first (100 gives -28.0): folded to ``x * 1.0`` it gave
    100.0, and ``x * 15`` may not fit the dtype (NEP 50's OverflowError)."""
    info = np.iinfo(dtype)
    jf = jit(int_constant_chains, backend="tvm", fastmath=True)
    for values in ([100, info.max, info.min, 0], [info.max - 1, 1, 64, info.min + 1]):
        x = np.array(values, dtype)
        for got, want in zip(jf(x), int_constant_chains(x)):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    assert "fold_constant_products" not in fired(jf) and "fold_constant_sums" not in fired(jf)


def square_root_squared(x):
    return np.sqrt(x) ** 2 + 1


def test_user_rule_with_where():
    calls = []

    def where(m):
        calls.append(m["x"].dtype)
        return m["x"].dtype == np.float64

    rule = Rule(lambda x: np.sqrt(x) ** 2, lambda x: np.abs(x), where=where, exact=False, name="sqrt_squared")
    jf = jit(square_root_squared, backend="tvm", rewrites=[rule])
    x = np.array([4.0, 9.0, 2.0])
    np.testing.assert_array_equal(jf(x), np.abs(x) + 1)        # the rule's value: exactly |x| + 1
    assert "sqrt_squared" in fired(jf)
    x32 = x.astype(np.float32)
    other = jit(square_root_squared, backend="tvm", rewrites=[rule])
    bits_equal(other(x32), square_root_squared(x32))           # where is False for float32: untouched
    assert "sqrt_squared" not in fired(other) and np.dtype(np.float32) in calls


def test_where_reading_a_runtime_value_does_not_fire_and_a_constant_is_guarded():
    rule = Rule(lambda x, k: x * k, lambda x, k: x + x, where=lambda m: m["k"].value == 2, name="times_two")

    def scaled(x, k):
        return x * k + 0.5

    jf = jit(scaled, backend="tvm", rewrites=[rule])
    x = np.arange(4.0)
    for k in (2, 3, 2.0, 5):
        assert_same_as_numpy(scaled, x, k, jitted=jf)


def shifted(x, k):
    return (x + k) * 2.0


def test_a_value_guard_tells_signed_zeros_apart_and_holds_for_its_nan():
    """The specialization made for k = -0.0, where the rule fires (x + -0.0 is x, bit for bit), is not
    reused for k = 0.0 (x + 0.0 makes -0.0 0.0); one made for a NaN holds for the next NaN instead of
    compiling again at every call."""
    add_negative_zero = Rule(lambda x, k: x + k, lambda x, k: x, name="add_negative_zero",
                             where=lambda m: m["x"].dtype.kind == "f" and m["k"].is_python_number
                             and m["k"].value == 0 and math.copysign(1.0, m["k"].value) < 0)
    jf = jit(shifted, backend="tvm", rewrites=[add_negative_zero])
    x = np.array([-0.0, 1.0])
    for k in (-0.0, 0.0, -0.0, 0.0):
        bits_equal(jf(x, k), shifted(x, k))
    assert "add_negative_zero" in fired(jf)
    assert len(jf.fragments[0].entries) == 2
    on_nan = jit(shifted, backend="tvm", rewrites=[add_negative_zero])
    for _ in range(3):
        bits_equal(on_nan(x, float("nan")), shifted(x, float("nan")))
    assert len(on_nan.fragments[0].entries) == 1


SUM_SPELLINGS = [  # (function, whether a pattern np.sum(x) matches it)
    (lambda x: x.sum() * 2, True),
    (lambda x: np.sum(x, None) * 2, True),
    (lambda x: np.sum(x, axis=None) * 2, True),
    (lambda x: np.add.reduce(x, axis=None) * 2, True),
    (lambda x: np.sum(x, None, None, keepdims=False) * 2, True),
    (lambda x: x.sum(dtype=None, out=None) * 2, True),
    (lambda x: np.add.reduce(x) * 2, False),                  # axis 0: not the sum of all
    (lambda x: np.sum(x, axis=0) * 2, False),
    (lambda x: np.sum(x, keepdims=True) * 2, False),
    (lambda x: np.sum(x, keepdims=0) * 2, False),             # the default's value, not its type
]


@pytest.mark.parametrize("fn, matches", SUM_SPELLINGS, ids=[str(k) for k in range(len(SUM_SPELLINGS))])
def test_a_pattern_matches_every_spelling_of_its_defaults(fn, matches):
    """A default argument spelled out (``axis=None``, ``keepdims=False``, by position or keyword) is
    the pattern's ``np.sum(x)``; another value, or the default's value in another type, is not."""
    rule = Rule(lambda x: np.sum(x) * 2, lambda x: np.sum(x + x), name="sum_doubled")
    jf = jit(fn, backend="tvm", rewrites=[rule])
    for x in (np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)):
        assert_same_as_numpy(fn, x, jitted=jf)
    assert ("sum_doubled" in fired(jf)) == matches


def test_register_applies_to_every_function_and_recompiles():
    def halve_twice(x):
        return (x / 2) / 2

    rule = Rule(lambda x: (x / 2) / 2, lambda x: x / 4, name="quarter")
    jf = jit(halve_twice, backend="tvm")
    x = np.array([1.0, 3.0, 1e-320])
    bits_equal(jf(x), halve_twice(x))
    assert "quarter" not in fired(jf)
    rewrite.register(rule)
    try:
        assert rule in rewrite.registered()
        got = jf(x)
        assert "quarter" in fired(jf)
        bits_equal(got, x / 4)                               # the subnormal shows the rule ran
    finally:
        rewrite.unregister("quarter")
    assert rule not in rewrite.registered()
    jf(x)
    assert "quarter" not in fired(jf)
    with pytest.raises(RuleError):
        rewrite.unregister("quarter")


def test_show_lists_fired_rules():
    jf = jit(times_one, backend="tvm")
    jf(np.arange(3.0))
    text = astjit.explain(jf).__str__()
    assert "rule multiply_by_one rewrote" in text
    import io

    out = io.StringIO()
    jf.show(file=out, fragments=True)
    assert "rule multiply_by_one rewrote line" in out.getvalue()


def test_rule_errors():
    with pytest.raises(RuleError, match="same parameters"):
        Rule(lambda x: x * 1, lambda x, y: x)
    with pytest.raises(RuleError, match="computes nothing"):
        Rule(lambda x: x, lambda x: x * 1)
    with pytest.raises(RuleError, match="no op"):
        Rule(lambda x: np.fft.fft(x), lambda x: x)
    with pytest.raises(RuleError, match="indexing"):
        Rule(lambda x: x[0] * 1, lambda x: x[0])
    with pytest.raises(RuleError, match="does not use"):
        Rule(lambda x, y: x * 1, lambda x, y: y)
    with pytest.raises(RuleError, match="neither"):
        jit(times_one, rewrites=["no_such_rule"])
    with pytest.raises(RuleError):
        jit(times_one, rewrites=[42])
    with pytest.raises(RuleError):
        rewrite.register("multiply_by_one")
    with pytest.raises(RuleError, match="list of Rules"):
        jit(times_one, rewrites=3)


def test_an_error_in_where_is_a_rule_error_at_its_line():
    """``m["y"]`` for a parameter the rule does not have: a RuleError naming the rule and the where's
    line, not the KeyError from inside astjit."""
    rule = Rule(lambda x: x * 2, lambda x: x + x, where=lambda m: m["y"].dtype == np.float64, name="doubling")

    def doubled(x):
        return x * 2 + 1

    jf = jit(doubled, backend="tvm", rewrites=[rule])
    with pytest.raises(RuleError, match=r'test_rules.py", line \d+: the where of rule doubling raised KeyError'):
        jf(np.arange(3.0))


def test_every_shipped_rule_is_traced_and_named():
    names = [r.name for r in rewrite.SHIPPED]
    assert len(set(names)) == len(names)
    assert {r.name for r in rewrite.active_rules()} == {r.name for r in rewrite.SHIPPED if r.exact}
    assert {r.name for r in rewrite.active_rules(fastmath=True)} == set(names)
