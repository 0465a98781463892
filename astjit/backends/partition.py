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


def _assign_outputs(ctx, graph, segments) -> None:
    owner = {n: s for s in segments for n in s.nodes}
    used_after = {n: False for n in owner}
    for s in segments:
        for n in s.nodes:
            for o in n.operands:
                if o in owner and owner[o] is not s:
                    used_after[o] = True
    for _, n in graph.outputs:
        if n in owner:
            used_after[n] = True

    result = []
    for s in segments:
        if s.backend != "tvm":
            result.append(s)
            continue
        needed = [n for n in s.nodes if used_after[n]]
        post = []
        inside = set(s.nodes)
        todo = list(needed)
        needed = set(needed)
        while todo:
            n = todo.pop()
            if OPS[n.op].kind in DUPLICABLE and n not in post:
                post.append(n)
                needed.discard(n)
                for o in n.operands:
                    if o in inside and o not in needed and o not in post and not isinstance(ctx.types[o], Static):
                        needed.add(o)
                        todo.append(o)
        s.outputs = [n for n in s.nodes if n in needed]
        if not needed:
            s.backend = "numpy"                        # only views/creations: numpy makes them for free
            s.outputs = [n for n in s.nodes if used_after[n]]
            result.append(s)
            continue
        result.append(s)
        if post:
            order = {n: i for i, n in enumerate(s.nodes)}
            post_segment = Segment("numpy", sorted(post, key=order.get))
            post_segment.outputs = [n for n in post_segment.nodes if used_after[n] or n in needed]
            result.append(post_segment)
    segments[:] = result
    # numpy segments: outputs are whatever later segments or the graph read
    owner = {n: s for s in segments for n in s.nodes}
    for s in segments:
        if s.backend == "numpy":
            later = set()
            for t in segments:
                if t is s:
                    continue
                for n in t.nodes:
                    later.update(o for o in n.operands if owner.get(o) is s)
            later.update(n for _, n in graph.outputs if owner.get(n) is s)
            s.outputs = [n for n in s.nodes if n in later]
    for s in segments:
        inside = set(s.nodes)
        seen = []
        for n in s.nodes:
            for o in n.operands:
                if o not in inside and o not in seen and not isinstance(ctx.types[o], Static):
                    seen.append(o)
        s.inputs = seen
