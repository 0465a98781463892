"""A generic CPU schedule for fragment kernels (tvm-notes section 2).

Inline injective stages (not the stages lower._staged keeps to bound compile time), vectorize the innermost loop by 8 lanes with the tail peeled (static shapes:
no per-lane predicate), split other reductions (max, any, int sums: no order to keep) into partial
results (rfactor), and
run the outer loop in parallel only for kernels with enough work: on a small one the thread-pool
wake-up (about 5 us) costs more than it saves. Work is elements weighted by the cost of their math: an
``exp`` or ``log`` costs about ten times an add, so such kernels go parallel at a tenth of the size.
Kernels shaped like softmax (row reductions feeding an elementwise output) are scheduled row by row
instead (``_by_rows``), reductions keeping the last axis column by column (``_by_columns``); sums in
numpy's pairwise order keep their reduction loops for exact_sums (``_pairwise_rows``). If a
schedule primitive fails, retry without the reduction schedule, then give up and keep the unscheduled
(correct, slower) function.
"""

from .runtime import tvm_module
from .sum_order import PAIRWISE

tvm = tvm_module()
from tvm import s_tir, tirx  # noqa: E402
from tvm.s_tir import dlight as dl  # noqa: E402

PARALLEL_MIN_WORK = 1 << 20       # elements x cost per element (1: adds and multiplies)
COLUMN_BLOCK = 256                # columns per thread's block, a reduction keeping a last axis not a multiple of 8
MATH_COST = 10                    # per element, of each transcendental function (exp, log, sin...)


def _extent(sch, loop):
    e = sch.get(loop).extent
    return int(e) if isinstance(e, tirx.IntImm) else None


def _spatial(sch, loops, vec, parallel, vectorize=True):
    if not loops:
        return
    *outer, inner = loops
    ext = _extent(sch, inner)
    if ext is not None and ext % vec and ext > vec:
        inner = sch.loop_partition(inner, [ext - ext % vec, None])[0]
    if ext is None or ext >= vec:
        inner, lanes = sch.split(inner, [None, vec])
        _vectorize(sch, vectorize, lanes)
    if parallel:
        sch.parallel(sch.fuse(*outer) if len(outer) > 1 else (outer[0] if outer else inner))


def _reduction(sch, blk, n_spatial, vec, parallel, chunks=16, vectorize=True):
    loops = sch.get_loops(blk)
    s_loops, r_loops = loops[:n_spatial], loops[n_spatial:]
    r = sch.fuse(*r_loops) if len(r_loops) > 1 else r_loops[0]
    if all(_extent(sch, loop) == 1 for loop in s_loops):          # full reduction: chunks x lanes
        c, ro, v = sch.split(r, [chunks, None, vec])
        sch.reorder(c, v, ro)
        rf = sch.rfactor(sch.fuse(c, v), 0)
        cv, ro2 = sch.get_loops(rf)[-2:]
        c2, v2 = sch.split(cv, [chunks, vec])
        sch.reorder(c2, ro2, v2)
        if parallel:
            sch.parallel(c2)
        _vectorize(sch, vectorize, v2)
        sch.decompose_reduction(rf, ro2)
        return
    if n_spatial > 1:
        sch.fuse(*s_loops)
    _, kv = sch.split(r, [None, vec])
    rf = sch.rfactor(kv, 1)
    rl = sch.get_loops(rf)
    if parallel:
        sch.parallel(rl[0])
    _vectorize(sch, vectorize, rl[-1])
    sch.decompose_reduction(rf, rl[1])
    sch.reverse_compute_at(blk, rl[0])


