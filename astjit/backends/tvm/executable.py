"""A compiled kernel as a numpy-in, numpy-out callable. No TVM import: a kernel loaded from the disk
cache runs through here without the compiler."""

from dataclasses import dataclass

import numpy as np


@dataclass
class KernelSignature:
    func: object                       # the PrimFunc (None for a kernel loaded from the disk cache)
    inputs: list                       # "array", "item" or "scalar" per segment input
    outputs: list                      # (shape as allocated, dtype, node type) per segment output
    schedule: str = ""                 # how the CPU schedule laid the kernel out, in words
    te_func: object = None             # the unscheduled function (other targets schedule it their way)
    gpu_func: object = None            # the function as scheduled for CUDA


def output_suffix(t) -> str:
    """How a kernel's output buffer ``o`` becomes the value numpy would have produced: ``o[0]`` for a
    numpy scalar (kernels write those into a (1,) buffer), ``o.reshape(())`` for a 0-d array."""
    if t.scalar:
        return "[0]"
    if t.shape == ():
        return ".reshape(())"
    return ""


_CONVERT = {"[0]": lambda o: o[0], ".reshape(())": lambda o: o.reshape(()), "": None}


def make_executable(kernel, input_kinds, out_specs, on_numpy):
    """A callable taking the segment's input values and returning its output values (the plan's path).

    Kernels take C-contiguous arrays. A strided 1-D or read-only input is copied; a multi-dimensional
    input in another memory order (Fortran, transposed) runs the segment on numpy (``on_numpy``), whose
    results follow the inputs' memory order as numpy's own do."""
    allocs = [(shape, dtype) for shape, dtype, _ in out_specs]
    posts = [_CONVERT[output_suffix(t)] for _, _, t in out_specs]
    needs_conversion = any(k == "item" for k in input_kinds)

    def run(*inputs):
        args = [v.item() if k == "item" else v for k, v in zip(input_kinds, inputs)] if needs_conversion \
            else inputs
        outs = [np.empty(s, d) for s, d in allocs]
        try:
            kernel(*args, *outs)
        except (ValueError, BufferError, TypeError, RuntimeError):
            arrays = [v for k, v in zip(input_kinds, args) if k == "array"]
            if any(v.ndim > 1 and not v.flags.c_contiguous for v in arrays) or all(
                    v.flags.c_contiguous and v.flags.writeable for v in arrays):
                return on_numpy(*inputs)   # another memory order, or a scalar the kernel cannot take
            # strided 1-D or read-only arrays cannot cross DLPack as-is: pass C-contiguous copies
            args = [np.array(v, order="C", copy=True) if k == "array" else v for k, v in zip(input_kinds, args)]
            try:
                kernel(*args, *outs)
            except (ValueError, BufferError, TypeError, RuntimeError):
                return on_numpy(*inputs)       # a scalar the kernel cannot take (a uint64 above 2**63)
        return tuple(o if p is None else p(o) for o, p in zip(outs, posts))

    return run
