"""Where a call's arrays live, from the arguments themselves: numpy arrays on the CPU; anything with
``__dlpack__`` on a CUDA device (CuPy arrays, torch CUDA tensors) on that GPU.

The device is part of the cache key (``device_key``), of inference (``array_type``) and of the
``Placement`` a specialization gets: which backends it asks, how its kernels take the arrays (DLPack,
zero-copy) and give results back (arrays of the caller's kind, on the caller's stream). Nothing here
imports a GPU library: the caller's own library is found from its arrays' type.
"""

import sys
from dataclasses import dataclass

import numpy as np

from .graph.types import ArrayType

KDL_CUDA, KDL_CUDA_MANAGED = 2, 13
CUDA_KINDS = (KDL_CUDA, KDL_CUDA_MANAGED)
DEVICES = (None, "cpu", "cuda")

# Types of non-numpy arrays seen on a CUDA device: the generated dispatch (runtime/keys.KEY_CODE) keys
# their values by device, dtype and shape; every other non-numpy value is keyed by its type alone.
device_types: set = set()


def cuda_index(value) -> int | None:
    """The CUDA device index of a DLPack array, or None (not a DLPack array, or not on a CUDA GPU).
    A torch tensor answers through its C attributes, 1-2 us faster than its ``__dlpack_device__``."""
    probe = getattr(type(value), "__dlpack_device__", None)
    if probe is None or type(value) is np.ndarray:
        return None
    if getattr(value, "is_cuda", None) is True and hasattr(value, "get_device"):
        return value.get_device()
    try:
        kind, index = probe(value)
    except Exception:
        return None
    return int(index) if int(kind) in CUDA_KINDS else None


_numpy_dtypes: dict = {}      # another library's dtype object -> numpy's (each call keys its arrays)


def numpy_dtype(value) -> np.dtype:
    """A device array's dtype as numpy's: CuPy and JAX already give one; torch's ``torch.float32``."""
    dtype = value.dtype
    if isinstance(dtype, np.dtype):
        return dtype
    found = _numpy_dtypes.get(dtype)
    if found is None:
        found = _numpy_dtypes[dtype] = np.dtype(str(dtype).rsplit(".", 1)[-1])
    return found


def _dtype_and_shape(value):
    """(numpy dtype, shape) of a device array, or None for a dtype numpy has no name for (bfloat16:
    Python runs it)."""
    try:
        return numpy_dtype(value), tuple(map(int, value.shape))
    except (TypeError, AttributeError):
        return None


def device_key(value):
    """The cache key part of a non-numpy value: (dtype, shape, ("cuda", index, type)) for an array on
    a CUDA device, else its type."""
    index = cuda_index(value)
    described = _dtype_and_shape(value) if index is not None else None
    if described is None:
        return type(value)
    device_types.add(type(value))
    return (*described, ("cuda", index, type(value)))


def array_type(value):
    """The inference type of an array on a CUDA device, or None for anything else."""
    described = _dtype_and_shape(value) if cuda_index(value) is not None else None
    return ArrayType(*described, False) if described is not None else None


@dataclass(frozen=True)
class Placement:
    """The device of one specialization and how its kernels exchange arrays with the caller.

    ``library``: the top-level module of the caller's arrays (``"cupy"``, ``"torch"``), or ``"numpy"``
    where ``@jit(device="cuda")`` copies numpy arrays in and results out."""

    device: str = "cpu"
    index: int = 0
    library: str = "numpy"

    @property
    def copies(self) -> bool:
        return self.device != "cpu" and self.library == "numpy"

    def contiguous(self, value):
        """A device array as a kernel takes it: itself when C-contiguous, else a C-contiguous copy made
        by its library (kernels index compact buffers)."""
        if self.library == "torch":
            return value if value.is_contiguous() else value.contiguous()
        flags = getattr(value, "flags", None)
        if flags is not None and not flags.c_contiguous:
            return sys.modules[self.library].ascontiguousarray(value)
        return value

    def allocate(self, shape, dtype):
        """An output array of the caller's kind (torch or CuPy), from that library's caching allocator
        (TVM's own allocation calls cudaMalloc, and cudaFree waits for the device, on every call)."""
        if self.library == "torch":
            torch = sys.modules["torch"]
            return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=f"cuda:{self.index}")
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(self.index):
            return cupy.empty(shape, dtype=np.dtype(dtype))

    def stream(self) -> int:
        """The caller's current CUDA stream (0: the default stream)."""
        if self.library == "torch":
            torch = sys.modules["torch"]
            return int(torch.cuda.current_stream(self.index).cuda_stream)
        if self.library == "cupy":
            return int(sys.modules["cupy"].cuda.get_current_stream().ptr)
        return 0


CPU = Placement()


def placement(args, names, forced=None) -> Placement:
    """The Placement of a call with these arguments (``forced``: ``@jit(device=...)``).

    Raises:
        ValueError: arrays on different devices (or, under ``device=``, not on that device), with
            the arguments named; the caller adds the user's file and line.
    """
    cuda = {}
    hosts = []
    for name, value in zip(names, args):
        if type(value) is np.ndarray:
            if value.ndim:
                hosts.append(name)
            continue
        index = cuda_index(value)
        if index is not None:
            cuda[name] = (index, type(value).__module__.split(".")[0])
    if not cuda:
        if forced == "cuda":
            return Placement("cuda", 0, "numpy")
        return CPU
    places = sorted({f"cuda:{i}" for i, _ in cuda.values()})
    first = next(iter(cuda))
    if hosts or len(places) > 1 or forced == "cpu":
        where = [f"'{n}' on cuda:{i}" for n, (i, _) in cuda.items()] + [f"'{n}' in host memory (numpy)"
                                                                       for n in hosts]
        told = " (the function was jitted with device='cpu')" if forced == "cpu" else ""
        raise ValueError(f"arrays on different devices in one call{told}: {', '.join(where)}; move them "
                         "to one device first (cupy.asarray / torch.Tensor.to, or .get() / .cpu() back)")
    index, library = cuda[first]
    return Placement("cuda", index, library)