def _by_columns(sch, blk, n_spatial, vec, parallel, vectorize=True) -> bool:
    """A reduction keeping the input's last axis (``a.sum(axis=0)``, lowered as "col..."): the reduced
    axes outside, the kept last axis inside in vector lanes, so each step adds a row of the input to a
    row of sums, as numpy adds them (in numpy's order), also where the kernel is not vectorized (its
    int arithmetic wraps) or rows are not a multiple of the lanes. False where it does not apply."""
    if not sch.get(blk).name_hint.startswith("col") or n_spatial < 1:
        return False
    loops = sch.get_loops(blk)
    s_loops, r_loops = loops[:n_spatial], loops[n_spatial:]
    if not r_loops:
        return False
    ext = _extent(sch, s_loops[-1])
    if ext is None or ext % vec or not vectorize:
        # rows added whole, in order, all the same: an rfactor split would add each column's elements
        # in another order than numpy's (1 to 1000 ulp off); LLVM vectorizes the row's loop itself
        # where it can
        # (in parallel, in blocks of COLUMN_BLOCK columns for the threads; serial, the row whole: a
        # block's bound test in the inner loop halved the speed of a small kernel)
        outer, inner = sch.split(s_loops[-1], [None, COLUMN_BLOCK]) \
            if parallel and ext is not None and ext > COLUMN_BLOCK else (None, s_loops[-1])
        kept_outside = [*s_loops[:-1]] + ([outer] if outer is not None else [])
        sch.reorder(*kept_outside, *r_loops, inner)
        if parallel and kept_outside:
            sch.parallel(sch.fuse(*kept_outside) if len(kept_outside) > 1 else kept_outside[0])
        sch.decompose_reduction(blk, r_loops[0])
        return True
    outer, lanes = sch.split(s_loops[-1], [None, vec])
    sch.reorder(*s_loops[:-1], outer, *r_loops, lanes)
    if parallel:
        sch.parallel(sch.fuse(*s_loops[:-1], outer) if len(s_loops) > 1 else outer)
    init = sch.decompose_reduction(blk, r_loops[0])
    sch.vectorize(sch.get_loops(init)[-1])
    sch.unroll(lanes)                    # (TVM cannot vectorize a reduction's update: LLVM's SLP does)
    return True


def _schedule(func, vec, reductions, parallel, vectorize=True):
    sch = s_tir.Schedule(func)
    infos = dl.normalize_prim_func(sch)
    if infos is None:
        return func
    if any(_is_stage(sch, i) for i in infos):
        rest = _inline_around_stages(sch, infos)
    else:
        rest = dl.try_inline_contiguous_spatial(sch, infos)
    for info in rest:
        kinds = info.dom_kind()
        n_s = len(kinds) - len(kinds.lstrip("S"))
        if reductions and "R" in kinds and kinds == "S" * n_s + "R" * (len(kinds) - n_s):
            if _is_pairwise(sch, info.block_rv):
                _pairwise_rows(sch, info.block_rv, n_s, parallel)
            elif not _by_columns(sch, info.block_rv, n_s, vec, parallel, vectorize):
                _reduction(sch, info.block_rv, n_s, vec, parallel, vectorize=vectorize)
    for info in rest:
        if "R" not in info.dom_kind():
            _spatial(sch, sch.get_loops(info.block_rv), vec, parallel, vectorize)
    return sch.mod["main"]


def _is_pairwise(sch, block) -> bool:
    """A sum exact_sums gives numpy's pairwise order: its reduction loops stay whole, in order."""
    return sch.get(block).name_hint.startswith(PAIRWISE)


def _pairwise_rows(sch, blk, n_spatial, parallel):
    """A pairwise sum's results (rows) in parallel; each one's sum is exact_sums'."""
    s_loops = sch.get_loops(blk)[:n_spatial]
    if parallel and s_loops and any(_extent(sch, loop) != 1 for loop in s_loops):
        sch.parallel(sch.fuse(*s_loops) if len(s_loops) > 1 else s_loops[0])


def _is_stage(sch, info) -> bool:
    return sch.get(info.block_rv).name_hint.startswith("stage")


def _inline_around_stages(sch, infos):
    """dlight's inlining of injective blocks, keeping the stages of lower._staged: they are neither
    inlined into their readers nor the target of a reverse inline (which would put their readers'
    expressions back into theirs). Returns the blocks left, in order."""
    candidates = [i for i in infos if i.is_injective() and not _is_stage(sch, i)]

    def reverse_inline(block):
        if any(sch.get(p).name_hint.startswith("stage") for p in sch.get_producers(block)):
            raise ValueError("a stage's reader stays a loop of its own")
        sch.reverse_compute_inline(block)

    inlined = True
    while inlined:
        inlined = False
        for inline in (sch.compute_inline, reverse_inline):
            for info in candidates:
                try:
                    inline(info.block_rv)
                except Exception:  # tvm ScheduleError: this block stays
                    continue
                candidates.remove(info)
                inlined = True
                break
            if inlined:
                break
    return [i for i in infos if i in candidates or not i.is_injective() or _is_stage(sch, i)]


