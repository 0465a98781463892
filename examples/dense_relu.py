"""The worked example of docs/how-it-works.md: a matmul on numpy's BLAS feeding one fused TVM kernel.

    astjit show examples/dense_relu.py:dense_relu --fragments \
        --shapes 'x=float32[64,128],w=float32[128,32],b=float32[32],scale=float' --code tir
"""

import numpy as np

from astjit import explain, jit


def dense_relu(x, w, b, scale):
    h = x @ w + b                     # matmul on numpy's BLAS, then a TVM kernel
    y = np.maximum(h, 0) * scale      # fused into the same kernel
    total = y.sum()
    if total > 0:                     # control flow stays Python
        y = y / total
    return y


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 256)).astype(np.float32)
    w = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal(512).astype(np.float32)
    fast = jit(dense_relu)
    y = fast(x, w, b, 0.5)
    np.testing.assert_allclose(y, dense_relu(x, w, b, 0.5), rtol=2e-6, atol=1e-9)
    print(fast.source)
    print(fast.cache_info())
    print(explain(fast))


if __name__ == "__main__":
    main()
