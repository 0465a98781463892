"""Calls of the user's own functions, inlined before differentiating: a model is written with helpers.

``def layer(x, w, b): return np.tanh(x @ w + b)`` called from a loss has no adjoint rule of its own; its
body does. Each call the gradient flows through is replaced by the callee's statements, renamed apart
per call site (frontend/inline.renamed_callee: positional parameters, number defaults), placed before
the statement that makes the call, with the call's value in a variable the callee's ``return``
assigns (grad/normalize); a callee returning tuples of one length gives a tuple of variables, which
``a, b = pair(x)`` unpacks. What Python evaluates ahead of the call in its statement is computed into
variables before the callee's statements (``np.sum(x * np.sum(d)) + bump(d)``: ``np.sum(d)`` before
``bump`` changes ``d``), so values, random draws, exceptions and effects keep Python's order; a
statement whose order the inlining cannot keep (an assignment expression, an augmented assignment of
an element) is refused. A parameter the callee never rebinds stands for its argument where that is
a number, a local certainly bound at the call, or a module's function (``apply(np.tanh, x)`` calls
``np.tanh``); other arguments are assigned to it at the call. Nested helpers are inlined in turn, up
to INLINE_DEPTH calls deep.

A function with an adjoint rule of its own (``astjit.adjoint``) or declared non-differentiable is not
inlined: its rule decides. A callee qualifies where frontend/inline's loop inlining would take it (a
plain or jitted ``def``, no closure, ``return value`` on every path); of another module too: the
globals it reads become cells of the gradient function, guarded in their module. The call must be
evaluated once where its statement runs: not in a ``while`` test, a lambda, a comprehension, a
conditional expression's branches, a short-circuit operand or a chained comparison's later operands.
The callee's identity, its code and its defaults are guarded: rebinding the name rebuilds the gradient.
"""

import copy
import re
import types

import gast
import numpy as np

from ..frontend.bound import DefinitelyBound
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

PREFIX = "__astjit_grad"
# expressions whose parts Python may evaluate several times, or not at all
_NOT_ONCE = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.IfExp, gast.BoolOp)


def plain_names(reason: str) -> str:
    """An error's reason with the names the inlining made (``__astjit_grad0_v``) as the callee wrote them."""
    return re.sub(rf"{PREFIX}_*(?:\d+_|g\d+_)(\w+)", r"\1", re.sub(rf"{PREFIX}_*r\d+", "its result", reason))


