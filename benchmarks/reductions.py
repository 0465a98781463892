"""Reductions, numpy vs astjit, on a 1000 x 10000 float32 array (10M elements, 40 MB).

    python benchmarks/reductions.py [--quick]

Cases: the fused multiply-and-sum ``(x * y).sum()``, row sums of an elementwise expression
``(x - 1).sum(axis=1)``, and the plain reductions ``x.mean()`` and ``x.max()``. astjit splits sums into
partial sums and numpy sums pairwise, so float32 sums agree to rounding, not bit for bit: each result is
checked against numpy within a relative tolerance, and against a float64 reference for both.
"""

import numpy as np
from _timing import compare, describe_modes, parse_args, print_header, print_results

from astjit import jit

SHAPE = (1000, 10_000)
RTOL = 1e-4


def dot_sum(x, y):
    return (x * y).sum()


def row_sums(x, y):
    return (x - 1).sum(axis=1)


def mean(x, y):
    return x.mean()


def maximum(x, y):
    return x.max()


CASES = [("(x * y).sum()", dot_sum), ("(x - 1).sum(axis=1)", row_sums), ("x.mean()", mean),
         ("x.max()", maximum)]


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2))


def check(fn, jitted, args, label):
    got, want = jitted(*args), fn(*args)
    exact = fn(*(a.astype(np.float64) for a in args))
    assert type(got) is type(want) and np.shape(got) == np.shape(want) and got.dtype == want.dtype, \
        (type(got), type(want), np.shape(got), np.shape(want))
    scale = np.max(np.abs(exact))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * scale)
    err_jit = float(np.max(np.abs(got - exact)) / scale)
    err_np = float(np.max(np.abs(want - exact)) / scale)
    print(f"   check {label}: matches numpy (rtol {RTOL:g}); error vs float64, relative to max |result|: "
          f"astjit {err_jit:.1e}, numpy {err_np:.1e}; {describe_modes(jitted)}")


def main():
    opts = parse_args(__doc__.splitlines()[0])
    print_header(f"reductions, float32 {SHAPE[0]}x{SHAPE[1]}", opts.repeats)
    args = inputs()
    cases = []
    for name, fn in CASES:
        jitted = jit(fn)
        check(fn, jitted, args, name)
        cases.append((name, fn, jitted))
    results = [compare(name, fn, jitted, args, repeats=opts.repeats) for name, fn, jitted in cases]
    print_results(results)


if __name__ == "__main__":
    main()
