"""Specialize a jitted function's Fragments for given argument types without running its code.

``--shapes 'a=float32[1000],b=float32[1000],n=int'`` gives each argument a stand-in value; Fragments
are then specialized in source order, each one's live-outs typed from the graph inference and fed to
later Fragments. Control flow is not executed (both branches are specialized, loops once), so no user
code runs; a Fragment whose inputs come from plain Python statements is left unspecialized.
"""

import re

import numpy as np

from ..errors import AstjitError, Unsupported
from ..graph.infer import infer
from ..graph.types import ArrayType, Static, WeakScalar
from ..runtime.windows import NOT_TAKEN

_ARRAY = re.compile(r"^\s*(\w+)\s*\[\s*([\d\s,]*)\s*\]\s*$")


class ShapeSpecError(AstjitError):
    """A --shapes argument that cannot be read."""


def parse_shapes(text: str) -> dict:
    """``a=float32[1000],b=float64[3,4],n=int,k=5,s=float32`` -> stand-in values by name."""
    values = {}
    for part in _split(text):
        if not part:
            raise ShapeSpecError(f"an empty entry in --shapes {text!r} (two commas in a row, or a comma at "
                                 "an end)")
        if "=" not in part:
            raise ShapeSpecError(f"expected name=type in --shapes, got {part!r}")
        name, spec = (s.strip() for s in part.split("=", 1))
        if not name.isidentifier():
            raise ShapeSpecError(f"expected name=type in --shapes, got {part!r}")
        if name in values:
            raise ShapeSpecError(f"--shapes gives {name!r} twice")
        values[name] = _stand_in(name, spec)
    return values


