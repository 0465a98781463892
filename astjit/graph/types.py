"""Types a graph value can have once a Fragment is specialized.

ArrayType   an ndarray (``scalar=False``) or a numpy scalar such as ``np.float32(1)`` (``scalar=True``,
            shape ``()``); numpy scalars are *strong* in promotion.
WeakScalar  a Python bool/int/float/complex known only at run time; *weak* in promotion (NEP 50).
Static      a value known while specializing: shapes, axes, dtypes, constants, modules.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ArrayType:
    dtype: np.dtype
    shape: tuple
    scalar: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{self.dtype}{'' if not self.scalar else ' scalar'}[{dims}]"


@dataclass(frozen=True)
class WeakScalar:
    kind: type  # bool, int, float or complex

    def representative(self):
        return self.kind(1)

    def __str__(self) -> str:
        return f"python {self.kind.__name__}"


@dataclass(frozen=True, eq=False)
class Static:
    value: Any

    def __str__(self) -> str:
        text = repr(self.value)
        return f"static {text if len(text) < 40 else text[:37] + '...'}"


@dataclass(frozen=True)
class Opaque:
    """A runtime Python object that only Python steps touch (a tuple of arrays, a slice)."""

    description: str

    def __str__(self) -> str:
        return f"python {self.description}"


WEAK_KINDS = (bool, int, float, complex)


def type_of_value(value):
    """The type astjit gives a runtime value, or None when a Fragment cannot take it."""
    t = type(value)
    if t is np.ndarray:
        return ArrayType(value.dtype, value.shape, False)
    if t in WEAK_KINDS:
        return WeakScalar(t)
    # (a subclass of a numpy scalar type may define its own operators: ``class Money(np.float64)``)
    if isinstance(value, np.generic) and value.dtype.kind in "biufc" and t is value.dtype.type:
        return ArrayType(value.dtype, (), True)
    return None


def representative(t):
    """A tiny value with the same numpy typing behaviour as a value of type ``t``."""
    if isinstance(t, Static):
        return t.value
    if isinstance(t, WeakScalar):
        return t.representative()
    if isinstance(t, Opaque):
        from ..errors import Unsupported

        raise Unsupported(f"a {t} is only handled by Python")
    if t.scalar:
        return t.dtype.type(1)
    return np.ones((), t.dtype)


def untouched(t: ArrayType):
    """A value of array type ``t`` for ops that only look at its shape, dtype and strides: a numpy scalar,
    or an ``np.empty`` whose pages are never touched (free whatever the size)."""
    return t.dtype.type(0) if t.scalar else np.empty(t.shape, t.dtype)
