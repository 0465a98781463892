"""Which variables carry a gradient: the differentiated arguments and whatever is computed from them
through differentiable ops. Flow-insensitive (a name is active if any assignment to it is), which can
only add adjoint code, never drop a contribution.

Comparisons, boolean operators, shapes, lengths, ``int()``, ``np.floor`` and the other registered
non-differentiable ops give inactive values, as does ``astype`` to an integer or boolean dtype; the
index of a subscript never carries a gradient.
"""

import gast
import numpy as np

from .rules import is_non_differentiable

INACTIVE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "flags", "strides"}
INACTIVE_METHODS = {"argmax", "argmin", "argsort", "nonzero", "any", "all", "tolist", "__len__"}


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
            for b in s.body + s.orelse:
                self._stmt(b)

    def expr(self, e) -> bool:
        """Whether expression ``e`` may carry a gradient."""
        if e is None:
            return False
        if isinstance(e, gast.Name):
            return e.id in self.active
        if isinstance(e, gast.Constant):
            return False
        if isinstance(e, gast.Compare | gast.BoolOp):
            return False
        if isinstance(e, gast.UnaryOp):
            return not isinstance(e.op, gast.Not | gast.Invert) and self.expr(e.operand)
        if isinstance(e, gast.BinOp):
            if isinstance(e.op, gast.FloorDiv | gast.Mod | gast.BitAnd | gast.BitOr | gast.BitXor
                          | gast.LShift | gast.RShift):
                return False
            return self.expr(e.left) or self.expr(e.right)
        if isinstance(e, gast.Attribute):
            return e.attr not in INACTIVE_ATTRIBUTES and self.expr(e.value)
        if isinstance(e, gast.Subscript):
            return self.expr(e.value)
        if isinstance(e, gast.Call):
            return self._call(e)
        if isinstance(e, gast.IfExp):
            return self.expr(e.body) or self.expr(e.orelse)
        return any(self.expr(c) for c in gast.iter_child_nodes(e) if isinstance(c, gast.expr))

    def _call(self, e) -> bool:
        operands = list(e.args) + [k.value for k in e.keywords]
        if isinstance(e.func, gast.Attribute) and self.expr(e.func.value):      # a method of an active value
            if e.func.attr in INACTIVE_METHODS:
                return False
            if e.func.attr == "astype" and e.args and not _float_dtype(self.resolve, e.args[0]):
                return False
            return True
        obj = self.resolve(e.func)
        if obj is not None and is_non_differentiable(obj):
            return False
        return any(self.expr(a) for a in operands)


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
