"""Load TVM with the thread settings astjit needs, and pick the host target.

TVM's pool defaults to half the cores and, when smaller than the core count, pins the calling Python
thread to core 0; both variables must be set before the pool starts.
"""

import contextlib
import functools
import gc
import importlib.abc
import importlib.util
import os
import sys
import time

from ... import config

# ``import tvm`` leaves about 76,000 objects Python's garbage collector tracks (the compiler's Python
# side), and every full collection walks them: 85 ms a collection against 5 ms before, and a plain
# loop building 300,000 dicts ran at 0.55-0.70x its speed after a process's first compile. With
# ASTJIT_GC_FREEZE=1 they are frozen (``gc.freeze``: left out of every later collection) after a
# collection, with whatever else is alive at that moment: an object of the program's that becomes
# cyclic garbage later is then never collected (a 400 MB array in a self-referencing object stayed in
# memory, its finalizer never ran), which is why it is not the default


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


@contextlib.contextmanager
def exec_path_without_catch_warnings():
    """TVM's ``tvm.support.cc`` looks for a C compiler at its import through ``os.get_exec_path``,
    which enters ``warnings.catch_warnings``: that bumps the warnings filters' version, and every
    warning the user's program had shown once (the ``default`` action, once per place) showed again
    after the first compile. The same search over a str ``PATH`` without it, while TVM imports."""
    def get_exec_path(env=None):
        path = (os.environ if env is None else env).get("PATH")
        return (path if isinstance(path, str) else os.defpath).split(os.pathsep)

    real = os.get_exec_path
    os.get_exec_path = get_exec_path
    try:
        yield
    finally:
        os.get_exec_path = real


@functools.cache
def c_compiler():
    """The C compiler TVM's ``create_shared`` would pick (``CXX``, ``CC``, else the first of its names
    on ``PATH``), found with ``shutil.which``: handed to ``export_library`` so that TVM does not search
    through ``os.get_exec_path`` at each kernel written (exec_path_without_catch_warnings)."""
    import shutil

    found = os.environ.get("CXX") or os.environ.get("CC")
    for name in ("g++", "gcc", "clang++", "clang", "c++", "cc"):
        found = found or shutil.which(name)
    return found


def export_library(module, path, **options) -> None:
    """``module.export_library(path)`` with the compiler named (c_compiler)."""
    if c_compiler() is not None:
        options["cc"] = c_compiler()
    module.export_library(path, **options)


# Parts of TVM that ``import tvm`` executes and astjit never uses: Relax (its graph-level compiler,
# 0.35 s) and Disco (its distributed runtime, 0.27 s). They are loaded lazily (importlib's LazyLoader:
# the module exists, its code runs at the first attribute read), which took ``import tvm`` from
# 1.6-1.9 s to 1.1-1.2 s on a loaded machine; compile_module builds TIR without asking whether a
# module holds Relax functions (``tvm.compile`` does, which would load Relax).
LAZY_PARTS = ("tvm.relax", "tvm.runtime.disco")


class _LazyParts(importlib.abc.MetaPathFinder):
    """Finds LAZY_PARTS as the other finders do, with a loader that runs their code at first use."""

    def find_spec(self, name, path, target=None):
        if name not in LAZY_PARTS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = importlib.util.LazyLoader(spec.loader)
                return spec
        return None


@contextlib.contextmanager
def lazy_parts():
    """While TVM imports: LAZY_PARTS load lazily (unless the program imported them already)."""
    finder = _LazyParts()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)


@functools.cache
def tvm_module():
    from . import IMPORT_SECONDS

    started = time.perf_counter()
    set_thread_environment()
    with torch_kept_out(), lazy_parts(), exec_path_without_catch_warnings():
        import tvm
        import tvm.support.cc  # noqa: F401  (its compiler search at import, here without catch_warnings)

    if config.gc_freeze():
        gc.collect()
        gc.freeze()
    IMPORT_SECONDS[0] += time.perf_counter() - started
    return tvm


@functools.cache
def host_target():
    """The host CPU as an LLVM target, with FMA contraction off so float results match numpy."""
    return _host_target(without_fma=True)


@functools.cache
def host_target_with_every_feature():
    """The host CPU with all its features: for a kernel with no float product beside a float sum,
    where a fused multiply-add cannot form (compile_module)."""
    return _host_target(without_fma=False)


