"""Loops whose kernel applies a function over rows that numpy's SVML loop runs faster than the kernel's
own vectorized code (float64 ``exp`` and ``log``, float32 ``exp`` and ``tanh`` with AVX512_SKX:
0.85 ns an element against 2), or divides rows of ints by one number (numpy's SIMD division by a
constant, 3.5x the kernel's speed): the kernel and the loop's Python are timed on the program's own
calls, and the faster one runs the calls that follow.

Which one wins depends on the rows' length, which a kernel does not fix: over rows of 100 the kernel
ran 2.8x faster than the loop's Python, over rows of 10,000 2x slower. The choice is therefore kept per
size class of the arguments: the bit length of each array's size and of each Python int. In each class
the first six calls alternate between the two (``SCHEDULE``), then the faster one runs. Nothing runs
twice: each timed run is that call's own, so its effects happen once, and a run of the loop's Python
costs what plain Python costs.
"""

import time

import numpy as np

from .. import config

CLASSES_AT_MOST = 16       # size classes weighed per kernel; the kernel runs the others
# which runs each of a class's first calls: the kernel, the loop's Python (its first run compiles the
# blocks the loop holds: not timed), alternating so that a burst of load hits both; then the faster
# (the best time of each), a tie going to the kernel
SCHEDULE = ("kernel", "compiling", "python", "kernel", "python", "kernel")


def weighed(runner, fallback, fragment, args):
    """``runner`` (the kernel's) and ``fallback`` (the loop's Python) behind one call that weighs them
    per size class of the arguments (the module's docstring)."""
    arrays = [p for p, a in enumerate(args) if isinstance(a, np.ndarray)]
    ints = [p for p, a in enumerate(args) if type(a) is int]
    choices = {}                 # size class -> True (the kernel), False (the Python) or its timings
    recorded = []

    def size_class(args):
        return (*(args[p].size.bit_length() for p in arrays),
                *(args[p].bit_length() if type(args[p]) is int else -1 for p in ints))

    def run(*args):
        key = size_class(args)
        state = choices.get(key)
        if state is True:
            return runner(*args)
        if state is False:
            return fallback(*args)
        if state is None:
            if len(choices) >= CLASSES_AT_MOST:
                return runner(*args)
            state = choices[key] = {"kernel": [], "python": [], "compiling": []}
        which = SCHEDULE[sum(map(len, state.values()))]
        start = time.perf_counter()
        out = (fallback if which != "kernel" else runner)(*args)
        state[which].append(time.perf_counter() - start)
        # (>=: a call of the function inside the loop's Python may have weighed this class further)
        if choices.get(key) is state and sum(map(len, state.values())) >= len(SCHEDULE):
            decide(key, min(state["kernel"], default=0.0), min(state["python"], default=float("inf")))
        return out

    def decide(key, kernel, python):
        choices[key] = kernel <= python
        if not choices[key] and not recorded:
            recorded.append(key)
            fragment._record("measured", f"the loop's Python ({python * 1e6:.1f} us) beat its kernel "
                                         f"({kernel * 1e6:.1f} us): numpy's vectorized loops run its rows "
                                         "faster; arguments of such sizes run the loop's Python")
            config.log("fallbacks", "loop at %s line %s: its Python beat its kernel", fragment.owner_name,
                       fragment.block.lineno)

    run.weighed = choices
    return run
