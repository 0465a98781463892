"""Trace a rule's pattern or replacement function into a Graph (graph/ir), by calling it on symbols.

A symbol answers numpy's protocols (``__array_ufunc__``, ``__array_function__``), Python's operators
and the array methods and attributes astjit has ops for, and records each as the node the frontend
would have made of the same code; the graph is then put in canonical form (graph/passes/canonicalize)
as every block's graph is before rules run, so ``x.sum()``, ``np.sum(x)`` and ``np.add.reduce(x)``
in a pattern match any of the three in the user's code.
"""

import inspect

import numpy as np

from ..errors import RuleError
from ..graph.ir import Graph
from ..graph.ops import registry
from ..graph.passes.canonicalize import canonicalize_graph

OPERATORS = {
    "__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "true_divide",
    "__floordiv__": "floor_divide", "__mod__": "remainder", "__pow__": "power", "__matmul__": "matmul",
    "__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor", "__lshift__": "left_shift",
    "__rshift__": "right_shift", "__lt__": "less", "__le__": "less_equal", "__gt__": "greater",
    "__ge__": "greater_equal", "__eq__": "equal", "__ne__": "not_equal",
}
UNARY = {"__neg__": "negative", "__pos__": "positive", "__invert__": "invert", "__abs__": "np.absolute"}
REDUCING_UFUNCS = ("add", "multiply", "maximum", "minimum")


class Symbol:
    """A value of the traced function: every operation on it adds a node to the tracer's graph."""

    __array_priority__ = 1000

    def __init__(self, tracer, node):
        self._tracer = tracer
        self._node = node

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__":
            return self._tracer.call(ufunc, inputs, kwargs)
        if method == "reduce" and ufunc.__name__ in REDUCING_UFUNCS:
            return self._tracer.add(f"np.{ufunc.__name__}.reduce", inputs, kwargs)
        raise self._tracer.error(f"np.{ufunc.__name__}.{method}")

    def __array_function__(self, func, types, args, kwargs):
        return self._tracer.call(func, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in registry.ATTRIBUTES:
            return self._tracer.add(registry.ATTRIBUTES[name], [self], {})
        if name in registry.METHODS:
            op = registry.METHODS[name]
            return lambda *args, **kwargs: self._tracer.add(op, [self, *args], kwargs)
        raise self._tracer.error(f".{name}")

    def __getitem__(self, index):
        raise self._tracer.error("indexing")

    def __bool__(self):
        raise RuleError(f"{self._tracer.what} tests a value's truth ('if', 'and', 'or'): a pattern is one "
                        "expression of array operations")

    def __iter__(self):
        raise self._tracer.error("iteration")

    __hash__ = object.__hash__


def _binary(name, reflected=False):
    def method(self, other):
        return self._tracer.add(name, [other, self] if reflected else [self, other], {})
    return method


def _unary(name):
    def method(self):
        return self._tracer.add(name, [self], {})
    return method


for _dunder, _name in OPERATORS.items():
    setattr(Symbol, _dunder, _binary(_name))
    if _dunder not in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        setattr(Symbol, "__r" + _dunder[2:], _binary(_name, reflected=True))
for _dunder, _name in UNARY.items():
    setattr(Symbol, _dunder, _unary(_name))


class Tracer:
    def __init__(self, what: str):
        self.what = what
        self.graph = Graph(what)

    def error(self, thing: str) -> RuleError:
        return RuleError(f"{self.what} uses {thing}, which astjit has no op for: a rule is written with the "
                         "numpy functions, operators and array methods astjit compiles")

    def node(self, value):
        if isinstance(value, Symbol):
            return value._node
        if isinstance(value, list | tuple):
            items = [self.node(v) for v in value]
            return self.graph.add("tuple", items)
        if isinstance(value, np.ndarray):
            raise RuleError(f"{self.what} holds an array constant: use a number, or make it a parameter")
        return self.graph.const(value)

    def add(self, op, args, kwargs):
        node = self.graph.add(op, [self.node(a) for a in args], {k: self.node(v) for k, v in kwargs.items()})
        return Symbol(self, node)

    def call(self, func, args, kwargs):
        op = registry.lookup_callable(func)
        if op is None:
            raise self.error(f"{getattr(func, '__module__', '') or ''}.{getattr(func, '__name__', func)}".lstrip("."))
        return self.add(op, args, kwargs)


def parameters(fn, what) -> list[str]:
    """The names of ``fn``'s parameters: plain positional ones, no defaults."""
    if not callable(fn):
        raise RuleError(f"{what} must be a function, not {type(fn).__name__}")
    params = list(inspect.signature(fn).parameters.values())
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is not p.empty:
            raise RuleError(f"{what} takes '{p}': parameters of a rule are plain names without defaults")
    return [p.name for p in params]


def trace(fn, names, what) -> Graph:
    """The graph of ``fn(*names)``: inputs per parameter, one output."""
    tracer = Tracer(what)
    symbols = [Symbol(tracer, tracer.graph.input(name)) for name in names]
    try:
        result = fn(*symbols)
    except RuleError:
        raise
    except Exception as exc:
        raise RuleError(f"{what} could not be traced ({type(exc).__name__}: {exc})") from None
    tracer.graph.outputs = [("result", tracer.node(result))]
    canonicalize_graph(tracer.graph, lambda n: True)
    return tracer.graph
