"""Generated fixed-arity functions for the per-call hot path.

A cached call should cost little more than the kernel itself (the issue's target: 16 elements no slower
than numpy's eager chain). Generic ``*args`` code spends most of a microsecond packing tuples and
looping, so the cache lookup and the single-kernel runner are generated per arity with ``exec``.
"""

import numpy as np


def _names(n):
    return [f"a{i}" for i in range(n)]


def make_dispatch(cache: dict, miss, n: int, counter: list):
    """``dispatch(a0, .., an)``: count the call, look the key up in ``cache`` and call its runner, else
    ``miss(args)`` (which counts the call itself)."""
    names = _names(n)
    params = ", ".join(names)
    key = ", ".join(f"(({x}.dtype, {x}.shape) if type({x}) is ndarray else type({x}))" for x in names)
    src = (f"def dispatch({params}):\n"
           f"    runner = cache_get(({key}{',' if n else ''}))\n"
           f"    if runner is not None:\n"
           f"        counter[0] += 1\n"
           f"        return runner({params})\n"
           f"    return miss(({params}{',' if n else ''}))\n")
    namespace = {"ndarray": np.ndarray, "cache_get": cache.get, "miss": miss, "counter": counter}
    exec(compile(src, "<astjit dispatch>", "exec"), namespace)
    return namespace["dispatch"]


def make_single_kernel_runner(kernel, n: int, shape, dtype, slow):
    """``run(a0, .., an)`` for a kernel taking the live-ins and writing one array live-out; any failure
    (a non-contiguous or read-only input, an int too large for int64) goes to ``slow(args)``."""
    names = _names(n)
    params = ", ".join(names)
    src = (f"def run({params}):\n"
           f"    out = empty(shape, dtype)\n"
           f"    try:\n"
           f"        kernel({params}{', ' if n else ''}out)\n"
           f"    except Exception:\n"
           f"        return slow(({params}{',' if n else ''}))\n"
           f"    return out\n")
    namespace = {"empty": np.empty, "shape": shape, "dtype": dtype, "kernel": kernel, "slow": slow}
    exec(compile(src, "<astjit runner>", "exec"), namespace)
    return namespace["run"]
