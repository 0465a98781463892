"""Loops whose kernel applies a function over rows that numpy's SVML loop runs faster than the kernel's
own vectorized code (float64 ``exp`` and ``log``, float32 ``exp`` and ``tanh`` with AVX512_SKX:
0.85 ns an element against 2), or divides rows of ints by one number (numpy's SIMD division by a
constant, 3.5x the kernel's speed): the kernel and the loop's Python are timed on the program's own
calls, and the faster one runs the calls that follow.

Which one wins depends on the rows' length, which a kernel does not fix: over rows of 100 the kernel
ran 2.8x faster than the loop's Python, over rows of 10,000 2x slower. The choice is therefore kept per
size class of the arguments: the bit length of each array's size and of each Python int. In each class
the first seven calls alternate between the two (``SCHEDULE``), then the faster one runs; arrays all
shorter than WEIGHED_FROM elements run the kernel straight away. Nothing runs
twice: each timed run is that call's own, so its effects happen once, and a run of the loop's Python
costs what plain Python costs.

A ``while`` loop without effects is weighed too (``weighed_while``): its first trips ran as written,
and the trips left to its kernel may be too few to repay the kernel's call. Having no effects, it
runs both on the same values, which compares them where the trips left change from call to call. A
straight-line block's rank-generic twin (a loop of one trip, frontend/rank_generic) is weighed the
same way against the block's numpy.
"""

import time

import numpy as np

from .. import config

CLASSES_AT_MOST = 16       # size classes weighed per kernel; the kernel runs the others
REMEMBERED = 256           # classes whose choice is kept (the kernel for the others, through ``weigh``)
# arguments whose arrays all have fewer elements than this run the kernel unweighed, testing only the
# arrays' sizes (the size class and its lookup cost 0.45 us): numpy's faster loop cannot repay its call
# per row there. (Over 1,500 elements numpy's log already won: 0.55x plain for the kernel.)
WEIGHED_FROM = 1 << 9
# lists and tuples of fewer items than this do not make a call weighed: a few coefficients convert in
# about 0.5 us (a longer list, converted at each call, costs about 45 ns an item: a binary search through
# 100,000 floats ran 0.002x plain Python's speed)
SEQUENCE_WEIGHED_FROM = 16
# which runs each of a class's first calls: the kernel (its first call not timed), the loop's Python
# (its first run compiles the blocks the loop holds: not timed either), alternating so that a burst of
# load hits both; then the faster (the best time of each), a tie going to the kernel
SCHEDULE = ("warming", "compiling", "kernel", "python", "kernel", "python", "kernel")
WHILE_WEIGHED = 6         # a ``while``'s calls timed per class (weighed_while), after one that compiles
WHILE_LONG = 5e-6         # a ``while``'s kernel call longer than this repays its call (weighed_while)
WHILE_LONG_SECOND = 20e-6  # the same at its second call, which may still be slow after the compile
WHILE_CLEAR = 2           # a ``while``'s Python this many times slower than its kernel loses at once


# why the loop's Python may win, as explain says it where it did
NUMPY_ROWS = "numpy's vectorized loops run its rows faster"
CONVERTS_ITS_LISTS = ("the kernel's runner makes an array of the lists or tuples the loop reads at each call, and "
                      "the loop reads few of their items")
SHORT_WHILE = ("the trips left after its first ones (run as written) were too few to repay the kernel's call")
SHORT_TWIN = "numpy's whole-array loops run the block faster than one kernel for any length (the block as a loop)"
COPIES_ITS_ARRAYS = ("the kernel's runner copies the arrays the loop writes before each call (to put them "
                     "back where an int leaves int64 and Python goes on), and the loop touches few of "
                     "their elements")


