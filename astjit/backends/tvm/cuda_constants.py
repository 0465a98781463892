"""Float constants and bit reinterpretations that CUDA C prints exactly.

TVM's CUDA code generator prints a float64 constant with 15 digits after the point (``1e-20``
becomes ``0.000000000000000``, ``0.1 + 0.2`` becomes ``0.300000000000000``), and prints a
reinterpretation as ``*(int *)(&(x))``, which C++ rejects when ``x`` is a constant (the lowering
shields float constants from TVM's simplifier that way). The last device pass of the CUDA pipeline
(``PIPELINE``, registered with TVM on first use) rewrites both into CUDA's bit-cast intrinsics:
a float64 constant becomes ``__longlong_as_double(<its bits>)``, a scalar reinterpretation between
float and integer of one width ``__float_as_int`` and the like. Nothing runs after it but code
generation, so no simplifier folds them back.
"""

import functools
import struct

PIPELINE = "astjit-cuda"
BIT_CASTS = {("float32", "int32"): "__float_as_int", ("int32", "float32"): "__int_as_float",
             ("float64", "int64"): "__double_as_longlong", ("int64", "float64"): "__longlong_as_double",
             ("float16", "int16"): "__half_as_short", ("int16", "float16"): "__short_as_half"}


def float64_bits(value: float) -> int:
    return struct.unpack("<q", struct.pack("<d", value))[0]


def exact_expression(expr):
    """``expr`` with float64 constants and scalar reinterpretations in bit-cast form."""
    import tvm_ffi
    from tvm import ir, tirx

    def constant(e):
        if str(e.ty) != "float64":
            return e
        return tirx.call_pure_extern("float64", "__longlong_as_double", tirx.const(float64_bits(e.value), "int64"))

    def call(c):
        if not isinstance(c.op, ir.Op) or c.op.name != "tirx.reinterpret" or len(c.args) != 1:
            return c
        name = BIT_CASTS.get((str(c.args[0].ty), str(c.ty)))
        return c if name is None else tirx.call_pure_extern(str(c.ty), name, c.args[0])

    return tvm_ffi.structural_map(expr, [(tirx.FloatImm, constant), (ir.Call, call)])


@functools.cache
def register() -> str:
    """Register the CUDA pipeline (TVM's default, then the exact-constant pass on device code) and
    return its name, for ``tvm.compile(..., tir_pipeline=...)``."""
    import tvm
    from tvm import tirx

    @tirx.transform.prim_func_pass(opt_level=0, name="astjit.ExactCudaConstants")
    def exact_constants(func, _mod, _ctx):
        return exact_expression(func)

    def factory(**kwargs):
        pipeline, finalize_host, finalize_device = tirx.get_tir_pipeline("default", **kwargs)
        return pipeline, finalize_host, lambda: tvm.ir.transform.Sequential([finalize_device(), exact_constants])

    tirx.compilation_pipeline.register_tir_pipeline(PIPELINE, factory)
    return PIPELINE
