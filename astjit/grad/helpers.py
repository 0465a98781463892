"""Functions the generated gradient code calls.

The shape helpers (``broadcast_axes``, ``kept_shape``, ``inverse_axes``) compute static values from
static shapes: they are registered as ops of kind "static", so inside a jitted gradient they run once
per specialization and the reductions and reshapes around them compile into the Fragment. The others
(index scatter, matmul adjoints, reversed running sums, the final checks) run as Python between
Fragments.
"""

import sys
import weakref

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..graph.ops.registry import register


def zero_adjoint(g, ans):
    """``g``, or where it is a number and ``ans`` (the value it is the adjoint of) has axes, ``g`` filled
    into ``ans``'s shape in its float dtype: in a branch or loop an adjoint starts as ``0.0`` (the value
    overwritten, or not read, after it), which the rules of shape-changing ops (``reshape``, ``@``,
    ``transpose``) cannot take."""
    if np.ndim(g) == 0 and np.ndim(ans):
        dtype = np.result_type(ans)
        return np.full(np.shape(ans), g, dtype if dtype.kind in "fc" else np.result_type(g, np.float64))
    return g


def broadcast_axes(result_shape, operand_shape) -> tuple:
    """The axes of a broadcast result that an operand of ``operand_shape`` was stretched along (none
    for a result of fewer axes: an adjoint still its 0.0, see ``summed_shape``)."""
    lead = len(result_shape) - len(operand_shape)
    if lead < 0:
        return ()
    return tuple(range(lead)) + tuple(lead + i for i, d in enumerate(operand_shape)
                                      if d == 1 and result_shape[lead + i] != 1)


def summed_shape(result_shape, operand_shape) -> tuple:
    """The shape an operand's share of an adjoint takes once summed over ``broadcast_axes``: the
    operand's; or () for a result of fewer axes, which is an adjoint still its 0.0 (the statement that
    would have set it, under an ``if`` or on another iteration, did not run): it adds as a zero."""
    return () if len(result_shape) < len(operand_shape) else tuple(operand_shape)


