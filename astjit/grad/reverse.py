"""Forward and backward code from the lowered items (grad/lower.py).

The forward pass is the function's own statements, one op per assignment, plus what the backward pass
needs to find its way back: each ``if``'s condition in a variable, each loop's ``range`` and, where the
loop may ``break`` or is a ``while``, its iteration count. A variable that is assigned again later
(in a loop, or twice) is pushed on a tape before each assignment, and the backward pass pops it back
where it reverses that assignment, so at every point of the backward pass each variable holds the
value it had at the same point of the forward pass. Only variables the backward pass reads are saved.

The backward pass visits the items in reverse. For ``z = op(a, b)`` it takes the adjoint ``d_z`` of
``z`` and adds each rule's result to the adjoints of the operands that carry a gradient (summed back
to their shapes for broadcasting ops). Adjoints start as the first contribution; inside a branch or
loop they start as ``0.0`` before it (a Python float: ``0.0 + g`` keeps ``g``'s dtype and shape).
"""

import copy
from dataclasses import dataclass

import gast

from ..runtime.fragment import UNBOUND  # (what the tape holds for a variable without a value)
from .lower import Exit, ForItem, IfItem, Plain, Prim, WhileItem, _name
from .rules import instantiate

SAVE = "astjit_save"             # attribute of a generated push or pop statement: the name it saves


def saved_values(variables, names) -> tuple:
    """The values of ``names`` among a frame's ``variables``, UNBOUND for one without a value."""
    return tuple(variables.get(n, UNBOUND) for n in names)


def _const(v):
    return gast.Constant(value=v, kind=None)


def _push(tape, name):
    call = gast.Call(func=gast.Attribute(value=_name(tape), attr="append", ctx=gast.Load()), args=[_name(name)],
                     keywords=[])
    s = gast.Expr(value=call)
    setattr(s, SAVE, name)
    return s


def _pop(tape, name):
    call = gast.Call(func=gast.Attribute(value=_name(tape), attr="pop", ctx=gast.Load()), args=[], keywords=[])
    s = _assign_plain(name, call)
    setattr(s, SAVE, name)
    return s


def _assign_plain(target, value):
    return gast.Assign(targets=[gast.Name(id=target, ctx=gast.Store(), annotation=None, type_comment=None)],
                       value=value, type_comment=None)


@dataclass(eq=False)
class Run:
    """Consecutive statements without control flow, each saved variable assigned once among them: the
    forward pass pushes their old values as one tuple before the run, and the backward pass pops it
    once, into shadow variables that the run's adjoints read, so each stretch stays one Fragment."""
    items: list
    saved: list                    # variables to save, in assignment order


def group_runs(items, saved_candidates) -> list:
    """``items`` with consecutive Plain and Prim items gathered into Runs (recursively)."""
    out, current, seen = [], [], []

    def close():
        if current:
            out.append(Run(list(current), list(seen)))
            current.clear()
            seen.clear()

    for it in items:
        if isinstance(it, Plain | Prim):
            names = [n for n in _ordered_assigned(it.stmt) if n in saved_candidates]
            if any(n in seen for n in names):
                close()
            current.append(it)
            seen.extend(n for n in names if n not in seen)
            continue
        close()
        if isinstance(it, IfItem):
            it.body = group_runs(it.body, saved_candidates)
            it.orelse = group_runs(it.orelse, saved_candidates)
        elif isinstance(it, ForItem | WhileItem):
            it.body = group_runs(it.body, saved_candidates)
        out.append(it)
    close()
    return out


def _ordered_assigned(stmt) -> list:
    names = []
    for n in gast.walk(stmt):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id not in names:
            names.append(n.id)
    return names