def _extents(sch, block):
    return [_extent(sch, loop) for loop in sch.get_loops(block)]


def _by_rows(func, vec, parallel, vectorize=True):
    """Softmax's shape of kernel, row by row: one output over (rows, n), reductions of each row over
    its last axis, and kept stages (lower._kept) of the output's shape. Every reduction and kept
    stage is computed inside the output's row loop, so a row is read from memory once and its kept
    values (the exponentials) are computed once, in a row buffer; the rows run in parallel. None when
    the kernel has another shape."""
    sch = s_tir.Schedule(func)
    infos = dl.normalize_prim_func(sch)
    if infos is None:
        return None
    name = {info.block_rv: sch.get(info.block_rv).name_hint for info in infos}
    outputs = [i for i in infos if name[i.block_rv].startswith("out")]
    kept = [i for i in infos if name[i.block_rv].startswith(("keep", "stage"))]
    if len(outputs) != 1 or not kept:
        return None
    for info in infos:
        if info not in outputs and info not in kept and set(info.dom_kind()) == {"S"}:
            sch.compute_inline(info.block_rv)          # raises where it cannot: the generic schedule then
    infos = dl.normalize_prim_func(sch)
    out = next(i.block_rv for i in infos if sch.get(i.block_rv).name_hint.startswith("out"))
    shape = _extents(sch, out)
    if len(shape) < 2 or None in shape or shape[-1] % vec:
        return None
    rows, n = shape[:-1], shape[-1]
    reductions = []
    for info in infos:
        block, kinds = info.block_rv, info.dom_kind()
        if block == out:
            continue
        extents = _extents(sch, block)
        if kinds == "S" * len(rows) + "R" and extents == rows + [n]:
            reductions.append(block)
        elif not (set(kinds) == {"S"} and extents == shape and sch.get(block).name_hint.startswith(("keep", "stage"))):
            return None
    factored = {}
    for block in reductions:
        if _is_pairwise(sch, block):           # (exact_sums sums each row)
            continue
        _, lanes = sch.split(sch.get_loops(block)[-1], [None, vec])
        factored[block] = sch.rfactor(lanes, len(rows))
    out_loops = sch.get_loops(out)
    row = sch.fuse(*out_loops[:-1]) if len(rows) > 1 else out_loops[0]
    producers = [i.block_rv for i in infos if i.block_rv != out]
    for block in reversed(producers):
        sch.compute_at(block, row, preserve_unit_loops=False)
        if block in factored:
            sch.compute_at(factored[block], row, preserve_unit_loops=False)
    if parallel:
        sch.parallel(row)
    for block in [out] + [b for b in producers if b not in factored and not _is_pairwise(sch, b)]:
        _, lanes = sch.split(sch.get_loops(block)[-1], [None, vec])
        _vectorize(sch, vectorize, lanes)
    for rf in factored.values():
        lanes, chunk = sch.get_loops(rf)[-2:]
        sch.reorder(chunk, lanes)
        _vectorize(sch, vectorize, lanes)
        sch.decompose_reduction(rf, chunk)
    return sch.mod["main"]


def _vectorize(sch, enabled, loop):
    if enabled:
        sch.vectorize(loop)


def goes_parallel(elements: int, math_ops: int = 0) -> bool:
    """Whether a kernel has enough work for threads."""
    return elements * (1 + MATH_COST * math_ops) >= PARALLEL_MIN_WORK


def schedule_cpu(func, elements: int, vec: int = 8, math_ops: int = 0, vectorize: bool = True):
    """``math_ops``: transcendental functions computed per element (each as costly as ``MATH_COST``
    additions). ``vectorize=False`` leaves the lanes' loops serial, for LLVM's loop vectorizer (TVM's
    cannot take the wrapping integer arithmetic of scalar_math.wrapping)."""
    parallel = goes_parallel(elements, math_ops)
    try:
        rows = _by_rows(func, vec, parallel, vectorize)
        if rows is not None:
            return rows, "rows"
    except Exception:  # tvm ScheduleError: the generic schedule below
        pass
    for reductions in (True, False):
        try:
            return _schedule(func, vec, reductions, parallel, vectorize), "scheduled" if reductions else "no-rfactor"
        except Exception:  # tvm InternalError / ScheduleError: try the next, simpler schedule
            continue
    return func, "unscheduled"
