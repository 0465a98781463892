"""One spelling per operation, so that rewrite patterns match whichever way the user wrote it.

``x.sum()`` becomes ``np.sum(x)`` (every reduction method, and ``x.dot``; not ``x.clip``, which takes
one bound alone where ``np.clip`` needs both), ``np.add(x, y)`` becomes ``x + y`` (every ufunc that
has an operator), ``abs(x)`` becomes ``np.absolute(x)``, ``np.add.reduce(x)`` becomes
``np.sum(x, axis=0)`` (likewise ``multiply``, ``maximum``, ``minimum``), and a reduction's arguments
after the array are passed by keyword (``np.sum(x, 0)`` is ``np.sum(x, axis=0)``) and left out where
they are constants equal to the default, in type too (``np.sum(x, axis=None, keepdims=False)`` is
``np.sum(x)``; ``keepdims=0`` stays). Each only where the spellings compute the same thing (``np.power``
of float16 or complex operands stays: below): a method only on a numpy array or scalar
receiver (on a Python number it raises), a ufunc or ``abs`` only without keywords and with an array
operand: on two Python numbers the operator gives a Python number, and on numpy scalars the operator
runs numpy's scalar arithmetic, which is not always the ufunc's (``abs`` of a complex128 scalar is
C's ``hypot``, ``np.absolute`` is numpy's own loop: one in three results differs in the last bit).
"""

import numpy as np

from ..ops.elementwise import BINARY_OPERATORS, UNARY_OPERATORS
from ..ops.registry import OPS
from ..types import ArrayType
from .rewrite import same_constant

METHOD_FUNCTIONS = {name: "np." + name for name in (
    "sum", "prod", "mean", "max", "min", "var", "std", "any", "all", "argmax", "argmin", "dot")}
UFUNC_OPERATORS = {"np." + name: name for name in list(BINARY_OPERATORS) + list(UNARY_OPERATORS)}
# np.power is ``**`` only where its operands are neither bool, float16, long double nor complex: the
# operator on an array takes numpy's fast paths ahead of the ufunc (np.sqrt for an exponent of 0.5,
# whose -inf and -0.0 give nan and -0.0; np.square for 2, which keeps a bool array's int8), which
# np.power's float32, float64 and integer loops take too, but its float16 and long double loops call
# pow (inf and 0.0), its complex loop cpow (other last bits), and np.power(bool_array, 2) is int64
POWER_APART = frozenset({np.dtype(t).name for t in (np.bool_, np.float16, np.longdouble, np.complex64,
                                                      np.complex128, np.clongdouble)})
UFUNC_REDUCES = {"np.add.reduce": "np.sum", "np.multiply.reduce": "np.prod",
                 "np.maximum.reduce": "np.max", "np.minimum.reduce": "np.min"}


def spelling(node, is_array, is_numpy=None, dtype_of=None) -> str | None:
    """The canonical op name for ``node``, or None where it already is canonical. ``is_array(operand)``:
    whether it is a numpy array; ``is_numpy(operand)``: whether it is an array or a numpy scalar
    (``is_array`` where not given); ``dtype_of(operand)``: its dtype's name, or None (a pattern's
    operands, which have none: np.power is ``**`` there)."""
    if node.op in METHOD_FUNCTIONS and (is_numpy or is_array)(node.args[0]):
        return METHOD_FUNCTIONS[node.op]
    if node.op == "np.power" and dtype_of is not None and any(dtype_of(a) in POWER_APART for a in node.args):
        return None
    if node.op in UFUNC_OPERATORS and not node.kwargs and any(is_array(a) for a in node.args):
        return UFUNC_OPERATORS[node.op]
    if node.op == "abs" and is_array(node.args[0]):
        return "np.absolute"
    if node.op in UFUNC_REDUCES:
        return UFUNC_REDUCES[node.op]
    return None


def canonicalize_graph(graph, is_array, is_numpy=None, dtype_of=None) -> bool:
    """Respell every node of ``graph`` in place; whether anything changed."""
    changed = False
    for node in list(graph.nodes):
        name = spelling(node, is_array, is_numpy, dtype_of)
        if name is None:
            continue
        if node.op in UFUNC_REDUCES and len(node.args) < 2 and "axis" not in node.kwargs:
            node.kwargs["axis"] = graph.insert_before(node, "const", value=0)   # the ufunc's default axis
        node.op = name
        changed = True
    return keyword_form(graph) or changed


def keyword_form(graph) -> bool:
    """Pass each reduction's arguments after the array by keyword, leaving out those given their
    default; whether anything changed."""
    changed = False
    dropped = []
    for node in graph.nodes:
        op = OPS.get(node.op)
        if op is None or op.kind != "reduction" or op.signature is None:
            continue
        names = list(op.signature.parameters)
        if len(node.args) > len(names):
            continue
        if len(node.args) > 1:
            for name, value in zip(names[1:], node.args[1:]):
                node.kwargs[name] = value
            node.args = node.args[:1]
            changed = True
        for name, value in list(node.kwargs.items()):
            if _is_default(op.signature.parameters.get(name), value):
                dropped.append(node.kwargs.pop(name))
                changed = True
    graph.remove_dead(dropped)          # a constant computes nothing that could raise
    return changed


def _is_default(parameter, value) -> bool:
    """Whether ``value`` is a constant that is exactly ``parameter``'s default (``False``, not ``0``)."""
    return parameter is not None and parameter.default is not parameter.empty and value.op == "const" \
        and same_constant(parameter.default, value.value)


def run(graph, ctx, state):
    from . import infer_again

    def is_array(n):
        t = ctx.types[n]
        return isinstance(t, ArrayType) and not t.scalar

    def dtype_of(n):
        t = ctx.types[n]
        return str(t.dtype) if isinstance(t, ArrayType) else None

    if not canonicalize_graph(graph, is_array, lambda n: isinstance(ctx.types[n], ArrayType), dtype_of):
        return None
    return graph, infer_again(graph, state.args, ctx)
