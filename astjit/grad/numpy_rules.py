"""The shipped adjoint rules, as plain numpy (see grad/rules.py for the form).

Constants are Python floats, never numpy scalars: a float32 gradient stays float32 (a Python float does
not widen a float32 array; an ``np.float64`` would). Boolean masks multiply the adjoint (``g * (x > y)``)
for the same reason. ``max``/``min`` (reductions and ``np.maximum``/``np.minimum``) split the adjoint
evenly between tied elements, as jax and autograd do.
"""

import numpy as np

from .helpers import (
    dot_left,
    dot_right,
    float_result_adjoint,
    in_place_result,
    inverse_axes,
    kept_shape,
    linspace_parts,
    matmul_left,
    matmul_right,
    product_of_others,
    reversed_cumsum,
    scatter_index,
    split_concatenated,
    split_stacked,
    unravel,
)
from .rules import non_differentiable
from .rules import shipped_adjoint as adjoint

LN2 = 0.6931471805599453
LN10 = 2.302585092994046


@adjoint(np.add, unbroadcast=True)
def add(g, ans, x, y):
    return g, g


@adjoint(np.subtract, unbroadcast=True)
def subtract(g, ans, x, y):
    return g, -g


@adjoint(np.multiply, unbroadcast=True)
def multiply(g, ans, x, y):
    return g * y, g * x


@adjoint(np.true_divide, unbroadcast=True)
def true_divide(g, ans, x, y):
    return g / y, -g * ans / y


@adjoint(np.power, unbroadcast=True)
def power(g, ans, x, y):
    # x ** y with y == 0 has slope 0, also at x == 0: there the exponent y - 1 becomes 0, as 0 ** -1 is inf
    # and 0 * inf NaN; log(x) at x == 0 is replaced by 0 (slope 0 in y)
    return g * (y * x ** (y - 1 + (y == 0))), g * ans * np.log(np.where(x == 0, 1.0, x))


@adjoint(np.maximum, unbroadcast=True)
def maximum(g, ans, x, y):
    return g * (x > y) + (0.5 * g) * (x == y), g * (y > x) + (0.5 * g) * (x == y)


@adjoint(np.minimum, unbroadcast=True)
def minimum(g, ans, x, y):
    return g * (x < y) + (0.5 * g) * (x == y), g * (y < x) + (0.5 * g) * (x == y)


# fmax and fmin give the other operand where one is NaN: the adjoint goes to it (as maximum's, both
# comparisons with a NaN were false and the operand that made the result got none)
@adjoint(np.fmax, unbroadcast=True)
def fmax(g, ans, x, y):
    x_nan, y_nan = np.isnan(x), np.isnan(y)
    return (g * ((x > y) | (y_nan & ~x_nan)) + (0.5 * g) * (x == y),
            g * ((y > x) | (x_nan & ~y_nan)) + (0.5 * g) * (x == y))


@adjoint(np.fmin, unbroadcast=True)
def fmin(g, ans, x, y):
    x_nan, y_nan = np.isnan(x), np.isnan(y)
    return (g * ((x < y) | (y_nan & ~x_nan)) + (0.5 * g) * (x == y),
            g * ((y < x) | (x_nan & ~y_nan)) + (0.5 * g) * (x == y))


@adjoint(np.hypot, unbroadcast=True)
def hypot(g, ans, x, y):
    return g * x / ans, g * y / ans


@adjoint(np.arctan2, unbroadcast=True)
def arctan2(g, ans, y, x):
    return g * x / (x * x + y * y), -g * y / (x * x + y * y)


@adjoint(np.where, unbroadcast=True)
def where(g, ans, condition, x, y):
    return None, g * (condition != 0), g * (condition == 0)


@adjoint(np.clip, unbroadcast=True)
def clip(g, ans, a, a_min=None, a_max=None):
    # numpy returns a_max where a_min > a_max: the adjoint goes to the value returned (a, else a_min, else
    # a_max; where a_min == a_max a_min gets it, so np.clip(x, c, c) has slope 1 in c)
    return g * (ans == a), g * (ans != a) * (ans == a_min), g * (ans != a) * (ans == a_max) * (ans != a_min)


@adjoint(np.negative)
def negative(g, ans, x):
    return -g


