"""Load TVM with the thread settings astjit needs, and pick the host target.

TVM's pool defaults to half the cores and, when smaller than the core count, pins the calling Python
thread to core 0; both variables must be set before the pool starts.
"""

import contextlib
import functools
import os
import sys


def set_thread_environment() -> None:
    """TVM's pool settings, applied before anything loads TVM's runtime (here or backends/tvm/loader)."""
    os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
    os.environ.setdefault("TVM_BIND_THREADS", "0")


@contextlib.contextmanager
def torch_kept_out():
    """TVM's FFI imports torch at its own import when it can (a workaround for a Windows symbol clash),
    2.8 s here, more than TVM itself; astjit passes numpy arrays only, so the import is kept from
    happening unless the program already imported torch."""
    blocked = "torch" not in sys.modules
    if blocked:
        sys.modules["torch"] = None          # makes ``import torch`` raise ImportError, which tvm_ffi skips
    try:
        yield
    finally:
        if blocked and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


@functools.cache
def tvm_module():
    set_thread_environment()
    with torch_kept_out():
        import tvm

    return tvm


@functools.cache
def host_target():
    """The host CPU as an LLVM target, with FMA contraction off so float results match numpy."""
    tvm = tvm_module()
    spec = {"kind": "llvm"}
    try:
        from tvm.target import detect_target

        detected = detect_target.detect_target_from_device("cpu")
        for field in ("mtriple", "mcpu"):
            value = detected.attrs.get(field) if hasattr(detected, "attrs") else None
            if value:
                spec[field] = str(value)
    except Exception:  # unknown CPU: generic x86-64 code is still correct
        pass
    spec["mattr"] = ["-fma"]
    return tvm.target.Target(spec)


def compile_module(mod, target, disabled_passes=(), tir_pipeline="default"):
    """``tvm.compile`` without TVM's common-subexpression pass: it hoists a division out of the
    ``if_then_else`` that guards it (``if_then_else(b == 0, 0, a % b)`` became ``t = a % b`` computed
    first), so an integer division by zero trapped and killed the process (SIGFPE). LLVM still merges
    common subexpressions, where that is safe. ``disabled_passes``: more passes to skip;
    ``tir_pipeline``: a TIR pipeline registered with TVM by name."""
    tvm = tvm_module()
    current = tvm.transform.PassContext.current()
    config = {**dict(current.config), "tirx.disable_cse_tir": True}
    disabled = list(current.disabled_pass) + list(disabled_passes)
    with tvm.transform.PassContext(opt_level=current.opt_level, config=config, disabled_pass=disabled):
        return tvm.compile(mod, target=target, tir_pipeline=tir_pipeline)
