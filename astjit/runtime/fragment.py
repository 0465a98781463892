"""Fragment: one block's graph, its specializations, and its original statements as a fallback.

A call computes the key (dtype and shape of each array live-in, type of anything else) and, on a hit,
goes straight to the compiled runner: no graph work on the fast path. A miss infers types, partitions,
compiles, and stores the runner. Anything that cannot be specialized stores the fallback instead, with
the reason, so the block runs as the original Python from then on for those types.
"""

import itertools
import linecache
import struct
import threading
import time
import types
import warnings

import numpy as np

from .. import config
from ..backends.tvm import IMPORT_SECONDS
from ..errors import RaisesAsPython, RecompileLimitWarning, StrictModeError, Unsupported
from .keys import KEYS, describe_key, key_difference
from .new_extents import (
    AGAIN,
    EXTENTS_AT_ONCE,
    KEEP_KERNELS_FROM,
    NEVER,
    REMEMBERED,
    SIGHTINGS_TO_COMPILE,
    NewExtents,
)
from .plain_attribute import NOT_PLAIN
from .records import Record
from .windows import NOT_TAKEN, Windows

# a refused block whose arrays are all at most this large settles on its Python (``specialize_only``)
SMALL_REFUSED = 4096


# A new length runs the rank-generic twin (frontend/rank_generic) only where one of the block's arrays
# holds this many elements, and a length compiled before won its first call's measurement: below, a new
# length's block runs as Python inline (settle_python) at almost no cost, where reaching the twin
# through a miss cost 12-20 us a call (random lengths of 100-1,000 elements: 0.15-0.2x numpy).
TWIN_FROM = 16384


def _largest(args) -> int:
    return max((a.size for a in args if type(a) is np.ndarray), default=0)


def _small_arrays(args) -> bool:
    """No array among ``args`` holds more than SMALL_REFUSED elements (true where none is an array)."""
    return all(a.size <= SMALL_REFUSED for a in args if type(a) is np.ndarray)


