"""The ``step`` function of examples/quickstart.py, numpy vs astjit, on float32 at 2M and 16 elements.

    python benchmarks/quickstart_step.py [--quick]

``step`` mixes fused elementwise code, a branch on ``y.sum() > 0``, a 10-iteration loop whose body is one
fragment, and a final mean: per call it runs several fragments, so at 16 elements it measures astjit's
per-fragment call overhead several times over.
"""


import numpy as np
from _timing import compare, describe_modes, load_example, parse_args, print_header, print_results

from astjit import jit

ITERATIONS = 10
SIZES = [("2M", 2_000_000), ("16", 16)]


def load_step():
    """``step`` itself, from the example file, so the benchmark follows the example."""
    return load_example("quickstart").step


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(n).astype(np.float32) for _ in range(3)) + (ITERATIONS,)


def check(step, jitted, args, label):
    mean, z = jitted(*args)
    ref_mean, ref_z = step(*args)
    np.testing.assert_allclose(z, ref_z, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5)
    assert z.dtype == ref_z.dtype and z.shape == ref_z.shape and type(mean) is type(ref_mean)
    print(f"   check {label}: matches numpy (rtol 1e-5, atol 1e-6); {describe_modes(jitted)}")


def main():
    opts = parse_args(__doc__.splitlines()[0])
    print_header(f"examples/quickstart.py step(a, b, c, n={ITERATIONS}), float32", opts.repeats)
    step = load_step()
    cases = []
    for label, n in SIZES:
        jitted = jit(step)                          # one per size, so the mode report is per size
        args = inputs(n)
        name = f"step {label}"
        check(step, jitted, args, name)
        cases.append((name, jitted, args))
    results = [compare(name, step, jitted, args, repeats=opts.repeats) for name, jitted, args in cases]
    print_results(results)


if __name__ == "__main__":
    main()
