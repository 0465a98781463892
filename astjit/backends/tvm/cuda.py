"""The TVM CUDA backend: the CPU backend's lowering (the same TE function per segment), scheduled for
the GPU with dlight and compiled for TVM's CUDA target, through a pipeline whose last pass writes
constants exactly (``cuda_constants``) and a compiler without fast math (``cuda_compile``).

Code generation needs no GPU (``generate``; the tests check it for every op the backend claims, and
compile it where NVRTC is installed). Running needs one: TVM's CUDA runtime and a device it sees
(``available``). Arrays arrive in whatever kind the caller passed (CuPy, torch, or anything with
``__dlpack__`` on a CUDA device), zero-copy; outputs are allocated on the same device and handed back
as that kind (``device_call``). Kernels launch on the caller's current stream (CuPy's or torch's), so
no synchronization is added. A compiled module holds its cubin, so the disk cache keeps it (``load``).
"""

import functools
import importlib.util

import numpy as np

from ...errors import CompileFailed, Unsupported
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
        """Cheap (no ``import tvm``): a kernel from the disk cache needs only TVM's CUDA runtime."""
        from . import import_error

        if import_error() is not None:
            return f"TVM is unavailable ({import_error()})"
        if importlib.util.find_spec("tvm") is None:
            return "TVM is not installed"
        if not cuda_device_exists():
            return "TVM sees no CUDA GPU (its CUDA runtime is not loaded or no device is visible)"
        return None

    def supports(self, ctx, node):
        from . import get_backend, import_error

        if get_backend() is None:
            return f"TVM is unavailable ({import_error()})"
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

    def load(self, ctx, segment, meta, libraries) -> Compiled:
        """A kernel from the disk cache: its module holds the compiled cubin, so neither TVM's compiler
        nor NVRTC runs; its TIR and CUDA C are made again on demand."""
        from .loader import cuda_runtime, load_kernel

        if cuda_runtime() is None:
            raise RuntimeError("TVM's CUDA runtime does not load")
        module, kernel = load_kernel(libraries[0])
        compiled = _device_compiled(kernel, meta["input_kinds"], meta["allocs"], meta["zero_d"], ctx,
                                    segment.description)

        @functools.cache
        def regenerated():
            return generate(ctx, segment, device_arch())

        compiled.artifacts = {"tir": lambda: regenerated()[1].gpu_func.script(),
                              "cuda": lambda: regenerated()[0].mod.imports[0].inspect_source()}
        compiled.module = module
        return compiled


def cuda_device_exists() -> bool:
    """Whether TVM's CUDA runtime sees GPU 0 (asked without importing TVM's compiler)."""
    from .loader import cuda_attribute

    try:
        return bool(cuda_attribute(0, 0))
    except Exception:      # a TVM without its CUDA runtime
        return False


@functools.cache
def device_arch() -> str:
    """``sm_XY`` of GPU 0, or DEFAULT_ARCH where none is visible."""
    from .loader import cuda_attribute

    try:
        version = cuda_attribute(0, 4) if cuda_device_exists() else None
    except Exception:
        version = None
    return "sm_" + str(version).replace(".", "") if version else DEFAULT_ARCH


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
        raise CompileFailed(f"TVM could not compile this fragment for CUDA ({type(exc).__name__}: "
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
    give it. Under ``@jit(device="cuda")`` numpy arrays are copied in and results copied out. The
    module holds the cubin (compiled while TVM built it), so the disk cache can keep it."""
    from ..contract import Persisted

    allocs = [[list(shape), np.dtype(dtype).str] for shape, dtype, _ in signature.outputs]
    zero_d = [t.scalar or t.shape == () for _, _, t in signature.outputs]
    compiled = _device_compiled(module["main"], signature.inputs, allocs, zero_d, ctx,
                                "tvm-cuda kernel (dlight GPU schedule)")
    compiled.artifacts = {"tir": signature.gpu_func.script, "cuda": module.mod.imports[0].inspect_source}
    compiled.persist = Persisted([module], {"input_kinds": list(signature.inputs), "allocs": allocs,
                                            "zero_d": zero_d})
    compiled.module = module
    return compiled


def _device_compiled(kernel, input_kinds, allocs, zero_d, ctx, description) -> Compiled:
    from .device_call import DeviceCall

    call = DeviceCall(kernel, input_kinds, [(tuple(shape), np.dtype(dtype)) for shape, dtype in allocs],
                      list(zero_d), ctx.placement)
    return Compiled(call, description)
