"""Choose between a compiled specialization and the block's original Python by measuring both.

Where two backends can run the same work, measure on first use and remember the choice with the
cache entry. A kernel is not always faster: libm calls such as float32 ``exp`` are scalar in a kernel
but SIMD in numpy, and a one-op fragment gains nothing from fusion. The first call returns what the
code chosen returns, as every later call does (a float32 sum accumulates in float64 in a kernel: where
a difference cancels, the two results differ visibly). When the block writes into arrays (``out[i] =
a[i] * 2.0`` in a loop), the timed runs work on copies of them and the chosen code then runs on the
user's arrays, so they see each effect once. Blocks that write into arrays too large to copy cheaply,
or that receive other mutable objects, keep the compiled code unmeasured, unless it applies a
function over arrays that numpy's own loop runs vectorized where the kernel calls the C library per
element (then the block's Python, by rule). Only the arrays the block
may write are copied (``written_inputs``): a statement writing a slab of one large array while reading
two others (``out[:, :, k] = c * (a[:, :, k] - b[:, :, k])``) copies ``out`` alone.
"""

import contextlib
import time

import numpy as np

from ..graph.ops import OPS
from ..graph.ops.reductions import ARG_REDUCTIONS
from . import disk_cache, persisted
from .fpstate import silenced

SHORT = 1e-3          # below this, repeat runs and keep the best (timer noise dominates otherwise)
# A block without in-place effects is timed in batches of calls lasting about this long: single calls
# of a microsecond are at the timer's resolution, and a tiny kernel was chosen over a numpy call that
# ran faster in a loop.
BATCH = 2e-5
MAX_BATCH = 1000
# The faster of the two, as measured (best of several runs each, interleaved): a tie goes to Python. A
# margin in the kernel's favour kept kernels that measured up to 10% slower (a Fortran-ordered array,
# which a kernel hands back to numpy, ran 1.1x slower than numpy for good).
MARGIN = 1.0
# What a call of the compiled code costs beyond its timed run: the Fragment's dispatch, which the
# block's Python, once chosen, skips (the rewritten function runs its statements inline). Without it a
# loop's block measured 1.23 us compiled against 1.36 us as Python kept its kernel, and ran 0.76x plain
# Python (Horner's rule from ``y = 0.0`` over 30 coefficients on 1,000 floats).
DISPATCH_COST = 3e-7


LONG = 5e-2          # above this, one timed run each: measuring must not cost more than the work
COPY_BYTES = 1 << 25  # a block writing into more array bytes than this is not measured (copies cost)
_FAILED = object()    # the warm-up run raised
_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype, type, slice, range)


def written_inputs(ctx):
    """Positions of the block's inputs that its in-place updates may write: every input an updated
    array is computed from (a view chain such as ``out[1:, k]``, and conservatively anything else it
    reads); None where the block's types are not known (every array)."""
    if ctx is None:
        return None
    return _inputs_reached(ctx, [node.args[0] for node in ctx.effects])


def _inputs_reached(ctx, nodes) -> set:
    """Positions of the block's inputs that ``nodes`` are computed from."""
    seen, todo, reached = set(), list(nodes), set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node in ctx.input_index:
            reached.add(ctx.input_index[node])
        todo.extend(node.operands)
    return reached


def _rerunnable(ctx, args) -> bool:
    """Whether running the block again on ``args`` changes nothing more: its only effects are item
    assignments (``out[i] = a * 2.0 + 1.0``) whose values and indices read none of the arrays written
    (nor, at this call, an array sharing memory with one), and its other arguments are immutable or
    read by its Python alone for plain attributes (``self`` of ``self.buf[i] = ...``, whose attribute
    is an input of its own). Such a block is timed on its own arguments where copies are not possible:
    a method writing a row of ``self.buf``, a row of an array beyond COPY_BYTES (unmeasured, their
    kernel and numpy's item assignment ran 3-5.7x slower than numpy)."""
    if ctx is None or not ctx.effects or any(n.op != "setitem" for n in ctx.effects):
        return False
    written = written_inputs(ctx)
    read = _inputs_reached(ctx, [o for n in ctx.effects for o in n.args[1:]])
    if written & read or _reads_before_writing(ctx, written):
        return False
    used = {id(o) for n in ctx.types for o in n.operands}
    for node, p in ctx.input_index.items():
        a = args[p]
        if type(a) is np.ndarray:
            # (any other array sharing memory with a written one, at this call: ``old = a[i] * 2.0`` with
            # ``a`` the same array as ``out``, or ``self.view`` a view of ``self.buf``, reads the write)
            if p not in written and any(type(args[q]) is np.ndarray and np.may_share_memory(a, args[q])
                                        for q in written):
                return False
        elif not _immutable(a) and id(node) in used:
            return False
    return True


