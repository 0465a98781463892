"""Calls of the user's own functions, inlined before differentiating: a model is written with helpers.

``def layer(x, w, b): return np.tanh(x @ w + b)`` called from a loss has no adjoint rule of its own; its
body does. Each call the gradient flows through is replaced by the callee's statements, renamed apart
per call site (frontend/inline.renamed_callee: positional parameters, number defaults), placed before
the statement that makes the call, with the call's value in a variable the callee's ``return``
assigns (grad/normalize). Nested helpers are inlined in turn, up to INLINE_DEPTH calls deep.

A function with an adjoint rule of its own (``astjit.adjoint``) or declared non-differentiable is not
inlined: its rule decides. A callee qualifies where frontend/inline's loop inlining would take it (a plain or jitted ``def``, no
closure, ``return value`` on every path; of another module too: the globals it reads become cells of
the gradient function, guarded in their module) and the call is evaluated once where its
statement runs: not in a ``while`` test, a lambda, a comprehension, a conditional expression's
branches or a short-circuit operand. The callee's identity, its code and its defaults are guarded:
rebinding the name rebuilds the gradient. Statements moved before the call's statement run before the
rest of that statement's expression, which for numpy values changes nothing a gradient can see.
"""

import gast

from ..frontend.inline import (
    INLINE_DEPTH,
    NotInlinable,
    callee_function,
    code_path,
    installed_library_function,
    parse_callee,
)
from ..frontend.lower import attribute_chain
from ..frontend.resolve import MISSING, Resolver
from .normalize import located, normalize
from .rules import is_non_differentiable, rule_for

# expressions whose parts Python may evaluate several times, or not at all
_NOT_ONCE = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.IfExp, gast.BoolOp)


