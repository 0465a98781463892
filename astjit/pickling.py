"""Pickling jitted functions: by reference where the name resolves, else as ``jit(original, options)``.

Nothing compiled travels: no TVM module, cache, specialization or record is pickled, so each process
compiles its own kernels on its first call with each new dtype and shape.

- By reference: when ``module.qualname`` resolves to the jitted function itself (a module-level
  function, a ``staticmethod``, a method defined in a class body), the pickle holds that name, exactly as
  for a plain function. Unpickling imports the module and returns its jitted function.
- By value: otherwise (a nested function, or under cloudpickle a function of ``__main__`` or of a
  module registered with ``cloudpickle.register_pickle_by_value``, which cloudpickle ships by value
  for plain functions too), the pickle holds the original function, ``strict``, ``backend``,
  ``rewrites`` and ``fastmath``, the
  function's source lines and a token. The standard pickle cannot pickle such a function, as for a
  plain nested function; cloudpickle (dask, distributed, joblib) ships the original by value, and the
  receiving process jits it again. The token makes every later unpickling of the same jitted function
  in that process return the same ``JitFunction``, so a worker that receives it with each task
  compiles once.
"""

import collections
import inspect
import linecache
import os
import sys
import threading
import uuid
import weakref

_lock = threading.RLock()
_by_token: "weakref.WeakValueDictionary[str, object]" = weakref.WeakValueDictionary()
_recent: "collections.OrderedDict[str, object]" = collections.OrderedDict()   # keeps recent ones alive
_RECENT = 64


def reduce_jit_function(jf):
    """``JitFunction.__reduce__``: a global name (by reference) or ``(rebuild, args)`` (by value)."""
    if _resolves_to(jf) and not _cloudpickle_wants_value(jf.__module__):
        return jf.__qualname__              # pickle stores module and qualified name, as for a function
    with _lock:
        token = jf.__dict__.get("_pickle_token")
        if token is None:
            token = jf._pickle_token = uuid.uuid4().hex
            _by_token[token] = jf            # unpickled in this same process: the same object
    return rebuild, (token, jf.original, jf.strict, jf.backend, _source_of(jf.original),
                     {"rewrites": jf.rewrites, "fastmath": jf.fastmath, "device": jf.device})


def rebuild(token, original, strict, backend, source, options=None):
    """Unpickle by value: the ``JitFunction`` of this token in this process, or a new one."""
    from .api import JitFunction

    with _lock:
        jf = _by_token.get(token)
        if jf is None:
            _provide_source(original, source, token)
            jf = JitFunction(original, strict=strict, backend=backend, **(options or {}))
            jf._pickle_token = token
            _by_token[token] = jf
        _recent[token] = jf
        _recent.move_to_end(token)
        while len(_recent) > _RECENT:
            _recent.popitem(last=False)
    return jf


def _resolves_to(jf) -> bool:
    """Does ``module.qualname`` name ``jf`` itself (what the standard pickle checks for a global)?"""
    module = sys.modules.get(getattr(jf, "__module__", None) or "")
    qualname = getattr(jf, "__qualname__", "")
    if module is None or not qualname or "<locals>" in qualname:
        return False
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return obj is jf


def _cloudpickle_wants_value(module_name: str) -> bool:
    """True under a cloudpickle Pickler (its own or a vendored copy, as joblib's) for ``__main__`` and
    for modules registered to be pickled by value: cloudpickle ships plain functions of those by value,
    because the receiving process may not have them (a dask worker's ``__main__`` is not the client's).
    """
    cloudpickle = _running_cloudpickle()
    if cloudpickle is None:
        return False
    if module_name == "__main__":
        return True
    registered = getattr(cloudpickle, "_is_registered_pickle_by_value", None)
    module = sys.modules.get(module_name)
    try:
        return bool(registered and module is not None and registered(module))
    except Exception:
        return False


def _running_cloudpickle():
    """The cloudpickle module whose ``dump`` is on the call stack, or None (the standard pickle)."""
    frame = sys._getframe(1) if hasattr(sys, "_getframe") else None
    while frame is not None:
        if frame.f_code.co_name == "dump":
            name = frame.f_globals.get("__name__") or ""
            if name.rpartition(".")[2].startswith("cloudpickle"):
                return sys.modules.get(name)
        frame = frame.f_back
    return None


def _source_of(fn):
    """``(first line, lines)`` of ``fn``'s source, shipped so that a process without the file (a
    notebook cell's, another host's) can still parse it."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    return start, list(lines)


def _provide_source(fn, source, token) -> None:
    """Make ``fn``'s shipped source readable where its file is missing here. A file that is here is read
    as usual (if it differs from the running code, the transform's source check reports it and the
    function runs as Python). Otherwise the lines go to linecache under a name of the function's own,
    which its code object then carries: functions shipped by value can share a file name that is no
    file (cloudpickle 3.1.3 names every one ``<dynamic-code>``), under which linecache may hold another
    function's lines."""
    if source is None:
        return
    start, lines = source
    filename = fn.__code__.co_filename
    if os.path.isfile(filename):
        return
    own = f"<astjit: {fn.__qualname__} shipped from {filename} ({token})>"
    padded = ["\n"] * (start - 1) + list(lines)
    linecache.cache[own] = (sum(map(len, padded)), None, padded, own)      # mtime None: kept
    fn.__code__ = fn.__code__.replace(co_filename=own)
