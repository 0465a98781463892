"""Loop kernels computing with complex numbers: a Python ``complex``, ``numpy.complex128`` and
``numpy.complex64`` as pairs of floats, each operation as CPython 3.11 or numpy computes it (NaN, inf,
-0.0, a division by zero, an absolute value that overflows)."""

import math

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import mandelbrot_complex, power_spectrum

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(11)
EDGES = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e308, -1e-310, 3.0])


def escape_time(x, y, limit):
    c = complex(x, y)
    z = 0.0j
    for i in range(limit):
        z = z * z + c
        if z.real * z.real + z.imag * z.imag >= 4:
            return i
    return 255


def fractal(image, x0, x1, y0, y1, limit):
    height, width = image.shape
    dx = (x1 - x0) / width
    dy = (y1 - y0) / height
    for x in range(width):
        for y in range(height):
            image[y, x] = escape_time(x0 + x * dx, y0 + y * dy, limit)
    return image


def test_mandelbrot_sets_compile_and_agree():
    for n, m, limit in ((12, 9, 30), (40, 25, 60), (3, 1, 5), (0, 3, 5)):
        check(mandelbrot_complex, [(np.linspace(-2, 1, n), np.linspace(-1.5, 1.5, m), limit,
                                    np.zeros((m, n), np.int64))])
    check(fractal, [(np.zeros((8, 12), np.uint8), -2.0, 1.0, -1.0, 1.0, 20),
                    (np.zeros((5, 3), np.uint8), -0.5, 0.5, -0.2, 0.2, 300)])


def dft_bin(a, k):
    s = 0j
    n = len(a)
    for t in range(n):
        angle = -2.0 * math.pi * k * t / n
        s += a[t] * complex(math.cos(angle), math.sin(angle))
    return s


def geometric(w, n):
    acc = w
    total = 0
    for _ in range(n):
        acc = acc * w - 0.5 * acc.conjugate()
        total = total + acc
    return acc, total


def test_sums_and_products_keep_pythons_or_numpys_complex_type():
    # a Python complex accumulator, an element of each float dtype; a Python int made complex
    check(dft_bin, [(a, k) for a in (rng.random(16), rng.random(5).astype(np.float32), EDGES.copy())
                    for k in (0, 1, 3)])
    # Python complex, numpy's complex128 and complex64 (which stays complex64 with Python numbers)
    check(geometric, [(w, n) for w in (0.5 + 0.25j, np.complex128(0.3 - 0.9j), np.complex64(0.7 + 0.1j),
                                       complex(-0.0, -0.0), complex(np.inf, 1.0), complex(np.nan, -0.0))
                      for n in (0, 1, 7)])


def quotients(re, im, w):
    out = []
    for i in range(len(re)):
        out.append(0)
        q = complex(re[i], im[i])
        out[i] = abs(w / q)
    return out


def divide_all(re, im, w):
    total = w * 0
    for i in range(len(re)):
        q = complex(re[i], im[i])
        total = total + w / q + q / (w + 1)
    return total


def test_division_follows_cpython_for_python_complex_and_numpy_for_numpys():
    parts = [(rng.random(20) - 0.5, rng.random(20) - 0.5), (EDGES.copy(), EDGES[::-1].copy()),
             (np.array([1.0, 0.0]), np.array([2.0, 0.0])), (np.array([np.nan, 1.0]), np.array([1.0, np.nan]))]
    for w in (1.5 - 2j, np.complex128(1.5 - 2j), np.complex64(-0.5 + 3j), 2.0):
        # a zero divisor: ZeroDivisionError for Python's complex, inf and nan for numpy's
        check(divide_all, [(re, im, w) for re, im in parts])


def magnitudes(re, im, out):
    for i in range(len(re)):
        z = complex(re[i], im[i])
        out[i] = abs(z) + abs(np.complex128(z)) * 0 + abs(z.conjugate())
    return out


def numpy_magnitudes(re, im, w, out):
    for i in range(len(re)):
        out[i] = abs(w * re[i] + im[i])
    return out


