"""The rules astjit ships. Exact ones run for every jitted function; the others change rounding or
special values and run only under ``fastmath=True`` or where a function names them.

Every rule is checked per match (graph/passes/rewrite): the replacement must have the root's dtype
and shape, and a replacement that is one of the pattern's own values (``x * 1 -> x``) applies only
where nothing could tell the new array from the old one.
"""

import numpy as np

from .rule import Rule


def _dtype_kind(name, kinds):
    return lambda m: m[name].dtype is not None and m[name].dtype.kind in kinds


def _floats_1d_alike(m):
    x, y = m["x"], m["y"]
    return (x.is_array and y.is_array and x.ndim == 1 and x.shape == y.shape and x.dtype == y.dtype
            and x.dtype in (np.float32, np.float64))


def _constants(*names):
    return lambda m: all(m[n].is_constant and m[n].is_python_number for n in names)


def _float_constant_chain(m):
    """``x`` of floats and two Python numbers: in ints the first step wraps in ``x``'s dtype (int8 ``(x * 2)
    * 0.5`` of 100 is -28.0, ``x * 1.0`` would be 100.0), and an int constant product may not fit it."""
    return m["x"].dtype is not None and m["x"].dtype.kind == "f" and _constants("a", "b")(m)


EXACT = [
    # x * 1 is x for every float (NaN, inf, -0.0) and int: the result type must be x's (checked); not
    # complex, where numpy multiplies in full: (inf+0j) * 1 is inf+nanj, (1-0j) * 1 is 1+0j. A
    # signaling NaN is not quieted, as numpy's multiply would: as in kernels, where LLVM folds x * 1.0
    # (docs/semantics.md); kept for floats since it saves a pass where a block runs on numpy
    Rule(lambda x: x * 1, lambda x: x, where=_dtype_kind("x", "iuf"), name="multiply_by_one"),
    Rule(lambda x: 1 * x, lambda x: x, where=_dtype_kind("x", "iuf"), name="multiply_by_one_left"),
    # x + 0 is x for integers only: -0.0 + 0.0 is 0.0
    Rule(lambda x: x + 0, lambda x: x, where=_dtype_kind("x", "iu"), name="add_zero"),
    # x - 0 is x for floats too: -0.0 - 0.0 is -0.0 (and for complex, left out as rare)
    Rule(lambda x: x - 0, lambda x: x, where=_dtype_kind("x", "iuf"), name="subtract_zero"),
    # numpy raises on -x of booleans: that error must stay
    Rule(lambda x: -(-x), lambda x: x, where=_dtype_kind("x", "iufc"), name="double_negation"),  # noqa: B002
    Rule(lambda x, d: x.astype(d), lambda x, d: x,
         where=lambda m: m["x"].is_array and m["d"].is_constant and np.dtype(m["d"].value) == m["x"].dtype,
         name="astype_same_dtype"),

]

FASTMATH = [
    # BLAS's dot instead of a product array and its sum: not by default, since the sum is reordered
    # and float32 dot accumulates in float32 (6.7e-6 relative off numpy on 2M elements, where a
    # compiled sum is within 1e-7), and the dot hands its block to numpy, where the compiled sum
    # needs no product array at all
    Rule(lambda x, y: np.sum(x * y), lambda x, y: np.dot(x, y), where=_floats_1d_alike, exact=False,
         name="sum_of_products_to_dot"),
    Rule(lambda x: np.exp(np.log(x)), lambda x: x, where=_dtype_kind("x", "f"), exact=False, name="exp_of_log"),
    Rule(lambda x: np.log(np.exp(x)), lambda x: x, where=_dtype_kind("x", "f"), exact=False, name="log_of_exp"),
    Rule(lambda x, a, b: (x * a) * b, lambda x, a, b: x * (a * b), where=_float_constant_chain, exact=False,
         name="fold_constant_products"),
    Rule(lambda x, a, b: (x + a) + b, lambda x, a, b: x + (a + b), where=_float_constant_chain, exact=False,
         name="fold_constant_sums"),
]
