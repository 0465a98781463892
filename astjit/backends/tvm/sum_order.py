"""The order numpy adds a float reduction's elements in (sum, mean, var, std), so a kernel can add them
in the same order and give numpy's bits.

numpy reduces the array its operand is (an elementwise operand: the temporary it makes, laid out as its
inputs, C order for a kernel's C-contiguous inputs) in memory order, axes of extent 1 left out. Where
the reduced axes are the last ones, each result is one pairwise sum over its elements in C order
(module pairwise; in buffers of 8192 where they are cast: the float64 mean of ints); where earlier
axes are reduced too, numpy sums the runs of the last ones so and adds those sums in order. Where the
last axis is kept, each result adds its elements one after another, a row of the input to a row of
sums. Views are reduced in their logical order, as numpy does, reversed or strided, except where
numpy's order follows another layout: a transposed view or operand (memory order), a strided view
reduced over several axes (buffers of its own): kernels leave those to numpy.
"""

import numpy as np

from .float_sums import BUFFER

PAIRWISE = "pairwise"        # each result numpy's pairwise sum of its elements in C order
IN_ORDER = "in order"        # each result its elements added one after another in C order


class OtherOrder(Exception):
    """numpy adds this reduction's elements in an order a kernel does not reproduce (the reason)."""


def summation_order(ctx, node) -> tuple:
    """(PAIRWISE, run) or (IN_ORDER, 0) for a float add-reduction ``node``: with PAIRWISE, numpy adds
    the last ``run`` reduced axes (a run of C order) pairwise and, where there are reduced axes before
    them (``axis=(0, 2)`` of 3-d), those runs' sums one after another. Raises OtherOrder where neither
    is numpy's order."""
    from .support import _strides_in_memory, _transposed_layout

    src = node.args[0]
    shape = tuple(ctx.types[src].shape)
    axes = ctx.info[node]["axes"]
    wide = [d for d in range(len(shape)) if shape[d] != 1]       # the axes numpy iterates over
    strides = None
    if len(wide) >= 2:
        if "strides" in (ctx.info.get(src) or {}):
            strides = _strides_in_memory(ctx, src)
            steps = [abs(strides[d]) for d in wide] if strides is not None else None
            if steps is None or any(x <= y for x, y in zip(steps, steps[1:])):
                raise OtherOrder("numpy adds the elements of a transposed view in its memory order")
        elif _transposed_layout(ctx, src):
            raise OtherOrder("numpy adds the elements in the memory order of a transposed operand")
    reduced = [d for d in wide if d in axes]
    if not reduced or wide[-1] not in reduced:
        return IN_ORDER, 0
    start = len(wide)
    while start and wide[start - 1] in reduced:
        start -= 1
    outer = [a for a in axes if a < wide[start]]              # reduced axes before the run
    run = len(axes) if all(shape[a] == 1 for a in outer) else len(axes) - len(outer)
    if strides is not None and not _dense(strides, shape, wide) and (len(wide) - start > 1 or run < len(axes)
                                                                       or start == 0):
        raise OtherOrder("numpy adds the elements of a strided view reduced over several axes in buffers "
                         "of its own")
    run_length = int(np.prod([shape[a] for a in axes[len(axes) - run:]], dtype=np.int64))
    if run < len(axes) and np.dtype(ctx.types[node].dtype) != ctx.types[src].dtype and run_length > BUFFER:
        raise OtherOrder("numpy adds runs of the last axes longer than its buffers, cast to the sum's type, "
                         "in an order a kernel does not reproduce")
    return PAIRWISE, run


def _dense(strides, shape, wide) -> bool:
    """Whether a view's wide axes are laid out as a C-contiguous array's (in elements)."""
    step = 1
    for d in reversed(wide):
        if strides[d] != step:
            return False
        step *= shape[d]
    return True
