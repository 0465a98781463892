"""numpy's floating-point error state: under np.errstate(all="raise") or np.seterr, a jitted function
raises FloatingPointError where numpy does; under the default state and 'ignore' it returns numpy's
values from compiled code."""

import warnings

import numpy as np
import pytest
from differential import assert_same_as_numpy

from astjit import explain, jit


def divide_and_log(a, b):
    return np.log(a / b) * 2.0 + 1.0


@pytest.mark.parametrize("mode", ["raise", "call", "print"])
def test_errstate_raise_reaches_compiled_code(mode, capfd):
    jf = jit(divide_and_log)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 2.0])
    assert_same_as_numpy(divide_and_log, a, a + 1, jitted=jf)       # compiles under the default state
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            jf(a, b)
        assert_same_as_numpy(divide_and_log, a, a + 1, jitted=jf)   # no error: same values
    if mode == "call":
        calls = []
        with np.errstate(all="call", call=lambda kind, flag: calls.append(kind)):
            got = jf(a, b)
        assert calls and np.isinf(got[1])
    elif mode == "print":
        with np.errstate(all="print"):
            jf(a, b)
        captured = capfd.readouterr()
        assert "divide by zero" in captured.out + captured.err
    else:
        old = np.seterr(all="raise")
        try:
            with pytest.raises(FloatingPointError):
                jf(a, b)
        finally:
            np.seterr(**old)
    with np.errstate(all="ignore"):
        assert_same_as_numpy(divide_and_log, a, b, jitted=jf)
    assert {e.mode for f in jf.fragments for e in f.entries} & {"tvm", "mixed"}


def test_explain_says_calls_under_a_raising_error_state_ran_as_python():
    jf = jit(divide_and_log)
    a = np.array([1.0, 2.0, 3.0])
    with np.errstate(all="raise"):
        assert_same_as_numpy(divide_and_log, a, a + 1, jitted=jf)
        assert_same_as_numpy(divide_and_log, a, a + 2, jitted=jf)
    text = str(explain(jf))
    assert "nothing fell back" not in text
    assert text.count("floating-point error state asked for errors") == 1     # once, not per call
    assert "calls under such a state run as Python" in text


def errstate_inside(a, b):
    c = a * 2
    with np.errstate(divide="raise"):
        d = c // b
    return d + 1


def test_errstate_inside_the_function():
    jf = jit(errstate_inside)
    a = np.arange(1, 7)
    for b in (np.full(6, 2), np.arange(1, 7), np.full(6, 3)):
        assert_same_as_numpy(errstate_inside, a, b, jitted=jf)
    with pytest.raises(FloatingPointError):
        jf(a, np.zeros(6, int))
    assert_same_as_numpy(errstate_inside, a, np.full(6, 2), jitted=jf)


def scaled_ratios(a, b, out):
    for i in range(a.shape[0]):
        out[i] = np.log(a[i] / b[i]) + 1.0
    return out


def test_errstate_raise_reaches_a_compiled_loop():
    """A loop kernel runs no numpy error checks: under a raising state the loop runs as Python, with
    numpy's error at the user's line and the elements written before it, as plain Python leaves them."""
    jf = jit(scaled_ratios)
    rng = np.random.default_rng(0)
    for n in (200, 300):
        a, b = rng.random(n) + 0.5, rng.random(n) + 0.5
        assert_same_as_numpy(scaled_ratios, a, b, np.zeros(n), jitted=jf)
    assert {e.mode for f in jf.fragments for e in f.entries} == {"tvm"}
    a, b = rng.random(300) + 0.5, rng.random(300) + 0.5
    b[150] = 0.0
    for state in ({"divide": "raise"}, {"all": "raise"}):
        with np.errstate(**state):
            got, expected = np.zeros(300), np.zeros(300)
            with pytest.raises(FloatingPointError):
                scaled_ratios(a, b, expected)
            with pytest.raises(FloatingPointError):
                jf(a, b, got)
            np.testing.assert_array_equal(got, expected)
            assert np.count_nonzero(got) == 150
    with np.errstate(divide="ignore"):
        assert_same_as_numpy(scaled_ratios, a, b, np.zeros(300), jitted=jf)


def quiet_ratio(a, b):
    s = a * 2.0 - b
    with np.errstate(divide="ignore", invalid="ignore"):
        r = s / b
        r = r * 2.0 + 1.0
    return r * a - s


def test_a_state_entered_at_each_call_is_worked_out_once_per_call(monkeypatch):
    """``np.errstate`` makes a new state at each entry and restores the one before on leaving: the
    modes of each new state are read once, and the restored state is still known (with a block before
    and after the ``with``, three states were read per call, about 1 us each)."""
    from astjit.runtime import fpstate

    jf = jit(quiet_ratio)
    a, b = np.array([1.0, 0.0, -1.0, 0.0, 3.0]), np.array([0.0, 0.0, 2.0, -0.0, 4.0])
    for _ in range(5):
        assert_same_as_numpy(quiet_ratio, a, b, jitted=jf)
    reads = []
    modes = fpstate._error_modes
    monkeypatch.setattr(fpstate, "_error_modes", lambda: reads.append(1) or modes())
    for k in range(10):
        assert_same_as_numpy(quiet_ratio, a * k, b, jitted=jf)
        assert len(reads) <= k + 1, reads
    with np.errstate(over="raise"):            # a loud state seen again is known too
        for _ in range(3):
            assert_same_as_numpy(quiet_ratio, a, b, jitted=jf)
    assert np.seterr()["over"] == "warn"


