"""numpy's pairwise order for the float sums of a straight-line kernel, so they give numpy's bits.

TE lowers a sum to a block ``red[i] = red[i] + x(i, k)`` over reduction loops, which any schedule may
split and reorder. Lowering names the sums numpy adds pairwise ``pairwise...`` (sum_order), the
schedule keeps their reduction loops whole (only the results' loops go parallel), and ``exact_sums``
then replaces each one's reduction loops by numpy's pairwise sum (module pairwise) of the block's
expression, its elements taken in C order over the reduced axes: the eight partial sums of a block
in vector lanes, and a full sum of many elements split into numpy's first subtrees, summed in
parallel, then added in numpy's order.
"""

from contextlib import ExitStack

from . import pairwise
from .float_sums import BUFFER
from .lower import distinct_lets
from .pairwise import BLOCK, STACK
from .runtime import tvm_module
from .scalar_math import dtype_of
from .sum_order import PAIRWISE

tvm = tvm_module()
from tvm import s_tir, tirx  # noqa: E402
from tvm.ir.expr import TensorLoad  # noqa: E402
from tvm.script.ir_builder import IRBuilder  # noqa: E402
from tvm.script.ir_builder import tirx as T  # noqa: E402

I32 = "int32"                # indices (kernels index with int32): a vector of elements loads at once
REDUCE = 2                   # tirx.IterVar.CommReduce
MARK = "astjit_pairwise"     # the annotation of a pairwise sum's outer reduction loop: how it sums
PARALLEL_SUM_MIN = 1 << 16   # elements of one sum above which its subtrees are summed in parallel
#                              (each then holds over 2000 elements: a split, not a block)
SUBTREES = 32                # at most, for a parallel sum
STATIC_LEAVES = 16           # at most, in a sum whose tree is unrolled
# TVM's passes that lower blocks to plain loops (the first of its s_tir pipeline)
BLOCK_PASSES = tvm.transform.Sequential([
    s_tir.transform.CanonicalizeLoop(), s_tir.transform.LowerInitBlock(),
    s_tir.transform.PlanAndUpdateBufferAllocationLocation(), s_tir.transform.ConvertBlocksToOpaque(),
    s_tir.transform.CompactBufferAllocation(), s_tir.transform.LowerMatchBuffer(),
    s_tir.transform.LowerOpaqueBlock()])
# what compiling a function exact_sums made skips: its region analysis shrank the stacks of the sums
# (a while loop's indices) to one element
LOWERED_BLOCKS = ("s_tir.CompactBufferAllocation",)


def exact_sums(func, parallel: bool = False, vectorize: bool = True):
    """``func`` (scheduled) with every ``pairwise`` block's reduction loops replaced by numpy's order;
    ``parallel``: the kernel is large enough for threads (schedule.goes_parallel); ``vectorize``: the
    eight partial sums of a block in vector lanes (not where the kernel wraps integer arithmetic, which
    TVM's vectorizer cannot take: LLVM's may still). The blocks are
    lowered to plain loops first (TVM's block passes, which would misjudge the regions of the sums'
    stacks), the reduction loops marked with what they sum."""
    if not _find_pairwise(func.body, []):
        return func
    func = distinct_lets(func)              # (a peeled loop's copies share Let variables)
    realizes = _find_pairwise(func.body, [])
    sch = s_tir.Schedule(func)
    for realize in realizes:
        block = realize.block
        reduced = [v for iv, v in zip(block.iter_vars, realize.iter_values) if iv.iter_type == REDUCE]
        loops = sch.get_loops(sch.get_sblock(block.name_hint))
        first = next(k for k, loop in enumerate(loops) if any(sch.get(loop).loop_var.same_as(v) for v in reduced))
        if len(loops) - first != len(reduced) or not all(isinstance(v, tirx.Var) for v in reduced):
            raise RuntimeError(f"the schedule split or reordered the loops of {block.name_hint}")
        whole = all(int(iv.dom.extent) == 1 for iv in block.iter_vars if iv.iter_type != REDUCE)
        name = block.name_hint
        kind = "buffered" if name.endswith("_buffered") else \
            "run" + name[name.index("_run") + 4:] if "_run" in name else "parallel" if parallel and whole else "serial"
        sch.annotate(loops[first], MARK, kind)
    lowered = BLOCK_PASSES(tvm.IRModule({"main": sch.mod["main"]}))["main"]
    body = _rewrite(lowered.body, vectorize)
    if _marked(body):
        raise RuntimeError("a pairwise sum was left")
    return lowered.with_body(body)


