"""Which local names are certainly bound when a statement starts (definite assignment).

A Fragment call reads its live-ins when the block starts, but Python raises UnboundLocalError only at
the statement that reads the name, after the block's earlier statements have run (raised numpy's own
errors, updated arrays in place). So a live-in that may be unbound there (assigned in a loop that may
not run, in one branch of an ``if``, deleted) is passed through a check instead (frontend/emit).
The analysis is conservative: a name it leaves out may still be bound; that only costs it the check.
"""

import gast


def _stored(targets) -> set:
    return {n.id for t in targets for n in gast.walk(t)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _deleted(stmts) -> set:
    """Names a ``del`` in these statements (or handlers) unbinds, and ``except ... as e`` names (unbound
    after the handler)."""
    out = set()
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del):
                out.add(n.id)
            elif isinstance(n, gast.ExceptHandler) and n.name is not None:
                out.add(n.name.id)
    return out


def _meet(*states):
    """Bound on every path; None stands for a path that never gets there (return, raise, break)."""
    reached = [s for s in states if s is not None]
    if not reached:
        return None
    out = reached[0]
    for s in reached[1:]:
        out = out & s
    return out


class DefinitelyBound:
    """``bound(stmt)``: the names certainly bound when ``stmt`` starts. ``never_suppresses(with_stmt)``
    says whether a ``with`` lets every exception through (then its body runs to the end or raises)."""

    def __init__(self, fndef, never_suppresses=lambda stmt: False):
        self.never_suppresses = never_suppresses
        self.before: dict = {}
        self.breaks: list = []          # per enclosing loop, innermost last: what is bound at its breaks
        a = fndef.args
        params = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None}
        self._body(fndef.body, frozenset(params))

    def __call__(self, stmt) -> frozenset:
        return self.before.get(stmt, frozenset())

    def _body(self, stmts, bound):
        for s in stmts:
            bound = frozenset() if bound is None else bound     # unreachable: assume nothing
            self.before[s] = bound
            bound = self._stmt(s, bound)
        return bound

    def _stmt(self, s, bound):
        if isinstance(s, gast.Assign):
            return bound | _stored(s.targets)
        if isinstance(s, gast.AugAssign | gast.AnnAssign):
            if isinstance(s, gast.AnnAssign) and s.value is None:
                return bound
            return bound | _stored([s.target])
        if isinstance(s, gast.Delete):
            return bound - {n.id for t in s.targets for n in gast.walk(t)
                            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del)}
        if isinstance(s, gast.Import | gast.ImportFrom):
            return bound | {a.asname or a.name.split(".")[0] for a in s.names if a.name != "*"}
        if isinstance(s, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef):
            return bound | {s.name}
        if isinstance(s, gast.Break) and self.breaks:
            self.breaks[-1].append(bound)
            return None
        if isinstance(s, gast.Return | gast.Raise | gast.Break | gast.Continue):
            return None
        if isinstance(s, gast.If):
            return _meet(self._body(s.body, bound), self._body(s.orelse, bound))
        if isinstance(s, gast.For | gast.AsyncFor | gast.While):
            # the body may run zero times, and a later iteration may find a name deleted by an earlier one
            start = bound - _deleted(s.body)
            loop_vars = _stored([s.target]) if isinstance(s, gast.For | gast.AsyncFor) else set()
            self.breaks.append([])
            self._body(s.body, start | loop_vars)
            breaks = self.breaks.pop()
            if isinstance(s, gast.While) and isinstance(s.test, gast.Constant) and s.test.value is True:
                # ``while True`` runs its body at least once and is left only by a break: what every
                # break of its first run leaves bound (a later run binds at least as much)
                return _meet(*breaks)
            # left by the else (after the last run, or none), or by a break: what each break leaves bound
            # (a later run's break leaves at least as much)
            end = _meet(self._body(s.orelse, start), *breaks)
            if isinstance(s, gast.For) and isinstance(s.iter, gast.Tuple) and s.iter.elts and not any(
                    isinstance(e, gast.Starred) for e in s.iter.elts):
                end |= loop_vars - _deleted(s.body)                # a non-empty tuple binds the target
            return end
        if isinstance(s, gast.Try) or type(s).__name__ == "TryStar":
            normal = self._body(s.orelse, self._body(s.body, bound))
            raised = bound - _deleted(s.body) - _deleted(s.orelse)  # an exception anywhere in the body
            ends = [normal]
            for h in s.handlers:
                name = {h.name.id} if h.name is not None else set()
                end = self._body(h.body, raised | name)
                ends.append(None if end is None else end - name)
            after = self._body(s.finalbody, _meet(*ends))
            # the finally body also runs on the way out of an exception: record what holds then
            self._body(s.finalbody, raised - _deleted(s.handlers))
            return after
        if isinstance(s, gast.With | gast.AsyncWith):
            start = bound | _stored([i.optional_vars for i in s.items if i.optional_vars is not None])
            end = self._body(s.body, start)
            if self.never_suppresses(s):
                return end
            return _meet(end, start - _deleted(s.body))            # a suppressed exception skips the rest
        if type(s).__name__ == "Match":
            for case in s.cases:
                self._body(case.body, bound)
            return bound - _deleted([c for case in s.cases for c in case.body])
        return bound                                               # Expr, Pass, Assert, Global, ...
