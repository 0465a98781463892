"""The parameters of a generated program and the argument values of each of its calls.

Arrays share up to three dimensions (aligned right, some axes fixed to 1), so they broadcast together in
every call; a call draws new sizes, dtypes, layouts and values for them, and new values for the scalar,
tuple, slice and dtype parameters and for the module attributes the program reads.
"""

import numpy as np

from . import values
from .choices import Chooser
from .model import Call, Param, Setup

LAYOUTS = ("C",) * 12 + ("F", "strided")
SIZES = (2, 3, 1, 4, 5, 2, 3, 1, 0)


def array_shape(param, sizes):
    return tuple(1 if axis in param.ones else sizes[3 - param.ndim + axis] for axis in range(param.ndim))


def tuple_value(rng, param, shapes):
    shape = shapes.get(param.target, ())
    if param.role == "axes":
        axes = [a for a in range(len(shape)) if rng.random() < 0.5]
        return tuple(a - len(shape) if rng.random() < 0.3 else a for a in axes)
    if param.role == "index":
        return tuple(int(rng.integers(-s, s)) if s else 0 for s in shape)
    if param.role == "reshape":
        size = int(np.prod(shape, dtype=np.int64))
        last = shape[-1] if shape else 1
        options = [(size,), (-1,), (1, size), (size, 1), (-1, last), (size + 1,)]
        return options[int(rng.integers(0, len(options) - (rng.random() > 0.05)))]
    return tuple(int(v) for v in rng.integers(0, 4, int(rng.integers(0, 3))))


def make_call(params, setup: Setup, seed: int) -> Call:
    rng = np.random.default_rng(seed)
    args, shapes = {}, {}
    for p in params:
        if p.kind == "array":
            shapes[p.name] = array_shape(p, setup.sizes)
            args[p.name] = values.random_array(rng, setup.dtypes[p.name], shapes[p.name], setup.layouts[p.name])
        elif p.kind == "int":
            args[p.name] = values.random_int(rng, p.role)
        elif p.kind == "float":
            args[p.name] = values.random_float(rng)
        elif p.kind == "bool":
            args[p.name] = values.random_bool(rng)
        elif p.kind == "slice":
            args[p.name] = values.random_slice(rng)
        elif p.kind == "dtype":
            args[p.name] = values.random_dtype_value(rng, p.role)
    for p in params:
        if p.kind == "tuple":
            args[p.name] = tuple_value(rng, p, shapes)
    attributes = {"SCALE": values.random_float(rng), "OFFSET": values.random_int(rng, "value"),
                  "FLAG": values.random_bool(rng), "AXIS": int(rng.choice([0, -1, 1])),
                  "DTYPE": values.random_dtype_value(rng, "type"), "LIMIT": values.random_int(rng, "count")}
    errstate = {}
    if rng.random() < 0.12:          # a caller that asks numpy to raise on some floating-point errors
        errstate = {kind: "raise" for kind in ("divide", "over", "under", "invalid") if rng.random() < 0.6}
    return Call(tuple(args[p.name] for p in params), attributes, values.random_int(rng, "value"), errstate)


def parameters(choose: Chooser) -> list:
    params = []
    for name in ("a", "b", "c")[:choose.integer(1, 3)]:
        ndim = choose.pick([1, 2, 2, 0, 1, 3])
        ones = tuple(ax for ax in range(ndim) if choose.chance(15))
        params.append(Param(name, "array", ndim=ndim, ones=ones))
    optional = [Param("n", "int", "count"), Param("k", "int", "value"), Param("x", "float"),
                Param("flag", "bool"), Param("sl", "slice"),
                Param("dt", "dtype", choose.pick(["type", "instance"])),
                Param("t", "tuple", choose.pick(["axes", "index", "shape", "reshape"]),
                      target=choose.pick([p.name for p in params]))]
    return params + [p for p in optional if choose.chance(35)]


def setups(choose: Chooser, params) -> tuple:
    """The first call's setup and another one with new sizes and some dtypes changed."""
    arrays = [p.name for p in params if p.kind == "array"]
    dtypes = {a: choose.pick(values.DTYPES) for a in arrays}
    first = Setup(tuple(choose.pick(SIZES) for _ in range(3)), dtypes,
                  {a: choose.pick(LAYOUTS) for a in arrays})
    other_dtypes = {a: choose.pick(values.DTYPES) if choose.chance(30) else d for a, d in dtypes.items()}
    other = Setup(tuple(choose.pick(SIZES) for _ in range(3)), other_dtypes,
                  {a: choose.pick(LAYOUTS) for a in arrays})
    return first, other
