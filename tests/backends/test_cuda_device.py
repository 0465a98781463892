"""Kernels run on a real GPU, with CuPy arrays or torch CUDA tensors (whichever is installed there).

These skip, with the reason, where no CUDA GPU is visible to TVM or neither library is installed:
CI and most machines. Values are compared with numpy on host copies."""

import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from cuda_op_samples import NOT_LOWERED, WRAPPING_ON_GPU, claimable_ops, sample_arguments, sample_module

from astjit import explain, jit
from astjit.backends.tvm import cuda
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
        # tanh(...) - 0.5 cancels: its error is a few ulps of 0.5, whatever the result's size
        np.testing.assert_allclose(host, want, rtol=2e-6 if dtype == np.float32 else 1e-14,
                                   atol=4 * 0.5 * np.finfo(dtype).eps, err_msg=str(explain(jf)))
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
    np.testing.assert_allclose(got, affine_tanh(x, x), rtol=1e-14, atol=4 * 0.5 * np.finfo(float).eps)
    assert jf.fragments[0].entries[0].mode == "tvm-cuda", str(explain(jf))


def modes(jitted):
    return {e.mode for f in jitted.fragments for e in f.entries}


@pytest.fixture(scope="module")
def op_samples(tmp_path_factory):
    return sample_module(tmp_path_factory.mktemp("gpu_ops"))


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", claimable_ops())
def test_every_claimed_op_runs_on_the_gpu_like_numpy(op, dtype, library, op_samples):
    """Each op the CUDA backend claims (one small function per op, cuda_op_samples) runs as a tvm-cuda
    kernel on the caller's arrays and gives numpy's dtype, shape and values; the ops it declines run
    as the original Python on the same arrays."""
    module, ops = op_samples
    fn = getattr(module, f"f{ops.index(op)}")
    host = [a.astype(dtype) if a.dtype == np.float64 else a for a in sample_arguments(np.random.default_rng(3))]
    jitted = jit(fn)
    device = [to_device(library, a) for a in host]
    if op in set(cuda.NOT_ON_CUDA) | NOT_LOWERED | WRAPPING_ON_GPU:   # the original runs, on the caller's library
        try:
            want = fn(*device)
        except Exception as exc:
            with pytest.raises(type(exc)):
                jitted(*device)
        else:
            got = jitted(*device)
            np.testing.assert_array_equal(to_host(library, got), to_host(library, want))
        assert "tvm-cuda" not in modes(jitted)
        return
    with np.errstate(all="ignore"):
        want = np.asarray(fn(*host))
        got = jitted(*device)
    assert modes(jitted) == {"tvm-cuda"}, str(explain(jitted))
    got = np.asarray(to_host(library, got))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    tolerance = 1e-13 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=0, equal_nan=True)


def strided_mix(x, m):
    return np.sqrt(m[:, ::2] * 2.0 + x[1::3]) - m.T[::2].sum(axis=0)


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
def test_strided_and_transposed_device_views(library):
    """Slices and transposes of device arrays (DLPack with strides) give numpy's results."""
    jf = jit(strided_mix)
    rng = np.random.default_rng(4)
    for rows in (6, 40):
        m = rng.random((rows, 2 * rows))
        x = rng.random(3 * rows)
        dm, dx = to_device(library, m), to_device(library, x)
        for args_host, args_dev in (((x, m), (dx, dm)),
                                    ((x[1:], m[:, 1:]), (dx[1:], dm[:, 1:]))):
            want = strided_mix(*args_host)
            got = to_host(library, jf(*args_dev))
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=str(explain(jf)))
    assert modes(jf) == {"tvm-cuda"}, str(explain(jf))


def scaled(x, a):
    return x * a + 1.0


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
def test_scalar_arguments_change_between_calls(library):
    jf = jit(scaled)
    x = np.linspace(-2, 2, 1000).astype(np.float32)
    dx = to_device(library, x)
    for a in (2.0, 3, np.float32(0.5), -1.5, np.float64(7.25)):
        want = scaled(x, a)
        got = to_host(library, jf(dx, a))
        assert got.dtype == want.dtype, (a, str(explain(jf)))
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert modes(jf) == {"tvm-cuda"}, str(explain(jf))


