"""Load a kernel that TVM exported as a shared library, without importing TVM's compiler.

``import tvm`` takes over a second (the compiler library, and TVM's FFI first imports torch when it is
installed); a kernel from the disk cache only needs TVM's FFI and its runtime library: the runtime,
loaded with global symbols, provides the thread pool that parallel kernels call into. The thread
settings of ``runtime.tvm_module`` are applied first, since the pool reads them when it starts.
"""

import ctypes
import functools
import importlib.util
import os

from .runtime import set_thread_environment, torch_kept_out


def _library(name: str) -> str | None:
    """The path of one of TVM's libraries (``lib/<name>``), or None."""
    spec = importlib.util.find_spec("tvm")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = os.path.join(folder, "lib", name)
        if os.path.exists(path):
            return path
    return None


@functools.cache
def tvm_ffi_module():
    """``tvm_ffi`` with TVM's runtime library loaded (without torch: runtime.torch_kept_out)."""
    set_thread_environment()
    with torch_kept_out():
        import tvm_ffi
    if importlib.util.find_spec("tvm") is None:
        raise ImportError("the tvm package is not installed")
    path = _library("libtvm_runtime.so")
    if path is None:
        raise ImportError("TVM's runtime library (lib/libtvm_runtime.so) was not found")
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return tvm_ffi


@functools.cache
def cuda_runtime():
    """``tvm_ffi`` with TVM's CUDA runtime loaded as well (it loads CUDA modules and answers device
    queries), or None where it cannot load: no GPU driver (``libcuda``), or no CUDA runtime library
    (``libcudart``, which NVIDIA's pip wheels bring: found through ``cuda.pathfinder`` when the
    loader's path lacks it)."""
    ffi = tvm_ffi_module()
    path = _library("libtvm_runtime_cuda.so")
    if path is None:
        return None
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib

            load_nvidia_dynamic_lib("cudart")
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except Exception:
            return None
    return ffi


def cuda_attribute(index: int, attribute: int):
    """TVM's device attribute of CUDA GPU ``index`` (0: exists, 4: compute version), or None without
    TVM's CUDA runtime."""
    ffi = cuda_runtime()
    if ffi is None:
        return None
    query = ffi.get_global_func("runtime.GetDeviceAttr", allow_missing=True)
    return None if query is None else query(2, index, attribute)


def load_kernel(path: str):
    """(module, its ``main`` function) from an exported library; the module must be kept alive."""
    module = tvm_ffi_module().load_module(path)
    return module, module["main"]
