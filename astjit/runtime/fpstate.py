"""Whether compiled kernels may run under numpy's current floating-point error state.

Kernels raise no floating-point errors and emit no warnings. Under numpy's default state (warn) and
under ``ignore`` the values are the same, so kernels run; when any category is ``raise``, ``call``,
``print`` or ``log`` (``np.errstate(all="raise")``, ``np.seterr``), numpy's reaction is part of the
result and the original Python runs instead. numpy keeps its state in a context variable whose value
is replaced whenever the state changes, so the check on each call is one identity comparison.

So does a warnings filter that turns numpy's ``RuntimeWarning`` into an exception
(``warnings.simplefilter("error")``, ``pytest -W error``, ``catch_warnings`` around a ``try`` that
catches it): the warning raised is part of the result. The warnings module tells itself of every change
to its filters (``warnings._filters_mutated``, which ``simplefilter``, ``filterwarnings``,
``resetwarnings`` and ``catch_warnings`` call); astjit listens there, and reads the filters at the
first dispatch after a change, never on every call.
"""

import contextlib
import threading
import warnings

import numpy as np

try:
    from numpy._core._multiarray_umath import _extobj_contextvar

    current_state = _extobj_contextvar.get
except ImportError:  # another numpy layout: compare the error dict itself (slower, same answer)
    def current_state():
        return tuple(sorted(np.geterr().items()))
try:        # (np.geterr's own source: the modes without the wrapper, a third of its time)
    from numpy._core._multiarray_umath import _get_extobj_dict as _error_modes
except ImportError:
    _error_modes = np.geterr

QUIET = ("ignore", "warn")
# what explain says once a call ran the original for want of a quiet state
RUNS_AS_PYTHON = ("numpy's floating-point error state asked for errors at a call (np.errstate or np.seterr "
                  "with 'raise', 'call', 'print' or 'log', or a warnings filter turning RuntimeWarning into "
                  "an error): calls under such a state run as Python, where numpy raises, calls, prints or "
                  "logs as it would")
last_quiet = [None]          # the state in which kernels may run that the dispatch tests first
# the quiet one met before it: a function entering ``np.errstate`` at each call meets its new state, then
# the state restored on leaving, which found its answer among the recent ones at each call (0.2-0.5 us)
quiet_before = [None]
last_loud = [None]           # one in which they may not (np.geterr per call cost 0.5 us)
# states seen lately, by identity: whether kernels may run in each, the one met last at the end.
# ``np.errstate`` makes a new state at each entry, and leaving restores the one before: a new state
# takes the slot of its answer at once (the blocks after the first in that ``with`` meet it there:
# each worked its modes out again and went through the full dispatch), and the one met longest ago
# leaves the recent ones (the state restored, met after each ``with``, stays; clearing all of them
# once full made the program read it again every few calls)
RECENT_STATES = 8
_recent = {}


def kernels_allowed() -> bool:
    state = current_state()
    if state is last_quiet[0]:
        return True
    if state is quiet_before[0]:
        quiet_before[0], last_quiet[0] = last_quiet[0], state
        return True
    if state is last_loud[0]:
        return False
    allowed = _recent.pop(state, None)
    if allowed is None:
        modes = _error_modes()
        allowed = (modes["divide"] in QUIET and modes["over"] in QUIET and modes["under"] in QUIET
                   and modes["invalid"] in QUIET)
        if len(_recent) >= RECENT_STATES:            # (the one met longest ago goes)
            try:            # (threads entering states together may pick the same one, or none is left)
                _recent.pop(next(iter(_recent)), None)
            except (StopIteration, RuntimeError):
                pass
    _recent[state] = allowed                         # (the last met, last in order)
    allowed = allowed and not warnings_raise()
    if allowed:
        leaving = quiet_before[0]
        quiet_before[0], last_quiet[0] = last_quiet[0], state
        if leaving is not None and leaving is not state:   # (met last among the recent ones: it stays)
            _recent.pop(leaving, None)
            _recent[leaving] = True
    else:
        last_loud[0] = state
    return allowed


