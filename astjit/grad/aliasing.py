"""Which local names may share their array with another name, a view or an argument.

``x += y`` on a local array is differentiated as the rebinding ``x = x + y``; that is right only where
no other name can see the update. So a name counts as unshared only where every value bound to it is
known to be a new object: arithmetic (``a * b``, ``-a``), a constant, a numpy function or method known
to return a new array, and a conditional expression or tuple of those. Anything else (a name, a
subscript, an attribute, a view such as ``reshape``, ``astype(copy=False)``, a call of an unknown
function, a loop target over an array, unpacking, each target of ``a = b = v``) marks the bound name and every name it reads as
shared. Missing a view here would give a silently wrong value and gradient, so the analysis errs
towards refusing.
"""

import inspect
import re

import gast
import numpy as np

# numpy functions whose result is a new array (never an operand or a view of one), without ``out=``
# (not ``np.einsum``, which returns a view for ``'ii->i'`` or ``'ij->ji'``, nor ``np.diff``, which
# returns its operand for ``n=0``)
NEW_ARRAY_FUNCTIONS = {getattr(np, n) for n in (
    "sum", "mean", "max", "min", "amax", "amin", "prod", "var", "std", "cumsum", "cumprod", "dot", "vdot",
    "inner", "outer", "tensordot", "concatenate", "stack", "vstack", "hstack", "where", "clip",
    "copy", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange",
    "linspace", "eye", "identity", "sort", "argsort", "argmax", "argmin", "any", "all",
    "count_nonzero", "round", "around", "tile", "repeat", "trace", "cross", "kron", "median", "average",
    "nansum", "nanmean", "nanmax", "nanmin") if hasattr(np, n)}
# methods whose result is a new array (``astype`` only without ``copy=``)
NEW_ARRAY_METHODS = {"sum", "mean", "max", "min", "prod", "var", "std", "cumsum", "cumprod", "copy", "dot",
                     "clip", "round", "flatten", "argmax", "argmin", "any", "all", "astype", "tolist"}


def aliased(body, returned, resolve, inlined=None) -> set:
    """Names of ``body`` that may share an array with another name (``returned``, the generated result
    variable, excepted); ``resolve`` maps a callee to its object (None for a local). ``inlined``: the
    prefix of the names grad/inline_calls gives an inlined helper's locals (``<prefix><site>_out``) and
    result (``<prefix>r<site>``): a result bound to such a local (``return out``) shares its array
    only where the local shares it with another name, since nothing reads the local after the helper
    returns (``out = v.copy(); out -= m; return out`` updates an array no other name holds); likewise
    a name bound to a result (``y = scaled(x); y += 1.0``), which the call's statement reads once."""
    names = set()
    returns = []                       # (name, result or local it is bound to), decided after the walk
    result_name = re.compile(rf"{re.escape(inlined)}r\d+") if inlined else None
    local_name = re.compile(rf"{re.escape(inlined)}\d+_") if inlined else None

    def bind(target, value):
        # (a helper's result bound to its local, or a name bound to a helper's result: the second name
        # is read nowhere else, so the first shares an array only where the second does)
        if isinstance(target, gast.Name) and result_name is not None and isinstance(value, gast.Name) and (
                result_name.fullmatch(target.id) and local_name.match(value.id) or result_name.fullmatch(value.id)):
            returns.append((target.id, value.id))
            return
        if isinstance(target, gast.Name):
            if target.id != returned and not _new_object(value, resolve):
                names.add(target.id)
                names.update(_read_names(value))
        elif isinstance(target, gast.Tuple | gast.List) and isinstance(value, gast.Tuple | gast.List) \
                and len(target.elts) == len(value.elts) and not any(isinstance(e, gast.Starred)
                                                                    for e in target.elts + value.elts):
            for t, v in zip(target.elts, value.elts):
                bind(t, v)
        else:                          # unpacking, `a[i] = v`, `a.b = v`: all names involved
            names.update(n.id for n in gast.walk(target) if isinstance(n, gast.Name))
            names.update(_read_names(value))

    for s in body:
        for n in gast.walk(s):
            if isinstance(n, gast.Assign):
                for t in n.targets:
                    bind(t, n.value)
                if len(n.targets) > 1:         # `a = b = v`: every target holds the one object
                    names.update(m.id for t in n.targets for m in gast.walk(t) if isinstance(m, gast.Name))
            elif isinstance(n, gast.NamedExpr):
                bind(n.target, n.value)
            elif isinstance(n, gast.For) and not (isinstance(n.iter, gast.Call) and resolve(n.iter.func) is range):
                names.update(m.id for m in gast.walk(n.target) if isinstance(m, gast.Name))   # views of rows
                names.update(_read_names(n.iter))
            elif isinstance(n, gast.withitem) and n.optional_vars is not None:
                bind(n.optional_vars, n.context_expr)
    changed = True
    while changed:                     # (a name bound to a result bound to a local: in either order)
        changed = False
        for target, source in returns:
            if source in names and target not in names:
                names.add(target)
                changed = True
    return names


def _new_object(value, resolve) -> bool:
    """Whether ``value`` is known to evaluate to a new object, shared with no name."""
    if isinstance(value, gast.Constant | gast.BinOp | gast.UnaryOp | gast.Compare):
        return True
    if isinstance(value, gast.IfExp):
        return _new_object(value.body, resolve) and _new_object(value.orelse, resolve)
    if not isinstance(value, gast.Call) or any(k.arg is None for k in value.keywords) \
            or any(isinstance(a, gast.Starred) for a in value.args):
        return False
    func = value.func
    callee = resolve(func)
    if callee is not None:
        if isinstance(callee, np.ufunc):
            return len(value.args) <= callee.nin and all(k.arg != "out" for k in value.keywords)
        return any(callee is f for f in NEW_ARRAY_FUNCTIONS) and not _may_return_operand(callee, value)
    if isinstance(func, gast.Attribute) and func.attr in NEW_ARRAY_METHODS:
        return not _may_return_operand(getattr(np.ndarray, func.attr), value, bound=True)
    return False


def _may_return_operand(callee, call, bound=False) -> bool:
    """Whether ``call`` passes ``out`` (the result is that array) or ``copy`` (``astype(t, copy=False)``
    may return its receiver), by keyword or position; True where the signature is unknown."""
    try:
        params = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return True
    if bound:
        params = params[1:]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    passed = set(positional[:len(call.args)]) | {k.arg for k in call.keywords}
    return bool(passed & {"out", "copy"})


def _read_names(value) -> set:
    return {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}
