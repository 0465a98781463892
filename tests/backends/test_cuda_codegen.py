"""CUDA code generation, without a GPU, for every op the tvm-cuda backend claims.

The CUDA backend takes what the CPU backend takes (minus ``cuda.NOT_ON_CUDA``), lowered the same way
and scheduled with dlight. Each op below is compiled in a small function on the CPU (which gives the
specialization's types and segments), then each compiled segment is generated as CUDA C. The table
must name every elementwise, reduction, view and creation op of the registry: a new op without a
sample fails here.
"""

import importlib.util

import numpy as np
import pytest

from astjit import jit
from astjit.backends.tvm import cuda
from astjit.graph.ops import OPS

CLAIMABLE = ("elementwise", "reduction", "view", "creation")
OPERATORS = {"add": "x + y", "subtract": "x - y", "multiply": "x * y", "true_divide": "x / y",
             "floor_divide": "x // y", "remainder": "x % y", "power": "x ** y", "negative": "-x",
             "positive": "+x", "abs": "abs(x)", "invert": "~i", "left_shift": "(i & 7) << 3", "np.left_shift": "np.left_shift(i & 7, 3)", "right_shift": "i >> 1",
             "bitwise_and": "i & j", "bitwise_or": "i | j", "bitwise_xor": "i ^ j", "equal": "x == y",
             "not_equal": "x != y", "less": "x < y", "less_equal": "x <= y", "greater": "x > y",
             "greater_equal": "x >= y", "astype": "x.astype(np.float32)", "clip": "x.clip(0.2, 0.7)",
             "copy": "x.copy() * 2.0", "np.clip": "np.clip(x, 0.2, 0.7)", "np.where": "np.where(b, x, y)",
             "np.copy": "np.copy(x) * 2.0",
             # reductions
             "sum": "m.sum(axis=1)", "prod": "x[:2].prod()", "mean": "m.mean(axis=0)", "max": "m.max(axis=1)",
             "min": "m.min()", "all": "b.all()", "any": "b.any()", "argmax": "x.argmax()", "argmin": "x.argmin()",
             "std": "m.std(axis=1)", "var": "m.var()", "np.sum": "np.sum(m, axis=1)", "np.prod": "np.prod(x[:2])",
             "np.mean": "np.mean(m)", "np.max": "np.max(m, axis=0)", "np.min": "np.min(x)", "np.all": "np.all(b)",
             "np.any": "np.any(b)", "np.argmax": "np.argmax(x)", "np.argmin": "np.argmin(x)",
             "np.std": "np.std(x)", "np.var": "np.var(m, axis=0)", "np.add.reduce": "np.add.reduce(m)",
             "np.multiply.reduce": "np.multiply.reduce(m[:2])", "np.maximum.reduce": "np.maximum.reduce(m)",
             "np.minimum.reduce": "np.minimum.reduce(m)",
             # views (used inside the kernel)
             "T": "(m.T * 2.0).sum(axis=1)", "getitem": "x[1:-1] * 2.0", "np.expand_dims": "np.expand_dims(x, 0) * 2.0",
             "np.ravel": "np.ravel(m) * 2.0", "np.reshape": "np.reshape(x, (2, 4)) * 2.0",
             "np.squeeze": "np.squeeze(m[:1]) * 2.0", "np.transpose": "np.transpose(m).sum(axis=0)",
             "ravel": "m.ravel() * 2.0", "reshape": "x.reshape(4, 2) * 2.0", "transpose": "(m.transpose() + 1.0).max(axis=1)",
             "np.broadcast_to": "np.broadcast_to(x, (3, 8)) * 2.0",
             # creations (a fill fused into the kernel)
             "np.empty": "np.empty(8) * 0.0 + x", "np.empty_like": "np.empty_like(x) * 0.0 + x",
             "np.full": "np.full(8, 2.5) + x", "np.full_like": "np.full_like(x, 2.5) + x",
             "np.ones": "np.ones(8) + x", "np.ones_like": "np.ones_like(x) + x", "np.zeros": "np.zeros(8) + x",
             "np.zeros_like": "np.zeros_like(x) + x"}
# ops the CPU backend has no lowering for (numpy runs them on the CPU; on a GPU their block runs as
# Python): when one gains a lowering, its CUDA code is checked here too
NOT_LOWERED = {"np.reciprocal", "np.signbit"}
INTEGER_UFUNCS = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"}
LOGICAL_UFUNCS = {"logical_and", "logical_or", "logical_xor", "logical_not"}


