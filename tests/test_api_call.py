"""How a jitted function is called: a plain signature's rewritten function checks its own guard and is
the object's ``__call__`` (frontend/guard_prologue), other signatures go through a generated call
(api.JitFunction._install_call) or the generic path; all behave as the original."""

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import explain, jit
from astjit.api import JitFunction

SCALE = 2.0


def named_like_the_guard(g, b, fn, M, o0, d0):
    return g * SCALE + b - fn * M + o0 - d0


def test_parameters_named_like_the_guards_own_names():
    args = [np.arange(4.0), 1.5, np.ones(4), 3.0, 0.5, np.full(4, 2.0)]
    jf = assert_same_as_numpy(named_like_the_guard, *args)
    assert_same_as_numpy(named_like_the_guard, *[a * 2 if isinstance(a, float) else a for a in args], jitted=jf)
    assert type(jf).__call__.__name__ == "named_like_the_guard"


def scaled(a, b):
    return a * SCALE + b


def test_keywords_errors_and_a_rebound_global(monkeypatch):
    jf = jit(scaled)
    a = np.arange(5.0)
    np.testing.assert_array_equal(jf(a, 1.0), scaled(a, 1.0))
    np.testing.assert_array_equal(jf(b=2.0, a=a), scaled(a, 2.0))
    with pytest.raises(TypeError, match=r"scaled\(\) missing 1 required positional argument: 'b'"):
        jf(a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        jf(a, 1.0, c=3)
    # (the rewritten function's parameters default to a marker: Python said "from 0 to 2")
    with pytest.raises(TypeError, match=r"^scaled\(\) takes 2 positional arguments but 3 were given$"):
        jf(a, 1.0, 3.0)
    monkeypatch.setitem(globals(), "SCALE", -1.0)     # the guard sees it: the next call reads -1.0
    np.testing.assert_array_equal(jf(a, 1.0), a * -1.0 + 1.0)
    with np.errstate(all="raise"):                    # numpy's error state asks for errors: Python runs
        with pytest.raises(FloatingPointError):
            jf(np.array([np.inf]), np.inf)            # -inf + inf: invalid


def with_defaults(a, b=1.0, *rest, c=2.0):
    return a * b + c + len(rest)


def test_signatures_with_defaults_and_varargs_keep_the_generic_call():
    jf = jit(with_defaults)
    a = np.arange(3.0)
    np.testing.assert_array_equal(jf(a), with_defaults(a))
    np.testing.assert_array_equal(jf(a, 3.0, 1, 2, c=0.5), with_defaults(a, 3.0, 1, 2, c=0.5))
    with_defaults.__defaults__ = (10.0,)
    try:
        np.testing.assert_array_equal(jf(a), with_defaults(a))
    finally:
        with_defaults.__defaults__ = (1.0,)


def later_defaults(a, b):
    return a * b


def test_defaults_set_after_the_first_call_reach_the_next_calls():
    """The guard holds the ``__defaults__`` tuple its call was made for: a default set or changed
    since takes the slow path once, whose new transform fills it in."""
    jf = jit(later_defaults)
    a = np.arange(3.0)
    np.testing.assert_array_equal(jf(a, 2.0), a * 2.0)
    later_defaults.__defaults__ = (5.0,)
    try:
        for _ in range(3):
            np.testing.assert_array_equal(jf(a), a * 5.0)
        later_defaults.__defaults__ = (-1.0,)
        np.testing.assert_array_equal(jf(a), a * -1.0)
        np.testing.assert_array_equal(jf(a, 3.0), a * 3.0)
        later_defaults.__defaults__ = None
        with pytest.raises(TypeError, match="missing 1 required positional argument: 'b'"):
            jf(a)
    finally:
        later_defaults.__defaults__ = None


def counted(a):
    total = 0.0
    for i in range(len(a)):
        total += a[i] * SCALE
    return total


def test_a_deleted_global_and_a_shadowed_builtin_reach_the_next_call(monkeypatch):
    """The guard reads the module's globals as the function does: a global deleted since raises
    Python's NameError at the user's line; a module-level ``len`` defined since (it shadows the builtin)
    is what the next call uses."""
    jf = jit(counted)
    for n in (3, 40):
        a = np.arange(float(n))
        assert jf(a) == counted(a)
    monkeypatch.setitem(globals(), "len", lambda a: 2)
    for n in (3, 40):
        a = np.arange(float(n))
        assert jf(a) == counted(a) == a[0] * SCALE + a[1] * SCALE
    monkeypatch.delitem(globals(), "len")
    monkeypatch.delitem(globals(), "SCALE")
    with pytest.raises(NameError, match="SCALE"):
        jf(np.arange(3.0))
    with pytest.raises(NameError, match="SCALE"):
        jf(np.arange(40.0))


def test_a_plain_signature_calls_the_rewritten_function_itself():
    jf = jit(scaled)
    a = np.arange(4.0)
    for _ in range(2):          # (the second call installs it: api.JitFunction._count_second_call)
        np.testing.assert_array_equal(jf(a, 1.0), scaled(a, 1.0))
    assert type(jf).__call__ is jf._transformed.function
    assert jit(with_defaults)._ensure().guarded is False          # (defaults beside *args, keyword-only)
    assert jit(star_sum)._ensure().guarded is True


def make_closure():
    def helper(x):
        return x + 1.0

    def uses_helper(a):
        return helper(a) * 2.0

    def rebind(fn):
        nonlocal helper
        helper = fn

    return uses_helper, rebind


def test_a_rebound_closure_variable_reaches_the_next_call():
    uses_helper, rebind = make_closure()
    jf = jit(uses_helper)
    a = np.arange(3.0)
    for _ in range(2):
        np.testing.assert_array_equal(jf(a), (a + 1.0) * 2.0)
    rebind(lambda x: x - 5.0)
    for _ in range(2):
        np.testing.assert_array_equal(jf(a), (a - 5.0) * 2.0)


def squares(n, a):
    for i in range(n):
        yield a * i


def test_a_generator_keeps_the_wrapper():
    jf = jit(squares)
    a = np.arange(3.0)
    for n in (0, 2, 5):
        got, want = list(jf(n, a)), list(squares(n, a))
        assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want))


