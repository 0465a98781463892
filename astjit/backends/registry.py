"""The ordered list of backends per device, and registration.

On each device the partitioner asks the backends in order; the first that supports a node runs it. A
registered backend goes ahead of the built-in ones (or at ``position``); the numpy backend, which runs
every op, stays last on the CPU. Changing the registry makes every jitted function specialize again at
its next call.
"""

import threading

from ..runtime import watchers
from .contract import Backend

DEVICES = ("cpu", "cuda")

_lock = threading.Lock()
_registered: list = []           # user backends, in the order they are asked
_builtin: dict | None = None


def _builtins() -> dict:
    """device -> built-in backends in the order they are asked (made once; TVM imports lazily)."""
    global _builtin
    if _builtin is None:
        from .cupy_backend import CupyBackend
        from .numpy_backend import NumpyBackend
        from .tvm import TvmCpuBackend
        from .tvm.cuda import TvmCudaBackend

        _builtin = {"cpu": [TvmCpuBackend(), NumpyBackend()], "cuda": [TvmCudaBackend(), CupyBackend()]}
    return _builtin


def _every_backend() -> list:
    """Registered backends, then the built-in ones of every device (call with ``_lock`` held)."""
    return _registered + [b for bs in _builtins().values() for b in bs]


def register(backend: Backend, position: int = 0) -> Backend:
    """Add ``backend`` to the ordered list of each device in ``backend.devices``, at ``position`` among
    the registered backends (0: asked first); built-in backends come after every registered one.

    Raises:
        TypeError: ``backend`` lacks ``name``, ``devices``, ``supports`` or ``compile``.
        ValueError: its name is empty or taken by another backend, or it names an unknown device.
    """
    _check(backend)
    with _lock:
        taken = {b.name: b for b in _every_backend()}
        if taken.get(backend.name) is not None and taken[backend.name] is not backend:
            raise ValueError(f"a backend named {backend.name!r} is already registered")
        if backend not in _registered:
            _registered.insert(position if position >= 0 else len(_registered) + 1 + position, backend)
    watchers.changed()
    return backend


def unregister(backend) -> None:
    """Remove a registered backend (the object or its name). Built-in backends cannot be removed
    (``@jit(backend=...)`` and ``ASTJIT_BACKEND`` choose among them)."""
    with _lock:
        found = [b for b in _registered if b is backend or b.name == backend]
        if not found:
            raise ValueError(f"no registered backend {backend!r}")
        for b in found:
            _registered.remove(b)
    watchers.changed()


def registered(device: str = "cpu") -> list:
    """The backends asked on ``device``, in order (registered ones first, then the built-in ones)."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    with _lock:
        return [b for b in _registered if device in b.devices] + list(_builtins()[device])


def by_name(name: str):
    """The backend called ``name`` (registered or built-in), or None."""
    with _lock:
        everything = _every_backend()
    return next((b for b in everything if b.name == name), None)


def names() -> list:
    with _lock:
        return [b.name for b in _every_backend()]


def _check(backend) -> None:
    missing = [a for a in ("name", "devices", "supports", "compile") if not hasattr(backend, a)]
    if missing:
        raise TypeError(f"a backend needs {', '.join(missing)} (subclass astjit.backends.Backend); "
                        f"got {type(backend).__name__}")
    if not isinstance(backend.name, str) or not backend.name or backend.name in ("auto", "python", "mixed"):
        raise ValueError(f"a backend's name must be a non-empty string other than auto, python and mixed, "
                         f"not {backend.name!r}")
    unknown = [d for d in backend.devices if d not in DEVICES]
    if isinstance(backend.devices, str) or unknown or not backend.devices:
        raise ValueError(f"a backend's devices must be a tuple of {', '.join(DEVICES)}; "
                         f"{backend.name!r} has {backend.devices!r}")
    if getattr(backend, "reference", False):
        raise ValueError("only the built-in numpy backend is the reference backend")
