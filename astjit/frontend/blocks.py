"""Split a function body into maximal runs of traceable statements (blocks), recursively.

Control flow statements end a block and stay Python; their bodies are searched for blocks of their
own. A statement that cannot be traced is recorded with its reason (for ``explain``) and also stays
Python. A run becomes a Block only if it does real array work (at least one op).
"""

import copy
import functools
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import NotTraceable
from ..graph.ops.registry import OPS
from .bound import DefinitelyBound
from .entry_facts import entry_facts, numbers_at_entry
from .inline import local_functions
from .loop_guard import resume_position, tiny_work, weighed_names
from .loops import (
    PASSED_VALUES,
    LoopChecker,
    NotALoopRegion,
    assigned_names,
    hoist_attribute_reads,
    loop_liveness,
)
from .lower import USER_CALL_REASON, BlockLowering, attribute_chain
from .rank_generic import may_have_twin, rank_generic_twin
from .window_views import hoist_windows

SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Pass)
# A block without arithmetic, a reduction or a matrix product (only metadata such as shapes and
# lengths, allocations, views, element reads, in-place stores, casts of scalars) has nothing a kernel
# does faster than numpy: its Fragment would run the same numpy calls after a dispatch (about 0.35 us
# a call, and a specialization per new shape).
COMPUTES = ("elementwise", "reduction", "linalg")


@dataclass
class Block:
    index: int
    stmts: list
    graph: object
    live_in: list
    live_out: list
    hoisted: dict = field(default_factory=dict)
    maybe_unbound: list = field(default_factory=list)   # live-ins that may be unbound when it starts
    unbound_after: list = field(default_factory=list)   # loop regions: live-outs that only the loop may
    #                                                     bind (``i`` of a search read after the loop)
    kind: str = "block"                                 # "block" (straight-line graph) or "loop"
    loop_calls: dict = field(default_factory=dict)      # loop regions: call node -> scalar op name
    kernel_loop: object = None                          # loop regions: the loop lowered (loops over arrays
    #                                                     counted: frontend/loop_iteration)
    written_loop: object = None                         # loop regions: the loop as written (its Python)
    resume_at: int = 0                                  # loop regions: outer positions run as Python first
    returns: object = False                             # loop regions with ``return``: how many values
    #                                                     (None: of nothing); False: none returns
    entry_facts: dict = field(default_factory=dict)     # loop regions: incoming ints known (frontend/entry_facts)
    in_loop: bool = False                               # inside a loop's body: settles on Python for longer
    in_region: bool = False                             # inside a loop region: runs only where its loop
    #                                                     runs as Python (the kernel declined, or a tiny loop)
    tiny_work: int = 0                                  # loop regions: the work at or below which the loop
    #                                                     runs as written (frontend/loop_guard.tiny_work)
    numbers_at_entry: frozenset = frozenset()           # loop regions: live-ins known to hold numbers on entry
    hoisted_locals: frozenset = frozenset()             # hoisted attributes of local objects (read
    #                                                     through runtime/plain_attribute)
    declines_inline: bool = False                       # loop regions: where the kernel declines, the loop
    #                                                     runs as written in the function itself (a local
    #                                                     function reads a name it assigns: emit)
    free_names: frozenset = frozenset()                 # live-ins that are globals or closure variables
    #                                                     (read before the call where deletion shows: emit)
    views: dict = field(default_factory=dict)           # windows the caller may take for the block:
    #                                                     input name -> frontend/window_views.WindowView
    window_graph: object = None                         # the graph reading those windows as inputs
    make_twin: object = None                            # makes the block as a one-trip loop region
    #                                                     (frontend/rank_generic), or None

    @property
    def is_while(self) -> bool:
        return isinstance(self.kernel_loop, gast.While)

    @property
    def lineno(self) -> int:
        return self.stmts[0].lineno

    @property
    def end_lineno(self) -> int:
        last = self.stmts[-1]
        return getattr(last, "end_lineno", None) or last.lineno


@dataclass
class SkippedStatement:
    lineno: int
    col: int
    end_col: int | None
    reason: str
    in_region: bool = False      # inside a loop compiled as a whole: Python only where that loop runs as Python