def sample(op: str) -> str:
    if op in OPERATORS:
        return OPERATORS[op]
    name = op.removeprefix("np.")
    arity = getattr(np, name).nin
    args = {1: ("x",), 2: ("x", "y")}[arity]
    if name in INTEGER_UFUNCS:
        args = ("i", "j")[:arity]
    if name in LOGICAL_UFUNCS:
        args = ("b", "c")[:arity]
    return f"np.{name}({', '.join(args)})"


def claimable_ops():
    return sorted(op for op, spec in OPS.items() if spec.kind in CLAIMABLE)


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """One jitted function per op, compiled on the CPU with TVM."""
    folder = tmp_path_factory.mktemp("cuda_codegen")
    ops = claimable_ops()
    lines = ["import numpy as np", ""]
    for k, op in enumerate(ops):
        lines += [f"def f{k}(x, y, m, i, j, b, c):", f"    return {sample(op)}", ""]
    path = folder / "ops_samples.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("ops_samples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(0)
    x, y = rng.random(8) + 0.1, rng.random(8) + 0.1
    args = (x, y, rng.random((3, 4)), np.arange(8, dtype=np.int32), np.arange(8, dtype=np.int32)[::-1].copy(),
            x > 0.5, y > 0.5)
    made = {}
    for k, op in enumerate(ops):
        fn = getattr(module, f"f{k}")
        jitted = jit(fn, backend="tvm")
        with np.errstate(all="ignore"):      # (arccos of values above 1: nan, as numpy gives)
            got, want = np.asarray(jitted(*args)), np.asarray(fn(*args))
        assert got.dtype == want.dtype and got.shape == want.shape, op
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True, err_msg=op)
        made[op] = [(e.ctx, s) for f in jitted.fragments for e in f.entries for s in e.segments if not s.reference]
    return made


def test_the_table_names_every_op_a_backend_could_claim():
    missing = [op for op in claimable_ops() if op not in OPERATORS and not hasattr(np, op.removeprefix("np."))]
    assert not missing, f"no CUDA codegen sample for {missing}"


@pytest.mark.slow
def test_cuda_code_is_generated_for_every_claimed_op(samples):
    """Each op's sample (in whatever spelling canonicalization gives it) generates CUDA C for every
    segment the CUDA backend takes; an op whose sample the backend never takes must say why."""
    backend = cuda.TvmCudaBackend()
    covered, declined, failed = set(), {}, {}
    for op, segments in samples.items():
        if not segments:
            declined[op] = "the CPU backend took nothing"
            continue
        taken = [(ctx, s) for ctx, s in segments if all(backend.supports(ctx, n) is None for n in s.nodes)]
        if not taken:
            declined[op] = cuda.NOT_ON_CUDA[op]
            continue
        for ctx, segment in taken:
            try:
                module, _ = cuda.generate(ctx, segment)
            except Exception as exc:
                failed[op] = str(exc)[:200]
                continue
            assert "__global__" in module.mod.imports[0].inspect_source(), op
        covered.add(op)
    assert not failed, "\n".join(f"{k}: {v}" for k, v in failed.items())
    assert set(declined) == set(cuda.NOT_ON_CUDA) | NOT_LOWERED, declined
    assert covered | set(declined) == set(claimable_ops())


def test_cuda_source_of_a_chain_and_its_reduction():
    @jit(backend="tvm")
    def chain(x, y):
        return np.tanh(x * 2.0 + y).sum(axis=1)

    chain(np.ones((4, 64), np.float32), np.ones(64, np.float32))
    entry = chain.fragments[0].entries[0]
    (segment,) = [s for s in entry.segments if not s.reference]
    module, signature = cuda.generate(entry.ctx, segment, "sm_80")
    source = module.mod.imports[0].inspect_source()
    assert source.count("__global__") >= 1 and "blockIdx.x" in source
    assert "T.thread_binding" in signature.gpu_func.script() or "threadIdx" in signature.gpu_func.script()


def test_without_a_gpu_the_cuda_backend_says_why_it_is_unavailable():
    if cuda.cuda_device_exists():
        pytest.skip("a CUDA GPU is visible: the backend is available")
    reason = cuda.TvmCudaBackend().available("cuda")
    assert "no CUDA GPU" in reason