def _find_pairwise(stmt, out) -> list:
    """The realizes of the ``pairwise`` blocks in ``stmt``, added to ``out``."""
    if isinstance(stmt, s_tir.SBlockRealize):
        if stmt.block.name_hint.startswith(PAIRWISE):
            out.append(stmt)
        _find_pairwise(stmt.block.body, out)
    elif isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            _find_pairwise(s, out)
    elif isinstance(stmt, tirx.IfThenElse):
        _find_pairwise(stmt.then_case, out)
        if stmt.else_case is not None:
            _find_pairwise(stmt.else_case, out)
    elif isinstance(stmt, tirx.For | tirx.AttrStmt | tirx.While):
        _find_pairwise(stmt.body, out)
    return out


def _rewrite(stmt, lanes):
    """``stmt`` with each marked loop nest replaced by its pairwise sum."""
    if isinstance(stmt, tirx.For):
        if MARK in stmt.annotations:
            return _pairwise_stmt(stmt, str(stmt.annotations[MARK]), lanes)
        body = _rewrite(stmt.body, lanes)
        if body.same_as(stmt.body):
            return stmt
        return tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body, stmt.thread_binding,
                        stmt.annotations, stmt.step)
    if isinstance(stmt, tirx.SeqStmt):
        seq = [_rewrite(s, lanes) for s in stmt.seq]
        return stmt if all(a.same_as(b) for a, b in zip(seq, stmt.seq)) else tirx.SeqStmt(seq)
    if isinstance(stmt, tirx.IfThenElse):
        then = _rewrite(stmt.then_case, lanes)
        other = _rewrite(stmt.else_case, lanes) if stmt.else_case is not None else None
        if then.same_as(stmt.then_case) and (other is None or other.same_as(stmt.else_case)):
            return stmt
        return tirx.IfThenElse(stmt.condition, then, other)
    if isinstance(stmt, tirx.AttrStmt):
        body = _rewrite(stmt.body, lanes)
        return stmt if body.same_as(stmt.body) else tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body)
    if isinstance(stmt, tirx.While):
        body = _rewrite(stmt.body, lanes)
        return stmt if body.same_as(stmt.body) else tirx.While(stmt.condition, body)
    return stmt


def _marked(stmt) -> bool:
    if isinstance(stmt, tirx.For):
        return MARK in stmt.annotations or _marked(stmt.body)
    if isinstance(stmt, tirx.SeqStmt):
        return any(_marked(s) for s in stmt.seq)
    if isinstance(stmt, tirx.IfThenElse):
        return _marked(stmt.then_case) or (stmt.else_case is not None and _marked(stmt.else_case))
    if isinstance(stmt, tirx.AttrStmt | tirx.While):
        return _marked(stmt.body)
    return False


def _pairwise_stmt(loop, kind, lanes):
    """numpy's pairwise sum of a lowered reduction's update over its loops (``loop`` and the loops
    nested in it, in C order), stored where the update stores."""
    loops, stmt = [], loop
    while isinstance(stmt, tirx.For):
        loops.append(stmt)
        stmt = stmt.body
    updates = [s for s in (stmt.seq if isinstance(stmt, tirx.SeqStmt) else [stmt])
               if not isinstance(s, tirx.IfThenElse)]            # (the init, at the first element)
    update = updates[-1] if len(updates) == 1 else None
    if not (isinstance(update, tirx.BufferStore) and isinstance(update.value, tirx.Add)
            and isinstance(update.value.a, TensorLoad) and update.value.a.source.same_as(update.buffer)):
        raise RuntimeError("unexpected body of a pairwise sum")
    element = update.value.b
    dtype = update.buffer.dtype
    if any(int(f.min) != 0 for f in loops):
        raise RuntimeError("a pairwise sum's loop does not start at 0")
    run = int(kind.removeprefix("run")) if kind.startswith("run") else len(loops)
    outer, inner = loops[:len(loops) - run], loops[len(loops) - run:]
    n = 1
    for f in inner:
        n *= int(f.extent)
    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name("pairwise")
            if kind == "buffered":
                x = _elements(element, inner, {})
                total = pairwise.pairwise_sum(x, tirx.const(n, I32), dtype, _bind, BUFFER, lanes, index=I32)
            elif outer:                    # the runs' sums added in order, from 0.0
                zero = _bind(tirx.const(0.0, dtype), dtype)
                acc = T.alloc_buffer((1,), dtype, scope="global")
                T.buffer_store(acc, zero, [0])
                with ExitStack() as nest:
                    at = {f.loop_var: nest.enter_context(T.serial(f.min, f.extent)) for f in outer}
                    part = _known_length_sum(_elements(element, inner, at), n, dtype, zero, lanes)
                    T.buffer_store(acc, acc[0] + part, [0])
                total = acc[0]
            else:
                zero = _bind(tirx.const(0.0, dtype), dtype)    # (a local: TVM would fold 0.0 + s to s)
                x = _elements(element, inner, {})
                part = _parallel_sum(x, n, dtype, lanes) if kind == "parallel" and n > PARALLEL_SUM_MIN else \
                    _known_length_sum(x, n, dtype, zero, lanes)
                total = _bind(zero + part, dtype)
            T.buffer_store(update.buffer, total, update.indices)
    return ib.get().body


