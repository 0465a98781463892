"""Run a generated program plain and jitted, call by call, and say how the two differ.

Bit for bit where the program uses no op that may round differently (transcendental functions, float
powers, float sums and means): NaN equals NaN and the sign of zero counts. Otherwise floats are compared
within the suite's tolerances (tests/differential.py), scaled by the magnitude of the array. Types,
dtypes, shapes, memory order, which results alias which arguments, the arguments afterwards (in-place
effects) and exception types are always compared exactly.
"""

import linecache
import os
import re
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from itertools import count

import numpy as np

from astjit import jit

from .model import Program
from .values import clone
from .watchdog import ProgramTimeout, time_limit

try:
    from differential import RTOL
except ImportError:        # run as ``python -m tests.campaign.run``: tests/ itself is not on sys.path
    from tests.differential import RTOL

LOOSENESS = 8          # rounding differences add up over a program's statements and loop iterations
TIME_LIMIT = 120       # seconds a jitted call may take beyond three times its plain call's: a hang
PLAIN_LIMIT = 30       # seconds a plain call may take: a slower program (an array that grows 5x per
                       # loop iteration until MemoryError) is skipped, as too slow to compare

_ASTJIT_DIR = os.path.dirname(os.path.abspath(jit.__code__.co_filename))
_GENERATED = ("<astjit dispatch>", "<astjit runner>", "<astjit guard>")
_program_numbers = count()


@dataclass
class Finding:
    """One call whose jitted result differs from numpy's. ``kind``: "mismatch", "crash" (an exception
    from astjit's own code) or "soft" (only where a rounding difference may have become a different
    integer or branch: reported, not a failure)."""
    kind: str
    seed: int
    call: int
    details: list
    program: Program

    @property
    def category(self) -> str:
        return self.details[0].split(":", 1)[0] if self.details else self.kind

    def report(self) -> str:
        lines = [f"{self.kind} in call {self.call} of program seed={self.seed} (backend={self.program.backend!r},"
                 f" inexact={self.program.inexact})", *("  " + d for d in self.details[:6]),
                 self.program.function.rstrip()]
        return "\n".join(lines)


@dataclass
class Outcome:
    calls: int = 0
    skipped: int = 0                                     # 1 if a plain call took over PLAIN_LIMIT
    findings: list = field(default_factory=list)
    modes: Counter = field(default_factory=Counter)      # specializations made, by mode ("tvm", ...)


@dataclass
class Run:
    """What one call did: its result, its arguments afterwards, or the exception it raised."""
    result: object = None
    args: tuple = ()
    error: BaseException | None = None


def call(fn, args, errstate) -> Run:
    with warnings.catch_warnings(), np.errstate(**errstate):
        warnings.simplefilter("ignore")
        try:
            result = fn(*args)
        except Exception as exc:
            return Run(args=args, error=exc)
    return Run(result, args)


def from_astjit(exc: BaseException) -> bool:
    """Whether the innermost frame outside numpy and the standard library is astjit's (or TVM's)."""
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        name = frame.filename
        if name in _GENERATED or name.startswith(_ASTJIT_DIR) or f"{os.sep}tvm{os.sep}" in name:
            return True
        if f"{os.sep}numpy{os.sep}" in name or name.startswith("<frozen") or "/lib/python3" in name:
            continue
        return False
    return False


# -- value comparison --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tolerance:
    """How closely floats must agree: ``exact`` (bit for bit), else within RTOL of the result's dtype,
    or of float32 where float32 values took part (``float32``: a float32 tanh stored in a float64 result
    carries float32 rounding); ``scale``: the largest input magnitude (see float_difference)."""
    exact: bool = True
    scale: float = 0.0
    float32: bool = False
    zero_sign: bool = True          # False where the program calls np.fmax or np.fmin: see zero_sign_defined
                                    # (then the sign of an infinity, which a zero's sign may decide, too)


EXACT = Tolerance()


def float_difference(got: np.ndarray, want: np.ndarray, tol: Tolerance) -> str | None:
    """What differs between two float arrays of one dtype; "cancellation" for a difference within the
    tolerance relative to ``tol.scale`` (the largest input magnitude): a sum whose terms cancel."""
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if not np.array_equal(nan_g, nan_w):
        return "NaN at other positions"
    g, w = got[~nan_w], want[~nan_w]
    if not tol.zero_sign:       # a zero of either sign from np.fmax/fmin may become an infinity of that sign
        g, w = np.where(np.isinf(g), np.abs(g), g), np.where(np.isinf(w), np.abs(w), w)
    if tol.exact:
        if not np.array_equal(g, w):
            return "values differ"
        zero = w == 0
        if tol.zero_sign and not np.array_equal(np.signbit(g[zero]), np.signbit(w[zero])):
            return "sign of zero differs"
        return None
    if not np.array_equal(np.isinf(g), np.isinf(w)) or not np.array_equal(g[np.isinf(w)], w[np.isinf(w)]):
        return "infinities differ"
    finite = np.isfinite(w)
    g, w = g[finite].astype(np.float64), w[finite].astype(np.float64)
    if w.size == 0:
        return None
    rtol = max(RTOL.get(got.dtype, 1e-12), RTOL[np.dtype(np.float32)] if tol.float32 else 0.0) * LOOSENESS
    with np.errstate(all="ignore"):
        error = np.abs(g - w)
        if np.any(error > rtol * (np.abs(w) + max(np.abs(w).max(), np.abs(g).max()))):
            if np.all(error <= rtol * tol.scale):
                return "cancellation"
            return f"values differ beyond rtol {rtol:g} (max abs diff {error.max():g})"
    return None


