"""A Fragment whose block is a whole loop nest (frontend/loops): one kernel call instead of one
dispatch per iteration.

Its cache key holds each array's dtype, number of axes and C-contiguity, not its extents: the kernel
takes extents, strides and Python numbers as parameters, so a new length reuses it. A kernel that
stopped on a check (backends/tvm/loops) raises what Python would have raised, pointing at the user's
line, with the arrays as Python would have left them.
"""

import functools
import types

import numpy as np

from .. import config
from ..backends.array_views import compact, readable_by_kernel
from ..backends.contract import Compiled, Segment
from ..backends.tvm.float_sums import BUFFER
from ..errors import Unsupported
from . import persisted
from .dispatch import (
    DISJOINT,
    INT64,
    has_odd_strides,
    make_loop_kernel_runner,
    may_share_memory,
    shares_memory,
)
from .fragment import Fragment, Specialization
from .keys import spelled


class _Declined:
    """What the Fragment of a handed-over ``for`` loop (frontend/loop_guard) returns where its kernel
    does not take the arguments, before any effect: the loop's Python goes on from where it is."""

    def __repr__(self):
        return "<the kernel declined: the loop goes on as Python>"


DECLINED = _Declined()


class Returned:
    """What a loop region's Fragment returns where the loop executed ``return``: the rewritten
    function returns ``value`` (the live-out values otherwise)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# arrays a loop writes copied before its kernel's call where it may stop, at most (unless its other arrays
# are larger): about 2 us; 256 KiB cost a loop over ten positions 5 us, twice its Python, and 16 KiB
# left 1000 values counted into 5000 bins with the documented OverflowError
RESTORE_BYTES = 1 << 16
BAILED_RUN_MOST = 64          # calls of the loop's Python after a kernel bailed, at most, before it tries again
INLINE_AFTER_REFUSAL_MOST = 4096   # elements: arrays a broadcast loop runs as written after, at most


class LoopFragment(Fragment):
    key_by = "ndim"

    def make_specialization(self, key, args):
        return specialize_loop(self, key, args)


class RankGenericTwin(LoopFragment):
    """A straight-line block's twin, its statements as a loop of one trip (frontend/rank_generic), run
    by the block's own Fragment (``outer``) for new lengths. Its Python is the block's; where its
    weighing finds that faster, the block's Fragment settles on it, and the rewritten function runs
    the block inline for the next calls (through the twin, each call reached it through a miss of
    the block's Fragment: 0.6-0.75x numpy where its kernel lost). ``taken``: what the block's Python
    takes for the windows a caller may take (frontend/window_views), which the twin does not."""

    def __init__(self, block, outer, taken=()):
        super().__init__(block, outer.filename, outer.owner_name, outer.strict, outer.backend, outer.rules,
                         outer.device)
        self.outer, self.taken = outer, tuple(taken)
        self.fallback = (lambda *a: outer.fallback(*a, *self.taken)) if taken else outer.fallback

    # (its Python is numpy's whole-array work: weighed against its kernel however long that runs,
    # runtime/loop_weighing.weighed_while)

    def _record(self, kind, message, lineno=None):
        """What explain says of the twin, it says of the block."""
        self.outer._record(kind, message, lineno)

    @property
    def python_runner(self):
        outer, taken = self.outer, self.taken
        return (lambda *a: outer.settle_python(*a, *taken)) if taken else outer.settle_python


def loop_segment(prim_func, module) -> Segment:
    """What inspection shows of a compiled loop: its TIR, and its LLVM IR (compiled again, for a
    kernel loaded from the disk cache, whose ``module`` is None)."""

    @functools.cache
    def compiled_module():
        return module if module is not None else compile_loop_kernel(prim_func)

    artifacts = {"tir": prim_func.script, "llvm": lambda: compiled_module().mod.inspect_source("ll")}
    # (compiled again for the LLVM IR: never run, so without the BLAS libraries a kernel may call)
    return Segment("tvm", compiled=Compiled(None, "tvm loop kernel", artifacts), description="tvm loop kernel")


def compile_loop_kernel(func, libraries=()):
    """The compiled kernel; one calling numpy's BLAS (``libraries``: its libraries) runs from a library
    linked against them (backends/tvm/blas.LinkedKernel)."""
    from ..backends.tvm.runtime import compile_module, host_target, tvm_module

    tvm = tvm_module()
    # compacting buffers has nothing to do on one-element scalars and grows with their number
    # times the nesting of the checks: 6.7 s of a 6.8 s compile for the game-of-life kernel
    compiled = compile_module(tvm.IRModule({"main": func}), host_target(),
                              disabled_passes=("s_tir.CompactBufferAllocation",))
    if not libraries:
        return compiled
    from ..backends.tvm.blas import LinkedKernel

    return LinkedKernel(compiled, libraries)


def specialize_loop(fragment, key, args) -> Specialization:
    choice = fragment.backend or config.backend_override() or "auto"
    if choice not in ("auto", "tvm"):          # loop kernels are TVM's
        return Specialization(key, fragment.fallback, "python", f"backend={choice}")
    from ..devices import cuda_index

    if any(cuda_index(a) is not None for a in args):
        raise Unsupported("whole loops compile for the CPU: with arrays on a GPU the loop runs as Python "
                          "(its blocks still compile for the GPU)")
    from ..backends.tvm import get_backend, import_error

    if get_backend() is None:
        raise Unsupported(f"TVM is unavailable ({import_error()})")
    from ..backends.tvm.loop_tuples import scalarized, spelled_items, tuple_items_in_arrays
    from ..backends.tvm.loops import LoopLowering

    block = fragment.block
    tuples = None
    try:
        # (tuples of numbers held in names: each item a scalar of the kernel's, backends/tvm/loop_tuples)
        tuples = scalarized(block.kernel_loop, block.loop_calls, fragment.live_in, fragment.live_out, args,
                            block.unbound_after)
        loop, calls, live_in, live_out, kernel_args, unbound_after = (
            (block.kernel_loop, block.loop_calls, fragment.live_in, fragment.live_out, args, block.unbound_after)
            if tuples is None else (tuples.loop, tuples.calls, tuples.live_in, tuples.live_out, tuples.args,
                                    tuples.unbound_after))
        lowering = LoopLowering(loop, live_in, live_out, kernel_args, calls, block.entry_facts, block.resume_at,
                                block.returns, unbound_after)
        lowered = lowering.lower()
        if tuples is not None:
            tuple_items_in_arrays(tuples, lowering)
    except Unsupported as exc:
        if tuples is not None:
            raise Unsupported(spelled_items(str(exc))) from None
        raise
    except Exception as exc:      # a case the lowering does not foresee: the loop runs as Python, explained
        raise Unsupported(f"astjit could not lower this loop ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    text = persisted.loop_key_text(fragment, lowered.func, lowered.blas_libraries)
    stored = persisted.read_loop_kernel(fragment, text)
    if stored is not None:
        module, main = stored
    else:
        try:
            module = compile_loop_kernel(lowered.func, lowered.blas_libraries)
        except Exception as exc:
            raise Unsupported(f"TVM could not compile this loop ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
        main = module["main"]
        persisted.write_loop_kernel(text, module)
    if tuples is None:
        runner = make_loop_runner(main, lowered, fragment, args)
    else:
        from ..backends.tvm.loop_tuples import fall_back, tuple_runner

        inner = make_loop_runner(main, lowered, fragment, kernel_args, live_in, live_out, fall_back)
        runner = tuple_runner(tuples, fragment.live_in, fragment.live_out, inner, fragment.fallback)
    # (a while's first trips ran as written, and the rest may be fewer than the kernel's call repays; a
    # block's rank-generic twin is weighed against the block's numpy. Not inside a loop of Python's: the
    # run as written that the weighing settles on would cover the rest of that loop, whatever its later
    # trips' classes; a twin's Python settles its block, which handles loops itself. Other for loops
    # are not weighed: their Python's first run compiled the blocks of their body, 50-60 ms at the
    # second call of a whole-array time step, for nothing where the kernel won)
    twin = isinstance(fragment, RankGenericTwin)
    weighed_on_its_values = (block.is_while or twin) and not (
        lowered.stores or lowered.appended or block.declines_inline or fragment.strict or block.in_loop and not twin)
    if (lowered.weigh or lowered.restores or lowered.sequences) and not (block.resume_at or block.declines_inline):
        # (a handed-over loop's Python goes on in the rewritten function, where it cannot be timed)
        from .loop_weighing import CONVERTS_ITS_LISTS, COPIES_ITS_ARRAYS, NUMPY_ROWS, weighed

        if lowered.weigh:
            runner = weighed(runner, fragment.fallback, fragment, args, NUMPY_ROWS)
        elif not lowered.restores:
            runner = weighed(runner, fragment.fallback, fragment, args, CONVERTS_ITS_LISTS)
        else:
            runner = weighed_where_copying(runner, weighed(runner, fragment.fallback, fragment, args,
                                                           COPIES_ITS_ARRAYS))
    elif weighed_on_its_values:
        # (a binary search over 1,000 elements ran at 0.57x plain Python)
        from .loop_weighing import SHORT_TWIN, SHORT_WHILE, weighed_while

        kernel, runner = runner, weighed_while(runner, fragment.fallback, fragment.python_runner, fragment, args,
                                               SHORT_WHILE if block.is_while else SHORT_TWIN,
                                               long_repays=not twin)
    spec = Specialization(key, runner, "tvm", "the whole loop runs as one kernel"
                          + (persisted.LOADED if stored is not None else ""))
    if hasattr(runner, "on_kernel"):       # (weighed_while: once it settles on the kernel, that alone)
        runner.on_kernel.append(lambda: fragment.use_runner(spec, kernel))
    spec.segments = [loop_segment(lowered.func, None if stored is not None else module)]
    spec.loaded_module = module          # (the kernel lives as long as its module)
    spec.loop = lowered
    spec.effects = True
    spec.measure = False         # timing the loop's Python would cost more than the loop
    if stored is None:
        config.log("compiles", "loop kernel for %s line %s", fragment.owner_name, block.lineno)
    return spec


def weighed_where_copying(runner, weighed_runner):
    """The weighed runner for calls whose arrays the runner copies (``runner.copies``), ``runner`` for
    the others: a loop whose written arrays are too large to copy runs its kernel, which stops with the
    documented OverflowError where an int leaves int64 (the loop's Python, run by the weighing at
    some calls only, would make that error come and go)."""
    copies = getattr(runner, "copies", None)
    if copies is None:                 # (a loop over a tuple's items: its runner wraps the kernel's)
        return runner

    def run(*args):
        return (weighed_runner if copies(args) else runner)(*args)
    run.weighed = weighed_runner.weighed
    return run


def make_loop_runner(kernel, lowered, fragment, args, live_in=None, live_out=None, fallback=None):
    """``run(*live_in)``: the kernel over the arguments, returning the live-out values as Python holds
    them; the loop's own Python for values a kernel cannot take (a read-only array it writes, a
    Python int beyond int64, an array it writes that shares memory with another array argument: the
    kernel is compiled as if no two arrays overlap, and Python reads each element after every
    earlier write to it).

    The call goes through generated straight-line code (``runtime/dispatch.make_loop_kernel_runner``) that tests only what
    the kernel's own argument conversion does not: a read-only array, an int beyond int64 or a
    stride the kernel does not take makes that conversion raise before the loop starts, and the call
    then takes ``checked``, which tests each case and falls back or adapts. ``live_in``, ``live_out``
    and ``fallback``: the kernel's where they are not the Fragment's (backends/tvm/loop_tuples)."""
    from ..backends.tvm.loop_arrays import LocalArray
    from ..backends.tvm.loop_lists import NEED_ROOM
    from ..backends.tvm.loop_rotation import RotatedArray
    from ..backends.tvm.loop_types import sequence_converter
    from ..backends.tvm.loops import (
        BAIL,
        RETURNED,
        SLOTS_PER_VALUE,
        STATUS_SIZE,
        result_expressions,
        result_reader,
        status_slot,
    )

    live_in = fragment.live_in if live_in is None else live_in
    arrays = [live_in.index(n) for n in lowered.arrays]
    # a tuple or list the loop reads: an array made at each call (None where its items changed type)
    converters = {live_in.index(n): sequence_converter(seq) for n, seq in lowered.sequences.items()}
    shared = [p for p in arrays if p not in converters]          # (a new array shares nothing)
    written = {live_in.index(n) for n in lowered.stores}
    # the arrays copied before a call and put back where the kernel stops after writing them, at a check
    # where Python goes on (an int beyond int64), with the lengths of the lists it appends to; not where
    # copying them would cost more than reading the other arrays once (a histogram of 100 values into
    # 1,000,000 bins: 284 us a call for 22 us of Python): there the kernel raises the documented
    # OverflowError
    restored = sorted(written) if lowered.restores else []
    others = [p for p in arrays if p not in written]
    lists = [live_in.index(name) for name, _ in lowered.appended]

    snapshot = make_snapshot(restored, others, lists)

    def put_back(args, saved):
        """The arrays and lists as ``snapshot`` found them: the values the kernel appended (the runner
        hands them over however it ended) go, as its writes do."""
        copies, lengths = saved
        for p, copy in zip(restored, copies):
            np.copyto(args[p], copy)
        for p, n in zip(lists, lengths):
            del args[p][n:]
    # after the kernel bailed (an int beyond int64, the loop's Python ran instead) the next calls run the
    # loop's Python straight away, 1, 3, 7... up to BAILED_RUN_MOST calls, then the kernel tries again:
    # a Fibonacci of 100 ran the kernel and then its Python at every call, twice plain Python's time.
    # They run it inline in the rewritten function (Fragment.run_inline): through the Fragment's
    # dispatch and this runner, a Fibonacci of 200 ran at 0.74x plain Python, inline at 0.90x
    bailed = [0, 0]              # (calls left to run as Python, the length of the last such run)
    scalars = [live_in.index(n) for n, _ in lowered.scalars]
    # (position, most elements) of the arrays that must be aligned beyond that size, else the loop's Python
    # runs (backends/tvm/loops): those a BLAS dot reads at any size (-1), those a float sum reads beyond
    # one numpy buffer
    aligned = [(live_in.index(n), -1) for n in lowered.aligned_arrays if n in live_in]
    aligned += [(live_in.index(n), BUFFER) for n in lowered.summed_arrays
                if n in live_in and n not in lowered.aligned_arrays]
    appends = AppendedValues(lowered, live_in, STATUS_SIZE + SLOTS_PER_VALUE * len(lowered.outputs), converters)
    n_out = len(fragment.live_out if live_out is None else live_out)   # (then a ``return``'s values: loop_return)
    read_returned = result_reader(lowered, n_out)
    fallback = fragment.fallback if fallback is None else fallback
    allocate = local_array_allocator(lowered, live_in, lambda: config.log(
        "fallbacks", "loop at %s line %s: arrays of different shapes or layouts", fragment.owner_name,
        fragment.block.lineno))
    copied = [live_in.index(spec.name) for spec in lowered.locals if spec.incoming]
    local_index = {spec.name: j for j, spec in enumerate(lowered.locals)}
    # a live-out array: its local buffer where the loop rebound it, else the argument (also one it
    # updated only in place, ``x += ...``)
    # (a one-trip loop, frontend/rank_generic, always binds its live-outs: none is passed in)
    rebound = [(k, local_index.get(var.name), live_in.index(var.name) if var.name in live_in else None)
               for k, var in enumerate(lowered.outputs[:n_out]) if isinstance(var, LocalArray)]

    compacting = [False]       # (set once an empty or size-1 axis came: make_loop_kernel_runner)
    big_ints = [False]         # (set once an int beyond int64 came: make_loop_kernel_runner)
    odd_strides = [False]      # (set once a stride not a whole number of items came: make_loop_kernel_runner)

    pairs = [(p, q) for p in written for q in shared + copied if q != p]
    logged = []                # (the pairs of names whose sharing was logged)

    def overlapping(args):
        """The loop's Python where an array the loop writes shares an element with another array
        argument (``f(x, x)``); DISJOINT where they only share a stretch of memory (``x[::2]`` and
        ``x[1::2]``: the kernel runs, as for separate arrays; through ``run`` such a call cost 3 us
        more). The generated runner calls it where ``np.may_share_memory`` says they may. Logged once
        per pair of names: through ``run`` and with a reading of ASTJIT_LOG at each call, a declined
        call cost 4 us more than the loop's Python, 5x an 8-element loop's."""
        for p, q in pairs:
            a, b = args[p], args[q]
            if a is b and a.size or _overlap(a, b):
                if (p, q) not in logged:
                    logged.append((p, q))
                    config.log("fallbacks", "loop at %s line %s: arrays %r and %r share memory",
                               fragment.owner_name, fragment.block.lineno, live_in[p], live_in[q])
                    fragment._record("fallback", f"arrays {spelled(live_in[p])!r} and {spelled(live_in[q])!r} "
                                                 "share memory: the loop runs as Python for such calls, which "
                                                 "reads each element after every earlier write to it")
                return fallback(*args)
        return DISJOINT

    def run(*args):                # (a tiny loop never gets here: frontend/loop_guard runs it as written)
        if not all(args[p].flags.aligned or args[p].size <= most for p, most in aligned) \
                or not appends.distinct(args):
            return fallback(*args)
        for p, q in pairs:
            if _overlap(args[p], args[q]):
                shared = overlapping(args)          # (the loop's Python, logged once per pair)
                return fallback(*args) if shared is DISJOINT else shared
        call = []
        for p in arrays:
            if p in converters:
                a = converters[p](args[p])
                if a is None:
                    return fallback(*args)
                call.append(a)
                continue
            a = args[p]
            if not a.flags.writeable and p in written:
                return fallback(*args)            # Python raises at the first write, after its effects
            if has_odd_strides(a):
                # a field of a structured array (12 bytes between float64s): the kernel's conversion
                # refuses it, at an exception's price (17 us a call, 0.44x plain Python, before the
                # generated runner tested it)
                odd_strides[0] = True
                return fallback(*args)
            if a.flags.c_contiguous and (a.size <= 1 or 1 in a.shape):
                a = compact(a)                   # (numpy ignores the strides of an empty or size-1 axis)
                compacting[0] = True             # (the generated runner passes such arrays so from now on)
            if not a.flags.writeable:
                a = readable_by_kernel(a)        # (plain DLPack cannot carry a read-only array)
                compacting[0] = True             # (the generated runner converts such arrays from now on)
            call.append(a)
        local = allocate(args)
        if local is None:                    # (logged by allocate)
            return shapes_refused(*args)
        call += local
        for p in scalars:
            v = args[p]
            if type(v) is int and not INT64.min <= v <= INT64.max:
                big_ints[0] = True
                return fallback(*args)
            v = v.item() if isinstance(v, np.generic) else v
            if type(v) is complex:                # (a complex number goes in as its two parts)
                call += [v.real, v.imag]
            else:
                call.append(v)
        status = np.zeros(appends.size(), np.int64)
        saved = snapshot(args) if restored else None
        try:
            kernel(*call, status)
        except Exception:      # TVM's checks of the arguments, before the loop starts
            config.log("fallbacks", "loop at %s line %s: the kernel refused its arguments", fragment.owner_name,
                       fragment.block.lineno)
            status = None
        if status is None:     # (outside the except clause: the loop's exception is not chained to TVM's)
            return fallback(*args)
        appends.extend(status, memoryview(status), args)
        s = status[:appends.fixed].tolist()
        if s[0]:
            return stopped(s, args, saved)
        return finish(s, args, local)

    # whether the rewritten function may run the loop as written for a few calls (Fragment.run_inline):
    # not in strict mode, not for a tuple loop's inner kernel (its fallback is not the Fragment's), not
    # inside a loop of Python's, where a run as written would cover the rest of that loop (the window
    # would count calls of the function, not runs of this loop)
    runs_inline = not (fragment.strict or fallback is not fragment.fallback or fragment.block.in_loop)
    refusals = [0, 0]           # (the length of the last run of calls as written after a refusal, the
    #                             Fragment's call count then)

    def shapes_refused(*args):
        """The loop's Python where the arrays of a local array's group differ in shape (numpy
        broadcasts): the rewritten function runs the loop as written for the next calls, 1, 3, 7... up
        to BAILED_RUN_MOST while such calls keep coming, then the kernel tries again (through the
        Fragment, the runner and the block's function, a loop of 3 trips over (3, 4) and (3, 1) arrays
        ran 0.57x plain Python). Where the Fragment took other calls since the last refusal (its kernel
        ran them), the runs start again from 1: a broadcast call now and then, growing the runs to 64,
        handed most calls of one shape to the loop's Python (0.4x the kernel's speed). Only for
        small arrays (at most INLINE_AFTER_REFUSAL_MOST elements): with larger ones the Fragment's
        path costs little beside the work, and calls of one shape in between keep their kernel."""
        if runs_inline and all(a.size <= INLINE_AFTER_REFUSAL_MOST for a in args if type(a) is np.ndarray):
            run, at = refusals
            if fragment.calls - at > 1:
                run = 0
            refusals[0] = run = min(2 * run + 1, BAILED_RUN_MOST)
            refusals[1] = fragment.calls
            fragment.run_inline(run)
        return fallback(*args)

    def python_instead(args):
        """The loop's Python, where the kernel stopped where Python goes on; the next few calls run it
        straight away (``bailed``)."""
        bailed[1] = min(2 * bailed[1] + 1, BAILED_RUN_MOST)
        if runs_inline:          # (the rewritten function runs the loop as written: no dispatch, no runner)
            fragment.run_inline(bailed[1])
        else:
            bailed[0] = bailed[1]
        return fallback(*args)

    def stopped(status, args, saved=None):
        """The kernel stopped on a check (``status``: its status buffer as a list of ints): Python's
        exception at the user's line, or the loop's Python where it bailed before any effect, or where
        it stopped at a check where Python goes on after writing the arrays at ``restored`` (``saved``:
        their copies from before the call, put back first)."""
        if status[0] == BAIL:
            return python_instead(args)
        if status[0] == NEED_ROOM:          # (before any effect) a longer buffer for the lists' values
            if not appends.grow(status[1]):
                config.log("fallbacks", "loop at %s line %s: it may append %d values", fragment.owner_name,
                           fragment.block.lineno, status[1])
                return fallback(*args)
            return run(*args)
        if status[0] == RETURNED:
            values = read_returned(status)
            return Returned(None if lowered.returns is None else values[0] if lowered.returns == 1 else tuple(values))
        site = lowered.sites[status[0] - 1]
        if saved is not None and getattr(site.raise_, "python_goes_on", False):
            put_back(args, saved)
            return python_instead(args)
        raise_at(site.raise_(status[1:STATUS_SIZE]), site.filename or fragment.filename,      # (ints: a list's)
                 site.line, site.function or fragment.owner_name,
                 [(f or fragment.filename, line, fn or fragment.owner_name) for f, line, fn in site.callers
                  if line is not None])

    # what the loop leaves, as an expression over the status list ``s``, the local buffers ``local``
    # and the arguments ``a0``, ``a1``...: the generated runner returns it inline, ``finish`` for ``run``
    def result_expression(views):
        """The live-out values, over the status list ``s`` or (``views``) its memoryviews ``q`` and ``d``."""
        items, names = result_expressions(lowered, 0, n_out, views)
        ints = "q" if views else "s"
        for k, j, p in rebound:
            items[k] = (f"a{p}" if j is None else f"local[{j}]" if p is None
                        else f"(local[{j}] if {ints}[{status_slot(k)}] else a{p})")
        for k, var in enumerate(lowered.outputs[:n_out]):
            if isinstance(var, RotatedArray):              # the argument it holds in the final phase
                held = "".join(f"a{live_in.index(m)}, " for m in var.members)
                items[k] = f"({held})[{ints}[{status_slot(k)}]]"
        return ("None" if n_out == 0 else items[0] if n_out == 1 else f"({', '.join(items)},)"), names

    result, names = result_expression(False)
    params = "".join(f"a{p}, " for p in range(len(live_in)))
    namespace = dict(names)
    exec(compile(f"def finish(s, args, local):\n    ({params}) = args\n    return {result}\n",
                 "<astjit loop results>", "exec"), namespace)
    finish = namespace["finish"]
    runner = make_loop_kernel_runner(kernel, args, arrays, written, copied, scalars, bool(lowered.locals),
                                   appends, run, stopped, result_expression(True), allocate, aligned,
                                   converters, compacting, overlapping, big_ints, snapshot if restored else None,
                                   (bailed, fallback) if lowered.bails else None, (odd_strides, fallback),
                                   shapes_refused)
    if restored:
        runner.copies = make_copy_test(restored, others)
    return runner


class AppendedValues:
    """The lists a loop kernel appends to (backends/tvm/loop_lists), for its runner: the status buffer's
    size for the room they have now, and the values of a call appended to the lists."""

    FIRST_ROOM = 64
    MOST_ROOM = 1 << 24      # values per list; a loop that may append more runs as Python

    def __init__(self, lowered, live_in, fixed, sequences):
        from ..backends.tvm.loop_lists import list_converter

        self.fixed = fixed                                   # the status slots before the lists' counts
        self.positions = [live_in.index(name) for name, _ in lowered.appended]
        self.converters = [list_converter(t) if t is not None else None for _, t in lowered.appended]
        # a list of values of several types has a second stretch: their types (backends/tvm/loop_lists)
        self.tagged = [t is not None and len(t) > 1 for _, t in lowered.appended]
        self.stretches = len(self.positions) + sum(self.tagged)
        self.start = fixed + len(self.positions)             # the first list's values
        self.room = self.FIRST_ROOM if self.positions else 0
        self.others = [p for p in sequences if p not in self.positions]
        self.extend = self._make_extend()

    def size(self) -> int:
        return self.start + self.stretches * self.room

    def grow(self, need) -> bool:
        """Room for ``need`` values per list from the next call on (False: more than MOST_ROOM)."""
        if need > self.MOST_ROOM:
            return False
        self.room = max(self.room, 1 << (int(need) - 1).bit_length())
        return True

    @property
    def sharing(self) -> list:
        """(p, q) per pair of argument positions that must hold distinct objects: two lists (Python's
        appends would interleave in one list), or a list and a sequence the loop reads (the appends
        would change what it reads)."""
        return [(p, q) for i, p in enumerate(self.positions) for q in self.positions[i + 1:] + self.others]

    def distinct(self, args) -> bool:
        return not any(args[p] is args[q] for p, q in self.sharing)

    def _make_extend(self):
        """``extend(view, q, args)``: append what the call appended (``view``: the status buffer as a
        numpy array, ``q``: as a memoryview of its ints), in order, however the kernel ended;
        generated straight-line, as the runner calls it on every call."""
        lines = ["def extend(view, q, args):"]
        if self.stretches > 1:
            lines.append(f"    room = (len(q) - {self.start}) // {self.stretches}")
        before = 0
        for j, p in enumerate(self.positions):
            lo = f"{self.start} + {before} * room" if before else f"{self.start}"
            values = "view[lo:lo + n]"
            tags = ", view[lo + room:lo + room + n]" if self.tagged[j] else ""
            lines += [f"    n = q[{self.fixed + j}]", "    if n:", f"        lo = {lo}",
                      f"        args[{p}].extend(c{j}({values}{tags}))"]
            before += 1 + self.tagged[j]
        lines.append("    return None")
        namespace = {f"c{j}": c for j, c in enumerate(self.converters)}
        exec(compile("\n".join(lines) + "\n", "<astjit list appends>", "exec"), namespace)
        return namespace["extend"]


def _copying(restored, others) -> list:
    """Lines binding ``copied``: whether the arrays at ``restored`` are copied before a call (not where
    larger than RESTORE_BYTES and than the arrays at ``others`` together; a list there counts nothing)."""
    size = " + ".join(f"args[{p}].nbytes" for p in restored) or "0"
    other = " + ".join(f"getattr(args[{p}], 'nbytes', 0)" for p in others) or "0"
    return [f"    size = {size}", f"    copied = not (size > {RESTORE_BYTES} and size > {other})"]


def make_copy_test(restored, others):
    """``copies(args)``: whether ``snapshot`` copies the arrays at ``restored`` for these arguments."""
    namespace = {}
    exec(compile("\n".join(["def copies(args):", *_copying(restored, others), "    return copied"]) + "\n",
                 "<astjit loop copy test>", "exec"), namespace)
    return namespace["copies"]


def make_snapshot(restored, others, lists):
    """``snapshot(args)``: (copies of the arrays at ``restored``, lengths of the lists at ``lists``), or None
    where the arrays are larger than RESTORE_BYTES and than the arrays at ``others`` together (a list
    there counts nothing). Generated straight-line: the generic loops over positions cost 0.8 us a
    call, a third of a small sieve's kernel call; this, 0.2 us."""
    copies = "".join(f"args[{p}].copy('K'), " for p in restored)
    lengths = "".join(f"len(args[{p}]), " for p in lists)
    lines = ["def snapshot(args):", *_copying(restored, others), "    if not copied:", "        return None",
             f"    return ({copies}), ({lengths})"]
    namespace = {}
    exec(compile("\n".join(lines) + "\n", "<astjit loop snapshot>", "exec"), namespace)
    return namespace["snapshot"]


