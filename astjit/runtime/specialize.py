"""Specialize a Fragment for one key: place, infer, partition, compile each segment, build the runner."""

import functools
import math

import numpy as np

from .. import config
from ..backends import registry
from ..backends.contract import Compiled
from ..backends.partition import partition
from ..devices import placement
from ..errors import CompileFailed, DeviceError, Unsupported
from ..graph.passes import run_pipeline
from ..graph.types import ArrayType
from . import persisted
from .plan import Plan


def specialize(fragment, key, args):
    """The steps of a specialization, each with data in and out: place the call on a device (from its
    arrays), infer the types of this call's values and run the graph passes on a clone of the block's
    graph (graph/passes), partition that graph among the device's backends, compile each segment,
    build the runner. A partition and kernels made by an earlier process for the same typed graph come
    from the disk cache."""
    for name, a in zip(fragment.live_in, args):
        if type(a) is np.ndarray and not a.flags.c_contiguous:
            # a kernel takes C-contiguous arrays; a strided, transposed or Fortran-ordered one would be
            # copied at each call (and numpy's results keep its memory order): numpy's own loops run
            # such a block at least as fast
            raise Unsupported(f"{name!r} is not a C-contiguous array (strided, transposed or "
                              "Fortran-ordered): numpy runs the block in its layout")
    place = _placement(fragment, args)
    graph, ctx, applied = run_pipeline(fragment.graph_for(args), args, fragment.rules)
    ctx.device, ctx.placement = place.device, place
    try:
        return _specialize_typed(fragment, key, graph, ctx, applied, place)
    finally:
        ctx.release_arrays()          # (the specialization lives as long as the function)


def _specialize_typed(fragment, key, graph, ctx, applied, place):
    from .fragment import Specialization

    fragment.note_rewrites(applied)
    choice = fragment.backend or config.backend_override() or "auto"
    if choice == "python":
        return Specialization(key, fragment.fallback, "python", "backend=python")
    backends = _backends(fragment, choice, place.device)
    text = persisted.key_text(fragment, ctx, choice, backends)
    stored = persisted.read(fragment, ctx, text, backends) if text is not None else None
    if stored is not None:
        segments, reasons, meta = stored
        if meta["python_won"]:       # (its kernels not loaded: the stored timing keeps the block's Python)
            spec = _stored_python(fragment, key, ctx, segments, reasons, meta)
        else:
            spec = _assemble(fragment, key, ctx, segments, reasons, meta["note"], meta["mode"] == "python")
        spec.disk_key = text
        persisted.apply_measured(fragment, spec, meta.get("measured"))
        return spec
    first_record = len(fragment.records)
    segments, reasons = partition(ctx, graph, backends)
    if choice == "auto" and all(s.reference for s in segments):
        if fragment.strict and _has_array_work(ctx):
            # (strict: an error where the block would run as Python, such as complex or float16 data)
            raise Unsupported(f"nothing in this block compiles ({_why_nothing(reasons)})")
        note = _nothing_compiles(fragment, ctx, reasons)
        spec = _assemble(fragment, key, ctx, segments, reasons, note, python=True)
    else:
        notes, failed = _compile_segments(fragment, ctx, segments, backends)
        # (every segment refused at its compile runs numpy's reference interpreter: the block's own
        # Python runs the same numpy calls, without the interpreter's cost)
        nothing = choice == "auto" and all(s.reference for s in segments)
        spec = _assemble(fragment, key, ctx, segments, reasons, "; ".join(notes), python=nothing)
        text = None if failed else text       # (a failure that may not happen again is not stored)
    if text is not None:
        spec.publish = persisted.write(text, choice, backends, spec, first_record, fragment)
        spec.disk_key = text
    return spec


def _placement(fragment, args):
    """The call's devices.Placement; arrays on different devices raise DeviceError at the block."""
    try:
        return placement(args, fragment.live_in, fragment.device)
    except ValueError as exc:
        first = fragment.block.stmts[0]
        raise DeviceError(str(exc), fragment.filename, fragment.block.lineno, first.col_offset,
                          getattr(first, "end_col_offset", None)) from None


