"""``raise`` inside compiled loops (backends/tvm/loops.LoopLowering.raise_statement): the kernel stops at
the statement with the effects Python leaves, and the runner raises the same exception, with the same
message made from the same values, at the user's line."""

import math
import traceback

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]
rng = np.random.default_rng(23)


class Singular(Exception):
    pass


def pivots(M):
    """Partial pivoting that gives up on a zero column, with the column and the pivot in the message."""
    n = M.shape[0]
    for k in range(n):
        p = k
        best = abs(M[k, k])
        for r in range(k + 1, n):
            if abs(M[r, k]) > best:
                best = abs(M[r, k])
                p = r
        if best < 1e-12:
            raise Singular(f"matrix is singular at column {k} (pivot {best!r}, {best:.3e})")
        for c in range(n):
            M[k, c], M[p, c] = M[p, c], M[k, c]
        for r in range(k + 1, n):
            f = M[r, k] / M[k, k]
            for c in range(k, n):
                M[r, c] -= f * M[k, c]
    return M


def roots(a, out):
    for i in range(len(a)):
        if a[i] < 0:
            raise ValueError("negative value", i, a[i])     # a numpy float64 in the arguments
        out[i] = math.sqrt(a[i])
    return out


def safe_div(x, y):
    if y == 0.0:
        raise ZeroDivisionError(f"y is zero for x={x!r}")
    return x / y


def ratios(a, b, out):
    for i in range(len(a)):
        out[i] = safe_div(a[i], b[i])
    return out


def capped(a, cap):
    total = 0
    for i in range(len(a)):
        total += int(a[i])
        if total > cap:
            raise OverflowError
    return total


def test_a_raise_stops_the_kernel_with_pythons_effects_and_exception():
    singular = rng.random((6, 6))
    singular[4] = singular[1] * 3.0
    check(pivots, [(rng.random((5, 5)) + 5 * np.eye(5),), (singular,), (np.zeros((3, 3)),),
                   (rng.random((12, 12)) + np.eye(12),)])
    check(roots, [(rng.random(40), np.zeros(40)), (np.array([1.0, 4.0, -2.0, 9.0]), np.zeros(4)),
                  (np.array([1.0, -0.0, np.nan]), np.zeros(3)), (np.array([-1.5], np.float32), np.zeros(1))])
    check(ratios, [(rng.random(20), rng.random(20) + 0.1, np.zeros(20)),
                   (np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 2.0]), np.zeros(3))])
    check(capped, [(np.arange(100), 10**6), (np.arange(100), 100), (np.arange(100.0), 50), (np.zeros(0), -1)])


def test_the_raised_exception_points_at_the_users_line():
    jitted = jit(ratios)
    for _ in range(2):
        with pytest.raises(ZeroDivisionError, match="y is zero for x=np.float64") as info:
            jitted(np.array([1.0, 2.0]), np.array([1.0, 0.0]), np.zeros(2))
        frame = traceback.extract_tb(info.value.__traceback__)[-1]
        assert frame.filename == __file__ and frame.line.startswith("raise ZeroDivisionError"), frame
        assert frame.name == "safe_div"      # (the inlined function raising, as in plain Python)


def test_the_raising_frame_is_named_as_the_users_function_and_holds_no_astjit_names():
    """The frame at the user's line reads ``in roots`` (it read ``in <module>``, with astjit's
    ``__astjit_exception`` and ``__builtins__`` as its locals); the loop's own variables are not kept
    by the kernel, so it holds none."""
    jitted = jit(roots)
    with pytest.raises(ValueError) as info:
        jitted(np.array([1.0, -2.0]), np.zeros(2))
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (frame.filename, frame.name, frame.line.strip()) == (
        __file__, "roots", 'raise ValueError("negative value", i, a[i])     # a numpy float64 in the arguments')
    tb = info.value.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_locals == {}
    assert getattr(tb.tb_frame.f_code, "co_qualname", roots.__qualname__) == roots.__qualname__  # (3.11+)


def floor_divided_sum(a, d):
    s = 0
    for i in range(a.shape[0]):
        s += int(a[i]) // d
    return s


def square_roots_sum(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += math.sqrt(a[i])
    return s


@pytest.mark.parametrize("fn, args, error", [
    (floor_divided_sum, (np.arange(100.0), 0), ZeroDivisionError),
    (square_roots_sum, (np.linspace(-1.0, 1.0, 100),), ValueError)], ids=["int // 0", "math.sqrt(-1)"])
def test_an_error_the_kernel_reports_ends_at_the_users_line(fn, args, error):
    """The exception, made by running the operation in Python, kept the traceback of where it was
    made: the last frames were astjit's (backends/tvm/loops, loop_types)."""
    jitted = jit(fn)
    for _ in range(2):
        with pytest.raises(error) as info:
            jitted(*args)
        frame = traceback.extract_tb(info.value.__traceback__)[-1]
        assert (frame.filename, frame.name) == (__file__, fn.__name__) and frame.line.startswith("s +="), frame
    assert [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries] == ["tvm"]


def test_each_raise_site_is_compiled_once(monkeypatch):
    """The code that raises at the user's line is made once per place, not at each raise (compiling
    it each time cost 30-170 us a raise)."""
    from astjit.runtime import loop_fragment

    loop_fragment._raising_code.cache_clear()
    compiles = []
    real_compile = compile

    def counting(source, filename, mode, *args, **kwargs):
        if isinstance(source, str) and "raise __astjit_exception" in source:
            compiles.append(filename)
        return real_compile(source, filename, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.compile", counting)
    jitted = jit(ratios)
    for k in range(4):
        with pytest.raises(ZeroDivisionError) as info:
            jitted(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, float(k)]), np.zeros(3))
        assert traceback.extract_tb(info.value.__traceback__)[-1].filename == __file__
    assert len(compiles) == 1


