"""Cache keys: what a specialization depends on, computed on every call, so kept minimal."""

import numpy as np

from ..devices import device_key

_ndarray = np.ndarray

SHORT_TUPLE = 8      # items: a tuple up to this long keys a loop by its length
# items: a longer tuple is keyed by its first item's type (the runner's conversion tests the others,
# backends/tvm/loop_types.sequence_converter): the type of each of 100,000 items cost 1.8 ms a call
TYPED_ITEMS_AT_MOST = 64


class TupleOfLength:
    """The key part of a tuple argument of a compiled loop: its length, where at most SHORT_TUPLE items
    (the kernel knows it, so a loop over it, ``for c in coeffs``, has a constant trip count LLVM can
    unroll; then the loop around it vectorizes), else None (the length is a parameter); and the type
    its items share (None where they do not: a kernel takes each item at the type it was compiled for,
    so a tuple of numpy floats after one of Python floats is a specialization of its own, not the
    first one's Python)."""

    __slots__ = ("length", "item", "__name__")

    def __init__(self, length, item):
        self.length, self.item = length, item
        items = f" {item.__name__}" if item is not None else " mixed" if length != 0 else ""
        self.__name__ = f"tuple of {length}{items}" if length is not None else f"tuple of{items}"

    def __eq__(self, other):
        return type(other) is TupleOfLength and other.length == self.length and other.item is self.item

    def __hash__(self):
        return hash((TupleOfLength, self.length, self.item))

    def __repr__(self):
        return f"<{self.__name__}>"


_TUPLE_KEYS = {}
_LAST_TUPLE = [(object(), None)]  # (the last tuple keyed, its key): one item, replaced whole (threads)


def tuple_key(value: tuple):
    """A tuple's key part for a compiled loop: its length where short, and its items' one type. The
    same tuple again (a module's constant, a literal of the caller's code) is one identity test."""
    last = _LAST_TUPLE[0]
    if value is last[0]:           # (a tuple's items never change)
        return last[1]
    types = set(map(type, value)) if len(value) <= TYPED_ITEMS_AT_MOST else {type(value[0])}
    part = (len(value) if len(value) <= SHORT_TUPLE else None, types.pop() if len(types) == 1 else None)
    key = _TUPLE_KEYS.get(part)
    if key is None:
        key = _TUPLE_KEYS[part] = TupleOfLength(*part)
    _LAST_TUPLE[0] = (value, key)
    return key


class ListOf:
    """The key part of a list argument of a compiled loop: the type of its first item (None where it is
    empty). A kernel takes each item at the type it was compiled for (its runner tests them all), so
    a list of numpy floats (``list(a)``) after one of Python floats is a specialization of its own,
    not the first one's Python: keyed by ``list`` alone, Horner's rule over ``list(c)`` ran the loop as
    Python, its body's block called at each step, 0.55x plain Python."""

    __slots__ = ("item", "__name__")

    def __init__(self, item):
        self.item = item
        self.__name__ = f"list of {item.__name__}" if item is not None else "empty list"

    def __eq__(self, other):
        return type(other) is ListOf and other.item is self.item

    def __hash__(self):
        return hash((ListOf, self.item))

    def __repr__(self):
        return f"<{self.__name__}>"


_LIST_KEYS = {}


def list_key(value: list) -> ListOf:
    """A list's key part for a compiled loop (ListOf), one object per item type."""
    item = type(value[0]) if value else None
    key = _LIST_KEYS.get(item)
    if key is None:
        key = _LIST_KEYS[item] = ListOf(item)
    return key


def make_key(args) -> tuple:
    """(dtype, shape, C-contiguous) for each ndarray, (dtype, shape, device) for an array on a CUDA
    device (runtime/devices), the exact type for anything else. An array in another layout (``a[::2]``,
    ``x.T``) has a key of its own, so the code chosen and measured for C-contiguous arrays never runs
    on it (runtime/specialize)."""
    return tuple([(a.dtype, a.shape, a.flags.c_contiguous) if type(a) is _ndarray else
                  (device_key(a) if hasattr(type(a), "__dlpack_device__") else type(a)) for a in args])


