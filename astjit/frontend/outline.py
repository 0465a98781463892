"""Large work estimates moved out of the rewritten function into functions of their own.

A loop region's estimate (frontend/loop_guard: is the loop's work below its kernel's call?) is a long
expression over the loop's live-ins, compiled into the rewritten function ahead of the loop as
written. CPython finds the line of an instruction (a warning's, ``f_lineno``, a traceback's) by
reading the function's line table from its start: behind a few such estimates, each numpy warning of
a loop run as written cost 2.5 us more than in the original function (0.24x plain Python for a loop
dividing by zero at every step). Outlined, an estimate costs one call (about 0.1 us, against the 1-2
us the estimate itself takes) and the rewritten function stays close to the original's size.
"""

import gast

OUTLINE = "astjit_outline"      # attribute of an estimate's ``try`` statement that may be outlined
# an estimate of at least this many nodes is outlined: the call costs every call of the loop 50-100 ns
# (on loops of 1-2 us, 5%), the line table a few hundred ns at each warning or traceback line behind
# it; estimates of tiny loops over one or two arrays take 100-150 nodes, one over a tuple and three
# arrays 600
OUTLINE_FROM = 200


def mark_for_outlining(stmt, block):
    """Mark ``stmt`` (an estimate: ``try: name = <test> ... except: name = ...``) to be outlined where it
    is large and every live-in of ``block`` is bound when it runs (its names are passed in as
    arguments, read outside its ``try``)."""
    if isinstance(stmt, gast.Try) and not block.maybe_unbound \
            and sum(1 for _ in gast.walk(stmt)) >= OUTLINE_FROM:
        setattr(stmt, OUTLINE, tuple(block.live_in))        # (the names it may take as arguments)
    return stmt


def outline(function, prefix: str, shown_attribute: str) -> list:
    """Replace each marked estimate in ``function`` (a FunctionDef) by a call
    ``name = <prefix>k(<the block's live-ins it reads that are locals of function>)``; returns the new
    FunctionDefs, to be defined beside ``function`` (their free names are the same as its: a global or
    a closure variable is read inside, where a deleted one raises in the estimate's ``try``, which then
    runs the loop as written, and the loop raises at its own line, if it reads it at all)."""
    made = []
    local = local_names(function)

    def replace(stmts):
        out = []
        for s in stmts:
            live_in = getattr(s, OUTLINE, None)
            if live_in is not None:
                s = _outlined(s, f"{prefix}{len(made)}", set(live_in) & local, made, shown_attribute)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(s, field, None)
                    if isinstance(inner, list) and inner:
                        setattr(s, field, replace(inner))
            out.append(s)
        return out

    function.body = replace(function.body)
    return made


def _outlined(stmt, name, local, made, shown_attribute):
    target = stmt.body[-1].targets[0].id         # (the name it decides, after the reads it shares)
    reads = sorted({n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                    and n.id in local})
    args = gast.arguments(args=[gast.Name(id=r, ctx=gast.Param(), annotation=None, type_comment=None) for r in reads],
                          posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    ret = gast.Return(value=gast.Name(id=target, ctx=gast.Load(), annotation=None, type_comment=None))
    made.append(gast.FunctionDef(name=name, args=args, body=[stmt, ret], decorator_list=[], returns=None,
                                 type_comment=None, type_params=[]))
    call = gast.Call(func=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                     args=[gast.Name(id=r, ctx=gast.Load(), annotation=None, type_comment=None) for r in reads],
                     keywords=[])
    assign = gast.Assign(targets=[gast.Name(id=target, ctx=gast.Store(), annotation=None, type_comment=None)],
                         value=call, type_comment=None)
    for n in gast.walk(assign):
        gast.copy_location(n, stmt)
    if hasattr(stmt, shown_attribute):
        setattr(assign, shown_attribute, getattr(stmt, shown_attribute))
    return assign


def local_names(function) -> set:
    """The names ``function`` binds in its own scope (Python's rule: parameters, assignment targets,
    ``def``, ``class`` and ``import`` names, not those of nested functions, classes or comprehensions;
    less those it declares ``global`` or ``nonlocal``)."""
    a = function.args
    bound = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None}
    declared = set()
    nested = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda, gast.ListComp, gast.SetComp,
              gast.DictComp, gast.GeneratorExp)

    def visit(node):
        for child in gast.iter_child_nodes(node):
            if isinstance(child, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef):
                bound.add(child.name)
                for d in child.decorator_list:
                    visit_expr(d)
                continue
            if isinstance(child, nested):
                continue
            if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Store | gast.Del):
                bound.add(child.id)
            elif isinstance(child, gast.alias):
                bound.add((child.asname or child.name).split(".")[0])
            elif isinstance(child, gast.Global | gast.Nonlocal):
                declared.update(child.names)
            visit(child)

    def visit_expr(node):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            bound.add(node.id)
        visit(node)

    visit(function)
    return bound - declared
