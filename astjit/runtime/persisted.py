"""A specialization's compiled code written to and read back from the disk cache (runtime/disk_cache).

A loop kernel is keyed by its TIR function's text, which holds everything the kernel does; what the
runner needs besides the library (which arrays it writes, where its checks stop) comes from the
lowering, which runs again in each process (tens of milliseconds, against a compile of tenths of a
second to seconds).

For a straight-line block, what is stored is what specializing decided: the partition into segments (node numbers), why nodes
stayed on numpy, the notes and records for ``explain``, and per kernel its library and calling
convention. Reading it back needs neither the compiler nor ``import tvm``: types are inferred again
(cheap, and they give this call's guards), segments are rebuilt from the node numbers, kernels are
loaded. ``show --code tir`` on a loaded kernel lowers the segment again on demand.
"""

import functools
import os
from collections.abc import Mapping

from .. import config
from ..backends.contract import Compiled, Segment
from ..graph.fingerprint import NotFingerprintable, graph_text
from . import disk_cache

LOADED = " (from the disk cache)"
MEASURED = "measured.json"           # the first call's timing of compiled code against Python
# A stored choice is reused only when one side won by this factor: a near tie measured once on a
# loaded machine (1% apart) would otherwise decide for every later process; those time it again.
CLEAR_WIN = 1.25
# A win measured while the machine ran more than this many processes per core (the 1-minute load
# average, this process's own run included) is not reused: other work had the cores the kernel's
# threads needed, and the choice, stored, kept Python for every later process; either side's time may
# be a burst's (a block of np.tanh(a @ b) over 447x447 stored its kernel at 13.9 ms against 48 ms, where
# both take 45-50 ms and the kernel's float64 tanh is the slower: 0.8x numpy in every later process).
BUSY_LOAD_PER_CORE = 0.75
# A kernel measured this many times slower than the block's Python is measured again in each process
# rather than the loss reused: a kernel computing what numpy computes is rarely more than a few times
# slower (a call of the C library per element where numpy's loop is vectorized: 5-10x, timed again at
# the cost of a few runs), and a one-off kept numpy for good: a parallel kernel whose thread waited
# for a core another process held (a burst of load the minute's average missed), (a * 2.0 + 1.0) ** 2
# over 100,000 float64 stored at 3,500 us compiled against 46 us (0.99x numpy's time in every later
# process instead of 4.5x), the quick start's y - 1 over 2M float32 at 2,942 us against 195 us.
SUSPECT_LOSS = 5


def key_text(fragment, ctx, choice, backends) -> str | None:
    """The disk cache's key for this specialization, or None when it has no exact text form. The
    backends asked, in order, with each one's own key part (versions, target; a GPU's architecture),
    are part of it; so is the device (a CUDA module holds a cubin for that architecture)."""
    if choice == "python" or disk_cache.active() is None:
        return None
    try:
        text = graph_text(ctx.graph, ctx)
    except NotFingerprintable as exc:
        config.log("cache", "%s line %s is not cached on disk: %s", fragment.owner_name, fragment.block.lineno,
                   exc)
        return None
    asked = ", ".join(b.cache_key(ctx.device) for b in backends)
    return (f"straight-line block, backend={choice}, strict={fragment.strict}, device={ctx.device}, "
            f"backends=[{asked}]\n{text}")