def raise_from(a):
    for i in range(len(a)):
        if a[i] < 0:
            raise ValueError("negative") from None
    return a


def raise_starred(a):
    for i in range(len(a)):
        if a[i] < 0:
            raise UnicodeError(f"at {i}", *())
    return a


def raise_of_a_call(a):
    for i in range(len(a)):
        if a[i] < 0:
            raise ValueError(str(i))
    return a


def raise_of_an_instance(a, exc):
    for i in range(len(a)):
        if a[i] < 0:
            raise exc
    return a


def raise_of_a_complex(a, w):
    for i in range(len(a)):
        if a[i] < 0:
            raise ValueError(w * a[i])
    return a


class NoConvergence(Exception):
    pass


def cube_roots(cs, out, tol, most):
    for k in range(len(cs)):
        x = 1.0                              # a Python float, numpy's after the first step
        it = 0
        while True:
            step = (x * x * x - cs[k]) / (3 * x * x)
            x -= step
            it += 1
            if abs(step) < tol:
                break
            if it >= most:
                raise NoConvergence(f"root {k}: no convergence after {it} steps, x={x}", x, it)
        out[k] = x
    return out


def sum_until_negative(a):
    s = 0
    for i in range(len(a)):
        s += a[i]                            # a Python int, then numpy's type
        if s < 0:
            raise ValueError(s, f"{s!r}")
    return s


def test_a_raise_of_a_value_of_either_type_gives_the_type_it_has():
    """A value that is a Python float (or int) on some iterations and numpy's on others is raised as
    the one it is where the loop stops (its type's index beside its bits in the kernel's status)."""
    cs = rng.random(12) * 10 + 1
    check(cube_roots, [(cs, np.zeros(12), 1e-12, 50), (cs, np.zeros(12), 1e-12, 3), (cs, np.zeros(12), 1e-12, 1),
                       (cs.astype(np.float32), np.zeros(12), 1e-6, 2), (np.arange(1, 5), np.zeros(4), 1e-9, 4)])
    check(sum_until_negative, [(np.array([1, 2, -5, 4]),), (np.arange(5),), (np.array([-2.5, 1.0]),),
                               (np.array([-3], np.int8),)])


def raise_of_calls(a, limit):
    for i in range(len(a)):
        x = a[i] * 2
        if x > limit:
            raise ValueError(float(x), int(x), np.float32(x), f"{abs(x) + 1:.3f}")
    return 0


def test_a_raise_of_calls_of_the_values_compiles():
    """Arguments that call functions the loop compiles (``float(x)``, ``np.float32(x)``, in an
    f-string's field): lowering failed on them (their copies were looked up among the loop's calls)."""
    check(raise_of_calls, [(np.arange(20.0), 5.0), (np.arange(3.0), 10.0), (np.array([-7.5, 9.25]), 1.0)])


@pytest.mark.parametrize("fn, reason", [
    (raise_from, "a raise other than of an exception class called with values"),
    (raise_starred, "arguments are not values of the loop"),
    (raise_of_a_call, "a call of str"),
    (raise_of_a_complex, "a raise of a complex value"),
    (raise_of_an_instance, "a raise of something other than an exception class"),
])
def test_other_raises_keep_the_loop_in_python_and_say_why(fn, reason):
    extra = (KeyError("k"),) if fn is raise_of_an_instance else (1j,) if fn is raise_of_a_complex else ()
    jitted = check(fn, [(np.array([1, 2, -3, 4]), *extra), (np.arange(5), *extra)], compiled=False)
    assert reason in str(jitted.explain()), str(jitted.explain())


def stored_choice(a, b):
    for i in range(len(a)):
        b[i] = a[i] if a[i] != 0 else math.log(a[i])
    return b


def stored_or(a, b):
    for i in range(len(a)):
        b[i] = a[i] or math.log(a[i])
    return b


def stored_min_of_choice(a, b):
    for i in range(len(a)):
        b[i] = min(a[i], 5.0 if a[i] != 0 else 1.0 / float(a[i]))
    return b


def stored_chain(a, b):
    for i in range(len(a)):
        b[i] = 0.0 < a[i] < math.exp(a[i] * 1000.0)
    return b


def stored_pair(a, b, c):
    for i in range(len(a)):
        b[i], c[i] = a[i], (a[i] if a[i] != 0 else math.log(a[i]))
    return b, c


@pytest.mark.parametrize("fn", [stored_choice, stored_or, stored_min_of_choice, stored_chain])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_expression_raising_in_one_branch_stores_nothing(fn, dtype):
    """``b[i] = x if c else E`` where E raises: Python stores nothing into ``b[i]``; the kernel used to
    store what the register held (the error code's bits, a stale value)."""
    calls = [(np.array(a, dtype), np.full(len(a), 7.0, dtype))
             for a in ([1, 2, 0, 3], [1, 2, 3, 4, 5, 6, 0], [0.5, 2, 3], [1, 2, 3, 4, 5, 6, 9], [4, 0, 0])]
    check(fn, calls)


def test_a_tuple_store_raising_in_one_item_stores_no_target():
    calls = [(np.array(a), np.full(len(a), 7.0), np.full(len(a), 7.0)) for a in ([1.0, 2, 0, 3], [5.0, 6, 7], [0.0, 1])]
    check(stored_pair, calls)
