"""How much work TVM's passes do on an expression: its size with every Let variable replaced by its value.

TVM's arithmetic analyzer substitutes each Let-bound variable by its (simplified) value, and its
rewriters walk the result without memoizing shared subexpressions, so a pass costs the size of the
fully substituted tree, not of the expression as written. The vectorizable float64 ``exp`` and ``log``
(scalar_math) bind a dozen intermediate values each, read several times; one alone substitutes to a few
thousand nodes, but ``log(exp(x))`` substitutes to about 400,000, which took TVM 10 s to compile (a
float64 softmax cross-entropy 100 s). The lowering (lower.SegmentLowering) measures each elementwise
value with ``substituted_size`` and, above ``STAGE_ABOVE``, computes its operands in stages of their own
(a buffer read is one node), so compile time grows with the number of ops, not exponentially. A
value that fuses more than ``FUSED_OPS_AT_MOST`` elementwise ops (a long sum such as ``a + b + c + ...``)
is staged the same way: compile time then grows linearly with the length of the chain.
"""

from .runtime import tvm_module

tvm = tvm_module()
from tvm import tirx  # noqa: E402

STAGE_ABOVE = 20_000    # substituted nodes: about 0.5 s of TVM passes (log(exp(x)) float64: 412k, 10 s)
# elementwise ops one expression fuses: each op's value repeats the Lets of the ops before it
# (scalar_math.apply_once), so building a chain of n ops costs n^2 / 2 in Python: a sum of 1000 terms
# compiled in 1.8 s in stages of 64 ops, 0.9 s in stages of 32 (one more pass over memory each)
FUSED_OPS_AT_MOST = 32

_CHILDREN = ("a", "b", "condition", "true_value", "false_value", "value", "base", "stride")
_SEQUENCES = ("args", "indices")


def _children(e):
    out = []
    for name in _CHILDREN:
        v = getattr(e, name, None)
        if isinstance(v, tvm.ir.expr.Expr):
            out.append(v)
    for name in _SEQUENCES:
        for v in getattr(e, name, None) or ():
            if isinstance(v, tvm.ir.expr.Expr):
                out.append(v)
    return out


def _load_size(e, inlined) -> int:
    """The size an inlined stage adds at a load of it (a ``te.tensor_load`` call), else 0."""
    if not inlined or not isinstance(e, tvm.ir.expr.Call) or getattr(e.op, "name", None) != "te.tensor_load":
        return 0
    return inlined.get(e.args[0].op.name, 0)


class SizeMemo:
    """Sizes already counted, for expressions that share parts: the lowering sizes every value of a
    chain, and each value holds the one before it, so with one memo each node is counted once (the
    nodes are kept alive with their sizes: a handle is only unique while its object lives)."""

    def __init__(self):
        self.sizes: dict = {}
        self.bound: dict = {}


def substituted_size(expr, limit: int = 1 << 40, inlined=None, memo: SizeMemo | None = None) -> int:
    """The node count of ``expr`` with Let variables substituted, counting each distinct node once per
    path (as TVM's rewriters visit it); stops counting past ``limit``. Linear in the distinct nodes.
    ``inlined``: the size of each stage (by name) that the schedule will inline, counted for each load
    of it. ``memo``: sizes kept from earlier calls with the same ``limit`` and ``inlined``."""
    memo = memo or SizeMemo()
    sizes, bound = memo.sizes, memo.bound
    inlined = inlined or {}

    def size(e) -> int:
        if not hasattr(e, "__chandle__"):        # a te TensorSlice: the load it stands for
            e = e.asobject()
        key = e.__chandle__()
        known = sizes.get(key)
        if known is not None:
            return known[1]
        if isinstance(e, tirx.Let):
            bound[e.var.__chandle__()] = size(e.value)
            s = size(e.body)
        elif isinstance(e, tirx.Var):
            s = bound.get(key, 1)
        else:
            s = 1 + _load_size(e, inlined)
            for child in _children(e):
                s += size(child)
                if s > limit:
                    break
        sizes[key] = (e, s)
        return s

    try:
        return size(expr)
    except RecursionError:       # thousands of nested ops: as costly as it gets
        return limit