def _assemble(fragment, key, ctx, segments, reasons, note, python):
    """The Specialization of a partition whose segments are ready to run (compiled or loaded)."""
    from .fragment import Specialization

    guards = dict(ctx=ctx, segments=segments, reasons=reasons, length_guards=ctx.length_guards)
    if python:
        spec = Specialization(key, fragment.fallback, "python", note, ctx.value_guards, ctx.range_guards,
                              **guards)
        spec.scalar_work = not any(isinstance(t, ArrayType) and not t.scalar
                                   for n, t in ctx.types.items() if n.op != "input")
        return spec
    _guard_kernel_ints(ctx, ctx.graph, segments)
    plan, runner, mode = _build_runner(ctx, ctx.graph, segments, fragment.fallback)
    spec = Specialization(key, runner, mode, note, ctx.value_guards, ctx.range_guards, plan, **guards)
    plan.kernel_failed = functools.partial(fragment.kernel_failed, spec)
    spec.measure = ctx.device == "cpu"      # a GPU kernel returns before it finishes: a timing would lie
    return spec


def _stored_python(fragment, key, ctx, segments, reasons, meta):
    """The Specialization of a stored partition whose first call's timing chose the block's Python:
    its mode is the compiled code's, its runner the block's Python (``persisted.apply_measured``)."""
    from .fragment import Specialization

    return Specialization(key, fragment.fallback, meta["mode"], meta["note"], ctx.value_guards, ctx.range_guards,
                          ctx=ctx, segments=segments, reasons=reasons, length_guards=ctx.length_guards)


def _backends(fragment, choice, device) -> list:
    """The backends this specialization asks, in order: the device's list (registry), narrowed to one
    backend and the reference by ``@jit(backend=...)``/ASTJIT_BACKEND; unavailable ones are skipped
    and recorded."""
    ordered = registry.registered(device)
    if choice == "auto":
        chosen = ordered
    else:
        name = "tvm-cuda" if (choice, device) == ("tvm", "cuda") else choice
        chosen = [b for b in ordered if b.name == name or (b.reference and name != b.name)]
        if not any(b.name == name for b in chosen):
            raise Unsupported(f"backend {choice!r} does not run on {device}")
    usable = []
    for b in chosen:
        try:
            why = b.available(device)
        except Exception as exc:
            why = f"its available() raised {type(exc).__name__}: {exc}"
        if why is None:
            usable.append(b)
        elif not b.reference:
            fragment._record("numpy", f"backend {b.name} is skipped: {why}")
    return usable


def _has_array_work(ctx) -> bool:
    """Whether the block computes an array (not only numbers from its arrays: ``n = a.shape[0]``,
    ``a[0] > 0.5``, which no kernel would run faster and explain() need not list at every length)."""
    return any(isinstance(t, ArrayType) and not t.scalar for n, t in ctx.types.items() if n.op != "input")


def _why_nothing(reasons) -> str:
    return "; ".join(sorted({r for r in reasons.values() if r})) or "nothing to compile"


def _nothing_compiles(fragment, ctx, reasons) -> str:
    """Why no segment compiles; recorded for explain() where the block does array work."""
    note = _why_nothing(reasons)
    if _has_array_work(ctx):
        # explain() lists every block with array work that is not compiled, and why
        fragment._record("fallback", f"nothing in this block compiles ({note}): the block runs as Python")
        config.log("fallbacks", "%s line %s: nothing compiles (%s)", fragment.owner_name,
                   fragment.block.lineno, note)
    return note