def _runtime_warnings_raise(filters) -> bool:
    """Whether a warnings filter may turn a RuntimeWarning into an exception: an ``error`` filter for its
    category or a base of it (whatever its message and module patterns: kernels then run only where
    no such filter is set)."""
    return any(f[0] == "error" and isinstance(f[2], type) and issubclass(RuntimeWarning, f[2])
               for f in list(filters))


# the answer for each filters list seen lately, by identity and length: ``catch_warnings`` puts a copy
# in place on entry and the list before back on exit, and a function entering it at each call read
# the filters twice a call (a rescan cost about 2 us)
_scanned: dict = {}
SCANNED_LISTS = 8


def warnings_raise() -> bool:
    """``_runtime_warnings_raise`` of the current filters list, read again where it is another list or
    its length changed: the warnings module's own changes insert or remove a filter, or move one it
    holds to the front, which keeps both the length and the answer."""
    filters = warnings.filters
    known = _scanned.get(id(filters))
    if known is None or known[0] is not filters or known[1] != len(filters):
        if len(_scanned) >= SCANNED_LISTS:
            _scanned.clear()
        known = _scanned[id(filters)] = (filters, len(filters), _runtime_warnings_raise(filters))
    return known[2]


class _InASilencedThread(type):
    """The metaclass of ``_Silenced``: every warning category is a subclass of it in a thread that
    ``silenced`` runs in, and none in any other (``issubclass`` asks the metaclass, and so does the
    warnings module's filter matching)."""

    def __subclasscheck__(cls, subclass) -> bool:
        return _silencing.get(threading.get_ident(), 0) > 0


class _Silenced(Warning, metaclass=_InASilencedThread):
    """The category of the filter ``silenced`` puts first: it matches in the silenced thread alone."""


# the filter ``silenced`` puts first while it runs (found again by identity to be taken out), and how
# many ``silenced`` blocks each thread is in
_IGNORE_ALL = ("ignore", None, _Silenced, None, 0)
_silencing: dict = {}


@contextlib.contextmanager
def silenced():
    """numpy's floating-point errors ignored and every warning ignored while astjit runs numpy for
    itself (a compile's probes on sample values, the timed runs of a first call), without what
    ``catch_warnings`` does: an ``ignore`` filter put first in the filters list itself, taken out
    after, with no call of the warnings module's ``_filters_mutated``. Entering ``catch_warnings``
    bumps the filters' version, and every warning the program had shown once (the ``default`` action,
    once per place) showed again after each compile; showing warnings nowhere instead (``showwarning``)
    counted a probe's warning as shown at numpy's line, so the user's own later one never showed. An
    ignored warning is neither shown nor counted. The filters list is the process's: the filter's
    category matches in this thread alone (``_Silenced``), so another thread's warnings are shown,
    or raised under an ``error`` filter, as they would be without astjit (numpy's error state is
    per thread already)."""
    filters = warnings.filters
    me = threading.get_ident()
    _silencing[me] = _silencing.get(me, 0) + 1
    filters.insert(0, _IGNORE_ALL)
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        for k, f in enumerate(filters):
            if f is _IGNORE_ALL:
                del filters[k]
                break
        if _silencing[me] == 1:
            del _silencing[me]
        else:
            _silencing[me] -= 1


def _filters_mutated():
    """The warnings filters changed: the next dispatch asks ``kernels_allowed`` again (one write here: a
    program entering ``catch_warnings`` in a loop pays nothing more)."""
    last_quiet[0] = quiet_before[0] = last_loud[0] = None


def _listen_to_warning_filters():
    """Wrap the function the warnings module calls after each change of its filters
    (``_filters_mutated``; ``_filters_mutated_lock_held`` in Python 3.14's ``_py_warnings``, whose
    functions call it as a global of that module)."""
    import sys

    for module in {id(m): m for m in (warnings, sys.modules.get("_py_warnings")) if m is not None}.values():
        for name in ("_filters_mutated", "_filters_mutated_lock_held"):
            told = getattr(module, name, None)
            if told is None or getattr(told, "astjit_listens", False):
                continue

            def mutated(*args, told=told, **kwargs):
                result = told(*args, **kwargs)
                _filters_mutated()
                return result

            mutated.astjit_listens = True
            setattr(module, name, mutated)


_listen_to_warning_filters()