def ratio(a, b):
    return a / b * SCALE


def test_another_quiet_error_state_object_runs_compiled_without_looping():
    """np.errstate makes a new state object each time: the guard asks numpy once, then compares by identity."""
    jf = jit(ratio)
    a, b = np.arange(4.0), np.array([1.0, 0.0, 2.0, 4.0])
    for mode in ("warn", "ignore", "warn"):
        with np.errstate(all=mode):
            for _ in range(3):
                with np.errstate(divide="ignore", invalid="ignore"):
                    want = ratio(a, b)
                np.testing.assert_array_equal(jf(a, b), want)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            jf(np.array([1.0]), np.array([0.0]))
    assert {e.mode for f in jf.fragments for e in f.entries} != {"python"}


def named_like_generated_code(__astjit_o0, __astjit_guard0_o0, __astjit_guard0_missing):
    """astjit/rewrite generates functions with parameters named so; the prologue picks another prefix."""
    return (__astjit_o0 + __astjit_guard0_o0) * np.float64(SCALE) - __astjit_guard0_missing


def test_parameters_named_like_generated_names():
    jf = jit(named_like_generated_code)
    for k in range(3):
        args = (np.arange(3.0) + k, np.ones(3) * k, 2.0 * k)
        np.testing.assert_array_equal(jf(*args), named_like_generated_code(*args))
    assert type(jf).__call__ is jf._transformed.function


def scaled_into(a, out=None, scale=2.0, log=[]):   # noqa: B006 - a mutable default, as users write
    if out is None:
        out = np.empty_like(a)
    out[:] = a * scale
    log.append(len(log))
    return out, len(log)


def test_a_signature_with_defaults_takes_the_generated_call_and_the_original_default_objects():
    """Defaults reach the rewritten function as the original's objects (a mutable default list keeps
    growing across calls, as in Python), by position or keyword, on the generated call."""
    jf = jit(scaled_into)
    a = np.arange(4.0)
    for args, kwargs in (((a,), {}), ((a,), {"scale": 3.0}), ((a, None, 0.5), {}), ((a,), {"out": np.zeros(4)})):
        got, n = jf(*args, **kwargs)
        want = a * (args[2] if len(args) > 2 else kwargs.get("scale", 2.0))
        np.testing.assert_array_equal(got, want)
    assert n == 4 and scaled_into.__defaults__[2] == [0, 1, 2, 3]
    assert type(jf).__call__ is not JitFunction.__call__
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        jf()
    with pytest.raises(TypeError, match=r"^scaled_into\(\) takes from 1 to 4 positional arguments but 5 were given$"):
        jf(a, None, 1.0, [], 9)