def _compile_segments(fragment, ctx, segments, backends) -> tuple[list, bool]:
    """Each segment's Compiled; a segment its backend fails to compile runs on the reference backend
    (the notes say why), unless the fragment is strict or the device has no reference backend (then
    the block runs as Python). Returns the notes and whether a compile failed unexpectedly
    (CompileFailed) rather than refused."""
    by_name = {b.name: b for b in backends}
    reference = next((b for b in backends if b.reference), None)
    notes, failed = [], False
    for seg in segments:
        backend = by_name[seg.backend]
        if not seg.reference:
            try:
                seg.compiled = _compiled(backend, ctx, seg)
                seg.description = seg.compiled.description or backend.name
                continue
            except Unsupported as exc:
                if fragment.strict or reference is None:
                    raise
                notes.append(str(exc))
                failed = failed or isinstance(exc, CompileFailed)
                fragment._record("numpy", f"{exc}: this part runs on numpy"
                                 + (" in this process" if isinstance(exc, CompileFailed) else ""))
                seg.backend, seg.reference, backend = reference.name, True, reference
        seg.compiled = backend.compile(ctx, seg)
        seg.description = seg.compiled.description or backend.name
    return notes, failed


def _compiled(backend, ctx, segment) -> Compiled:
    """``backend.compile``, held to the contract: a Compiled (a bare callable is taken as its run),
    and any failure an ``Unsupported`` naming the backend (CompileFailed where it did not refuse)."""
    try:
        compiled = backend.compile(ctx, segment)
    except Unsupported:
        raise
    except Exception as exc:
        raise CompileFailed(f"backend {backend.name} failed to compile this part ({type(exc).__name__}: "
                            f"{exc})") from None
    if not isinstance(compiled, Compiled):
        if not callable(compiled):
            raise Unsupported(f"backend {backend.name}'s compile() returned {type(compiled).__name__}, not a "
                              "Compiled")
        compiled = Compiled(compiled, backend.name)
    return compiled


def _build_runner(ctx, graph, segments, fallback):
    """(plan, runner, mode): the plan of segments, the function a call runs (a direct call of a single
    kernel where the plan allows it) and which backends run it: one backend's name, "numpy" (the
    reference interpreter) or "mixed"."""
    plan = Plan(ctx, graph, segments, fallback, len(graph.outputs))
    direct = _direct_runner(ctx, graph, segments, plan)
    names = {s.backend for s in segments}
    if all(s.reference for s in segments):
        mode = "numpy"
    else:
        mode = names.pop() if len(names) == 1 else "mixed"
    return plan, direct if direct is not None else plan, mode


def _guard_kernel_ints(ctx, graph, segments) -> None:
    """Kernels take Python ints as int64 parameters: a larger int runs the block's Python instead."""
    from ..graph.types import WeakScalar

    position = {n: j for j, n in enumerate(graph.inputs)}
    info = np.iinfo(np.int64)
    for seg in segments:
        for n in seg.inputs if not seg.reference else ():
            if n in position and ctx.types[n] == WeakScalar(int):
                lo, hi = ctx.range_guards.get(position[n], (info.min, info.max))
                ctx.range_guards[position[n]] = (max(lo, info.min), min(hi, info.max))


def _direct_runner(ctx, graph, segments, plan):
    """Generated straight-line code when the fragment is one kernel over its live-ins (plus, at most,
    Python tuples of its results, as in ``return z.mean(), z``); None when the plan is needed."""
    from ..graph.types import Static
    from .dispatch import make_kernel_runner

    kernels = [s for s in segments if not s.reference]
    if len(kernels) != 1 or kernels[0].compiled.direct is None:
        return None
    seg = kernels[0]
    call = seg.compiled.direct
    rest = [n for s in segments if s is not seg for n in s.nodes]
    if segments[0] is not seg or any(n.op != "tuple" or n.kwargs for n in rest):
        return None
    position = {n: j for j, n in enumerate(graph.inputs)}
    if any(n not in position for n in seg.inputs):
        return None
    args = []
    for n, kind in zip(seg.inputs, call.input_kinds):
        args.append(f"a{position[n]}.item()" if kind == "item" else f"a{position[n]}")
    produced = {n: k for k, n in enumerate(seg.outputs)}
    posts = [f"o{k}{suffix}" for k, suffix in enumerate(call.suffixes)]
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
    arrays = [f"a{position[n]}" for n, kind in zip(seg.inputs, call.input_kinds) if kind == "array"]
    aligned = [f"a{position[seg.inputs[k]]}" for k in call.aligned]
    return make_kernel_runner(call.function, len(graph.inputs), args, call.allocations, result,
                              lambda a: plan(*a), arrays, aligned)