def read(fragment, ctx, text, backends):
    """(segments ready to run, reasons, stored meta) for this key, or None on a miss; replays the
    records the original specialization made. Where the stored first call's timing settles on the
    block's Python (``stored_choice``), the kernels are not loaded (``meta["python_won"]``): loading
    one imports TVM's FFI, 0.1-0.2 s of a new process's first call, for a kernel no call runs; ``show``
    loads them when asked for their code."""
    cache = disk_cache.active()
    found = cache.load(text) if cache is not None else None
    if found is None:
        return None
    meta, folder = found
    measured = cache.read_note(folder, MEASURED)
    choice = stored_choice(meta.get("mode"), measured)
    python_won = choice is not None and choice[2] == "python"
    nodes = ctx.graph.nodes
    by_name = {b.name: b for b in backends}
    try:
        segments = [_segment(ctx, nodes, d, folder, by_name, load=not python_won) for d in meta["segments"]]
        reasons = {nodes[int(i)]: why for i, why in meta["reasons"].items()}
        records = [(str(kind), str(message)) for kind, message in meta["records"]]
    except Exception as exc:   # a library that does not load, a file edited by hand: compile instead
        cache.discard(folder, f"{type(exc).__name__}: {exc}")
        return None
    for kind, message in records:
        fragment._record(kind, message)
        if kind == "fallback":          # (as the specialization that stored it logged it)
            config.log("fallbacks", "%s line %s: %s", fragment.owner_name, fragment.block.lineno, message)
    config.log("cache", "%s line %s: loaded from %s", fragment.owner_name, fragment.block.lineno, folder)
    meta = dict(meta, measured=measured, python_won=python_won)
    return segments, reasons, meta


def _segment(ctx, nodes, d, folder, by_name, load=True) -> Segment:
    seg = Segment(d["backend"], [nodes[i] for i in d["nodes"]], [nodes[i] for i in d["inputs"]],
                  [nodes[i] for i in d["outputs"]], description=d["description"], reference=d["reference"])
    backend = by_name[d["backend"]]
    if d["persist"] is None:
        seg.compiled = backend.compile(ctx, seg)
        return seg
    seg.description += LOADED
    libraries = [str(folder / name) for name in d["libraries"]]
    if not load:
        seg.compiled = Compiled(None, seg.description, _ArtifactsWhenAsked(
            lambda: backend.load(ctx, seg, d["persist"], libraries)))
        return seg
    seg.compiled = backend.load(ctx, seg, d["persist"], libraries)
    return seg


class _ArtifactsWhenAsked(Mapping):
    """The artifacts (``show --code``) of a kernel not loaded because no call runs it: loaded when
    first asked for."""

    def __init__(self, load):
        self._load = functools.cache(load)

    def __getitem__(self, kind):
        return self._load().artifacts[kind]

    def __iter__(self):
        return iter(self._load().artifacts)

    def __len__(self):
        return len(self._load().artifacts)


def write(text, choice, backends, spec, first_record, fragment):
    """The entry for a specialization just made, as a function that queues it (kernels are exported
    in the background), or None where nothing is stored. The caller queues it after the first call's
    measurement, where there is one: the export (LLVM's code generation again and the C compiler) took
    one of the two cores while the kernel was timed, and a fused chain measured 4x its time and was
    left to Python in this process and every later one.

    Only types decide a partition and its kernels, so the key is taken before them; should anything
    after inference have pinned a value into a type (a value guard), the key no longer describes the
    kernels and nothing is stored. Nor is anything stored when a compiled segment cannot persist, or
    where TVM failed to import in this process: its blocks ran as Python for a reason of this
    environment (a module shadowing ``tvm`` on ``sys.path``), which a later process must not inherit."""
    from ..backends.tvm import import_error

    cache = disk_cache.active()
    if cache is None or text is None or import_error() is not None \
            or key_text(fragment, spec.ctx, choice, backends) != text:
        return None
    position = {n: i for i, n in enumerate(spec.ctx.graph.nodes)}
    modules, segments = [], []
    for seg in spec.segments:
        d = {"backend": seg.backend, "reference": seg.reference, "nodes": [position[n] for n in seg.nodes],
             "inputs": [position[n] for n in seg.inputs], "outputs": [position[n] for n in seg.outputs],
             "description": seg.description, "persist": None, "libraries": []}
        if not seg.reference:
            persist = seg.compiled.persist if seg.compiled is not None else None
            if persist is None:
                return None
            d["persist"] = persist.meta
            d["libraries"] = [f"kernel{len(modules) + k}.so" for k in range(len(persist.modules))]
            modules.extend(persist.modules)
        segments.append(d)
    meta = {"mode": spec.mode, "note": spec.note, "segments": segments,
            "reasons": {str(position[n]): why for n, why in (spec.reasons or {}).items()},
            "records": [[r.kind, r.message] for r in fragment.records[first_record:]]}
    return lambda: cache.store(text, meta, modules)


