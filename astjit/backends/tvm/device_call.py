"""Running a CUDA kernel on the caller's arrays: DLPack in (zero-copy), device buffers out, on the
caller's stream, results handed back as the caller's kind of array (devices.Placement)."""

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
        import tvm_ffi

        from .runtime import tvm_module

        tvm = tvm_module()
        place = self.placement
        device = tvm.cuda(place.index)
        args = []
        for kind, value in zip(self.input_kinds, inputs):
            if kind == "array":
                args.append(place.to_kernel(value, device))
            elif kind == "item":
                args.append(value.item() if isinstance(value, np.generic) else value)
            else:
                args.append(value)
        outs = [tvm.runtime.empty(shape, np.dtype(dtype).name, device) for shape, dtype in self.allocations]
        with tvm_ffi.use_raw_stream(device, place.stream()):
            self.kernel(*args, *outs)
        results = [place.from_kernel(o) for o in outs]
        return tuple(r.reshape(()) if z else r for r, z in zip(results, self.zero_d))
