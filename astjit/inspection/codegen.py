"""The code a backend generated for a segment: whatever artifacts its Compiled declares (TVM's: TIR,
LLVM IR, CUDA C, the last generated without a GPU)."""

CODE_KINDS = ("tir", "llvm", "cuda")


def kernel_code(segment, kind: str) -> str:
    artifacts = segment.compiled.artifacts if segment.compiled is not None else {}
    if kind not in artifacts:
        have = ", ".join(sorted(artifacts)) or "none"
        raise ValueError(f"the {segment.backend} backend shows no {kind!r} code for this segment "
                         f"(it shows: {have})")
    return artifacts[kind]()
