"""The code TVM generated for a specialization: TIR, LLVM IR, or CUDA C (compiled without a GPU)."""

CODE_KINDS = ("tir", "llvm", "cuda")


def kernel_code(segment, kind: str) -> str:
    if kind not in CODE_KINDS:
        raise ValueError(f"code kind must be one of {', '.join(CODE_KINDS)}, not {kind!r}")
    if getattr(segment, "prim_func", None) is None and hasattr(segment, "rebuild"):
        segment.rebuild()                # a kernel loaded from the disk cache: lower it again to show it
    if kind == "tir":
        return segment.prim_func.script()
    if kind == "llvm":
        return segment.module.mod.inspect_source("ll")
    return cuda_source(segment.te_func)


def cuda_source(te_func, arch: str = "sm_90") -> str:
    """CUDA C for the fragment's kernel, scheduled with dlight; no GPU or nvcc is needed to see it."""
    from ..backends.tvm.runtime import compile_module, tvm_module

    tvm = tvm_module()
    from tvm.s_tir import dlight as dl

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    mod = tvm.IRModule({"main": te_func.with_attr("global_symbol", "main")})
    with target:
        mod = dl.ApplyDefaultSchedule(dl.gpu.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback())(mod)
    executable = compile_module(mod, target)
    imports = executable.mod.imports
    if not imports:
        raise RuntimeError("TVM produced no device module for this kernel")
    return imports[0].inspect_source()