def magnitude(values) -> float:
    """The largest finite magnitude among the arrays and numbers in ``values``."""
    biggest = 0.0
    for v in values:
        if isinstance(v, np.ndarray | np.generic | int | float) and not isinstance(v, bool):
            finite = np.abs(np.asarray(v, dtype=np.float64))
            finite = finite[np.isfinite(finite)]
            biggest = max(biggest, float(finite.max()) if finite.size else 0.0)
    return biggest


def differences(got, want, tol: Tolerance = EXACT, path="result") -> list:
    """Every way ``got`` differs from numpy's ``want``, as "category: where: what" lines."""
    if type(got) is not type(want):
        return [f"type: {path}: {type(got).__name__} != numpy's {type(want).__name__}"]
    if isinstance(want, tuple | list):
        if len(got) != len(want):
            return [f"length: {path}: {len(got)} != numpy's {len(want)}"]
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in differences(g, w, tol, f"{path}[{i}]")]
    if isinstance(want, np.ndarray | np.generic):
        if got.dtype != want.dtype:
            return [f"dtype: {path}: {got.dtype} != numpy's {want.dtype}"]
        if np.shape(got) != np.shape(want):
            return [f"shape: {path}: {np.shape(got)} != numpy's {np.shape(want)}"]
        out = []
        if isinstance(want, np.ndarray):
            layout = (got.flags.c_contiguous, got.flags.f_contiguous)
            if layout != (want.flags.c_contiguous, want.flags.f_contiguous):
                out.append(f"memory order: {path}: (C, F) contiguous {layout} != numpy's "
                           f"{(want.flags.c_contiguous, want.flags.f_contiguous)}")
        g, w = np.asarray(got), np.asarray(want)
        if w.dtype.kind == "f":
            problem = float_difference(g, w, tol)
        else:
            problem = None if np.array_equal(g, w) else "values differ"
        if problem == "cancellation":
            out.append(f"cancellation: {path}: within the tolerance relative to the largest input "
                       f"({tol.scale:g}), not to the result: {show(got)} != numpy's {show(want)}")
        elif problem:
            out.append(f"value: {path}: {problem}: {show(got)} != numpy's {show(want)}")
        return out
    if isinstance(want, float):
        problem = float_difference(np.array([got]), np.array([want]), tol)
        return [f"value: {path}: {got!r} != numpy's {want!r}"] if problem else []
    if isinstance(want, np.dtype | type | slice | str | int | bool) or want is None:
        return [] if got == want else [f"value: {path}: {got!r} != numpy's {want!r}"]
    return []


# numpy computes float functions of these in float32 (np.tanh of int16 is float32)
FLOAT32_SOURCES = tuple(np.dtype(t) for t in (np.float32, np.int8, np.uint8, np.int16, np.uint16, np.bool_))


def uses_float32(program: Program, arguments) -> bool:
    """Whether float32 values may take part in the call: from an argument, a dtype passed, the source."""
    def float32(v) -> bool:
        if isinstance(v, np.ndarray | np.generic):
            return v.dtype in FLOAT32_SOURCES
        return isinstance(v, np.dtype | type) and np.dtype(v) in FLOAT32_SOURCES

    return any(f"{t}" in program.function for t in FLOAT32_SOURCES if t != np.bool_) or any(
        float32(v) for v in (*arguments.args, *arguments.attributes.values()))


FMAX_FMIN = re.compile(r"\bnp\.fm(ax|in)\(")


def zero_sign_defined(program: Program) -> bool:
    """Whether numpy's sign of zero is a function of the values: not where the program calls np.fmax or
    np.fmin. On a tie of +0.0 and -0.0 numpy returns the second operand where its SIMD kernel handled
    the element and the first where its scalar C fmax did, which depends on the element's position,
    the length, the strides and the CPU's vector width: ``np.fmax(np.zeros(3), -0.0)`` is
    ``[0., -0., -0.]``, ``np.fmax(np.zeros(8), -0.0)`` all -0.0. No elementwise kernel can match
    that. (np.maximum and np.minimum always give the second operand, and astjit does too.)"""
    return not FMAX_FMIN.search(program.function)


def show(value) -> str:
    return np.array2string(np.asarray(value), threshold=12, edgeitems=3).replace("\n", " ")


def arrays_in(value) -> list:
    if isinstance(value, tuple | list):
        return [a for v in value for a in arrays_in(v)]
    return [value] if isinstance(value, np.ndarray) else []