def kept_shape(shape, axis, keepdims) -> tuple:
    """The shape of a reduction's result with its reduced axes kept as 1 (what ``keepdims=True`` gives),
    whichever ``keepdims`` the reduction had."""
    axes = tuple(range(len(shape))) if axis is None else normalize_axis_tuple(axis, len(shape))
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def product_of_others(a, axis):
    """For each element of ``a``, the product of the other elements of its reduction along ``axis``
    (``np.prod``'s derivative), from running products before and after it: ``ans / a`` is wrong where
    the product overflows, underflows or holds an inf, a NaN or a zero."""
    a = np.asarray(a)
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    if a.size == 0 or not axes:
        return np.ones_like(a)
    kept = [d for d in range(a.ndim) if d not in axes]
    order = kept + list(axes)
    moved = np.transpose(a, order)
    rows = moved.reshape(moved.shape[:len(kept)] + (-1,))
    ones = np.ones(rows.shape[:-1] + (1,), a.dtype)
    before = np.concatenate([ones, np.cumprod(rows[..., :-1], axis=-1)], axis=-1)
    after = np.concatenate([np.cumprod(rows[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    return np.transpose((before * after).reshape(moved.shape), tuple(int(i) for i in np.argsort(order)))


def inverse_axes(axes, ndim):
    """The permutation undoing ``np.transpose(x, axes)``."""
    if axes is None:
        return tuple(range(ndim))[::-1]
    axes = normalize_axis_tuple(axes, ndim, allow_duplicate=False) if len(axes) == ndim else None
    if axes is None:
        raise ValueError("axes don't match array")
    return tuple(int(i) for i in np.argsort(axes))


def _two(a, b):
    pass


def _three(a, b, c):
    pass


register("astjit.grad.broadcast_axes", broadcast_axes, "static", signature=_two, numpy=(broadcast_axes,))
register("astjit.grad.summed_shape", summed_shape, "static", signature=_two, numpy=(summed_shape,))
register("astjit.grad.kept_shape", kept_shape, "static", signature=_three, numpy=(kept_shape,))
register("astjit.grad.inverse_axes", inverse_axes, "static", signature=_two, numpy=(inverse_axes,))


def scatter_index(g, x, index):
    """The adjoint of ``x[index]``: ``g`` added at the positions read, zeros elsewhere (repeated integer
    indices add up, as the read used the element several times)."""
    out = np.zeros(np.shape(x), _scatter_dtype(g, x))
    if _basic(index):
        out[index] += g
    else:
        np.add.at(out, index, g)
    _OWNED[id(out)] = out
    return out


def scatter_add(acc, g, x, index):
    """``acc + scatter_index(g, x, index)``, the adjoint of ``x[index]`` added to ``x``'s adjoint so
    far: in place where ``acc`` is an array this module made for it that nothing else holds, the
    index is basic and no dtype changes (a loop reading ``x[i]`` at each step allocated and added a
    whole array per step: quadratic, 60 ms for 1,000 elements). The numbers are the same: an array
    made here never holds -0.0 (each element is a sum starting from +0.0 with a term that is not -0.0),
    so ``acc[i] + g`` is ``acc[i] + (0.0 + g)``. Where two NaNs meet, which one's sign and payload the
    sum keeps may differ (numpy's one-element add keeps the second's, its vectorized loop the first's):
    the sign of a NaN after arithmetic, which docs/semantics.md leaves open."""
    if type(acc) is np.ndarray and _OWNED.get(id(acc)) is acc and sys.getrefcount(acc) <= _SOLE_REFERENCES \
            and acc.shape == np.shape(x) and _basic(index) and _scatter_dtype(g, x) == acc.dtype \
            and (type(g) in (float, int) or getattr(g, "dtype", None) == acc.dtype):
        acc[index] += g
        return acc
    out = acc + scatter_index(g, x, index)
    if type(out) is np.ndarray:
        _OWNED[id(out)] = out
    return out


def _scatter_dtype(g, x):
    return np.result_type(x, g) if np.ndim(g) or not isinstance(g, float) else np.asarray(x).dtype


def _basic(index) -> bool:
    """An index of ints, slices, None and Ellipsis, or one boolean mask: no position twice."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, slice | int | np.integer | type(None) | type(Ellipsis)) for p in parts) or (
        len(parts) == 1 and getattr(parts[0], "dtype", None) == np.bool_)


# the arrays scatter_index and scatter_add made (by id; each entry goes with its array)
_OWNED = weakref.WeakValueDictionary()


def _references_of_an_argument(value) -> int:
    return sys.getrefcount(value)


def _sole_references() -> int:
    """What ``sys.getrefcount`` gives inside a helper for an argument only the caller's variable holds
    (the variable, the parameter, getrefcount's own argument: 3 on CPython 3.11)."""
    held = np.empty(0)
    return _references_of_an_argument(held)


_SOLE_REFERENCES = _sole_references()


def matmul_adjoints(g, a, b, want_a, want_b):
    """(adjoint of a, adjoint of b) for ``a @ b`` with numpy's rules for 1-D operands and batches."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    # the adjoint as the 2-D (or batched) product's result: 1-D operands had a unit axis added
    g2 = g.reshape(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]) + (a2.shape[-2], b2.shape[-1]))
    da = db = None
    if want_a:
        da = g2 @ np.swapaxes(b2, -1, -2)
        da = _sum_to(da, a2.shape)
        da = da[0] if a.ndim == 1 else da
    if want_b:
        db = np.swapaxes(a2, -1, -2) @ g2
        db = _sum_to(db, b2.shape)
        db = db[:, 0] if b.ndim == 1 else db
    return da, db


def matmul_left(g, a, b):
    """The adjoint of ``a`` in ``a @ b``."""
    if np.ndim(a) == 2 and np.ndim(b) == 2:        # the common case, without the general one's reshapes
        return g @ b.T
    return matmul_adjoints(g, a, b, True, False)[0]


def matmul_right(g, a, b):
    """The adjoint of ``b`` in ``a @ b``."""
    if np.ndim(a) == 2 and np.ndim(b) == 2:
        return a.T @ g
    return matmul_adjoints(g, a, b, False, True)[1]


def dot_left(g, a, b):
    return dot_adjoints(g, a, b, True, False)[0]


def dot_right(g, a, b):
    return dot_adjoints(g, a, b, False, True)[1]


def dot_adjoints(g, a, b, want_a, want_b):
    """``np.dot``: a matmul for 1-D and 2-D operands, a scaling where one is a scalar."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:         # each product summed back to its operand's shape
        return (_sum_to(g * b, np.shape(a)) if want_a else None), (_sum_to(g * a, np.shape(b)) if want_b else None)
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        return _dot_nd_adjoints(g, a, b, want_a, want_b)
    return matmul_adjoints(g, a, b, want_a, want_b)


def _dot_nd_adjoints(g, a, b, want_a, want_b):
    """``np.dot`` beyond 2-D: a's last axis summed against b's second-to-last (its only one for 1-D b);
    the result's axes are a's others, then b's others, so each adjoint contracts ``g`` with the other
    operand over the other operand's part of them."""
    na, nb = np.ndim(a), np.ndim(b)
    kb = 0 if nb == 1 else nb - 2
    b_other = [i for i in range(nb) if i != kb]
    ga = np.tensordot(g, b, axes=(list(range(na - 1, na - 1 + len(b_other))), b_other)) if want_a else None
    gb = np.moveaxis(np.tensordot(a, g, axes=(list(range(na - 1)), list(range(na - 1)))), 0, kb) if want_b else None
    return ga, gb


def _sum_to(value, shape):
    """``value`` summed over the axes it was broadcast along to ``shape`` (an array, 0-d for ``()``)."""
    axes = broadcast_axes(np.shape(value), shape)
    return np.asarray(np.sum(value, axis=axes)).reshape(shape) if axes else value


def check_scalar(value, name):
    """The differentiated function must return one real number."""
    if np.ndim(value) != 0 or not np.issubdtype(np.asarray(value).dtype, np.floating):
        shape = np.shape(value)
        raise TypeError(f"astjit.grad({name}) needs a function returning a real scalar; it returned "
                        f"{type(value).__name__} of shape {shape} and dtype {np.asarray(value).dtype}")


def gradient_of(adjoint, x):
    """The gradient returned for argument ``x``: an array of ``x``'s shape and dtype (zeros where no
    contribution reached it); for a Python float a float, for a numpy scalar a scalar of its type."""
    if type(x) is float:              # (not np.float64, a subclass of float: it gets an np.float64)
        return float(np.sum(adjoint)) if np.ndim(adjoint) else float(adjoint)
    dtype = np.asarray(x).dtype
    out = np.asarray(adjoint, dtype=dtype)
    if out.shape != np.shape(x):
        out = np.broadcast_to(out, np.shape(x)).copy() if out.ndim == 0 else _sum_to(out, np.shape(x))
    if out is adjoint and isinstance(x, np.ndarray) and (out.base is not None or not out.flags.writeable):
        out = out.copy()
    if not isinstance(x, np.ndarray) and out.ndim == 0:
        return out[()]
    return np.array(out, copy=True) if out is x else out


def fresh_copy(value):
    """A copy of a gradient array (numbers are immutable: as they are)."""
    return value.copy() if isinstance(value, np.ndarray) else value


def check_differentiable(value, name, function):
    if isinstance(value, float):
        return
    dtype = getattr(value, "dtype", None)
    if dtype is None or not np.issubdtype(dtype, np.floating):
        kind = dtype if dtype is not None else type(value).__name__
        raise TypeError(f"astjit.grad({function}): argument {name} must be a float array or float to "
                        f"differentiate with respect to it, got {kind}")


def reversed_cumsum(g, a, axis):
    """The adjoint of ``np.cumsum(a, axis)``: each element adds to every later running sum, so its
    adjoint is the running sum of ``g`` taken from the end (over the flattened array for ``axis=None``),
    in ``a``'s shape and dtype."""
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.reshape(g, (-1,))))), np.shape(a)).astype(a.dtype)
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis).astype(a.dtype)


