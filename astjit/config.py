"""Every environment switch astjit reads, in one place.

ASTJIT_DISABLE=1     run every jitted function as the original Python (no transform, no compile).
ASTJIT_LOG=a,b       log these event kinds through the ``astjit`` logger: fragments, recompiles,
                     fallbacks, compiles, cache, passes (or ``all``).
ASTJIT_BACKEND=numpy run every fragment on the numpy reference backend (no TVM).
ASTJIT_RECOMPILE_LIMIT=N
                     specializations one fragment may hold before it runs as Python (default 16).
ASTJIT_TINY_LOOP=N   a compiled loop estimated at N units of work or fewer (a unit: a statement, an
                     element read or write, an operator or a call, about 5-30 ns of Python) runs as
                     written in Python, which is faster than a kernel call for a few iterations
                     (default ``auto``: the price of the loop's kernel call in units, from its
                     arguments: frontend/loop_call_cost; 0: always the kernel). A ``while`` loop's
                     first trips, whose count is not known before they run, run as written up to
                     twice that work.
ASTJIT_GC_FREEZE=1   freeze what the garbage collector tracks after importing TVM's compiler
                     (backends/tvm/runtime.tvm_module): faster full collections, but objects alive
                     then are never collected as cyclic garbage.
ASTJIT_CACHE=0       do not read or write the on-disk cache of compiled kernels (runtime/disk_cache).
ASTJIT_CACHE_DIR=P   keep that cache in folder P (default ``$XDG_CACHE_HOME/astjit`` or
                     ``~/.cache/astjit``); a folder other users can write is refused with a warning.
"""

import functools
import logging
import os

_LOG_KINDS = ("fragments", "recompiles", "fallbacks", "compiles", "cache", "passes")


def disabled() -> bool:
    return os.environ.get("ASTJIT_DISABLE", "") not in ("", "0")


BACKENDS = ("auto", "tvm", "numpy", "python")


def backend_override() -> str | None:
    value = os.environ.get("ASTJIT_BACKEND", "").strip().lower()
    if value and value not in BACKENDS:
        from .backends import registry

        if value in registry.names():
            return value
        raise ValueError(f"ASTJIT_BACKEND must be one of {', '.join(BACKENDS)}, not {value!r}")
    return None if value in ("", "auto") else value


def tiny_loop_work() -> int | None:
    """ASTJIT_TINY_LOOP as an integer, or None for ``auto`` (its default, also where its value is not
    an integer): each loop's own kernel call price (frontend/loop_call_cost)."""
    try:
        return int(os.environ.get("ASTJIT_TINY_LOOP", "auto"))
    except ValueError:
        return None


def disk_cache_enabled() -> bool:
    return os.environ.get("ASTJIT_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def gc_freeze() -> bool:
    return os.environ.get("ASTJIT_GC_FREEZE", "0").strip().lower() not in ("", "0", "false", "no", "off")


def recompile_limit() -> int:
    raw = os.environ.get("ASTJIT_RECOMPILE_LIMIT", "16")
    try:
        return int(raw)
    except ValueError:
        _warn_once("ASTJIT_RECOMPILE_LIMIT", raw, "an integer: the default, 16, applies")
        return 16


def log_kinds() -> frozenset:
    raw = os.environ.get("ASTJIT_LOG", "")
    kinds, unknown = _parsed_log_kinds(raw)
    if unknown:
        _warn_once("ASTJIT_LOG", raw, f"comma-separated kinds among {', '.join(_LOG_KINDS)} or all: "
                                      f"{', '.join(map(repr, unknown))} logs nothing")
    return kinds


@functools.lru_cache(maxsize=16)
def _parsed_log_kinds(raw: str) -> tuple[frozenset, list]:
    """(kinds, unknown names) of an ASTJIT_LOG value, parsed once per value: ``log`` asks at every
    event, and some happen at every call (a loop declining arrays that share memory)."""
    kinds = {k.strip() for k in raw.split(",") if k.strip()}
    if "all" in kinds:
        kinds = set(_LOG_KINDS)
    return frozenset(kinds), sorted(kinds - set(_LOG_KINDS))


_warned = set()


def _warn_once(variable: str, value: str, expected: str) -> None:
    """One ConfigurationWarning per variable and value: a typo would otherwise be ignored silently."""
    if (variable, value) in _warned:
        return
    _warned.add((variable, value))
    import warnings

    from .errors import ConfigurationWarning

    warnings.warn(f"{variable}={value!r} is not {expected}", ConfigurationWarning, stacklevel=3)


logger = logging.getLogger("astjit")


def log(kind: str, message: str, *args) -> None:
    """Log one event if its kind is switched on by ASTJIT_LOG (quiet by default)."""
    if kind in log_kinds():
        if not logger.handlers and not logging.getLogger().handlers:
            logging.basicConfig(level=logging.INFO, format="astjit %(message)s")
        logger.setLevel(logging.INFO)
        logger.info("[%s] " + message, kind, *args)
