"""The quick start: jit an unchanged numpy function, show what runs, check it, time it."""

import time

import numpy as np

from astjit import explain, jit


def step(a, b, c, n):
    x = (a + 3) * 4 / 100          # three elementwise ops: one fused kernel
    y = np.tanh(x) * c + b
    if y.sum() > 0:                # control flow stays Python
        z = y * 2
    else:
        z = y - 1
    for i in range(n):             # the whole loop: one kernel call
        z = z * 0.9 + a
    return z.mean(), z


fast_step = jit(step)


def best_of(fn, *args, repeat=7):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(2_000_000).astype(np.float32) for _ in range(3))
    mean, z = fast_step(a, b, c, 10)          # first call: compiles every fragment
    ref_mean, ref_z = step(a, b, c, 10)
    print(fast_step.source)
    np.testing.assert_allclose(z, ref_z, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5)
    assert z.dtype == ref_z.dtype and z.shape == ref_z.shape and type(mean) is type(ref_mean)
    print("same results as numpy: dtype", z.dtype, "shape", z.shape)
    t_numpy, t_jit = best_of(step, a, b, c, 10), best_of(fast_step, a, b, c, 10)
    print(f"numpy {t_numpy * 1e3:.2f} ms, astjit {t_jit * 1e3:.2f} ms: {t_numpy / t_jit:.2f}x numpy "
          "(median of 7 calls, 2M float32)")
    print(explain(fast_step))


if __name__ == "__main__":
    main()
