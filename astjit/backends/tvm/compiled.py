"""The Compiled of a CPU kernel, made after a compile or from a library the disk cache holds. Nothing
here imports TVM's compiler: a loaded kernel runs through TVM's runtime library alone."""

import functools

import numpy as np

from ..contract import Compiled, DirectCall
from ..numpy_backend import NumpyBackend
from . import cuda
from .executable import make_executable, output_suffix
from .float_sums import misaligned_sensitive


def kernel_compiled(ctx, segment, kernel, input_kinds, outputs, description) -> Compiled:
    """The Compiled of a CPU kernel: numpy in, numpy out, with the direct calling convention."""
    aligned = [k for k in misaligned_sensitive(ctx, segment) if input_kinds[k] == "array"]
    run = make_executable(kernel, input_kinds, outputs, NumpyBackend().runner(ctx, segment), aligned)
    direct = DirectCall(kernel, list(input_kinds), [(shape, dtype) for shape, dtype, _ in outputs],
                        [output_suffix(t) for _, _, t in outputs], aligned)
    return Compiled(run, description, direct=direct)


def load_compiled(ctx, segment, meta, libraries) -> Compiled:
    """A kernel the disk cache holds, loaded without TVM's compiler; its TIR and LLVM IR are made again
    on demand (lowering the segment once more)."""
    from .loader import load_kernel

    module, kernel = load_kernel(libraries[0])
    outputs = [(tuple(shape), np.dtype(dtype), ctx.types[n])
               for (shape, dtype), n in zip(meta["allocs"], segment.outputs)]
    compiled = kernel_compiled(ctx, segment, kernel, list(meta["input_kinds"]), outputs, segment.description)
    compiled.module = module

    @functools.cache
    def relowered():
        from . import get_backend
        from .runtime import compile_module, tvm_module

        backend = get_backend()
        signature = backend.lower(ctx, segment)
        return signature, compile_module(tvm_module().IRModule({"main": signature.func}), backend.target,
                                         signature.disabled_passes)

    compiled.artifacts = {"tir": lambda: relowered()[0].func.script(),
                          "llvm": lambda: relowered()[1].mod.inspect_source("ll"),
                          "cuda": lambda: cuda.cuda_source(relowered()[0].te_func)}
    return compiled
