"""A compiled kernel as a numpy-in, numpy-out callable. No TVM import: a kernel loaded from the disk
cache runs through here without the compiler."""

from dataclasses import dataclass

import numpy as np

from ..array_views import readable_by_kernel


@dataclass
class KernelSignature:
    func: object                       # the PrimFunc (None for a kernel loaded from the disk cache)
    inputs: list                       # "array", "item" or "scalar" per segment input
    outputs: list                      # (shape as allocated, dtype, node type) per segment output
    schedule: str = ""                 # how the CPU schedule laid the kernel out, in words
    te_func: object = None             # the unscheduled function (other targets schedule it their way)
    gpu_func: object = None            # the function as scheduled for CUDA
    disabled_passes: tuple = ()        # TVM passes its compile skips (exact_sums ran them already)


def output_suffix(t) -> str:
    """How a kernel's output buffer ``o`` becomes the value numpy would have produced: ``o[0]`` for a
    numpy scalar (kernels write those into a (1,) buffer), ``o.reshape(())`` for a 0-d array."""
    if t.scalar:
        return "[0]"
    if t.shape == ():
        return ".reshape(())"
    return ""


_CONVERT = {"[0]": lambda o: o[0], ".reshape(())": lambda o: o.reshape(()), "": None}


def _passable(a: np.ndarray) -> np.ndarray:
    if not (a.flags.c_contiguous and a.flags.aligned):
        return np.array(a, order="C", copy=True)
    return a if a.flags.writeable else readable_by_kernel(a)


def make_executable(kernel, input_kinds, out_specs, on_numpy, aligned=()):
    """A callable taking the segment's input values and returning its output values (the plan's path).

    Kernels take C-contiguous arrays. A strided 1-D or unaligned input is copied, a read-only one passes as a
    read-only DLPack tensor (a copy of every input on each call made a block on read-only
    1000x1000 arrays 13x slower than its numpy); a multi-dimensional
    input in another memory order (Fortran, transposed) runs the segment on numpy (``on_numpy``), whose
    results follow the inputs' memory order as numpy's own do. A misaligned array at the ``aligned``
    positions (one a float sum reads: backends/tvm/float_sums.misaligned_sensitive) runs it on numpy too."""
    allocs = [(shape, dtype) for shape, dtype, _ in out_specs]
    posts = [_CONVERT[output_suffix(t)] for _, _, t in out_specs]
    needs_conversion = any(k == "item" for k in input_kinds)
    # set once an input needed converting: later calls convert first, since the kernel's refusal of a
    # read-only array (an exception) cost 5 us a call, more than a small block's numpy
    converting = [False]

    def run(*inputs):
        if aligned and not all(inputs[p].flags.aligned for p in aligned):
            return on_numpy(*inputs)
        args = [v.item() if k == "item" else v for k, v in zip(input_kinds, inputs)] if needs_conversion \
            else inputs
        outs = [np.empty(s, d) for s, d in allocs]
        # (numpy's path runs outside the except clauses: an exception it raises is the user's alone,
        # not chained to the kernel's refusal)
        if not converting[0] or all(v.flags.c_contiguous and v.flags.writeable and v.flags.aligned
                                    for k, v in zip(input_kinds, args) if k == "array"):
            try:
                kernel(*args, *outs)
            except (ValueError, BufferError, TypeError, RuntimeError):
                pass
            else:
                return tuple(o if p is None else p(o) for o, p in zip(outs, posts))
        arrays = [v for k, v in zip(input_kinds, args) if k == "array"]
        if any(v.ndim > 1 and not v.flags.c_contiguous for v in arrays) or all(
                v.flags.c_contiguous and v.flags.writeable for v in arrays):
            return on_numpy(*inputs)   # another memory order, or a scalar the kernel cannot take
        # read-only arrays cannot cross plain DLPack: as read-only tensors (the kernel only reads
        # inputs); strided 1-D or unaligned arrays: C-contiguous copies
        args = [_passable(v) if k == "array" else v for k, v in zip(input_kinds, args)]
        try:
            kernel(*args, *outs)
        except (ValueError, BufferError, TypeError, RuntimeError):
            outs = None
        if outs is None:
            return on_numpy(*inputs)       # a scalar the kernel cannot take (a uint64 above 2**63)
        converting[0] = True
        return tuple(o if p is None else p(o) for o, p in zip(outs, posts))

    return run
