"""The scalar types a compiled loop computes with, and their promotion rules, taken from Python and numpy.

A loop kernel keeps Python's distinction between a Python ``float`` and a ``numpy.float64``: the two
have the same bits but not the same behaviour (``1.0 / 0.0`` raises, ``np.float64(1) / 0`` gives inf)
nor the same type after the loop. Result types are never tabulated here: each is the type of the same
operation on sample values, so Python's and numpy's own rules (NEP 50 weak scalars included) decide.
"""

import operator
from dataclasses import dataclass

import numpy as np

from ...errors import Unsupported
from ...runtime.fpstate import silenced
from ...runtime.keys import TYPED_ITEMS_AT_MOST

LOOP_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float32", "float64",
               "complex64", "complex128")
PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}
_SAMPLES = {"b": True, "i": 3, "u": 3, "f": 1.5, "c": 1.5 - 0.5j}


@dataclass(frozen=True)
class Scalar:
    """A Python ``bool``/``int``/``float`` (``python``) or a numpy scalar of ``dtype``."""
    dtype: str
    python: bool

    @property
    def kind(self) -> str:
        return np.dtype(self.dtype).kind

    @property
    def type(self) -> type:
        if self.python:
            return {"bool": bool, "int64": int, "float64": float, "complex128": complex}[self.dtype]
        return np.dtype(self.dtype).type

    def sample(self, value=None):
        value = _SAMPLES[self.kind] if value is None else value
        return self.type(value)

    def __str__(self) -> str:
        return self.type.__name__ if self.python else f"numpy.{self.dtype}"


@dataclass(frozen=True)
class Array:
    dtype: str
    ndim: int
    contiguous: bool = False     # C-contiguous: the kernel's last stride is the constant 1 (LLVM sees it)


@dataclass(frozen=True)
class Sequence:
    """A tuple or a list of numbers of one type, which a loop only reads by index (``for c in coeffs``):
    the kernel takes it as a 1-d array the runner makes at each call, and its items read as ``item``."""
    container: type              # tuple or list
    item: Scalar

    @property
    def dtype(self) -> str:
        return self.item.dtype


def type_of_sequence(value) -> Sequence | None:
    """The Sequence type of a non-empty tuple or list whose items all have one exact type a loop
    computes with (ints within int64), else None."""
    if type(value) not in (tuple, list) or not value:
        return None
    # (a tuple longer than its key's typing is taken at its first item's type, as keyed: one of mixed
    # items first sent all later tuples of that key to Python; the conversion tests each call's items)
    typed = type(value) is tuple and len(value) > TYPED_ITEMS_AT_MOST
    if not typed and len(set(map(type, value))) != 1:
        return None
    item = type_of_value(value[0])
    if not isinstance(item, Scalar) or item.kind == "c":
        return None
    if not typed and item.python and item.kind == "i" and not all(-2**63 <= v < 2**63 for v in value):
        return None
    return Sequence(type(value), item)


def sequence_converter(seq: Sequence):
    """``convert(value)``: the items of a tuple or list as the kernel's array, or None where they are
    not all of ``seq``'s item type (or an int is beyond int64): the loop then runs as Python."""
    expected, dtype = {seq.item.type}, np.dtype(seq.item.dtype)

    def convert(value):
        # (a tuple's key holds its items' one type where it is short, runtime/keys.tuple_key: a list's
        # does not)
        if (type(value) is not tuple or len(value) > TYPED_ITEMS_AT_MOST) and set(map(type, value)) != expected:
            return None
        try:
            return np.array(value, dtype)
        except OverflowError:
            return None

    return convert


def type_of_value(value):
    """The loop type of an argument value, or None where a loop kernel cannot take it."""
    if type(value) in PYTHON_DTYPES:
        return Scalar(PYTHON_DTYPES[type(value)], True)
    if isinstance(value, np.generic) and type(value) is np.dtype(value.dtype).type \
            and value.dtype.name in LOOP_DTYPES:
        return Scalar(value.dtype.name, False)
    if type(value) is np.ndarray and value.dtype.name in LOOP_DTYPES and value.dtype.kind != "c" \
            and value.dtype.isnative and value.ndim >= 1:
        return Array(value.dtype.name, value.ndim, value.flags.c_contiguous)
    return None


def type_of_result(value, what) -> Scalar:
    t = type_of_value(value)
    if not isinstance(t, Scalar):
        raise Unsupported(f"{what} gives a {type(value).__name__}")
    return t


def quietly(fn, *args):
    with silenced():
        return fn(*args)


def result_type(fn, operands: tuple, what: str) -> Scalar:
    """The type ``fn`` returns for operands of these types (run on samples)."""
    try:
        value = quietly(fn, *[t.sample() for t in operands])
    except Exception as exc:
        raise Unsupported(f"{what} of {', '.join(map(str, operands))} raises "
                          f"{type(exc).__name__}") from None
    return type_of_result(value, what)


def possible_results(fn, operands, what) -> dict:
    """The result type of ``fn`` for each combination of the operands' possible types."""
    combos = [()]
    for v in operands:
        combos = [c + (t,) for c in combos for t in v.types]
    return {c: result_type(fn, c, what) for c in combos}


BINARY = {"Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "Div": operator.truediv,
          "FloorDiv": operator.floordiv, "Mod": operator.mod, "BitAnd": operator.and_,
          "BitOr": operator.or_, "BitXor": operator.xor, "Pow": operator.pow, "RShift": operator.rshift,
          "LShift": operator.lshift}
COMPARE = {"Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge,
           "Eq": operator.eq, "NotEq": operator.ne}
UFUNC_OF_COMPARE = {"Lt": "less", "LtE": "less_equal", "Gt": "greater", "GtE": "greater_equal",
                    "Eq": "equal", "NotEq": "not_equal"}
UFUNC_OF_BINARY = {"Add": "add", "Sub": "subtract", "Mult": "multiply", "Div": "divide",
                   "FloorDiv": "floor_divide", "Mod": "remainder", "BitAnd": "bitwise_and",
                   "BitOr": "bitwise_or", "BitXor": "bitwise_xor", "RShift": "right_shift",
                   "LShift": "left_shift"}


def storage_dtype(types) -> str:
    """One dtype that holds every value of a variable whose type may change in the loop: its single
    dtype; int64 for a mix of bools and ints up to int64 or uint32 (``c == 2 and grid[i, j]``);
    float64 for a mix with floats (``total = 0`` then ``total += a[i]``), complex128 for a mix with
    complex numbers (``s = 0`` then ``s += w * x[i]``; a real number as ``(x, 0.0)``): floats and bools
    widen exactly, an int is stored only where it is known to be below 2**53 (``exact_in``), and the tag
    says which type the value has."""
    dtypes = {t.dtype for t in types}
    if len(dtypes) == 1:
        return dtypes.pop()
    ints = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}
    if dtypes <= ints:
        return "int64"
    if dtypes <= ints | {"float32", "float64"}:
        return "float64"
    if dtypes <= ints | {"float32", "float64", "complex64", "complex128"}:
        return "complex128"
    raise Unsupported("a variable takes values of " + " and ".join(sorted(map(str, types))))


def holds_ints_as_floats(types) -> bool:
    """Whether a variable of these types stores its int values in a float64 (see ``storage_dtype``)."""
    return any(t.kind in "iu" for t in types) and storage_dtype(types) == "float64"


def ordered(types) -> tuple:
    return tuple(sorted(types, key=lambda t: (t.dtype, t.python)))
