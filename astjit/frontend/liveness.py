"""Live-in / live-out names of a block of consecutive statements, from beniget def-use chains.

live-in:  a local read in the block where some reaching definition is not earlier in the block.
live-out: a name written in the block and read after it, or read at or before its write inside the
          block (reachable only around a loop back edge). global/nonlocal names: passed in when read
          first, always returned when written; so are locals that nested scopes read (closures'
          cells). Computed on the tree before it is rewritten.
"""

import beniget
import gast

SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
          gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


class _QuietChains(beniget.DefUseChains):
    """beniget prints unbound-name warnings to stdout; collect them instead."""

    def __init__(self, filename=None):
        super().__init__(filename)
        self.messages = []

    def warn(self, msg, node):
        self.messages.append((msg, getattr(node, "lineno", None)))


def _is_binding(d) -> bool:
    n = d.node
    return not isinstance(n, gast.expr) or (
        isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store | gast.Param))


def _own_scope_nodes(fn):
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, SCOPES):
            todo.extend(gast.iter_child_nodes(n))


class FunctionLiveness:
    def __init__(self, module, fn):
        self.duc = _QuietChains()
        self.duc.visit(module)
        self.udc = beniget.UseDefChains(self.duc)
        self.declared = {v for n in _own_scope_nodes(fn)
                         if isinstance(n, gast.Global | gast.Nonlocal) for v in n.names}
        self.local_names = {d.name() for d in self.duc.locals[fn]} - self.declared
        # augmented-assignment targets are missing from beniget's locals
        self.local_names |= {n.target.id for n in _own_scope_nodes(fn)
                             if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)} - self.declared
        # locals that a nested function, lambda or comprehension names (a closure's cell): beniget links
        # a closure's read to the name's last assignment only, so an earlier one looked dead and a block
        # did not store it (``b = a * 2.0; g = lambda: b; r = g(); b = a * 3.0``: g found b unbound)
        self.captured = set()
        for scope in gast.walk(fn):
            if isinstance(scope, SCOPES) and scope is not fn:
                own = {d.name() for d in self.duc.locals.get(scope, ())}
                self.captured |= {m.id for m in gast.walk(scope) if isinstance(m, gast.Name)} - own
        self.captured &= self.local_names

    def block(self, stmts, protected=False) -> dict:
        """The block's live-in and live-out names. ``protected``: the block is inside a try/with body
        (or a handler or else clause that a ``finally`` follows), where a handler may see any local
        it sets before a later statement raises, though beniget's chains, which have no edge from the
        middle of a try body to its handlers, link the handler's read to another assignment only."""
        order = {n: i for i, s in enumerate(stmts) for n in gast.walk(s)}
        inner = {d for n in order if isinstance(n, SCOPES) for d in self.duc.locals.get(n, ())}

        def pos(ns):
            return sorted(ns, key=lambda n: (order[n], n.lineno, n.col_offset))

        names = [n for n in order if isinstance(n, gast.Name)]
        augs = [s.target for s in order if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name)]
        live_in = {}
        for u in pos([n for n in names if isinstance(n.ctx, gast.Load)] + augs):
            reaching = [d for d in self.udc.chains.get(u, []) if _is_binding(d)]
            if u.id in self.declared:
                if not any(isinstance(w.ctx, gast.Store) and w.id == u.id and order[w] < order[u]
                           for w in names):
                    live_in[u.id] = None
            elif reaching and all(d in inner for d in reaching):
                pass
            elif u.id not in self.local_names:
                pass                                  # module global, builtin or closure variable
            elif not reaching or any(not (isinstance(d.node, gast.AST) and d.node in order
                                          and order[d.node] < order[u]) for d in reaching):
                live_in[u.id] = None
        nested = {m for n in order if isinstance(n, SCOPES) for m in gast.walk(n)}
        writes = [n for n in names if isinstance(n.ctx, gast.Store) and n not in nested] + augs
        live_out = [n for n in writes if n.id in self.declared or n.id in self.captured or protected or any(
            u.node not in order or order[u.node] <= order[n] for u in self.duc.chains[n].users())]
        return {"live_in": list(live_in), "live_out": list(dict.fromkeys(n.id for n in pos(live_out)))}
