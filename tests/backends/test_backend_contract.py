"""A third backend, written here against the public contract alone (astjit.backends), registered,
handed the subgraphs it claims, and running them; plus the registry's rules and errors."""

import numpy as np
import pytest

import astjit
from astjit import backends, jit
from astjit.backends import Backend, Compiled
from astjit.graph.types import ArrayType, Static, WeakScalar
from astjit.inspection.codegen import kernel_code
from astjit.inspection.text import render_function

UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "true_divide": np.true_divide,
          "negative": np.negative, "np.exp": np.exp, "np.sqrt": np.sqrt, "np.tanh": np.tanh, "np.log": np.log}


class UfuncChainBackend(Backend):
    """Runs chains of float ufuncs with numpy, each step written into a buffer it reuses when a
    temporary dies (``out=``): fewer allocations than the block's Python, the same values."""

    name = "ufunc-chain"
    devices = ("cpu",)

    def __init__(self):
        self.received = []            # the op names of each segment it compiled

    def supports(self, ctx, node):
        if node.op not in UFUNCS:
            return f"{node.op} is not one of its ufuncs"
        t = ctx.types[node]
        if not isinstance(t, ArrayType) or t.scalar or t.dtype.kind != "f":
            return "it runs float arrays only"
        for o in node.operands:
            ot = ctx.types[o]
            if isinstance(ot, ArrayType) and (ot.scalar or ot.dtype != t.dtype or ot.shape != t.shape):
                return "operands must be arrays of the result's dtype and shape"
            if not isinstance(ot, ArrayType | Static | WeakScalar):
                return "unknown operand"
        return None

    def compile(self, ctx, segment):
        self.received.append([n.op for n in segment.nodes])
        slot = {n: k for k, n in enumerate(segment.inputs)}
        for n in segment.nodes:
            slot[n] = len(slot)
        last_use = {}
        for k, n in enumerate(segment.nodes):
            for o in n.operands:
                last_use[o] = k
        keep = set(segment.outputs) | set(segment.inputs)
        steps = []
        for k, n in enumerate(segment.nodes):
            args = [("value", ctx.types[o].value) if isinstance(ctx.types[o], Static) else ("slot", slot[o])
                    for o in n.operands]
            reuse = next((slot[o] for o in n.operands if o in slot and o not in keep and last_use[o] == k
                          and isinstance(ctx.types[o], ArrayType)), None)
            steps.append((UFUNCS[n.op], args, slot[n], reuse))
        outs = [slot[n] for n in segment.outputs]

        def run(*inputs):
            values = list(inputs) + [None] * len(segment.nodes)
            for ufunc, args, target, reuse in steps:
                operands = [v if kind == "value" else values[v] for kind, v in args]
                values[target] = ufunc(*operands) if reuse is None else ufunc(*operands, out=values[reuse])
            return tuple(values[s] for s in outs)

        plan = "\n".join(f"{u.__name__}{' (in place)' if r is not None else ''}" for u, _, _, r in steps)
        return Compiled(run, f"ufunc chain of {len(steps)}", artifacts={"plan": lambda: plan})


@pytest.fixture
def chain_backend():
    backend = backends.register(UfuncChainBackend())
    yield backend
    backends.unregister(backend)


def affine_exp(x, y):
    return np.exp(x) * y + 1.0


