"""TvmBackend: compile a segment into one CPU kernel and wrap it as a numpy-in, numpy-out callable.

Kernel arguments are declared with element alignment instead of TVM's default 64 bytes: numpy only
guarantees 16, and code that assumes 64 segfaults on ordinary arrays (tvm-notes section 1). Outputs are
allocated with ``np.empty`` (transparent huge pages on large arrays).
"""

import numpy as np

from ...errors import CompileFailed, Unsupported
from ..contract import Compiled, Persisted
from . import scalar_math as sm
from . import support
from .compiled import kernel_compiled
from .cuda import cuda_source
from .exact_sums import LOWERED_BLOCKS, exact_sums
from .lower import SegmentLowering, distinct_lets
from .runtime import compile_module, host_target, tvm_module
from .schedule import goes_parallel, schedule_cpu

tvm = tvm_module()
from tvm import tirx  # noqa: E402
from tvm.tirx.transform.common import BufferReplacer  # noqa: E402


def relax_alignment(func):
    """Re-declare every buffer parameter as element-aligned, so any numpy array may be passed."""
    mapping = {}
    for p in func.params:
        ty = getattr(p, "ty", None)
        if ty is None or not hasattr(ty, "data_alignment"):
            continue
        mapping[p] = tirx.decl_buffer(ty.shape, ty.dtype, p.name, None, ty.strides, ty.elem_offset,
                                      p.scope(), 1, 1)
    return BufferReplacer(mapping)(func) if mapping else func


class TvmBackend:
    name = "tvm"

    def __init__(self):
        self.target = host_target()
        self.compiled = 0

    def supports(self, ctx, node):
        return support.supports(ctx, node)

    def lower(self, ctx, segment, name="main"):
        signature = SegmentLowering(ctx, segment).lower(name)
        signature.te_func = signature.func                    # unscheduled, for other targets (CUDA)
        elements = max((int(np.prod(s)) for s, _, _ in signature.outputs), default=1)
        elements = max([elements] + [int(np.prod(ctx.types[n].shape)) for n in segment.inputs
                                     if hasattr(ctx.types[n], "shape")])
        math_ops = sum(1 for node in segment.nodes if sm.transcendental(node.op))
        vectorize = not any(support.wraps_integers(ctx, node) for node in segment.nodes)
        func, how = schedule_cpu(signature.func, elements, math_ops=math_ops, vectorize=vectorize)
        exact = exact_sums(func, goes_parallel(elements, math_ops), vectorize)
        if exact is not func:       # (blocks lowered, buffers compacted: the sums' stacks must stay whole)
            func, signature.disabled_passes = exact, LOWERED_BLOCKS
        # peeling a loop's tail copies its body: give the copies' Let variables their own names again
        signature.func = relax_alignment(distinct_lets(func)).with_attr("global_symbol", name)
        signature.schedule = how
        return signature

    def compile(self, ctx, segment) -> Compiled:
        try:
            signature = self.lower(ctx, segment)
            module = compile_module(tvm.IRModule({"main": signature.func}), self.target, signature.disabled_passes)
            kernel = module["main"]
        except Unsupported:
            raise
        except Exception as exc:
            raise CompileFailed(f"TVM could not compile this fragment ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
        self.compiled += 1
        from ... import config

        config.log("compiles", "kernel for %d nodes (%s)", len(segment.nodes), signature.schedule)
        compiled = kernel_compiled(ctx, segment, kernel, signature.inputs, signature.outputs,
                                   f"tvm kernel ({signature.schedule})")
        compiled.artifacts = {"tir": signature.func.script, "llvm": lambda: module.mod.inspect_source("ll"),
                              "cuda": lambda: cuda_source(signature.te_func)}
        compiled.persist = Persisted([module], {"input_kinds": list(signature.inputs),
                                                "allocs": [[list(shape), np.dtype(dtype).str]
                                                           for shape, dtype, _ in signature.outputs]})
        compiled.module = module                 # (the kernel lives as long as its module)
        return compiled
