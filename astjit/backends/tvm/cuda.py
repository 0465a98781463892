"""The TVM CUDA backend: the CPU backend's lowering (the same TE function per segment), scheduled for
the GPU with dlight and compiled for TVM's CUDA target.

Code generation needs no GPU (``generate``; the tests check it for every op the backend claims).
Running needs one: TVM's CUDA runtime and a device it sees (``available``). Arrays arrive through
DLPack, zero-copy, in whatever kind the caller passed (CuPy, torch, or anything with ``__dlpack__`` on a
CUDA device); outputs are allocated on the same device and handed back as that kind. Kernels launch on
the caller's current stream (CuPy's or torch's), so no synchronization is added.
"""

import functools

from ...errors import Unsupported
from ..contract import Backend, Compiled

DEFAULT_ARCH = "sm_90"      # for code generated without a GPU (inspection, the codegen tests)
# What the CPU backend takes but this one does not, by op (the codegen tests keep this list honest):
# dlight's GPU reduction schedules need a reducer they recognize, and argmax/argmin's (value, index)
# pair is not one ("No matched reducer ... rfactor and cross-thread reduction cannot be applied").
_ARG_REASON = "argmax/argmin have no GPU reduction schedule in TVM's dlight"
NOT_ON_CUDA: dict = {op: _ARG_REASON for op in ("argmax", "argmin", "np.argmax", "np.argmin")}


class TvmCudaBackend(Backend):
    name = "tvm-cuda"
    devices = ("cuda",)

    def available(self, device):
        from . import get_backend, import_error

        if get_backend() is None:
            return f"TVM is unavailable ({import_error()})"
        if not cuda_device_exists():
            return "TVM sees no CUDA GPU (its CUDA runtime is not loaded or no device is visible)"
        return None

    def supports(self, ctx, node):
        from .support import supports

        if node.op in NOT_ON_CUDA:
            return NOT_ON_CUDA[node.op]
        return supports(ctx, node)

    def cache_key(self, device):
        from . import tvm_version

        return f"tvm-cuda {tvm_version()} {device_arch()}"

    def compile(self, ctx, segment) -> Compiled:
        module, signature = generate(ctx, segment, device_arch())
        return cuda_compiled(module, signature, ctx)


def cuda_device_exists() -> bool:
    from .runtime import tvm_module

    try:
        return bool(tvm_module().cuda(0).exist)
    except Exception:      # TVM built without CUDA, or libcuda missing
        return False


@functools.cache
def device_arch() -> str:
    """``sm_XY`` of GPU 0, or DEFAULT_ARCH where none is visible."""
    from .runtime import tvm_module

    try:
        version = tvm_module().cuda(0).compute_version
        return "sm_" + str(version).replace(".", "")
    except Exception:
        return DEFAULT_ARCH


def schedule_for_gpu(te_func, target):
    """dlight's default GPU schedules: a block per row with a cooperative reduction for reductions, the
    fallback (fused, 1024 threads per block) for the rest. An unscheduled function would compile to a
    host-only module, so a schedule that binds nothing is an error."""
    from .runtime import tvm_module

    tvm = tvm_module()
    from tvm.s_tir import dlight as dl

    mod = tvm.IRModule({"main": te_func.with_attr("global_symbol", "main")})
    with target:
        return dl.ApplyDefaultSchedule(dl.gpu.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback())(mod)


def build_for_gpu(func, arch: str = DEFAULT_ARCH):
    """(scheduled IRModule, compiled module) of a segment's unscheduled function for CUDA ``arch``,
    its parameters element-aligned (a slice of a CuPy array or torch tensor starts anywhere); no GPU
    is needed. RuntimeError where nothing was bound to GPU threads (no device module)."""
    from . import cuda_constants
    from .backend import relax_alignment
    from .cuda_compile import exact_compiler
    from .runtime import compile_module, tvm_module

    target = tvm_module().target.Target({"kind": "cuda", "arch": arch})
    scheduled = schedule_for_gpu(relax_alignment(func), target)
    with exact_compiler(arch):
        module = compile_module(scheduled, target, tir_pipeline=cuda_constants.register())
    if not module.mod.imports:
        raise RuntimeError("TVM produced no device module for this kernel (nothing was bound to GPU threads)")
    return scheduled, module


def generate(ctx, segment, arch: str = DEFAULT_ARCH):
    """(compiled module, KernelSignature) for ``segment`` on CUDA ``arch``; no GPU is needed."""
    from . import get_backend
    from .lower import SegmentLowering

    if get_backend() is None:
        raise Unsupported("TVM is unavailable")
    try:
        signature = SegmentLowering(ctx, segment).lower("main")
        scheduled, module = build_for_gpu(signature.func, arch)
    except Unsupported:
        raise
    except Exception as exc:
        raise Unsupported(f"TVM could not compile this fragment for CUDA ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    signature.te_func = signature.func
    signature.gpu_func = scheduled["main"]
    return module, signature


def cuda_source(te_func, arch: str = DEFAULT_ARCH) -> str:
    """CUDA C for a segment's TE function, scheduled as the CUDA backend schedules it."""
    return build_for_gpu(te_func, arch)[1].mod.imports[0].inspect_source()


def cuda_compiled(module, signature, ctx) -> Compiled:
    """The Compiled of a CUDA kernel: the caller's device arrays in (DLPack, zero-copy), arrays of the
    caller's kind out; a numpy scalar result comes back as a 0-d array on the device, as CuPy and torch
    give it. Under ``@jit(device="cuda")`` numpy arrays are copied in and results copied out."""
    from .device_call import DeviceCall

    kernel = module["main"]
    call = DeviceCall(kernel, signature.inputs, [(shape, dtype) for shape, dtype, _ in signature.outputs],
                      [t.scalar or t.shape == () for _, _, t in signature.outputs], ctx.placement)
    source = module.mod.imports[0].inspect_source
    compiled = Compiled(call, "tvm-cuda kernel (dlight GPU schedule)",
                        artifacts={"tir": signature.gpu_func.script, "cuda": source})
    compiled.module = module
    return compiled
