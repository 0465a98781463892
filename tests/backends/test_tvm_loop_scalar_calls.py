"""Loop kernels calling scalar functions whose result type or value needs care: ``max``/``min`` of a
Python number and a numpy one (the result is whichever argument wins, of its own type), numpy's scalar
types as casts (``np.float32(x)``), ``round(x)`` and ``divmod``."""

import math

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import alternating_pi, int_horner, neumaier_sum

from astjit import jit

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(7)
EDGES = np.array([np.nan, 1.0, -0.0, 0.0, np.inf, -np.inf, 2.5, -2.5, 0.5, -0.5, 1e300, np.nan])


def arrays(n):
    return [rng.random(n) - 0.5, (rng.random(n) * 100 - 50).astype(np.float32), EDGES.copy()]


def running_max(a):
    m = -math.inf                       # a Python float until an element beats it
    for i in range(len(a)):
        m = max(m, a[i])
    return m


def smallest_below(a):
    m = 10                              # a Python int until an element is below it
    for i in range(len(a)):
        m = min(m, a[i], 5.5)
    return m


def largest_magnitude(a):
    m = 0.0
    for i in range(len(a)):
        m = max(abs(a[i]), m)           # a tie keeps the first argument: the element
    return m


def test_min_and_max_of_python_and_numpy_numbers_keep_the_winners_type():
    calls = [(a,) for n in (1, 3, 40) for a in arrays(n)]
    calls += [(np.array([np.nan, 1.0]),), (np.array([1.0, np.nan]),), (np.array([-np.inf]),),
              (np.array([0.0, -0.0]),), (np.zeros(0),), (np.array([20.0, 3.0]),)]
    calls += [(rng.integers(0, 200, 30).astype(np.uint8),), (rng.integers(-9, 9, 30).astype(np.int32),)]
    for fn in (running_max, smallest_below, largest_magnitude):
        check(fn, calls)


def test_an_int64_element_in_a_float_variable_runs_as_python():
    # the variable would hold numpy int64s (any value) and Python floats in one float64
    jitted = check(running_max, [(rng.integers(-2**62, 2**62, 20),), (np.array([2**53 + 1]),)], compiled=False)
    assert "may reach 2**53" in str(jitted.explain())


def float32_casts(a, out):
    s = np.float32(0.0)
    for i in range(len(a)):
        out[i] = np.float32(a[i]) * np.float32(2.0) + np.float32(i)
        s += np.float32(a[i])
    return out, s


def float64_casts(a):
    s = 0.0
    for i in range(len(a)):
        s = s + np.float64(a[i]) / 3        # a numpy float64: dividing by zero would give inf
    return s


def int64_casts(a, k, out):
    for i in range(len(a)):
        out[i] = np.int64(a[i] * 2) % 7 + np.int64(k * 2.5)
    return out


def test_numpy_scalar_types_cast_as_numpy_does():
    calls = [(a, np.zeros(len(a), np.float32)) for n in (1, 5, 40) for a in arrays(n)]
    calls += [(rng.integers(-2**40, 2**40, 20), np.zeros(20, np.float32)),
              (np.array([2**62 + 2**38 + 1]), np.zeros(1, np.float32)),
              (rng.integers(0, 255, 9).astype(np.uint8), np.zeros(9, np.float32))]
    check(float32_casts, calls)
    check(float64_casts, [(a,) for a in arrays(30)] + [(np.arange(7),), (np.array([True, False]),)])
    check(int64_casts, [(rng.integers(-100, 100, 20), 3.0, np.zeros(20, np.int64)),
                        (np.arange(4, dtype=np.int32), -1.7, np.zeros(4, np.int64)),
                        (np.arange(3), math.nan, np.zeros(3, np.int64)),
                        (np.arange(3), math.inf, np.zeros(3, np.int64)),
                        (np.arange(3), 1e300, np.zeros(3, np.int64))])


def python_int_to_float32(n, out):
    for i in range(len(out)):
        out[i] = np.float32(n + i)          # a Python int rounds through a Python float (twice)
    return out


def test_a_python_int_becomes_float32_through_a_python_float():
    check(python_int_to_float32, [(2**62 + 2**38 + 1, np.zeros(3, np.float32)), (5, np.zeros(2, np.float32)),
                                  (-2**61 - 2**37 - 1, np.zeros(2, np.float32))])