def scaled_by_default(a, b=2.0):
    return a * b


def doubled_with_options(a, **options):
    return a * 2.0, options


def test_keywords_named_like_the_calls_own_first_parameter():
    """``self=`` reached the generic call's own ``self`` ("got multiple values for argument 'self'")
    instead of the original's ``**kwargs``; ``__astjit_self=`` the generated call's first parameter."""
    a = np.arange(3.0)
    jf = jit(doubled_with_options)
    for _ in range(3):                    # (the first call transforms; the later ones run as installed)
        value, options = jf(a, self=1, a_=2)
        np.testing.assert_array_equal(value, a * 2.0)
        assert options == {"self": 1, "a_": 2}
    jf = jit(scaled_by_default)
    for _ in range(3):
        np.testing.assert_array_equal(jf(a), a * 2.0)
        with pytest.raises(TypeError) as info:
            jf(a, __astjit_self=1)
        with pytest.raises(TypeError) as plain:
            scaled_by_default(a, __astjit_self=1)
        assert str(info.value) == str(plain.value) == "scaled_by_default() got an unexpected keyword argument '__astjit_self'"


def _jitted_at_each_call(x, k):
    return jit(lambda y: y * k + 1.0)(x)


def _decorated_at_each_call(x):
    @jit
    def inner(y):
        return np.sqrt(y) * 2.0

    return inner(x)


@pytest.fixture
def any_call_is_short(monkeypatch):
    """Every first call counts as short (api.SHORT_CALL_SECONDS), whatever compiling took here."""
    import astjit.api as api

    monkeypatch.setattr(api, "SHORT_CALL_SECONDS", 1e9)


def test_a_function_jitted_anew_at_each_call_runs_as_python_once_that_is_seen(any_call_is_short):
    """``jit(lambda ...)(x)`` or ``@jit`` on an inner def: each call made a new jitted function and
    transformed it (milliseconds); after a few such short lives a new one runs as Python."""
    import gc

    import astjit.api as api

    rng = np.random.default_rng(0)
    cases = ((_jitted_at_each_call, lambda x: (x, float(rng.integers(1, 9))), lambda x, k: x * k + 1.0),
             (_decorated_at_each_call, lambda x: (x,), lambda x: np.sqrt(x) * 2.0))
    for fn, make, plain in cases:
        inner = next(c for c in fn.__code__.co_consts if hasattr(c, "co_code"))
        for _ in range(api.SHORT_LIVED_AT_MOST + 4):
            args = make(rng.random(7))
            got, want = fn(*args), plain(*args)
            assert got.dtype == want.dtype and np.array_equal(got, want)
            gc.collect()                  # (a jitted function lives in a reference cycle)
        assert api._short_lived.get(inner, 0) >= api.SHORT_LIVED_AT_MOST


def test_a_jitted_function_dropped_again_and_again_says_so_in_explain(any_call_is_short):
    import gc

    import astjit.api as api

    def make():
        return jit(lambda y: y + 2.0)

    for _ in range(api.SHORT_LIVED_AT_MOST + 1):
        make()(np.ones(3))
        gc.collect()
    f = make()
    assert np.array_equal(f(np.ones(3)), np.full(3, 3.0))
    assert "jitted anew" in str(explain(f)) and not f.fragments
    assert "return y + 2.0" in f.source          # (parsed when inspected)


def test_jitted_functions_called_twice_or_long_do_not_count_as_short_lived(monkeypatch):
    """Dropped after a second call (a loop that ran as written each time, so no Fragment was called),
    or after one long call (a closure smoothing a large array once), a jitted function is not one made
    at each call: the next ones still compile."""
    import gc

    import astjit.api as api

    def make(alpha):
        def smooth(a):
            out = np.empty_like(a)
            s = a[0]
            for i in range(a.shape[0]):
                s = alpha * a[i] + (1.0 - alpha) * s
                out[i] = s
            return out

        return jit(smooth)

    code = make(0.5).original.__code__
    for k in range(api.SHORT_LIVED_AT_MOST + 2):         # twice each, on 3 elements (as written)
        f = make(0.1 * k)
        for _ in range(2):
            f(np.ones(3))
        del f
        gc.collect()
    monkeypatch.setattr(api, "SHORT_CALL_SECONDS", 0.0)  # each single call counts as long
    for k in range(api.SHORT_LIVED_AT_MOST + 2):
        make(0.1 * k)(np.ones(3))
        gc.collect()
    assert api._short_lived.get(code, 0) == 0
    f = make(0.3)
    a = np.linspace(0.0, 1.0, 50)
    assert np.array_equal(f(a), make(0.3).original(a)) and f.fragments


