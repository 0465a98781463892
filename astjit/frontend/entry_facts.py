"""What the statements just before a loop region say about its incoming ints.

``lo, hi = 0, len(a)`` before ``while lo < hi`` makes ``lo`` and ``hi`` arguments of the loop's kernel,
which knows nothing of their values; yet ``hi`` is ``a``'s extent on entry, and with that the kernel can
prove ``a[(lo + hi) // 2]`` in bounds (backends/tvm/loop_spans). A fact is taken from the nearest
assignment of the name in the straight run of assignments right before the loop, where neither the
name nor the array is assigned again before the loop starts:

    ("const", v)                 the int ``v``
    ("extent", X, k, c)          ``X.shape[k] + c`` (``len(X)``: k = 0)

The kernel uses an extent fact only where ``X`` is one of its arrays (backends/tvm/loops).
"""

import builtins

import gast

from .loops import assigned_names, shape_axis


def entry_facts(preceding: list, resolver) -> dict:
    """name -> fact, from the statements before the loop in the same body (``preceding``, in order)."""
    facts, killed = {}, set()
    for stmt in reversed(preceding):
        if isinstance(stmt, gast.Expr) and not _binds(stmt):
            continue
        if not isinstance(stmt, gast.Assign | gast.AugAssign | gast.AnnAssign) or _binds(stmt):
            break
        targets = assigned_names(stmt)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            for name, value in _pairs(stmt.targets[0], stmt.value):
                if name in killed or name in facts:
                    continue
                fact = _fact(value, resolver)
                if fact is not None and (fact[0] == "const" or (fact[1] not in killed and fact[1] not in targets)):
                    facts[name] = fact
        killed |= targets
    return facts


def numbers_at_entry(preceding: list, facts: dict) -> set:
    """Names that hold a number when the loop starts: those with a fact, and those whose nearest
    assignment in the straight run right before the loop binds a number literal (``s = 0.0``, ``c =
    -1``, ``found = False``) and is not followed by another assignment to them. A loop's work
    estimate need not test them for arrays (frontend/loop_guard)."""
    numbers, killed = set(facts), set()
    for stmt in reversed(preceding):
        if isinstance(stmt, gast.Expr) and not _binds(stmt):
            continue
        if not isinstance(stmt, gast.Assign | gast.AugAssign | gast.AnnAssign) or _binds(stmt):
            break
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            for name, value in _pairs(stmt.targets[0], stmt.value):
                if name not in killed and _number_literal(value):
                    numbers.add(name)
        killed |= assigned_names(stmt)
    return numbers


def _number_literal(e) -> bool:
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub | gast.UAdd):
        e = e.operand
    return isinstance(e, gast.Constant) and type(e.value) in (int, float, bool)


def _binds(stmt) -> bool:
    """An assignment expression (``:=``) inside: it binds a name where scanning does not look."""
    return any(isinstance(n, gast.NamedExpr) for n in gast.walk(stmt))


def _pairs(target, value):
    if isinstance(target, gast.Name):
        return [(target.id, value)]
    if isinstance(target, gast.Tuple) and isinstance(value, gast.Tuple) and len(target.elts) == len(value.elts) \
            and all(isinstance(t, gast.Name) for t in target.elts):
        return [(t.id, v) for t, v in zip(target.elts, value.elts)]
    return []


def _fact(e, resolver):
    if isinstance(e, gast.Constant) and type(e.value) is int:
        return ("const", e.value)
    if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add | gast.Sub) and isinstance(e.right, gast.Constant) \
            and type(e.right.value) is int:
        inner = _fact(e.left, resolver)
        if inner is not None and inner[0] == "extent":
            c = e.right.value if isinstance(e.op, gast.Add) else -e.right.value
            return ("extent", inner[1], inner[2], inner[3] + c)
        return None
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "len" and len(e.args) == 1 \
            and not e.keywords and isinstance(e.args[0], gast.Name):
        if resolver.lookup("len") is not builtins.len:
            return None
        resolver.guard("len", builtins.len)        # a module rebinding len later transforms again
        return ("extent", e.args[0].id, 0, 0)
    if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Attribute) and e.value.attr == "shape" \
            and isinstance(e.value.value, gast.Name) and shape_axis(e) is not None:
        return ("extent", e.value.value.id, shape_axis(e), 0)
    return None