def test_a_new_quiet_state_is_the_one_the_next_blocks_meet(monkeypatch):
    """The first block under a new ``np.errstate`` works its modes out and keeps that state as the quiet
    one: the blocks after it in the ``with`` take the dispatch's fast test (``last_quiet``) instead of
    working the modes out again through the full dispatch; the state restored on leaving, met after
    each ``with``, stays known however many states came and went."""
    from astjit.runtime import fpstate

    assert fpstate.kernels_allowed()
    reads = []
    modes = fpstate._error_modes
    monkeypatch.setattr(fpstate, "_error_modes", lambda: reads.append(1) or modes())
    for k in range(3 * fpstate.RECENT_STATES):
        with np.errstate(divide="ignore"):
            assert fpstate.kernels_allowed() and fpstate.last_quiet[0] is fpstate.current_state()
            assert fpstate.kernels_allowed()
        assert fpstate.kernels_allowed()
        with np.errstate(over="raise"):
            assert not fpstate.kernels_allowed() and fpstate.last_loud[0] is fpstate.current_state()
        assert fpstate.kernels_allowed()
        assert len(reads) == 2 * (k + 1)


def log_or_zeros(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            y = np.log(x) + 1.0
        except RuntimeWarning:
            y = np.zeros_like(x)
    return y * 2.0


def test_a_warnings_filter_raising_inside_the_function():
    """A RuntimeWarning that a filter turns into an exception inside the function changes its result:
    its calls run as Python while the filter is set (kernels emit no warnings)."""
    jf = jit(log_or_zeros)
    for x in (np.linspace(1, 2, 50), -np.linspace(1, 2, 50), np.linspace(0.5, 3, 20), np.array([-1.0, 2.0])):
        for _ in range(3):
            assert_same_as_numpy(log_or_zeros, x, jitted=jf)


def sqrt_plus(a):
    return np.sqrt(a) + 1.0


@pytest.mark.parametrize("category", [RuntimeWarning, Warning])
def test_a_warnings_filter_raising_around_the_call(category):
    """``warnings.simplefilter("error")`` (``pytest -W error``) around a call: numpy's RuntimeWarning
    raises where plain numpy's does; after the filter is gone, the kernel's values again."""
    jf = jit(sqrt_plus)
    good, bad = np.linspace(0, 4, 64), np.array([4.0, -1.0, 9.0])
    for _ in range(3):
        assert_same_as_numpy(sqrt_plus, good, jitted=jf)
    with warnings.catch_warnings():
        warnings.simplefilter("error", category)
        for _ in range(3):
            with pytest.raises(RuntimeWarning, match="invalid value"):
                jf(bad)
            assert_same_as_numpy(sqrt_plus, good, jitted=jf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same_as_numpy(sqrt_plus, bad, jitted=jf)
    assert {e.mode for f in jf.fragments for e in f.entries} & {"tvm", "mixed"}


def test_threads_entering_error_states_together_never_see_an_error():
    """Each thread's ``np.errstate`` is its own (a context variable); the states met lately are shared,
    and threads dropping the oldest of them together must not raise (a KeyError did)."""
    import sys
    import threading

    from astjit.runtime import fpstate

    errors = []

    def worker():
        try:
            for i in range(3000):
                with np.errstate(divide=("ignore", "warn", "raise")[i % 3]):
                    assert fpstate.kernels_allowed() is (i % 3 != 2)
        except Exception as exc:       # (what the test is for: any error, reported below)
            errors.append(repr(exc))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=worker) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []


def test_a_compile_silences_its_own_thread_alone(recwarn):
    """A compile's probes and a first call's timed runs ignore warnings through a filter put first in
    the process's filters list; its category matches in the compiling thread only, so a warning of
    another thread meanwhile is raised under its ``error`` filter, or shown, as without astjit."""
    import threading

    from astjit.runtime.fpstate import silenced

    inside, seen = threading.Event(), []

    def other_thread():
        inside.wait()
        try:
            warnings.warn("another thread's", UserWarning, stacklevel=1)
            seen.append("not raised")
        except UserWarning:
            seen.append("raised")

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        thread = threading.Thread(target=other_thread)
        thread.start()
        with silenced():
            warnings.warn("the compile's own", UserWarning, stacklevel=1)       # ignored here
            with silenced():                                        # (nested: still ignored)
                warnings.warn("the compile's own", UserWarning, stacklevel=1)
            warnings.warn("the compile's own", UserWarning, stacklevel=1)
            inside.set()
            thread.join()
        with pytest.raises(UserWarning):
            warnings.warn("after", UserWarning, stacklevel=1)
    assert seen == ["raised"]
