"""The order numpy adds a float reduction's elements in (sum, mean, var, std), so a kernel can add them
in the same order and give numpy's bits.

numpy reduces the array its operand is (an elementwise operand: the temporary it makes, laid out as its
inputs, C order for a kernel's C-contiguous inputs) in memory order, axes of extent 1 left out. Where
the reduced axes are the last ones, each result is one pairwise sum over its elements in C order
(module pairwise; in buffers of 8192 where they are cast: the float64 mean of ints). Where the last
axis is kept, each result adds its elements one after another, a row of the input to a row of sums.
Other layouts (a strided or transposed view, a reduction over the last axis and an earlier kept one
between reduced ones) get another order, which kernels leave to numpy.
"""

import numpy as np

from ...graph.ops import OPS

PAIRWISE = "pairwise"        # each result numpy's pairwise sum of its elements in C order
IN_ORDER = "in order"        # each result its elements added one after another in C order


class OtherOrder(Exception):
    """numpy adds this reduction's elements in an order a kernel does not reproduce (the reason)."""


def summation_order(ctx, node) -> str:
    """PAIRWISE or IN_ORDER for a float add-reduction ``node``; raises OtherOrder where neither is
    numpy's order."""
    from .support import _strides_in_memory, _transposed_layout

    src = node.args[0]
    shape = tuple(ctx.types[src].shape)
    axes = ctx.info[node]["axes"]
    if len([d for d in shape if d != 1]) >= 2:
        if "strides" in (ctx.info.get(src) or {}):
            strides = _strides_in_memory(ctx, src)
            dense = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
            if strides is None or any(s != c for s, c, d in zip(strides, dense, shape) if d != 1):
                raise OtherOrder("numpy adds the elements of a strided or transposed view in its memory "
                                 "order")
        elif _transposed_layout(ctx, src):
            raise OtherOrder("numpy adds the elements in the memory order of a transposed operand")
    wide = [d for d in range(len(shape)) if shape[d] != 1]       # the axes numpy iterates over
    reduced = [d for d in wide if d in axes]
    if not reduced or wide[-1] not in reduced:
        return IN_ORDER
    if wide[len(wide) - len(reduced):] != reduced:
        raise OtherOrder("numpy adds runs of the last axis pairwise and the runs in order, which a "
                         "kernel does not reproduce for these axes")
    return PAIRWISE


def is_float_sum(ctx, node) -> bool:
    """sum of floats, or mean, var, std (floats in any case): numpy adds floats."""
    name = node.op.removeprefix("np.")
    if OPS[node.op].kind != "reduction" or name not in ("sum", "mean", "var", "std"):
        return False
    return name != "sum" or np.dtype(ctx.types[node].dtype).kind == "f"
