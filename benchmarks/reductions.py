"""Reductions, numpy vs astjit, on a 1000 x 10000 float32 array (10M elements, 40 MB), then on 16 x 16.

    python benchmarks/reductions.py [--quick]

Cases: the fused multiply-and-sum ``(x * y).sum()``, row sums of an elementwise expression
``(x - 1).sum(axis=1)``, the plain reductions ``x.mean()`` and ``x.max()``, reductions over the leading
axis (``x.sum(axis=0)``, ``x.max(axis=0)``), a column normalization with ``std``, ``np.any`` and
``argmax`` of expressions, and an int32 expression that wraps around (``(i * 3 + j - (i ^ j)).sum(axis=1)``
on integers made from x and y). Then float extremes on their own inputs, float32 and float64: ``x.max()``,
``np.min(x)`` and ``(x * 2.0).max()`` of 1M elements and the row maxima ``A.max(axis=1)`` of 4096 x 1024
(the whole-array ones are what numpy runs with its widest vector loop). astjit adds float sums in numpy's pairwise order (numpy's bits);
each float result is checked against numpy within a relative tolerance (for the other reductions'
rounding), and against a float64 reference for both; bool and int results must be equal.
"""

import numpy as np
from _timing import compare, describe_modes, parse_args, print_header, print_results

from astjit import jit

SHAPE = (1000, 10_000)
SMALL = (16, 16)
RTOL = 1e-4


def dot_sum(x, y):
    return (x * y).sum()


def row_sums(x, y):
    return (x - 1).sum(axis=1)


def mean(x, y):
    return x.mean()


def maximum(x, y):
    return x.max()


def column_sums(x, y):
    return x.sum(axis=0)


def column_max(x, y):
    return x.max(axis=0)


def normalized(x, y):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def any_above(x, y):
    return np.any(x * y > 4.5)


def row_argmax(x, y):
    return (x * y).argmax(axis=1)


def wrapping_ints(x, y):
    i, j = (x * 1000).astype(np.int32), (y * 1000).astype(np.int32)
    return (i * 3 + j - (i ^ j)).sum(axis=1)


CASES = [("(x * y).sum()", dot_sum), ("(x - 1).sum(axis=1)", row_sums), ("x.mean()", mean),
         ("x.max()", maximum), ("x.sum(axis=0)", column_sums), ("x.max(axis=0)", column_max),
         ("(x - x.mean(axis=0)) / x.std(axis=0)", normalized), ("np.any(x * y > 4.5)", any_above),
         ("(x * y).argmax(axis=1)", row_argmax), ("int32 (i * 3 + j - (i ^ j)).sum(axis=1)", wrapping_ints)]


def whole_max(x):
    return x.max()


def whole_min(x):
    return np.min(x)


def doubled_max(x):
    return (x * 2.0).max()


def row_max(x):
    return x.max(axis=1)


EXTREMES = [("x.max()", whole_max, (1_000_000,)), ("np.min(x)", whole_min, (1_000_000,)),
            ("(x * 2.0).max()", doubled_max, (1_000_000,)), ("A.max(axis=1)", row_max, (4096, 1024))]


def inputs(shape=SHAPE, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(shape).astype(np.float32) for _ in range(2))


def check(fn, jitted, args, label):
    got, want = jitted(*args), fn(*args)
    assert type(got) is type(want) and np.shape(got) == np.shape(want) and got.dtype == want.dtype, \
        (type(got), type(want), np.shape(got), np.shape(want))
    if got.dtype.kind != "f":
        assert np.array_equal(got, want)
        print(f"   check {label}: equal to numpy; {describe_modes(jitted)}")
        return
    exact = fn(*(a.astype(np.float64) for a in args))
    scale = np.max(np.abs(exact))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * scale)
    err_jit = float(np.max(np.abs(got - exact)) / scale)
    err_np = float(np.max(np.abs(want - exact)) / scale)
    print(f"   check {label}: matches numpy (rtol {RTOL:g}); error vs float64, relative to max |result|: "
          f"astjit {err_jit:.1e}, numpy {err_np:.1e}; {describe_modes(jitted)}")


def main():
    opts = parse_args(__doc__.splitlines()[0])
    for shape in (SHAPE, SMALL):
        print_header(f"reductions, float32 {shape[0]}x{shape[1]}", opts.repeats)
        args = inputs(shape)
        cases = []
        for name, fn in CASES:
            jitted = jit(fn)
            check(fn, jitted, args, name)
            cases.append((name, fn, jitted))
        results = [compare(name, fn, jitted, args, repeats=opts.repeats) for name, fn, jitted in cases]
        print_results(results)
    print_header("float max and min, 1M elements and 4096x1024 rows", opts.repeats)
    results = []
    for dtype in (np.float32, np.float64):
        for name, fn, shape in EXTREMES:
            label = f"{np.dtype(dtype).name} {name} {'x'.join(map(str, shape))}"
            x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
            jitted = jit(fn)
            got, want = jitted(x), fn(x)
            assert np.array_equal(got, want) and np.asarray(got).dtype == np.asarray(want).dtype, label
            print(f"   check {label}: equal to numpy; {describe_modes(jitted)}")
            results.append(compare(label, fn, jitted, (x,), repeats=opts.repeats))
    print_results(results)


if __name__ == "__main__":
    main()
