"""Views of an argument's own memory in the form a kernel's DLPack arguments accept, without a copy.
A view borrows the memory: the caller keeps the original array alive for the call."""

import ctypes

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
    """The same memory with C-order strides: a C-contiguous array may carry any stride along an axis of
    extent 0 or 1 (``np.zeros(0)``'s is 0), which the kernel's argument check refuses."""
    strides, step = [], a.itemsize
    for extent in reversed(a.shape):
        strides.append(step)
        step *= max(extent, 1)
    strides = tuple(reversed(strides))
    return a if a.strides == strides else np.lib.stride_tricks.as_strided(a, strides=strides)