def in_place_result(new, old, ufunc=None):
    """What ``old op= v`` leaves in ``old``, given ``new = old op v``: on an array numpy's in-place op
    keeps its dtype (casting ``same_kind``: float into an integer array raises TypeError) and its
    shape (a larger broadcast result raises ValueError); on anything else it is ``new``. Where the
    op is ``ufunc``, its error is numpy's own (UFuncTypeError, the message of the in-place op)."""
    if not isinstance(old, np.ndarray) or isinstance(new, np.ndarray) and new.dtype == old.dtype \
            and new.shape == old.shape:
        return new
    kind = np.asarray(new)
    if ufunc is not None and (np.shape(new) != old.shape or not np.can_cast(kind.dtype, old.dtype, "same_kind")):
        operand = np.zeros(kind.shape, kind.dtype)    # (the ufunc's loop for the result's type, into old's)
        with np.errstate(all="ignore"):
            ufunc(operand, operand, out=np.empty_like(old))
    out = np.empty_like(old)
    np.copyto(out, new, casting="same_kind")
    return out


def float_result_adjoint(g, ans):
    """``g`` (filled to ``ans``'s shape where it is still a branch's or loop's 0.0: ``zero_adjoint``), or
    zeros where the result ``ans`` is an integer array (``np.full(3, x, dtype=int)``, a step function of
    ``x``: no gradient)."""
    g = zero_adjoint(g, ans)
    return g if np.asarray(ans).dtype.kind in "fc" else np.zeros(np.shape(g))


