"""The guard as the first statements of the rewritten function, so that a call costs one Python frame.

A jitted function is only valid while the names it resolved at transform time (globals, builtins,
closure cells, attribute chains such as ``np.linalg``) still hold the same objects
(frontend/resolve.Resolver.guard_expression). Checking that in a wrapper costs a second Python frame on
every call, as much as a small function's whole body. For a plain signature (positional parameters
without defaults), the rewritten function checks it itself and is installed as the jitted object's
``__call__`` (api.JitFunction); where the check fails, the call goes to the jitted object's slow path
with the same arguments. numpy's floating-point error state is not checked here: each Fragment's
dispatch checks it before it runs a kernel (runtime/dispatch) and runs its block's Python otherwise,
and a call that runs no kernel (a tiny loop as written) need not pay for it::

    def step(x=<missing>, y=<missing>, *P_extra):      # (P: a prefix no name of step starts with)
        if P_extra:                                        # called with too many: the original's TypeError
            return P_original(x, y, *P_extra)
        if x is P_missing or y is P_missing:               # called without one of them
            return P_missing_arguments({'x': x, 'y': y})
        try:
            P_ok = np is P_o0
        except (ValueError, AttributeError, NameError):    # a name since deleted: not the same
            P_ok = False
        if not P_ok:
            return P_failed((x, y), {})
        ...                                                  # the rewritten body

Each parameter defaults to a marker, as in the wrapper it replaces: a call that leaves one out goes
to the jitted object (api.JitFunction._missing_arguments), which runs the original (Python's own
TypeError) or, where defaults were given to the original since, transforms again. ``*args`` and
``**kwargs`` take the prologue too (no ``*extra`` then where the function has ``*args``; the slow path
gets ``(x, y, *args)`` and the ``**kwargs`` dict). So do defaults (not beside ``*args``): the guard
holds the original's ``__defaults__`` tuple, a parameter left out takes its default object after
the guard, and the slow path gets the arguments given, by name. Keyword-only parameters default to the marker too;
one left out takes its default from the original's ``__kwdefaults__`` dict at that call (the wrapper
forwarding ``**kwargs`` to them cost 0.8 us a call, half of a small function's time). Positional-only
parameters keep the wrapper (api.JitFunction), and so do generators and coroutines (their ``return``
would not return from the call). ``show`` prints the body without these lines.
"""

import inspect

import gast

from .resolve import GUARD_ERRORS

MISSING = type("Missing", (), {"__repr__": lambda self: "<no argument given>"})()


def guard_names(fndef) -> dict:
    """The names the prologue adds to ``fndef``, under a prefix that no name of it starts with (a
    generated function, astjit/rewrite's, may itself have parameters named ``__astjit_...``)."""
    used = {n.id for n in gast.walk(fndef) if isinstance(n, gast.Name)}
    k = 0
    while any(name.startswith(f"__astjit_guard{k}_") for name in used):
        k += 1
    prefix = f"__astjit_guard{k}_"
    return {"prefix": prefix, "ok": f"{prefix}ok", "failed": f"{prefix}failed", "missing": f"{prefix}missing",
            "missing_arguments": f"{prefix}missing_arguments", "extra": f"{prefix}extra", "given": f"{prefix}given",
            "original": f"{prefix}original"}


def plain_signature(fn) -> bool:
    """Positional parameters only, without defaults: a call binds each argument to one name."""
    return not fn.__defaults__ and positional_signature(fn)