def test_jitted_functions_that_stay_alive_all_compile():
    """A factory's jitted closures that the program keeps are not short-lived: each compiles."""
    import gc

    import astjit.api as api

    def make(k):
        return jit(lambda y: y * k - 1.0)

    kept = [make(float(k)) for k in range(api.SHORT_LIVED_AT_MOST + 4)]
    for k, f in enumerate(kept):
        gc.collect()
        assert np.array_equal(f(np.arange(4.0)), np.arange(4.0) * k - 1.0)
        assert f.fragments, k


def star_sum(a, *rest, **named):
    return a * SCALE + sum(rest) + sum(named.values())


def star_only(*rest):
    return np.add(rest[0], 1.0) * SCALE


def test_star_args_and_keywords_check_their_guard_in_the_rewritten_function(monkeypatch):
    """``*args`` and ``**kwargs`` without defaults take the prologue (one frame a call, 0.26 -> 0.10 us for
    ``f(x, *ys)``): the arguments reach the function, the slow path after a rebound global, and Python's
    own errors, as they reach the original."""
    a = np.arange(4.0)
    for fn, calls in ((star_sum, [((a,), {}), ((a, 1.0, 2.0), {}), ((a,), {"k": 3.0}), ((), {"a": a, "z": 1.0}),
                                  ((a, 2.0), {"m": 0.5, "n": 0.25})]),
                      (star_only, [((a,), {}), ((a, 3, 4), {}), ((2.0,), {})])):
        jf = jit(fn)
        for scale in (2.0, -1.0):
            monkeypatch.setitem(globals(), "SCALE", scale)
            for args, kwargs in calls:
                got, want = jf(*args, **kwargs), fn(*args, **kwargs)
                assert type(got) is type(want) and np.array_equal(got, want)
        assert type(jf).__call__ is jf._transformed.function          # (the rewritten function itself)
    jf = jit(star_sum)
    with pytest.raises(TypeError, match=r"^star_sum\(\) missing 1 required positional argument: 'a'$"):
        jf()
    with pytest.raises(TypeError, match=r"^star_sum\(\) missing 1 required positional argument: 'a'$"):
        jf(k=1.0)
    with pytest.raises(TypeError, match="got multiple values for argument 'a'"):
        jf(a, a=a)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        jit(star_only)(a, k=1)


def scaled_with_defaults(a, b=2.0, c=None, **named):
    return a * b * SCALE + (0.0 if c is None else c) + sum(named.values())


def test_defaults_check_their_guard_in_the_rewritten_function(monkeypatch):
    """A signature with defaults takes the prologue: the original's default objects fill what a call
    leaves out, a rebound global sends the call's own arguments (never the markers of the ones left
    out) to the slow path, and defaults changed since are seen."""
    jf = jit(scaled_with_defaults)
    a = np.arange(3.0)
    calls = [((a,), {}), ((a, 3.0), {}), ((a,), {"c": 1.0}), ((), {"a": a, "b": -1.0, "k": 0.5}), ((a, 1.0, 2.0), {})]
    for scale in (2.0, -3.0, 2.0):
        monkeypatch.setitem(globals(), "SCALE", scale)
        for args, kwargs in calls:
            np.testing.assert_array_equal(jf(*args, **kwargs), scaled_with_defaults(*args, **kwargs))
    assert type(jf).__call__ is jf._transformed.function
    monkeypatch.setattr(scaled_with_defaults, "__defaults__", (10.0, 1.0))
    for args, kwargs in calls:
        np.testing.assert_array_equal(jf(*args, **kwargs), scaled_with_defaults(*args, **kwargs))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        jf(b=1.0)


def two_scaled(x, y=1.0):
    return x * y + 1.0


def keywords_only_extra(x, **kw):
    return x * 3.0 + len(kw)