@adjoint(np.positive, np.copy, np.ascontiguousarray, np.asarray, np.array, float)
def identity(g, ans, x):
    return g


@adjoint(np.exp)
def exp(g, ans, x):
    return g * ans


@adjoint(np.exp2)
def exp2(g, ans, x):
    return g * ans * LN2


@adjoint(np.expm1)
def expm1(g, ans, x):
    return g * (ans + 1.0)


@adjoint(np.log)
def log(g, ans, x):
    return g / x


@adjoint(np.log2)
def log2(g, ans, x):
    return g / (x * LN2)


@adjoint(np.log10)
def log10(g, ans, x):
    return g / (x * LN10)


@adjoint(np.log1p)
def log1p(g, ans, x):
    return g / (x + 1.0)


@adjoint(np.sqrt)
def sqrt(g, ans, x):
    return g * 0.5 / ans


@adjoint(np.cbrt)
def cbrt(g, ans, x):
    return g / (3.0 * ans * ans)


@adjoint(np.square)
def square(g, ans, x):
    return g * 2.0 * x


@adjoint(np.reciprocal)
def reciprocal(g, ans, x):
    return -g * ans * ans


@adjoint(np.sin)
def sin(g, ans, x):
    return g * np.cos(x)


@adjoint(np.cos)
def cos(g, ans, x):
    return -g * np.sin(x)


@adjoint(np.tan)
def tan(g, ans, x):
    return g * (1.0 + ans * ans)


@adjoint(np.arcsin)
def arcsin(g, ans, x):
    return g / np.sqrt(1.0 - x * x)


@adjoint(np.arccos)
def arccos(g, ans, x):
    return -g / np.sqrt(1.0 - x * x)


@adjoint(np.arctan)
def arctan(g, ans, x):
    return g / (1.0 + x * x)


@adjoint(np.sinh)
def sinh(g, ans, x):
    return g * np.cosh(x)


@adjoint(np.cosh)
def cosh(g, ans, x):
    return g * np.sinh(x)


@adjoint(np.tanh)
def tanh(g, ans, x):
    return g * (1.0 - ans * ans)


@adjoint(np.arcsinh)
def arcsinh(g, ans, x):
    return g / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh)
def arccosh(g, ans, x):
    return g / np.sqrt(x * x - 1.0)


@adjoint(np.arctanh)
def arctanh(g, ans, x):
    return g / (1.0 - x * x)


@adjoint(np.absolute, np.fabs, abs)
def absolute(g, ans, x):
    return g * np.sign(x)


# the reductions' parameters are numpy's, in numpy's order (the lowering maps positional arguments by
# position; an `out` array is refused there)
@adjoint(np.sum)
def sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.broadcast_to(np.reshape(g, kept_shape(np.shape(a), axis, keepdims)), np.shape(a))


@adjoint(np.mean)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    # (an empty a has an empty gradient, whatever the factor: numpy's division never raises)
    return np.broadcast_to(np.reshape(g, kept_shape(np.shape(a), axis, keepdims))
                           * (np.size(ans) / np.maximum(np.size(a), 1)), np.shape(a))


@adjoint(np.max, np.amax)
def max(g, ans, a, axis=None, out=None, keepdims=False):
    tied = a == np.reshape(ans, kept_shape(np.shape(a), axis, keepdims))
    share = np.reshape(g, kept_shape(np.shape(a), axis, keepdims)) / np.sum(tied, axis=axis, keepdims=True).astype(a.dtype)
    return share * tied


@adjoint(np.min, np.amin)
def min(g, ans, a, axis=None, out=None, keepdims=False):
    tied = a == np.reshape(ans, kept_shape(np.shape(a), axis, keepdims))
    share = np.reshape(g, kept_shape(np.shape(a), axis, keepdims)) / np.sum(tied, axis=axis, keepdims=True).astype(a.dtype)
    return share * tied


@adjoint(np.prod)
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.reshape(g, kept_shape(np.shape(a), axis, keepdims)) * product_of_others(a, axis)


@adjoint(np.cumsum)
def cumsum(g, ans, a, axis=None, dtype=None, out=None):
    return reversed_cumsum(g, a, axis)


