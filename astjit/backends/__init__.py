"""Backends run the subgraphs of a specialized Fragment: a public contract (``Backend``, ``Compiled``),
an ordered list per device, and registration. Built in: ``tvm`` (CPU kernels through LLVM),
``tvm-cuda`` (CUDA kernels, where a GPU and DLPack arrays on it are at hand) and ``numpy`` (the
reference: every op, exactly as numpy runs it)."""

from .contract import Backend, Compiled, DirectCall, Persisted, Segment
from .registry import DEVICES, by_name, register, registered, unregister

__all__ = ["Backend", "Compiled", "DirectCall", "Persisted", "Segment", "DEVICES", "register", "unregister",
           "registered", "by_name"]