def weighed(runner, fallback, fragment, args, why=NUMPY_ROWS):
    """``runner`` (the kernel's) and ``fallback`` (the loop's Python) behind one call that weighs them
    per size class of the arguments (the module's docstring)."""
    choices = {}                 # size class -> True (the kernel), False (the Python) or its timings
    weighing = [0]               # classes weighed
    decide = _decider(choices, fragment, why)

    def weigh(key, args):
        state = choices.get(key)         # (again: another thread may have decided it meanwhile)
        if state is True or state is False:
            return (runner if state else fallback)(*args)
        if state is None:
            state = _new_class(choices, weighing, key, {"warming": [], "kernel": [], "python": [], "compiling": []})
            if state is None:
                return runner(*args)
        done = sum(map(len, state.values()))
        if done >= len(SCHEDULE):        # (threads weighing one class together ran past its schedule)
            decide(key, min(state["kernel"], default=0.0), min(state["python"], default=float("inf")))
            return (runner if choices[key] else fallback)(*args)
        which = SCHEDULE[done]
        start = time.perf_counter()
        out = (runner if which in ("warming", "kernel") else fallback)(*args)
        state[which].append(time.perf_counter() - start)
        # (>=: a call of the function inside the loop's Python may have weighed this class further)
        if choices.get(key) is state and sum(map(len, state.values())) >= len(SCHEDULE):
            # (the best time of each; a tie goes to the kernel)
            decide(key, min(state["kernel"], default=0.0), min(state["python"], default=float("inf")))
        return out

    small = [f"{x}.size < {WEIGHED_FROM}" for x, a in zip(_names(args), args) if isinstance(a, np.ndarray)]
    small += [f"len({x}) < {SEQUENCE_WEIGHED_FROM}" for x, a in zip(_names(args), args)
              if type(a) in (list, tuple)]
    return _by_size_class(args, choices, runner, fallback, weigh, " and ".join(small) or "False")


def weighed_while(runner, fallback, inline, fragment, args, why=SHORT_WHILE, long_repays=True):
    """``runner`` (the kernel of a ``while`` whose first trips ran as written, and which writes no
    array and appends to no list) and ``fallback`` (the rest of the loop as Python) behind one call
    that weighs them per size class of the arguments. A class whose Python won runs ``inline`` (the
    rewritten function then runs the whole loop as written for its next calls, whatever their class)
    while no class chose the kernel; once one does, every class runs the kernel: inline runs made a
    class of long loops (3,000 trips, its kernel 10x faster) run as written too, at 0.66x plain
    Python, and the rest of the loop as a function, behind the Fragment's dispatch, cost more than the
    kernel's call (0.39x against 0.64x on the short ones).

    How many trips are left changes from call to call (a Newton iteration, an escape-time count), so
    timings of different calls do not compare: such a loop has no effects, and a class's calls run both
    on the same values, the kernel first (its result kept), then the Python, whose result is dropped
    (its errors are the loop's own; numpy's warnings are silenced: the kernel's run gave them). The
    first call runs the kernel alone (its first calls after the compile are slow), the second the
    Python too (untimed: it compiles the blocks it holds); then up to WHILE_WEIGHED calls are timed,
    and the sums of the times decide. The kernel wins at once where its second call takes over
    WHILE_LONG_SECOND seconds, or from two timed calls on, where each took over WHILE_LONG (it repays
    its call there, and the Python of a long loop would cost a lot; not with ``long_repays`` false:
    a loop whose Python is numpy's whole-array work, not a trip at a time) or the Python's times are
    over WHILE_CLEAR times the kernel's: timing the Python of 500 trips at six calls a class made them
    0.45x plain Python where the kernel ran 12x. (Its first calls after the compile are slow: a
    binary search's kernel took 11-15 us at its second and third calls, 0.5 us later.)"""
    choices = {}                 # size class -> True (the kernel), False (the Python) or its time pairs
    weighing = [0]
    decide = _decider(choices, fragment, why)

    def settle(key, state, kernel, python):
        if choices.get(key) is state:
            decide(key, kernel, python)
            if True in choices.values():         # (one class runs the kernel: every class does, and
                choices.update((k, True) for k, v in list(choices.items()) if v is False)
                for chosen in run.on_kernel:     # the later ones without this call around it)
                    chosen()

    def weigh(key, args):
        state = choices.get(key)
        if state is True or state is False:
            return (runner if state else inline)(*args)
        if state is None:
            state = _new_class(choices, weighing, key, [])
            if state is None:
                return runner(*args)
        out, kernel = _timed(runner, args)
        if not state:                  # (the kernel's first call: slow after its compile)
            state.append(None)
            return out
        if len(state) == 1:
            if kernel > WHILE_LONG_SECOND and long_repays:
                settle(key, state, 0.0, float("inf"))
            else:                      # (the Python's first run compiles the blocks it holds: untimed)
                with np.errstate(all="ignore"):
                    fallback(*args)
                state.append(None)
            return out
        with np.errstate(all="ignore"):
            _, python = _timed(fallback, args)
        state.append((kernel, python))
        timed = state[2:]
        kernels, pythons = sum(k for k, _ in timed), sum(p for _, p in timed)
        # (from the second timed call: the kernel's first calls after its compile are slow)
        if len(timed) >= 2 and (long_repays and min(k for k, _ in timed) > WHILE_LONG
                                or pythons > WHILE_CLEAR * kernels):
            settle(key, state, 0.0, float("inf"))
        elif len(timed) >= WHILE_WEIGHED:
            # (per call, for explain; the Python must be faster at half the calls too: a few slow runs
            # of either, 4x the others on a busy machine, outweighed the rest)
            faster = sum(p < k for k, p in timed) * 2 >= len(timed)
            settle(key, state, kernels / len(timed), pythons / len(timed) if faster else float("inf"))
        return out

    run = _by_size_class(args, choices, runner, inline, weigh, "False")
    run.on_kernel = []           # what to call once the kernel runs every class (loop_fragment)
    return run