# np.concatenate and np.stack take a tuple of arrays: the lowering passes each array written in the
# tuple as an operand (grad/lower.SEQUENCE_OPS), up to eight
@adjoint(np.concatenate)
def concatenate(g, ans, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, axis=0, dtype=None,
                casting="same_kind"):
    parts = split_concatenated(g, (x0, x1, x2, x3, x4, x5, x6, x7), axis)
    return parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6], parts[7]


@adjoint(np.stack)
def stack(g, ans, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, axis=0, dtype=None,
          casting="same_kind"):
    parts = split_stacked(g, (x0, x1, x2, x3, x4, x5, x6, x7), axis)
    return parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6], parts[7]


@adjoint(np.var)
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    # (numpy's divisor, max(count - ddof, 0): ddof at least the count gives inf, a NaN gradient)
    count = np.maximum(np.float64(np.size(a)) / np.maximum(np.size(ans), 1) - ddof, 0.0)
    return np.reshape(g, kept_shape(np.shape(a), axis, keepdims)) * centered * (2.0 / count)


@adjoint(np.std)
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    count = np.maximum(np.float64(np.size(a)) / np.maximum(np.size(ans), 1) - ddof, 0.0)
    return np.reshape(g / ans, kept_shape(np.shape(a), axis, keepdims)) * centered * (1.0 / count)


@adjoint(np.reshape)
def reshape(g, ans, a, shape=None):
    return np.reshape(g, np.shape(a))


@adjoint(np.squeeze, np.expand_dims)
def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


# np.ravel(a) (also x.ravel(), x.flatten()) without an order is lowered with the rule of np.reshape
# (grad/lower.py), fused with the code around it; an order reads the elements in another sequence
@adjoint(np.ravel)
def ravel(g, ans, a, order="C"):
    return unravel(g, a, order)


@adjoint(np.transpose)
def transpose(g, ans, a, axes=None):
    return np.transpose(g, inverse_axes(axes, np.ndim(a)))


@adjoint(np.swapaxes)
def swapaxes(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


@adjoint(np.matmul)
def matmul(g, ans, a, b):
    return matmul_left(g, a, b), matmul_right(g, a, b)


@adjoint(np.dot)
def dot(g, ans, a, b):
    return dot_left(g, a, b), dot_right(g, a, b)


def getitem(x, index):
    """``x[index]`` (the op the generated code names for a subscript read)."""
    return x[index]


@adjoint(getitem)
def _getitem(g, ans, x, index):
    return scatter_index(g, x, index)


@adjoint(in_place_result)
def _in_place_result(g, ans, new, old, ufunc=None):
    return g, None


def astype(x, dtype, copy=True):
    """``x.astype(dtype)`` between float types."""
    return x.astype(dtype, copy=copy)


@adjoint(astype)
def _astype(g, ans, x, dtype, copy=True):
    return np.asarray(g).astype(x.dtype)


@adjoint(np.remainder, unbroadcast=True)
def remainder(g, ans, x, y):
    # x % y = x - floor(x / y) * y: slope 1 in x and -floor(x / y) in y away from the jumps (as jax, torch)
    return g, -g * np.floor(x / y)


@adjoint(np.full, unbroadcast=True)
def full(g, ans, shape, fill_value, dtype=None, order="C"):
    return None, float_result_adjoint(g, ans)


@adjoint(np.full_like, unbroadcast=True)
def full_like(g, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return None, float_result_adjoint(g, ans)


@adjoint(np.linspace, unbroadcast=True)
def linspace(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    # each element is start + t * (stop - start), t its fraction of the way (0 at start, 1 at an endpoint);
    # retstep is refused by the lowering
    moved, t = linspace_parts(float_result_adjoint(g, ans), num, endpoint, retstep, axis)
    return moved * (1.0 - t), moved * t


non_differentiable(
    np.sign, np.floor, np.ceil, np.trunc, np.rint, np.round, np.around, np.floor_divide, np.argmax, np.argmin, np.argsort, np.isnan, np.isinf, np.isfinite, np.signbit,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.any, np.all,
    np.shape, np.ndim, np.size, len, int, bool, round, range,
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
    np.eye, np.count_nonzero, np.nonzero, np.searchsorted,
)
