"""Calls of the user's own functions inside a loop region: the callee's body runs in the loop kernel.

A numba user writes small helpers (``def sq(x): return x * x``) and calls them in a loop; compiling
the loop must not stop at the call. The callee's source is parsed, its local names are renamed apart
(per call site, so nested and repeated calls never share a variable) and its statements are checked
like the loop's own (frontend/loops). The kernel lowers the body where the call is, after the
arguments are evaluated, as Python would run it. The loop's Python fallback calls the function as
written.

A callee qualifies when it is a plain ``def`` (or a jitted one) with positional parameters only
(passed by position or keyword; defaults that are numbers), with no closure, reading globals of the caller's
own module, and whose body is scalar statements (assignments, ``if``) where every path ends in
``return value``; or, called as a statement of its own (``bump(a, i)``: its value unused), any path
may end without one, or with a bare ``return``. Its identity and its code object are guarded: rebinding the name or assigning
``__code__`` transforms the caller again.
"""

import copy
import types
from dataclasses import dataclass

import gast

from ..errors import AstjitError
from .bound import DefinitelyBound
from .source import parse_function

INLINE_DEPTH = 4           # calls nested deeper than this (or recursion) keep the loop in Python
VALUE_UNUSED = "astjit_value_unused"    # attribute of a call that is a statement of its own


@dataclass(eq=False)
class Inlined:
    """A call site's callee, ready to be lowered where the call is."""
    name: str              # the function's name, for messages
    params: list           # its parameters, renamed
    body: list             # its statements, every local renamed
    filename: str          # where its lines are (errors inside it point there)
    free_names: list       # globals its body reads (not calls): passed to the kernel as the caller's
    procedure: bool = False   # called as a statement: it may end without a value, none is made


def callee_function(obj):
    """The plain function a call runs, or None: a ``def`` function, or the original of a jitted one."""
    from ..api import JitFunction

    if isinstance(obj, JitFunction):
        obj = obj.original
    if isinstance(obj, types.FunctionType) and obj.__name__ != "<lambda>":
        return obj
    return None


def installed_library_function(fn) -> bool:
    """Whether ``fn`` comes from the standard library or an installed package (numpy's ``np.seterr``
    is written in Python): not the user's own function."""
    import os
    import sysconfig

    filename = getattr(getattr(fn, "__code__", None), "co_filename", "")
    places = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(filename.startswith(os.path.join(place, "")) for place in places if place)


def code_path(obj) -> tuple:
    """Attributes from a resolved callable to the code object its calls run (guarded)."""
    from ..api import JitFunction

    return ("original", "__code__") if isinstance(obj, JitFunction) else ("__code__",)


def parse_callee(fn, call, site: int, caller_globals) -> Inlined:
    """The callee of ``call`` renamed apart for call site number ``site``; raises NotInlinable."""
    if fn.__globals__ is not caller_globals:
        raise NotInlinable(f"{fn.__name__} is defined in another module")
    if fn.__code__.co_freevars:
        raise NotInlinable(f"{fn.__name__} is a closure")
    try:
        _, fndef = parse_function(fn)
    except AstjitError as exc:
        raise NotInlinable(f"no source for {fn.__name__} ({exc})") from None
    return renamed_callee(fndef, call, site, fn.__code__.co_filename, fn.__defaults__ or ())


def local_functions(fndef, declared) -> dict:
    """The ``def`` statements at the top of ``fndef``'s body whose name nothing else binds (no other
    assignment, import, ``del``, ``global``/``nonlocal``), without decorators or defaults: after the
    ``def`` runs, such a name always calls that code, so a loop may inline it. A loop reached before the
    ``def`` reads the name unbound and runs as Python (frontend/emit)."""
    bindings = {}
    for n in gast.walk(fndef):
        if n is fndef:
            continue
        if isinstance(n, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef):
            bindings[n.name] = bindings.get(n.name, 0) + 1
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store | gast.Del):
            bindings[n.id] = bindings.get(n.id, 0) + 1
        elif isinstance(n, gast.alias):
            name = (n.asname or n.name).split(".")[0]
            bindings[name] = bindings.get(name, 0) + 1
    return {s.name: s for s in fndef.body
            if isinstance(s, gast.FunctionDef) and bindings.get(s.name) == 1 and s.name not in declared
            and not s.decorator_list and not s.args.defaults and not s.args.kw_defaults}