def local_array_allocator(lowered, live_in, refused=lambda: None):
    """``allocate(args)``: a new buffer per local array of the kernel (backends/tvm/loop_arrays), shaped
    as the arrays of its group and laid out as numpy would lay out their elementwise result (C order,
    F order where all of them are F-contiguous), an argument the loop rebinds copied in; or None
    where the arrays of a group differ in shape or are strided with several axes (numpy's result would
    broadcast or follow their strides): the loop then runs as Python, and ``refused()`` is told."""
    if not lowered.locals:
        return lambda args: []
    groups = [[live_in.index(n) for n in members if n in live_in] for members in lowered.groups]
    group_of = {n: g for g, members in enumerate(lowered.groups) for n in members}
    specs = [(spec.dtype, group_of[spec.name], live_in.index(spec.name) if spec.incoming else None)
             for spec in lowered.locals]

    def allocate(args):
        layouts = []
        for members in groups:
            shape = args[members[0]].shape
            c = f = True
            for p in members:
                a = args[p]
                if a.shape != shape:
                    refused()
                    return None
                c, f = c and a.flags.c_contiguous, f and a.flags.f_contiguous
            if len(shape) > 1 and not (c or f):
                refused()
                return None
            layouts.append((shape, "C" if c or len(shape) <= 1 else "F"))
        out = []
        for dtype, g, source in specs:
            shape, order = layouts[g]
            incoming = args[source] if source is not None else None
            if incoming is not None and incoming.dtype == dtype:
                out.append(incoming.copy(order=order))    # (np.empty and np.copyto: 0.42 us, this 0.12)
                continue
            buf = np.empty(shape, dtype, order=order)
            if incoming is not None:
                np.copyto(buf, incoming)
            out.append(buf)
        return out

    return allocate


