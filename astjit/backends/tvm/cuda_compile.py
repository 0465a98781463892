"""CUDA C to a cubin with numpy's floating-point semantics.

On a machine with a GPU, ``tvm.compile`` for CUDA hands the generated source to the global callback
``tvm_callback_cuda_compile`` while it builds the module. TVM's own callback compiles with
``--use_fast_math``: denormals flushed to zero, approximate division and square root, fast
``expf``/``tanhf`` intrinsics (float32 ``tanh`` off by 2e-5 relative) and fused multiply-adds, so a
kernel would disagree with numpy. ``exact_compiler`` puts this module's callback in place for the
duration of one build (under a lock: the callback is process-wide), compiling with IEEE division and
square root, denormals kept and no contraction into FMA (numpy rounds the product and the sum
separately).

NVRTC (``cuda-bindings``; ``pip install 'astjit[cuda]'`` brings it with the CUDA headers) is used
where present, ``nvcc`` otherwise; the headers come from ``CUDA_PATH``, the folder above ``nvcc``, or
NVIDIA's header wheels (``nvidia/cu13``).
"""

import contextlib
import glob
import importlib.util
import os
import shutil
import subprocess
import tempfile
import threading

CALLBACK = "tvm_callback_cuda_compile"
EXACT_FLAGS = ("--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true")
# NVRTC has no host <math.h>: INFINITY and NAN (which TVM's generated code may name) come from libcu++.
PREAMBLE = """#include <cuda/std/limits>
#ifndef INFINITY
#define INFINITY (::cuda::std::numeric_limits<float>::infinity())
#endif
#ifndef NAN
#define NAN (::cuda::std::numeric_limits<float>::quiet_NaN())
#endif
"""
# vector_types.h uses these without defining them in every include chain NVRTC takes
SILENCE_MACROS = ("__NV_SILENCE_DEPRECATION_BEGIN", "__NV_SILENCE_DEPRECATION_END",
                  "__NV_SILENCE_HOST_DEPRECATION_BEGIN", "__NV_SILENCE_HOST_DEPRECATION_END")

_lock = threading.RLock()


class CudaCompileError(RuntimeError):
    """NVRTC or nvcc rejected a kernel; the message holds the compiler's first error lines."""


def cuda_root() -> str | None:
    """The CUDA folder whose ``include`` holds ``cuda_runtime.h``: ``CUDA_PATH``, else the one above
    the real ``nvcc``, else that of NVIDIA's pip wheels (``nvidia/cu13``)."""
    candidates = [os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    spec = importlib.util.find_spec("nvidia")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        candidates += [os.path.join(folder, version) for version in ("cu13", "cu12")]
    return next((c for c in candidates if c and os.path.isfile(os.path.join(c, "include", "cuda_runtime.h"))), None)


NO_COMPILER = "neither NVRTC (pip install 'astjit[cuda]') nor nvcc is installed"


def _has_nvrtc() -> bool:
    """Whether cuda-bindings' NVRTC module is installed (found without importing it)."""
    try:
        return importlib.util.find_spec("cuda.bindings.nvrtc") is not None
    except ImportError:           # no ``cuda`` package at all
        return False


def unavailable() -> str | None:
    """Why no CUDA kernel can be compiled here (no NVRTC or nvcc, no CUDA headers), or None."""
    if not _has_nvrtc():
        return NO_COMPILER if shutil.which("nvcc") is None else None
    if cuda_root() is None:
        return "NVRTC found no CUDA headers (set CUDA_PATH, or pip install 'astjit[cuda]')"
    return None


def include_folders(root: str | None) -> list:
    """The header folders NVRTC needs: the toolkit's include, its target include, and CCCL's (libcu++,
    for ``cuda/std/cstdint``) below either."""
    if root is None:
        return []
    bases = [os.path.join(root, "include"), *sorted(glob.glob(os.path.join(root, "targets", "*", "include")))]
    found = [p for b in bases for p in (b, os.path.join(b, "cccl")) if os.path.isdir(p)]
    return list(dict.fromkeys(found))


def _first_errors(log: str, limit: int = 3) -> str:
    lines = [line.strip() for line in log.splitlines() if "error" in line.lower()]
    return "; ".join(lines[:limit]) or log.strip()[-400:]


def compile_with_nvrtc(source: str, arch: str) -> bytes:
    from cuda.bindings import nvrtc

    code = PREAMBLE + "\n".join(line for line in source.splitlines() if line.strip() != "#include <cuda.h>")
    result, program = nvrtc.nvrtcCreateProgram(code.encode(), b"astjit_kernel.cu", 0, None, None)
    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CudaCompileError(f"NVRTC could not create a program: {result}")
    options = [f"--gpu-architecture={arch}", "-default-device", "--device-int128", "--std=c++17",
               *EXACT_FLAGS, *(f"-I{p}" for p in include_folders(cuda_root())),
               *(f"-D{m}=" for m in SILENCE_MACROS)]
    try:
        (result,) = nvrtc.nvrtcCompileProgram(program, len(options), [o.encode() for o in options])
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(program)
            log = bytearray(size)
            nvrtc.nvrtcGetProgramLog(program, log)
            raise CudaCompileError(f"NVRTC: {_first_errors(log.decode(errors='replace'))}")
        _, size = nvrtc.nvrtcGetCUBINSize(program)
        cubin = bytearray(size)
        nvrtc.nvrtcGetCUBIN(program, cubin)
        return bytes(cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def compile_with_nvcc(source: str, arch: str) -> bytes:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise CudaCompileError(NO_COMPILER)
    with tempfile.TemporaryDirectory(prefix="astjit_cuda_") as folder:
        path = os.path.join(folder, "kernel.cu")
        with open(path, "w") as f:
            f.write(source)
        done = subprocess.run([nvcc, "--cubin", "-O3", f"-arch={arch}", *EXACT_FLAGS, "-o",
                               os.path.join(folder, "kernel.cubin"), path], capture_output=True, text=True)
        if done.returncode != 0:
            raise CudaCompileError(f"nvcc: {_first_errors(done.stderr)}")
        with open(os.path.join(folder, "kernel.cubin"), "rb") as f:
            return f.read()


def compile_cubin(source: str, arch: str) -> bytes:
    """A cubin for ``arch`` (``sm_90``) of CUDA C ``source``, compiled IEEE-exact."""
    return compile_with_nvrtc(source, arch) if _has_nvrtc() else compile_with_nvcc(source, arch)


@contextlib.contextmanager
def exact_compiler(arch: str):
    """Within the block, TVM compiles CUDA source through ``compile_cubin`` for ``arch``; TVM's own
    callback is put back afterwards. (Where TVM had none, ours stays registered, since a global
    function cannot be removed: it compiles for the current target's architecture then.)"""
    import tvm_ffi

    def callback(source):
        return bytearray(compile_cubin(str(source), _current_arch() or arch))

    with _lock:
        previous = tvm_ffi.get_global_func(CALLBACK, allow_missing=True)
        tvm_ffi.register_global_func(CALLBACK, callback, override=True)
        try:
            yield
        finally:
            if previous is not None:
                tvm_ffi.register_global_func(CALLBACK, previous, override=True)


def _current_arch() -> str | None:
    """``arch`` of TVM's current CUDA target, if one is entered."""
    try:
        from tvm.target import Target

        target = Target.current(allow_none=True)
        arch = target.attrs.get("arch") if target is not None and target.kind.name == "cuda" else None
    except Exception:
        return None
    return str(arch) if arch else None
