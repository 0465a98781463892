"""Which names may hold an array that the function updates in place.

The backward pass reads an op's operands when it runs, after the whole forward pass: an operand that
carries no gradient but is updated in place later (``m += 1.0``, ``m[:] = 3.0``, ``data[0] = 0.0``,
``np.exp(a, out=m)``, ``m.fill(0.0)``) would be read with its new value, a silently wrong gradient. The
lowering therefore copies such an operand when the op runs (``snapshot``). A name counts as mutated
where it is the target of ``+=`` and the like, the array of a subscript or attribute store, the ``out``
of a call, the receiver of a method that updates in place, or an argument of a call whose result is
dropped (called for its effect); and so does every name that may share an array with one of those
(bound from an expression reading it, or read when it was bound), as a view updates its base.
"""

import copy

import gast
import numpy as np

from .aliasing import _new_object

IN_PLACE_METHODS = {"fill", "sort", "partition", "put", "itemset", "resize", "setfield", "setflags", "byteswap",
                    "append", "appendleft", "extend", "extendleft", "insert", "update", "setdefault", "add",
                    "pop", "popleft", "remove", "clear", "reverse", "discard", "__setitem__", "__iadd__"}


def mutated(body, resolve) -> set:
    """Names of ``body`` that may hold an array updated in place somewhere in the function."""
    direct, edges = set(), []
    for s in body:
        for n in gast.walk(s):
            if isinstance(n, gast.AugAssign):
                direct |= _names(n.target)
            elif isinstance(n, gast.Subscript | gast.Attribute) and isinstance(n.ctx, gast.Store | gast.Del):
                direct |= _names(n.value)
            elif isinstance(n, gast.Call):
                direct |= _call_updates(n, resolve)
            if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call) and resolve(n.value.func) is not print:
                direct |= {a.id for a in n.value.args if isinstance(a, gast.Name)}
            if isinstance(n, gast.Assign | gast.NamedExpr):
                targets = n.targets if isinstance(n, gast.Assign) else [n.target]
                if not _new_object(n.value, resolve):
                    bound = set().union(*(_names(t) for t in targets))
                    edges.append(bound | _local_names(n.value, resolve))
            elif isinstance(n, gast.For):
                edges.append(_names(n.target) | _local_names(n.iter, resolve))
    names, changed = set(direct), True
    while changed:                     # everything sharing an array with a mutated name
        changed = False
        for group in edges:
            if group & names and not group <= names:
                names |= group
                changed = True
    return names


# numpy functions that write into their first argument (``np.copyto(m, 3.0)``), whatever their result
IN_PLACE_FUNCTIONS = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis}


def _call_updates(call, resolve) -> set:
    """Names ``call`` may update, whether or not its result is used: its ``out`` (by keyword, or by
    position: a ufunc's past its inputs, another numpy function's at its ``out`` parameter, or past its
    first two where its signature is unknown), the first argument of a numpy function that writes into
    it, ``ufunc.at``'s array, the receiver of an in-place method, and every argument of a function that
    is not numpy's or math's (a helper may update what it is given)."""
    names = set()
    for k in call.keywords:
        if k.arg == "out":
            names |= _names(k.value)
    callee = resolve(call.func)
    if isinstance(callee, np.ufunc):
        for a in call.args[callee.nin:]:
            names |= _names(a)
    elif callee in IN_PLACE_FUNCTIONS or _is_ufunc_at(callee):
        names |= _names(call.args[0]) if call.args else set()
    elif callable(callee) and _of_numpy_or_math(callee):
        for a in call.args[_out_position(callee):]:
            names |= _names(a)
    elif callee is not None and callee is not print:
        for a in call.args:
            names |= _names(a)
    if isinstance(call.func, gast.Attribute) and call.func.attr in IN_PLACE_METHODS and callee is None:
        names |= _names(call.func.value)
    return names


def _is_ufunc_at(callee) -> bool:
    return getattr(callee, "__name__", None) == "at" and isinstance(getattr(callee, "__self__", None), np.ufunc)


def _of_numpy_or_math(callee) -> bool:
    module = getattr(callee, "__module__", None) or ""
    return module.split(".")[0] in ("numpy", "math", "builtins", "cmath")


def _out_position(callee) -> int:
    """Where a positional ``out`` would be among ``callee``'s arguments (past its first two where its
    signature cannot be read: ``np.dot(a, b, out)``)."""
    import inspect

    try:
        params = list(inspect.signature(callee).parameters)
    except (TypeError, ValueError):
        return 2
    return params.index("out") if "out" in params else len(params) + 1


def _local_names(e, resolve) -> set:
    """The names ``e`` reads that are the function's own (not modules, functions or other globals)."""
    return {n.id for n in gast.walk(e) if isinstance(n, gast.Name) and resolve(n) is None}


def _names(e) -> set:
    return {n.id for n in gast.walk(e) if isinstance(n, gast.Name)}


def snapshot(value):
    """``value`` as it is now, unaffected by later in-place updates (arrays and containers are copied)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(snapshot(v) for v in value)
    if isinstance(value, list | dict | set):
        return copy.deepcopy(value)
    return value
