"""A jitted numpy function on a chunked dask array and on a LocalCluster of two worker processes.

    pip install '.[dask]' && python examples/dask_scale_out.py

`squash` is defined in this script (module ``__main__``): the threaded scheduler calls it in this
process, and ``client.map`` ships it by value with cloudpickle; each worker process jits it again and
compiles its own kernels on its first call with each dtype and shape. Nothing compiled is pickled.
See docs/scale-out.md.
"""

import time

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

from astjit import jit


@jit
def squash(x, mean, std, scale):
    z = (x - mean) / std              # one fused elementwise kernel for the whole chain
    y = np.tanh(z * scale) * 0.5 + 1.0
    return y * np.exp(-0.5 * z * z) + 0.1


def timed(label, fn):
    start = time.perf_counter()
    result = fn()
    print(f"{label:<46} {time.perf_counter() - start:8.3f} s")
    return result


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(8_000_000) * 3.0 + 1.0
    mean, std = float(x.mean()), float(x.std())
    want = squash.original(x, mean, std, 0.7)          # the plain numpy function
    timed("numpy, whole array", lambda: squash.original(x, mean, std, 0.7))

    # dask.array, threaded scheduler: one process, the jitted function is called once per chunk
    dx = da.from_array(x, chunks=1_000_000)
    meta = np.array((), dtype=x.dtype)                 # spares dask a probe call on an empty block
    with dask.config.set(scheduler="threads"):
        plain = da.map_blocks(squash.original, dx, mean, std, 0.7, meta=meta)
        jitted = da.map_blocks(squash, dx, mean, std, 0.7, meta=meta)
        timed("dask threads, numpy", plain.compute)
        got = timed("dask threads, jitted (first call compiles)", jitted.compute)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        got = timed("dask threads, jitted (compiled)", jitted.compute)
        np.testing.assert_allclose(got, want, rtol=1e-12)

    # distributed: two worker processes, one thread each
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        chunks = client.scatter(np.array_split(x, 8))  # the data lives on the workers
        for label, scale in (("first call compiles in each worker", 0.7), ("compiled", 0.7),
                             ("new scale, same kernels", 1.3)):
            futures = client.map(squash, chunks, mean=mean, std=std, scale=scale, pure=False)
            got = timed(f"client.map, {label}", lambda futures=futures: np.concatenate(client.gather(futures)))
            np.testing.assert_allclose(got, squash.original(x, mean, std, scale), rtol=1e-12)
        # with the client active, dask.array computes on the cluster (the data is generated there)
        dy = da.random.default_rng(1).standard_normal(x.size, chunks=1_000_000)
        on_cluster = da.map_blocks(squash, dy, mean, std, 0.7, meta=meta)
        got = timed("dask on the cluster, generate + map_blocks", on_cluster.compute)
        np.testing.assert_allclose(got, squash.original(dy.compute(), mean, std, 0.7), rtol=1e-12)
    modes = {e["mode"] for entries in squash.cache_info().values() for e in entries}
    print(f"all results match numpy; in this process squash ran as {', '.join(sorted(modes))}")


if __name__ == "__main__":
    main()