def int64_of_numpy_floats(a, out):
    for i in range(len(a)):
        out[i] = np.int64(a[i])             # a C cast: out of range, the machine decides
    return out


def test_int64_of_a_numpy_float_runs_as_python():
    check(int64_of_numpy_floats, [(np.array([1.5, -2.5]), np.zeros(2, np.int64))], compiled=False)


def rounded(a, out):
    total = 0
    for i in range(len(a)):
        out[i] = round(a[i] * 10.0)
        total += round(a[i])
    return out, total


def test_round_ties_to_even_and_raises_as_python():
    ties = np.array([0.25, 0.35, -0.05, 0.15, 0.05, 2.5, -2.5, 0.5, -0.5, 1.5, -0.0])
    check(rounded, [(ties, np.zeros(11)), (rng.standard_normal(30) * 100, np.zeros(30)),
                    (ties.astype(np.float32), np.zeros(11, np.float32)),
                    (rng.integers(-50, 50, 10), np.zeros(10, np.int64)),
                    (np.array([1.0, np.nan]), np.zeros(2)), (np.array([np.inf]), np.zeros(1)),
                    # beyond int64 Python's int grows: the loop runs again as Python, its writes undone
                    (np.array([1.0, 2.0, 1e300, 3.0]), np.zeros(4)), (np.array([-1e19]), np.zeros(1))])


def test_round_of_a_numpy_bool_raises_as_python():
    # numpy's bool has no __round__: the loop runs as Python, which raises TypeError at that line
    check(rounded, [(np.array([True, False]), np.zeros(2))], compiled=False)


def digits(a, d, out):
    for i in range(len(a)):
        q, r = divmod(a[i], d)
        out[i] = q * 100 + r
    return out


def python_divmod(n, k):
    s = 0
    for i in range(n):
        q, r = divmod(i * 7 - 50, k)
        s += q * r
    return s


def test_divmod_is_floor_division_and_remainder():
    ints = rng.integers(-500, 500, 30)
    check(digits, [(ints, 7, np.zeros(30, np.int64)), (ints, -7, np.zeros(30, np.int64)),
                   (ints.astype(np.int32), 3, np.zeros(30, np.int32)),
                   (rng.random(20) * 10 - 5, 0.3, np.zeros(20)), (EDGES.copy(), 0.7, np.zeros(12)),
                   (EDGES.copy(), 0.0, np.zeros(12)), (ints, 0, np.zeros(30, np.int64))])
    # Python numbers divided by zero raise divmod's own errors (messages compared)
    check(python_divmod, [(20, 3), (20, -4), (20, 2.5), (5, 0), (5, 0.0), (0, 0)])


def divmod_kept(a):
    pairs = 0
    for i in range(len(a)):
        pairs += divmod(a[i], 3)[0]
    return pairs


def test_divmod_other_than_unpacked_runs_as_python():
    jitted = check(divmod_kept, [(np.arange(10),)], compiled=False)
    assert "divmod" in str(jitted.explain())


def python_float_powers(a, e):
    s = 0.0
    for i in range(len(a)):
        x = float(a[i])
        s += x ** e + x ** 3 / (1.0 + abs(x) ** -2)      # a Python float to int powers: C's pow, Python's errors
    return s


def numpy_powers(a, e):
    out = np.empty(len(a))
    for i in range(len(a)):
        out[i] = a[i] ** e + a[i] ** 1.5 + a[i] ** np.int64(3)   # numpy float64 powers: pow, no errors
    return out


def float32_power(a):
    s = np.float32(0)
    for i in range(len(a)):
        s += a[i] ** 3
    return s


def power_of_a_float_exponent(a, p):
    s = 0.0
    for i in range(len(a)):
        s += float(a[i]) ** p                 # a negative base gives a complex in Python
    return s