def special(x):
    return np.maximum(x, 0.0) * -1.0 + np.sqrt(x) / x


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
def test_nan_inf_and_negative_zero_on_the_gpu(library):
    jf = jit(special)
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -1.0, 2.0, 1e-300, 4.0] * 3)
    with np.errstate(all="ignore"):
        want = special(x)
    got = to_host(library, jf(to_device(library, x)))
    np.testing.assert_array_equal(got, want, err_msg=str(explain(jf)))
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert modes(jf) == {"tvm-cuda"}, str(explain(jf))


@needs_gpu
def test_a_kernel_waits_for_work_queued_on_the_callers_torch_stream():
    torch = pytest.importorskip("torch")
    jf = jit(affine_tanh)
    stream = torch.cuda.Stream()
    x = torch.zeros(1 << 22, device="cuda")
    with torch.cuda.stream(stream):
        big = torch.randn(2048, 2048, device="cuda")
        for _ in range(20):                       # keeps the stream busy before x is filled
            big = big @ big / 2048.0
        x.fill_(0.25)
        got = jf(x, x)
        stream.synchronize()
    np.testing.assert_allclose(got.cpu().numpy(), affine_tanh(np.float32(0.25), np.float32(0.25)), rtol=1e-6)
    assert modes(jf) == {"tvm-cuda"}, str(explain(jf))


@needs_gpu
@pytest.mark.parametrize("library", LIBRARIES)
def test_mixing_a_device_array_with_a_numpy_array_is_an_error(library):
    jf = jit(affine_tanh)
    with pytest.raises(ValueError, match="different devices"):
        jf(to_device(library, np.ones(4)), np.ones(4))


GPU_PROGRAM = textwrap.dedent("""\
    import sys, time
    start = time.perf_counter()
    import numpy as np
    import {library} as lib
    from astjit import jit

    @jit
    def layernorm(x):
        mean = x.mean(axis=1, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axis=1, keepdims=True)
        return centered / np.sqrt(var + 1e-5)

    host = np.random.default_rng(int(sys.argv[1])).standard_normal((64, 300)).astype(np.float32)
    x = lib.asarray(host) if "{library}" == "cupy" else lib.from_numpy(host).cuda()
    got = layernorm(x)
    back = got.get() if "{library}" == "cupy" else got.cpu().numpy()
    mean = host.mean(axis=1, keepdims=True)
    want = (host - mean) / np.sqrt(((host - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    assert np.allclose(back, want, rtol=1e-5, atol=1e-6), "wrong result"
    segments = [s for e in layernorm.fragments[0].entries for s in e.segments if not s.reference]
    loaded = all("disk cache" in s.description for s in segments) and bool(segments)
    print("tvm imported" if "tvm" in sys.modules else "no tvm", "loaded" if loaded else "compiled",
          f"{{time.perf_counter() - start:.2f}}")
    """)


@needs_gpu
def test_a_new_process_runs_gpu_kernels_from_the_disk_cache_without_the_compiler(tmp_path):
    """The CUDA module keeps its cubin: a second process loads it with TVM's runtime alone (no
    ``import tvm``, no NVRTC)."""
    library = LIBRARIES[0]
    script = tmp_path / "program.py"
    script.write_text(GPU_PROGRAM.format(library=library))
    env = dict(os.environ, ASTJIT_CACHE="1", ASTJIT_CACHE_DIR=str(tmp_path / "cache"))

    def run(seed):
        done = subprocess.run([sys.executable, str(script), seed], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split()

    first, second = run("1"), run("2")
    assert first[:2] == ["tvm", "imported"] and first[2] == "compiled", first
    assert second[:3] == ["no", "tvm", "loaded"], second
    print(f"first call in a new process with {library}: {first[-1]} s cold, {second[-1]} s from the disk cache")


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0.0)


@needs_gpu
def test_a_matmul_on_cupy_arrays_runs_in_cupy_and_its_epilogue_in_a_kernel():
    cupy = pytest.importorskip("cupy")
    jf = jit(dense_relu)
    rng = np.random.default_rng(6)
    for n, dtype in ((64, np.float64), (256, np.float32), (100, np.float32)):
        x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((n, n), (n, n), n))
        got = jf(cupy.asarray(x), cupy.asarray(w), cupy.asarray(b))
        assert type(got) is cupy.ndarray and got.dtype == dtype
        np.testing.assert_allclose(got.get(), dense_relu(x, w, b), rtol=1e-4 if dtype == np.float32 else 1e-12,
                                   atol=1e-4 if dtype == np.float32 else 1e-12)
    backends = {s.backend for e in jf.fragments[0].entries for s in e.segments}
    assert backends == {"cupy", "tvm-cuda"}, str(explain(jf))
