"""The TVM backend (CPU via LLVM). TVM is imported lazily: ``import tvm`` costs about a second."""

_backend = None
_error = None


def get_backend():
    """The shared TvmBackend, or None (with ``import_error()`` saying why) if TVM cannot load."""
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
