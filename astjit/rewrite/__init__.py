"""Rewrites users can write: rules over a block's graph, and whole-function transformations.

``Rule(pattern, replacement, where=None, exact=True, name=None)`` rewrites a block's graph wherever
it computes ``pattern``; the ones shipped here (``SHIPPED``) and the ones ``register``-ed run for every
jitted function, exact ones always, the others (``exact=False``: they change rounding) only under
``@jit(fastmath=True)`` or where named in ``@jit(rewrites=[...])``. ``rewrites=`` also takes Rule
objects (for one function) and the names of function transformations (``TRANSFORMATIONS``:
``"push_reductions_into_loops"``), which are never applied by default. A block's Python fallback
always runs the user's own statements.
"""

import threading

from ..errors import RuleError
from ..runtime import watchers
from .match import Match, MatchedValue
from .rule import Rule
from .shipped import EXACT, FASTMATH

SHIPPED = tuple(EXACT + FASTMATH)
TRANSFORMATIONS = ("push_reductions_into_loops",)

_lock = threading.Lock()
_registered: list = []


def register(rule: Rule) -> Rule:
    """Add ``rule`` for every jitted function (exact rules always; others under ``fastmath=True`` or
    where named); functions already compiled are transformed again at their next call. Returns it,
    so it can decorate nothing and be kept for ``unregister``."""
    if not isinstance(rule, Rule):
        raise RuleError(f"register() takes a Rule, not {type(rule).__name__}")
    with _lock:
        if rule not in _registered:
            _registered.append(rule)
    _changed()
    return rule


def unregister(rule) -> None:
    """Remove a registered rule (the Rule or its name); a name not registered raises RuleError."""
    with _lock:
        found = [r for r in _registered if r is rule or r.name == rule]
        if not found:
            raise RuleError(f"no registered rule {rule!r}")
        for r in found:
            _registered.remove(r)
    _changed()


def registered() -> tuple:
    """The rules added with ``register``, in order."""
    with _lock:
        return tuple(_registered)


def _changed() -> None:
    watchers.changed()


def check_rewrites(rewrites) -> tuple:
    """``rewrites=`` as a tuple of Rules and names, each known; RuleError names an unknown one."""
    if rewrites is None:
        return ()
    if isinstance(rewrites, str | Rule):
        rewrites = [rewrites]
    try:
        items = tuple(rewrites)
    except TypeError:
        raise RuleError(f"rewrites= takes a list of Rules and rule names, not {type(rewrites).__name__}") from None
    known = {r.name for r in SHIPPED + registered()} | set(TRANSFORMATIONS)
    for item in items:
        if isinstance(item, Rule):
            continue
        if not isinstance(item, str):
            raise RuleError(f"rewrites= takes Rules and rule names, not {type(item).__name__}")
        if item not in known:
            raise RuleError(f"rewrites= names {item!r}, which is neither a shipped or registered rule nor a "
                            f"transformation; known: {', '.join(sorted(known))}")
    return items


def active_rules(rewrites=(), fastmath=False) -> tuple:
    """The rules a function's blocks run, in order: shipped, registered, then its own; a rule that
    changes rounding only under fastmath or where named."""
    named = {r for r in rewrites if isinstance(r, str)}
    own = [r for r in rewrites if isinstance(r, Rule)]
    rules = []
    for r in list(SHIPPED) + list(registered()) + own:
        if r in rules:
            continue
        if r.exact or fastmath or r.name in named or r in own:
            rules.append(r)
    return tuple(rules)


def transformations(rewrites=()) -> tuple:
    """The function transformations named in ``rewrites=``."""
    return tuple(r for r in rewrites if isinstance(r, str) and r in TRANSFORMATIONS)


__all__ = ["Rule", "Match", "MatchedValue", "RuleError", "register", "unregister", "registered", "SHIPPED",
           "TRANSFORMATIONS", "active_rules"]