class BlockFinder:
    def __init__(self, fndef, resolver, liveness, qualname):
        self.fndef = fndef
        self.resolver = resolver
        self.liveness = liveness
        self.qualname = qualname
        self.blocks: list[Block] = []
        self.skipped: list[SkippedStatement] = []
        self.loop_notes: list[SkippedStatement] = []      # loops that stay Python, and why
        self.placements: list[tuple[list, int, int, Block]] = []
        self.protected = 0       # depth inside try/with bodies, where a handler may see partial state
        self.region_depth = 0    # depth inside loop regions (their statements run as Python only in fallbacks)
        self.loop_depth = 0      # depth inside the bodies of loops
        self.big_ints = frozenset()   # names an enclosing loop kept in Python for an int beyond int64

    def run(self) -> list[Block]:
        self.bound = DefinitelyBound(self.fndef, self.never_suppresses)
        self.local_functions = local_functions(self.fndef, self.liveness.declared)
        self.body(self.fndef.body)
        return self.blocks

    @property
    def value_names(self) -> set:
        """The locals lowering takes for values: not the modules the function imports itself."""
        return self.liveness.local_names - set(self.resolver.local_modules)

    def new_lowering(self):
        return BlockLowering(f"{self.qualname}:{len(self.blocks)}", self.resolver, self.value_names)

    def body(self, stmts: list) -> None:
        run, lowering, start = [], None, 0
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, SIMPLE) and not is_docstring(stmt):
                if lowering is None:
                    lowering, start = self.new_lowering(), i
                state = _snapshot(lowering)
                try:
                    lowering.statement(stmt)
                    run.append(stmt)
                    # a block raising midway cannot publish the names it already set: a handler may see
                    # them (in try/with), and so may a closure reading them after the exception left
                    if self.protected or assigned_names(stmt) & self.liveness.captured:
                        self.close(stmts, start, run, lowering)
                        run, lowering = [], None
                    continue
                except NotTraceable as exc:
                    _restore(lowering, state)
                    node = exc.node if getattr(exc.node, "lineno", None) else stmt
                    self.skipped.append(SkippedStatement(node.lineno, node.col_offset,
                                                         getattr(node, "end_col_offset", None), exc.reason,
                                                         self.region_depth > 0))
            self.close(stmts, start, run, lowering)
            run, lowering = [], None
            outer_big_ints = self.big_ints
            if isinstance(stmt, gast.For | gast.While) and self.loop_region(stmts, i, stmt):
                continue
            self.note_untraceable_expression(stmt)
            self.recurse(stmt)
            self.big_ints = outer_big_ints          # (names a loop kept in Python holds for its inner loops)
        self.close(stmts, start, run, lowering)

    def loop_region(self, stmts, i, loop) -> bool:
        """Make the loop one Block of kind "loop" if its syntax qualifies (frontend/loops); otherwise
        note why for explain() and let its body be searched for blocks as usual."""
        def note(reason, node):
            skipped = SkippedStatement(node.lineno, node.col_offset, getattr(node, "end_col_offset", None), reason)
            if skipped not in self.loop_notes:     # (each loop of a nest meets the same inner line)
                self.loop_notes.append(skipped)
            return False

        if self.protected:
            return note("a loop inside try/with runs as Python (a handler may see its partial state)", loop)
        checker = LoopChecker(self.resolver, self.value_names, self.local_functions)
        kernel_loop = copy.deepcopy(loop)      # what the kernel is lowered from, before the body is rewritten
        written_loop = copy.deepcopy(loop)
        hoisted, hoisted_locals = hoist_attribute_reads(kernel_loop, self.resolver, self.value_names)
        try:
            checker.check(kernel_loop)
        except NotALoopRegion as exc:
            node = exc.node if getattr(exc.node, "lineno", None) else loop
            return note(f"{exc.reason} keeps this loop in Python", node)
        hoisted.update(checker.hoisted)          # (reads of globals' attributes in the functions it inlines)
        assigned = assigned_names(loop)
        if assigned & self.liveness.declared:
            return note("the loop assigns a global or nonlocal name", loop)
        live_in, live_out = loop_liveness(self.liveness, self.bound, loop)
        live_in = [n for n in live_in if n not in self.resolver.local_modules]
        bound = self.bound(loop)
        # a name only the loop binds (a search's ``i``, read after it) comes back unbound where the loop
        # did not bind it (an empty range): the kernel says whether it did. A ``while`` loop's first
        # trips run as Python before its kernel (frontend/loop_guard), and may bind it there
        unbound_after = [name for name in live_out if name not in bound]
        if unbound_after and isinstance(loop, gast.While):
            # (``while True`` runs its kernel at least one trip: it binds what every break leaves bound)
            after = self.bound(stmts[i + 1]) if i + 1 < len(stmts) else frozenset()
            always = isinstance(loop.test, gast.Constant) and loop.test.value is True
            if not (always and set(unbound_after) <= after):
                return note(f"{unbound_after[0]!r} may be unbound after the loop, which keeps it in Python", loop)
        # a name the loop may leave unchanged (an empty range) is passed in, so its old value comes back
        live_in = list(dict.fromkeys(live_in + [n for n in live_out if n in bound]
                                     + self.free_values(loop, checker.free_names)
                                     + list(hoisted) + checker.closure_names))
        maybe_unbound = [n for n in live_in if n in self.liveness.local_names and n not in bound]
        for name in maybe_unbound:
            if name in assigned:       # no longer a local of the rewritten function: no unbound check
                return note(f"{name!r} may be read before the loop assigns it, which keeps it in Python", loop)
            if isinstance(loop, gast.While):   # its first iterations run as Python, then hand over
                return note(f"{name!r} may be unbound when the loop starts, which keeps it in Python", loop)
        facts = {n: f for n, f in entry_facts(stmts[:i], self.resolver).items() if n in live_in}
        for name, fact in facts.items():
            # (the kernel's ints are int64: one starting beyond it makes every call run the loop's Python,
            # after the runner's tests of it, 0.4x plain Python's time for an 8-byte FNV-1a hash)
            if fact[0] == "const" and not -2**63 <= fact[1] < 2**63:
                self.big_ints = self.big_ints | {name}          # (and the loops inside it)
                return note(f"{name!r} starts as {fact[1]}, an int beyond int64 (the kernel's ints), which "
                            "keeps it in Python", loop)
        inherited = sorted(self.big_ints & (set(live_in) - set(facts)))
        if inherited:
            return note(f"{inherited[0]!r} starts, in an outer loop, as an int beyond int64 (the kernel's ints), "
                        "which keeps it in Python", loop)
        block = Block(len(self.blocks), [loop], None, live_in, live_out, hoisted, maybe_unbound, unbound_after,
                      kind="loop", loop_calls=checker.calls, kernel_loop=kernel_loop, written_loop=written_loop,
                      entry_facts=facts, returns=checker.return_arity, in_loop=self.loop_depth > 0,
                      in_region=self.region_depth > 0,
                      tiny_work=tiny_work(kernel_loop, live_in, live_out, checker.calls, hoisted_locals),
                      numbers_at_entry=frozenset(numbers_at_entry(stmts[:i], facts)),
                      hoisted_locals=frozenset(hoisted_locals), free_names=self.free_live_ins(live_in, hoisted),
                      declines_inline=bool(set(checker.closure_names) & assigned))
        # (a handed-over ``for`` calls its kernel at a position left to run, which binds the loop's names)
        block.resume_at = resume_position(loop, kernel_loop, weighed_names(block), maybe_unbound, block.tiny_work)
        self.blocks.append(block)
        self.placements.append((stmts, i, i + 1, block))
        # the body's own blocks become Fragments too: the loop's fallback (for argument types the kernel
        # cannot take, such as arrays reassigned in the loop) runs the loop with them, as before
        self.region_depth += 1
        self.recurse(loop)
        self.region_depth -= 1
        return True

    def free_values(self, loop, callee_names=()) -> list:
        """Global and closure names the loop (and the functions it inlines: ``callee_names``) reads as
        numbers, arrays or tuples and lists (``DT``, ``GRID``, ``WEIGHTS``): passed in as arguments, so
        each call reads their current values (no guard, no recompile when they change)."""
        funcs = {id(n.func) for n in gast.walk(loop) if isinstance(n, gast.Call)}
        read = [n.id for n in gast.walk(loop) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                and id(n) not in funcs]
        names = []
        for name in read + list(callee_names):
            if name not in self.liveness.local_names:
                value = self.resolver.lookup(name)
                if isinstance(value, PASSED_VALUES):
                    names.append(name)
        return list(dict.fromkeys(names))

    def free_live_ins(self, live_in, hoisted) -> frozenset:
        """The live-ins that are not this function's locals nor hoisted attribute reads: globals and
        closure variables holding data, which a later call may find deleted."""
        return frozenset(n for n in live_in if n not in self.liveness.local_names and n not in hoisted)

    def note_untraceable_expression(self, stmt) -> None:
        """A return value or an if/while test that stays Python because of an unsupported call is worth
        an explain() line too (tests like ``x is None`` are plain Python by design and are not)."""
        expr = {gast.Return: "value", gast.If: "test", gast.While: "test"}.get(type(stmt))
        node = getattr(stmt, expr, None) if expr else None
        if node is None or isinstance(node, gast.Name | gast.Constant):
            return
        try:
            self.new_lowering().expr(node)
        except NotTraceable as exc:
            if "is not supported yet" in exc.reason or USER_CALL_REASON in exc.reason:
                where = exc.node if getattr(exc.node, "lineno", None) else node
                self.skipped.append(SkippedStatement(where.lineno, where.col_offset,
                                                     getattr(where, "end_col_offset", None), exc.reason))

    def recurse(self, stmt) -> None:
        if isinstance(stmt, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef):
            return                                    # nested definitions are not jitted
        for name in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, name, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], gast.stmt):
                guarded = name == "body" and (isinstance(stmt, gast.Try | gast.TryStar)
                                              or isinstance(stmt, gast.With | gast.AsyncWith)
                                              and not self.never_suppresses(stmt)) \
                    or name == "orelse" and self.finally_follows(stmt)
                looped = name == "body" and isinstance(stmt, gast.For | gast.While | gast.AsyncFor)
                self.protected += guarded
                self.loop_depth += looped
                self.body(sub)
                self.protected -= guarded
                self.loop_depth -= looped
        guarded = self.finally_follows(stmt)
        self.protected += guarded
        for handler in getattr(stmt, "handlers", []) or []:
            self.body(handler.body)
        self.protected -= guarded
        for case in getattr(stmt, "cases", []) or []:
            self.body(case.body)

    @staticmethod
    def finally_follows(stmt) -> bool:
        """Whether a ``finally`` clause runs after ``stmt``'s handlers and else clause: it sees what they
        set before one of their statements raised."""
        return isinstance(stmt, gast.Try | gast.TryStar) and bool(stmt.finalbody)

    def never_suppresses(self, stmt) -> bool:
        """Whether every context manager of a ``with`` lets exceptions through (np.errstate, ...): then a
        block raising inside it leaves no handler to observe its partial assignments."""
        import warnings

        from .lower import attribute_chain

        safe = (np.errstate, np.printoptions, warnings.catch_warnings)
        for item in stmt.items:
            call = item.context_expr
            chain = attribute_chain(call.func) if isinstance(call, gast.Call) else None
            if chain is None or chain[0] in self.value_names:
                return False
            if not any(self.resolver.resolve_chain(chain) is s for s in safe):
                return False
        return True

    def close(self, stmts, start, run, lowering) -> None:
        if not run:
            return
        graph = lowering.graph
        if not _computes(graph):
            return                                     # nothing worth a Fragment call
        live = self.liveness.block(run, protected=self.protected > 0)
        for name in live["live_out"]:
            if name not in lowering.env:
                return                                 # defensive: cannot publish this name
        graph.outputs = [(name, lowering.env[name]) for name in live["live_out"]]
        views, window_graph = hoist_windows(graph, lowering.subscripts, self.value_names, len(self.blocks))
        # an attribute of a local object (``o.scale``) is read through runtime/plain_attribute: a property
        # (read at each use, maybe with effects, maybe of what the block updates first) or a missing
        # attribute (AttributeError after the block's earlier statements) runs the block as Python,
        # whose statements read it from the object, passed in too
        roots = {name: (attribute_chain(e) or [None])[0] for name, e in lowering.hoisted.items()}
        of_locals = frozenset(name for name, root in roots.items() if root in self.liveness.local_names)
        inputs = {n.value for n in graph.inputs}
        for root in dict.fromkeys(roots[name] for name in of_locals):
            if root not in inputs:
                graph.input(root)
        live_in = [n.value for n in graph.inputs]
        bound = self.bound(run[0])
        maybe_unbound = [n for n in live_in if n in self.liveness.local_names and n not in bound]
        block = Block(len(self.blocks), run, graph, live_in, live["live_out"], dict(lowering.hoisted),
                      maybe_unbound, in_loop=self.loop_depth > 0, in_region=self.region_depth > 0,
                      hoisted_locals=of_locals, views=views, window_graph=window_graph,
                      free_names=self.free_live_ins(live_in, {**lowering.hoisted, **views}))
        if may_have_twin(graph, live_in, views, lowering.hoisted, maybe_unbound):
            block.make_twin = functools.partial(rank_generic_twin, block, self.resolver, self.value_names,
                                                self.local_functions)
        self.blocks.append(block)
        self.placements.append((stmts, start, start + len(run), block))


def _computes(graph) -> bool:
    """Whether some arithmetic, reduction or matrix product of the block takes a value known only at
    run time (``-1`` in ``a[-1]`` is arithmetic on a constant)."""
    constant = set()
    for n in graph.nodes:
        if n.op == "const" or n.op != "input" and all(id(o) in constant for o in n.operands):
            constant.add(id(n))
        elif n.op in OPS and OPS[n.op].kind in COMPUTES:
            return True
    return False


def is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) and isinstance(
        stmt.value.value, str)


def _snapshot(lowering):
    g = lowering.graph
    return (len(g.nodes), len(g.inputs), dict(lowering.env), set(lowering.assigned), dict(lowering.hoisted),
            dict(lowering.resolver.guards))


def _restore(lowering, state) -> None:
    n_nodes, n_inputs, env, assigned, hoisted, guards = state
    g = lowering.graph
    del g.nodes[n_nodes:]
    del g.inputs[n_inputs:]
    lowering.env, lowering.assigned, lowering.hoisted = env, assigned, hoisted
    lowering.resolver.guards.clear()
    lowering.resolver.guards.update(guards)