def linspace_parts(g, num, endpoint, retstep, axis):
    """The adjoint of ``np.linspace(start, stop, num, axis=axis)`` with the new axis moved first, and how
    far along from ``start`` to ``stop`` each element is (0 to 1, shaped to broadcast against it)."""
    if retstep:
        raise NotImplementedError("the gradient of np.linspace(..., retstep=True)")
    moved = np.moveaxis(np.asarray(g), axis, 0)
    fractions = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    return moved, np.reshape(fractions, (-1,) + (1,) * (moved.ndim - 1))


def unravel(g, a, order):
    """The adjoint of ``np.ravel(a, order)``: ``g`` put back, in ``a``'s shape, at the positions ravel
    read each element from. 'A' and 'K' follow ``a``'s memory layout, so the positions are found by
    ravelling an index array of ``a``'s layout in the same order."""
    a = np.asarray(a)
    if order in ("A", "a"):                          # Fortran order only for a Fortran-contiguous array
        order = "F" if a.flags.f_contiguous else "C"
    positions = np.empty_like(a, dtype=np.intp)      # (empty_like keeps a's layout, which 'K' reads in)
    positions[...] = np.arange(a.size).reshape(a.shape)
    out = np.empty(a.size, dtype=np.result_type(g))
    out[np.ravel(positions, order)] = np.reshape(g, (-1,))
    return out.reshape(a.shape)


def _back(part, operand):
    """An operand's share of an adjoint, in the operand's shape and (float) dtype."""
    dtype = np.asarray(operand).dtype
    part = np.reshape(part, np.shape(operand))
    return part.astype(dtype) if dtype.kind == "f" else part


def split_concatenated(g, arrays, axis):
    """The adjoints of the arrays ``np.concatenate`` joined (``None``: an unused rule slot): ``g`` cut
    at their sizes along ``axis`` (flattened for ``axis=None``), padded with ``None`` to eight."""
    given = [a for a in arrays if a is not None]
    if axis is None:
        cuts = np.cumsum([np.size(a) for a in given])[:-1]
        parts = np.split(np.reshape(g, (-1,)), cuts)
    else:
        cuts = np.cumsum([np.shape(a)[axis] if np.ndim(a) else 1 for a in given])[:-1]
        parts = np.split(g, cuts, axis=axis)
    return [_back(p, a) for p, a in zip(parts, given)] + [None] * (len(arrays) - len(given))


def split_stacked(g, arrays, axis):
    """The adjoints of the arrays ``np.stack`` joined: ``g``'s slices along the new ``axis``."""
    given = [a for a in arrays if a is not None]
    moved = np.moveaxis(g, axis, 0)
    return [_back(moved[i], a) for i, a in enumerate(given)] + [None] * (len(arrays) - len(given))
