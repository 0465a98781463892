"""Shape/dtype inference for one specialization of a Graph.

Given the runtime values of a Fragment's live-ins, give every node a type (graph/types). Rules come
from the op registry; most evaluate the op's own numpy implementation on tiny representatives, so
result dtypes (NEP 50 included) and the errors numpy would raise come from numpy itself. Any error is
turned into ``Unsupported``: the block then runs as Python and the user sees numpy's own exception at
their own line.
"""

import numpy as np

from ..errors import RaisesAsPython, Unsupported
from ..runtime.fpstate import silenced
from .ops.registry import OPS
from .types import ArrayType, Opaque, Static, WeakScalar, representative, type_of_value

STATIC_INPUT_TYPES = (type(None), str, np.dtype, type, slice, type(Ellipsis))


def _is_static_input(value) -> bool:
    if isinstance(value, STATIC_INPUT_TYPES):
        return True
    if isinstance(value, tuple):
        return all(_is_static_input(v) or type(v) in (int, float, bool) for v in value)
    return False


def input_type(name, value):
    t = type_of_value(value)
    if t is None and hasattr(type(value), "__dlpack_device__"):
        from ..devices import array_type

        t = array_type(value)          # an array on a CUDA device (CuPy, torch)
    if t is not None:
        if isinstance(t, ArrayType) and t.dtype.kind not in "biufc":
            raise Unsupported(f"'{name}' has dtype {t.dtype}, which astjit does not compile")
        return t
    if _is_static_input(value):
        return Static(value)
    from ..runtime.keys import spelled
    from ..runtime.plain_attribute import NotPlain

    name = spelled(name)                   # (``self.k``, not the name it is passed in as)
    if isinstance(value, NotPlain):        # (a property, a class's own lookup, a missing attribute)
        raise Unsupported(f"'{name}' is read as Python reads it (not a value stored on the object)")
    raise Unsupported(f"'{name}' is a {type(value).__name__}, not an array or a number")


class InferContext:
    """Types of one specialization, plus what the runtime must check before reusing it."""

    def __init__(self, graph, args):
        self.graph = graph
        self.args = args
        self.types: dict = {}
        self.info: dict = {}                 # per-node facts for backends (view maps, axes, ...)
        self.effects: set = set()            # nodes that mutate an array in place
        self.runtime_index: set = set()      # getitem nodes indexed by runtime integers (numpy runs them)
        self.value_guards: dict = {}         # input index -> value the specialization assumed
        self.range_guards: dict = {}         # input index -> (lo, hi) a Python int must fit in
        self.length_guards: dict = {}        # input index -> length of a tuple of ints used as an index
        self.input_index = {n: i for i, n in enumerate(graph.inputs)}
        self.transposed_layout: dict = {}    # node -> whether numpy may lay it out in another order than C
        self.users: dict | None = None       # node -> nodes reading it, once a backend asks
        self.device = "cpu"                  # where the arrays live: "cpu" or "cuda" (astjit/devices)
        self.placement = None                # the devices.Placement, set by the runtime

    def type(self, node):
        return self.types[node]

    def release_arrays(self) -> None:
        """Forget the call's arrays once the specialization is made; keep its numbers and objects,
        compile-time values ``static_value`` may still look up (a 160 MB argument outlived the call)."""
        kept = {i for n, i in self.input_index.items() if isinstance(self.types.get(n), WeakScalar | Opaque | Static)}
        self.args = [a if i in kept else None for i, a in enumerate(self.args)]

    def static_value(self, node, what="this operand"):
        """The compile-time value of ``node``; Python scalars from live-ins become value guards."""
        t = self.types[node]
        if isinstance(t, Static):
            return t.value
        if isinstance(t, WeakScalar | Opaque):
            if node.op == "input":
                value = self.args[self.input_index[node]]
                self.value_guards[self.input_index[node]] = value
                self.types[node] = Static(value)
                return value
            op = OPS.get(node.op)
            if op is not None and op.fold:
                args = [self.static_value(a, what) for a in node.args]
                kwargs = {k: self.static_value(v, what) for k, v in node.kwargs.items()}
                value = op.impl(*args, **kwargs)
                self.types[node] = Static(value)
                return value
        raise Unsupported(f"{what} must be known when compiling, but it is a runtime {t}")

    def guard_int_range(self, node, dtype):
        """A Python int meeting an integer array must fit its dtype (numpy raises OverflowError)."""
        info = np.iinfo(dtype)
        if node.op != "input":
            value = self.static_value(node, "a Python int combined with an integer array")
            if not info.min <= value <= info.max:
                raise Unsupported(f"Python integer {value} out of bounds for {dtype}")
            return
        idx = self.input_index[node]
        lo, hi = self.range_guards.get(idx, (info.min, info.max))
        self.range_guards[idx] = (max(lo, info.min), min(hi, info.max))


