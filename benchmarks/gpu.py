"""GPU benchmark: astjit on torch CUDA tensors and CuPy arrays against the same library's eager ops and
a device-to-device copy, all in one process, as ratios of medians.

    python benchmarks/gpu.py [--quick]

Cases: the cost of a call (16 elements), a fused elementwise chain on 16M float32 (target: bandwidth
within 1.3x of a device-to-device copy, counting bytes read and written), row softmax and layer norm
on 4096 x 1024 and 65536 x 1024 float32 (target: no slower than the library's eager ops), matmul 1024^2 + bias + relu (CuPy: cuBLAS through CuPy, then
one fused kernel), and the first call in a new process, cold and from the disk cache (target: under
1 s warm). Each timed batch ends with a device synchronization. Without a CUDA GPU visible to TVM and
torch or CuPy, it says so and exits 0.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

from astjit import jit

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import parse_args  # noqa: E402


def affine(a, b):
    return a * 2.0 + b - 1.0


def row_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x):
    mean = x.mean(axis=1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=1, keepdims=True)
    return centered / np.sqrt(var + 1e-5)


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0.0)


def libraries():
    """(name, to_device, synchronize, eager ops) of each GPU library at hand."""
    found = []
    try:
        import torch

        if torch.cuda.is_available():
            eager = {"affine": lambda a, b: a * 2.0 + b - 1.0, "copy": lambda a, b: a.clone(),
                     "softmax": lambda x: torch.softmax(x, dim=1),
                     "layernorm": lambda x: torch.nn.functional.layer_norm(x, x.shape[1:], eps=1e-5),
                     "dense_relu": lambda x, w, b: torch.relu(x @ w + b)}
            found.append(("torch", lambda a: torch.from_numpy(a).cuda(), torch.cuda.synchronize, eager))
    except ImportError:
        pass
    try:
        import cupy

        eager = {"affine": affine, "copy": lambda a, b: a.copy(), "softmax": row_softmax,
                 "layernorm": layernorm, "dense_relu": dense_relu}      # CuPy runs the numpy code itself
        found.append(("cupy", cupy.asarray, lambda: cupy.cuda.Device().synchronize(), eager))
    except ImportError:
        pass
    return found


def per_call(fn, args, synchronize, repeats, calls=50):
    times = []
    for _ in range(repeats):
        synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        synchronize()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


FIRST_CALL = textwrap.dedent("""\
    import sys, time
    start = time.perf_counter()
    import numpy as np
    import {library} as lib
    if sys.argv[1] == "jit":
        from astjit import jit
    else:
        jit = lambda f: f

    @jit
    def layernorm(x):
        mean = x.mean(axis=1, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axis=1, keepdims=True)
        return centered / np.sqrt(var + 1e-5)

    if sys.argv[1] == "plain" and "{library}" == "torch":     # numpy's functions do not take torch tensors
        layernorm = lambda x: lib.nn.functional.layer_norm(x, x.shape[1:], eps=1e-5)

    host = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float32)
    x = lib.asarray(host) if "{library}" == "cupy" else lib.from_numpy(host).cuda()
    layernorm(x)
    (lib.cuda.Device().synchronize() if "{library}" == "cupy" else lib.cuda.synchronize())
    print(time.perf_counter() - start)
    """)


def first_calls(library):
    """(cold, from the disk cache, without astjit) seconds of a new process's first call, imports
    included."""
    with tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "first.py")
        with open(script, "w") as f:
            f.write(FIRST_CALL.format(library=library))
        env = dict(os.environ, ASTJIT_CACHE="1", ASTJIT_CACHE_DIR=os.path.join(folder, "cache"))
        times = []
        for how in ("jit", "jit", "plain"):
            done = subprocess.run([sys.executable, script, how], env=env, capture_output=True, text=True,
                                  timeout=600)
            times.append(float(done.stdout.split()[-1]) if done.returncode == 0 else float("nan"))
        return times


def main():
    options = parse_args(__doc__.splitlines()[0])
    from astjit.backends.tvm.cuda import cuda_device_exists

    found = libraries()
    if not found or not cuda_device_exists():
        print("no CUDA GPU visible to TVM with torch or CuPy: nothing to measure")
        return
    rng = np.random.default_rng(0)
    host_a, host_b = (rng.standard_normal(1 << 24).astype(np.float32) for _ in range(2))
    host_x = rng.standard_normal((4096, 1024)).astype(np.float32)
    host_m, host_w, host_bias = (rng.standard_normal(s).astype(np.float32) for s in ((1024, 1024), (1024, 1024), 1024))
    rows = []
    for name, to_device, synchronize, eager in found:
        a, b, x = to_device(host_a), to_device(host_b), to_device(host_x)
        small = to_device(host_a[:16])
        big = to_device(np.tile(host_x, (16, 1)))
        cases = [("affine 16 f32 (the cost of a call)", affine, (small, small), "affine", 0),
                 ("affine 16M f32", affine, (a, b), "affine", 3 * a.nbytes),
                 ("row softmax 4096x1024 f32", row_softmax, (x,), "softmax", 2 * x.nbytes),
                 ("layernorm 4096x1024 f32", layernorm, (x,), "layernorm", 2 * x.nbytes),
                 ("row softmax 65536x1024 f32", row_softmax, (big,), "softmax", 2 * big.nbytes),
                 ("layernorm 65536x1024 f32", layernorm, (big,), "layernorm", 2 * big.nbytes)]
        if name == "cupy":      # torch tensors have no numpy protocol for the matmul: see docs/backends.md
            cases.append(("matmul 1024^2 + bias + relu f32", dense_relu,
                          (to_device(host_m), to_device(host_w), to_device(host_bias)), "dense_relu", 0))
        copy = per_call(eager["copy"], (a, b), synchronize, options.repeats)
        for case, fn, args, peer, moved in cases:
            jitted = jit(fn)
            start = time.perf_counter()
            jitted(*args)
            synchronize()
            first = time.perf_counter() - start
            t_astjit = per_call(jitted, args, synchronize, options.repeats)
            t_peer = per_call(eager[peer], args, synchronize, options.repeats)
            rows.append((name, case, t_astjit, t_peer, moved / t_astjit / 1e9 if moved else None, first))
        rows.append((name, "device-to-device copy 16M f32", copy, copy, 2 * a.nbytes / copy / 1e9, None))
    print("| library | case | astjit ms | eager ms | astjit / eager | astjit GB/s | first call in process s |")
    print("|---|---|---|---|---|---|---|")
    for name, case, t_astjit, t_peer, bandwidth, first in rows:
        print(f"| {name} | {case} | {t_astjit * 1e3:.4f} | {t_peer * 1e3:.4f} | {t_astjit / t_peer:.2f}x | "
              f"{'' if bandwidth is None else f'{bandwidth:.0f}'} | {'' if first is None else f'{first:.2f}'} |")
    print("eager: the library's own ops (torch.softmax, layer_norm; CuPy runs the numpy code); GB/s counts "
          "each input read and each output written once")
    for name, *_ in found:
        cold, warm, plain = first_calls(name)
        without = "torch's own layer_norm" if name == "torch" else "the same numpy code on CuPy arrays"
        print(f"first call in a new process ({name}, layernorm, imports included): {cold:.2f} s cold, "
              f"{warm:.2f} s from the disk cache; without astjit ({without}): {plain:.2f} s")


if __name__ == "__main__":
    main()
