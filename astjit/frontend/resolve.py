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

    def guard_chain(self, chain: list[str], obj) -> None:
        """Guard what ``a.b.c`` resolved to: the root name's object, and every attribute after it unless
        the root is numpy (its functions and constants are assumed never to be rebound)."""
        self.guard(chain[0], self.lookup(chain[0]))
        if len(chain) > 1 and not self.is_numpy_chain(chain):
            self.guards[tuple(chain)] = obj

    def is_numpy_chain(self, chain: list[str]) -> bool:
        root = self.lookup(chain[0])
        return is_module(root) and (root.__name__ == "numpy" or root.__name__.startswith("numpy."))

    def compiled_guard(self, defaults=None, quiet_floating_point=None):
        """A generated ``guard() -> bool``, cheap enough for every call: every guarded name and attribute
        chain still resolves to the same object, the function's defaults are the same tuples and, given
        ``(current_state, [quiet_state])``, numpy's floating-point error state is one known to be quiet."""
        body, namespace = self.guard_expression(defaults, quiet_floating_point)
        src = (f"def guard():\n    try:\n        return {body}\n"
               "    except (ValueError, AttributeError):\n        return False\n")
        exec(compile(src, "<astjit guard>", "exec"), namespace)
        return namespace["guard"]

    def guard_expression(self, defaults=None, quiet_floating_point=None):
        """(Python expression, its namespace) of the guard: what ``compiled_guard`` wraps in a
        function, and what a generated call (api.JitFunction) checks inline."""
        terms, namespace = [], {"g": self.fn.__globals__, "b": self.builtins, "M": _MISSING, "fn": self.fn}
        if quiet_floating_point is not None:
            namespace["fp_state"], namespace["fp_quiet"] = quiet_floating_point
            terms.append("fp_state() is fp_quiet[0]")
        for k, (name, obj) in enumerate(self.guards.items()):
            namespace[f"o{k}"] = obj
            if isinstance(name, tuple):
                root = self._load_code(name[0], k, namespace)
                path = root + "".join(f".{attr}" for attr in name[1:])
                terms.append(f"{path} is o{k}")
            elif name in self.cells:
                namespace[f"c{k}"] = self.cells[name]
                terms.append(f"c{k}.cell_contents is o{k}")
            elif name in self.fn.__globals__:
                terms.append(f"g.get({name!r}, M) is o{k}")
            else:
                terms.append(f"g.get({name!r}, M) is M and b.get({name!r}, M) is o{k}")
        if defaults is not None:
            namespace["d0"], namespace["d1"] = defaults
            terms.append("fn.__defaults__ is d0 and fn.__kwdefaults__ is d1")
        return " and ".join(terms) or "True", namespace

    def _load_code(self, name, k, namespace) -> str:
        """Python code reading the free name ``name`` now (a closure cell, a global or a builtin)."""
        if name in self.cells:
            namespace[f"c{k}"] = self.cells[name]
            return f"c{k}.cell_contents"
        return f"g.get({name!r}, b.get({name!r}))"


def is_module(obj) -> bool:
    return isinstance(obj, types.ModuleType)


MISSING = _MISSING
