"""Resolve names and attribute chains to the objects they mean, without running the function.

Calls are recognised by the object a name resolves to (``numpy.exp``), never by its spelling, so
``import numpy as xp`` and ``from numpy import exp`` work. Resolved globals are guarded: if the module
later rebinds the name, the function is transformed again.
"""

import builtins
import types

_MISSING = object()


class Resolver:
    def __init__(self, fn, local_names: set, assigned_chains=frozenset(), local_modules=None):
        self.fn = fn
        self.local_names = local_names
        self.local_modules = local_modules or {}   # locals bound by ``import numpy as np`` (frontend/local_imports)
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        self.guards: dict[str, object] = {}      # global or closure name -> object it resolved to
        # globals read that were not defined when the function was compiled (their statements run as
        # Python): a guard that holds while each stays undefined, so that defining one later compiles
        # them (a notebook's NameError, then the constant defined, kept a loop in Python for good)
        self.missing: set = set()
        self.empty_cells: set = set()            # closure variables not yet assigned, the same way
        # attributes of modules and classes read that were missing then (``consts.K``): (chain to the
        # object, the attribute), guarded to stay missing
        self.missing_attributes: set = set()
        self.assigned_chains = assigned_chains    # attributes the function itself assigns (``C.F = ...``)
        b = fn.__globals__.get("__builtins__", builtins)
        self.builtins = b if isinstance(b, dict) else vars(b)

    def lookup(self, name: str):
        """The current object bound to a free name (or to a module the function imports), or _MISSING."""
        if name in self.local_modules:
            return self.local_modules[name]
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
        and classes (anything else could run user code). An attribute the function assigns itself,
        or one read through it (``C.F`` after ``C.F = np.negative`` in the body), is not resolved: the
        guard checks it once, on entry, and the statements after the store must see the new object."""
        if self.assigned_by_function(chain):
            return _MISSING
        obj = self.lookup(chain[0])
        if obj is _MISSING:
            self.guard_missing(chain[0])
            return _MISSING
        for k, attr in enumerate(chain[1:], start=1):
            if not isinstance(obj, types.ModuleType | type):
                return _MISSING
            try:
                found = static_attribute(obj, attr)
            except Exception:      # (a module's __getattr__ raising ImportError: Python reads it where it does)
                return _MISSING
            if found is _DYNAMIC:
                return _MISSING
            if found is _MISSING:
                self.guard_missing_attribute(chain[:k], obj, attr)
                return _MISSING
            obj = found
        return obj

    def assigned_by_function(self, chain) -> bool:
        return any(tuple(chain[:k]) in self.assigned_chains for k in range(1, len(chain) + 1))

    def guard(self, name: str, obj) -> None:
        if name not in self.local_modules:        # (what the function's own import binds: stable)
            self.guards[name] = obj

    def guard_missing(self, name: str) -> None:
        if name in self.local_names or name in self.local_modules:
            return
        if name in self.cells:
            self.empty_cells.add(name)
        else:
            self.missing.add(name)

    def guard_missing_attribute(self, chain: list[str], obj, attr: str) -> None:
        """``chain`` resolved to the module or class ``obj``, which has no attribute ``attr`` yet: guard
        that it still has none (a notebook's ``consts.K`` defined after a first call's AttributeError
        kept the statement in Python for good). numpy's are taken as they are, as its functions are."""
        if self.is_numpy_chain(chain) or self.assigned_by_function(list(chain) + [attr]):
            return
        self.guard_chain(list(chain), obj)
        self.missing_attributes.add((tuple(chain), attr, isinstance(obj, types.ModuleType)))

    def guard_chain(self, chain: list[str], obj) -> None:
        """Guard what ``a.b.c`` resolved to: the root name's object, and every attribute after it unless
        the root is numpy (its functions and constants are assumed never to be rebound)."""
        self.guard(chain[0], self.lookup(chain[0]))
        if len(chain) > 1 and not self.is_numpy_chain(chain) and chain[0] not in self.local_modules:
            self.guards[tuple(chain)] = obj

    def is_math_constant(self, chain: list[str]) -> bool:
        """``math.pi``, ``math.inf`` and the other float constants of ``math`` and ``cmath``."""
        root = self.lookup(chain[0])
        return (len(chain) == 2 and is_module(root) and root.__name__ in ("math", "cmath")
                and chain[1] in ("pi", "e", "tau", "inf", "nan"))

    def is_numpy_chain(self, chain: list[str]) -> bool:
        root = self.lookup(chain[0])
        return is_module(root) and (root.__name__ == "numpy" or root.__name__.startswith("numpy."))

    def compiled_guard(self, defaults=None, quiet_floating_point=None):
        """A generated ``guard() -> bool``, cheap enough for every call: every guarded name and attribute
        chain still resolves to the same object, the function's defaults are the same tuples and, given
        ``(current_state, [quiet_state])``, numpy's floating-point error state is one known to be quiet."""
        body, namespace = self.guard_expression(defaults, quiet_floating_point)
        src = (f"def guard():\n    try:\n        return {body}\n"
               f"    except {GUARD_ERRORS}:\n        return False\n")
        return self.function_in_module(src, "guard", namespace)

    def guard_expression(self, defaults=None, quiet_floating_point=None, quiet_otherwise=None, prefix="__astjit_"):
        """(Python expression, its namespace) of the guard: what ``compiled_guard`` wraps in a
        function, and what a generated call (api.JitFunction) checks inline. Global and builtin names
        are read as the function reads them (compiled in its module: ``function_in_module``), which
        Python's own caches of global lookups make a few nanoseconds each; the namespace's names start
        with ``prefix``, apart from the user's names. A name since deleted raises NameError, which the
        guard's caller takes as False (``GUARD_ERRORS``). ``quiet_otherwise()``: asked whether numpy's
        error state is quiet where it is not the known quiet object."""
        terms, namespace = [], {f"{prefix}fn": self.fn}
        if quiet_floating_point is not None:
            namespace[f"{prefix}fp_state"], namespace[f"{prefix}fp_quiet"] = quiet_floating_point
            term = f"{prefix}fp_state() is {prefix}fp_quiet[0]"
            if quiet_otherwise is not None:
                namespace[f"{prefix}fp_allowed"] = quiet_otherwise
                term = f"({term} or {prefix}fp_allowed())"
            terms.append(term)
        for k, (name, obj) in enumerate(self.guards.items()):
            namespace[f"{prefix}o{k}"] = obj
            if isinstance(name, tuple):
                root = self._load_code(name[0], k, namespace, prefix)
                path = root + "".join(f".{attr}" for attr in name[1:])
                terms.append(f"{path} is {prefix}o{k}")
            else:
                terms.append(f"{self._load_code(name, k, namespace, prefix)} is {prefix}o{k}")
        if self.missing:
            namespace[f"{prefix}g"], namespace[f"{prefix}b"] = self.fn.__globals__, self.builtins
            terms += [f"{name!r} not in {prefix}g and {name!r} not in {prefix}b" for name in sorted(self.missing)]
        if self.empty_cells:
            namespace[f"{prefix}empty"] = _empty_cell
            terms += [f"{prefix}empty({prefix}e{k})" for k, name in enumerate(sorted(self.empty_cells))]
            namespace.update({f"{prefix}e{k}": self.cells[name] for k, name in enumerate(sorted(self.empty_cells))})
        if self.missing_attributes:
            namespace[f"{prefix}getattr"], namespace[f"{prefix}m"] = getattr, _MISSING
            for k, (chain, attr, of_module) in enumerate(sorted(self.missing_attributes)):
                path = self._load_code(chain[0], f"m{k}", namespace, prefix) + "".join(f".{a}" for a in chain[1:])
                terms.append(f"{attr!r} not in {path}.__dict__" if of_module   # (never a module's __getattr__)
                             else f"{prefix}getattr({path}, {attr!r}, {prefix}m) is {prefix}m")
        if defaults is not None:
            namespace[f"{prefix}d0"], namespace[f"{prefix}d1"] = defaults
            terms.append(f"{prefix}fn.__defaults__ is {prefix}d0 and {prefix}fn.__kwdefaults__ is {prefix}d1")
        return " and ".join(terms) or "True", namespace

    def _load_code(self, name, k, namespace, prefix) -> str:
        """Python code reading the free name ``name`` now (a closure cell, or a global or builtin)."""
        if name in self.cells:
            namespace[f"{prefix}c{k}"] = self.cells[name]
            return f"{prefix}c{k}.cell_contents"
        return name

    def function_in_module(self, src: str, name: str, namespace: dict):
        """The function ``name`` defined by ``src``, compiled with the user's module as its globals (its
        free names read as the user's function reads them) and ``namespace`` as closure variables;
        nothing is added to the module."""
        params = ", ".join(namespace)
        body = "".join(f"    {line}\n" for line in src.splitlines())
        factory = compile(f"def __astjit_factory({params}):\n{body}    return {name}\n", f"<astjit {name}>", "exec")
        code = next(c for c in factory.co_consts if isinstance(c, types.CodeType))
        return types.FunctionType(code, self.fn.__globals__)(*namespace.values())


