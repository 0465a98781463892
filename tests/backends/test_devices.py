"""The device flows from the arguments: an array on a CUDA device (anything with ``__dlpack__`` there)
is keyed, inferred and placed on ``cuda``, whose backends run the block; mixing devices is an error
at the user's line. Without a GPU this is checked with a stand-in array that reports a CUDA device
and a backend registered for ``cuda`` (GPU runs of the real backend: test_cuda_device.py)."""

import numpy as np
import pytest

import astjit
from astjit import backends, jit
from astjit.backends import Backend, Compiled
from astjit.backends.tvm.cuda import TvmCudaBackend
from astjit.graph.types import ArrayType, Static, WeakScalar
from astjit.inspection.text import render_function
from astjit.runtime.keys import describe_key

UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "np.exp": np.exp, "np.tanh": np.tanh}


class FakeCudaArray(np.lib.mixins.NDArrayOperatorsMixin):
    """Stands in for a CuPy array: numpy data, reported on CUDA device 0 through DLPack; numpy
    functions on it return FakeCudaArrays (as CuPy's do), and numpy arrays mixed in are refused."""

    def __init__(self, data):
        self.data = np.asarray(data)

    dtype = property(lambda self: self.data.dtype)
    shape = property(lambda self: self.data.shape)
    ndim = property(lambda self: self.data.ndim)

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise BufferError("a stand-in has no GPU memory")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(type(i) is np.ndarray for i in inputs):
            raise TypeError("Unsupported type <class 'numpy.ndarray'>")
        raw = [i.data if isinstance(i, FakeCudaArray) else i for i in inputs]
        return FakeCudaArray(getattr(ufunc, method)(*raw, **kwargs))

    def sum(self, *args, **kwargs):
        return FakeCudaArray(self.data.sum(*args, **kwargs))

    def get(self):
        return self.data


class FakeGpuBackend(Backend):
    """Runs float ufunc chains for the ``cuda`` device on the stand-in arrays."""

    name = "fake-gpu"
    devices = ("cuda",)

    def __init__(self):
        self.placements = []

    def supports(self, ctx, node):
        if node.op not in UFUNCS:
            return f"{node.op} is not one of its ufuncs"
        t = ctx.types[node]
        if not isinstance(t, ArrayType) or t.dtype.kind != "f":
            return "float arrays only"
        if not all(isinstance(ctx.types[o], ArrayType | Static | WeakScalar) for o in node.operands):
            return "unknown operand"
        return None

    def compile(self, ctx, segment):
        place = ctx.placement
        self.placements.append(place)
        position = {n: k for k, n in enumerate(segment.inputs)}

        def run(*inputs):
            values = {n: (v.data if isinstance(v, FakeCudaArray) else v) for n, v in zip(segment.inputs, inputs)}
            for n in segment.nodes:
                args = [ctx.types[o].value if isinstance(ctx.types[o], Static) else values[o] for o in n.operands]
                values[n] = UFUNCS[n.op](*args)
            wrap = (lambda a: a) if place.copies else FakeCudaArray
            return tuple(wrap(values[n]) for n in segment.outputs)

        assert len(position) == len(segment.inputs)
        return Compiled(run, "fake gpu chain")


@pytest.fixture
def fake_gpu(monkeypatch):
    # the stand-in is the only backend on cuda, also where a real GPU makes tvm-cuda available
    monkeypatch.setattr(TvmCudaBackend, "available", lambda self, device: "hidden by this test")
    backend = backends.register(FakeGpuBackend())
    yield backend
    backends.unregister(backend)


def scaled_tanh(x, y):
    z = np.tanh(x) * 2.0 + y
    return z


def chain_and_sum(x):
    z = np.exp(x) - 1.0
    return z.sum()


def test_arrays_on_a_cuda_device_run_on_that_devices_backend(fake_gpu):
    jf = jit(scaled_tanh)
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        for n in (5, 300):
            x, y = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
            got = jf(FakeCudaArray(x), FakeCudaArray(y))
            assert type(got) is FakeCudaArray                          # the caller's kind of array
            want = scaled_tanh(x, y)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.data, want)
    entries = jf.fragments[0].entries
    assert {e.ctx.device for e in entries} == {"cuda"} and {e.mode for e in entries} == {"fake-gpu"}
    assert fake_gpu.placements[0].device == "cuda" and not fake_gpu.placements[0].copies
    assert "on cuda:0" in describe_key(jf.fragments[0].live_in, entries[0].key)
    assert "on cuda:0" in render_function(jf, fragments=True)
    x = rng.standard_normal(64)                                       # numpy: the CPU's backends
    np.testing.assert_allclose(jf(x, x), scaled_tanh(x, x), rtol=1e-15)
    assert jf.fragments[0].entries[-1].ctx.device == "cpu"


def test_a_block_no_gpu_backend_runs_entirely_stays_python_on_the_device(fake_gpu):
    jf = jit(chain_and_sum)
    x = np.linspace(-1, 1, 50)
    got = jf(FakeCudaArray(x))                     # np.sum has no backend on cuda: no numpy fallback there
    assert type(got) is FakeCudaArray and np.isclose(got.data, chain_and_sum(x), rtol=1e-15)
    assert "no backend for cuda runs np.sum" in str(astjit.explain(jf))


def test_mixing_devices_in_one_call_is_an_error_at_the_users_line(fake_gpu):
    jf = jit(scaled_tanh)
    x = np.ones(4)
    with pytest.raises(astjit.DeviceError) as info:
        jf(FakeCudaArray(x), x)
    message = str(info.value)
    assert __file__ in message and "z = np.tanh(x) * 2.0 + y" in message
    assert "'x' on cuda:0" in message and "'y' in host memory (numpy)" in message
    assert info.value.lineno == scaled_tanh.__code__.co_firstlineno + 1
    with pytest.raises(astjit.DeviceError, match="jitted with device='cpu'"):
        jit(scaled_tanh, device="cpu")(FakeCudaArray(x), FakeCudaArray(x))


def test_device_cuda_copies_numpy_arrays_to_the_devices_backend(fake_gpu):
    jf = jit(scaled_tanh, device="cuda")
    x = np.linspace(0, 1, 16)
    got = jf(x, x)
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, scaled_tanh(x, x))
    assert fake_gpu.placements[-1].copies and jf.fragments[0].entries[0].mode == "fake-gpu"


def test_device_cuda_without_a_gpu_runs_the_python_and_says_why():
    from astjit.backends.tvm.cuda import cuda_device_exists

    if cuda_device_exists():
        pytest.skip("a CUDA GPU is visible")
    jf = jit(scaled_tanh, device="cuda")
    x = np.linspace(0, 1, 16)
    for scale in (1.0, 2.0):
        np.testing.assert_array_equal(jf(x * scale, x), scaled_tanh(x * scale, x))
    text = str(astjit.explain(jf))
    assert "backend tvm-cuda is skipped: TVM sees no CUDA GPU" in text


def test_device_is_checked_when_decorating():
    with pytest.raises(ValueError, match="device must be None, 'cpu' or 'cuda'"):
        jit(scaled_tanh, device="gpu")