def with_reduction(x, i):
    s = i.sum()
    return np.tanh(x) - 0.5 * x, s


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (1000,)])
def test_a_registered_backend_receives_the_subgraphs_it_claims_and_runs_them(chain_backend, dtype, shape):
    jf = jit(affine_exp, backend="ufunc-chain")
    rng = np.random.default_rng(1)
    for scale in (1.0, -3.0, 0.25):                     # several calls, other values
        x, y = (rng.standard_normal(shape) * scale).astype(dtype), rng.standard_normal(shape).astype(dtype)
        got, want = jf(x, y), affine_exp(x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert chain_backend.received[-1] == ["np.exp", "multiply", "add"]
    entry = jf.fragments[0].entries[-1]
    assert entry.mode == "ufunc-chain"
    (segment,) = entry.segments
    assert segment.backend == "ufunc-chain" and segment.description == "ufunc chain of 3"
    assert kernel_code(segment, "plan") == "exp\nmultiply (in place)\nadd (in place)"
    assert "subgraph 0: ufunc chain of 3" in render_function(jf, fragments=True)


def test_the_registered_backend_is_asked_first_and_the_others_take_the_rest(chain_backend):
    jf = jit(with_reduction)
    x, i = np.linspace(-2, 2, 50), np.arange(50, dtype=np.int64)
    for shift in (0.0, 1.5):
        got, want = jf(x + shift, i), with_reduction(x + shift, i)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
        assert got[1] == want[1] and type(got[1]) is type(want[1])
    entry = jf.fragments[0].entries[0]
    owners = {n.op: s.backend for s in entry.segments for n in s.nodes}
    assert owners["np.tanh"] == "ufunc-chain" and owners["subtract"] == "ufunc-chain"
    assert owners["np.sum"] in ("tvm", "numpy")          # not claimed: the next backend in the list


def test_registering_and_unregistering_respecializes_functions_already_compiled():
    jf = jit(affine_exp, backend=None)
    x = np.linspace(0, 1, 4096)
    np.testing.assert_allclose(jf(x, x), affine_exp(x, x), rtol=1e-15)
    assert jf.fragments[0].entries[0].segments[0].backend == "tvm"
    backend = backends.register(UfuncChainBackend())
    try:
        np.testing.assert_array_equal(jf(x, x), affine_exp(x, x))
        assert jf.fragments[0].entries[0].segments[0].backend == "ufunc-chain"
        assert backends.registered("cpu")[0] is backend and backends.registered("cpu")[-1].name == "numpy"
    finally:
        backends.unregister("ufunc-chain")
    jf(x, x)
    assert jf.fragments[0].entries[0].segments[0].backend == "tvm"
    assert all(b.name != "ufunc-chain" for b in backends.registered("cpu"))


class FailingBackend(UfuncChainBackend):
    name = "failing"

    def compile(self, ctx, segment):
        raise RuntimeError("out of registers")


class RaisingSupports(UfuncChainBackend):
    name = "raising"

    def supports(self, ctx, node):
        raise KeyError(node.op)


def test_a_backend_that_fails_to_compile_hands_its_part_to_numpy_and_says_so():
    backend = backends.register(FailingBackend())
    try:
        jf = jit(affine_exp, backend="failing")
        x = np.linspace(0, 1, 10)
        np.testing.assert_allclose(jf(x, x), affine_exp(x, x), rtol=1e-15)
        text = str(astjit.explain(jf))
        assert "backend failing failed to compile this part (RuntimeError: out of registers)" in text
        with pytest.raises(astjit.StrictModeError, match="out of registers"):
            jit(affine_exp, backend="failing", strict=True)(x, x)
    finally:
        backends.unregister(backend)


class CrashingKernel(UfuncChainBackend):
    """Compiles, but its code raises at every run (a backend's bug)."""

    name = "crashing"

    def __init__(self):
        super().__init__()
        self.runs = 0

    def compile(self, ctx, segment):
        def run(*inputs):
            self.runs += 1
            raise RuntimeError("kernel crashed")
        return Compiled(run, "crashing kernel")


@pytest.mark.parametrize("backend", ["crashing", None], ids=["backend=crashing", "auto, measured"])
def test_compiled_code_that_raises_is_recorded_and_not_run_again(backend):
    crashing = backends.register(CrashingKernel())
    try:
        jf = jit(affine_exp, backend=backend)
        x = np.linspace(0, 1, 10)
        for _ in range(4):
            np.testing.assert_array_equal(jf(x, x), affine_exp(x, x))
        runs = crashing.runs
        assert runs >= 1
        for _ in range(3):
            np.testing.assert_array_equal(jf(x, x), affine_exp(x, x))
        assert crashing.runs == runs                 # not tried again for these types
        text = str(astjit.explain(jf))
        assert "the compiled code (crashing kernel) raised RuntimeError: kernel crashed: the block runs as " \
               "Python (for x=float64[10], y=float64[10])" in text
        assert text.count("kernel crashed") == 1
        [entry] = jf.cache_info()["__astjit_fragment_0"]
        assert entry["runs"] == "python"
        assert "its compiled code raised at a call: runs as Python" in render_function(jf)
        assert "beat the compiled" not in text       # (not timed against Python: it did not run)
    finally:
        backends.unregister(crashing)


def test_a_backend_whose_supports_raises_declines_with_the_error_as_reason():
    backends.register(RaisingSupports())
    try:
        jf = jit(affine_exp)
        x = np.linspace(0, 1, 10)
        np.testing.assert_allclose(jf(x, x), affine_exp(x, x), rtol=1e-15)     # TVM's exp: within 1 ulp
        entry = jf.fragments[0].entries[0]
        assert {s.backend for s in entry.segments} <= {"tvm", "numpy"}
    finally:
        backends.unregister("raising")


class Incomplete:
    name = "incomplete"
    devices = ("cpu",)


class OnTpu(UfuncChainBackend):
    name = "tpu"
    devices = ("tpu",)


@pytest.mark.parametrize("bad, error, match", [
    (Incomplete(), TypeError, "needs supports, compile"),
    (OnTpu(), ValueError, "devices must be a tuple of cpu, cuda"),
    (type("Named", (UfuncChainBackend,), {"name": "tvm"})(), ValueError, "'tvm' is already registered"),
    (type("Auto", (UfuncChainBackend,), {"name": "auto"})(), ValueError, "other than auto"),
])
def test_registering_a_backend_that_breaks_the_contract_is_a_clear_error(bad, error, match):
    with pytest.raises(error, match=match):
        backends.register(bad)
    assert all(b is not bad for b in backends.registered("cpu"))


def test_unknown_names_are_clear_errors():
    with pytest.raises(ValueError, match="no registered backend 'nothing'"):
        backends.unregister("nothing")
    with pytest.raises(ValueError, match="backend must be one of"):
        jit(affine_exp, backend="nothing")
    with pytest.raises(ValueError, match="device must be one of cpu, cuda"):
        backends.registered("tpu")


def test_builtin_order_per_device():
    assert [b.name for b in backends.registered("cpu")] == ["tvm", "numpy"]
    assert [b.name for b in backends.registered("cuda")] == ["tvm-cuda", "cupy"]
    assert backends.by_name("numpy").reference and not backends.by_name("tvm").reference


def test_astjit_backend_names_a_registered_backend(chain_backend, monkeypatch):
    monkeypatch.setenv("ASTJIT_BACKEND", "ufunc-chain")
    jf = jit(affine_exp)
    x = np.linspace(0, 2, 33, dtype=np.float32)
    np.testing.assert_array_equal(jf(x, x), affine_exp(x, x))
    assert jf.fragments[0].entries[0].mode == "ufunc-chain"
    monkeypatch.setenv("ASTJIT_BACKEND", "no-such-backend")
    with pytest.raises(ValueError, match="ASTJIT_BACKEND must be one of"):
        jit(affine_exp)(x, x)


def test_the_cupy_backend_takes_nodes_only_for_cupy_arrays(monkeypatch):
    """It runs numpy's functions on the call's arrays, which works for CuPy's (their numpy protocols)
    and not for torch tensors or numpy arrays copied to a GPU."""
    import importlib.util
    from types import SimpleNamespace

    from astjit.backends.cupy_backend import CupyBackend
    from astjit.devices import Placement

    backend = CupyBackend()
    assert backend.devices == ("cuda",) and not backend.reference
    assert backend.supports(SimpleNamespace(placement=Placement("cuda", 0, "cupy")), None) is None
    for library in ("torch", "numpy"):
        reason = backend.supports(SimpleNamespace(placement=Placement("cuda", 0, library)), None)
        assert reason == f"the arrays are {library}'s, not CuPy's"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cupy" else real(name, *a))
    assert backend.available("cuda") == "CuPy is not installed"


def test_a_block_whose_every_part_failed_to_compile_runs_its_python():
    """Where every part of a block is handed to numpy after its backend failed, the block's own Python
    runs (the same numpy calls without the reference interpreter's cost), and explain says why."""
    backend = backends.register(FailingBackend())
    try:
        jf = jit(affine_exp)
        for n in (10, 3, 10):
            x = np.linspace(0, 1, n)
            np.testing.assert_array_equal(jf(x, x), affine_exp(x, x))
        modes = {e.mode for f in jf.fragments for e in f.entries}
        assert modes == {"python"}, modes
        assert "out of registers" in str(astjit.explain(jf))
    finally:
        backends.unregister(backend)