def aliasing(run: Run) -> list:
    """For each array in the result: the arguments it is, and those it shares memory with."""
    args = [a for a in run.args if isinstance(a, np.ndarray)]
    return [([i for i, a in enumerate(args) if r is a], [i for i, a in enumerate(args) if np.shares_memory(r, a)])
            for r in arrays_in(run.result)]


def compare_runs(got: Run, want: Run, tol: Tolerance, again: Run | None = None) -> tuple[str, list]:
    """("crash" | "mismatch" | "", differences) for one call. ``again``: numpy's run repeated, where it
    raised: the arguments after the error are compared only if numpy left them the same both times
    (``c **= -7`` on integers raises after writing uninitialized values into ``c``)."""
    if want.error is not None or got.error is not None:
        if want.error is not None and got.error is not None and type(got.error) is type(want.error):
            if "negative integer powers" in str(want.error) or again is not None and differences(again.args,
                                                                                                 want.args):
                return "", []
            out = [d for i, (g, w) in enumerate(zip(got.args, want.args))     # effects before the error
                   for d in differences(g, w, tol, f"argument {i} after the {type(want.error).__name__}")]
            return ("mismatch" if out else ""), out
        if got.error is None:
            return "mismatch", [f"exception: numpy raised {type(want.error).__name__}: {want.error}; "
                                f"astjit returned {show_result(got.result)}"]
        kind = "crash" if from_astjit(got.error) else "mismatch"
        what = "returned" if want.error is None else f"raised {type(want.error).__name__}: {want.error};"
        tb = "".join(traceback.format_exception(got.error)[-4:]).rstrip() if kind == "crash" else ""
        return kind, [f"exception: numpy {what} astjit raised {type(got.error).__name__}: {got.error}"
                      + (f"\n{tb}" if tb else "")]
    out = differences(got.result, want.result, tol)
    for i, (g, w) in enumerate(zip(got.args, want.args)):
        out += differences(g, w, tol, f"argument {i} after the call")
    if aliasing(got) != aliasing(want):
        out.append(f"aliasing: (is, shares memory with) arguments {aliasing(got)} != numpy's {aliasing(want)}")
    return ("mismatch" if out else ""), out


def show_result(value) -> str:
    return repr(value) if not isinstance(value, np.ndarray) else f"array {show(value)} ({value.dtype})"


# -- running a program -------------------------------------------------------------------------------
def load(program: Program) -> tuple[dict, str]:
    """Compile the program under a unique file name whose source linecache serves (what jit reads)."""
    filename = f"<campaign program {program.seed} #{next(_program_numbers)}>"
    linecache.cache[filename] = (len(program.source), None, program.source.splitlines(True), filename)
    namespace = {"__name__": f"campaign_program_{program.seed}"}
    exec(compile(program.source, filename, "exec"), namespace)
    return namespace, filename


def run_program(program: Program) -> Outcome:
    namespace, filename = load(program)
    outcome = Outcome()
    try:
        compare_calls(program, namespace, outcome)
    finally:
        linecache.cache.pop(filename, None)
    return outcome


class TooSlow(Exception):
    """The plain program itself took over PLAIN_LIMIT: nothing to compare the jitted one against."""


def timed_plain_call(plain, arguments) -> tuple[Run, float]:
    start = time.perf_counter()
    try:
        with time_limit(PLAIN_LIMIT):
            run = call(plain, clone(arguments.args), arguments.errstate)
    except ProgramTimeout:
        raise TooSlow from None
    return run, time.perf_counter() - start


def compare_calls(program: Program, namespace: dict, outcome: Outcome) -> None:
    plain = namespace["f"]
    try:
        jitted = jit(plain, backend=program.backend)
    except Exception as exc:
        outcome.findings.append(Finding("crash", program.seed, 0, [f"exception: jit() raised {exc!r}"], program))
        return
    for number, arguments in enumerate(program.calls):
        arguments.apply(namespace)
        try:
            want, took = timed_plain_call(plain, arguments)
        except TooSlow:
            outcome.skipped = 1
            return
        try:
            with time_limit(TIME_LIMIT + 3 * took):
                got = call(jitted, clone(arguments.args), arguments.errstate)
        except ProgramTimeout as exc:
            outcome.findings.append(Finding("crash", program.seed, number, [f"hang: {exc}"], program))
            return
        outcome.calls += 1
        try:
            again = timed_plain_call(plain, arguments)[0] if want.error is not None else None
        except TooSlow:
            outcome.skipped = 1
            return
        tol = Tolerance(not program.inexact, magnitude(arguments.args), uses_float32(program, arguments),
                        zero_sign_defined(program))
        kind, details = compare_runs(got, want, tol, again)
        if kind == "mismatch" and all(program.may_differ(*d.split(": ", 2)[:2]) for d in details):
            kind = "soft"
        if kind:
            outcome.findings.append(Finding(kind, program.seed, number, details, program))
    for record in jitted.records():
        if record.kind == "function" and "could not transform" in record.message:
            outcome.findings.append(Finding("crash", program.seed, 0, [f"transform: {record.message}"], program))
    outcome.modes.update(entry.mode_chosen or entry.mode for frag in jitted.fragments for entry in frag.entries)