def test_a_defaults_tuple_longer_than_the_parameters_gives_its_last_items_as_python_does(monkeypatch):
    """``f.__defaults__ = (10.0, 20.0, 30.0)`` on ``def f(x, y=1.0)``: Python fills x and y from the last
    two (the guarded call took the first ones: 30.0 for 90.0)."""
    for fn, defaults, calls in ((two_scaled, (10.0, 20.0, 30.0), [(), (np.ones(3),), (np.ones(3), 2.0)]),
                                (keywords_only_extra, (np.ones(2), 7.0), [(), (np.ones(3),)])):
        monkeypatch.setattr(fn, "__defaults__", defaults)
        jf = jit(fn)
        for _ in range(2):
            for args in calls:
                got, want = jf(*args), fn(*args)
                assert type(got) is type(want) and np.array_equal(got, want), (fn.__name__, args, got, want)


class _Scaled:
    k = 2.0

    @jit
    def forward(self, x):
        return x * self.k + 1.0

    @classmethod
    @jit
    def build(cls, x):
        return x * cls.k


def test_explain_takes_bound_methods():
    model = _Scaled()
    x = np.linspace(0, 1, 3000)
    assert np.array_equal(model.forward(x), x * 2.0 + 1.0)
    assert np.array_equal(_Scaled.build(x), x * 2.0)
    assert str(explain(model.forward)) == str(explain(_Scaled.forward)) == str(model.forward.explain())
    assert "build" in str(explain(_Scaled.build))
    with pytest.raises(TypeError, match="decorated with @astjit.jit, got method"):
        explain(_Scaled().__init__)


def shifted(x, y, *, scale, off=1.0):
    return x * scale * SCALE + y - off


def stacked_shift(*arrs, scale=1.0, **named):
    return np.add(arrs[0], sum(named.values())) * scale * SCALE + len(arrs)


def outcome(fn, args, kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        return type(exc), str(exc)


def assert_same_outcome(got, want):
    if isinstance(want, tuple) and isinstance(want[0], type):
        assert got == want
    else:
        assert type(got) is type(want) and np.array_equal(got, want)


def test_keyword_only_parameters_check_their_guard_in_the_rewritten_function(monkeypatch):
    """Keyword-only parameters take the prologue (the generic call forwarding ``**kwargs`` cost 0.8 us
    a call): what a call gives or leaves out, Python's own errors, the slow path after a rebound
    global, and defaults changed in the original's ``__kwdefaults__`` reach the function as they
    reach the original."""
    x, y = np.arange(4.0), np.ones(4)
    calls = {shifted: [((x, y), {"scale": 2.0}), ((x, y), {"scale": 2.0, "off": 0.5}), ((), {"y": y, "x": x, "scale": 3}),
                       ((x,), {"scale": 1.0}), ((x, y), {}), ((x, y, 3.0), {"scale": 1.0}), ((x, y), {"scale": 1, "z": 2})],
             stacked_shift: [((x,), {}), ((x, y, y), {"scale": 3.0}), ((x,), {"k": 2.0, "scale": 0.5}), ((), {})]}
    for fn, cases in calls.items():
        jf = jit(fn)
        for scale in (2.0, -1.0):
            monkeypatch.setitem(globals(), "SCALE", scale)
            for _ in range(2):
                for args, kwargs in cases:
                    assert_same_outcome(outcome(jf, args, kwargs), outcome(fn, args, kwargs))
        assert type(jf).__call__ is jf._transformed.function
    jf = jit(shifted)
    monkeypatch.setitem(shifted.__kwdefaults__, "off", 5.0)          # changed in place
    np.testing.assert_array_equal(jf(x, y, scale=1.0), shifted(x, y, scale=1.0))
    monkeypatch.delitem(shifted.__kwdefaults__, "off")                 # deleted: now required
    assert outcome(jf, (x, y), {"scale": 1.0}) == outcome(shifted, (x, y), {"scale": 1.0})
    monkeypatch.setattr(shifted, "__kwdefaults__", {"scale": 10.0, "off": 0.0})     # replaced
    for _ in range(2):
        np.testing.assert_array_equal(jf(x, y), shifted(x, y))


class LoudDefaults(dict):
    def get(self, key, default=None):          # (Python's binding of arguments never calls it)
        return 100.0


def test_keyword_only_defaults_are_read_as_python_reads_them():
    jf = jit(shifted)
    x, y = np.arange(3.0), np.ones(3)
    saved = shifted.__kwdefaults__
    try:
        shifted.__kwdefaults__ = LoudDefaults(off=2.0)
        for _ in range(3):
            np.testing.assert_array_equal(jf(x, y, scale=1.0), shifted(x, y, scale=1.0))
    finally:
        shifted.__kwdefaults__ = saved