def _elements(element, loops, fixed):
    """``x(k)``: the element at ``k`` (+ ``lane``: ``x(k, lane)``) in C order over ``loops``, the
    variables of ``fixed`` at their values there: a flat index into every buffer that the loops index
    as their last axes, or the loops' values from it."""
    names = [f.loop_var for f in loops]
    extents = [int(f.extent) for f in loops]
    flat = len(loops) == 1 or _read_as_flat(element, names, extents)

    def x(k, lane=None):
        if flat:
            values = [tirx.const(0, I32)] * (len(loops) - 1) + [k if lane is None else k + lane]
        elif lane is not None and extents[-1] % 8 == 0:   # (``k`` a multiple of 8: one row for all lanes)
            values = _unflattened(k, extents)
            values[-1] = values[-1] + lane
        else:
            values = _unflattened(k if lane is None else k + lane, extents)
        at = {var: v if dtype_of(var) == I32 else v.astype(dtype_of(var)) for var, v in zip(names, values)}
        at.update({var: v if dtype_of(var) == dtype_of(v) else v.astype(dtype_of(var)) for var, v in fixed.items()})
        return _substituted(element, at)

    return x


def _substituted(expr, values: dict):
    """``expr`` with the variables of ``values`` replaced by their values (TVM's PrimFunc.specialize does
    it for a function's parameters). A Let would do too, but a vectorized load of a Let-bound index
    is a gather of its lanes one by one."""
    func = tirx.PrimFunc(list(values), tirx.Evaluate(expr))
    return func.specialize(values).body.value


def _unflattened(k, extents):
    """The loops' values at flat index ``k`` (C order)."""
    values = []
    for extent in reversed(extents):
        values.append(tirx.floormod(k, tirx.const(extent, I32)))
        k = tirx.floordiv(k, tirx.const(extent, I32))
    return values[::-1]


def _read_as_flat(expr, names, extents) -> bool:
    """Whether every load in ``expr`` that depends on the loops ``names`` indexes its buffer's last axes
    with exactly those loops (of the buffer's extents there): then index ``k`` of the last loop, the
    others 0, reads the k-th element in C order (its buffer flattened), without dividing ``k``."""
    ok = True

    def visit(e):
        nonlocal ok
        if not ok or e is None:
            return
        if isinstance(e, TensorLoad):
            indices = list(e.indices)
            tail = indices[len(indices) - len(names):]
            if any(_uses(i, names) for i in indices):
                shape = [int(d) if isinstance(d, tirx.IntImm) else None for d in e.source.shape]
                if len(indices) < len(names) or not all(i.same_as(v) for i, v in zip(tail, names)) \
                        or any(_uses(i, names) for i in indices[:len(indices) - len(names)]) \
                        or shape[len(shape) - len(names):] != list(extents):
                    ok = False
            return
        if isinstance(e, tirx.Var) and any(e.same_as(v) for v in names):     # (a use outside an index)
            ok = False
            return
        children = _children(e)
        if children is None:
            ok = False
            return
        for c in children:
            visit(c)

    visit(expr)
    return ok