class _Unbound:
    """What the rewritten function passes for a live-in that is not bound (frontend/emit): the block's
    own statements then run, and the one reading it raises UnboundLocalError at the user's line."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = _Unbound()


# The rewritten function asks ``next(switch)`` before each block (once before the loop around it, and
# after each call: frontend/emit): True runs the block's own statements inline, False calls its
# Fragment. A block whose call chose Python answers True for the next SETTLED_CALLS calls, then False
# until a call chooses Python again: a few scalar statements cost about a tenth of a Fragment call, and
# new argument types are still looked at (the block's Python is right for any of them, only maybe
# slower). In a loop's body, each time the block settles again the run doubles, up to SETTLED_MOST,
# and a new key starts over: a Fragment call every 63 iterations made a 100,000-iteration loop of two
# such blocks 1.4x slower than its plain Python. Outside loops the run stays SETTLED_CALLS_OUTSIDE: a
# call with new argument types (a larger array, which a kernel runs faster) is looked at within a few
# calls, and the Fragment call, a few tenths of a microsecond, is paid on one call in eight (a
# Fragment call on each made a function of two scalar blocks and a tiny loop, a run-length encoding
# of three values, several times slower than its plain Python); where the block's arguments are all
# numbers, whose growth no kernel would run faster, it doubles too, up to SETTLED_MOST_OUTSIDE; with
# arrays up to SETTLED_CALLS.
SETTLED_CALLS = 63
SETTLED_CALLS_OUTSIDE = 7
SETTLED_MOST = 64 * 1024
SETTLED_MOST_OUTSIDE = 1023     # outside loops, a block whose arguments are all numbers (settle_python)
_DISPATCH = itertools.repeat(False)
# How many times a Fragment installs a dispatch for the key its calls hit (runtime/dispatch.make_hot_dispatch):
# arguments that alternate between keys would otherwise generate code on every call.
HOT_INSTALLS = 8
# Keys a hot dispatch compares, the last hit first: two alternating keys (a loop's first trip with a
# number, its other trips with arrays) went back to the full dispatch once HOT_INSTALLS ran out,
# 0.5 us more a call (Horner's rule from ``y = 0.0`` over 30 coefficients: 0.61x plain Python)
HOT_KEYS = 2


class _Cache(dict):
    """key -> runner; a write tells the Fragment, whose dispatch for one key may hold the old runner."""

    __slots__ = ("changed",)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.changed()


class Fragment:
    key_by = "shape"          # arrays are keyed by dtype and shape (runtime/keys)

    def __init__(self, block, filename: str, owner_name: str, strict: bool = False, backend: str | None = None,
                 rules=(), device: str | None = None):
        self.block = block
        self.graph = block.graph
        self.index = block.index
        self.name = f"__astjit_fragment_{block.index}"
        self.filename = filename
        self.owner_name = owner_name
        self.strict = strict
        self.backend = backend
        self.device = device                 # None: where the arguments live; "cpu" or "cuda": forced
        self.rules = tuple(rules)            # rewrite rules its specializations run (astjit.rewrite)
        self._rewrites_noted: set = set()
        self.live_in = list(block.live_in)
        self.live_out = list(block.live_out)
        self.fallback = None                 # set once the rewritten function is compiled
        self._lock = threading.Lock()
        self.cache = _Cache()                # key -> runner (a GuardedEntry's generated check, if guarded)
        self.cache.changed = self._cool
        self.guarded: dict = {}              # key -> GuardedEntry, for keys whose runners check values
        self.entries: list = []              # Specialization objects, in compile order
        self.records: list[Record] = []
        self._new_extents = NewExtents()     # lengths met but not compiled yet
        self._counting_factory = None        # makes the runner of a length met again (_counting)
        self._deferred_keys: set = set()     # keys cached with the block's Python or a counting runner (new_extents)
        self._extents_noted = False
        self._twin = None                    # the rank-generic twin: None until needed, False if none
        self._twin_runner = None             # what runs it on the block's arguments
        self._twin_keys: set = set()         # the twin's keys (dtypes, ranks) that compiled
        self._twin_noted = False
        self._counter = [0]
        self.python_switch = types.CellType(_DISPATCH)   # read by the rewritten function (frontend/emit)
        # whether the rewritten function takes the block's windows and passes them in (window_views)
        self.windows = Windows(self.live_in, block.views)
        self.windows_switch = self.windows.switch
        self._settled_run = self._first_settled_run = SETTLED_CALLS if block.in_loop else SETTLED_CALLS_OUTSIDE
        from .dispatch import make_dispatch

        # what the rewritten function calls (through ``dispatch_cell``): a generated fixed-arity cache
        # lookup, or, once calls hit a key, a dispatch comparing the arguments with that key first
        self.make_key = KEYS[self.key_by]
        self._hot_installs = HOT_INSTALLS
        self._hot: list = []                 # (key, runner) pairs the hot dispatch compares, last hit first
        self._promoting = [True]
        self.dispatch = make_dispatch(self.cache, self._miss, len(self.live_in), self._counter,
                                      self._run_python, self.key_by, self._promote, self._promoting)
        self.dispatch.fragment = self
        self.dispatch_cell = types.CellType(self.dispatch)

    @property
    def calls(self) -> int:
        """How many times the rewritten function called this Fragment."""
        return self._counter[0]

    @calls.setter
    def calls(self, value):
        self._counter[0] = value

    @property
    def lines(self) -> tuple[int, int]:
        return self.block.lineno, self.block.end_lineno

    def source_lines(self) -> list[str]:
        first, last = self.lines
        return [linecache.getline(self.filename, i).rstrip("\n") for i in range(first, last + 1)]

    def __call__(self, *args):
        return self.dispatch_cell.cell_contents(*args)

    def _promote(self, key, runner) -> None:
        """A call hit ``key`` in the full dispatch: install a dispatch for that key and the one hot
        before it (HOT_KEYS), unless its runner is about to change (its first call measures). At most
        HOT_INSTALLS times: more keys that alternate, or a key whose dispatch misses its arguments (a
        dtype equal to the key's, another object), keep the full dispatch."""
        from .dispatch import make_hot_dispatch

        if getattr(runner, "measuring", False):
            return
        self._hot_installs -= 1
        if self._hot_installs < 0:
            self._promoting[0] = False
            self.dispatch_cell.cell_contents = self.dispatch
            return
        # (with the key hot before it, where that still holds its runner: keys that alternate, such as
        # a loop's first trip, where a name holds a number, and the trips after it, holding arrays)
        others = [(k, r) for k, r in self._hot if k != key and self.cache.get(k) is r][:HOT_KEYS - 1]
        self._hot = [(key, runner)] + others
        hot = make_hot_dispatch(key, runner, self.dispatch, self._counter, self.key_by, others)
        hot.key = key
        self.dispatch_cell.cell_contents = hot

    def _cool(self) -> None:
        """The cache changed: back to the full dispatch, which installs a hot one again on a hit."""
        self.dispatch_cell.cell_contents = self.dispatch

    def __repr__(self) -> str:
        first, last = self.lines
        return (f"<Fragment {self.name} of {self.owner_name}, lines {first}-{last}, "
                f"{len(self.entries)} specializations, {self.calls} calls>")

    def _repr_html_(self) -> str:
        from ..inspection.html import render_fragment_html

        return render_fragment_html(self)

    # -- specialization -----------------------------------------------------------------------------
    def _run_python(self, args):
        return self.fallback(*args)

    @property
    def python_runner(self):
        """The runner of a specialization that chose Python: ``settle_python``, which also lets the
        rewritten function run the block's statements inline (the statements as a function, where
        strict: each call then says why it is not compiled)."""
        return self.fallback if self.strict else self.settle_python

    def settle_python(self, *args, scalar_work=False):
        """Run the block's statements, and let the rewritten function run them inline for the next
        calls."""
        run = self._settled_run
        if self.block.in_loop:
            self._settled_run = min(2 * run, SETTLED_MOST)
        elif scalar_work or not any(type(a) is np.ndarray for a in args):
            # numbers only (a method's scalar arithmetic), or work on numbers whatever the arrays'
            # sizes (``a[0] > 0.5``): nothing a kernel would run faster grows with the calls, and a
            # Fragment call every eight made such a method 2.5-3.7x plain Python's time
            self._settled_run = min(2 * run + 1, SETTLED_MOST_OUTSIDE)
        else:
            # arrays, for which numpy measured faster (``np.exp`` of 100 float64): doubling to
            # SETTLED_CALLS, a larger array is still looked at within 64 calls; a Fragment call
            # every eighth (1.1 us) made such a function 1.7x plain Python's time
            self._settled_run = min(2 * run + 1, SETTLED_CALLS)
        self.run_inline(run)
        return self.fallback(*args)

    def run_inline(self, calls: int) -> None:
        """Let the rewritten function run the block's statements inline for its next ``calls`` calls
        (in a loop, the switch it reads before the loop around the block), then call the
        Fragment again."""
        self.python_switch.cell_contents = itertools.chain(itertools.repeat(True, calls), _DISPATCH)

    def settle_python_scalar_work(self, *args):
        """``settle_python`` for a specialization whose values are numbers whatever the arrays' sizes."""
        return self.settle_python(*args, scalar_work=True)

    def took_windows(self, args) -> bool:
        """Whether the caller took the block's windows (runtime/windows)."""
        return self.windows.taken(args)

    def graph_for(self, args):
        """The block's graph, or the one reading its windows as inputs where the caller took them."""
        return self.block.window_graph if self.took_windows(args) else self.graph

    def _miss(self, args):
        self.calls += 1
        run, self._settled_run = self._settled_run, self._first_settled_run   # new argument types: look again soon
        if any(a is UNBOUND for a in args):   # not a type to specialize on: the block's Python raises
            return self.fallback(*args)
        if self.windows.positions:
            decided = self.windows.decided(self, args)
            if decided is not None:
                return decided(*args)
        if self._twin_keys:              # (a new length of dtypes and ranks the twin compiled for)
            stripped = args[:len(self._twin.live_in)]
            if self._twin.make_key(stripped) in self._twin_keys and _largest(args) >= TWIN_FROM:
                self._settled_run = run          # (its Python may settle the block: runs keep growing)
                return self._twin(*stripped)
        with self._lock:                 # threads missing together compile once
            spec = self._made_meanwhile(args)
            # (a length met for the first times runs the block's Python: runtime/new_extents; outside
            # the lock, which that Python may need: it may call this function again)
            deferred = self._deferred(args) if spec is None else None
            if spec is None and deferred is None:
                spec = self.specialize_only(args)
        if deferred is not None:
            if deferred == self.settle_python:     # (lengths deferred again: the inline runs keep growing)
                self._settled_run = run
            return deferred(*args)
        if not spec.in_range(args):      # made for this key, but this int does not fit: numpy's own path
            return self.fallback(*args)
        return spec.runner(*args)

    def _deferred(self, args):
        """None where this call's new array lengths (or int values) compile; else the runner of the
        block's Python for it (runtime/new_extents), recorded once for explain. A length met the first
        time runs it inline for the next calls (``settle_python``: ever new lengths cost little); one
        met again gets a counting runner in the cache (``_counting``: each call counts, cheaply, and
        the lengths compiled keep their kernels, which inline runs would skip); one that runs it for
        good gets it as its cached runner (inline runs too where no length has compiled code). Through
        this path, one call in eight of such lengths cost 15-40 us, 2-4x a short block's Python."""
        if self.strict or self.backend not in (None, "auto") or config.backend_override() is not None \
                or self.key_by != "shape":
            return None
        key = self.make_key(args)
        decision = self._new_extents.defer(self.entries, key, args)
        if decision is None:
            return None
        if not self._extents_noted:
            self._extents_noted = True
            self._record("extents", f"arrays of new lengths keep arriving: after {EXTENTS_AT_ONCE} lengths "
                                    "compiled, a new length runs as Python until met often enough to repay "
                                    f"its compile (at least {SIGHTINGS_TO_COMPILE} times; never where its "
                                    "kernel would save little, or Python won at lengths not much shorter)")
        entry = self.guarded.get(key)
        if decision != NEVER and entry is None and _largest(args) >= TWIN_FROM and any(
                e.runs == "compiled" and e.measured for e in self.entries):
            twin = self._rank_generic(args)
            if twin is not None:          # (one kernel for any length: its calls go there from now on)
                self._remember_deferred(key, twin)
                return twin
        if decision == AGAIN and self.took_windows(args):
            # (windows the caller took, of a length met again: counted through the Fragment, each call
            # taking its views too, a window moved at each call whose length changed every 20 calls ran
            # 0.65x plain numpy; inline runs reach the Fragment now and then, and count it there)
            return self.python_runner
        if decision == AGAIN:
            if entry is None:         # (its calls count from the cache from now on: _counting)
                self._remember_deferred(key, self._counting(key))
            return self.fallback
        # (a key whose int values all ran Python so far: its Python for every value, without the values'
        # checks at each call)
        if decision == NEVER and (entry is None or all(spec.runs == "python" for spec in entry.specs)):
            # (the lengths compiled keep their kernels where those save more than a new length's miss
            # costs; else the block's Python runs inline for every length, the cheapest)
            runner = self.fallback if any(
                e.measured and e.measured[1] - e.measured[0] >= KEEP_KERNELS_FROM
                for e in self.entries if e.runs == "compiled") else self.python_runner
            self._remember_deferred(key, runner)
            return runner
        return self.python_runner

    def _rank_generic(self, args):
        """The block's rank-generic twin (frontend/rank_generic), made at the first need, where its
        kernel compiles for these arguments' dtypes and ranks; else None."""
        twin = self._twin
        if twin is None:
            made = self.block.make_twin() if self.block.make_twin is not None else None
            if made is None:
                self._twin = False
                return None
            from .loop_fragment import RankGenericTwin

            # (the windows a caller may take are the last live-ins: the twin reads them from their arrays)
            taken = (NOT_TAKEN,) * (len(self.live_in) - len(made.live_in))
            twin = self._twin = RankGenericTwin(made, self, taken)
            self._twin_runner = (lambda *a: twin(*a[:len(made.live_in)])) if taken else twin
        elif twin is False:
            return None
        args = args[:len(twin.live_in)]
        key = twin.make_key(args)
        spec = next((e for e in twin.entries if e.key == key), None) or twin.specialize_only(args)
        if spec.runs != "compiled":
            return None
        self._twin_keys.add(key)
        if not self._twin_noted:
            self._twin_noted = True
            self._record("extents", "arrays of new lengths keep arriving: a further length runs one kernel "
                                    "made for any length (the block as a loop of one trip)")
        return self._twin_runner

    def _remember_deferred(self, key, runner) -> None:
        """Cache ``runner`` (the block's Python, or a counting one) for a deferred length; past
        REMEMBERED of them, those cached so far are dropped (they meet the miss path again)."""
        if len(self._deferred_keys) >= REMEMBERED:
            for old in self._deferred_keys:
                self.cache.pop(old, None)
            self._deferred_keys.clear()
            self._cool()
        self._deferred_keys.add(key)
        self.cache[key] = runner

    def _counting(self, key):
        """The cached runner of a length met again: the block's Python, each call counted (a cell of
        the generated function: one subtraction a call), until the calls repay its compile; then the
        cache entry goes and the call compiles (runtime/new_extents). The function is made by one
        factory per Fragment, generated once: generating it per length cost 0.35 ms each, 6 us a call
        where random lengths arrived (``(d * d).mean()`` of 10-5,000 elements: 0.82x plain numpy)."""
        left = [self._new_extents.left(key)]
        made = []

        def repaid(args):
            self._new_extents.repaid(key)
            if self.cache.get(key) is made[0]:
                del self.cache[key]
            self._deferred_keys.discard(key)
            self._cool()
            return self._miss(args)

        if self._counting_factory is None:
            params = ", ".join(f"a{i}" for i in range(len(self.live_in)))
            packed = f"({params}{',' if self.live_in else ''})"
            namespace = {}
            exec(compile(f"def make(left, fallback, repaid):\n"
                         f"    def run({params}):\n        left[0] -= 1\n        if left[0] > 0:\n"
                         f"            return fallback({params})\n        return repaid({packed})\n"
                         f"    return run\n", "<astjit counting runner>", "exec"), namespace)
            self._counting_factory = namespace["make"]
        made.append(self._counting_factory(left, self.fallback, repaid))
        return made[0]

    def _made_meanwhile(self, args):
        """The specialization another thread made for these arguments while this one waited, or None."""
        key = self.make_key(args)
        entry = self.guarded.get(key)
        candidates = entry.specs if entry is not None else [e for e in self.entries if e.key == key]
        return next((spec for spec in candidates if spec.holds_apart_from_ranges(args)), None)

    def specialize_only(self, args):
        """Make and cache the specialization for these arguments without running it."""
        key = self.make_key(args)
        spec = self._specialize(key, args)
        spec.fragment = self
        if spec.runner is self.fallback and (self.block.in_loop or not spec.refused or _small_arrays(args)
                                             or any(a is NOT_PLAIN for a in args)):
            # (outside loops, a block that cannot compile for these types, a broadcast error among
            # them, keeps its Fragment call where it has a large array: the next call's types may
            # compile; without an array among them it settles: ``x + kw["y"]`` with a dict made a
            # Fragment call on every call, 0.2 us of a 0.13 us function; with small arrays only too
            # (``2.0 * x + y`` of Fortran-ordered 10x10: 0.6 us a call on 0.8, 0.58x plain), where a
            # kernel for the next types would save little meanwhile; and so does one reading a
            # property, which Python reads at each call: its plain-attribute test and Fragment call
            # made a method 1.8x plain)
            spec.runner = self.python_runner
            if spec.scalar_work and spec.runner == self.settle_python:
                spec.runner = self.settle_python_scalar_work
        existing = self.guarded.get(key)
        if existing is not None:
            existing.add(spec)
        elif spec.value_guards or spec.range_guards or spec.length_guards:
            self.guarded[key] = GuardedEntry(self, key, spec)
        else:
            self.cache[key] = spec.runner
        return spec

    def _specialize(self, key, args):
        limit = config.recompile_limit()
        if len(self.entries) >= limit:
            if not any(r.kind == "limit" for r in self.records):
                self._record("limit", f"more than {limit} specializations (ASTJIT_RECOMPILE_LIMIT): "
                                      "further argument types run as Python")
                # (not for a block that never compiled: it runs as Python for every argument type,
                # and padding arrays would change nothing)
                if limit > 0 and any(e.mode != "python" for e in self.entries):
                    self._warn_limit(limit, key, args)
            return Specialization(key, self.fallback, "python", "recompile limit")
        last = self.entries[-1] if self.entries else None
        if last is not None and self.graph_for(args) is self.graph_for(last.key):
            change = key_difference(self.live_in, last.key, key)
            self._record("recompile", f"recompiled: {change}")
            config.log("recompiles", "%s line %s: %s", self.owner_name, self.block.lineno, change)
        started, importing = time.perf_counter(), IMPORT_SECONDS[0]
        try:
            spec = self.make_specialization(key, args)
            if spec.mode not in ("numpy", "python") and spec.measure and self.backend is None \
                    and config.backend_override() is None:
                from .measure import measuring_runner

                spec.runner = measuring_runner(self, spec, key)     # (its disk entry: once measured)
            else:
                from .persisted import publish

                publish(spec)
        except Unsupported as exc:
            reason = str(exc)
            if self.strict and not isinstance(exc, RaisesAsPython):    # (the user's own error raises)
                first = self.block.stmts[0]
                raise StrictModeError(f"cannot compile this block: {reason}", self.filename,
                                      self.block.lineno, first.col_offset,
                                      getattr(first, "end_col_offset", None)) from None
            self._record("fallback", f"{reason}: the block runs as Python "
                                     f"(for {describe_key(self.live_in, key)})")
            config.log("fallbacks", "%s line %s: %s", self.owner_name, self.block.lineno, reason)
            spec = Specialization(key, self.fallback, "python", reason)
            spec.refused = True
        # (without TVM's import: counted as a compile's cost, it made a new length of a block wait
        # 10-100 times more calls for its compile, runtime/new_extents)
        spec.compile_seconds = time.perf_counter() - started - (IMPORT_SECONDS[0] - importing)
        self.entries.append(spec)
        config.log("fragments", "%s line %s: specialized for %s in %.1f ms (%s)", self.owner_name,
                   self.block.lineno, describe_key(self.live_in, key), spec.compile_seconds * 1e3, spec.mode)
        return spec

    def kernel_failed(self, spec, segment, exc) -> None:
        """A compiled segment of ``spec`` raised at a call (runtime/plan: a backend's bug; the call ran
        the block's Python): recorded once, and the specialization runs the block's Python from now on,
        rather than a failing kernel before the Python at every call."""
        if spec.kernel_failed:
            return
        spec.kernel_failed = True
        self._record("fallback", f"the compiled code ({segment.description or segment.backend}) raised "
                                 f"{type(exc).__name__}: {exc}: the block runs as Python "
                                 f"(for {describe_key(self.live_in, spec.key)})")
        config.log("fallbacks", "%s line %s: compiled code raised %r", self.owner_name, self.block.lineno, exc)
        spec.mode_chosen = "python"
        self.use_runner(spec, self.python_runner)

    def use_runner(self, spec, runner) -> None:
        """``runner`` runs ``spec`` from now on (its Python after its kernel failed; a weighing that settled
        on its kernel: the kernel without the weighing's own call), the hot dispatch too."""
        old, spec.runner = spec.runner, runner
        if self.cache.get(spec.key) is old:
            self.cache[spec.key] = runner
        self._cool()

    def _warn_limit(self, limit, key, args) -> None:
        """Warn once, at the user's line, naming what keeps changing between calls."""
        last = self.entries[-1]
        if last.key != key:
            change = key_difference(self.live_in, last.key, key)
        else:
            change = "; ".join(f"'{self.live_in[i]}' value {v!r} -> {args[i]!r}"
                               for i, v in last.value_guards.items() if not _same_value(args[i], v)) \
                or "argument values the specialization depends on"
        warnings.warn_explicit(
            f"{self.owner_name}: this block was specialized {limit} time{'s' if limit != 1 else ''} "
            "(ASTJIT_RECOMPILE_LIMIT) and "
            f"runs as Python for new argument types from now on; what keeps changing: {change}. Pass "
            "fewer distinct shapes, dtypes or such values (pad arrays to a few sizes), or raise "
            "ASTJIT_RECOMPILE_LIMIT.",
            RecompileLimitWarning, self.filename, self.block.lineno)

    def make_specialization(self, key, args):
        """Infer, partition and compile the block's graph for these arguments (runtime/specialize)."""
        from .specialize import specialize

        return specialize(self, key, args)

    def note_rewrites(self, applied) -> None:
        """Record each rule application (rule name, line) once, for ``explain`` and ``show``."""
        for name, lineno in applied:
            if (name, lineno) in self._rewrites_noted:
                continue
            self._rewrites_noted.add((name, lineno))
            self._record("rewrite", f"rule {name} rewrote this line's graph", lineno)

    def _record(self, kind, message, lineno=None):
        """A Record at ``lineno`` (default: the block's first line)."""
        line = lineno or self.block.lineno
        source = linecache.getline(self.filename, line).rstrip("\n")
        self.records.append(Record(kind, self.filename, line, message, source, self.name))


class Specialization:
    """One cache entry: the runner for one key, and what it assumed about argument values."""

    def __init__(self, key, runner, mode, note="", value_guards=None, range_guards=None, plan=None,
                 ctx=None, segments=(), reasons=None, length_guards=None):
        self.key = key
        self.runner = runner
        self.mode = mode                   # a backend's name ("tvm"), "numpy", "mixed" or "python"
        self.note = note
        self.value_guards = value_guards or {}
        self.range_guards = range_guards or {}
        self.length_guards = length_guards or {}   # input index -> length of a tuple of ints (an index)
        self.plan = plan
        self.ctx = ctx                   # the inference context (types); None if types were not inferred
        self.segments = list(segments)   # which backend runs which nodes, in order
        self.reasons = reasons           # node -> why TVM did not take it; None if never partitioned
        self.compile_seconds = 0.0
        self.fragment = None             # the Fragment this entry belongs to (for rendering)
        self.effects = bool(ctx.effects) if ctx is not None else False
        self.measure = True              # time it against the block's Python on its first call
        self.measured = None             # (compiled seconds, python seconds) once measured
        self.mode_chosen = None
        self.disk_key = None               # its key in the disk cache, where it is stored there
        self.refused = False               # Python because these types cannot compile (Unsupported)
        self.scalar_work = False           # Python because it computes numbers only (runtime/specialize)
        self.kernel_failed = False         # Python because a compiled part raised at a call

    @property
    def runs(self) -> str:
        """What calls of this key run: "python" (its mode, or the block's Python measured faster on the
        first call) or "compiled"."""
        return "python" if self.mode == "python" or self.mode_chosen == "python" else "compiled"

    def _repr_html_(self) -> str:
        from ..inspection.html import render_entry_html

        return render_entry_html(self.fragment, self)

    def holds(self, args) -> bool:
        return self.holds_apart_from_ranges(args) and self.in_range(args)

    def holds_apart_from_ranges(self, args) -> bool:
        for i, v in self.value_guards.items():
            a = args[i]
            if type(a) is not type(v) or not _same_value(a, v):
                return False
        for i, n in self.length_guards.items():
            if not _int_tuple_of_length(args[i], n):
                return False
        return True

    def in_range(self, args) -> bool:
        for i, (lo, hi) in self.range_guards.items():
            if not lo <= args[i] <= hi:
                return False
        return True


class GuardedEntry:
    """Specializations of one key that also depend on argument values (a shape given as an int, a
    tuple of axes, the range of a Python int). Its checks run on every call, so they are generated as
    straight-line code (``if`` per specialization) and installed as the key's runner."""

    def __init__(self, fragment, key, spec):
        self.fragment = fragment
        self.key = key
        self.specs = []
        self.add(spec)

    def add(self, spec) -> None:
        self.specs.append(spec)
        self.fragment.cache[self.key] = self._generate()

    def _generate(self):
        n = len(self.fragment.live_in)
        params = ", ".join(f"a{i}" for i in range(n))
        packed = f"({params}{',' if n else ''})"
        namespace = {"same": _same_value, "fits_index": _int_tuple_of_length, "entry": self}
        lines = [f"def check({params}):"]
        for k, spec in enumerate(self.specs):
            namespace[f"s{k}"] = spec
            terms = []
            for i, v in spec.value_guards.items():
                namespace[f"v{k}_{i}"], namespace[f"t{k}_{i}"] = v, type(v)
                inline = type(v) in EQUAL_IS_SAME or isinstance(v, np.dtype)
                # (ints, dtypes: no call; the very tuple or slice of numbers the specialization was made
                # for: no walk over its items, which cost 0.3 us an item at every call)
                same = "{} == {}" if inline else "({0} is {1} or same({0}, {1}))" if _immutable(v) else "same({}, {})"
                terms.append(f"type(a{i}) is t{k}_{i} and " + same.format(f"a{i}", f"v{k}_{i}"))
            for i, length in spec.length_guards.items():
                terms.append(f"fits_index(a{i}, {length})")
            for i, (lo, hi) in spec.range_guards.items():
                terms.append(f"{lo} <= a{i} <= {hi}")
            lines.append(f"    if {' and '.join(terms) or 'True'}:")
            lines.append(f"        return s{k}.runner({params})")
        lines.append(f"    return entry.none_holds({packed})")
        exec(compile("\n".join(lines) + "\n", "<astjit guarded entry>", "exec"), namespace)
        return namespace["check"]

    def none_holds(self, args):
        for spec in self.specs:
            if spec.holds_apart_from_ranges(args):
                # a Python int that does not fit the array's dtype: numpy raises OverflowError (or,
                # in np.where, wraps); the block's own statements do exactly that, before any effect
                return self.fragment.fallback(*args)
        self.fragment.calls -= 1            # the dispatch counted this call; _miss counts it again
        return self.fragment._miss(args)


def _immutable(value) -> bool:
    """Whether ``value`` is a tuple or slice whose items (deeply) are numbers, strings or None: the
    same object holds the same value for good."""
    if type(value) is tuple:
        return all(_immutable(x) or type(x) in IMMUTABLE_ITEMS for x in value)
    if type(value) is slice:
        return all(type(x) in IMMUTABLE_ITEMS for x in (value.start, value.stop, value.step))
    return False


IMMUTABLE_ITEMS = (int, bool, float, complex, str, type(None))


def _int_tuple_of_length(value, length) -> bool:
    return type(value) is tuple and len(value) == length and all(type(x) is int for x in value)


def _same_value(a, b) -> bool:
    """Sameness that a specialization may rely on: the same type, and floats by their bits (``0.0``
    is not ``-0.0``, a NaN is the NaN it was made for, where ``==`` would never let it hit again);
    tuples item by item, so ``(1, 2)`` and ``(1.0, 2)`` or ``(True,)`` and ``(1,)`` stay apart."""
    t = type(a)
    if t is not type(b):
        return False
    if t in EQUAL_IS_SAME or isinstance(a, np.dtype):
        return a == b
    if t is tuple:
        if len(a) != len(b):
            return False
        if _plainly_same(a, b):
            return True
        return all(_same_value(x, y) for x, y in zip(a, b))
    if t is slice:           # (slice(0.0, 3) == slice(0, 3), but only the second one indexes)
        return _same_value(a.start, b.start) and _same_value(a.stop, b.stop) and _same_value(a.step, b.step)
    if t is float:
        return _double_bits(a) == _double_bits(b)
    if t is complex:
        return _double_bits(a.real) == _double_bits(b.real) and _double_bits(a.imag) == _double_bits(b.imag)
    if isinstance(a, np.generic) and a.dtype.kind in "fc":
        return a.tobytes() == b.tobytes()
    try:
        return bool(a == b)
    except Exception:  # an object whose == is not a truth value: only itself is the same
        return a is b


_double_bits = struct.Struct("<d").pack
PLAIN_ITEMS = frozenset({int, bool, str, float, type(None)})


def _plainly_same(a: tuple, b: tuple) -> bool:
    """Sameness of two tuples of ints, strings and floats by C-level comparisons: the items' types in
    order, ``==``, and no float zero (``0.0 == -0.0``). A guard comparing ``*args`` of 40 numbers
    item by item in Python cost 30 us a call. False where it cannot tell (the item-by-item test
    decides then)."""
    kinds = set(map(type, a))
    if len(kinds) == 1:            # (one type throughout both: no position can differ in type)
        same_kinds = kinds == set(map(type, b))
    else:
        same_kinds = list(map(type, a)) == list(map(type, b))
    return (same_kinds and PLAIN_ITEMS.issuperset(kinds) and a == b
            and (float not in kinds or 0.0 not in a))
# types whose == is sameness, once the types are the same (a dtype class such as np.float32 is a type)
EQUAL_IS_SAME = (int, bool, str, type, type(None))
