"""Resolve names and attribute chains to the objects they mean, without running the function.

Calls are recognised by the object a name resolves to (``numpy.exp``), never by its spelling, so
``import numpy as xp`` and ``from numpy import exp`` work. Resolved globals are guarded: if the module
later rebinds the name, the function is transformed again.
"""

import builtins
import types

_MISSING = object()


class Resolver:
    def __init__(self, fn, local_names: set):
        self.fn = fn
        self.local_names = local_names
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        self.guards: dict[str, object] = {}      # global or closure name -> object it resolved to
        b = fn.__globals__.get("__builtins__", builtins)
        self.builtins = b if isinstance(b, dict) else vars(b)

    def lookup(self, name: str):
        """The current object bound to a free name, or _MISSING."""
        if name in self.local_names:
            return _MISSING
        if name in self.cells:
            try:
                return self.cells[name].cell_contents
            except ValueError:
                return _MISSING
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return self.builtins.get(name, _MISSING)

    def resolve_chain(self, chain: list[str]):
        """Resolve ``np.linalg.norm`` given ['np', 'linalg', 'norm']; attributes only through modules
        and classes (anything else could run user code)."""
        obj = self.lookup(chain[0])
        if obj is _MISSING:
            return _MISSING
        for attr in chain[1:]:
            if not isinstance(obj, types.ModuleType | type):
                return _MISSING
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj

    def guard(self, name: str, obj) -> None:
        self.guards[name] = obj

    def guards_hold(self) -> bool:
        for name, obj in self.guards.items():
            if self.lookup(name) is not obj:
                return False
        return True

    def compiled_guard(self):
        """A generated ``guard() -> bool`` equivalent to guards_hold, cheap enough for every call."""
        terms, namespace = [], {"g": self.fn.__globals__, "b": self.builtins, "M": _MISSING}
        for k, (name, obj) in enumerate(self.guards.items()):
            namespace[f"o{k}"] = obj
            if name in self.cells:
                namespace[f"c{k}"] = self.cells[name]
                terms.append(f"c{k}.cell_contents is o{k}")
            elif name in self.fn.__globals__:
                terms.append(f"g.get({name!r}, M) is o{k}")
            else:
                terms.append(f"g.get({name!r}, M) is M and b.get({name!r}, M) is o{k}")
        body = " and ".join(terms) or "True"
        src = f"def guard():\n    try:\n        return {body}\n    except ValueError:\n        return False\n"
        exec(compile(src, "<astjit guard>", "exec"), namespace)
        return namespace["guard"]


def is_module(obj) -> bool:
    return isinstance(obj, types.ModuleType)


MISSING = _MISSING