def _split(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if parts or current.strip():          # (an empty or blank text: no entries)
        parts.append(current)
    return [p.strip() for p in parts]


def _stand_in(name, spec):
    m = _ARRAY.match(spec)
    if m:
        dtype = _dtype(name, m.group(1))
        dims = tuple(int(d) for d in m.group(2).replace(" ", "").split(",") if d)
        try:        # (a stand-in array is allocated, not filled, above 65536 elements)
            return np.zeros(dims, dtype) if int(np.prod(dims)) <= 1 << 16 else np.empty(dims, dtype)
        except (MemoryError, ValueError) as exc:
            raise ShapeSpecError(f"--shapes {name}={spec.strip()}: no array of that size can stand in for "
                                 f"the argument here ({type(exc).__name__}: {exc})") from None
    if spec in ("int", "float", "bool", "complex"):
        return {"int": 1, "float": 1.0, "bool": True, "complex": 1j}[spec]
    try:
        return int(spec)
    except ValueError:
        pass
    try:
        return float(spec)
    except ValueError:
        pass
    dtype = _dtype(name, spec)
    try:
        return dtype.type(0)                           # a numpy scalar: s=float32
    except Exception as exc:      # (a datetime64 needs a unit, a flexible dtype a size...)
        raise ShapeSpecError(f"--shapes {name}={spec.strip()}: no {dtype} scalar can stand in for the argument "
                             f"({type(exc).__name__}: {exc})") from None


def _dtype(name, text):
    try:
        return np.dtype(text)
    except Exception:             # (numpy raises TypeError, ValueError or SyntaxError for other texts)
        raise ShapeSpecError(f"unknown dtype {text!r} for {name!r} in --shapes") from None


def stand_in_for(t):
    if isinstance(t, Static):
        return t.value
    if isinstance(t, WeakScalar):
        return t.kind(1)
    if isinstance(t, ArrayType):
        if t.scalar:
            return t.dtype.type(0)
        try:      # (a stand-in too large to allocate here leaves the Fragments reading it unspecialized)
            return np.zeros(t.shape, t.dtype) if t.size <= 1 << 16 else np.empty(t.shape, t.dtype)
        except (MemoryError, ValueError):
            return None
    return None


def specialize_statically(jf, values: dict, receiver=None) -> list[str]:
    """Specialize every Fragment reachable from ``values``; returns notes on the ones left out.

    ``receiver``: ``(parameter, value)`` of a method looked up on its class, whose first parameter
    Python fills: a classmethod's class is known; an instance (value None) cannot be made up."""
    fn = jf.original
    env = dict(values)
    instance = None
    if receiver is not None and receiver[0] not in env:
        if receiver[1] is not None:
            env[receiver[0]] = receiver[1]
        else:
            instance = receiver[0]
    missing = [p for p in _parameters(fn) if p not in env]
    notes = [f"no --shapes entry for argument '{p}'" for p in missing if p != instance]
    literals = literal_locals(jf)
    for frag in jf.fragments:
        args = []
        for name in frag.live_in:
            if name in frag.block.views:          # (a window the caller takes once its bounds move)
                args.append(NOT_TAKEN)
            elif name in env:
                args.append(env[name])
            elif name in literals and literals[name][1] < frag.lines[0] and name not in _parameters(fn):
                args.append(literals[name][0])
            elif name in fn.__globals__:
                args.append(fn.__globals__[name])
            else:
                args = None
                notes.append(_left_out(frag, name, missing, instance))
                break
        if args is None:
            continue
        frag.specialize_only(args)
        if frag.graph is None:     # a loop region: its live-outs are scalars whose values need a run
            for name in frag.live_out:
                literals.pop(name, None)
            continue
        try:
            ctx = infer(frag.graph, args)
        except Unsupported:
            continue
        for name, node in frag.graph.outputs:
            value = stand_in_for(ctx.types[node])
            if value is not None:
                env[name] = value
    return notes


def _left_out(frag, name, missing, instance) -> str:
    """Why ``frag`` is not specialized: it reads ``name``, whose type --shapes does not give."""
    from ..frontend.lower import attribute_chain

    where = f"{frag.name} (line {frag.block.lineno})"
    chain = attribute_chain(frag.block.hoisted[name]) if name in frag.block.hoisted else None
    read = f"'{name}'" if chain is None else ".".join(chain)         # self.w, not the hoisted name
    if name == instance or (chain and chain[0] == instance):
        return (f"{where} is not specialized: it reads {read}, of the instance the method is called on, "
                "which --shapes cannot make up")
    if name in missing:
        return f"{where} is not specialized: {read} has no --shapes entry"
    return f"{where}: {read} comes from Python code, so its type is unknown without running the function"


def _parameters(fn):
    import inspect

    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def literal_locals(jf) -> dict:
    """The locals that the function's own statements outside every Fragment bind once, to a number
    written out (``s = 0.0`` before a loop): name -> (value, line); their values are known without
    running the function, for the Fragments after that line.
    Any other binding of the name outside the Fragments (a ``for`` or ``with`` target, a walrus, an
    import, ``del``, a ``global``/``nonlocal`` declaration) leaves it unknown."""
    if jf._parsed is None:
        return {}
    spans = [f.lines for f in jf.fragments]
    bindings = {}            # name -> [(value, line) of a literal, else None, ...] outside the Fragments
    for name, node, value in _own_scope_bindings(jf._parsed[1].body):
        line = getattr(node, "lineno", None)
        if line is not None and any(first <= line <= last for first, last in spans):
            continue                     # (a Fragment binds it: its live-outs are typed by inference)
        bindings.setdefault(name, []).append(None if value is None else (value, line))
    return {name: values[0] for name, values in bindings.items() if len(values) == 1 and values[0] is not None}


def _own_scope_bindings(stmts):
    """(name, node, literal value or None) for each binding of a name in the scope of the function
    whose body is ``stmts``, and for each other way the name may be bound (names a nested function
    declares ``nonlocal``, walrus targets in comprehensions, ``global`` names: never a literal)."""
    import gast

    nested = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
    comprehensions = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.Lambda)
    pending = list(stmts)
    while pending:
        node = pending.pop()
        if isinstance(node, nested):
            yield node.name, node, None
            for n in gast.walk(node):
                if isinstance(n, gast.Nonlocal | gast.Global):
                    yield from ((name, n, None) for name in n.names)
            continue
        if isinstance(node, comprehensions):
            for n in gast.walk(node):
                if isinstance(n, gast.NamedExpr) and isinstance(n.target, gast.Name):
                    yield n.target.id, n, None
            continue
        if (isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and isinstance(node.value, gast.Constant) and type(node.value.value) in (int, float, complex, bool)):
            yield node.targets[0].id, node, node.value.value
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store | gast.Del):
            yield node.id, node, None
        elif isinstance(node, gast.Import | gast.ImportFrom):
            for alias in node.names:
                yield (alias.asname or alias.name).split(".")[0], node, None
        elif isinstance(node, gast.Global | gast.Nonlocal):
            yield from ((name, node, None) for name in node.names)
        elif isinstance(node, gast.MatchAs | gast.MatchStar) and node.name:
            yield node.name, node, None
        elif isinstance(node, gast.MatchMapping) and node.rest:
            yield node.rest, node, None
        pending.extend(gast.iter_child_nodes(node))