def test_powers_of_floats_call_pow_and_raise_as_python():
    finite = np.array([1.5, -2.0, 0.25, 3.0, -0.5])
    check(python_float_powers, [(finite, e) for e in (0, 1, 2, 5, -1, -3)]
          + [(np.array([2.0, 0.0]), -1),                     # ZeroDivisionError: 0.0 to a negative power
             (np.array([2.0, 1e200]), 2),                     # OverflowError at 1e200 ** 3
             (np.array([np.inf, -np.inf, np.nan, -0.0]), 3)])   # no error from infinities and NaN
    check(numpy_powers, [(EDGES, e) for e in (3, -1, 0, 7)] + [(finite, -2), (np.zeros(0), 3)])
    jitted = check(float32_power, [(np.array([1.5, -2.0], np.float32),)], compiled=False)
    assert "a power of numpy.float32 (only float64 bases" in str(jitted.explain())
    jitted = check(power_of_a_float_exponent, [(finite, 0.5), (-finite, 2.0)], compiled=False)
    assert "a power whose exponent is not an int" in str(jitted.explain())


def constant_float_powers(a, n):
    """Python floats and ints to constant float exponents, CPython's float power: ``n ** 0.5`` bounds a
    sieve's loop, ``x ** -0.5`` normalizes."""
    s = 0.0
    for i in range(int(n ** 0.5) + 1):
        x = float(a[i % len(a)])
        s += x ** 1.5 + i ** 0.5 + x ** -0.5 + x ** 2.0 + (i + 1) ** -1.25 + x ** 1e400
    return s


def test_python_numbers_to_a_constant_float_exponent_are_cpythons_float_power():
    """The C library's pow of the base as a float; 0.0 (or an int 0) to a negative power raises
    ZeroDivisionError, a finite base to an infinity OverflowError, at the line; a negative base to a
    power that is not an integer is complex in Python: the loop's Python runs instead."""
    finite = np.array([1.5, 2.0, 0.25, 3.0, 0.5, 7.0])
    calls = [(finite, n) for n in (0, 1, 3, 30, 2**40)] + [
        (np.array([1.5, 0.0]), 4),                       # ZeroDivisionError: 0.0 ** -0.5
        (np.array([1.5, -0.0]), 4),
        (np.array([2.0, 1e300]), 4),                     # OverflowError: 1e300 ** 1.5
        (np.array([np.inf, np.nan]), 4),                 # inf ** -0.5 is 0.0; no errors from them
        (np.array([2.0, -4.0]), 4),                      # (-4.0) ** 1.5: complex, the loop's Python
        (np.array([0.0, -np.inf, -0.0]), 4),             # 0.0 ** -1e400 is inf, (-inf) ** 1.5 is inf
        (finite, 9)]
    jitted = check(constant_float_powers, calls)
    assert "a power" not in str(jitted.explain())


def python_float_to_numpy_ints(a, n, out):
    for i in range(len(a)):
        out[i] = float(a[i]) ** n[i]
    return out


def test_a_python_float_to_a_numpy_ints_power_stays_python():
    """float's ** refuses a numpy int, so numpy's power ufunc computes it, whose vectorized pow differs
    from the C library's in the last bit of some results (x ** -7 of 0.12611305652826413): the loop
    keeps Python's bits."""
    rng = np.random.default_rng(3)
    calls = [(rng.random(500), rng.integers(-9 if dtype != np.uint8 else 0, 9, 500, dtype=dtype), np.zeros(500))
             for dtype in (np.int64, np.int8, np.uint8)]
    jitted = check(python_float_to_numpy_ints, calls, compiled=False)
    assert "a Python float to a numpy int's power" in str(jitted.explain())


def narrow_int_casts(k, x, a, out):
    for i in range(len(a)):
        out[i] = np.int32(k + i) + np.int8(a[i]) * np.uint16(x * i)
    return out


def test_narrow_int_casts_as_numpy_does():
    """``np.int32(k)`` of a Python int out of range raises numpy's OverflowError, of a numpy int wraps
    (``np.int8(np.int64(300))``), of a Python float truncates as ``int()`` and raises out of range
    (NaN: ValueError, inf: OverflowError) with numpy's own messages."""
    small = rng.integers(-1000, 1000, 20)
    calls = [(5, 3.7, small, np.zeros(20, np.int64)), (-7, 0.2, small.astype(np.int16), np.zeros(20, np.int64)),
             (2**31 - 3, 1.0, small, np.zeros(20, np.int64)),                 # np.int32 out of range
             (0, -0.5, small, np.zeros(20, np.int64)),                        # np.uint16(-0.5 * i): -0.0 then < 0
             (0, math.nan, small, np.zeros(20, np.int64)), (0, math.inf, small, np.zeros(20, np.int64)),
             (0, 7000.9, small, np.zeros(20, np.int64)), (1, 2.0, np.array([True, False, True]), np.zeros(3, np.int64))]
    check(narrow_int_casts, calls)


