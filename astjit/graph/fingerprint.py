"""The exact text of a typed graph: what the disk cache keys compiled kernels by.

Two specializations with the same text partition and lower the same way, so they may share kernels.
The text must therefore never be shorter than the facts: every constant and static value is written in
full and exactly (floats by their bits, so -0.0 and the NaN payload stay apart); a value without such a
form (an arbitrary object, a large array) raises ``NotFingerprintable`` and the specialization is simply
not cached on disk.
"""

import struct
import sys
import types

import numpy as np

from .types import ArrayType, Opaque, Static, WeakScalar

MAX_ARRAY_BYTES = 1 << 16


class NotFingerprintable(Exception):
    """A value whose exact text form is not known: the specialization is compiled, not cached."""


def value_text(v) -> str:
    t = type(v)
    if v is None or v is Ellipsis:
        return repr(v)
    if t in (bool, int, str, bytes):
        return f"{t.__name__}:{v!r}"
    if t is float:
        return "float:" + struct.pack("<d", v).hex()
    if t is complex:
        return f"complex:{value_text(v.real)},{value_text(v.imag)}"
    if t in (tuple, list):
        return f"{t.__name__}({','.join(value_text(x) for x in v)})"
    if t is slice:
        return f"slice({value_text(v.start)},{value_text(v.stop)},{value_text(v.step)})"
    if isinstance(v, np.dtype):
        if v.names is not None or v.subdtype is not None:
            raise NotFingerprintable(f"structured dtype {v}")
        return "dtype:" + v.str
    if isinstance(v, np.generic):
        return f"scalar:{value_text(v.dtype)}:{v.tobytes().hex()}"
    if type(v) is np.ndarray:
        if v.dtype.kind not in "biufc" or v.nbytes > MAX_ARRAY_BYTES:
            raise NotFingerprintable("an array constant")
        return f"array:{value_text(v.dtype)}:{v.shape}:{np.ascontiguousarray(v).tobytes().hex()}"
    if isinstance(v, types.ModuleType):
        if sys.modules.get(v.__name__) is not v:
            raise NotFingerprintable(f"module {v.__name__}")
        return "module:" + v.__name__
    return "object:" + _importable_name(v)


def _importable_name(v) -> str:
    """``module:qualified.name`` for a class, function or ufunc that this name gives back, else raise."""
    if isinstance(v, np.ufunc):
        if getattr(np, v.__name__, None) is v:
            return "numpy:" + v.__name__
        raise NotFingerprintable(f"ufunc {v.__name__}")
    module = getattr(v, "__module__", None)
    qualname = getattr(v, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        raise NotFingerprintable(f"a {type(v).__name__}")
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not v:
        raise NotFingerprintable(f"{module}.{qualname}")
    return f"{module}:{qualname}"


def type_text(t) -> str:
    if isinstance(t, ArrayType):
        return f"A({value_text(t.dtype)},{t.shape},{t.scalar})"
    if isinstance(t, WeakScalar):
        return f"W({t.kind.__name__})"
    if isinstance(t, Static):
        return f"S({value_text(t.value)})"
    if isinstance(t, Opaque):
        return f"O({t.description})"
    raise NotFingerprintable(f"type {t!r}")


def graph_text(graph, ctx) -> str:
    """One line per node with its operands, constant value and inferred type, then the outputs and what
    inference found about effects and runtime indices (what backends derive from types, such as
    layouts, is not written: it follows from the rest)."""
    lines = []
    for n in graph.nodes:
        args = ",".join(str(a.id) for a in n.args)
        kwargs = ",".join(f"{k}={v.id}" for k, v in n.kwargs.items())
        value = value_text(n.value) if n.op in ("const", "input") else ""
        lines.append(f"{n.id} {n.op}({args};{kwargs}) {value} : {type_text(ctx.types.get(n, Opaque('-')))}")
    lines.append("outputs " + ",".join(f"{name}={n.id}" for name, n in graph.outputs))
    lines.append("effects " + ",".join(str(n.id) for n in sorted(ctx.effects, key=lambda n: n.id)))
    lines.append("runtime_index " + ",".join(str(n.id) for n in sorted(ctx.runtime_index, key=lambda n: n.id)))
    return "\n".join(lines)