def test_abs_follows_cpython_and_numpy_at_nan_inf_and_overflow():
    re, im = np.tile(EDGES, len(EDGES)), np.repeat(EDGES, len(EDGES))
    # CPython: an infinite part gives inf, a NaN a positive NaN; an overflow raises OverflowError
    check(magnitudes, [(re[:60], im[:60], np.zeros(60)), (np.array([1.5e308]), np.array([1.5e308]), np.zeros(1)),
                       (rng.random(9), rng.random(9), np.zeros(9))], compiled=False)
    check(numpy_magnitudes, [(re, im, w, np.zeros(len(re), np.float64 if w.dtype == np.complex128 else np.float32))
                             for w in (np.complex128(1 - 1j), np.complex64(2 + 0.5j))])


def python_magnitudes(re, im, out):
    for i in range(len(re)):
        z = complex(re[i], im[i])
        out[i] = abs(z) + abs(z.conjugate())
    return out


def test_python_abs_of_complex():
    re, im = np.tile(EDGES, len(EDGES)), np.repeat(EDGES, len(EDGES))
    check(python_magnitudes, [(re, im, np.zeros(len(re))), (np.array([1.5e308, 1.0]), np.array([1.5e308, 1.0]),
                                                            np.zeros(2)), (rng.random(9), rng.random(9), np.zeros(9))])


def comparisons(re, im, w):
    hits = 0
    zeros = 0
    for i in range(len(re)):
        z = complex(re[i], im[i])
        if z == w:
            hits += 1
        if not z:
            zeros += 1
        if z != z:
            hits += 100
    return hits, zeros, bool(w)


def parts(a, w):
    s = 0.0
    t = 0
    for i in range(len(a)):
        s += a[i].real - a[i].imag + w.real * w.imag
        t += (i > 2).real + i.imag + i.conjugate()
    return s, t


def test_comparisons_truth_and_parts():
    check(comparisons, [(re, im, w) for re, im in ((EDGES.copy(), EDGES.copy()), (np.zeros(3), np.array([0.0, -0.0, 1.0])))
                        for w in (0j, 1 + 1j, np.complex64(1 + 1j), 1.0, 3, np.float32(-2.5))])
    check(parts, [(a, w) for a in (rng.random(7), np.arange(5, dtype=np.int16))
                  for w in (1.5 - 2j, np.complex64(0.5 + 1j), 2.5, 7, np.float32(3))])
    # numpy bools' parts are bools, whose ``-`` raises TypeError: the loop stays Python and raises it
    check(parts, [(np.array([True, False]), 1.5 - 2j)], compiled=False)


def squared(zs_re, w):
    z = w
    for i in range(len(zs_re)):
        z = z ** 2 + zs_re[i]
    return z


def complex_elements(z):
    s = 0j
    for k in range(z.shape[0]):
        s += z[k] * z[k].conjugate()
    return s


def ordered(w, n):
    k = 0
    for _ in range(n):
        if w < 1j:
            k += 1
    return k


def test_what_stays_python():
    # ``**`` of a complex, arrays of complex numbers, ordering complex numbers (a TypeError)
    check(squared, [(rng.random(5), 0.1 + 0.2j), (rng.random(3), np.complex128(0.5j))], compiled=False)
    check(complex_elements, [(rng.random(6) + 1j * rng.random(6),)], compiled=False)
    check(ordered, [(1 + 0j, 3), (0.5, 0)], compiled=False)


def count_equal(a, w, n):
    k = 0
    for i in range(n):
        if a[i % len(a)] == w:
            k += 1
    return k


def test_comparisons_promote_as_numpy_does():
    # numpy compares a float32 with a Python complex in complex64 (rounding the Python number), and a
    # float64 with a complex64 in complex128
    check(count_equal, [(np.array([0.1], np.float32), 0.1 + 0j, 3), (np.array([0.1], np.float32), np.complex128(0.1), 3),
                        (np.array([0.1]), np.complex64(0.1), 3), (np.array([0.1]), 0.1 + 0j, 2),
                        (np.array([0.5, np.nan], np.float32), np.complex64(0.5), 4)])


def test_nan_parts_give_pythons_nan_in_abs_truth_and_inequality():
    # abs() of a complex with a NaN part is CPython's own NaN whatever the part's sign; a NaN part is
    # true and unequal to itself
    nan = np.array([np.nan, -np.nan, 1.0, -np.nan])
    check(python_magnitudes, [(nan, nan[::-1].copy(), np.zeros(4)), (nan[::-1].copy(), np.ones(4), np.zeros(4))])
    check(comparisons, [(nan, nan[::-1].copy(), w) for w in (complex(np.nan, 0.0), 1j)])