class CallInliner:
    """Inline the qualifying calls of ``fndef``'s body in place. ``guards``: (resolver, chain, object,
    function) of each callee, the resolver of the module its name was read in (None: ``fn``'s own).
    ``bound``: alias -> (object or MISSING, resolver of its module, name) of each global an inlined
    callee of another module reads, renamed to the alias (a cell of the gradient function)."""

    def __init__(self, fn, fndef, resolve_chain):
        self.fn = fn
        self.filename = fn.__code__.co_filename
        self.resolve_chain = resolve_chain          # a global chain's object, or MISSING
        # (a callee of fn's module reading a global fn has as a local, or a closure variable: refused)
        self.local_names = {a.id for a in fndef.args.args} | stored_names([fndef]) | set(fn.__code__.co_freevars)
        names = {n.id for n in gast.walk(fndef) if isinstance(n, gast.Name)}
        self.prefix = PREFIX
        while any(n.startswith(self.prefix) for n in names):
            self.prefix += "_"
        self.sites = 0
        self.spills = 0
        self.guards = []
        self.bound = {}
        self.definitely_bound = DefinitelyBound(fndef)     # (of fn's own statements, before inlining)
        self.statement_bound = None

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

    # -- statements ----------------------------------------------------------------------------------
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
            # (after its inner statements: what is bound at the statement itself, not at its body's last)
            self.statement_bound = self.definitely_bound(s) if depth == 0 else None
            fields = self._evaluated_once(s)
            if any(self._inlines(getattr(s, f)) for f in fields):
                self._refuse_reordering(s)
                for field in fields:
                    setattr(s, field, self._expr(getattr(s, field), before, depth))
            out += before + [s]
        return out

    def _refuse_reordering(self, s) -> None:
        """A statement whose parts the inlining cannot keep in Python's order: an assignment expression
        (its name may be read before and after it), an augmented assignment of an element or attribute
        (Python reads the target before the call)."""
        named = next((n for n in gast.walk(s) if isinstance(n, gast.NamedExpr)), None)
        if named is not None:
            raise self.error(named, "an assignment expression (`:=`) in a statement that calls a helper astjit.grad "
                                    "inlines: write the assignment as a statement of its own")
        if isinstance(s, gast.AugAssign) and not isinstance(s.target, gast.Name):
            raise self.error(s, "an augmented assignment of an element or attribute whose value calls a helper "
                                "astjit.grad inlines: compute the value into a name first")

    @staticmethod
    def _evaluated_once(s) -> tuple:
        """The fields of ``s`` holding expressions evaluated once where it runs (a ``while`` test is
        evaluated at each trip: its calls stay)."""
        if isinstance(s, gast.Assign | gast.AugAssign | gast.AnnAssign | gast.Expr | gast.Return):
            return ("value",) if s.value is not None else ()
        if isinstance(s, gast.If):
            return ("test",)
        if isinstance(s, gast.For):
            return ("iter",)
        return ()

    def _children(self, node) -> list:
        """``node``'s sub-expressions Python may evaluate, in the order it evaluates them, as (field,
        index or None); none where it may evaluate some several times or not at all."""
        if isinstance(node, _NOT_ONCE) or not isinstance(node, gast.expr | gast.keyword | gast.slice):
            return []
        if isinstance(node, gast.Compare):          # (a chained comparison's later operands may not run)
            return [("left", None), ("comparators", 0)]
        if isinstance(node, gast.Dict):             # (keys and values in turn: not split)
            return []
        out = []
        for name, value in gast.iter_fields(node):
            if isinstance(value, list):
                out += [(name, k) for k, v in enumerate(value) if isinstance(v, gast.expr | gast.keyword)]
            elif isinstance(value, gast.expr | gast.keyword | gast.slice):
                out.append((name, None))
        return out

    def _inlines(self, node) -> bool:
        """Whether ``node`` holds a call, evaluated once, that will be inlined."""
        if not isinstance(node, gast.AST):
            return False
        if isinstance(node, gast.Call) and self._callee(node) is not None:
            return True
        return any(self._inlines(_get(node, f, k)) for f, k in self._children(node))

    def _expr(self, node, before, depth):
        """``node`` with its qualifying calls inlined: each callee's statements appended to ``before``,
        after what Python evaluates ahead of the call, which is computed into variables first
        (``np.sum(x * np.sum(d)) + bump(d)``: ``np.sum(d)`` before ``bump`` changes ``d``; arguments
        run before the call, innermost calls first)."""
        if not isinstance(node, gast.AST) or isinstance(node, _NOT_ONCE):
            return node
        children = self._children(node)
        later = [self._inlines(_get(node, f, k)) for f, k in children]
        for position, (f, k) in enumerate(children):
            child = self._expr(_get(node, f, k), before, depth)
            if any(later[position + 1:]):
                child = self._spilled(child, before)
            _set(node, f, k, child)
        if isinstance(node, gast.Call):
            replaced = self._inlined(node, before, depth)
            if replaced is not None:
                return replaced
        return node

    def _spilled(self, e, before):
        """``e`` computed into a variable appended to ``before`` where a call inlined after it could change
        what it reads; names, constants and modules' functions and modules as they are."""
        if isinstance(e, gast.Constant) or isinstance(e, gast.Name) and e.id in self.local_names:
            return e
        if isinstance(e, gast.Starred | gast.keyword):
            e.value = self._spilled(e.value, before)
            return e
        if isinstance(e, gast.Slice):
            e.lower, e.upper, e.step = (None if v is None else self._spilled(v, before)
                                        for v in (e.lower, e.upper, e.step))
            return e
        if isinstance(e, gast.Tuple | gast.List):
            e.elts = [self._spilled(v, before) for v in e.elts]
            return e
        chain = attribute_chain(e)
        if chain is not None and not (chain[0] in self.local_names and chain[0] not in self.bound):
            obj = self.resolve(chain)[0]
            if isinstance(obj, types.ModuleType) or callable(obj) and not isinstance(obj, np.ndarray):
                return e
        name = f"{self.prefix}v{self.spills}"
        self.spills += 1
        self.local_names.add(name)
        before.append(gast.copy_location(gast.Assign(
            targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)], value=e,
            type_comment=None), e))
        return gast.copy_location(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None), e)

    # -- one call ------------------------------------------------------------------------------------
    def _callee(self, call):
        """(object, its plain function, resolver of the module its name was read in or None, the chain as
        that module spells it) of a call of a function to inline, or None."""
        chain = attribute_chain(call.func)
        if not chain or chain[0] in self.local_names and chain[0] not in self.bound:
            return None
        obj, module, real_chain = self.resolve(chain)
        fn = callee_function(obj) if obj is not MISSING else None
        if fn is None or installed_library_function(fn) or any(
                rule_for(f) is not None or is_non_differentiable(f) for f in (obj, fn)):
            return None            # (a rule registered for it, or declared non-differentiable: the rule decides)
        return obj, fn, module, real_chain

    def _inlined(self, call, before, depth):
        """The expression of ``call``'s value once its callee's statements are appended to ``before``,
        or None where the call is not of a function that qualifies."""
        found = self._callee(call)
        if found is None:
            return None
        obj, fn, module, real_chain = found
        what = ".".join(real_chain)
        if depth >= INLINE_DEPTH or fn is self.fn:
            raise self.error(call, f"the call of {what} is nested too deeply (or recursive) to be inlined for "
                                   "differentiation")
        foreign = fn.__globals__ is not self.fn.__globals__
        try:
            if fn.__code__.co_freevars:
                raise NotInlinable(f"{fn.__name__} is a closure")
            callee = parse_callee(fn, call, self.sites, fn.__globals__)
        except NotInlinable as exc:
            raise self.error(call, f"astjit.grad cannot inline the call of {what} ({exc}): write its "
                                   "statements here, or register an adjoint rule for it (astjit.adjoint)") from None
        clash = next((n for n in callee.free_names if n in self.local_names), None)
        if clash is not None and not foreign:
            raise self.error(call, f"astjit.grad cannot inline the call of {what}: it reads the global {clash!r}, "
                                   f"a local or closure variable of {self.fn.__name__} too")
        site = self.sites
        self.sites += 1
        self.guards.append((module, real_chain, obj, fn))
        ours, theirs = f"{self.prefix}{site}_", f"__astjit_{site}_{callee.name}_"
        globals_of = Resolver(fn, set()) if foreign else None
        stored = stored_names(callee.body)
        given = {p: a for p, a in zip(callee.params, call.args) if p not in stored and self._plain_argument(a)}
        for n in (n for s in callee.body for n in gast.walk(s)):
            if not isinstance(n, gast.Name) or n.id in given:     # (those: the argument itself, below)
                continue
            if n.id.startswith(theirs):
                n.id = ours + n.id.removeprefix(theirs)
            elif foreign and n.id in callee.free_names:
                # (a global of the callee's module: a cell of the gradient function holding what it is
                # now, the name guarded in that module; one it does not define reads as Python would
                # there: NameError where the statement runs)
                alias = f"{self.prefix}g{site}_{n.id}"
                found = globals_of.lookup(n.id)
                if found is not MISSING:
                    globals_of.guard(n.id, found)
                self.bound[alias] = (found, globals_of, n.id)
                n.id = alias
        body = [_substituted(s, given) for s in callee.body]
        params = [(ours + p.removeprefix(theirs), a) for p, a in zip(callee.params, call.args) if p not in given]
        assigned = [gast.copy_location(gast.Assign(
            targets=[gast.Name(id=p, ctx=gast.Store(), annotation=None, type_comment=None)], value=a,
            type_comment=None), call) for p, a in params]
        value = f"{self.prefix}r{site}"
        shell = gast.FunctionDef(name=callee.name, args=None, body=body, decorator_list=[], returns=None,
                                 type_comment=None, type_params=[])
        gast.copy_location(shell, callee.body[0])
        body = normalize(shell, callee.filename, value)
        result = _tuple_result(body, value)
        self.local_names |= stored_names(assigned + body)
        before += assigned + self.body(body, depth + 1)
        return gast.copy_location(result, call)

    def _plain_argument(self, a) -> bool:
        """An argument a parameter may stand for in the callee's body, read where the body reads it: a
        number, a local certainly bound here (in an inlined body: its locals, which it binds before
        reading), or a module's function (``np.tanh``). Others are assigned to the parameter at the
        call (a name that may be unbound raises there, as Python does)."""
        if isinstance(a, gast.Constant) and type(a.value) in (bool, int, float, complex):
            return True
        if isinstance(a, gast.Name):
            return a.id in self.local_names and (self.statement_bound is None or a.id in self.statement_bound)
        chain = attribute_chain(a)
        if not chain or len(chain) < 2 or chain[0] in self.local_names:
            return False
        obj = self.resolve(chain)[0]
        return isinstance(self.resolve(chain[:1])[0], types.ModuleType) and callable(obj) and not isinstance(
            obj, np.ndarray)

    def error(self, node, reason):
        return located(self.filename, node, reason)


