"""The TVM backends: CPU kernels through LLVM (``tvm``) and CUDA kernels (``tvm-cuda``, in ``cuda``).

TVM is imported lazily: ``import tvm`` costs about a second, and a kernel loaded from the disk cache
needs only TVM's runtime library (``loader``).
"""

import functools
import importlib.util

from ..contract import Backend

_backend = None
_error = None
# seconds this process spent importing TVM (runtime.tvm_module), which the first compile pays: a
# specialization's compile time leaves it out (runtime/fragment), since no later compile pays it again
IMPORT_SECONDS = [0.0]


def get_backend():
    """The shared TvmBackend (the CPU compiler), or None (with ``import_error()`` saying why) if TVM
    cannot load."""
    global _backend, _error
    if _backend is None and _error is None:
        try:
            from .backend import TvmBackend

            _backend = TvmBackend()
        except Exception as exc:  # a broken TVM install must not break the user's program
            _error = f"{type(exc).__name__}: {exc}"
    return _backend


def import_error():
    return _error


class TvmCpuBackend(Backend):
    """One fused, vectorized (and, for large arrays, parallel) LLVM kernel per segment."""

    name = "tvm"
    devices = ("cpu",)

    def available(self, device):
        """Cheap: a kernel from the disk cache runs without importing TVM's compiler, so the import
        waits for ``supports`` (which says so if it fails)."""
        if import_error() is not None:
            return f"TVM is unavailable ({import_error()})"
        return None if importlib.util.find_spec("tvm") is not None else "TVM is not installed"

    def supports(self, ctx, node):
        if get_backend() is None:
            return f"TVM is unavailable ({import_error()})"
        from .support import supports

        return supports(ctx, node)

    def compile(self, ctx, segment):
        return get_backend().compile(ctx, segment)

    def cache_key(self, device):
        return f"tvm {tvm_version()} llvm"

    def load(self, ctx, segment, meta, libraries):
        from .compiled import load_compiled

        return load_compiled(ctx, segment, meta, libraries)


@functools.cache
def tvm_version() -> str:
    from importlib.metadata import version

    return version("apache-tvm")