def _copier(args, written=None):
    """A function returning fresh copies of ``args``' arrays that the block may write (positions
    ``written``; None: all), other values as they are, or None when something else could be written or
    the copies would cost too much."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and (written is None or i in written)]
    if sum(args[i].nbytes for i in arrays) > COPY_BYTES:
        return None

    if not all(_immutable(a) for a in args if not isinstance(a, np.ndarray)):
        return None

    def fresh():
        out = list(args)
        for i in arrays:
            out[i] = np.copy(args[i], order="K")
        return out

    return fresh


def _reads_before_writing(ctx, written) -> bool:
    """Whether a value of the block reads an array it writes other than through what the writes
    leave (``old = out[i] * 2.0`` before ``out[i] = ...``: run again, it reads the new row): every
    node that reaches a written input without passing an assignment, but the assignments' targets and
    the views they are taken through."""
    targets = set()
    for n in ctx.effects:
        t = n.args[0]
        while t not in ctx.input_index and OPS.get(t.op) is not None and OPS[t.op].kind == "view":
            targets.add(id(t))
            t = t.args[0]
    memo = {}

    def reaches(node) -> bool:
        if id(node) in memo:
            return memo[id(node)]
        memo[id(node)] = False                       # (a cycle cannot form: the graph is a DAG)
        if node in ctx.input_index:
            found = ctx.input_index[node] in written
        elif node in ctx.effects:
            found = False                            # (what the write leaves: the same at each run)
        else:
            found = any(reaches(o) for o in node.operands)
        memo[id(node)] = found
        return found

    return any(reaches(n) for n in ctx.types
               if n not in ctx.input_index and n not in ctx.effects and id(n) not in targets)


def _immutable(a) -> bool:
    return isinstance(a, _IMMUTABLE) or (type(a) is tuple and all(_immutable(x) for x in a))


def _numpy_loops_faster(spec) -> bool:
    """Whether a kernel of the specialization applies a function over arrays that numpy's own loop
    runs vectorized where the kernel calls the C library per element (``out[:] = np.arctan(a)`` over
    5M float64: 6-9x numpy's time), or reduces along an axis, or to the position of an extreme
    (numpy's SIMD loops: ``self.best[...] = scores.argmax(axis=1)`` over 1000x1000 float32 took 12 ms
    compiled, 0.2 us as Python; ``a.max(axis=0)``, ``a.sum(axis=0)`` 0.25-0.6x): a block that cannot
    be timed keeps its Python there."""
    tvm_nodes = [n for s in getattr(spec, "segments", None) or () if s.backend == "tvm" for n in s.nodes]
    if not tvm_nodes or spec.ctx is None:
        return False
    from ..backends.tvm.support import numpy_loop_faster_in

    return numpy_loop_faster_in(spec.ctx, tvm_nodes) or any(_numpy_reduces_faster(spec.ctx, n) for n in tvm_nodes)


def _numpy_reduces_faster(ctx, node) -> bool:
    """A reduction giving an array (along an axis), or an argmax/argmin."""
    op = OPS.get(node.op)
    if op is None or op.kind != "reduction":
        return False
    if node.op.removeprefix("np.") in ARG_REDUCTIONS:
        return True
    t = ctx.types.get(node)
    return bool(getattr(t, "shape", None)) and not getattr(t, "scalar", True)


def _best(fn, args, repeats, fresh=None, number=1):
    """Best time per run of ``repeats`` batches of ``number`` runs (single runs on ``fresh()`` copies,
    when given); silent (fpstate.silenced: the user sees the real run's warnings)."""
    best = float("inf")
    with silenced():
        for _ in range(repeats):
            run_args = fresh() if fresh is not None else args
            count = 1 if fresh is not None else number
            start = time.perf_counter()
            for _ in range(count):
                fn(*run_args)
            best = min(best, (time.perf_counter() - start) / count)
    return best


def measuring_runner(fragment, spec, key):
    """A runner that, on its first call, times ``spec`` against the fallback and installs the winner."""
    compiled = spec.runner

    raised = [False]        # the last call's warm-up raised: not measured until a call returns

    def first_call(*args):
        if raised[0]:
            # the block's Python until a call returns (a block whose calls keep raising, ``a * (1 / k)``
            # with k = 0 caught by the caller: each paid a warm-up and the real run, 13 us where
            # Python raises in 0.35 us; settled, its next calls run the statements inline, for a
            # while: fragment.settle_python); a pure block's returning call is measured then, one
            # with in-place effects at its next call
            result = fragment.python_runner(*args)
            raised[0] = False
            if spec.effects:
                return result
        fresh = _copier(args, written_inputs(spec.ctx)) if spec.effects else None
        if spec.effects and fresh is None and not _rerunnable(spec.ctx, args):
            if _numpy_loops_faster(spec):               # (a rule instead: numpy's vectorized ufunc loops)
                install(fragment.python_runner, "python")
                return fragment.fallback(*args)
            install(compiled, spec.mode)                # (nothing to measure on: the kernel, unmeasured)
            return compiled(*args)
        # no kernel is written to the disk cache meanwhile (runtime/disk_cache.paused: LLVM and the C
        # compiler in a background thread would take a core from the timed runs)
        with disk_cache.paused():
            # warm-up (thread pool, page faults), on copies of what the block writes; quiet where the
            # block has effects (the run whose effects the user keeps gives the warnings)
            try:
                with silenced() if spec.effects else contextlib.nullcontext():
                    warm = compiled(*(fresh() if fresh is not None else args))
            except Exception:
                warm = _FAILED
            if warm is not _FAILED and not spec.kernel_failed:
                try:
                    python_wins = _python_is_faster(args, fresh)
                except Exception:   # a timed run raising: keep the kernel
                    python_wins = False
        if warm is _FAILED:     # the real run raises it, with the effects Python leaves before it (outside
            raised[0] = True          # the except clause: the user sees their exception alone, unchained)
            return compiled(*args)
        if spec.kernel_failed:   # its compiled code raised (runtime/plan): the block's Python is installed
            return fragment.fallback(*args) if spec.effects else warm
        install(fragment.python_runner if python_wins else compiled, "python" if python_wins else spec.mode)
        # what the code chosen returns, its effects once (the module's docstring says why)
        if python_wins:      # (the block's statements; its next call of this key settles inline)
            return fragment.fallback(*args)
        return compiled(*args) if spec.effects else warm

    def install(runner, mode) -> None:
        if spec.kernel_failed:          # (a compiled part raised as it was timed: Python is installed)
            return
        spec.runner, spec.mode_chosen = runner, mode
        persisted.write_measured(spec)
        if fragment.cache.get(key) is first_call:
            fragment.cache[key] = spec.runner

    first_call.measuring = True     # (not installed as the dispatch of its key: runtime/fragment._promote)

    def _python_is_faster(args, fresh) -> bool:
        t_compiled = _best(compiled, args, 1, fresh)
        if t_compiled >= LONG and _numpy_loops_faster(spec):
            # (timed once each, the Python's run is its first, the kernel's its second: arc distance
            # over 1M float64, sin/cos/arctan2 in a kernel calling the C library per element, kept the
            # kernel at 0.76x numpy's time in 2 runs of 3; the rule of unmeasured blocks decides)
            fragment._record("measured", f"the block's Python runs numpy's vectorized loops where the compiled "
                                         f"{spec.mode} code calls the C library per element: it runs as Python")
            return True
        repeats = 5 if t_compiled < SHORT else (3 if t_compiled < LONG else 1)
        if t_compiled < LONG:
            # the Python's warm-up, as the kernel had one: numpy's first calls after the compile ran
            # 5-8x slower than its steady state (caches, branch predictors), and a kernel slower than
            # numpy (tanh of 1,000 float64: 4.5 us against 3.7 us) measured faster and was kept
            _best(fragment.fallback, args, 1, fresh)
        number = 1 if fresh is not None else max(1, min(MAX_BATCH, int(BATCH / max(t_compiled, 1e-8))))
        if number > 1:    # batches, alternating, so a burst of load hits both sides (the single run
            t_python = t_compiled = float("inf")       # above paid the timer's own cost: not counted)
            for _ in range(repeats):
                t_python = min(t_python, _best(fragment.fallback, args, 1, None, number))
                t_compiled = min(t_compiled, _best(compiled, args, 1, None, number))
        else:
            t_python = _best(fragment.fallback, args, repeats, fresh)
            if repeats > 1:   # interleaved after Python's runs, so a burst of load hits both sides
                t_compiled = min(t_compiled, _best(compiled, args, repeats - 1, fresh))
        spec.measured = (t_compiled, t_python)
        if t_python <= MARGIN * (t_compiled + DISPATCH_COST):
            fragment._record("measured", f"the block's Python ({t_python * 1e6:.1f} us) beat the compiled "
                                         f"{spec.mode} code ({t_compiled * 1e6:.1f} us, "
                                         f"{(t_compiled + DISPATCH_COST) * 1e6:.1f} us with its call): it "
                                         "runs as Python")
            return True
        return False

    return first_call
