"""Views of an argument's own memory in the form a kernel's DLPack arguments accept, without a copy.
A view borrows the memory: the caller keeps the original array alive for the call."""

import ctypes
import functools

import numpy as np
from numpy.lib.array_utils import byte_bounds


def writeable_view(a: np.ndarray) -> np.ndarray:
    """The same memory as a writeable array, for a kernel that only reads it: DLPack cannot carry a
    read-only array (``np.broadcast_to``'s, ``np.frombuffer``'s, one a user locked), which then
    passes without a copy, however large it is."""
    low, high = byte_bounds(a)
    memory = (ctypes.c_char * max(high - low, 1)).from_address(low)
    return np.ndarray(a.shape, a.dtype, buffer=memory, offset=a.__array_interface__["data"][0] - low,
                      strides=a.strides)


def compact(a: np.ndarray) -> np.ndarray:
    """``a`` with the strides a kernel's argument check wants, where numpy ignores them: along an axis
    of extent 0 or 1 a C-contiguous array may carry any stride (``x[:, None]``'s is 0, and numpy 2
    gives every empty array strides of 0: ``np.zeros(0)``, ``np.array([])``, ``a[mask]`` without
    hits), which the check refuses. An empty array becomes one of its shape and dtype with, along
    each axis, the product of the later extents (the kernel touches no element of it, so one serves
    every call); another C-contiguous one a view with C-order strides (``reshape``: about 0.2 us,
    where ``as_strided`` took 2-10 us)."""
    if not a.size:
        return _empty(a.shape, a.dtype)
    if 1 in a.shape and a.flags.c_contiguous:
        return a.reshape(-1).reshape(a.shape)
    return a


_NO_ELEMENTS = np.empty(8, np.complex128)        # (what an empty array for a kernel points at)


@functools.lru_cache(maxsize=64)
def _empty(shape, dtype) -> np.ndarray:
    strides, step = [], dtype.itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return np.ndarray(shape, dtype, buffer=_NO_ELEMENTS, strides=tuple(reversed(strides)))