def positional_signature(fn) -> bool:
    """Positional parameters only, some maybe with defaults (api.JitFunction._install_call)."""
    code = fn.__code__
    return (not fn.__kwdefaults__ and not code.co_kwonlyargcount and not code.co_posonlyargcount
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def positional_defaults(fn, params) -> tuple:
    """The default objects of the last of ``params`` (``fn``'s positional parameters): the last items of
    ``fn.__defaults__``, as Python takes them from a tuple longer than the parameters."""
    return (fn.__defaults__ or ())[-len(params):] if params else ()


def given_arguments(named: dict) -> dict:
    """The arguments a call gave, by name: those not left at MISSING."""
    return {name: value for name, value in named.items() if value is not MISSING}


def takes_prologue(fn) -> bool:
    """Whether ``fn``'s rewritten form can check its guard itself (a plain signature, maybe with
    ``*args`` and ``**kwargs``; a plain function)."""
    code = fn.__code__
    plain = not code.co_posonlyargcount and not (fn.__defaults__ and code.co_flags & inspect.CO_VARARGS)
    return plain and not fn.__code__.co_flags & (
        inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)


def guard_prologue(resolver, fndef, guard_failed, missing_arguments, original) -> tuple[list, dict]:
    """(the statements to put first in ``fndef``'s body, the cells they read). ``fndef`` gets a
    ``*extra`` parameter: a call with too many arguments goes to ``original``, whose TypeError says how
    many it takes (the rewritten function's defaults would make it say "from 0 to 2")."""
    names = guard_names(fndef)
    params = [a.id for a in fndef.args.args]
    keyword_only = [a.id for a in fndef.args.kwonlyargs]
    defaults = positional_defaults(original, params)
    kwdefaults = original.__kwdefaults__ or {}
    body, namespace = resolver.guard_expression(
        (original.__defaults__, original.__kwdefaults__) if original.__defaults__ or original.__kwdefaults__
        else None, prefix=names["prefix"])
    required = params[:len(params) - len(defaults)]
    star, double_star = fndef.args.vararg, fndef.args.kwarg
    packed = f"({''.join(p + ', ' for p in params)}{'*' + star.id + ',' if star is not None else ''})"
    rest = [f"**{double_star.id}"] if double_star is not None else []
    by_keyword = "{" + ", ".join([f"{p!r}: {p}" for p in keyword_only] + rest) + "}"
    named = "{" + ", ".join([f"{p!r}: {p}" for p in params + keyword_only] + rest) + "}"
    keywords = f"{double_star.id}" if double_star is not None else "{}"
    if keyword_only:      # (those left out: not the markers)
        keywords = f"{names['given']}({by_keyword})"
    missing = f"return {names['missing_arguments']}({named})\n"
    if star is not None:  # (``*args`` given: every positional parameter was given too)
        missing = (f"if {star.id}:\n    return {names['missing_arguments']}({names['given']}({by_keyword}), "
                   f"{packed})\n{missing}")
    src = ""
    if star is None:     # (with ``*args`` of its own, no call has too many arguments)
        fndef.args.vararg = gast.Name(id=names["extra"], ctx=gast.Param(), annotation=None, type_comment=None)
        src = f"if {names['extra']}:\n    return {names['original']}({''.join(p + ', ' for p in params)}*{names['extra']}{', **' + names['given'] + '(' + by_keyword + ')' if keyword_only else ''})\n"
    absent = required + [p for p in keyword_only if p not in kwdefaults]
    if absent:
        given = " or ".join(f"{p} is {names['missing']}" for p in absent)
        src += f"if {given}:\n{_indented(missing, 1)}"
    if defaults:          # (the slow path gets the arguments given, by name: not the markers)
        packed, keywords = "()", f"{names['given']}({named})"
    if body != "True":            # (nothing resolved: nothing to check)
        src += (f"try:\n    {names['ok']} = {body}\n"
                f"except {GUARD_ERRORS}:\n    {names['ok']} = False\n"
                f"if not {names['ok']}:\n    return {names['failed']}({packed}, {keywords})\n")
    # a parameter left out takes the default the guard found on the original (its __defaults__ tuple)
    for k, p in enumerate(params[len(required):]):
        namespace[f"{names['prefix']}default{k}"] = defaults[k]
        src += f"if {p} is {names['missing']}:\n    {p} = {names['prefix']}default{k}\n"
    # a keyword-only one, from the original's ``__kwdefaults__`` dict at this call (the guard holds the
    # dict; a default changed in it since is the one Python would take, one deleted a missing argument)
    if kwdefaults:     # (read as Python's binding reads it: dict.get, whatever a subclass overrides)
        namespace[f"{names['prefix']}kwdefaults"] = original.__kwdefaults__
        namespace[f"{names['prefix']}dict_get"] = dict.get
    for p in keyword_only:
        if p in kwdefaults:
            src += (f"if {p} is {names['missing']}:\n"
                    f"    {p} = {names['prefix']}dict_get({names['prefix']}kwdefaults, {p!r}, {names['missing']})\n"
                    f"    if {p} is {names['missing']}:\n{_indented(missing, 2)}")
    statements = gast.parse(src).body
    line = fndef.lineno
    for statement in statements:
        for node in gast.walk(statement):
            if hasattr(node, "lineno"):
                node.lineno, node.end_lineno = line, line
                node.col_offset, node.end_col_offset = 0, 0
    if not (original.__defaults__ or original.__kwdefaults__):
        namespace.pop(f"{names['prefix']}fn", None)     # (the defaults' guard: not a plain signature's concern)
    namespace.update({names["missing"]: MISSING, names["failed"]: guard_failed,
                      names["missing_arguments"]: missing_arguments, names["original"]: original,
                      names["given"]: given_arguments})
    return statements, namespace


def _indented(lines: str, levels: int) -> str:
    return "".join("    " * levels + line + "\n" for line in lines.splitlines())