def _assigned(stmt) -> set:
    return {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _assigned_in(items) -> set:
    """The variables ``items`` (lowered statements, loops and branches, nested) may bind."""
    names = set()
    for it in items:
        if isinstance(it, Run):
            names |= _assigned_in(it.items)
        elif isinstance(it, Plain | Prim):
            names |= _assigned(it.stmt)
        elif isinstance(it, IfItem):
            names |= _assigned_in(it.body) | _assigned_in(it.orelse)
        elif isinstance(it, ForItem):
            names |= {it.target} | _assigned_in(it.body)
        elif isinstance(it, WhileItem):
            names |= _assigned_in(it.body)
    return names


class Reverser:
    def __init__(self, lowering, bind_global, params, prefix, inlined_prefix=None):
        self.lowering = lowering
        self.bind_global = bind_global
        self.active = lowering.activity.active
        self.defined: set = set()
        self.saved_candidates: set = set()
        # the variables whose adjoints a branch or loop sets to 0.0 (``backward``): after it, such an
        # adjoint may still be that number
        self.nested: set = set()
        self.params = params
        self.prefix = prefix
        # names of inlined helpers' variables (grad/inline_calls): each bound before it is read, as the
        # generated ones are (a tape push of them took the try/except of a user's maybe-unbound one)
        self.inlined_prefix = inlined_prefix
        self.tape = prefix + "tape"

    def adjoint_name(self, name) -> str:
        """``_d_x`` for ``x``; ``_d_t3`` for the generated ``_t3``."""
        if name.startswith(self.prefix):
            return f"{self.prefix}d_{name[len(self.prefix):]}"
        return f"{self.prefix}d_{name}"

    # -- which variables may need saving -------------------------------------------------------------
    def count_assignments(self, items):
        counts = {p: 1 for p in self.params}

        def visit(items, weight):
            for it in items:
                if isinstance(it, Plain | Prim):
                    for n in _assigned(it.stmt):
                        counts[n] = counts.get(n, 0) + weight
                elif isinstance(it, IfItem):
                    visit(it.body, weight)
                    visit(it.orelse, weight)
                elif isinstance(it, ForItem | WhileItem):
                    if isinstance(it, ForItem):
                        counts[it.target] = counts.get(it.target, 0) + 2
                    visit(it.body, 2)
        visit(items, 1)
        self.saved_candidates = {n for n, c in counts.items() if c >= 2}

    # -- forward ---------------------------------------------------------------------------------------
    def forward(self, items, bound=None, seen=None) -> list:
        """The forward pass of ``items``; ``bound``: the user's variables surely bound before them (the
        parameters, what ran unconditionally), whose old values are pushed as they are. Another user
        variable may be unbound where its old value is saved (the target of a loop not run before, a
        name first assigned in a loop): the prologue does not bind it, so that the user's code reading
        it raises UnboundLocalError as the original's does, and its push stands in an UNBOUND for it.
        ``seen``: the variables some statement before may have bound (all a loop binds, in its body)."""
        bound = set(self.params) if bound is None else bound
        seen = set(bound) if seen is None else seen
        out = []
        for it in items:
            if isinstance(it, Run):
                if it.saved:
                    values = gast.Tuple(elts=[_name(n) for n in it.saved], ctx=gast.Load())
                    append = gast.Expr(value=gast.Call(func=gast.Attribute(value=_name(self.tape), attr="append",
                                                                           ctx=gast.Load()),
                                                       args=[values], keywords=[]))
                    out.append(self._maybe_unbound(append, it.saved, bound, seen))
                out += [i.stmt for i in it.items]
                bound |= _assigned_in([it])
            elif isinstance(it, Plain | Prim):
                out += [self._maybe_unbound(_push(self.tape, n), [n], bound, seen)
                        for n in sorted(_assigned(it.stmt) & self.saved_candidates)]
                out.append(it.stmt)
                bound |= _assigned(it.stmt)
            elif isinstance(it, IfItem):
                out.append(gast.If(test=_name(it.cond), body=self.forward(it.body, set(bound), seen) or [gast.Pass()],
                                   orelse=self.forward(it.orelse, set(bound), seen)))
            elif isinstance(it, ForItem):
                if it.target in self.saved_candidates:
                    out.append(self._maybe_unbound(_push(self.tape, it.target), [it.target], bound, seen))
                seen |= _assigned_in([it])
                body = self.forward(it.body, bound | {it.target}, seen)
                if it.count:
                    body = [_increment(it.count)] + body
                loop = gast.For(target=gast.Name(id=it.target, ctx=gast.Store(), annotation=None, type_comment=None),
                                iter=_name(it.range_name), body=body or [gast.Pass()], orelse=[], type_comment=None)
                out.append(gast.copy_location(loop, it.node))
            elif isinstance(it, WhileItem):
                seen |= _assigned_in([it])
                body = [_increment(it.count)] + self.forward(it.body, set(bound), seen)
                out.append(gast.While(test=it.test, body=body, orelse=[]))
            elif isinstance(it, Exit):
                out.append(it.stmt)
            seen |= _assigned_in([it])
        return out

    def user_variable(self, name) -> bool:
        return not (name.startswith(self.prefix)
                    or self.inlined_prefix is not None and name.startswith(self.inlined_prefix))

    def _maybe_unbound(self, push, names, bound, seen):
        """``push`` as it is where each of ``names`` is bound for sure; with UNBOUND for those no
        statement before can have bound; else within a ``try`` whose handler pushes the same values
        read from ``locals()``, UNBOUND for a variable without one."""
        unsure = [n for n in names if n not in bound and self.user_variable(n)]
        if not unsure:
            return push
        if not set(unsure) & seen:
            unbound = _name(self.bind_global("UNBOUND", UNBOUND))
            values = push.value.args[0]
            if isinstance(values, gast.Tuple):
                values.elts = [unbound if isinstance(v, gast.Name) and v.id in unsure else v for v in values.elts]
            else:
                push.value.args[0] = unbound
            return push
        read = gast.Call(func=_name(self.bind_global("saved_values", saved_values)),
                         args=[gast.Call(func=_name(self.bind_global("locals", locals)), args=[], keywords=[]),
                               gast.Tuple(elts=[_const(n) for n in names], ctx=gast.Load())], keywords=[])
        if not isinstance(push.value.args[0], gast.Tuple):
            read = gast.Subscript(value=read, slice=_const(0), ctx=gast.Load())
        handler = gast.Expr(value=gast.Call(func=gast.Attribute(value=_name(self.tape), attr="append",
                                                                ctx=gast.Load()), args=[read], keywords=[]))
        statement = gast.Try(body=[push], handlers=[gast.ExceptHandler(
            type=_name(self.bind_global("NameError", NameError)), name=None, body=[handler])], orelse=[],
            finalbody=[])
        if hasattr(push, SAVE):
            setattr(statement, SAVE, getattr(push, SAVE))
        return statement

    # -- backward --------------------------------------------------------------------------------------
    def backward(self, items, depth=0) -> list:
        if depth == 0:
            self.nested = self._touched([it for it in items if isinstance(it, IfItem | ForItem | WhileItem)])
        out = []
        for it in reversed(items):
            if isinstance(it, Run):
                out += self._reverse_run(it, depth)
            elif isinstance(it, Plain):
                out += self._reverse_plain(it, depth)
            elif isinstance(it, Prim):
                out += self._reverse_prim(it, depth)
            elif isinstance(it, IfItem):
                out += self._start_adjoints(it.body + it.orelse)
                body = self.backward(it.body, depth + 1)
                orelse = self.backward(it.orelse, depth + 1)
                if body or orelse:
                    out.append(gast.If(test=_name(it.cond), body=body or [gast.Pass()], orelse=orelse))
            elif isinstance(it, ForItem):
                out += self._start_adjoints(it.body)
                body = self.backward(it.body, depth + 1) or [gast.Pass()]
                positions = _name(it.range_name)
                if it.count:
                    positions = gast.Subscript(value=positions, slice=gast.Slice(lower=None, upper=_name(it.count),
                                                                                 step=None), ctx=gast.Load())
                reversed_positions = gast.Call(func=_name(self.bind_global("reversed", reversed)),
                                               args=[positions], keywords=[])
                out.append(gast.For(target=gast.Name(id=it.target, ctx=gast.Store(), annotation=None,
                                                     type_comment=None),
                                    iter=reversed_positions, body=body, orelse=[], type_comment=None))
                if it.target in self.saved_candidates:
                    out.append(_pop(self.tape, it.target))
            elif isinstance(it, WhileItem):
                out += self._start_adjoints(it.body)
                body = self.backward(it.body, depth + 1) or [gast.Pass()]
                trips = gast.Call(func=_name(self.bind_global("range", range)), args=[_name(it.count)], keywords=[])
                out.append(gast.For(target=gast.Name(id=self.lowering.fresh("step"), ctx=gast.Store(), annotation=None,
                                                     type_comment=None),
                                    iter=trips, body=body, orelse=[], type_comment=None))
        return out

    def _start_adjoints(self, items) -> list:
        """``d_v = 0.0`` before a branch or loop for each active variable it touches whose adjoint has no
        value yet."""
        out = []
        for n in sorted(self._touched(items) - self.defined):
            out.append(_assign_plain(self.adjoint_name(n), _const(0.0)))
            self.defined.add(n)
        return out

    def _touched(self, items) -> set:
        """The active variables ``items`` assign or read as operands, in every branch and loop."""
        touched = set()

        def visit(items):
            for it in items:
                if isinstance(it, Run):
                    visit(it.items)
                elif isinstance(it, Prim):
                    touched.add(it.target)
                    touched.update(it.operands[i].id for i in it.active)
                elif isinstance(it, Plain):
                    touched.update(_assigned(it.stmt) & self.active)
                elif isinstance(it, IfItem):
                    visit(it.body)
                    visit(it.orelse)
                elif isinstance(it, ForItem | WhileItem):
                    visit(it.body)
        visit(items)
        return touched

    def _reverse_run(self, run, depth) -> list:
        shadows = {n: self.lowering.fresh(f"old_{n.lstrip('_')}_") for n in run.saved}
        out = []
        if run.saved:
            out.append(gast.Assign(targets=[gast.Tuple(elts=[gast.Name(id=shadows[n], ctx=gast.Store(), annotation=None,
                                                                       type_comment=None) for n in run.saved],
                                                       ctx=gast.Store())],
                                   value=gast.Call(func=gast.Attribute(value=_name(self.tape), attr="pop",
                                                                       ctx=gast.Load()), args=[], keywords=[]),
                                   type_comment=None))
        later = set()                  # saved variables assigned by this statement or after it in the run
        for it in reversed(run.items):
            later |= _assigned(it.stmt) & set(run.saved)
            if isinstance(it, Plain):
                out += self._reverse_plain(it, depth, pops=False)
            else:
                out += self._reverse_prim(it, depth, {n: shadows[n] for n in later})
        out += [_assign_plain(n, _name(shadows[n])) for n in reversed(run.saved)]
        return out

    def _reverse_plain(self, it, depth, pops=True) -> list:
        out = []
        for n in sorted(_assigned(it.stmt) & self.active & self.defined):
            # the value before this assignment is another one: its adjoint starts again
            if depth:
                out.append(_assign_plain(self.adjoint_name(n), _const(0.0)))
            else:
                self.defined.discard(n)
        if pops:
            out += [_pop(self.tape, n) for n in sorted(_assigned(it.stmt) & self.saved_candidates, reverse=True)]
        return out

    def _reverse_prim(self, it, depth, shadows=None) -> list:
        """The adjoint of ``z = op(...)``; ``shadows`` (inside a Run) names the variable holding each
        operand's value before the run, for operands the run assigns at or after this statement."""
        z = it.target
        saved = z in self.saved_candidates and shadows is None
        if z not in self.defined:
            return [_pop(self.tape, z)] if saved else []
        out = []
        g = self.lowering.fresh("g")
        out.append(_assign_plain(g, _name(self.adjoint_name(z))))
        if depth:
            out.append(_assign_plain(self.adjoint_name(z), _const(0.0)))
        else:
            self.defined.discard(z)
        ans = _name(z)
        if saved:
            ans_name = self.lowering.fresh("ans")
            out.append(_assign_plain(ans_name, _name(z)))
            out.append(_pop(self.tape, z))
            ans = _name(ans_name)
        def value(o):                  # an operand as it was when the statement ran
            if shadows and isinstance(o, gast.Name) and o.id in shadows:
                return _name(shadows[o.id])
            return copy.deepcopy(o)

        if (depth or z in self.nested) and not it.rule.unbroadcast:
            # in a branch or loop the adjoint may still be its 0.0 start (the value overwritten, or not
            # read, after it): a rule that reshapes, transposes or multiplies matrices needs the shape
            from .helpers import zero_adjoint

            out.append(_assign_plain(g, gast.Call(func=_name(self.bind_global("zero_adjoint", zero_adjoint)),
                                                  args=[_name(g), copy.deepcopy(ans)], keywords=[])))
        instance = instantiate(it.rule, _name(g), ans, [value(o) for o in it.operands],
                               {k: value(v) for k, v in it.keywords.items()}, it.active,
                               self.lowering.fresh, self.bind_global)
        out += instance.statements
        for i in sorted(it.active):
            if i not in instance.results:
                continue
            operand = it.operands[i].id
            contribution = instance.results[i]
            if it.rule.unbroadcast:       # to the operand's shape when the op ran (the run may rebind it)
                c = self.lowering.fresh("c")
                out.append(_assign_plain(c, contribution))
                contribution = self._unbroadcast(_name(c), value(it.operands[i]))
            out.append(self._accumulate(operand, contribution))
        return out

    def _unbroadcast(self, value, operand):
        """``np.reshape(np.sum(value, axis=broadcast_axes(np.shape(value), np.shape(x))),
        summed_shape(np.shape(value), np.shape(x)))`` for the operand expression ``x``: inside a Fragment
        the axes and the shape are known when it compiles (a copy where nothing was broadcast)."""
        from . import helpers

        np_ = _name(self.bind_global("np", __import__("numpy")))

        def np_call(attr, args, keywords=()):
            return gast.Call(func=gast.Attribute(value=copy.deepcopy(np_), attr=attr, ctx=gast.Load()), args=args,
                             keywords=list(keywords))

        axes = gast.Call(func=_name(self.bind_global("broadcast_axes", helpers.broadcast_axes)),
                         args=[np_call("shape", [value]), np_call("shape", [operand])], keywords=[])
        total = np_call("sum", [copy.deepcopy(value)], [gast.keyword(arg="axis", value=axes)])
        shape = gast.Call(func=_name(self.bind_global("summed_shape", helpers.summed_shape)),
                          args=[np_call("shape", [copy.deepcopy(value)]), np_call("shape", [copy.deepcopy(operand)])],
                          keywords=[])
        return np_call("reshape", [total, shape])

    def _accumulate(self, name, contribution):
        from . import helpers

        d = self.adjoint_name(name)
        if name in self.defined and isinstance(contribution, gast.Call) and isinstance(contribution.func, gast.Name) \
                and contribution.func.id == self.bind_global("scatter_index", helpers.scatter_index):
            # (an element read's adjoint, added in place where that is the same: helpers.scatter_add)
            contribution = gast.Call(func=_name(self.bind_global("scatter_add", helpers.scatter_add)),
                                     args=[_name(d)] + contribution.args, keywords=[])
        elif name in self.defined:
            contribution = gast.BinOp(left=_name(d), op=gast.Add(), right=contribution)
        self.defined.add(name)
        return _assign_plain(d, contribution)


def _increment(name):
    return gast.AugAssign(target=gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None),
                          op=gast.Add(), value=_const(1))


def drop_unneeded_saves(forward, backward) -> set:
    """Remove the pushes and pops of variables the backward pass never reads; the names kept."""
    reads = {n.id for s in backward for n in gast.walk(s) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Load)}
    kept = set()

    def filter_list(stmts):
        out = []
        for s in stmts:
            name = getattr(s, SAVE, None)
            if name is not None:
                if name not in reads:
                    continue
                kept.add(name)
            for fld in ("body", "orelse"):
                if isinstance(getattr(s, fld, None), list) and getattr(s, fld):
                    setattr(s, fld, filter_list(getattr(s, fld)) or [gast.Pass()])
            out.append(s)
        return out

    forward[:] = filter_list(forward)
    backward[:] = filter_list(backward)
    return kept