def make_rank_key(args) -> tuple:
    """(dtype, ndim, C-contiguous) for each ndarray, the exact type for anything else (a tuple: its
    length where short and its items' type, TupleOfLength; a list: its first item's type, ListOf):
    compiled loops take extents as parameters, so a new length reuses the kernel; a C-contiguous
    array gets a kernel that knows its strides."""
    return tuple([(a.dtype, a.ndim, a.flags.c_contiguous) if type(a) is _ndarray else
                  (tuple_key(a) if type(a) is tuple else list_key(a) if type(a) is list else type(a)) for a in args])


KEYS = {"shape": make_key, "ndim": make_rank_key}
KEY_CODE = {"shape": "(({x}.dtype, {x}.shape, {x}.flags.c_contiguous) if type({x}) is ndarray else "
                      "(device_key({x}) if type({x}) in device_types else type({x})))",
            "ndim": "(({x}.dtype, {x}.ndim, {x}.flags.c_contiguous) if type({x}) is ndarray else "
                    "(tuple_key({x}) if type({x}) is tuple else list_key({x}) if type({x}) is list else type({x})))"}


def _dims(k) -> str:
    return f"{k[1]}-d" if isinstance(k[1], int) else ",".join(str(d) for d in k[1])


def spelled(name: str) -> str:
    """A live-in's name as the user writes it: ``o.k`` for the attribute read passed in as
    ``__astjit_attr_1o_1k`` (frontend/lower.hoisted_name), ``a[...]`` for a window of ``a`` the caller
    takes (frontend/window_views)."""
    from ..frontend.lower import HOISTED_PREFIX, attribute_of
    from ..frontend.window_views import VIEW_PREFIX, spelled_view

    if name.startswith(VIEW_PREFIX):
        return spelled_view(name)
    return attribute_of(name) if name.startswith(HOISTED_PREFIX) else name


def describe_key(names, key) -> str:
    parts = []
    for name, k in zip(map(spelled, names), key):
        if getattr(k, "window_not_taken", False):        # (runtime/windows.NOT_TAKEN: nothing to show)
            continue
        if isinstance(k, tuple) and len(k) > 2 and isinstance(k[2], tuple):     # on a CUDA device
            device, index, kind = k[2]
            parts.append(f"{name}={k[0]}[{_dims(k)}] on {device}:{index} ({kind.__module__.split('.')[0]})")
        elif isinstance(k, tuple):
            layout = ", strided" if len(k) > 2 and not k[2] else ""
            parts.append(f"{name}={k[0]}[{_dims(k)}{layout}]")
        else:
            parts.append(f"{name}={getattr(k, 'shown_as', k.__name__)}")
    return ", ".join(parts)


def _where(k) -> str:
    return f"{k[2][0]}:{k[2][1]}" if len(k) > 2 and isinstance(k[2], tuple) else "cpu"


def key_difference(names, old, new) -> str:
    """Which argument and which dimension changed between two keys, in words."""
    changes = []
    for name, a, b in zip(map(spelled, names), old, new):
        if a == b or getattr(a, "window_not_taken", False) or getattr(b, "window_not_taken", False):
            continue        # (a window the caller now takes: the record "windows" says so)
        if isinstance(a, tuple) and isinstance(b, tuple):
            where_a, where_b = _where(a), _where(b)
            if where_a != where_b:
                changes.append(f"'{name}' device {where_a} -> {where_b}")
            if a[0] != b[0]:
                changes.append(f"'{name}' dtype {a[0]} -> {b[0]}")
            if isinstance(a[1], int) or isinstance(b[1], int):
                if a[1] != b[1]:
                    changes.append(f"'{name}' ndim {a[1]} -> {b[1]}")
                elif a[2:] != b[2:]:
                    changes.append(f"'{name}' " + ("C-contiguous -> strided" if a[2] else "strided -> C-contiguous"))
            elif len(a[1]) != len(b[1]):
                changes.append(f"'{name}' ndim {len(a[1])} -> {len(b[1])}")
            elif a[1] == b[1] and a[2:] != b[2:] and where_a == where_b == "cpu":
                changes.append(f"'{name}' " + ("C-contiguous -> another layout" if a[2] else "another layout -> C-contiguous"))
            else:
                for axis, (x, y) in enumerate(zip(a[1], b[1])):
                    if x != y:
                        changes.append(f"'{name}' dimension {axis}: {x} -> {y}")
        else:
            def show(k):
                return f"ndarray {k[0]}" if isinstance(k, tuple) else k.__name__

            changes.append(f"'{name}' type {show(a)} -> {show(b)}")
    return "; ".join(changes) or "argument values the specialization depends on"
