"""Views of an argument's own memory in the form a kernel's DLPack arguments accept, without a copy.
A view borrows the memory: the caller keeps the original array alive for the call."""

import ctypes
import functools
import weakref

import numpy as np
from numpy.lib.array_utils import byte_bounds


def writeable_view(a: np.ndarray) -> np.ndarray:
    """The same memory as a writeable array, for a kernel that only reads it: DLPack cannot carry a
    read-only array (``np.broadcast_to``'s, ``np.frombuffer``'s, one a user locked), which then
    passes without a copy, however large it is. The view of each of the last VIEWS_KEPT arrays that
    do not own their memory is kept while the array lives with that shape, strides and dtype (making
    one costs 3-6 us, more than a short loop's whole kernel call: a 16-element loop reading a
    read-only array ran 2-6x plain Python's time). An array owning its memory gets a new view at
    each call: numpy may move that memory (``resize``, even of a read-only array), and refuses to
    resize an array that a weak reference or another object holds."""
    kept = _views.get(id(a))
    if (kept is not None and kept[0]() is a and kept[1] == (a.shape, a.strides)
            and kept[2] is a.dtype):
        return kept[3]
    low, high = byte_bounds(a)
    memory = (ctypes.c_char * max(high - low, 1)).from_address(low)
    view = np.ndarray(a.shape, a.dtype, buffer=memory, offset=a.__array_interface__["data"][0] - low,
                      strides=a.strides)
    if a.base is not None:          # (a view of another object's memory: it stays where it is)
        if len(_views) >= VIEWS_KEPT:
            _views.clear()
        key = id(a)
        _views[key] = (weakref.ref(a, lambda _, key=key: _views.pop(key, None)), (a.shape, a.strides),
                       a.dtype, view)
    return view


VIEWS_KEPT = 8
_views: dict = {}   # id(array) -> (a weak reference to it, (shape, strides), dtype, view)


def readable_by_kernel(a: np.ndarray):
    """A read-only array as the argument of a kernel that only reads it: a DLPack 1.0 tensor, which
    carries the read-only flag (0.2 us, where ``writeable_view`` of an array owning its memory costs
    3 us at each call: a block over four locked 16-element arrays ran 7x plain numpy's time). numpy
    before 2.1 exports no such tensor: there, the writeable view."""
    try:
        capsule = a.__dlpack__(max_version=(1, 0))
    except (TypeError, BufferError):
        return writeable_view(a)
    import tvm_ffi

    return tvm_ffi.from_dlpack(capsule)


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
