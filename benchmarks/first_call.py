"""First call in a fresh process: imports plus the first call of one function, cold and warm caches.

    python benchmarks/first_call.py [--repeats N] [--json results.json] [--workload NAME ...]

Each measurement is a new Python process that imports numpy and the system, defines one workload,
calls it once and checks the result against numpy. Reported: the median over ``--repeats`` processes of
the time from the script's first line to the end of that call ("in process") and of the whole process
as the parent sees it (interpreter start and exit included). astjit runs with an empty kernel cache
("cold") and then with the cache the cold runs filled ("warm": the compiler is not imported); numba
likewise with ``cache=True``; jax (the same function over ``jax.numpy``) has no persistent cache by
default.
"""

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import types  # noqa: E402

import numpy as np  # noqa: E402
from workloads import (  # noqa: E402
    affine_chain,
    layernorm,
    log_error,
    mod_of_clip,
    smoothing_loop,
    softmax,
    softmax_cross_entropy,
)

WORKLOADS = {
    "softmax 1024x1024 f32": (softmax, lambda rng: rng.standard_normal((1024, 1024)).astype(np.float32)),
    "layernorm 1024x1024 f32": (layernorm, lambda rng: rng.standard_normal((1024, 1024)).astype(np.float32)),
    "affine chain 1M f64": (affine_chain, lambda rng: rng.standard_normal(1 << 20)),
    "softmax CE 256x10 f64": (softmax_cross_entropy, lambda rng: rng.standard_normal((256, 10))),
    "mod of clip 1000 f64": (mod_of_clip, lambda rng: rng.standard_normal(1000)),
    "log error 2x1000 f64": (log_error, lambda rng: rng.random((2, 1000)) + 0.1),
    "smoothing loop 10k f64": (smoothing_loop, lambda rng: rng.standard_normal(10_000)),
}
SYSTEMS = ("numpy", "astjit cold", "astjit warm", "numba cold", "numba warm", "jax")


def child(system: str, workload: str) -> None:
    fn, make = WORKLOADS[workload]
    x = make(np.random.default_rng(0))
    if system == "numpy":
        compiled = fn
    elif system.startswith("astjit"):
        from astjit import jit

        compiled = jit(fn)
    elif system.startswith("numba"):
        import numba

        compiled = numba.njit(cache=True)(fn)
    else:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)          # float64 workloads stay float64
        compiled = jax.jit(types.FunctionType(fn.__code__, dict(fn.__globals__, np=jnp)))
    got = np.asarray(compiled(x))
    elapsed = time.perf_counter() - T0
    assert np.allclose(got, fn(x), rtol=1e-4, atol=1e-5), f"{system} disagrees with numpy on {workload}"
    print(json.dumps({"in_process_s": elapsed}))


def measure(system, workload, env, repeats):
    inside, whole = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--child", system, workload], env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            return None, last
        whole.append(time.perf_counter() - start)
        inside.append(json.loads(done.stdout.strip().splitlines()[-1])["in_process_s"])
    return (statistics.median(inside), statistics.median(whole)), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--workload", action="append", choices=list(WORKLOADS),
                        help="only this workload (repeatable; default: all)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    rows = []
    print(f"{'workload':<26} {'system':<13} {'in process':>11} {'process':>9}")
    for workload in args.workload or WORKLOADS:
        with tempfile.TemporaryDirectory() as folder:
            env = dict(os.environ, ASTJIT_CACHE="1", ASTJIT_CACHE_DIR=os.path.join(folder, "astjit"),
                       NUMBA_CACHE_DIR=os.path.join(folder, "numba"))
            for system in SYSTEMS:
                if system.endswith("cold"):
                    # each cold run starts from an empty cache; the last one leaves it filled for "warm"
                    times = []
                    for _ in range(args.repeats):
                        for sub in ("astjit", "numba"):
                            subprocess.run(["rm", "-rf", os.path.join(folder, sub)], check=True)
                        result, error = measure(system, workload, env, 1)
                        if result is None:
                            break
                        times.append(result)
                    result = (statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)) \
                        if times else None
                else:
                    result, error = measure(system, workload, env, args.repeats)
                if result is None:
                    print(f"{workload:<26} {system:<13} {'-':>11} {'-':>9}   (cannot run it: {error[:60]})")
                    continue
                rows.append({"workload": workload, "system": system, "in_process_s": result[0],
                             "process_s": result[1]})
                print(f"{workload:<26} {system:<13} {result[0]:>10.3f}s {result[1]:>8.3f}s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
