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
import sys

from .runtime import set_thread_environment


@functools.cache
def tvm_ffi_module():
    """``tvm_ffi`` with TVM's runtime library loaded. tvm_ffi imports torch at its own import when it
    can (a workaround for a Windows symbol clash), 0.6 s here; astjit passes numpy arrays only, so the
    import is kept from happening unless the program already imported torch."""
    set_thread_environment()
    blocked = "torch" not in sys.modules
    if blocked:
        sys.modules["torch"] = None          # makes ``import torch`` raise ImportError, which tvm_ffi skips
    try:
        import tvm_ffi
    finally:
        if blocked and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
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