def publish(spec) -> None:
    """Queue the disk entry ``write`` made for ``spec``, once."""
    queue, spec.publish = getattr(spec, "publish", None), None
    if queue is not None:
        queue()


def write_measured(spec) -> None:
    """Remember the first call's choice with the disk entry, so another process reuses it instead
    of timing the block again."""
    publish(spec)                  # (the entry first: the note goes into its folder)
    cache = disk_cache.active()
    if cache is not None and getattr(spec, "disk_key", None) is not None and spec.measured is not None:
        compiled, python = spec.measured
        cache.note(spec.disk_key, MEASURED, {"compiled": compiled, "python": python,
                                             "runs": spec.runs, "load_per_core": load_per_core()})


def load_per_core() -> float | None:
    """The 1-minute load average per core, or None where the system does not say."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (OSError, AttributeError):
        return None


def stored_choice(mode, measured) -> tuple | None:
    """(compiled seconds, python seconds, which ran) of a choice stored by ``write_measured`` and won
    clearly, which a new process reuses; None where it times the block again."""
    if mode in ("numpy", "python") or not isinstance(measured, dict):
        return None
    try:
        compiled, python, runs = float(measured["compiled"]), float(measured["python"]), measured["runs"]
    except (KeyError, TypeError, ValueError):
        return None
    if not (min(compiled, python) > 0 and max(compiled, python) >= CLEAR_WIN * min(compiled, python)):
        return None
    load = measured.get("load_per_core")
    if isinstance(load, int | float) and load > BUSY_LOAD_PER_CORE:
        return None
    if runs == "python" and compiled > SUSPECT_LOSS * python:
        return None
    return compiled, python, runs


def apply_measured(fragment, spec, measured) -> None:
    """A choice stored by ``write_measured`` and won clearly: the specialization is not timed again."""
    choice = stored_choice(spec.mode, measured)
    if choice is None:
        return
    compiled, python, runs = choice
    spec.measured = (compiled, python)
    spec.measure = False
    spec.mode_chosen = "python" if runs == "python" else spec.mode
    if runs == "python":
        spec.runner = fragment.fallback
        fragment._record("measured", f"the block's Python ({python * 1e6:.1f} us) beat the compiled "
                                     f"{spec.mode} code ({compiled * 1e6:.1f} us) in an earlier process: it "
                                     "runs as Python")


def loop_key_text(fragment, func, libraries=()) -> str | None:
    """The disk cache's key of a loop kernel (its TIR function's text, and the paths of the libraries
    whose functions it calls: numpy's BLAS, which another numpy replaces), or None when the cache is
    off."""
    if disk_cache.active() is None:
        return None
    linked = "".join(f"linked: {path}\n" for path in libraries)
    return f"loop kernel, strict={fragment.strict}\n{linked}{func.script()}"


def read_loop_kernel(fragment, text):
    """(module, its ``main``) of the loop kernel stored under ``text``, or None."""
    cache = disk_cache.active()
    found = cache.load(text) if cache is not None and text is not None else None
    if found is None:
        return None
    _, folder = found
    from ..backends.tvm.loader import load_kernel

    try:
        module, main = load_kernel(str(folder / "kernel0.so"))
    except Exception as exc:   # a truncated library, another platform's: compile instead
        cache.discard(folder, f"{type(exc).__name__}: {exc}")
        return None
    config.log("cache", "loop at %s line %s: loaded from %s", fragment.owner_name, fragment.block.lineno, folder)
    return module, main


def write_loop_kernel(text, module) -> None:
    cache = disk_cache.active()
    if cache is not None and text is not None:
        cache.store(text, {"kind": "loop kernel"}, [module])