def same_width_uint8(a, t, out):
    """A signed numpy int made the unsigned type of its width: its bits read anew (-56 as 200)."""
    big = 0
    s = 0.0
    m = 0
    for i in range(len(a)):
        if np.uint8(a[i]) > 100:
            big += 1
        s += t[np.uint8(a[i])] + int(np.uint8(a[i])) / 2
        m = max(m, np.uint8(a[i]))
        out[i] = np.uint8(a[i])
    return big, s, m


def same_width_uint16_uint32(a, b, out):
    s = 0
    for i in range(len(a)):
        v = np.uint16(a[i])
        w = np.uint32(b[i])
        s += int(w) - int(v)
        out[i] = v / 2 + w
    return s


def test_a_signed_int_cast_to_the_unsigned_type_of_its_width_wraps():
    """``np.uint8(np.int8(-56))`` is 200: compared, indexed (out of bounds at 200), converted, stored
    (into an int8 array: numpy's OverflowError) as numpy has it."""
    def ints(dtype, n=12):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
        a[:3] = [-56, -1, 0]
        return a

    a8 = ints(np.int8)
    check(same_width_uint8, [(a8 % 100, np.arange(256.0), np.zeros(12)), (a8, np.arange(256.0), np.zeros(12)),
                             (a8, np.arange(100.0), np.zeros(12)),
                             (np.array([5, -51], np.int8), np.arange(256.0), np.zeros(2, np.int8))])
    check(same_width_uint16_uint32, [(ints(np.int16), ints(np.int32), np.zeros(12)),
                                     (ints(np.int16, 40), ints(np.int32, 40), np.zeros(40))])


def narrow_int_of_numpy_floats(a, out):
    for i in range(len(a)):
        out[i] = np.int32(a[i] * 3)         # a C cast: out of range, the machine decides
    return out


def test_narrow_int_cast_of_a_numpy_float_runs_as_python():
    jitted = check(narrow_int_of_numpy_floats, [(np.array([1.5, -2.5]), np.zeros(2, np.int64))], compiled=False)
    assert "np.int32() of a numpy float" in str(jitted.explain())


def classified(a):
    nans = infs = 0
    total = 0.0
    for i in range(len(a)):
        if math.isnan(a[i]):
            nans += 1
        elif math.isinf(a[i]):
            infs += 1
        if math.isfinite(a[i]):
            total += math.degrees(a[i]) - math.radians(a[i])
    return nans, infs, total


def test_math_predicates_degrees_and_radians():
    calls = [(a,) for n in (1, 6, 40) for a in arrays(n)]
    calls += [(rng.integers(-9, 9, 10),), (np.array([True, False]),), (np.array([1e308, -1e308]),)]
    check(classified, calls)


def numpy_exact_functions(a, b, out):
    for i in range(len(a)):
        x, y = a[i], b[i]
        out[i, 0] = np.sign(x)
        out[i, 1] = np.trunc(x) + np.rint(y)
        out[i, 2] = np.fmax(x, y) - np.fmin(y, x)
        out[i, 3] = np.hypot(x, y)
        out[i, 4] = np.copysign(x, y)
        out[i, 5] = np.degrees(x) + np.deg2rad(y)
    return out


def numpy_library_functions(a, b, out):
    for i in range(len(a)):
        x, y = a[i], b[i]
        out[i, 0] = np.arcsin(x)
        out[i, 1] = np.arccos(y)
        out[i, 2] = np.arcsinh(x)
        out[i, 3] = np.arctanh(y)
        out[i, 4] = np.arccosh(x + 2)
        out[i, 5] = np.cbrt(x)
        out[i, 6] = np.arctan2(y, x)
        out[i, 7] = np.exp2(x)
        out[i, 8] = np.log2(y)
        out[i, 9] = np.log10(x)
    return out