def test_a_power_spectrum_of_signals_of_each_float_dtype():
    # the sum is a Python complex on an empty signal, numpy's complex128 (or complex64 for float32) after
    signals = [rng.random(16), rng.random(5).astype(np.float32), np.zeros(0), np.array([np.nan, 1.0, -0.0])]
    check(power_spectrum, [(x, np.zeros(k)) for x in signals for k in (0, 3)])


def weighted(a, w, out):
    for i in range(len(a)):
        z = a[i] * w
        out[i] = z.imag - z.real
    return out


def test_products_round_as_numpys_loop_where_it_fuses():
    # numpy's float64 * Python complex goes through its complex multiply loop, which fuses the first
    # product of each part on a CPU with FMA: the sign of an underflowing part shows it
    check(weighted, [(np.array([1e-200, 3.0, -1e-200]), complex(1.0, -1e-200), np.zeros(3)),
                     (np.array([1e-45, 3.0], np.float32), complex(1.0, -1.5e-40), np.zeros(2, np.float32)),
                     (rng.random(40) - 0.5, complex(0.3, -0.7), np.zeros(40)),
                     (rng.random(9).astype(np.float32), np.complex64(0.3 - 0.7j), np.zeros(9, np.float32)),
                     (np.array([1e-200, 2.0]), np.complex64(1 - 1j), np.zeros(2)),
                     (np.array([-1e-200, 2.0]), 1.5, np.zeros(2))])


def made_complex(a, b):
    s = 0j
    for i in range(len(a)):
        s = s + complex(a[i]) + complex(b[i], a[i])
    return s


def phases(re, im, out):
    for i in range(len(re)):
        z = complex(re[i], im[i])
        out[i] = math.atan2(z.imag, z.real)
    return out


def test_ints_made_complex_and_phases_of_nan():
    # an int64 above 2**53 is made a float correctly rounded, by CPython and by the kernel
    big = np.array([1, 2**53 + 1, -(2**62) - 3])
    check(made_complex, [(big, big[::-1].copy()), (np.arange(4), rng.random(4)), (np.zeros(0, np.int64), np.zeros(0))])
    # math.atan2 of a NaN is CPython's own NaN, whatever the input's sign
    nan = np.array([np.nan, -np.nan, 1.0, -0.0, np.inf])
    check(phases, [(nan, nan[::-1].copy(), np.zeros(5)), (rng.random(6), rng.random(6) - 0.5, np.zeros(6))])


def escape_times_c64(xs, ys, limit, out):
    for i in range(len(ys)):
        for j in range(len(xs)):
            c = xs[j] + ys[i] * np.complex64(1j)       # complex128 for float64 xs, complex64 for float32
            z = np.complex64(0)                        # complex64 first, c's type after the first step
            n = 0
            while abs(z) <= 2.0 and n < limit:
                z = z * z + c
                n += 1
            out[i, j] = n
    return out


def casts(a, w, out):
    for i in range(len(a)):
        z = np.complex64(a[i]) + np.complex128(w) * np.complex64(w) - np.complex64(i * 2**40 + 1)
        out[i] = z.real + z.imag
    return out


def test_numpy_complex_casts_and_abs_of_a_value_of_two_complex_types():
    # np.complex64 of a Python int goes through a Python float (two roundings), of a numpy int directly
    check(casts, [(rng.random(5), 0.1 + 0.2j, np.zeros(5)), (np.arange(5), np.complex64(0.3 - 1j), np.zeros(5)),
                  (rng.random(3).astype(np.float32), 2.5, np.zeros(3)), (EDGES.copy(), -0.0j, np.zeros(10)),
                  (np.arange(3, dtype=np.int64) * 2**61 + 1, 3, np.zeros(3))])
    for xs, ys in ((np.linspace(-2, 1, 7), np.linspace(-1.5, 1.5, 5)),
                   (np.linspace(-2, 1, 6, dtype=np.float32), np.linspace(-1.5, 1.5, 4, dtype=np.float32))):
        check(escape_times_c64, [(xs, ys, limit, np.zeros((len(ys), len(xs)), np.int32)) for limit in (10, 40)])