def evaluate(node, rep):
    """Call the node's op implementation with ``rep(operand)`` for every operand, numpy errors quiet."""
    op = OPS[node.op]
    args = [rep(a) for a in node.args]
    kwargs = {k: rep(v) for k, v in node.kwargs.items()}
    with silenced():
        return op.impl(*args, **kwargs)


def type_of_result(value, shape=None):
    """Type a representative result; ``shape`` overrides the (tiny) representative's shape."""
    if isinstance(value, np.ndarray):
        return ArrayType(value.dtype, value.shape if shape is None else tuple(shape), False)
    if isinstance(value, np.generic):
        if shape:                     # a representative scalar standing for a real array
            return ArrayType(value.dtype, tuple(shape), False)
        return ArrayType(value.dtype, (), True)
    if type(value) in (bool, int, float, complex):
        return WeakScalar(type(value))
    return Static(value)


def infer(graph, args) -> InferContext:
    ctx = InferContext(graph, args)
    users = graph.users()
    outputs = {id(out) for _, out in graph.outputs}
    for k, (node, value) in enumerate(zip(graph.inputs, args)):
        if not users.get(node) and id(node) not in outputs:
            # read only by the block's Python (an object whose attributes it reads: frontend/blocks)
            ctx.types[node] = Opaque(f"{type(value).__name__} for the block's Python")
            continue
        if _is_int_tuple(value):
            ctx.types[node] = Opaque("tuple of ints")   # a runtime index, or guarded once used statically
            continue
        ctx.types[node] = input_type(node.value, value)
        if isinstance(ctx.types[node], Static):
            ctx.value_guards[k] = value                 # a specialization holds for this value only
    for node in graph.nodes:
        if node.op == "input":
            continue
        if node.op == "const":
            ctx.types[node] = Static(node.value)
            continue
        op = OPS[node.op]
        try:
            ctx.types[node] = infer_node(ctx, op, node)
        except Unsupported:
            raise
        except Exception as exc:  # numpy's own error for these types: the Python block will raise it
            raise RaisesAsPython(f"{type(exc).__name__}: {exc}") from None
    return ctx


def _is_int_tuple(value) -> bool:
    return type(value) is tuple and 0 < len(value) <= 32 and all(type(v) is int for v in value)


def infer_node(ctx, op, node):
    if op.kind not in ("view", "effect"):    # only indexing takes a tuple of ints as a runtime value
        for o in node.operands:
            if isinstance(ctx.types[o], Opaque) and o.op == "input":
                ctx.static_value(o)
    operand_types = [ctx.types[o] for o in node.operands]
    if op.fold and all(isinstance(t, Static) for t in operand_types):
        value = evaluate(node, lambda n: ctx.types[n].value)
        if not isinstance(value, np.ndarray):
            return Static(value)
    if op.infer is not None:
        return op.infer(ctx, node)
    return DEFAULT_RULES[op.kind](ctx, node)


def _rep(ctx):
    return lambda n: representative(ctx.types[n])


def infer_elementwise(ctx, node):
    """Broadcast the array operands; dtype and scalar-ness from numpy on 0-d representatives."""
    if "out" in node.kwargs:
        raise Unsupported(f"{node.op}(..., out=...) writes into an existing array; astjit leaves it to Python")
    shapes = []
    for o in node.operands:
        t = ctx.types[o]
        if isinstance(t, ArrayType):
            shapes.append(t.shape)
        elif not isinstance(t, WeakScalar | Static):
            raise Unsupported(f"operand of {node.op} has unsupported type {t}")
        elif isinstance(t, Static) and isinstance(t.value, tuple | list):
            # (numpy makes an array of it at each call; as a constant of a specialization, each call
            # compared its items and ran numpy's interpreter: a tuple of 8 floats 0.17x plain Python)
            what = f"{o.value!r}" if o.op == "input" else "a constant"
            raise Unsupported(f"{what} is a {type(t.value).__name__} used as an array operand of {node.op} "
                              "(numpy makes an array of it at each call)")
    result = evaluate(node, _rep(ctx))
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    t = type_of_result(result, shape if shape else None)
    if isinstance(t, ArrayType) and t.dtype.kind in "iu":
        for o in node.operands:
            if ctx.types[o] == WeakScalar(int):
                ctx.guard_int_range(o, t.dtype)
    return t


def infer_python(ctx, node):
    """Plain Python on runtime values (float(x), tuples): typed by running it on representatives."""
    result = type_of_result(evaluate(node, _rep(ctx)))
    if isinstance(result, Static):  # built from runtime values: only its kind is known here
        return Opaque(type(result.value).__name__)
    return result


def infer_static(ctx, node):
    """An op computing a static value (a gradient's shape helpers) of operands not all known when the
    block compiles: the block runs as Python, saying why."""
    raise Unsupported(f"{node.op} computes a value the kernel needs when it compiles, from operands known "
                      "only at run time")


DEFAULT_RULES = {
    "elementwise": infer_elementwise,
    "python": infer_python,
    "static": infer_static,
}
