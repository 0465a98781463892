"""CUDA code generation, without a GPU, for every op the tvm-cuda backend claims.

The CUDA backend takes what the CPU backend takes (minus ``cuda.NOT_ON_CUDA``), lowered the same way
and scheduled with dlight. Each op below is compiled in a small function on the CPU (which gives the
specialization's types and segments), then each compiled segment is generated as CUDA C. The table
(``cuda_op_samples.OPERATORS``) must name every elementwise, reduction, view and creation op of the registry: a new op without a
sample fails here.
"""

import numpy as np
import pytest
from cuda_op_samples import NOT_LOWERED, OPERATORS, claimable_ops, sample_arguments, sample_module

from astjit import jit
from astjit.backends.tvm import cuda, cuda_compile, cuda_constants


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """One jitted function per op, compiled on the CPU with TVM."""
    module, ops = sample_module(tmp_path_factory.mktemp("cuda_codegen"))
    args = sample_arguments(np.random.default_rng(0))
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
    segment the CUDA backend takes, which NVRTC compiles where it is installed (the ``cuda`` extra);
    an op whose sample the backend never takes must say why."""
    backend = cuda.TvmCudaBackend()
    compiles = cuda_compile.unavailable() is None
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
            source = module.mod.imports[0].inspect_source()
            assert "__global__" in source, op
            if compiles:
                try:
                    cuda_compile.compile_cubin(source, cuda.DEFAULT_ARCH)
                except cuda_compile.CudaCompileError as exc:
                    failed[op] = str(exc)[:300]
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


def awkward_constants(x):
    return (x * 1e-20 + 0.30000000000000004) * -0.0 + np.maximum(x, np.inf) - 1e300 * x + 2.5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_constants_reach_the_cuda_source_exactly(dtype):
    """TVM prints a float64 constant with 15 decimals (1e-20 would be 0) and a reinterpreted constant
    as ``*(int *)(&(0x1p+1f))``, which C++ rejects: the CUDA pipeline's last pass writes both as
    bit casts, so every constant is the bit pattern numpy uses."""
    jitted = jit(awkward_constants, backend="tvm")
    with np.errstate(all="ignore"):
        jitted(np.linspace(-1, 1, 8).astype(dtype))
    entry = jitted.fragments[0].entries[0]
    (segment,) = [s for s in entry.segments if not s.reference]
    module, _ = cuda.generate(entry.ctx, segment)
    source = module.mod.imports[0].inspect_source()
    assert "(&(" not in source
    if dtype == np.float64:
        for value in (1e-20, 0.30000000000000004, -0.0, 1e300, 2.5):
            assert f"(int64_t){cuda_constants.float64_bits(value)}" in source or value == -0.0, value
        assert "0.000000000000000" not in source
    reason = cuda_compile.unavailable()
    if reason is None:
        assert len(cuda_compile.compile_cubin(source, cuda.DEFAULT_ARCH)) > 0


def test_without_a_gpu_the_cuda_backend_says_why_it_is_unavailable():
    if cuda.cuda_device_exists():
        pytest.skip("a CUDA GPU is visible: the backend is available")
    reason = cuda.TvmCudaBackend().available("cuda")
    assert "no CUDA GPU" in reason


