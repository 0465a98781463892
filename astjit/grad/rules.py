"""Adjoint rules: one plain numpy function per op, registered by decorator, inlined as source.

A rule receives the adjoint ``g`` of the op's result, the result ``ans`` and the op's operands, and
returns the adjoint of each operand (a tuple in operand order; ``None`` where an operand gets none)::

    @adjoint(np.tanh)
    def tanh(g, ans, x):
        return g * (1.0 - ans * ans)

The rule's body is inlined into the generated gradient function (its locals renamed apart, its globals
bound as the gradient function's free variables), so the adjoint code is ordinary numpy statements
that ``astjit.jit`` fuses into Fragments with the forward code around them. A rule is therefore
written as straight-line statements ending in one ``return``. ``unbroadcast=True`` (elementwise ops)
sums each operand's adjoint back to that operand's shape.
"""

import copy
import inspect
from dataclasses import dataclass, field

import gast

from ..errors import AstjitError
from ..frontend.source import parse_function


@dataclass(eq=False)
class AdjointRule:
    function: object
    operands: list                 # the rule's parameters after (g, ans)
    defaults: dict                 # parameter -> default value
    body: list                     # statements before the return
    results: list                  # one expression (or None) per operand
    unbroadcast: bool = False
    global_names: set = field(default_factory=set)


# id(op callable) -> (callable, rule); a shipped rule is held as (its function, unbroadcast) until
# first asked for: parsing the 63 shipped rules took 40 of the 140 ms of ``import astjit``
ADJOINTS: dict[int, tuple[object, AdjointRule | tuple]] = {}
NON_DIFFERENTIABLE: dict[int, object] = {}                      # results that carry no gradient


def adjoint(*ops, unbroadcast=False):
    """Register the decorated function as the adjoint rule of each callable in ``ops`` (numpy functions
    or ufuncs; ``x.sum()`` and other methods use the rule of the numpy function of the same name)."""
    def register(fn):
        rule = _parse_rule(fn, unbroadcast)       # (a user's rule: a malformed one fails here, at its line)
        for op in ops:
            ADJOINTS[id(op)] = (op, rule)
        return fn
    return register


def shipped_adjoint(*ops, unbroadcast=False):
    """``adjoint`` for the rules astjit ships: parsed when first asked for (their tests parse each)."""
    def register(fn):
        for op in ops:
            ADJOINTS[id(op)] = (op, (fn, unbroadcast))
        return fn
    return register


def non_differentiable(*ops):
    """Declare that the results of ``ops`` carry no gradient (comparisons, ``np.floor``, ``argmax``)."""
    for op in ops:
        NON_DIFFERENTIABLE[id(op)] = op


def rule_for(op) -> AdjointRule | None:
    hit = ADJOINTS.get(id(op))
    if hit is None or hit[0] is not op:
        return None
    rule = hit[1]
    if isinstance(rule, tuple):
        rule = _parse_rule(*rule)
        ADJOINTS[id(op)] = (op, rule)
    return rule


def is_non_differentiable(op) -> bool:
    return NON_DIFFERENTIABLE.get(id(op)) is op


def _parse_rule(fn, unbroadcast) -> AdjointRule:
    _, fndef = parse_function(fn)
    params = inspect.signature(fn).parameters
    names = list(params)
    if len(names) < 3 or names[:2] != ["g", "ans"]:
        raise AstjitError(f"adjoint rule {fn.__qualname__} must take (g, ans, operand, ...)")
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD,) for p in params.values()):
        raise AstjitError(f"adjoint rule {fn.__qualname__}: plain parameters only")
    *body, last = fndef.body
    if not isinstance(last, gast.Return) or last.value is None or any(
            isinstance(n, gast.Return) for s in body for n in gast.walk(s)):
        raise AstjitError(f"adjoint rule {fn.__qualname__} must end in its only `return`")
    if any(not isinstance(s, gast.Assign | gast.Expr) for s in body):
        raise AstjitError(f"adjoint rule {fn.__qualname__}: straight-line assignments only before the return")
    results = last.value.elts if isinstance(last.value, gast.Tuple) else [last.value]
    results = [None if isinstance(r, gast.Constant) and r.value is None else r for r in results]
    local = set(names) | {n.id for s in body for n in gast.walk(s)
                          if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    used = {n.id for s in fndef.body for n in gast.walk(s) if isinstance(n, gast.Name)}
    defaults = {k: p.default for k, p in params.items() if p.default is not p.empty}
    return AdjointRule(fn, names[2:], defaults, body, results, unbroadcast, used - local)


@dataclass(eq=False)
class Instance:
    """A rule inlined at one op: its statements and the adjoint expression of each wanted operand."""
    statements: list
    results: dict                  # operand index -> expression


def instantiate(rule: AdjointRule, g, ans, operands: list, keywords: dict, wanted: set, fresh,
                bind_global) -> Instance:
    """``rule`` with ``g``/``ans`` (expressions) and the op's operand and keyword expressions in place of
    its parameters; ``fresh(name)`` gives a new local name, ``bind_global(name, obj)`` the name under
    which the gradient function sees one of the rule's globals."""
    if len(operands) > len(rule.operands):
        raise AstjitError(f"{len(operands)} operands for a rule of {len(rule.operands)}")
    values = {"g": g, "ans": ans}
    for name, expr in zip(rule.operands, operands):
        values[name] = expr
    for name, expr in keywords.items():
        if name not in rule.operands or name in values:
            raise AstjitError(f"keyword {name}= is not handled by the adjoint rule {rule.function.__qualname__}")
        values[name] = expr
    for name in rule.operands:
        if name not in values:
            if name not in rule.defaults:
                raise AstjitError(f"operand {name} is missing for the adjoint rule {rule.function.__qualname__}")
            values[name] = gast.Constant(value=rule.defaults[name], kind=None)
    renamed = {}
    fn_globals = rule.function.__globals__

    def rewrite(node):
        node = copy.deepcopy(node)
        for n in list(gast.walk(node)):
            for fld, child in gast.iter_fields(n):
                if isinstance(child, list):
                    setattr(n, fld, [_substitute(c) for c in child])
                else:
                    setattr(n, fld, _substitute(child))
        return _substitute(node)

    def _substitute(n):
        if not isinstance(n, gast.Name):
            return n
        if n.id in values:
            return copy.deepcopy(values[n.id]) if isinstance(n.ctx, gast.Load) else n
        if n.id in rule.global_names:
            return gast.Name(id=bind_global(n.id, fn_globals[n.id] if n.id in fn_globals
                                            else getattr(__import__("builtins"), n.id)),
                             ctx=n.ctx, annotation=None, type_comment=None)
        if n.id not in renamed:
            renamed[n.id] = fresh(n.id)
        return gast.Name(id=renamed[n.id], ctx=n.ctx, annotation=None, type_comment=None)

    statements = [rewrite(s) for s in rule.body]
    results = {i: rewrite(r) for i, r in enumerate(rule.results) if i in wanted and r is not None
               and i < len(operands)}
    return Instance(statements, results)
