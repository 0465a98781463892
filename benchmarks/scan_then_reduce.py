"""Scan then reduce: a tanh recurrence over 100 steps of (200_000,) float32 (and over 20 steps of 64)
whose per-step outputs are stacked and reduced by a mean squared error against a target, as a
scan-style model computes its loss.

    python benchmarks/scan_then_reduce.py [--quick]

Systems, in one process: plain numpy, astjit as written, astjit with
``rewrites=["push_reductions_into_loops"]`` (the stacked array never exists) and, where jax is
installed, ``jax.jit`` of the same model written with ``lax.scan``. Each result is checked against
numpy's (relative 1e-4: the reduction is summed in another order); peak memory is what tracemalloc
sees numpy allocate during one call (jax's own buffers are not traced, so it is not given for jax).
"""

import statistics
import time

import numpy as np
from _timing import _batch, batch_size, format_time, load_example, machine, parse_args, peak_bytes

from astjit import jit

CASES = [(100, 200_000), (20, 64)]     # the size, and steps of a few elements
scan_loss = load_example("scan_then_reduce").scan_loss


def jax_version():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def step(h, inputs):
        x, target = inputs
        h = jnp.tanh(h * w_scale + x)
        return h, jnp.sum((h - target) ** 2)

    w_scale = np.float32(0.5)

    @jax.jit
    def loss(h, xs, targets):
        _, parts = jax.lax.scan(step, h, (xs, targets))
        return jnp.sum(parts) / targets.size

    return lambda h, w, xs, targets: float(loss(h, xs, targets))


def timed(fn, args, repeats):
    """Median seconds per call over ``repeats`` batches of at least 20 ms."""
    number = batch_size(fn, args)
    return statistics.median(_batch(fn, args, number) for _ in range(repeats))


def run_case(steps, width, repeats):
    rng = np.random.default_rng(0)
    h = rng.standard_normal(width).astype(np.float32)
    xs = rng.standard_normal((steps, width)).astype(np.float32)
    targets = rng.standard_normal((steps, width)).astype(np.float32)
    args = (h, np.float32(0.5), xs, targets)
    systems = [("numpy", scan_loss), ("astjit", jit(scan_loss)),
               ("astjit + push_reductions_into_loops", jit(scan_loss, rewrites=["push_reductions_into_loops"]))]
    jax_fn = jax_version()
    if jax_fn is not None:
        systems.append(("jax.jit + lax.scan", jax_fn))
    want = float(scan_loss(*args))
    print(f"== {steps} steps x ({width},) float32")
    print(f"   {'system':40s} {'time':>10s} {'x numpy':>8s} {'first call':>11s} {'peak memory':>12s}")
    base = None
    for name, fn in systems:
        t0 = time.perf_counter()
        got = float(fn(*args))
        first = time.perf_counter() - t0
        assert abs(got - want) <= 1e-4 * abs(want), (name, got, want)
        fn(*args)
        t = timed(fn, args, repeats)
        base = base or t
        peak = "" if name.startswith("jax") else f"{peak_bytes(fn, args) / 1e6:9.2f} MB"
        print(f"   {name:40s} {format_time(t):>10s} {base / t:7.2f}x {first:10.2f}s {peak:>12s}")


def main():
    args_ns = parse_args(__doc__.splitlines()[0])
    print("scan then reduce: tanh recurrence, MSE of the stacked outputs")
    print(f"   {machine()}; median of {args_ns.repeats} batches of at least 20 ms after warm-up")
    for steps, width in CASES:
        run_case(steps, width, args_ns.repeats)


if __name__ == "__main__":
    main()
