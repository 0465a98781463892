"""Move ``if`` tests and ``return`` expressions into their own assignments, before liveness.

``if y.sum() > 0:`` becomes ``__astjit_cond_1 = y.sum() > 0`` + ``if __astjit_cond_1:``, so the test
joins the block before it and is computed by the same Fragment. Evaluation order is unchanged: the
test still runs right before the branch, and an ``elif`` test moves into the ``else`` branch.
"""

import gast

from ..errors import NotTraceable

WORTH_HOISTING = (gast.Call, gast.BinOp, gast.UnaryOp, gast.Compare, gast.Subscript, gast.Attribute)


def _store(name, anchor):
    return gast.copy_location(gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None), anchor)


def _load(name, anchor):
    return gast.copy_location(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None), anchor)


class Hoister:
    def __init__(self, is_traceable):
        self.is_traceable = is_traceable
        self.count = 0

    def body(self, stmts: list) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.If) and self._worth(stmt.test):
                name = self._fresh("cond")
                out.append(gast.copy_location(gast.Assign(targets=[_store(name, stmt.test)], value=stmt.test,
                                                          type_comment=None), stmt.test))
                stmt.test = _load(name, stmt.test)
            elif isinstance(stmt, gast.Return) and isinstance(stmt.value, gast.Tuple):
                # each value on its own (``return i, a[i]``): a loop returning them still compiles
                stmt.value.elts = self._hoisted_in_order(stmt.value.elts, out)
            elif isinstance(stmt, gast.Return) and stmt.value is not None and self._worth(stmt.value):
                stmt.value = self._hoisted(stmt.value, out)
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list) and not isinstance(
                        stmt, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef):
                    setattr(stmt, field, self.body(getattr(stmt, field)))
            if isinstance(stmt, gast.Try):
                for handler in stmt.handlers:
                    handler.body = self.body(handler.body)
            out.append(stmt)
        return out

    def _hoisted_in_order(self, values, out) -> list:
        """A returned tuple's values, those worth it hoisted (``_hoisted``) in order up to the first that
        stays in the ``return`` and is more than a constant: a value hoisted past it would be computed
        before it (``return np.sum(np.stack(v) - d.target), d.reads``, where reading the property
        ``d.target`` counts in ``d.reads``, returned the count from before the read). A name before a
        hoisted value is hoisted with it, so it is read first: it may be unbound (UnboundLocalError, a
        global's NameError, before the value's own errors) or change as the value is computed (a
        global a property increments)."""
        kept, names = [], []
        hoisting = True
        for e in values:
            if hoisting and self._worth(e):
                for k in names:
                    kept[k] = self._hoisted(kept[k], out)
                names = []
                kept.append(self._hoisted(e, out))
                continue
            if isinstance(e, gast.Name):
                names.append(len(kept))
            elif not isinstance(e, gast.Constant):
                hoisting = False
            kept.append(e)
        return kept

    def _hoisted(self, value, out):
        """``__astjit_ret_k = value`` appended to ``out``; the name read in its place."""
        name = self._fresh("ret")
        out.append(gast.copy_location(gast.Assign(targets=[_store(name, value)], value=value, type_comment=None),
                                      value))
        return _load(name, value)

    def _fresh(self, kind):
        self.count += 1
        return f"__astjit_{kind}_{self.count}"

    def _worth(self, expr) -> bool:
        if not any(isinstance(n, gast.Name) for n in gast.walk(expr)):
            return False             # a constant (``return -1``): a Fragment call would cost more than it
        if isinstance(expr, gast.Tuple):
            return any(self._worth(e) for e in expr.elts) and self.is_traceable(expr)
        return isinstance(expr, WORTH_HOISTING) and self.is_traceable(expr)


def hoist_tests_and_returns(fndef, is_traceable) -> None:
    fndef.body = Hoister(is_traceable).body(fndef.body)


def rejoin_tests(node):
    """``node`` (a statement) with each hoisted ``if`` test back in its ``if`` (``__astjit_cond_1 = v >
    0.5`` + ``if __astjit_cond_1:`` is ``if v > 0.5:`` again), for code that runs as written: the local's
    store and load cost a loop over a list of floats a fifth of its time. The test's name is read only
    by its ``if``, right after it, so nothing else changes."""
    for n in gast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(n, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                setattr(n, field, _rejoined(stmts))
    return node


def _rejoined(stmts: list) -> list:
    out = []
    for stmt in stmts:
        previous = out[-1] if out else None
        if isinstance(stmt, gast.If) and isinstance(stmt.test, gast.Name) and isinstance(previous, gast.Assign) \
                and len(previous.targets) == 1 and isinstance(previous.targets[0], gast.Name) \
                and previous.targets[0].id == stmt.test.id and stmt.test.id.startswith("__astjit_cond_"):
            stmt.test = out.pop().value
        out.append(stmt)
    return out


def expression_checker(make_lowering):
    def is_traceable(expr) -> bool:
        try:
            make_lowering().expr(expr)
            return True
        except NotTraceable:
            return False

    return is_traceable
