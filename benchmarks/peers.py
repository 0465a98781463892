"""astjit against its peers on the workloads users compare JITs on, in one run.

    python benchmarks/peers.py [--quick] [--json results.json]

Workload x system: median time per call, ratio to numpy (below 1: faster), the first call's time
(compile included) and the peak of memory allocated through numpy during a call (tracemalloc; "-"
for systems whose allocations it does not see). Every peer's result is checked against numpy before it
is timed. Peers run when installed (``pip install -e .[bench]``): numexpr (expressions only), numba
``njit``, jax (CPU) and torch (CPU, eager). A peer that cannot run a workload is left out of its row.
"""

import importlib
import json
import platform
import statistics
import time

import numpy as np
from _timing import _batch, batch_size, format_time, parse_args, peak_bytes, print_header
from workloads import affine_chain, entropy, gaussian, layernorm, matmul_bias_relu, mse, softmax

from astjit import jit


def _optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


numexpr, numba, torch = _optional("numexpr"), _optional("numba"), _optional("torch")
jax, jnp = _optional("jax"), _optional("jax.numpy")
if jax is not None:
    jax.config.update("jax_enable_x64", True)       # float64 workloads stay float64


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return [
        ("row softmax 4096x1024 f32", softmax, (rng.standard_normal((4096, 1024)).astype(f32),)),
        ("row softmax 16x64 f32", softmax, (rng.standard_normal((16, 64)).astype(f32),)),
        ("layernorm 4096x1024 f32", layernorm, (rng.standard_normal((4096, 1024)).astype(f32),)),
        ("MSE 4M f32", mse, (rng.standard_normal(4 << 20).astype(f32), rng.standard_normal(4 << 20).astype(f32))),
        ("matmul 1024^2+bias+relu", matmul_bias_relu, (rng.standard_normal((1024, 1024)).astype(f32),
                                                       rng.standard_normal((1024, 1024)).astype(f32),
                                                       rng.standard_normal(1024).astype(f32))),
        ("affine chain 10M f64", affine_chain, (rng.standard_normal(10_000_000),)),
        ("gaussian 1M f64", gaussian, (rng.standard_normal(1_000_000),)),
        ("gaussian 16 f64", gaussian, (rng.standard_normal(16),)),
        ("entropy 1M f64", entropy, (rng.random(1_000_000) + 1e-9,)),
        ("entropy 16 f64", entropy, (rng.random(16) + 1e-9,)),
        ("affine chain 16 f64", affine_chain, (rng.standard_normal(16),)),
    ]


NUMEXPR = {"affine_chain": "(x * 2.0 + 1.0) * 0.5 - 3.0",
           "gaussian": "exp(-0.5 * x * x) / sqrt(2.0 * 3.141592653589793)", "entropy": "-(x * log(x))"}


def _torch_version(fn):
    t = torch
    table = {
        "softmax": lambda x: t.softmax(x, dim=1),
        "layernorm": lambda x: t.nn.functional.layer_norm(x, x.shape[1:], eps=1e-5),
        "mse": lambda a, b: ((a - b) ** 2).mean(),
        "matmul_bias_relu": lambda a, w, b: t.relu(a @ w + b),
        "affine_chain": lambda x: (x * 2.0 + 1.0) * 0.5 - 3.0,
        "gaussian": lambda x: t.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi),
        "entropy": lambda p: -(p * t.log(p)),
    }
    body = table[fn.__name__]
    return lambda *args: body(*[t.from_numpy(a) for a in args]).numpy()


def _jax_version(fn):
    table = {
        "softmax": lambda x: jax.nn.softmax(x, axis=1),
        "layernorm": lambda x: (x - x.mean(1, keepdims=True)) / jnp.sqrt(x.var(1, keepdims=True) + 1e-5),
        "mse": lambda a, b: ((a - b) ** 2).mean(),
        "matmul_bias_relu": lambda a, w, b: jnp.maximum(a @ w + b, 0.0),
        "affine_chain": lambda x: (x * 2.0 + 1.0) * 0.5 - 3.0,
        "gaussian": lambda x: jnp.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi),
        "entropy": lambda p: -(p * jnp.log(p)),
    }
    compiled = jax.jit(table[fn.__name__])
    return lambda *args: np.asarray(compiled(*args).block_until_ready())


def peers_for(fn):
    systems = [("numpy", fn), ("astjit", jit(fn))]
    if numexpr is not None and NUMEXPR.get(fn.__name__):
        expr = NUMEXPR[fn.__name__]
        systems.append(("numexpr", lambda x: numexpr.evaluate(expr, local_dict={"x": x})))
    if numba is not None:
        systems.append(("numba", numba.njit(fn)))
    if jax is not None:
        systems.append(("jax", _jax_version(fn)))
    if torch is not None:
        systems.append(("torch", _torch_version(fn)))
    return systems


def _first_call(fn, args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def _close(got, want):
    got = np.asarray(got)
    tol = 2e-5 if want.dtype == np.float32 else 1e-12
    return got.shape == np.shape(want) and np.allclose(got, want, rtol=tol, atol=tol * float(np.max(np.abs(want))))


def main():
    options = parse_args(__doc__.splitlines()[0], json_output=True)
    print_header("peers: numpy, astjit, numexpr, numba, jax, torch", options.repeats)
    for name, module in (("numexpr", numexpr), ("numba", numba), ("jax", jax), ("torch", torch)):
        print(f"   {name} {module.__version__ if module else 'not installed'}")
    rows = []
    for workload, fn, args in _inputs():
        want = fn(*args)
        timed = []
        for system, f in peers_for(fn):
            try:
                got, first = _first_call(f, args)
            except Exception as exc:
                print(f"   {workload}: {system} cannot run it ({type(exc).__name__})")
                continue
            if not _close(got, want):
                print(f"   {workload}: {system} gives another result; left out")
                continue
            peak = peak_bytes(f, args) if system in ("numpy", "astjit", "numexpr", "numba") else None
            timed.append((system, f, first, peak))
        sizes = {system: batch_size(f, args, 0.05) for system, f, _, _ in timed}
        times = {system: [] for system, _, _, _ in timed}
        for r in range(options.repeats):
            for system, f, _, _ in (timed if r % 2 == 0 else timed[::-1]):
                times[system].append(_batch(f, args, sizes[system]))
        base = statistics.median(times["numpy"])
        for system, _, first, peak in timed:
            median = statistics.median(times[system])
            rows.append({"workload": workload, "system": system, "median_s": median, "ratio_to_numpy": median / base,
                         "first_call_s": first, "peak_bytes": peak})
    print(f"   {'workload':<26} {'system':<8} {'median':>10} {'x numpy':>8} {'first call':>11} {'peak MB':>8}")
    for row in rows:
        peak = f"{row['peak_bytes'] / 2**20:8.1f}" if row["peak_bytes"] is not None else f"{'-':>8}"
        print(f"   {row['workload']:<26} {row['system']:<8} {format_time(row['median_s']):>10} "
              f"{row['ratio_to_numpy']:>7.2f}x {row['first_call_s']:>10.3f}s {peak}")
    if options.json:
        with open(options.json, "w") as fh:
            json.dump({"machine": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"),
                       "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
