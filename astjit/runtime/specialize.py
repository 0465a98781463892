"""Specialize a Fragment for one key: infer, partition, compile each segment, build the runner."""

import math

import numpy as np

from .. import config
from ..backends.numpy_backend import NumpyBackend
from ..backends.partition import partition
from ..errors import Unsupported
from ..graph.passes import run_pipeline
from ..graph.types import ArrayType
from . import persisted
from .plan import Plan

NUMPY = NumpyBackend()


def specialize(fragment, key, args):
    """The steps of a specialization, each with data in and out: infer the types of this call's
    values and run the graph passes on a clone of the block's graph (graph/passes), partition that
    graph among backends, compile each segment, build the runner. A partition and kernels made by an
    earlier process for the same typed graph come from the disk cache."""
    from .fragment import Specialization

    graph, ctx, applied = run_pipeline(fragment.graph, args, fragment.rules)
    fragment.note_rewrites(applied)
    choice = fragment.backend or config.backend_override() or "auto"
    if choice == "python":
        return Specialization(key, fragment.fallback, "python", "backend=python")
    text = persisted.key_text(fragment, ctx, choice)
    stored = persisted.read(fragment, ctx, text) if text is not None else None
    if stored is not None:
        segments, reasons, meta = stored
        return _assemble(fragment, key, ctx, segments, reasons, meta["note"], meta["mode"] == "python")
    first_record = len(fragment.records)
    tvm_backend = _tvm_backend(fragment, choice)
    segments, reasons = partition(ctx, graph, tvm_backend)
    if choice == "auto" and not any(s.backend == "tvm" for s in segments):
        note = _nothing_compiles(fragment, ctx, reasons)
        spec = _assemble(fragment, key, ctx, segments, reasons, note, python=True)
    else:
        notes = _compile_segments(fragment, ctx, segments, tvm_backend)
        spec = _assemble(fragment, key, ctx, segments, reasons, "; ".join(notes), python=False)
    if tvm_backend is not None:
        persisted.write(text, choice, spec, first_record, fragment)
    return spec


def _assemble(fragment, key, ctx, segments, reasons, note, python):
    """The Specialization of a partition whose segments are ready to run (compiled or loaded)."""
    from .fragment import Specialization

    guards = dict(ctx=ctx, segments=segments, reasons=reasons, length_guards=ctx.length_guards)
    if python:
        return Specialization(key, fragment.fallback, "python", note, ctx.value_guards, ctx.range_guards,
                              **guards)
    _guard_kernel_ints(ctx, ctx.graph, segments)
    plan, runner, mode = _build_runner(ctx, ctx.graph, segments, fragment.fallback)
    return Specialization(key, runner, mode, note, ctx.value_guards, ctx.range_guards, plan, **guards)


def _tvm_backend(fragment, choice):
    """The TVM backend where the choice allows it and TVM imports, else None (recorded)."""
    if choice not in ("auto", "tvm"):
        return None
    from ..backends.tvm import get_backend, import_error

    backend = get_backend()
    if backend is None:
        fragment._record("numpy", f"TVM is unavailable ({import_error()}): numpy runs the block")
    return backend


def _nothing_compiles(fragment, ctx, reasons) -> str:
    """Why no segment goes to TVM; recorded for explain() where the block does array work."""
    note = "; ".join(sorted({r for r in reasons.values() if r})) or "nothing to compile"
    if any(isinstance(t, ArrayType) and not t.scalar for t in ctx.types.values()):
        # explain() lists every block with array work that is not compiled, and why
        fragment._record("fallback", f"nothing in this block compiles ({note}): the block runs as Python")
        config.log("fallbacks", "%s line %s: nothing compiles (%s)", fragment.owner_name,
                   fragment.block.lineno, note)
    return note


def _compile_segments(fragment, ctx, segments, tvm_backend) -> list:
    """Each segment's executable; a TVM segment that fails to compile runs on numpy (the notes say
    why), unless the fragment is strict."""
    notes = []
    for seg in segments:
        if seg.backend == "tvm":
            try:
                seg.executable = tvm_backend.compile(ctx, seg)
                continue
            except Unsupported as exc:
                if fragment.strict:
                    raise
                notes.append(str(exc))
                fragment._record("numpy", f"{exc}: this part runs on numpy")
                seg.backend = "numpy"
        seg.executable = NUMPY.compile(ctx, seg)
    return notes


def _build_runner(ctx, graph, segments, fallback):
    """(plan, runner, mode): the plan of segments, the function a call runs (a direct call of a single
    kernel where the plan allows it) and which backends run it."""
    plan = Plan(ctx, graph, segments, fallback, len(graph.outputs))
    direct = _direct_runner(ctx, graph, segments, plan)
    modes = {s.backend for s in segments}
    mode = "tvm" if modes == {"tvm"} else ("numpy" if modes == {"numpy"} else "mixed")
    return plan, direct if direct is not None else plan, mode


def _guard_kernel_ints(ctx, graph, segments) -> None:
    """Kernels take Python ints as int64 parameters: a larger int runs the block's Python instead."""
    from ..graph.types import WeakScalar

    position = {n: j for j, n in enumerate(graph.inputs)}
    info = np.iinfo(np.int64)
    for seg in segments:
        for n in seg.inputs if seg.backend == "tvm" else ():
            if n in position and ctx.types[n] == WeakScalar(int):
                lo, hi = ctx.range_guards.get(position[n], (info.min, info.max))
                ctx.range_guards[position[n]] = (max(lo, info.min), min(hi, info.max))


def _direct_runner(ctx, graph, segments, plan):
    """Generated straight-line code when the fragment is one kernel over its live-ins (plus, at most,
    Python tuples of its results, as in ``return z.mean(), z``); None when the plan is needed."""
    from ..backends.tvm.executable import output_suffix
    from ..graph.types import Static
    from .dispatch import make_kernel_runner

    kernels = [s for s in segments if s.backend == "tvm"]
    if len(kernels) != 1 or getattr(kernels[0], "signature", None) is None:
        return None
    seg = kernels[0]
    rest = [n for s in segments if s is not seg for n in s.nodes]
    if segments[0] is not seg or any(n.op != "tuple" or n.kwargs for n in rest):
        return None
    position = {n: j for j, n in enumerate(graph.inputs)}
    if any(n not in position for n in seg.inputs):
        return None
    args = []
    for n, kind in zip(seg.inputs, seg.signature.inputs):
        args.append(f"a{position[n]}.item()" if kind == "item" else f"a{position[n]}")
    produced = {n: k for k, n in enumerate(seg.outputs)}
    posts = [f"o{k}{output_suffix(t)}" for k, (_, _, t) in enumerate(seg.signature.outputs)]
    tuples = set(rest)

    def expr(node):
        t = ctx.types.get(node)
        if node in produced:
            return posts[produced[node]]
        if node in position:
            return f"a{position[node]}"
        if isinstance(t, Static) and isinstance(t.value, int | float | bool | type(None)) \
                and not (isinstance(t.value, float) and not math.isfinite(t.value)):
            return repr(t.value)
        if node in tuples:
            items = [expr(o) for o in node.args]
            if any(i is None for i in items):
                return None
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return None

    outs = [expr(n) for _, n in graph.outputs]
    if any(o is None for o in outs):
        return None
    if not outs:
        result = "None"
    elif len(outs) == 1:
        result = outs[0]
    else:
        result = "(" + ", ".join(outs) + ")"
    allocs = [(shape, dtype) for shape, dtype, _ in seg.signature.outputs]
    return make_kernel_runner(seg.kernel, len(graph.inputs), args, allocs, result, lambda a: plan(*a))