def _get(node, field, index):
    value = getattr(node, field)
    return value if index is None else value[index]


def _set(node, field, index, child) -> None:
    if index is None:
        setattr(node, field, child)
    else:
        getattr(node, field)[index] = child


def _substituted(stmt, given: dict):
    """``stmt`` with each load of a parameter in ``given`` replaced by a copy of its argument."""
    class Replace(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in given and isinstance(node.ctx, gast.Load):
                return gast.copy_location(copy.deepcopy(given[node.id]), node)
            return node

    return Replace().visit(stmt)


def _tuple_result(body, value):
    """The expression of the inlined call's value: ``value``, or a tuple of variables where every
    ``return`` of the callee gave a tuple of one length (``value_0, value_1 = x, y`` for each)."""
    returns = [s for s in _walk_statements(body) if isinstance(s, gast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], gast.Name) and s.targets[0].id == value]
    lengths = {len(s.value.elts) if isinstance(s.value, gast.Tuple) else None for s in returns}
    if len(lengths) != 1 or None in lengths or 0 in lengths:
        return gast.Name(id=value, ctx=gast.Load(), annotation=None, type_comment=None)
    (n,) = lengths
    names = [f"{value}_{k}" for k in range(n)]
    for s in returns:
        s.targets = [gast.Tuple(elts=[gast.Name(id=v, ctx=gast.Store(), annotation=None, type_comment=None)
                                      for v in names], ctx=gast.Store())]
    return gast.Tuple(elts=[gast.Name(id=v, ctx=gast.Load(), annotation=None, type_comment=None) for v in names],
                      ctx=gast.Load())


def _walk_statements(stmts):
    for s in stmts:
        yield s
        for field in ("body", "orelse"):
            yield from _walk_statements(getattr(s, field, None) or [])


def stored_names(nodes) -> set:
    """The names ``nodes`` (statements, or a function: its locals, parameters apart) bind or delete,
    imports included (``from numpy import sin as act`` makes ``act`` a local)."""
    names = set()
    for node in nodes:
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store | gast.Del):
                names.add(n.id)
            elif isinstance(n, gast.Import | gast.ImportFrom):
                names.update(alias.asname or alias.name.split(".")[0] for alias in n.names)
    return names


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
        target = module or resolver
        target.guard_chain(list(chain), obj)
        target.guards[tuple(chain) + code_path(obj)] = fn.__code__
        if fn.__defaults__:
            target.guards[tuple(chain) + code_path(obj)[:-1] + ("__defaults__",)] = fn.__defaults__
