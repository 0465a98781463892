"""The CuPy backend: on a CUDA GPU whose arrays are CuPy's, each node runs through the same reference
implementation the numpy backend calls, and numpy's functions hand CuPy arrays to CuPy
(``__array_function__``, ``__array_ufunc__``): matmul and dot run in cuBLAS, argmax and the rest in
CuPy's own kernels. It is asked after tvm-cuda, so a block mixing fusable elementwise work with a
matmul becomes fused TVM kernels around a cuBLAS call instead of running as Python. torch tensors have
no such protocol (numpy's functions would copy them to the host): their blocks need tvm-cuda for
every node.
"""

import importlib.util

from .contract import Backend, Compiled
from .numpy_backend import NumpyBackend


class CupyBackend(Backend):
    name = "cupy"
    devices = ("cuda",)

    def available(self, device):
        return None if importlib.util.find_spec("cupy") is not None else "CuPy is not installed"

    def supports(self, ctx, node):
        if ctx.placement.library != "cupy":
            return f"the arrays are {ctx.placement.library}'s, not CuPy's"
        return None

    def compile(self, ctx, segment) -> Compiled:
        return Compiled(NumpyBackend().runner(ctx, segment), "cupy (numpy's functions on CuPy arrays)")