def _new_class(choices, weighing, key, state):
    """``state``, the weighing state of ``key``, a class met the first time; None past CLASSES_AT_MOST
    classes weighed (the kernel runs it, remembered while fewer than REMEMBERED classes are)."""
    if weighing[0] >= CLASSES_AT_MOST:
        if len(choices) < REMEMBERED:
            choices[key] = True
        return None
    weighing[0] += 1
    choices[key] = state
    return state


def _timed(run, args):
    start = time.perf_counter()
    out = run(*args)
    return out, time.perf_counter() - start


def _names(args) -> list:
    return [f"a{p}" for p in range(len(args))]


def _decider(choices, fragment, why):
    """``decide(key, kernel, python)``: the class's choice from its times (a tie goes to the kernel),
    recorded for explain the first time Python wins."""
    recorded = []

    def decide(key, kernel, python):
        choices[key] = kernel <= python
        if not choices[key] and not recorded:
            recorded.append(key)
            fragment._record("measured", f"the loop's Python ({python * 1e6:.1f} us) beat its kernel "
                                         f"({kernel * 1e6:.1f} us): {why}; arguments of such sizes run "
                                         "the loop's Python")
            config.log("fallbacks", "loop at %s line %s: its Python beat its kernel", fragment.owner_name,
                       fragment.block.lineno)
    return decide


def _by_size_class(args, choices, runner, fallback, weigh, small):
    """The call that runs the choice of its arguments' size class (``runner`` straight away where
    ``small``), or ``weigh(key, args)`` where the class is not decided. It is generated code over the
    arguments by position: a size class built in Python from lists of positions cost 1 us a call."""
    names = _names(args)
    parts = [f"{x}.size.bit_length()" for x, a in zip(names, args) if isinstance(a, np.ndarray)]
    parts += [f"({x}.bit_length() if type({x}) is int else -1)" for x, a in zip(names, args) if type(a) is int]
    # (a list or tuple the kernel's runner converts at each call: its length)
    parts += [f"len({x}).bit_length()" for x, a in zip(names, args) if type(a) in (list, tuple)]
    params = ", ".join(names)
    packed = f"({params}{',' if len(args) == 1 else ''})"
    src = (f"def run({params}):\n"
           f"    if {small}:\n"
           f"        return runner({params})\n"
           f"    key = ({', '.join(parts)}{',' if len(parts) == 1 else ''})\n"
           f"    state = get(key)\n"
           f"    if state is True:\n"
           f"        return runner({params})\n"
           f"    if state is False:\n"
           f"        return fallback({params})\n"
           f"    return weigh(key, {packed})\n")
    namespace = {"get": choices.get, "runner": runner, "fallback": fallback, "weigh": weigh}
    exec(compile(src, "<astjit weighed loop>", "exec"), namespace)
    run = namespace["run"]
    run.weighed = choices
    return run
