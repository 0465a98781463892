"""Float to integer conversion as numpy does it on this machine.

C leaves the conversion of NaN, infinities and out-of-range floats undefined, and LLVM makes it poison:
a kernel may return anything there, even the other arm of a select. numpy's cast loops are C casts,
so what it returns depends on the processor: on x86-64, truncation to int32 or int64 gives the
"indefinite" INT_MIN for any value out of range, and narrower integers keep the low bits of the int32
result (``np.float64(300.7).astype(np.int8)`` is 44, ``inf`` gives 0). Kernels spell that out. Whether
numpy behaves so here is checked once per (source, target) pair against numpy itself, on arrays and
on scalars; a pair that differs (unsigned 32 and 64 bits, other processors) is left to numpy.
"""

import functools

import numpy as np

from ...errors import Unsupported
from ...runtime.fpstate import silenced
from . import scalar_math as sm
from .runtime import tvm_module

tvm = tvm_module()
from tvm import tirx  # noqa: E402

# int32 and int64 are converted directly; narrower integers through int32, as C compilers do
_VIA = {"int8": 32, "uint8": 32, "int16": 32, "uint16": 32, "int32": 32, "int64": 64}

_PROBES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.7, -0.7, 1.5, -1.5, 127.9, 128.5, -128.5, 255.5, 256.0,
           300.7, -300.7, 32767.5, 32768.0, -32769.0, 65535.9, 65536.0, 70000.5, 2.0**31 - 1, 2.0**31,
           -2.0**31, -2.0**31 - 0.5, -2.0**31 - 1, 2.0**32 + 5, 1e18, 2.0**63, -2.0**63, 2.0**63 + 4096,
           -2.0**63 - 4096, 2.0**64, 1e30, -1e30, 3.4e38, 1e-300]


def _model(values: np.ndarray, dst: str) -> np.ndarray:
    """What the kernel computes for ``values`` (float64 holding the source floats exactly)."""
    via = _VIA[dst]
    lo, hi = -(2.0 ** (via - 1)), 2.0 ** (via - 1)
    out = []
    for v in values.tolist():
        # in range when truncation toward zero fits: (lo - 1, hi)
        t = int(v) if (v == v and lo - 1 < v < hi) else -(2 ** (via - 1))
        out.append(t)
    return np.array(out, dtype=np.int64).astype(dst)


@functools.cache
def reproducible(src: str, dst: str) -> bool:
    """Whether numpy's ``src`` to ``dst`` conversion is the one ``float_to_int`` compiles."""
    if dst not in _VIA:
        return False
    values = np.array(_PROBES, dtype=src)
    want = _model(values.astype(np.float64), dst)
    with silenced():
        contiguous = np.tile(values, 5).astype(dst)[: len(values)]      # long enough for SIMD loops
        strided = np.repeat(values, 2)[::2].astype(dst)
        scalars = np.array([np.asarray(v).astype(dst)[()] for v in values], dtype=dst)
        filled = np.array([np.full((), v, dst)[()] for v in values], dtype=dst)
    return all(np.array_equal(got, want) for got in (contiguous, strided, scalars, filled))


def _in_range(x, src: str, via: int):
    """x truncates into int``via``: ``lo - 1 < x < hi``, with ``x >= lo`` where ``lo - 1`` rounds to lo."""
    lo, hi = -(2.0 ** (via - 1)), 2.0 ** (via - 1)
    below = lo - 1.0
    above_low = x > tirx.const(below, src) if float(np.dtype(src).type(below)) == below \
        else x >= tirx.const(lo, src)
    return tirx.And(above_low, x < tirx.const(hi, src))


def require(src: str, dst: str) -> None:
    """Unsupported where numpy's ``src`` to ``dst`` conversion is not the one compiled here."""
    if not reproducible(src, dst):
        raise Unsupported(f"{src} to {dst} conversion of out-of-range values is platform specific")


def float_to_int(x, src: str, dst: str):
    """``x`` (a float of dtype ``src``, read more than once: pass a variable) converted to ``dst`` as
    numpy converts it here (see ``require``)."""
    require(src, dst)
    via = _VIA[dst]
    wide = f"int{via}"
    indefinite = tirx.const(-(2 ** (via - 1)), wide)
    # the select keeps the out-of-range conversion (poison in LLVM) out of the result
    value = tirx.Select(_in_range(x, src, via), x.astype(wide), indefinite)
    return value if dst == wide else value.astype(dst)


def converter(src, dst):
    """The rule converting one ``src`` value to ``dst`` as numpy's ``astype`` does."""
    if src == dst:
        return lambda a: a
    if sm.is_float(src) and not sm.is_float(dst):
        require(src, dst)
        return lambda a: float_to_int(a, src, dst)
    if sm.is_float(dst) and not sm.is_float(src):      # an integer made float: a float leaf
        return lambda a: sm.shielded(sm.widen(a, src, dst), dst)
    return lambda a: sm.widen(a, src, dst)
