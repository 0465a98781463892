"""The elementwise chain from the issue, numpy vs astjit, on float32 at 10M and at 16 elements.

    python benchmarks/elementwise_chain.py [--quick]

``chain`` has tanh in the middle; ``arith`` is the same chain without it (pure arithmetic). Before timing,
each jitted result is checked against numpy and the fragment is checked to have run compiled ("tvm").
"""

import numpy as np
from _timing import (
    chosen_modes,
    compare,
    describe_modes,
    fragment_modes,
    parse_args,
    print_header,
    print_results,
)

from astjit import jit

RTOL = 2e-6
# tanh(x) * c + b cancels where tanh(x) * c ~ -b: there a relative error of a few 1e-7 in tanh (both numpy's
# and astjit's float32 tanh are approximations) becomes a large *relative* error of a tiny result, so the
# check also allows an absolute error of a few float32 ulps of the operands (|b|, |c| ~ 1).
ATOL = 1e-6


def chain(a, b, c):
    x = (a + 3) * 4 / 100
    y = np.tanh(x) * c + b
    return y


def arith(a, b, c):
    y = ((a + 3) * 4 / 100) * c + b
    return y


SIZES = [("10M", 10_000_000), ("16", 16)]


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(n).astype(np.float32) for _ in range(3))


def check(fn, jitted, args, label):
    got, want = jitted(*args), fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    rel_only = int(np.sum(np.abs(got - want) > RTOL * np.abs(want)))
    modes = fragment_modes(jitted)
    print(f"   check {label}: matches numpy (rtol {RTOL:g}, atol {ATOL:g}; {rel_only} of {want.size} elements "
          f"outside rtol alone, max abs diff {float(np.max(np.abs(got - want))):.2g}); {describe_modes(jitted)}")
    assert modes == {"tvm"}, f"{label}: the fragment did not run compiled: {modes}"
    if chosen_modes(jitted) != {"tvm"}:
        print(f"   WARNING {label}: astjit's first-call measurement chose the block's Python over the kernel, "
              "so the astjit column below times Python, not the kernel")


def main():
    opts = parse_args(__doc__.splitlines()[0])
    print_header("elementwise chain, float32", opts.repeats)
    cases = []
    for fn in (chain, arith):
        for label, n in SIZES:
            jitted = jit(fn)                        # one per size, so the mode check sees only this size
            args = inputs(n)
            name = f"{fn.__name__} {label}"
            check(fn, jitted, args, name)
            cases.append((name, fn, jitted, args))
    results = [compare(name, fn, jitted, args, repeats=opts.repeats) for name, fn, jitted, args in cases]
    print_results(results)


if __name__ == "__main__":
    main()
