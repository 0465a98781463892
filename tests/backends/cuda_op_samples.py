"""One small numpy expression per op of the registry that a backend could claim, shared by the CUDA
code-generation tests (no GPU) and the GPU execution tests: ``sample(op)`` is the expression over the
parameters ``x, y`` (float vectors), ``m`` (a float matrix), ``i, j`` (int32 vectors), ``b, c``
(booleans); ``sample_module`` writes them all as functions ``f<k>`` of one importable file."""

import importlib.util

import numpy as np

from astjit.graph.ops import OPS

CLAIMABLE = ("elementwise", "reduction", "view", "creation")
OPERATORS = {"add": "x + y", "subtract": "x - y", "multiply": "x * y", "true_divide": "x / y",
             "floor_divide": "x // y", "remainder": "x % y", "power": "x ** y", "negative": "-x",
             "positive": "+x", "abs": "abs(x)", "invert": "~i", "left_shift": "(i & 7) << 3", "np.left_shift": "np.left_shift(i & 7, 3)", "right_shift": "i >> 1",
             "bitwise_and": "i & j", "bitwise_or": "i | j", "bitwise_xor": "i ^ j", "equal": "x == y",
             "not_equal": "x != y", "less": "x < y", "less_equal": "x <= y", "greater": "x > y",
             "greater_equal": "x >= y", "astype": "x.astype(np.float32)", "clip": "x.clip(0.2, 0.7)",
             "copy": "x.copy() * 2.0", "np.clip": "np.clip(x, 0.2, 0.7)", "np.where": "np.where(b, x, y)",
             "np.copy": "np.copy(x) * 2.0",
             # reductions
             "sum": "m.sum(axis=1)", "prod": "x[:2].prod()", "mean": "m.mean(axis=0)", "max": "m.max(axis=1)",
             "min": "m.min()", "all": "b.all()", "any": "b.any()", "argmax": "x.argmax()", "argmin": "x.argmin()",
             "std": "m.std(axis=1)", "var": "m.var()", "np.sum": "np.sum(m, axis=1)", "np.prod": "np.prod(x[:2])",
             "np.mean": "np.mean(m)", "np.max": "np.max(m, axis=0)", "np.min": "np.min(x)", "np.all": "np.all(b)",
             "np.any": "np.any(b)", "np.argmax": "np.argmax(x)", "np.argmin": "np.argmin(x)",
             "np.std": "np.std(x)", "np.var": "np.var(m, axis=0)", "np.add.reduce": "np.add.reduce(m)",
             "np.multiply.reduce": "np.multiply.reduce(m[:2])", "np.maximum.reduce": "np.maximum.reduce(m)",
             "np.minimum.reduce": "np.minimum.reduce(m)",
             # views (used inside the kernel)
             "T": "(m.T * 2.0).max(axis=1)", "getitem": "x[1:-1] * 2.0", "np.expand_dims": "np.expand_dims(x, 0) * 2.0",
             "np.ravel": "np.ravel(m) * 2.0", "np.reshape": "np.reshape(x, (2, 4)) * 2.0",
             "np.squeeze": "np.squeeze(m[:1]) * 2.0", "np.transpose": "np.transpose(m).max(axis=0)",
             "ravel": "m.ravel() * 2.0", "reshape": "x.reshape(4, 2) * 2.0", "transpose": "(m.transpose() + 1.0).max(axis=1)",
             "np.broadcast_to": "np.broadcast_to(x, (3, 8)) * 2.0",
             # creations (a fill fused into the kernel)
             "np.empty": "np.empty(8) * 0.0 + x", "np.empty_like": "np.empty_like(x) * 0.0 + x",
             "np.full": "np.full(8, 2.5) + x", "np.full_like": "np.full_like(x, 2.5) + x",
             "np.ones": "np.ones(8) + x", "np.ones_like": "np.ones_like(x) + x", "np.zeros": "np.zeros(8) + x",
             "np.zeros_like": "np.zeros_like(x) + x"}
# ops the CPU backend has no lowering for (numpy runs them on the CPU; on a GPU their block runs as
# Python): when one gains a lowering, its CUDA code is checked here too
NOT_LOWERED = {"np.reciprocal", "np.signbit"}
# integer left shifts may wrap around, which TVM assumes never happens: numpy runs them on the CPU
# (backends/tvm/support.WRAPPING), and on a GPU, which has no numpy, their block runs as Python
WRAPPING_ON_GPU = {"left_shift", "np.left_shift"}
INTEGER_UFUNCS = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"}
LOGICAL_UFUNCS = {"logical_and", "logical_or", "logical_xor", "logical_not"}


def sample(op: str) -> str:
    if op in OPERATORS:
        return OPERATORS[op]
    name = op.removeprefix("np.")
    arity = getattr(np, name).nin
    args = {1: ("x",), 2: ("x", "y")}[arity]
    if name in INTEGER_UFUNCS:
        args = ("i", "j")[:arity]
    if name in LOGICAL_UFUNCS:
        args = ("b", "c")[:arity]
    return f"np.{name}({', '.join(args)})"


def claimable_ops():
    return sorted(op for op, spec in OPS.items() if spec.kind in CLAIMABLE)


def sample_module(folder):
    """(module, ops): a module with one function ``f<k>(x, y, m, i, j, b, c)`` per claimable op."""
    ops = claimable_ops()
    lines = ["import numpy as np", ""]
    for k, op in enumerate(ops):
        lines += [f"def f{k}(x, y, m, i, j, b, c):", f"    return {sample(op)}", ""]
    path = folder / "ops_samples.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("ops_samples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, ops


def sample_arguments(rng):
    """Host arguments for the sample functions, in parameter order."""
    x, y = rng.random(8) + 0.1, rng.random(8) + 0.1
    return (x, y, rng.random((3, 4)), np.arange(8, dtype=np.int32), np.arange(8, dtype=np.int32)[::-1].copy(),
            x > 0.5, y > 0.5)
