"""Kernels run on a real GPU, with CuPy arrays or torch CUDA tensors (whichever is installed there).

These skip, with the reason, where no CUDA GPU is visible to TVM or neither library is installed:
CI and most machines. Values are compared with numpy on host copies."""

import importlib

import numpy as np
import pytest

from astjit import jit
from astjit.backends.tvm.cuda import cuda_device_exists

pytestmark = pytest.mark.gpu


def _libraries():
    found = []
    for name in ("cupy", "torch"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if name == "torch" and not module.cuda.is_available():
            continue
        found.append(name)
    return found


LIBRARIES = _libraries()
needs_gpu = pytest.mark.skipif(not cuda_device_exists() or not LIBRARIES,
                               reason="needs a CUDA GPU visible to TVM and CuPy or torch with CUDA")


def to_device(library, a):
    if library == "cupy":
        import cupy

        return cupy.asarray(a)
    import torch

    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def to_host(library, a):
    return a.get() if library == "cupy" else a.cpu().numpy()


def affine_tanh(x, y):
    return np.tanh(x * 2.0 + y) - 0.5


def row_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def clipped_energy(x):
    total = (x * x).sum()
    if total > 10.0:
        return total / 10.0
    return total


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fused_chain_runs_on_the_gpu_and_returns_the_callers_arrays(library, dtype):
    jf = jit(affine_tanh)
    rng = np.random.default_rng(0)
    for n in (17, 100_000):
        x, y = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
        got = jf(to_device(library, x), to_device(library, y))
        assert type(got).__module__.split(".")[0] == library
        host = to_host(library, got)
        want = affine_tanh(x, y)
        assert host.dtype == want.dtype and host.shape == want.shape
        np.testing.assert_allclose(host, want, rtol=2e-6 if dtype == np.float32 else 1e-14, atol=1e-7)
    assert {e.ctx.device for e in jf.fragments[0].entries} == {"cuda"}
    assert {e.mode for e in jf.fragments[0].entries} == {"tvm-cuda"}


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
def test_row_softmax_on_the_gpu(library):
    jf = jit(row_softmax)
    x = np.random.default_rng(1).standard_normal((512, 1000)).astype(np.float32)
    for scale in (1.0, 30.0):
        got = to_host(library, jf(to_device(library, x * scale)))
        np.testing.assert_allclose(got, row_softmax(x * scale), rtol=1e-5, atol=1e-7)


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
def test_a_condition_on_a_gpu_reduction_copies_only_the_scalar(library):
    jf = jit(clipped_energy)
    for scale in (0.1, 3.0):
        x = np.linspace(-1, 1, 64) * scale
        got = jf(to_device(library, x))
        want = clipped_energy(x)
        assert np.isclose(float(got), want, rtol=1e-12)


@needs_gpu
def test_device_cuda_copies_numpy_in_and_out():
    jf = jit(affine_tanh, device="cuda")
    x = np.linspace(-3, 3, 4096)
    got = jf(x, x)
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, affine_tanh(x, x), rtol=1e-14)
    assert jf.fragments[0].entries[0].mode == "tvm-cuda"
