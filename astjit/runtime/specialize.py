"""Specialize a Fragment for one key: infer, partition, compile each segment, build the runner."""

from .. import config
from ..backends.numpy_backend import NumpyBackend
from ..backends.partition import partition
from ..errors import Unsupported
from ..graph.infer import infer
from ..graph.types import ArrayType
from .plan import Plan

NUMPY = NumpyBackend()


def specialize(fragment, key, args):
    from .fragment import Specialization

    graph = fragment.graph
    ctx = infer(graph, args)
    choice = fragment.backend or config.backend_override() or "auto"
    if choice == "python":
        return Specialization(key, fragment.fallback, "python", "backend=python")
    tvm_backend = None
    if choice in ("auto", "tvm"):
        from ..backends.tvm import get_backend, import_error

        tvm_backend = get_backend()
        if tvm_backend is None:
            fragment._record("numpy", f"TVM is unavailable ({import_error()}): numpy runs the block")
    segments, reasons = partition(ctx, graph, tvm_backend)
    if choice == "auto" and not any(s.backend == "tvm" for s in segments):
        note = "; ".join(sorted({r for r in reasons.values() if r})) or "nothing to compile"
        if any(isinstance(t, ArrayType) and not t.scalar for t in ctx.types.values()):
            # explain() lists every block with array work that is not compiled, and why
            fragment._record("fallback", f"nothing in this block compiles ({note}): the block runs as Python")
        spec = Specialization(key, fragment.fallback, "python", note, ctx.value_guards, ctx.range_guards)
        spec.ctx, spec.segments, spec.reasons = ctx, segments, reasons
        return spec
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
    n_out = len(graph.outputs)
    plan = Plan(ctx, graph, segments, fragment.fallback, n_out)
    runner = plan
    if len(segments) == 1 and segments[0].backend == "tvm" and _direct(graph, segments[0]):
        runner = _direct_runner(segments[0], plan, n_out, len(graph.inputs))
    modes = {s.backend for s in segments}
    mode = "tvm" if modes == {"tvm"} else ("numpy" if modes == {"numpy"} else "mixed")
    spec = Specialization(key, runner, mode, "; ".join(notes), ctx.value_guards, ctx.range_guards, plan)
    spec.ctx = ctx
    spec.effects = bool(ctx.effects)
    spec.segments = segments
    spec.reasons = reasons
    return spec


def _direct(graph, segment) -> bool:
    """The kernel takes exactly the live-ins and returns exactly the live-outs, in order."""
    return list(segment.inputs) == list(graph.inputs) and list(segment.outputs) == [n for _, n in graph.outputs] \
        and len(set(segment.outputs)) == len(segment.outputs)


def _direct_runner(segment, plan, n_out, n_in):
    """The kernel alone when it maps live-ins to one plain array live-out; the plan otherwise."""
    from .dispatch import make_single_kernel_runner

    kernel = getattr(segment, "kernel", None)
    single = n_out == 1 and kernel is not None and segment.plain_single_output
    if not single:
        return plan
    shape, dtype = segment.output_alloc
    return make_single_kernel_runner(kernel, n_in, shape, dtype, lambda args: plan(*args))
