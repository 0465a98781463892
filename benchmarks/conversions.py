"""Conversions and numpy's special cases compiled since the never-wrong work, numpy vs astjit (default ``@jit``), at 10M and 16.

    python benchmarks/conversions.py [--quick]

``to_int8``: a float chain converted to int8 (out-of-range values as numpy converts them);
``mixed_compare``: int64 against uint64 (numpy's exact mixed loop); ``int_clip``: ``np.clip`` of an
int16 array with a Python-int bound beyond the dtype (numpy drops it); ``root_by``: a power whose
exponent (0.5) arrives at run time (numpy's sqrt fast path); ``relu_clip``: ``np.clip`` with one bound
(numpy's maximum); ``int_quotients``: int64 ``//`` and ``%`` nested, divisors holding 0 and -1 (numpy's
0 and its wrapped ``INT_MIN // -1``), compared in the same block; ``mod_of_clip``: a float ``%`` whose
divisor is a ``np.clip`` (computed in a stage of its own; 6 s to compile before); ``where_minus_two``:
``np.where(a < b, -2, a)`` of uint16 (the -2 wrapped as numpy wraps it; it ran on numpy before). Each result is checked against
numpy first; small sizes may run as the block's Python by astjit's own measurement, which is the point:
never slower than numpy.
"""

import numpy as np
from _timing import compare, describe_modes, parse_args, print_header, print_results

from astjit import jit


def to_int8(a):
    return (a * 90.0 + 1.0).astype(np.int8)


def mixed_compare(s, u):
    return s < u


def int_clip(v):
    return np.clip(v, 3, 40000) + 1


def root_by(a, e):
    return (a * 2.0 + 1.0) ** e


def relu_clip(a):
    return np.clip(a * 2.0 - 1.0, 0.0, None)


def int_quotients(a, b):
    return ((a + 1) // b) % (b - 3) > 0


def mod_of_clip(a):
    return np.mod(a, np.clip(a, -0.5, 2.0))


def where_minus_two(a, b):
    return np.where(a < b, -2, a)


SIZES = [("10M", 10_000_000), ("16", 16)]


def inputs(fn, n, seed=0):
    rng = np.random.default_rng(seed)
    if fn is to_int8:
        a = rng.standard_normal(n)
        a[::97] = np.inf
        return (a,)
    if fn is mixed_compare:
        return rng.integers(-2**62, 2**62, n), rng.integers(0, 2**64 - 1, n, dtype=np.uint64)
    if fn is root_by:
        return rng.random(n), 0.5
    if fn is relu_clip:
        return (rng.standard_normal(n),)
    if fn is int_quotients:
        a = rng.integers(-2**63, 2**63 - 1, n)
        a[::5] = np.iinfo(np.int64).max          # (a + 1 wraps to INT_MIN, whose // -1 is INT_MIN)
        return a, rng.integers(-2, 3, n)
    if fn is mod_of_clip:
        return (rng.standard_normal(n) * 4,)
    if fn is where_minus_two:
        return tuple(rng.integers(0, 65536, n).astype(np.uint16) for _ in range(2))
    return (rng.integers(-30000, 30000, n).astype(np.int16),)


def main():
    opts = parse_args(__doc__.splitlines()[0])
    print_header("conversions and mixed comparisons", opts.repeats)
    cases = []
    for fn in (to_int8, mixed_compare, int_clip, root_by, relu_clip, int_quotients, mod_of_clip,
               where_minus_two):
        for label, n in SIZES:
            jitted = jit(fn)
            args = inputs(fn, n)
            with np.errstate(all="ignore"):
                got, want = jitted(*args), fn(*args)
            assert got.dtype == want.dtype and np.array_equal(got, want) and np.array_equal(
                np.signbit(got), np.signbit(want)), fn.__name__
            print(f"   check {fn.__name__} {label}: equal to numpy; {describe_modes(jitted)}")
            cases.append((f"{fn.__name__} {label}", fn, jitted, args))
    with np.errstate(all="ignore"):
        results = [compare(name, fn, jitted, args, repeats=opts.repeats) for name, fn, jitted, args in cases]
    print_results(results)


if __name__ == "__main__":
    main()
