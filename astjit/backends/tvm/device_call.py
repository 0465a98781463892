"""Running a CUDA kernel on the caller's arrays: DLPack in (zero-copy; a strided view is made compact
first), outputs allocated by the caller's library, the kernel launched on the caller's stream, results
handed back as the caller's kind of array (devices.Placement)."""

import sys

import numpy as np


class DeviceCall:
    """``run(*inputs)`` of a CUDA segment: ``input_kinds`` per input ("array", "item", "scalar"),
    ``allocations`` (shape, dtype) per output, ``zero_d`` per output whether numpy would give a scalar or
    a 0-d array there (a 0-d array of the caller's kind comes back, as CuPy and torch give)."""

    def __init__(self, kernel, input_kinds, allocations, zero_d, placement):
        self.kernel = kernel
        self.input_kinds = list(input_kinds)
        self.allocations = list(allocations)
        self.zero_d = list(zero_d)
        self.placement = placement

    def __call__(self, *inputs):
        place = self.placement
        if place.library not in ("torch", "cupy"):
            return self._through_tvm_tensors(inputs)
        args = [self._argument(kind, value) for kind, value in zip(self.input_kinds, inputs)]
        outs = [place.allocate(shape, dtype) for shape, dtype in self.allocations]
        if place.library == "torch":
            # TVM's FFI takes torch tensors as they are and launches on torch's current stream
            self.kernel(*args, *outs)
        else:
            import tvm_ffi

            with tvm_ffi.use_raw_stream(tvm_ffi.device("cuda", place.index), place.stream()):
                self.kernel(*args, *outs)
        return tuple(r.reshape(()) if z else r for r, z in zip(outs, self.zero_d))

    def _argument(self, kind, value):
        if kind == "array":
            return self.placement.contiguous(value)
        if kind == "item":
            return value.item() if isinstance(value, np.generic) else value
        return value

    def _through_tvm_tensors(self, inputs):
        """Numpy arrays under ``@jit(device="cuda")`` (copied in and out), or another library's device
        arrays (zero-copy through DLPack): buffers allocated by TVM."""
        import tvm_ffi

        from .runtime import tvm_module

        tvm = tvm_module()
        place = self.placement
        device = tvm.cuda(place.index)
        args = []
        for kind, value in zip(self.input_kinds, inputs):
            if kind != "array":
                args.append(self._argument(kind, value))
            elif place.copies:
                args.append(tvm.runtime.tensor(np.ascontiguousarray(value), device))
            else:
                args.append(tvm_ffi.from_dlpack(place.contiguous(value)))
        outs = [tvm.runtime.empty(shape, np.dtype(dtype).name, device) for shape, dtype in self.allocations]
        with tvm_ffi.use_raw_stream(device, place.stream()):
            self.kernel(*args, *outs)
        if place.copies:
            results = [o.numpy() for o in outs]
        else:
            results = [sys.modules[place.library].from_dlpack(o) for o in outs]
        return tuple(r.reshape(()) if z else r for r, z in zip(results, self.zero_d))
