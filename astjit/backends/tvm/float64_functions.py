"""float64 ``expm1`` and ``tanh`` as vectorizable arithmetic.

The C library's functions cost 10-40 ns an element, one call at a time, where numpy's AVX-512 loops
take 1-3 ns: a fused chain holding one of them ran slower than numpy's separate passes. Here each is
written with selects (every branch computed, one chosen per lane), so LLVM vectorizes the kernel's
loop: fdlibm's expm1, tanh from Cephes' rational form and the vectorized exp. Their error bounds,
measured against long double, are in docs/semantics.md and tests/backends/test_float64_math.py.
``log1p`` stays the C library's: built on the vectorized log, five of them summed took TVM 3 s to
compile (the C library's: 0.08 s), for a kernel no faster than numpy's own loop.
"""

from .scalar_math import LN2_HI, LN2_LO, _power_of_two, _Steps, const, exp_float64, te, tirx

F64, I64 = "float64", "int64"
INV_LN2 = 1.44269504088896338700e+00
# fdlibm s_expm1.c: expm1(r) - r - r*r/2 on |r| <= ln 2 / 2 through a rational form in r*r/2
EXPM1_Q = (-3.33333333333331316428e-02, 1.58730158725481460165e-03, -7.93650757867487942473e-05,
           4.00821782732936239552e-06, -2.01099218183624371326e-07)
EXPM1_OVERFLOWS = 7.09782712893383973096e+02     # above it expm1 is inf
EXPM1_IS_MINUS_ONE = -38.816242111356935         # -56 ln 2: below it expm1 rounds to -1
EXPM1_IS_X = 2.0 ** -54                          # below it in magnitude expm1(x) rounds to x
TANH_IS_ONE = 22.0                               # beyond it tanh rounds to +-1 (so does the form)
# Cephes tanh.c: tanh(x) = x + x s P(s) / Q(s), s = x*x, below TANH_RATIONAL (Q's leading 1 left out)
TANH_P = (-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3)
TANH_Q = (1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3)
TANH_RATIONAL = 0.625


def _c(value):
    return const(value, F64)


def expm1_float64(x):
    """expm1 (fdlibm ``s_expm1.c``): x = k ln 2 + r
    with |r| <= ln 2 / 2 in two constants (``cc``: the error of that reduction), expm1(r) from a
    degree-5 rational form, then 2**k (expm1(r) + 1) - 1 by the branch of k that keeps it exact. The
    input is clamped to [-60, 710], beyond which expm1 is -1 or inf. NaN passes through, -0.0 stays
    -0.0."""
    c = _c
    s = _Steps()
    xc = s(te.min(te.max(x, c(-60.0)), c(710.0)))
    k = s(te.round(xc * c(INV_LN2)))
    hi = s(xc - k * c(LN2_HI))
    lo = s(k * c(LN2_LO))
    r = s(hi - lo)
    cc = s((hi - r) - lo)
    hfx = s(c(0.5) * r)
    hxs = s(r * hfx)
    q = c(EXPM1_Q[-1])
    for coefficient in reversed(EXPM1_Q[:-1]):
        q = c(coefficient) + hxs * q
    r1 = s(c(1.0) + hxs * q)
    t = s(c(3.0) - r1 * hfx)
    e = s(hxs * ((r1 - t) / (c(6.0) - r * t)))
    k_is_zero = r - (r * e - hxs)
    e2 = s((r * (e - cc) - cc) - hxs)
    k_is_minus_one = c(0.5) * (r - e2) - c(0.5)
    k_is_one = tirx.Select(r < c(-0.25), c(-2.0) * (e2 - (r + c(0.5))), c(1.0) + c(2.0) * (r - e2))
    ki = s(k.astype(I64))
    k1 = s(tirx.shift_right(ki, const(1, I64)))
    # (k up to 1024: 2**k in two halves, as exp does)
    far = (c(1.0) - (e2 - r)) * _power_of_two(k1) * _power_of_two(ki - k1) - c(1.0)
    kk = s(te.min(te.max(ki, const(2, I64)), const(56, I64)))     # (a shift in range in every lane)
    two_k = s(_power_of_two(kk))
    minus_k = s(_power_of_two(const(0, I64) - kk))
    near = ((c(1.0) - minus_k) - (e2 - r)) * two_k              # 2 <= k < 20
    middle = ((r - (e2 + minus_k)) + c(1.0)) * two_k            # 20 <= k <= 56
    one = const(1, I64)
    y = tirx.Select(tirx.EQ(ki, const(0, I64)), k_is_zero,
                    tirx.Select(tirx.EQ(ki, const(-1, I64)), k_is_minus_one,
                                tirx.Select(tirx.EQ(ki, one), k_is_one,
                                            tirx.Select(tirx.Or(ki < const(-1, I64), ki > const(56, I64)), far,
                                                        tirx.Select(ki < const(20, I64), near, middle)))))
    y = tirx.Select(te.abs(x) < c(EXPM1_IS_X), x, y)          # (-0.0 too: the reduction's hi is +0.0)
    y = tirx.Select(x > c(EXPM1_OVERFLOWS), c(float("inf")), y)
    y = tirx.Select(x < c(EXPM1_IS_MINUS_ONE), c(-1.0), y)
    return s.done(tirx.Select(te.isnan(x), x, y))


def tanh_float64(x):
    """tanh of |x|: below 0.625 Cephes' rational form (|x| plus a correction of at most 0.13 |x|),
    above it 1 - 2/(t + 1) with t = exp(2|x|) (the argument capped at 44, where the form is 1.0
    already); the sign of x put back by copysign (so -0.0 stays -0.0). NaN passes through. Within
    1.3 ulp of the exact value; fdlibm's forms over expm1 were no closer and cost twice the time."""
    c = _c
    s = _Steps()
    ax = s(te.abs(x))
    sq = s(ax * ax)
    p = (c(TANH_P[0]) * sq + c(TANH_P[1])) * sq + c(TANH_P[2])
    q = ((sq + c(TANH_Q[0])) * sq + c(TANH_Q[1])) * sq + c(TANH_Q[2])
    t = s(exp_float64(te.min(c(2.0) * ax, c(2.0 * TANH_IS_ONE))))
    # ax + ax sq p / q near zero, 1 - 2 / (t + 1) above: one division for both (each a vector's)
    near = s(ax < c(TANH_RATIONAL))
    z = (tirx.Select(near, ax, c(1.0))
         + tirx.Select(near, ax * sq * p, c(-2.0)) / tirx.Select(near, q, t + c(1.0)))
    return s.done(tirx.Select(te.isnan(x), x, tirx.copysign(z, x)))