def _uses(expr, names) -> bool:
    if isinstance(expr, tirx.Var):
        return any(expr.same_as(v) for v in names)
    children = _children(expr)
    return children is None or any(_uses(c, names) for c in children)


def _children(e):
    """The operands of an expression node; None for a node of a kind not known here."""
    if isinstance(e, tirx.Var | tirx.IntImm | tirx.FloatImm):
        return []
    if isinstance(e, TensorLoad):
        return list(e.indices)
    if isinstance(e, tirx.Let):
        return [e.value, e.body]
    if isinstance(e, tirx.Select):
        return [e.condition, e.true_value, e.false_value]
    if isinstance(e, tirx.Cast):
        return [e.value]
    if hasattr(e, "a") and hasattr(e, "b"):
        return [e.a, e.b]
    if isinstance(e, tirx.Not):
        return [e.a]
    if hasattr(e, "op") and hasattr(e, "args"):          # a call: an intrinsic or reinterpret
        return list(e.args)
    return None


def _known_length_sum(x, n, dtype, zero, lanes):
    """numpy's ``pairwise_sum`` of ``n`` elements (known here) as an expression: only the code its
    length takes; a tree of up to STATIC_LEAVES blocks unrolled (no stack to walk, and the blocks'
    chains of additions independent of each other, for the processor to overlap)."""
    out = T.alloc_buffer((1,), dtype, scope="global")
    if n < 8:
        T.buffer_store(out, zero, [0])
        with T.serial(tirx.const(0, I32), tirx.const(n, I32)) as k:
            T.buffer_store(out, out[0] + x(k), [0])
        return out[0]
    if n > STATIC_LEAVES * BLOCK // 2:
        pairwise.split_sums(x, tirx.const(n, I32), dtype, out, _bind, lanes, index=I32)
        return out[0]
    tree = _subtrees(0, n, depth=STACK)
    leaves = []
    _leaves(tree, leaves)
    parts = []
    for lo, count in leaves:
        part = T.alloc_buffer((1,), dtype, scope="global")
        pairwise.block_sum(x, tirx.const(lo, I32), tirx.const(count, I32), dtype, part, _bind, lanes, index=I32)
        parts.append(part[0])
    return _combined(tree, parts, leaves)


def _parallel_sum(x, n, dtype, lanes):
    """numpy's pairwise sum of ``n`` elements, its first subtrees (numpy's own splits, found here)
    summed in parallel, then added as numpy adds them."""
    tree = _subtrees(0, n, depth=(SUBTREES - 1).bit_length())
    leaves = []
    _leaves(tree, leaves)
    parts = T.alloc_buffer((len(leaves),), dtype, scope="global")
    with T.parallel(0, len(leaves)) as j:
        lo, count = tirx.const(leaves[-1][0], I32), tirx.const(leaves[-1][1], I32)
        for start, length in reversed(leaves[:-1]):
            at = tirx.EQ(j, tirx.const(leaves.index((start, length)), dtype_of(j)))
            lo = tirx.Select(at, tirx.const(start, I32), lo)
            count = tirx.Select(at, tirx.const(length, I32), count)
        lo, count = _bind(lo, I32), _bind(count, I32)
        part = T.alloc_buffer((1,), dtype, scope="global")             # (every subtree above BLOCK)
        pairwise.split_sums(lambda k, *lane: x(lo + k, *lane), count, dtype, part, _bind, lanes, index=I32)
        T.buffer_store(parts, part[0], [j])
    return _combined(tree, parts, leaves)


def _subtrees(lo, n, depth):
    """numpy's split of ``n`` elements from ``lo``, ``depth`` levels deep: a leaf ``(lo, n)`` or a pair."""
    if depth == 0 or n <= BLOCK:
        return (lo, n)
    half = n // 2
    half -= half % 8
    return [_subtrees(lo, half, depth - 1), _subtrees(lo + half, n - half, depth - 1)]


def _leaves(tree, out):
    if isinstance(tree, tuple):
        out.append(tree)
    else:
        for t in tree:
            _leaves(t, out)


def _combined(tree, parts, leaves):
    if isinstance(tree, tuple):
        return parts[leaves.index(tree)]
    return _combined(tree[0], parts, leaves) + _combined(tree[1], parts, leaves)


def _bind(expr, dtype):
    buf = T.alloc_buffer((1,), dtype, scope="global")
    T.buffer_store(buf, expr, [0])
    return buf[0]
