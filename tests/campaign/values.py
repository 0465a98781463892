"""Argument values for generated programs: arrays of every compiled dtype, Python scalars, tuples,
slices and dtypes, with the edge values (nan, +-inf, -0.0, integer limits, zeros) drawn often, because
those are where a kernel and numpy part ways."""

import copy

import numpy as np

DTYPES = tuple(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                     np.uint32, np.uint64, np.float32, np.float64))
FLOAT_DTYPES = tuple(d for d in DTYPES if d.kind == "f")
INT_DTYPES = tuple(d for d in DTYPES if d.kind in "iu")

# Python scalars that programs combine with arrays: small ones, signed zeros, non-finite floats and
# ints at (and past) the limits of the narrow dtypes (numpy raises OverflowError for those).
PY_INTS = (0, 1, -1, 2, 3, -3, 7, 100, 127, 128, -129, 255, 256, 2**31 - 1, 2**31, 2**63 - 1, -2**63, 2**64)
PY_SMALL_INTS = (0, 1, -1, 2, 3, -2, 5)
PY_FLOATS = (0.0, -0.0, 0.5, 1.5, -2.25, 3.0, 1e-3, 1e300, float("nan"), float("inf"), float("-inf"))


def edge_values(dtype) -> np.ndarray:
    """The values of ``dtype`` a kernel most often gets wrong."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        vals = [0, 1, 2, 3, info.max, info.max - 1, info.min]
        if dtype.kind == "i":
            vals += [-1, -2, info.min + 1]
        return np.array(vals, dtype)
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.nan, np.inf, -np.inf, info.max, -info.max, info.tiny,
                     info.smallest_subnormal, 1e30 if dtype == np.float64 else 3e38], dtype)


def ordinary_values(rng, dtype, size) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(size) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 10, size).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-9, 10, size).astype(dtype)
    scale = rng.choice([1.0, 1.0, 1.0, 1e3, 1e-3, 1e20])
    vals = rng.standard_normal(size) * scale
    if rng.random() < 0.3:          # whole numbers: exact halves and integers make floor/rint/% edges
        vals = np.round(vals * 2) / 2
    return vals.astype(dtype)


def random_array(rng, dtype, shape, layout="C") -> np.ndarray:
    """An array of ``dtype`` and ``shape``; a quarter of its elements (on average) are edge values.
    ``layout``: "C", "F" (Fortran order) or "strided" (a non-contiguous view of a larger array)."""
    size = int(np.prod(shape, dtype=np.int64))
    values = ordinary_values(rng, dtype, size)
    edge_share = rng.choice([0.0, 0.1, 0.3, 0.7])
    pick = rng.random(size) < edge_share
    edges = edge_values(dtype)
    values[pick] = edges[rng.integers(0, len(edges), int(pick.sum()))]
    values = values.reshape(shape)
    if layout == "F":
        return np.asfortranarray(values)
    if layout == "strided" and len(shape) > 0:
        big = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
        big[..., ::2] = values
        return big[..., ::2]
    return values


def random_int(rng, role: str) -> int:
    """A Python int: a loop count or index for ``role="count"`` (small), else any edge value."""
    pool = PY_SMALL_INTS if role == "count" else PY_INTS
    if role == "count":
        return int(rng.integers(0, 5)) if rng.random() < 0.8 else int(rng.choice(pool))
    return int(rng.choice(pool)) if rng.random() < 0.6 else int(rng.integers(-9, 10))


def random_float(rng) -> float:
    if rng.random() < 0.6:
        return float(rng.choice(PY_FLOATS))
    return float(np.round(rng.standard_normal() * 4, 2))


def random_bool(rng) -> bool:
    return bool(rng.random() < 0.5)


def random_dtype_value(rng, form: str):
    """A dtype as a program receives it: the scalar type (``np.float32``) or a dtype instance."""
    dtype = DTYPES[int(rng.integers(0, len(DTYPES)))]
    return dtype.type if form == "type" else dtype


def random_slice(rng) -> slice:
    def bound():
        return None if rng.random() < 0.25 else int(rng.integers(-4, 6))

    step = [None, None, 1, 2, -1, 3][int(rng.integers(0, 6))]
    return slice(bound(), bound(), step)


def clone(value):
    """A deep copy that keeps an array's memory layout (``copy.deepcopy`` makes views contiguous)."""
    if isinstance(value, tuple):
        return tuple(clone(v) for v in value)
    if not isinstance(value, np.ndarray):
        return copy.deepcopy(value)
    if value.flags.c_contiguous:
        return value.copy(order="C")
    if value.flags.f_contiguous:
        return value.copy(order="F")
    big = np.zeros(value.shape[:-1] + (2 * value.shape[-1],), value.dtype)
    big[..., ::2] = value
    return big[..., ::2]
