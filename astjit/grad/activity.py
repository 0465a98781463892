"""Which variables carry a gradient: the differentiated arguments and whatever is computed from them
through differentiable ops. Flow-insensitive (a name is active if any assignment to it is), which can
only add adjoint code, never drop a contribution.

A value reaches a name by more than assignment: a ``for`` target takes the elements of an active
iterable, ``y := ...`` binds inside an expression, a comprehension's variables take the elements of its
iterables, and ``hs.append(v)`` (or another method that stores its argument) puts an active value in a
container. Each of these makes its name active, so the lowering reaches a rule or a refusal for it
instead of keeping the statement as plain Python, which would drop the contribution silently.

So does a lambda reading an active value (in its body or a default), and a call of such a callable.

Comparisons, ``not``, shapes, lengths, ``int()``, ``np.floor`` and the other registered
non-differentiable ops give inactive values (``x % c`` and ``x.tolist()`` do not: the first has a rule,
the second is refused), as does ``astype`` to an integer or boolean dtype; the
index of a subscript never carries a gradient.
"""

import gast
import numpy as np

from .rules import is_non_differentiable

INACTIVE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "flags", "strides"}
INACTIVE_METHODS = {"argmax", "argmin", "argsort", "nonzero", "any", "all", "__len__"}
# methods of a local container that store their arguments in it (list, dict, set, deque, array)
STORING_METHODS = {"append", "appendleft", "extend", "extendleft", "insert", "update", "setdefault", "add",
                   "__setitem__", "put", "fill", "itemset"}
COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)
# builtins that read the function's variables by name (grad/lower refuses them)
NAMESPACE_READERS = (locals, vars, dir, eval, exec)


def assigned(stmt) -> set:
    """Names a statement binds (targets of assignments and loops, not inside nested functions)."""
    names = set()
    for n in gast.walk(stmt):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            names.add(n.id)
    return names


class Activity:
    def __init__(self, resolve, differentiated):
        self.resolve = resolve            # AST callee -> object or None
        self.active = set(differentiated)

    def run(self, body) -> set:
        changed = True
        while changed:
            before = len(self.active)
            for s in body:
                self._stmt(s)
            changed = len(self.active) != before
        return self.active

    def _stmt(self, s):
        self._hidden_bindings(s)
        if isinstance(s, gast.Assign):
            if self.expr(s.value):
                for t in s.targets:
                    self.active |= {n.id for n in gast.walk(t) if isinstance(n, gast.Name)
                                    and isinstance(n.ctx, gast.Store)}
                    if isinstance(t, gast.Subscript | gast.Attribute) and isinstance(t.value, gast.Name):
                        self.active.add(t.value.id)
        elif isinstance(s, gast.AugAssign):
            if self.expr(s.value) or self.expr(s.target):
                for n in gast.walk(s.target):
                    if isinstance(n, gast.Name):
                        self.active.add(n.id)
        elif isinstance(s, gast.For | gast.While | gast.If):
            if isinstance(s, gast.For) and self.expr(s.iter):
                target = s.target
                if isinstance(s.iter, gast.Call) and self.resolve(s.iter.func) is enumerate \
                        and isinstance(target, gast.Tuple | gast.List) and len(target.elts) == 2:
                    target = target.elts[1]              # the counter carries no gradient
                self.active |= _stored_names(target)
            for b in s.body + s.orelse:
                self._stmt(b)

    def _hidden_bindings(self, s):
        """``y := v`` and ``hs.append(v)`` anywhere in ``s`` with an active ``v``: ``y`` and ``hs`` become
        active."""
        for n in gast.walk(s):
            if isinstance(n, gast.NamedExpr) and self.expr(n.value):
                self.active |= _stored_names(n.target)
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                    and n.func.attr in STORING_METHODS and isinstance(n.func.value, gast.Name) \
                    and self.resolve(n.func) is None \
                    and any(self.expr(a) for a in list(n.args) + [k.value for k in n.keywords]):
                self.active.add(n.func.value.id)

    def expr(self, e) -> bool:
        """Whether expression ``e`` may carry a gradient."""
        if e is None:
            return False
        if isinstance(e, gast.Name):
            return e.id in self.active
        if isinstance(e, gast.Constant):
            return False
        if isinstance(e, gast.Compare):
            return False
        if isinstance(e, gast.BoolOp):               # `a or b` is one of its operands
            return any(self.expr(v) for v in e.values)
        if isinstance(e, gast.UnaryOp):
            return not isinstance(e.op, gast.Not | gast.Invert) and self.expr(e.operand)
        if isinstance(e, gast.BinOp):
            if isinstance(e.op, gast.FloorDiv | gast.BitAnd | gast.BitOr | gast.BitXor | gast.LShift | gast.RShift):
                return False
            if isinstance(e.op, gast.Mod) and isinstance(e.left, gast.Constant) and isinstance(e.left.value, str):
                return False                             # "%.3f" % x formats
            return self.expr(e.left) or self.expr(e.right)
        if isinstance(e, gast.Attribute):
            return e.attr not in INACTIVE_ATTRIBUTES and self.expr(e.value)
        if isinstance(e, gast.Subscript):
            return self.expr(e.value)
        if isinstance(e, gast.Call):
            return self._call(e)
        if isinstance(e, gast.IfExp):
            return self.expr(e.body) or self.expr(e.orelse)
        if isinstance(e, gast.NamedExpr):
            return self.expr(e.value)
        if isinstance(e, COMPREHENSIONS):
            return self._comprehension(e)
        if isinstance(e, gast.Lambda):               # its body, or a default (``lambda z=x: z``), reads one
            return any(isinstance(n, gast.Name) and n.id in self.active for n in gast.walk(e))
        return any(self.expr(c) for c in gast.iter_child_nodes(e) if isinstance(c, gast.expr))

    def _comprehension(self, e) -> bool:
        """Whether a comprehension's elements may carry a gradient: its variables are active while its
        elements are looked at where they iterate over an active value."""
        bound = set()
        try:
            for generator in e.generators:
                if self.expr(generator.iter):
                    names = _stored_names(generator.target) - self.active
                    bound |= names
                    self.active |= names
            parts = [e.key, e.value] if isinstance(e, gast.DictComp) else [e.elt]
            return any(self.expr(p) for p in parts)
        finally:
            self.active -= bound

    def _call(self, e) -> bool:
        operands = list(e.args) + [k.value for k in e.keywords]
        if isinstance(e.func, gast.Attribute) and self.expr(e.func.value):      # a method of an active value
            if e.func.attr in INACTIVE_METHODS:
                return False
            if e.func.attr == "astype" and e.args and not _float_dtype(self.resolve, e.args[0]):
                return False
            return True
        if self.expr(e.func):                       # a callable holding an active value (a lambda's default)
            return True
        obj = self.resolve(e.func)
        if obj is not None and is_non_differentiable(obj):
            return False
        return any(self.expr(a) for a in operands)


def _stored_names(target) -> set:
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _float_dtype(resolve, node) -> bool:
    """False where ``node`` statically names an integer or boolean dtype (``np.int64``, ``int``,
    ``"int32"``); True otherwise (a float dtype, or one known only at run time)."""
    value = node.value if isinstance(node, gast.Constant) else resolve(node)
    if value is None:
        return True
    try:
        return np.issubdtype(np.dtype(value), np.inexact)
    except TypeError:
        return True