def assigned_attribute_chains(fndef) -> set[tuple]:
    """``('C', 'F')`` for each ``C.F = ...``, ``C.F += ...`` or ``del C.F`` in ``fndef`` (nested
    functions included: one may be called in between), and ``('FN',)`` for each name it declares
    ``global`` or ``nonlocal`` and binds (assigns, deletes, imports, defines: ``global FN`` then ``FN =
    np.cos`` under an ``if``: a later block that had resolved FN called the old function)."""
    import gast

    from .lower import attribute_chain

    stored = (node for node in gast.walk(fndef)
              if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store | gast.Del))
    chains = {tuple(chain) for chain in map(attribute_chain, stored) if chain is not None}
    declared = {name for node in gast.walk(fndef) if isinstance(node, gast.Global | gast.Nonlocal)
                for name in node.names}
    rebound = set()
    for node in gast.walk(fndef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store | gast.Del):
            rebound.add(node.id)
        elif isinstance(node, gast.Import | gast.ImportFrom):        # (``from numpy import cos as FN``)
            rebound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef) and node is not fndef:
            rebound.add(node.name)
    return chains | {(name,) for name in declared & rebound}


# what ``static_attribute`` gives for an attribute that Python computes at each read
_DYNAMIC = object()
# descriptors whose ``__get__`` on a class runs no code of the user's: functions, static and class
# methods, properties (the property itself), C methods and slots
_CLASS_DESCRIPTORS = (types.FunctionType, staticmethod, classmethod, property, types.BuiltinFunctionType,
                      types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType,
                      types.GetSetDescriptorType, types.MemberDescriptorType)