def test_numpy_library_functions_are_the_c_librarys_within_a_few_ulp():
    """The C library's functions, where numpy may use its own vectorized loops (AVX-512): the same
    special values and types, the same numbers within 4 ulp (docs/semantics.md)."""
    jitted = jit(numpy_library_functions)
    for dtype in (np.float64, np.float32):
        unit = (rng.random(200) * 2 - 1).astype(dtype)
        for a, b in ((unit, unit[::-1].copy()), (EDGES.astype(dtype), EDGES[::-1].astype(dtype))):
            expected = numpy_library_functions(a, b, np.zeros((len(a), 10), dtype))
            got = jitted(a, b, np.zeros((len(a), 10), dtype))
            assert got.dtype == expected.dtype
            assert np.array_equal(np.isnan(got), np.isnan(expected))
            assert np.array_equal(np.isinf(got), np.isinf(expected)) and np.array_equal(
                got[np.isinf(got)], expected[np.isinf(expected)])
            finite = np.isfinite(expected)
            np.testing.assert_array_max_ulp(got[finite], expected[finite], maxulp=4)
    loops = [e for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]
    assert loops and all(e.mode == "tvm" for e in loops)


def clipped(a, lo, hi):
    s = 0.0
    for i in range(len(a)):
        s += np.clip(a[i], lo, hi)
    return s


def clipped_items(a, out):
    for i in range(len(a)):
        out[i] = np.clip(a[i], -0.5, a[len(a) - 1 - i])
    return out


def int_signs(a):
    s = 0
    for i in range(len(a)):
        s += np.sign(a[i]) * np.fmax(a[i], 3)
    return s


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_ufuncs_on_scalars_follow_numpy(dtype):
    """NaN, infinities, -0.0 and ties: numpy's ufuncs called on elements, in the elements' dtype. Which
    zero ``np.fmax(-0.0, 0.0)`` gives is not numpy's to promise: its scalar and array loops differ."""
    def pair(n):
        return (rng.standard_normal(n) * 3).astype(dtype), (rng.standard_normal(n) * 3).astype(dtype)
    edges = EDGES.astype(dtype)
    calls = [(*pair(n), np.zeros((n, 6), dtype)) for n in (1, 9, 50)]
    calls += [(edges, edges[::-1].copy(), np.zeros((12, 6), dtype)),
              (edges, np.full(12, -3.0, dtype), np.zeros((12, 6), dtype))]   # (no 0.0 against -0.0: below)
    check(numpy_exact_functions, calls)
    check(clipped, [(pair(30)[0], -0.5, 0.5), (edges, 0.0, 1.0), (edges, -0.0, 0.0), (edges, math.nan, 1.0),
                    (pair(20)[0], 2.0, -1.0), (edges, -math.inf, math.inf)])
    check(clipped_items, [(pair(25)[0], np.zeros(25, dtype)), (edges, np.zeros(12, dtype))])
    check(int_signs, [(rng.integers(-5, 5, 30),), (rng.integers(-5, 5, 30).astype(np.int8),)])


def int_powers(a, out):
    for i in range(len(a)):
        out[i] = a[i] ** 3 + 2 ** (i % 5) + a[i] ** 0 + (i % 3) ** 5 + 0 ** (i % 2) + 1 ** i + a[i] ** 1
    return out


def python_int_powers(n, b):
    s = 0
    for k in range(n):
        s += b ** 7 + k ** 4 + True ** 3
    return s


def test_int_powers_as_python_and_numpy_compute_them():
    """Ints to a constant power (Python ints exact, a loop without effects running again as Python
    where one leaves int64; numpy ints wrapping) and -1, 0, 1, 2 to a counter's power (``(-1) ** k``)."""
    check(alternating_pi, [(10,), (1000,), (0,), (1,)])       # (examples/loop_programs)
    check(int_powers, [(np.arange(-5, 5), np.zeros(10, np.int64)),
                       (np.arange(-50, 50, dtype=np.int8), np.zeros(100, np.int64)),   # int8 cubes wrap
                       (np.arange(10, dtype=np.uint8), np.zeros(10, np.int64)),
                       (np.array([2**30, -2**40]), np.zeros(2, np.int64)),             # int64 cubes wrap
                       (np.array([True, False]), np.zeros(2, np.int64))])
    # 600 ** 7 is beyond int64: the kernel stops and the loop runs as Python, with Python's big ints
    check(python_int_powers, [(10, 3), (100, -7), (5, 400), (0, 10**6), (5, 600), (3, -10**4)])


