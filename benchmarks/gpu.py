"""GPU benchmark: astjit's tvm-cuda backend on torch CUDA tensors (or CuPy arrays) against the same
library's eager ops and against a device-to-device copy, all in one process, as ratios of medians.

    python benchmarks/gpu.py [--quick]

Cases: a fused elementwise chain on 16M float32 (target: within 1.3x of copying the input once),
row softmax and layer norm on 4096 x 1024 float32 (target: no slower than torch eager), and the first
call's time. Each timed batch ends with a device synchronization. Without a CUDA GPU visible to TVM
and torch or CuPy, it says so and exits 0.
"""

import statistics
import sys
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


def library():
    """(name, to_device, synchronize, eager ops) of the GPU library at hand, or None."""
    try:
        import torch

        if torch.cuda.is_available():
            eager = {"affine": lambda a, b: a * 2.0 + b - 1.0,
                     "copy": lambda a, b: a.clone(),
                     "softmax": lambda x: torch.softmax(x, dim=1),
                     "layernorm": lambda x: torch.nn.functional.layer_norm(x, x.shape[1:], eps=1e-5)}
            return "torch", lambda a: torch.from_numpy(a).cuda(), torch.cuda.synchronize, eager
    except ImportError:
        pass
    try:
        import cupy

        eager = {"affine": lambda a, b: a * 2.0 + b - 1.0, "copy": lambda a, b: a.copy(),
                 "softmax": row_softmax, "layernorm": layernorm}     # CuPy runs the numpy code itself
        return "cupy", cupy.asarray, cupy.cuda.Device().synchronize, eager
    except ImportError:
        return None


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


def main():
    options = parse_args(__doc__.splitlines()[0])
    from astjit.backends.tvm.cuda import cuda_device_exists

    found = library()
    if found is None or not cuda_device_exists():
        print("no CUDA GPU visible to TVM with torch or CuPy: nothing to measure")
        return
    name, to_device, synchronize, eager = found
    rng = np.random.default_rng(0)
    a, b = (to_device(rng.standard_normal(1 << 24).astype(np.float32)) for _ in range(2))
    x = to_device(rng.standard_normal((4096, 1024)).astype(np.float32))
    rows = []
    for case, fn, args, peer in (("affine 16M f32", affine, (a, b), "copy"),
                                 ("row softmax 4096x1024 f32", row_softmax, (x,), "softmax"),
                                 ("layernorm 4096x1024 f32", layernorm, (x,), "layernorm")):
        jitted = jit(fn)
        start = time.perf_counter()
        jitted(*args)
        synchronize()
        first = time.perf_counter() - start
        t_astjit = per_call(jitted, args, synchronize, options.repeats)
        t_peer = per_call(eager[peer], args, synchronize, options.repeats)
        t_eager = per_call(eager[peer if peer != "copy" else "affine"], args, synchronize, options.repeats)
        rows.append((case, t_astjit, t_peer, t_eager, first))
    print(f"| case ({name}) | astjit ms | {name} peer ms | astjit / peer | {name} eager ms | first call s |")
    print("|---|---|---|---|---|---|")
    for case, t_astjit, t_peer, t_eager, first in rows:
        print(f"| {case} | {t_astjit * 1e3:.3f} | {t_peer * 1e3:.3f} | {t_astjit / t_peer:.2f}x | "
              f"{t_eager * 1e3:.3f} | {first:.2f} |")
    print("peer: a device-to-device copy of the input for the affine chain, the library's own op otherwise")


if __name__ == "__main__":
    main()
