"""Cut a specialized graph into segments, each run by one backend, in an order numpy would accept.

Each node goes to the first backend in the device's ordered list that supports it (registry). Nodes
are visited in statement order; consecutive nodes of one backend form one segment (one fused kernel). A
node of the reference backend (numpy) ends the open compiled segment unless it is pure and reads nothing
from it, in which case it runs just before that segment (Python scalar arithmetic between array
statements does not split a kernel). Effects (in-place updates) always stay in place, so reads and
writes of a mutated array keep their order. Views and fresh arrays are *duplicable*: fused into kernels
as index maps or constants, and made by the reference backend when their value is needed outside the
kernel, so a live-out view stays a view of its base. In a block that reads arrays, a compiled segment
that does no work on arrays (arithmetic on scalars such as ``-r[0]``, allocations) runs on the
reference backend instead: its kernel was compiled again for each new shape of those arrays (30 ms
each), to save less than a microsecond of numpy's scalar arithmetic, if anything.
"""

from ..errors import Unsupported
from ..graph.ops import OPS
from ..graph.types import ArrayType, Static
from .contract import Segment

DUPLICABLE = ("view", "creation")
WORK = ("elementwise", "reduction", "linalg", "effect")      # kinds of ops that may work on arrays
SCALAR_WORK_REASON = "scalar work only: numpy's is faster than a kernel call"


def partition(ctx, graph, backends) -> tuple[list[Segment], dict]:
    """Segments in execution order and, per node the reference backend runs, why the compiled
    backends did not take it. ``backends``: the ones to ask, in order (the last may be the reference).

    Raises:
        Unsupported: a node no backend runs (on a device without a reference backend).
    """
    work = [n for n in graph.nodes if n.op not in ("input", "const") and not isinstance(ctx.types[n], Static)]
    reasons, owner = {}, {}
    compiled = [b for b in backends if not b.reference]
    for n in work:
        why = []
        for b in backends:
            reason = _asked(b, ctx, n)
            if reason is None:
                owner[n] = b
                break
            why.append(reason if len(compiled) == 1 else f"{b.name}: {reason}")
        else:
            raise Unsupported(f"no backend for {ctx.device} runs {n.op} ({'; '.join(why) or 'none is available'})")
        if owner[n].reference:
            reasons[n] = "; ".join(why) if why else "no compiling backend is in use"

    reference = next((b for b in backends if b.reference), None)
    segments, kinds = _segments(ctx, work, owner)
    idle = [s for s in segments if not kinds[s].reference and not _works_on_arrays(ctx, s)]
    if idle and reference is not None and _takes_arrays(ctx, graph):
        for n in (n for s in idle for n in s.nodes):
            owner[n] = reference
            reasons[n] = SCALAR_WORK_REASON
        segments, kinds = _segments(ctx, work, owner)
    _assign_outputs(ctx, graph, segments, kinds, reference)
    for s in segments:
        s.reference = kinds[s].reference
    return [s for s in segments if s.nodes and (s.outputs or s.reference)], reasons


def _segments(ctx, work, owner) -> tuple[list, dict]:
    """Consecutive nodes of one backend as segments (and each segment's backend object)."""
    segments: list[Segment] = []
    kinds: dict = {}
    for n in work:
        backend = owner[n]
        last = segments[-1] if segments else None
        if last is not None and kinds[last] is backend:
            last.nodes.append(n)
            continue
        if backend.reference and last is not None and not kinds[last].reference and _can_run_before(ctx, n, last):
            before = segments[-2] if len(segments) > 1 and kinds[segments[-2]] is backend else None
            if before is None:
                before = Segment(backend.name)
                kinds[before] = backend
                segments.insert(len(segments) - 1, before)
            before.nodes.append(n)
            continue
        seg = Segment(backend.name, [n])
        kinds[seg] = backend
        segments.append(seg)
    return segments, kinds


def _is_array(ctx, node) -> bool:
    """Whether ``node``'s value is an array of one or more axes."""
    t = ctx.types.get(node)
    return isinstance(t, ArrayType) and t.ndim > 0


def _takes_arrays(ctx, graph) -> bool:
    """Whether the block reads an array of one or more axes: its specializations are then per shape,
    each compiled anew."""
    return any(n.op == "input" and _is_array(ctx, n) for n in graph.nodes)


def _works_on_arrays(ctx, segment) -> bool:
    """Whether an arithmetic, reduction, matrix or in-place op of the segment reads or makes an array
    of one or more axes (a store of a scalar into an element is not such work)."""
    return any(OPS[n.op].kind in WORK and n.op != "setitem"
               and (_is_array(ctx, n) or any(_is_array(ctx, o) for o in n.operands)) for n in segment.nodes)


def _asked(backend, ctx, node) -> str | None:
    """``backend.supports``; a backend that raises declines, with the error as its reason."""
    try:
        return backend.supports(ctx, node)
    except Exception as exc:
        return f"its supports() raised {type(exc).__name__}: {exc}"


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


def _assign_outputs(ctx, graph, segments, kinds, reference) -> None:
    """Duplicable nodes needed outside a compiled segment are made again by the reference backend right
    after it (the kernel keeps fusing them for its own use); then every segment gets its outputs and its
    inputs. Without a reference backend (a GPU), a view needed outside a kernel cannot stay a view: the
    block runs as Python."""
    used = _used_outside(segments, graph)
    kernel_outputs = {}
    result = []
    for s in segments:
        result.append(s)
        if kinds[s].reference:
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
        if post and reference is None:
            raise Unsupported(f"{post[0].op} makes a view or a new array needed outside the kernel, and no "
                              f"backend on {ctx.device} makes one")
        if not needed:
            if reference is not None:                  # only views/creations: numpy makes them for free
                s.backend = reference.name
                kinds[s] = reference
            continue
        kernel_outputs[s] = needed
        if post:
            order = {n: i for i, n in enumerate(s.nodes)}
            tail = Segment(reference.name, sorted(post, key=order.get))
            kinds[tail] = reference
            result.append(tail)
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