def power_of_a_variable(a, e):
    s = 0
    for i in range(len(a)):
        s += a[i] ** e + 3 ** (i - 2)   # a negative exponent gives a float in Python
    return s


def test_int_powers_of_unknown_sign_stay_python():
    jitted = check(power_of_a_variable, [(np.arange(5), 2)], compiled=False)
    assert "a power of ints other than" in str(jitted.explain())


def distances(x, y, out):
    for i in range(len(x)):
        out[i] = math.hypot(x[i], y[i]) + math.hypot(i, 3)
    return out


def test_math_hypot_is_cpythons_to_the_last_bit():
    """CPython computes hypot with its own algorithm (different before and after 3.12), not the C
    library's: the kernel follows the running interpreter's, subnormals, infinities and NaN included."""
    big = 2.0 ** rng.integers(-1074, 1023, 4000)
    calls = [(rng.standard_normal(4000), rng.standard_normal(4000), np.zeros(4000)),
             (rng.random(4000) * big, rng.random(4000) * big[::-1], np.zeros(4000)),
             ((rng.random(4000) + 1) * 2.0 ** -1050, rng.random(4000) * 2.0 ** -1060, np.zeros(4000)),
             (EDGES, EDGES[::-1].copy(), np.zeros(12)), (np.array([5e-324, 1e-310]), np.array([5e-324, 2e-310]),
                                                         np.zeros(2)),
             ((rng.random(50) * 100).astype(np.float32), np.arange(50, dtype=np.int64), np.zeros(50))]
    check(distances, calls)


def abs_of_a_sum(x):
    """``abs`` of ``s``, a Python float on the first iteration and a numpy float after: its type kept."""
    s = 0.0
    m = 0.0
    for i in range(len(x)):
        s = s + x[i]
        m = abs(s)
    return m, abs(s)


def test_abs_of_a_float_that_changes_from_python_to_numpy_keeps_its_type():
    cases = [(a,) for n in (0, 1, 7, 200) for a in arrays(n)]
    cases += [(np.array([1e100, 1.0, -1e100]),), (np.array([-0.0]),), (np.array([np.nan, -np.inf]),)]
    check(neumaier_sum, cases)           # (examples/loop_programs: a compensated sum)
    check(abs_of_a_sum, cases)


def test_int_arithmetic_of_a_python_or_numpy_int_wraps_as_numpy_or_stays_exact():
    """The product is numpy's (wrapping) where ``acc`` is already an int64, exact where both are
    Python ints; an empty loop returns the Python int 0."""
    small = rng.integers(-3, 3, 50)
    check(int_horner, [(small, 1), (small, 3), (small, -2), (small[:1], 5), (np.zeros(0, np.int64), 7),
                       (rng.integers(-2**40, 2**40, 30), 2**20 + 1)])


def horner_from(coef, start, x):
    acc = start
    for c in coef:
        acc = acc * x + c
    return acc


def test_a_python_int_product_leaving_int64_raises_python_s_overflow_error_and_int64_ones_wrap():
    """The first product is of Python ints: past int64, adding the int64 ``c`` raises OverflowError in
    Python; later products are numpy's int64, wrapping (the test of the first runs on no other)."""
    coef = np.arange(1, 300, dtype=np.int64)
    check(horner_from, [(coef, 1, 3), (coef, 2**40, 2**30), (coef, -2**40, 2**30), (coef, 5, 7),
                        (coef, 2**33, 2**30), (coef[:1], 2**62, 1)])


def floor_clip(img, lo):
    for i in range(len(img)):
        img[i] = np.maximum(img[i], lo)
    return img


def ceiling_list(img, hi):
    kept = []
    for i in range(len(img)):
        kept.append(np.fmin(img[i], hi))
    return kept