def _overlap(a, b) -> bool:
    """Whether two arrays may share an element (undecided counts as sharing)."""
    if not may_share_memory(a, b):
        return False
    try:
        return bool(shares_memory(a, b, 10_000))
    except np.exceptions.TooHardError:
        return True


def raise_at(exc: BaseException, filename: str, line: int, qualname: str = "<module>", callers=()):
    """Raise ``exc`` from a frame at the user's file and line, where plain Python would have raised it,
    named as the user's function (``qualname``) is; ``callers``: (file, line, function) of each call of
    an inlined function it is in, outermost first, a frame each (the call's line in the loop, then in
    each callee). The frames have no local variables: the kernel keeps none of the loop's values
    (docs/semantics.md, "Tracebacks"). What the exception carries from where it was made (the
    operation run in Python to make numpy's or Python's own: backends/tvm/loops) is dropped: the
    traceback ends at the user's line."""
    exc = exc.with_traceback(None)
    call = types.FunctionType(_raising_code(filename, line, qualname), {"__astjit_exception": exc})
    for caller in reversed(callers):
        call = types.FunctionType(_calling_code(*caller), {"__astjit_callee": call})
    call()


@functools.lru_cache(maxsize=256)
def _raising_code(filename: str, line: int, qualname: str):
    """The code of a function raising at that line, compiled once per place: compiling it at each raise
    cost 30-170 us (more the further down the file), a loop validating its input and raising at its
    second element ran 144x slower than plain Python. The exception is a global of the function, so that
    its frame's locals are empty (``pdb.post_mortem``, traceback tools)."""
    return _code_at(filename, line, qualname, "raise __astjit_exception from None")


@functools.lru_cache(maxsize=256)
def _calling_code(filename: str, line: int, qualname: str):
    """The code of a function calling ``__astjit_callee`` at that line: an inlined function's call."""
    return _code_at(filename, line, qualname, "__astjit_callee()")


def _code_at(filename: str, line: int, qualname: str, statement: str):
    module = compile("\n" * (line - 1) + f"def f(): {statement}", filename, "exec")
    code = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    names = {"co_name": qualname.rpartition(".")[2]}
    if hasattr(code, "co_qualname"):      # (Python 3.11 and later)
        names["co_qualname"] = qualname
    return code.replace(**names)