def static_attribute(obj, attr: str):
    """``obj.attr`` of a module or a class, where reading it runs none of the user's code, so that
    reading it once stands for every read: the value, _MISSING where it has none, or _DYNAMIC where
    Python computes it at each read (a module's ``__getattr__``: a deprecated name warning where it is
    read; a property of a metaclass; a descriptor of the user's; a metaclass's ``__getattr__`` or
    ``__getattribute__``). A package's ``__getattr__`` importing one of its submodules
    (``np.random``) is read: importing is what the first read does."""
    if isinstance(obj, types.ModuleType):
        kind = type(obj)
        if kind is not types.ModuleType and (
                kind.__getattribute__ is not types.ModuleType.__getattribute__
                or any(attr in k.__dict__ for k in kind.__mro__ if k not in (types.ModuleType, object))):
            return _DYNAMIC
        stored = obj.__dict__
        if attr in stored:
            return stored[attr]
        if "__getattr__" not in stored:
            return _MISSING
        return getattr(obj, attr, _MISSING) if _is_submodule(obj, attr) else _DYNAMIC
    meta = type(obj)
    if meta.__getattribute__ is not type.__getattribute__:
        return _DYNAMIC
    on_meta = _found_in(meta, attr)
    if on_meta is not None and on_meta[0] not in (type, object):
        value_type = type(on_meta[1])
        if hasattr(value_type, "__set__") or hasattr(value_type, "__delete__"):
            return _DYNAMIC                          # (a property of the metaclass comes first)
    on_class = _found_in(obj, attr)
    if on_class is not None:
        value = on_class[1]
        if hasattr(type(value), "__get__") and not isinstance(value, _CLASS_DESCRIPTORS):
            return _DYNAMIC
        return getattr(obj, attr)
    if on_meta is not None:
        return getattr(obj, attr) if on_meta[0] in (type, object) else _DYNAMIC
    if any("__getattr__" in k.__dict__ for k in meta.__mro__):
        return _DYNAMIC
    return _MISSING


def _found_in(cls, attr):
    """(the class of ``cls.__mro__`` holding ``attr``, its value), or None."""
    for klass in cls.__mro__:
        if attr in klass.__dict__:
            return klass, klass.__dict__[attr]
    return None


def _is_submodule(module, attr: str) -> bool:
    if not hasattr(module, "__path__"):
        return False
    import importlib.util

    try:
        return importlib.util.find_spec(f"{module.__name__}.{attr}") is not None
    except (ImportError, ValueError):
        return False


def _empty_cell(cell) -> bool:
    """Whether a closure variable is unassigned (reading it raises ValueError)."""
    try:
        _ = cell.cell_contents
    except ValueError:
        return True
    return False


GUARD_ERRORS = "Exception"     # a cell emptied, an attribute or a name deleted, a module's __getattr__ raising


def is_module(obj) -> bool:
    return isinstance(obj, types.ModuleType)


MISSING = _MISSING