def test_extremes_of_small_ints_and_python_ints_raise_where_numpy_does():
    # NEP 50: a Python int beside a numpy uint8 must fit uint8, else OverflowError before any write
    img = rng.integers(0, 256, 40).astype(np.uint8)
    cases = [(img, -1), (img, 300), (img, 7), (img.astype(np.int8), 1000), (img.astype(np.int8), -3),
             (img.astype(np.int32), 2**40), (img.astype(np.int64), 2**62)]
    check(floor_clip, [(img, 7), (img.astype(np.int16), -9)])
    check(floor_clip, cases, compiled=False)
    check(ceiling_list, cases, compiled=False)


def extremes(a, b, out):
    for i in range(len(a)):
        out[i] = np.fmin(a[i], b[i]) + 2 * np.fmax(a[i], b[i]) - np.minimum(a[i], b[i]) * np.maximum(b[i], a[i])
    return out


def signs_of_extremes(a, b, out):
    for i in range(len(a)):
        out[i, 0] = np.fmin(a[i], b[i])
        out[i, 1] = np.fmax(a[i], b[i])
        out[i, 2] = np.minimum(a[i], b[i])
        out[i, 3] = np.maximum(a[i], b[i])
    return out


def test_extremes_of_equal_zeros_are_numpys_scalar_choice():
    # numpy's scalar loops pick one of two equal zeros by function and dtype (float64 np.fmin(0.0, -0.0)
    # is 0.0, float32's -0.0), otherwise than its array loops: the kernel measures which
    # (two NaNs of different signs are left out: which one numpy keeps is not specified)
    z = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.0, -np.nan])
    w = np.array([-0.0, 0.0, 0.0, -0.0, 1.0, np.nan, 2.0])
    for dtype in (np.float64, np.float32):
        check(signs_of_extremes, [(z.astype(dtype), w.astype(dtype), np.zeros((7, 4), dtype)),
                                  (w.astype(dtype), z.astype(dtype), np.zeros((7, 4), dtype))])
        check(extremes, [(z.astype(dtype), w.astype(dtype), np.zeros(7, dtype))])


def running_mean(a, out):
    s = 0                        # a Python int, numpy's int64 from the first += on
    for i in range(len(a)):
        s += a[i]
        out[i] = s / (i + 1)
    return out


def test_a_numpy_int_that_was_a_python_int_divides_as_numpy_does():
    # nanosecond timestamps: numpy divides an int64 as float64; only two Python ints divide exactly
    stamps = np.array([1_700_000_000_000_000_000, 1_700_000_000_000_000_123, 2**60 + 1])
    check(running_mean, [(stamps, np.zeros(3)), (np.arange(5), np.zeros(5)), (np.zeros(0, np.int64), np.zeros(0)),
                         (rng.random(4), np.zeros(4))])


def numpy_abs_into(a, out):
    for i in range(len(a)):
        out[i] = np.abs(a[i])
        out[-1 - i] += np.absolute(a[i]) // 2
    return out


def test_numpy_abs_of_int64_elements_wraps_at_the_minimum_as_numpy_does():
    """np.abs(np.int64(-2**63)) is -2**63 in numpy (the builtin abs of a Python int is not bounded)."""
    lo = -2**63
    check(numpy_abs_into, [(np.array([5, lo]), np.zeros(2, np.int64)),
                           (np.array([lo, -7, lo + 1, 0]), np.zeros(4, np.int64)),
                           (np.array([-1, 2, -3], np.int32), np.zeros(3, np.int64))])


def count_below(a, y):
    x = 0.5                         # a Python float, then an element of a: a tagged variable
    c = 0
    for i in range(len(a)):
        if x < y:
            c += 1
        if x != y:
            c += 10
        x = a[i]
    return c, min(x, y), max(y, x)


def test_a_tagged_int_compares_with_a_python_int_exactly():
    """np.uint8(7) < -2 is False in numpy 2: the Python int is not wrapped into the element's type."""
    calls = []
    for dtype, ys in ((np.uint8, (-2, -300, 3, 1000)), (np.int8, (300, -300, -1, 5))):
        a = rng.integers(0, 100, 60).astype(dtype)
        calls += [(a, y) for y in ys]
    check(count_below, calls)
