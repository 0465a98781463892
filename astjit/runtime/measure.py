"""Choose between a compiled specialization and the block's original Python by measuring both.

DESIGN section 4: where two backends can run the same work, measure on first use and remember the
choice with the cache entry. A kernel is not always faster: libm calls such as float32 ``exp`` are
scalar in a kernel but SIMD in numpy, and a one-op fragment gains nothing from fusion. Only blocks
without in-place effects are measured (running them twice is harmless); the compiled result of the
first run is what the call returns.
"""

import time
import warnings

import numpy as np

SHORT = 1e-3          # below this, repeat runs and keep the best (timer noise dominates otherwise)
MARGIN = 0.75         # Python must be clearly faster to be chosen: timings on a shared machine are noisy


LONG = 5e-2          # above this, one timed run each: measuring must not cost more than the work


def _best(fn, args, repeats):
    """Best time of ``repeats`` runs; numpy's warnings stay quiet (the user saw the real run's)."""
    best = float("inf")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            start = time.perf_counter()
            fn(*args)
            best = min(best, time.perf_counter() - start)
    return best


def measuring_runner(fragment, spec, key):
    """A runner that, on its first call, times ``spec`` against the fallback and installs the winner."""
    compiled = spec.runner

    def first_call(*args):
        result = compiled(*args)                        # warm-up (thread pool, page faults); returned
        t_compiled = _best(compiled, args, 1)
        repeats = 5 if t_compiled < SHORT else (3 if t_compiled < LONG else 1)
        t_python = _best(fragment.fallback, args, repeats)
        if repeats > 1:   # interleaved after Python's runs, so a burst of load hits both sides
            t_compiled = min(t_compiled, _best(compiled, args, repeats - 1))
        spec.measured = (t_compiled, t_python)
        if t_python < MARGIN * t_compiled:
            spec.runner = fragment.fallback
            spec.mode_chosen = "python"
            fragment._record("measured", f"the block's Python ({t_python * 1e6:.1f} us) beat the compiled "
                                         f"{spec.mode} code ({t_compiled * 1e6:.1f} us): it runs as Python")
        else:
            spec.runner = compiled
            spec.mode_chosen = spec.mode
        if fragment.cache.get(key) is first_call:
            fragment.cache[key] = spec.runner
        return result

    return first_call
