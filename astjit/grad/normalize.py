"""Shape the function's statements so that reversing them is local.

``return`` becomes an assignment to the result variable (an early ``return`` moves the statements after its
``if`` into the other branch), and in loop bodies the statements after an ``if`` that may ``break``
or ``continue`` move into that ``if``'s other branch. Afterwards every exit is the last statement of
its list, so the backward pass reverses exactly the statements that ran, deciding by the recorded
branch conditions alone.
"""

import copy

import gast

from ..errors import GradError


def located(fn_file, node, reason) -> GradError:
    """The error at ``node``'s line: of ``fn_file``, or of the file of the inlined callee it comes from
    (grad/inline_calls), whose names the reason spells as the callee does."""
    from .inline_calls import plain_names

    return GradError(plain_names(reason), getattr(node, "astjit_file", None) or fn_file, getattr(node, "lineno", None),
                     getattr(node, "col_offset", None), getattr(node, "end_col_offset", None))


def _exits(stmts, kinds) -> bool:
    """Whether ``kinds`` statements (Break, Continue or Return) occur here, not inside nested loops."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, gast.If) and (_exits(s.body, kinds) or _exits(s.orelse, kinds)):
            return True
    return False


def move_after_exits(stmts, kinds) -> list:
    """``stmts`` with whatever follows an ``if`` that may exit moved into its branches (dropped after an
    unconditional exit: it never runs)."""
    for i, s in enumerate(stmts):
        if isinstance(s, kinds):
            return stmts[:i + 1]
        if isinstance(s, gast.If) and _exits([s], kinds):
            rest = stmts[i + 1:]
            s.body = move_after_exits(s.body + copy.deepcopy(rest), kinds)
            s.orelse = move_after_exits((s.orelse or []) + rest, kinds)
            return stmts[:i] + [s]
    return stmts


def normalize(fndef, filename, value) -> list:
    """The body with returns made assignments and loop exits moved last; ``GradError`` for a ``return``
    inside a loop, or a function that may end without returning a value."""
    body = move_after_exits(_plain_assignments(list(fndef.body)), (gast.Return,))
    body = [_loops(s, filename) for s in body]
    if not _always_returns(body):
        raise located(filename, fndef, f"{fndef.name} must return a value on every path to be differentiated")
    return _returns_to_value(body, value)


def _plain_assignments(stmts) -> list:
    """``y: float = v`` as ``y = v`` (and ``y: float`` alone, which binds nothing, left out), in every
    statement list of the function's own: the analysis of what the gradient flows through follows
    plain assignments (an annotated one's contribution was dropped)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.AnnAssign):
            if s.value is None:
                continue
            s = gast.copy_location(gast.Assign(targets=[s.target], value=s.value, type_comment=None), s)
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and not isinstance(s, gast.FunctionDef | gast.ClassDef):
                setattr(s, field, _plain_assignments(getattr(s, field)))
        for part in (getattr(s, "handlers", None) or []) + (getattr(s, "cases", None) or []):
            part.body = _plain_assignments(part.body)
        out.append(s)
    return out or ([gast.Pass()] if stmts else [])


def _loops(s, filename):
    if isinstance(s, gast.For | gast.While):
        for n in gast.walk(s):
            if isinstance(n, gast.Return):
                raise located(filename, n, "a `return` inside a loop cannot be differentiated yet: "
                              "`break` out of the loop and return after it")
        if s.orelse:
            raise located(filename, s, "a loop with an `else:` block cannot be differentiated")
        s.body = move_after_exits([_loops(b, filename) for b in s.body], (gast.Break, gast.Continue))
    elif isinstance(s, gast.If):
        s.body = [_loops(b, filename) for b in s.body]
        s.orelse = [_loops(b, filename) for b in s.orelse]
    return s


def _always_returns(stmts) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, gast.Return):
        return last.value is not None
    if isinstance(last, gast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, gast.Raise):
        return True
    return False


def _returns_to_value(stmts, value):
    out = []
    for s in stmts:
        if isinstance(s, gast.Return):
            a = gast.Assign(targets=[gast.Name(id=value, ctx=gast.Store(), annotation=None, type_comment=None)],
                            value=s.value, type_comment=None)
            out.append(gast.copy_location(a, s))
        elif isinstance(s, gast.If):
            s.body = _returns_to_value(s.body, value)
            s.orelse = _returns_to_value(s.orelse, value)
            out.append(s)
        else:
            out.append(s)
    return out