def renamed_callee(fndef, call, site: int, filename, defaults=()) -> Inlined:
    """A copy of the callee's ``def`` renamed apart for call site number ``site``; raises NotInlinable.
    ``call`` (of the kernel's copy of the loop) is made positional: ``positional_call``."""
    fndef = copy.deepcopy(fndef)
    name = fndef.name
    args = fndef.args
    if args.vararg or args.kwarg or args.kwonlyargs:
        raise NotInlinable(f"{name} takes *args, **kwargs or keyword-only parameters")
    params = [a.id for a in args.posonlyargs + args.args]
    positional_call(call, name, params, [a.id for a in args.args], defaults)
    for n in (n for s in fndef.body for n in gast.walk(s)):
        if isinstance(n, gast.Global | gast.Nonlocal | gast.FunctionDef | gast.Lambda | gast.ClassDef
                      | gast.Yield | gast.YieldFrom | gast.Await):
            raise NotInlinable(f"{name} has a {type(n).__name__.lower()}")
    procedure = getattr(call, VALUE_UNUSED, False)
    if not procedure and not always_returns(fndef.body):
        raise NotInlinable(f"{name} may end without 'return value' (it would return None)")
    local = set(params) | {n.id for n in gast.walk(fndef) if isinstance(n, gast.Name)
                           and isinstance(n.ctx, gast.Store | gast.Del)}
    unbound = read_before_assigned(fndef, local)
    if unbound is not None:       # Python raises UnboundLocalError there; a kernel variable keeps a value
        raise NotInlinable(f"{name} may read {unbound!r} before assigning it")
    prefix = f"__astjit_{site}_{name}_"
    free = []
    # the calls an error raised in the callee passes through, outermost first: (file or None for the
    # loop's own, line, function or None for the loop's own), each a frame of the traceback
    callers = getattr(call, "astjit_callers", ()) + (
        (getattr(call, "astjit_file", None), getattr(call, "lineno", None), getattr(call, "astjit_function", None)),)
    for n in gast.walk(fndef):
        n.astjit_callers = callers
        if isinstance(n, gast.Name):
            if n.id in local:
                n.id = prefix + n.id
            elif isinstance(n.ctx, gast.Load):
                free.append(n.id)
        n.astjit_file = filename
        n.astjit_function = fndef.name       # (an exception raised there names this function's frame)
    return Inlined(fndef.name, [prefix + p for p in params], fndef.body, filename, list(dict.fromkeys(free)),
                   procedure)


def positional_call(call, name, params, by_keyword, defaults) -> None:
    """Make ``call`` pass one positional argument per parameter, in place: a keyword argument moves to
    its parameter's place and a missing one takes the function's default value (``defaults``: its
    ``__defaults__``, a number each, the kernel's constants; rebinding them is guarded). Keyword
    arguments written out of their parameters' order must be names or numbers, which nothing can see
    evaluated in another order (an index may raise)."""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise NotInlinable(f"the call of {name} unpacks *args or **kwargs")
    given = {k.arg: k.value for k in call.keywords}
    if len(call.args) > len(params) or len(given) != len(call.keywords) or set(given) - set(by_keyword):
        raise NotInlinable(f"the call does not match the parameters of {name} (Python raises TypeError)")
    written = [params.index(k.arg) for k in call.keywords]
    if written != sorted(written) and not all(_plain_value(k.value) for k in call.keywords):
        raise NotInlinable(f"the call of {name} passes keyword arguments out of its parameters' order")
    args = list(call.args)
    first_default = len(params) - len(defaults)
    for k, param in enumerate(params[len(args):], len(args)):
        if param in given:
            value = given.pop(param)
        elif k >= first_default and type(defaults[k - first_default]) in (bool, int, float, complex):
            value = gast.copy_location(gast.Constant(value=defaults[k - first_default], kind=None), call)
        else:
            raise NotInlinable(f"the call of {name} leaves {param!r} to a default that is not a number, or "
                               "to none (Python raises TypeError)")
        args.append(value)
    if given:
        raise NotInlinable(f"the call passes {next(iter(given))!r} twice (Python raises TypeError)")
    call.args, call.keywords = args, []


def _plain_value(e) -> bool:
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub | gast.UAdd):
        e = e.operand
    return isinstance(e, gast.Name) or isinstance(e, gast.Constant) and type(e.value) in (bool, int, float, complex)


def read_before_assigned(fndef, local: set):
    """A local name some path through the function reads before assigning it, or None."""
    bound = DefinitelyBound(fndef)
    todo = list(fndef.body)
    while todo:
        s = todo.pop(0)
        if isinstance(s, gast.If):
            own = [s.test]
            todo.extend(s.body + s.orelse)
        elif isinstance(s, gast.For):
            own = [s.iter]
            todo.extend(s.body)
        elif isinstance(s, gast.While):
            own = [s.test]
            todo.extend(s.body)
        else:                # Assign, AugAssign (its target is read too), Return, Expr
            own = [getattr(s, "value", None), *getattr(s, "targets", ()), getattr(s, "target", None)]
        names = [n for part in own if part is not None for n in gast.walk(part) if isinstance(n, gast.Name)]
        for n in names:
            read = isinstance(n.ctx, gast.Load) or isinstance(s, gast.AugAssign)
            if read and n.id in local and n.id not in bound(s):
                return n.id
    return None


def always_returns(stmts) -> bool:
    """Whether every path through ``stmts`` ends in ``return value`` or a ``raise`` (a loop may end
    without returning: the statements after it must return)."""
    for s in stmts:
        if isinstance(s, gast.Return):
            return s.value is not None
        if isinstance(s, gast.Raise):
            return True
        if isinstance(s, gast.If) and always_returns(s.body) and always_returns(s.orelse):
            return True
    return False


def inlined_names(calls) -> set:
    """Every variable of the inlined callees of a loop (their parameters and locals, renamed)."""
    out = set()
    for callee in calls.values():
        if isinstance(callee, Inlined):
            out.update(callee.params)
            for s in callee.body:
                out.update(n.id for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    return out


class NotInlinable(Exception):
    """Why a call of a user function cannot run inside a loop kernel."""
