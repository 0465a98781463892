"""Generators: the guard tested again where the function resumes (async functions run as Python).

A jitted function tests at each call that the globals it resolved (a function a loop kernel inlines,
a module, a dtype) still hold their objects (api.JitFunction). A generator's body runs later, one
piece per ``next()``: between two, its caller may rebind such a global (``ACT = np.negative``), and
a compiled loop would go on with the function it inlined while the generator's Python reads the new
one. So after each statement that suspends (a ``yield``, ``yield from``, ``await``), the rewritten
generator tests the guard's names again, inline (a call of the guard cost a fine-grained generator
0.07 us a resumption, 1.7x its plain time); where one changed, every block runs its own statements (as
written, reading the names anew) for the rest of that generator::

    __astjit_stale = False                      # first in the body, then the test below
    ...
    yield out
    try:                                        # after each suspending statement
        __astjit_resume_ok = ACT is __astjit_resume_o0 and ...
    except (ValueError, AttributeError, NameError):
        __astjit_resume_ok = False
    if not __astjit_resume_ok:
        __astjit_stale = __astjit_py_0 = True   # (each block's switch local too)
    ...
    if __astjit_stale or next(__astjit_as_python_0):     # each block's switch (emit.fragment_call)
        <the block's statements>
    else:
        __astjit_fragment_0(...)

A function that resolved no names (its guard is ``True``) is left as it is.
"""

import inspect

import gast

from .blocks import is_docstring
from .emit import SWITCH_LOCAL, load
from .loop_guard import SHOWN
from .resolve import GUARD_ERRORS

STALE_NAME = "__astjit_stale"
PREFIX = "__astjit_resume_"
SUSPENDING = (gast.Yield, gast.YieldFrom, gast.Await)
_NESTED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def resumes(fn) -> bool:
    """Whether ``fn``'s body runs in pieces (a generator, a coroutine)."""
    return bool(fn.__code__.co_flags & _RESUMABLE)


def guard_after_suspensions(fndef, resolver):
    """Rewrite ``fndef`` (after emit.rewrite placed the blocks; ``resolver``: the names they resolved)
    as the module's docstring shows; returns the cells the rechecks read, or None where nothing
    changed."""
    switches = [n for n in gast.walk(fndef) if isinstance(n, gast.If) and getattr(n, SWITCH_LOCAL, None)]
    if not switches or not resolver.guards:
        return None
    expression, cells = resolver.guard_expression(prefix=PREFIX)
    for s in switches:
        s.test = gast.copy_location(gast.BoolOp(op=gast.Or(), values=[load(STALE_NAME), s.test]), s.test)
    locals_ = sorted({getattr(s, SWITCH_LOCAL) for s in switches})
    stale = " = ".join([STALE_NAME] + locals_)
    recheck = (f"try:\n    {PREFIX}ok = {expression}\nexcept {GUARD_ERRORS}:\n    {PREFIX}ok = False\n"
               f"if not {PREFIX}ok:\n    {stale} = True\n")
    _after_suspensions(fndef.body, recheck)
    # (and first: the body starts at the first ``next()``, not at the call the guard tested)
    first = _parsed(f"{STALE_NAME} = False\n" + recheck, fndef.body[0])
    at = 1 if is_docstring(fndef.body[0]) else 0
    fndef.body[at:at] = first
    cells.pop(f"{PREFIX}fn", None)
    return cells


_LOOPS = (gast.For, gast.AsyncFor, gast.While)


