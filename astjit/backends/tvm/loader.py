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


@functools.cache
def tvm_ffi_module():
    """``tvm_ffi`` with TVM's runtime library loaded (without torch: runtime.torch_kept_out)."""
    set_thread_environment()
    with torch_kept_out():
        import tvm_ffi
    spec = importlib.util.find_spec("tvm")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the tvm package is not installed")
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "lib", "libtvm_runtime.so")
        if os.path.exists(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return tvm_ffi
    raise ImportError("TVM's runtime library (lib/libtvm_runtime.so) was not found")


def load_kernel(path: str):
    """(module, its ``main`` function) from an exported library; the module must be kept alive."""
    module = tvm_ffi_module().load_module(path)
    return module, module["main"]
