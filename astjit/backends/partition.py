"""Cut a specialized graph into segments, each run by one backend, in an order numpy would accept.

Nodes are visited in statement order. Consecutive nodes the TVM backend supports form one segment
(one fused kernel). A numpy node ends the open TVM segment unless it is pure and reads nothing from it,
in which case it runs just before that segment (Python scalar arithmetic between array statements does
not split a kernel). Effects (in-place updates) always stay in place, so reads and writes of a mutated
array keep their order. Views and fresh arrays are *duplicable*: fused into kernels as index maps or
constants, and made by numpy when their value is needed outside the kernel, so a live-out view stays a
view of its base.
"""

from ..graph.ops import OPS
from ..graph.types import Static
from .base import Segment

DUPLICABLE = ("view", "creation")


def partition(ctx, graph, tvm_backend=None) -> tuple[list[Segment], dict]:
    """Segments in execution order and, per node left to numpy, why TVM did not take it."""
    work = [n for n in graph.nodes if n.op not in ("input", "const") and not isinstance(ctx.types[n], Static)]
    reasons = {}
    on_tvm = set()
    for n in work:
        reason = "TVM backend disabled" if tvm_backend is None else tvm_backend.supports(ctx, n)
        if reason is None:
            on_tvm.add(n)
        else:
            reasons[n] = reason

    segments: list[Segment] = []
    for n in work:
        backend = "tvm" if n in on_tvm else "numpy"
        last = segments[-1] if segments else None
        if last is not None and last.backend == backend:
            last.nodes.append(n)
            continue
        if backend == "numpy" and last is not None and last.backend == "tvm" and _can_run_before(ctx, n, last):
            before = segments[-2] if len(segments) > 1 and segments[-2].backend == "numpy" else None
            if before is None:
                before = Segment("numpy")
                segments.insert(len(segments) - 1, before)
            before.nodes.append(n)
            continue
        segments.append(Segment(backend, [n]))

    _assign_outputs(ctx, graph, segments)
    return [s for s in segments if s.nodes and (s.outputs or s.backend == "numpy")], reasons


def _can_run_before(ctx, node, segment) -> bool:
    if node in ctx.effects or OPS[node.op].kind == "effect":
        return False
    inside = set(segment.nodes)
    return not any(o in inside for o in node.operands)


def _used_outside(segments, graph) -> set:
    """Nodes read by another segment or returned by the graph."""
    owner = {n: s for s in segments for n in s.nodes}
    used = {n for _, n in graph.outputs if n in owner}
    for s in segments:
        for n in s.nodes:
            used.update(o for o in n.operands if o in owner and owner[o] is not s)
    return used


def _assign_outputs(ctx, graph, segments) -> None:
    """Duplicable nodes needed outside a kernel are made again by a numpy segment right after it (the
    kernel keeps fusing them for its own use); then every segment gets its outputs and its inputs."""
    used = _used_outside(segments, graph)
    kernel_outputs = {}
    result = []
    for s in segments:
        result.append(s)
        if s.backend != "tvm":
            continue
        inside = set(s.nodes)
        needed = {n for n in s.nodes if n in used}
        todo, post = list(needed), []
        while todo:
            n = todo.pop()
            if OPS[n.op].kind in DUPLICABLE and n not in post:
                post.append(n)
                needed.discard(n)
                for o in n.operands:
                    if o in inside and o not in needed and o not in post and not isinstance(ctx.types[o], Static):
                        needed.add(o)
                        todo.append(o)
        if not needed:
            s.backend = "numpy"                        # only views/creations: numpy makes them for free
            continue
        kernel_outputs[s] = needed
        if post:
            order = {n: i for i, n in enumerate(s.nodes)}
            result.append(Segment("numpy", sorted(post, key=order.get)))
    segments[:] = result
    used = _used_outside(segments, graph)
    for s in segments:
        wanted = kernel_outputs.get(s, used)
        s.outputs = [n for n in s.nodes if n in wanted]
        inside = set(s.nodes)
        inputs = []
        for n in s.nodes:
            for o in n.operands:
                if o not in inside and o not in inputs and not isinstance(ctx.types[o], Static):
                    inputs.append(o)
        s.inputs = inputs