class CallInliner:
    """Inline the qualifying calls of ``fndef``'s body in place. ``guards``: (resolver, chain, object,
    function) of each callee, the resolver of the module its name was read in (None: ``fn``'s own).
    ``bound``: alias -> (object, resolver of its module, name) of each global an inlined callee of
    another module reads, renamed to the alias (a cell of the gradient function)."""

    def __init__(self, fn, fndef, resolve_chain):
        self.fn = fn
        self.filename = fn.__code__.co_filename
        self.resolve_chain = resolve_chain          # a global chain's object, or MISSING
        self.local_names = {a.id for a in fndef.args.args} | stored_names(fndef)
        self.sites = 0
        self.guards = []
        self.bound = {}

    def resolve(self, chain) -> tuple:
        """(object or MISSING, resolver of the module the chain's root is read in or None, the chain as
        that module spells it) of a chain read in ``fn`` or in an inlined callee."""
        if chain[0] not in self.bound:
            return self.resolve_chain(chain), None, chain
        obj, resolver, name = self.bound[chain[0]]
        real = [name, *chain[1:]]
        return (obj if len(chain) == 1 else resolver.resolve_chain(real)), resolver, real

    def guard_holds(self, main_guard):
        """``main_guard`` (of ``fn``'s module) and the guard of each other module a callee read globals of."""
        others = list({id(r): r for _, r, _ in self.bound.values()}.values())
        if not others:
            return main_guard
        checks = [main_guard] + [r.compiled_guard() for r in others]
        return lambda: all(check() for check in checks)

    def body(self, stmts, depth=0) -> list:
        out = []
        for s in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and not isinstance(s, gast.FunctionDef | gast.ClassDef):
                    setattr(s, field, self.body(getattr(s, field), depth))
            if isinstance(s, gast.Try):
                for handler in s.handlers:
                    handler.body = self.body(handler.body, depth)
            before = []
            for part in self._evaluated_once(s):
                self._inline_in(part, s, before, depth)
            out += before + [s]
        return out

    @staticmethod
    def _evaluated_once(s) -> list:
        """The expressions of ``s`` evaluated once where it runs (a ``while`` test is evaluated at each
        trip: its calls stay)."""
        if isinstance(s, gast.Assign | gast.AugAssign | gast.AnnAssign | gast.Expr | gast.Return):
            return [s]
        if isinstance(s, gast.If):
            return [s.test]
        if isinstance(s, gast.For):
            return [s.iter]
        return []

    def _inline_in(self, node, stmt, before, depth) -> None:
        """Replace the qualifying calls under ``node`` (innermost first: arguments run before the call)."""
        for field, value in gast.iter_fields(node):
            if isinstance(value, _NOT_ONCE) or isinstance(value, gast.stmt) and value is not stmt:
                continue
            children = value if isinstance(value, list) else [value]
            for k, child in enumerate(children):
                if not isinstance(child, gast.AST) or isinstance(child, _NOT_ONCE):
                    continue
                self._inline_in(child, stmt, before, depth)
                if isinstance(child, gast.Call):
                    name = self._inlined(child, before, depth)
                    if name is not None:
                        load = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
                        gast.copy_location(load, child)
                        if isinstance(value, list):
                            value[k] = load
                        else:
                            setattr(node, field, load)

    def _inlined(self, call, before, depth) -> str | None:
        """The variable holding ``call``'s value once its callee's statements are appended to ``before``,
        or None where the call is not of a function that qualifies."""
        chain = attribute_chain(call.func)
        if not chain or chain[0] in self.local_names:
            return None
        obj, module, real_chain = self.resolve(chain)
        fn = callee_function(obj) if obj is not MISSING else None
        if fn is None or installed_library_function(fn) or any(
                rule_for(f) is not None or is_non_differentiable(f) for f in (obj, fn)):
            return None            # (a rule registered for it, or declared non-differentiable: the rule decides)
        what = ".".join(chain)
        if depth >= INLINE_DEPTH or fn is self.fn:
            raise located(self.filename, call, f"the call of {what} is nested too deeply (or recursive) to be "
                                               "inlined for differentiation")
        foreign = fn.__globals__ is not self.fn.__globals__
        try:
            if fn.__code__.co_freevars:
                raise NotInlinable(f"{fn.__name__} is a closure")
            callee = parse_callee(fn, call, self.sites, fn.__globals__)
        except NotInlinable as exc:
            raise located(self.filename, call, f"astjit.grad cannot inline the call of {what} ({exc}): write "
                                               "its statements here, or register an adjoint rule for it "
                                               "(astjit.adjoint)") from None
        clash = next((n for n in callee.free_names if n in self.local_names), None)
        if clash is not None and not foreign:
            raise located(self.filename, call, f"astjit.grad cannot inline the call of {what}: it reads the "
                                               f"global {clash!r}, a local of {self.fn.__name__} too")
        site = self.sites
        self.sites += 1
        self.guards.append((module, real_chain, obj, fn))
        # (a prefix of its own: the jitted gradient's loop kernels inline calls as __astjit_<site>_...)
        ours, theirs = f"__astjit_grad{site}_{callee.name}_", f"__astjit_{site}_{callee.name}_"
        globals_of = Resolver(fn, set()) if foreign else None
        for n in (n for s in callee.body for n in gast.walk(s)):
            if isinstance(n, gast.Name) and n.id.startswith(theirs):
                n.id = ours + n.id.removeprefix(theirs)
            elif foreign and isinstance(n, gast.Name) and n.id in callee.free_names:
                # (a global of the callee's module: a cell of the gradient function holding what it is
                # now, the name guarded in that module)
                found = globals_of.lookup(n.id)
                if found is MISSING:
                    raise located(self.filename, n, f"{n.id!r} is not defined in the module of {fn.__name__}")
                alias = f"{ours}global_{n.id}"
                self.bound[alias] = (found, globals_of, n.id)
                n.id = alias
        callee.params = [ours + p.removeprefix(theirs) for p in callee.params]
        value = ours + "returned"
        params = [gast.copy_location(gast.Assign(
            targets=[gast.Name(id=p, ctx=gast.Store(), annotation=None, type_comment=None)], value=a,
            type_comment=None), call) for p, a in zip(callee.params, call.args)]
        shell = gast.FunctionDef(name=callee.name, args=None, body=callee.body, decorator_list=[], returns=None,
                                 type_comment=None, type_params=[])
        gast.copy_location(shell, callee.body[0])
        body = normalize(shell, callee.filename, value)
        self.local_names |= set(callee.params) | {value} | {
            n.id for s in body for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        before += params + self.body(body, depth + 1)
        return value


def stored_names(fndef) -> set:
    """The names ``fndef`` binds (its locals, parameters apart)."""
    return {n.id for n in gast.walk(fndef) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store | gast.Del)}


def inline_calls(fn, fndef, resolve_chain) -> CallInliner:
    """Inline the calls of the user's own functions in ``fndef``'s body, in place; the inliner holds
    what the gradient's guard checks and the globals of other modules it binds."""
    inliner = CallInliner(fn, fndef, resolve_chain)
    fndef.body = inliner.body(fndef.body)
    return inliner


def guard_callees(resolver, guards) -> None:
    """Guard each inlined callee as frontend/loops guards a loop's: the name, its code, its defaults
    (in the module the name was read in)."""
    for module, chain, obj, fn in guards:
        resolver = module or resolver
        resolver.guard_chain(list(chain), obj)
        resolver.guards[tuple(chain) + code_path(obj)] = fn.__code__
        if fn.__defaults__:
            resolver.guards[tuple(chain) + code_path(obj)[:-1] + ("__defaults__",)] = fn.__defaults__

