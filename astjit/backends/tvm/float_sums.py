"""Which reductions add floats, and which arrays they read as they are: a module without TVM, for the
runtime's loading of cached kernels (backends/tvm/compiled)."""

import numpy as np

from ...graph.ops import OPS

BUFFER = 8192              # numpy's default ufunc buffer size, in elements


def misaligned_sensitive(ctx, segment) -> list:
    """The positions of the segment's inputs of more than BUFFER elements that a float sum reads as they
    are or through views: numpy adds a misaligned array's elements in buffers of BUFFER (its copy
    loop's), not pairwise over the whole, so the runtime gives such a call to numpy (an elementwise
    operand is a new, aligned array; an array of one buffer or less is added as an aligned one is)."""
    inside = set(segment.nodes)
    sources = set()
    for node in segment.nodes:
        if not is_float_sum(ctx, node):
            continue
        src = node.args[0]
        while src in inside and OPS[src.op].kind == "view":
            src = src.args[0]
        sources.add(src)
    return [k for k, n in enumerate(segment.inputs) if n in sources
            and np.prod(getattr(ctx.types[n], "shape", ()), dtype=np.int64) > BUFFER]


def is_float_sum(ctx, node) -> bool:
    """sum of floats, or mean, var, std (floats in any case): numpy adds floats."""
    name = node.op.removeprefix("np.")
    if OPS[node.op].kind != "reduction" or name not in ("sum", "mean", "var", "std"):
        return False
    return name != "sum" or np.dtype(ctx.types[node].dtype).kind == "f"
