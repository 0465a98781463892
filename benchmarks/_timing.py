"""Shared timing helper for the benchmarks: numpy and astjit peers, timed side by side.

Each case is a pair of callables on the same arguments. Both are warmed up first (the first jitted call
compiles), then each gets a batch size: enough calls that one batch takes at least ``MIN_BATCH_SECONDS``,
so timer resolution and per-batch noise do not matter even at a few microseconds per call. Then the
peers' batches are interleaved (numpy, astjit, astjit, numpy, ...: the order flips every repeat) so that
noise from the rest of the machine hits both, and each side reports the median per-call time of its
repeats. The garbage collector is off inside a batch, as in ``timeit``.
"""

import argparse
import gc
import os
import platform
import statistics
import sys
import time

MIN_BATCH_SECONDS = 0.02
REPEATS = 11
QUICK_REPEATS = 3
# calls before timing: a loop weighed against its Python (runtime/loop_weighing) settles on its 8th
WARMUP_CALLS = 8


def load_example(name):
    """The module ``examples/<name>.py``, so that a benchmark times the example's own functions."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"astjit_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def peak_bytes(fn, args) -> int:
    """The peak of memory allocated through numpy (and Python) during one call, by tracemalloc."""
    import tracemalloc

    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def parse_args(description, json_output=False):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_REPEATS} repeats instead of {REPEATS}")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per peer (overrides --quick)")
    parser.add_argument("--only", nargs="*", default=None,
                        help="only the cases whose names contain one of these texts (where a benchmark has cases)")
    if json_output:
        parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args()
    if args.repeats is None:
        args.repeats = QUICK_REPEATS if args.quick else REPEATS
    return args


def _batch(fn, args, number):
    """Seconds per call over one batch of ``number`` calls."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        elapsed = time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()
    return elapsed / number


def batch_size(fn, args, min_seconds=MIN_BATCH_SECONDS):
    """Calls per batch so that one batch takes at least ``min_seconds``."""
    number = 1
    while True:
        per_call = _batch(fn, args, number)
        if per_call * number >= min_seconds:
            return number
        # aim a little past the target so the next try usually succeeds
        number = max(number * 2, int(min_seconds * 1.2 / max(per_call, 1e-9)) + 1)


class Result:
    def __init__(self, name, numpy_times, jit_times, numpy_number, jit_number):
        self.name = name
        self.numpy_times = numpy_times
        self.jit_times = jit_times
        self.numpy_number = numpy_number
        self.jit_number = jit_number

    @property
    def numpy(self):
        return statistics.median(self.numpy_times)

    @property
    def jit(self):
        return statistics.median(self.jit_times)

    @property
    def spread(self):
        """The larger of the two sides' (max - min) / median over the repeats: how noisy the run was."""
        return max((max(t) - min(t)) / statistics.median(t) for t in (self.numpy_times, self.jit_times))

    @property
    def ratio(self):
        """numpy time / astjit time: above 1 means astjit is faster."""
        return self.numpy / self.jit


def compare(name, numpy_fn, jit_fn, args, repeats=REPEATS, warmup=WARMUP_CALLS):
    """Time ``numpy_fn(*args)`` and ``jit_fn(*args)`` side by side; return a Result."""
    for _ in range(warmup):
        numpy_fn(*args)
        jit_fn(*args)
    n_np, n_jit = batch_size(numpy_fn, args), batch_size(jit_fn, args)
    numpy_times, jit_times = [], []
    for r in range(repeats):
        peers = [(numpy_fn, n_np, numpy_times), (jit_fn, n_jit, jit_times)]
        for fn, number, times in (peers if r % 2 == 0 else peers[::-1]):
            times.append(_batch(fn, args, number))
    return Result(name, numpy_times, jit_times, n_np, n_jit)


def format_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        load = "load average unknown"
    return f"{cpu}, {os.cpu_count()} cores, {load}; Python {sys.version.split()[0]}"


def print_header(title, repeats):
    print(f"== {title}")
    print(f"   {machine()}")
    print(f"   median of {repeats} interleaved repeats; each repeat is a batch of >= "
          f"{MIN_BATCH_SECONDS * 1e3:.0f} ms; times are per call")


def print_results(results):
    width = max([len("case")] + [len(r.name) for r in results])
    print(f"   {'case':<{width}}  {'numpy':>10}  {'astjit':>10}  {'numpy/astjit':>12}  {'spread':>6}")
    for r in results:
        print(f"   {r.name:<{width}}  {format_time(r.numpy):>10}  {format_time(r.jit):>10}  {r.ratio:>11.2f}x"
              f"  {r.spread:>5.0%}")
    print("   numpy/astjit > 1: astjit is faster. spread: (max - min) / median of the noisier side.")


def fragment_modes(jitted):
    """The modes of every specialization the jitted function compiled ("tvm", "numpy", "mixed", "python")."""
    return {e.mode for f in jitted.fragments for e in f.entries}


def chosen_modes(jitted):
    """What each specialization actually runs after its first call: astjit times a compiled specialization
    against the block's Python on first use and keeps the faster; "python" here means the cached runner
    is the original Python even though the specialization compiled. A specialization that was never
    timed (a loop region's kernel, a GPU's) runs its mode."""
    return {"python" if e.runs == "python" else e.mode for f in jitted.fragments for e in f.entries}


def describe_modes(jitted):
    """Per fragment: the mode of each specialization, with "->python" where the first call installed the
    block's Python instead, and "(loop)" for a loop region (one kernel for the whole loop, not timed
    against its Python)."""
    parts = []
    for f in jitted.fragments:
        loop = "(loop)" if f.block.kind == "loop" else ""
        if not f.entries:                  # (a loop its guard ran as written every time)
            parts.append(f"{f.index}:not called")
        for e in f.entries:
            installed_python = e.mode != "python" and e.runs == "python"
            parts.append(f"{f.index}:{e.mode}{loop}" + ("->python" if installed_python else ""))
    return "fragments " + " ".join(parts)