def _after_suspensions(stmts, recheck: str, blocks_after=False) -> None:
    """The rechecks into ``stmts`` where a block may run after a resumption (``blocks_after``: one may
    run after ``stmts`` end): after a statement that suspends; first in the bodies of a compound
    statement whose header suspends (``if (yield x):``, ``while (yield out) is None:``, whose test runs
    again before each trip); first in the handlers and ``finally`` of a ``try`` that suspends before
    them (``g.throw()``, ``g.close()`` resume there). A block in a ``try``'s ``else``, handlers or
    ``finally`` may run after a suspension in its body, one in its ``finally`` after one in its
    handlers. Where no block can run after it, a suspension costs no test (a ``for v in c: yield v``
    after the function's last block)."""
    # (whether a block follows each statement, from the end: one walk of each, not of every suffix)
    follows, seen = [], blocks_after
    for s in reversed(stmts):
        follows.append(seen)
        seen = seen or _has_switch([s])
    out = []
    for s, later in zip(list(stmts), reversed(follows)):
        out.append(s)
        if isinstance(s, _NESTED):
            continue
        if isinstance(s, gast.Try | getattr(gast, "TryStar", gast.Try)):
            _in_try(s, recheck, later)
            continue
        inside = later or isinstance(s, _LOOPS) and _has_switch([s])        # (a loop's next trip)
        bodies = [getattr(s, f) for f in ("body", "orelse") if isinstance(getattr(s, f, None), list)]
        bodies = [b for b in bodies if b and isinstance(b[0], gast.stmt)]
        bodies += [case.body for case in getattr(s, "cases", None) or []]
        for body in bodies:
            _after_suspensions(body, recheck, inside)
        header = _suspends(s)
        if header:
            for body in bodies:
                if inside or _has_switch(body):
                    body[:0] = _parsed(recheck, body[0])
        if header and later:       # (after it too: an ``if`` whose test was false, a ``while`` that ended)
            out += _parsed(recheck, s)
    stmts[:] = out


def _in_try(s, recheck, later) -> None:
    """The rechecks of a ``try`` statement ``s`` (``later``: a block may run after it)."""
    handlers = [h.body for h in s.handlers]
    final = _has_switch(s.finalbody)
    _after_suspensions(s.body, recheck, later or final or _has_switch(s.orelse) or
                       any(_has_switch(h) for h in handlers))
    _after_suspensions(s.orelse, recheck, later or final)
    for body in handlers:
        _after_suspensions(body, recheck, later or final)
    _after_suspensions(s.finalbody, recheck, later)
    # where ``throw`` or ``close`` resume it: its handlers after a suspension in its body, its
    # ``finally`` after one anywhere before it
    if _has_suspension(s.body):
        for body in handlers:
            if later or final or _has_switch(body):
                body[:0] = _parsed(recheck, body[0])
    if s.finalbody and (later or final) and _has_suspension(s.body + s.orelse + [st for h in handlers for st in h]):
        s.finalbody[:0] = _parsed(recheck, s.finalbody[0])


def _has_suspension(stmts) -> bool:
    """Whether ``stmts`` suspend anywhere in them (not in a function they define)."""
    return any(_suspends(s) or _has_suspension(_inner_statements(s)) for s in stmts if not isinstance(s, _NESTED))


def _inner_statements(stmt) -> list:
    inner = [st for f in ("body", "orelse", "finalbody") for st in getattr(stmt, f, None) or []
             if isinstance(st, gast.stmt)]
    inner += [st for h in getattr(stmt, "handlers", None) or [] for st in h.body]
    return inner + [st for case in getattr(stmt, "cases", None) or [] for st in case.body]


def _has_switch(stmts) -> bool:
    """Whether a block's switch (emit.fragment_call) is among ``stmts``, at any depth."""
    return any(isinstance(n, gast.If) and getattr(n, SWITCH_LOCAL, None) for s in stmts for n in gast.walk(s))


def _suspends(stmt) -> bool:
    """Whether ``stmt``'s own expressions (not the statements it holds) suspend."""
    todo = [v for name, v in gast.iter_fields(stmt) if name not in ("body", "orelse", "finalbody", "handlers",
                                                                    "cases")]
    while todo:
        v = todo.pop()
        if isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, SUSPENDING):
            return True
        elif isinstance(v, gast.AST) and not isinstance(v, _NESTED):
            todo.extend(value for _, value in gast.iter_fields(v))
    return False


def _parsed(text: str, at) -> list:
    """The statements of ``text``, at ``at``'s position, which ``show`` leaves out."""
    stmts = gast.parse(text).body
    for stmt in stmts:
        for n in gast.walk(stmt):
            gast.copy_location(n, at)
        setattr(stmt, SHOWN, [])
    return stmts