def _host_target(without_fma):
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
    if without_fma:
        spec["mattr"] = ["-fma"]
    return tvm.target.Target(spec)


def may_fuse_multiply_add(mod) -> bool:
    """Whether LLVM could form a fused multiply-add (one rounding where numpy rounds twice) in a
    function of ``mod``. LLVM makes products of more than float ``*``: a division by a power of two
    (``x / 2.0`` is ``x * 0.5``; ``x.mean(axis=1)`` of two columns), ``pow(x, 2.0)`` and ``x + x``
    (``x * 2.0``). So a kernel may fuse where it has a float product or quotient and a float sum or
    difference, two float sums or differences, or a call TVM may expand into arithmetic (any but
    the ones in SINGLE_OPERATIONS, which become one instruction or a call)."""
    import tvm.ir
    from tvm import tirx
    from tvm_ffi.structural import structural_visit

    counts = {"product": 0, "sum": 0, "expanded": 0}

    def arithmetic(kind):
        def visit(node, visitor):
            if "float" in str(node.ty):
                counts[kind] += 1
            return visitor.default_visit(node)
        return visit

    def call(node, visitor):
        name = str(node.op.name).rsplit(".", 1)[-1] if hasattr(node.op, "name") else ""
        if name not in SINGLE_OPERATIONS:
            counts["expanded"] += 1
        elif name in ("call_pure_extern", "call_extern") and str(node.args[0]).strip('"').startswith("pow"):
            counts["product"] += 1
        return visitor.default_visit(node)

    visits = [(tirx.Mul, arithmetic("product")), (tirx.Div, arithmetic("product")), (tirx.Add, arithmetic("sum")),
              (tirx.Sub, arithmetic("sum")), (tvm.ir.Call, call)]
    for func in mod.functions.values():
        if isinstance(func, tirx.PrimFunc):
            structural_visit(func.body, visits)
    return counts["expanded"] > 0 or counts["sum"] >= 2 or counts["sum"] >= 1 and counts["product"] >= 1


# calls that LLVM keeps as one instruction or a call of the C library (no multiply-add to fuse)
SINGLE_OPERATIONS = frozenset((
    "reinterpret", "isnan", "isinf", "isfinite", "fabs", "nearbyint", "round", "floor", "ceil", "trunc",
    "sqrt", "copysign", "if_then_else", "likely", "call_pure_extern", "call_extern", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right", "popcount", "clz", "ret",
    "tvm_access_ptr", "address_of", "tvm_struct_get", "tvm_struct_set", "tvm_stack_alloca",
    "tvm_stack_make_shape", "tvm_stack_make_array", "tvm_call_packed", "tvm_call_packed_lowered",
    "tvm_check_return", "lookup_param", "isnullptr", "handle_add_byte_offset", "type_annotation",
    "tvm_thread_invariant", "assume", "undef",
))


def compile_module(mod, target, disabled_passes=(), tir_pipeline="default"):
    """``tvm.compile`` without TVM's common-subexpression pass: it hoists a division out of the
    ``if_then_else`` that guards it (``if_then_else(b == 0, 0, a % b)`` became ``t = a % b`` computed
    first), so an integer division by zero trapped and killed the process (SIGFPE). LLVM still merges
    common subexpressions, where that is safe. ``disabled_passes``: more passes to skip;
    ``tir_pipeline``: a TIR pipeline registered with TVM by name."""
    tvm = tvm_module()
    # the host target leaves out FMA so that ``a * b + c`` rounds twice, as numpy's does; in LLVM,
    # AVX-512 requires FMA, so a kernel where no product can fuse with a sum gets every feature:
    # ``out[i] = round(x[i])`` converts four float64 to int64 in one instruction, where without
    # AVX-512 each is converted alone (0.55 -> 0.2 ns an element)
    if target is host_target() and not may_fuse_multiply_add(mod):
        target = host_target_with_every_feature()
    current = tvm.transform.PassContext.current()
    config = {**dict(current.config), "tirx.disable_cse_tir": True}
    disabled = list(current.disabled_pass) + list(disabled_passes)
    with tvm.transform.PassContext(opt_level=current.opt_level, config=config, disabled_pass=disabled):
        # (tvm.compile, less its test for Relax functions: astjit's modules hold TIR only)
        return tvm.runtime.Executable(tvm.tirx.build(mod, target, pipeline=tir_pipeline))
