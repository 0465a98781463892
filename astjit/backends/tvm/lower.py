"""Lower one TVM segment of a specialized graph to a TE PrimFunc with static shapes.

Every value inside the kernel is a ``Lowered``: a shape, a dtype and ``at(*index) -> PrimExpr``.
Elementwise ops and views compose ``at`` functions, so a chain of them becomes one expression in one
loop nest (nothing materialized); reductions become TE reduction stages. Inputs are placeholders (arrays)
or scalar parameters (Python and numpy scalars); outputs are the segment's outputs.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import Unsupported
from ...graph.ops import OPS
from ...graph.ops.reductions import ARG_REDUCTIONS
from ...graph.types import Static, WeakScalar
from ...runtime.fpstate import silenced
from . import casts
from . import scalar_math as sm
from .executable import KernelSignature
from .expression_size import FUSED_OPS_AT_MOST, STAGE_ABOVE, SizeMemo, substituted_size
from .float_sums import is_float_sum
from .runtime import tvm_module
from .sum_order import IN_ORDER, PAIRWISE, summation_order
from .support import is_float_divmod

tvm = tvm_module()
from tvm import te, tirx  # noqa: E402

WEAK_DTYPES = {bool: "bool", int: "int64", float: "float64"}
SUMMED_STAGE_ABOVE = 64      # expression size (expression_size) of a costly summed value that gets a stage
ARG_STAGE_ABOVE = 24         # the same for the operand of an argmax or argmin (_stage_arg_operand)


@dataclass
class Lowered:
    shape: tuple
    dtype: str
    at: Callable
    constant: object = None         # the Python or numpy scalar, for a constant operand
    staged: bool = False            # computed in a stage of its own (_staged)
    fused_ops: int = 0              # elementwise ops in its expression (0: a load of an input or stage)
    python_int: bool = False        # a Python int passed in (numpy makes it a Python float first)

    def cast_at(self, dtype):
        if dtype == self.dtype:
            return self.at
        if self.python_int and dtype == "float32":
            # numpy converts a Python int beside float32 to a Python float, then to float32: two
            # roundings (2**60 + 2**36 + 1 is 1.1529215e18, where int64 to float32 at once gives 1.1529216e18)
            wide, narrow = casts.converter(self.dtype, "float64"), casts.converter("float64", dtype)
            return lambda *i: narrow(wide(self.at(*i)))
        if dtype == "bool":
            return lambda *i: sm.truthy(self.at(*i), self.dtype)
        if sm.is_float(dtype) and self.constant is not None:     # cast here; shield the result
            c = tirx.const(float(np.dtype(dtype).type(self.constant)), dtype)
            return lambda *i: sm.shielded(c, dtype)
        if self.constant is not None and not sm.is_float(self.dtype) and self.dtype != "bool":
            # an int constant wrapped here as numpy's cast wraps it (``np.where(c, -2, a)`` of uint16:
            # 65534): TVM refuses a negative constant of an unsigned type
            c = tirx.const(np.array(self.constant, self.dtype).astype(dtype).item(), dtype)
            return lambda *i: c
        convert = casts.converter(self.dtype, dtype)
        if sm.is_float(self.dtype) and not sm.is_float(dtype):   # reads its value thrice: bind it once
            return lambda *i: sm.apply_once(convert, [self.at(*i)])
        return lambda *i: convert(self.at(*i))


def broadcast_index(shape, out_ndim):
    """Map an output index to an operand's index under numpy broadcasting."""
    offset = out_ndim - len(shape)

    def mapper(idx):
        return tuple(0 if d == 1 else idx[offset + k] for k, d in enumerate(shape))

    return mapper


def operand(values, ctx, node):
    t = ctx.types[node]
    if isinstance(t, Static):
        v = t.value
        if isinstance(v, np.generic):
            dt = str(v.dtype)
            v = v.item()
        else:
            dt = {bool: "bool", int: "int64", float: "float64"}.get(type(v))
            if dt is None:
                raise Unsupported(f"constant {v!r} in a kernel")
            if dt == "int64" and 2**63 <= v < 2**64:
                dt = "uint64"          # (only a uint64 operand takes it: numpy refuses it for int64)
        c = tirx.const(v, dt)
        return Lowered((), dt, lambda *i: sm.shielded(c, dt), constant=v)
    return values[node]


def python_kind(ctx, node):
    """What numpy's resolve_dtypes expects for an operand: a dtype, or a Python type for weak scalars."""
    t = ctx.types[node]
    if isinstance(t, WeakScalar):
        # resolve_dtypes rejects the Python bool type; a bool is the lowest kind anyway, so np.bool_ is exact
        return np.dtype(bool) if t.kind is bool else t.kind
    if isinstance(t, Static):
        v = t.value
        if type(v) is bool:
            return np.dtype(bool)
        if type(v) in (int, float, complex):
            return type(v)
        return np.asarray(v).dtype
    return t.dtype


class SegmentLowering:
    def __init__(self, ctx, segment):
        self.ctx = ctx
        self.segment = segment
        self.values: dict = {}
        self.params: list = []
        self.input_kinds: list = []
        self.kept_sizes: dict = {}
        self.size_memo = SizeMemo()
        self.probe: dict = {}            # rank -> the index variables every value is sized at
        self.probing = False

    def lower(self, name) -> KernelSignature:
        for k, n in enumerate(self.segment.inputs):
            self.add_input(n, k)
        readers = {n: 0 for n in self.segment.nodes}
        for n in self.segment.nodes:
            for o in n.operands:
                if o in readers:
                    readers[o] += 1
        costly = set()
        # an output that a reduction of the kernel reads too (``y = ...; s = y.sum(); return y, s``):
        # computed into its output buffer first and read from there, where the reduction would
        # substitute its whole expression and compute it again from the inputs (the quick start's tanh
        # chain: twice the math and three inputs read twice, 1.6x numpy's time)
        reduced = {o for n in self.segment.nodes if OPS[n.op].kind == "reduction" for o in n.operands}
        output_index = {}
        for k, n in enumerate(self.segment.outputs):
            output_index.setdefault(n, k)
        early = {}
        # the values float sums read: exact_sums emits a sum's element in a few places (a block's lanes,
        # its tail, each block of an unrolled tree), and each copy of a chain of exp, log, tanh... cost
        # TVM and LLVM about 0.1 s to compile: such a value, if large (SUMMED_STAGE_ABOVE), is computed
        # in a stage the schedule keeps (a small one, ``(a - b) ** 2``, costs less than a pass over memory)
        summed = {n.args[0] for n in self.segment.nodes if self.ctx.device == "cpu" and is_float_sum(self.ctx, n)}
        # values whose expressions hold a costly function once kept stages are inlined back: ``costly``
        # forgets a value it keeps (its readers are no more costly to compute twice), but the generic
        # schedule inlines it back, so a float sum of ``r * r`` with ``r = np.log(x) - np.log(y)`` emitted
        # the logs' expansions at each of its places (7 s to compile the mean squared log error)
        heavy = set()
        for n in self.segment.nodes:
            if is_float_sum(self.ctx, n) and n.args[0] in summed and n.args[0] in heavy:
                self._stage_summed(n.args[0])
            if is_float_divmod(self.ctx, n):
                self._stage_choices(n)
            if n.op.removeprefix("np.") in ARG_REDUCTIONS:
                self._stage_arg_operand(n.args[0])
            lv = self.node(n)
            elementwise = OPS[n.op].kind == "elementwise"
            size = self._size(lv) if elementwise and lv.shape else 0
            if (size > STAGE_ABOVE or lv.fused_ops > FUSED_OPS_AT_MOST) and self._stage_operands(n):
                lv = self.node(n)
                size = self._size(lv)
            # (a float ``//`` or ``%`` branches on signs and zeros like a transcendental: ``(a - 1) % 2.5``
            # read three times under a mean compiled 1 s longer per read)
            if elementwise and (sm.transcendental(n.op) or is_float_divmod(self.ctx, n)
                                or any(o in costly for o in n.operands)):
                costly.add(n)
            if elementwise and (n in costly or any(o in heavy for o in n.operands)):
                heavy.add(n)
            if n in costly and readers[n] >= 2 and lv.shape and (n in summed and size > SUMMED_STAGE_ABOVE
                                                                 or is_float_divmod(self.ctx, n)):
                lv = _staged(n, lv)            # (kept: the generic schedule would inline it back)
            elif n in costly and readers[n] >= 2 and lv.shape:
                lv = _kept(n, lv)              # computed once, read twice (softmax's exponentials)
                self.kept_sizes[f"keep{n.id}"] = size   # (the generic schedule inlines it back)
                costly.discard(n)
            if n in reduced and n in output_index and lv.shape and self.ctx.types[n].shape:
                k = output_index[n]
                tensor = te.compute(lv.shape, _output_body(lv, True), name=f"out{k}")
                early[k] = (tensor, lv)                         # (the output: its own expression)
                lv = Lowered(lv.shape, lv.dtype, _placeholder_body(tensor, lv.dtype))
            self.values[n] = lv
        outs, out_specs = [], []
        for k, n in enumerate(self.segment.outputs):
            t = self.ctx.types[n]
            shape = t.shape if t.shape else (1,)
            if k in early:
                tensor, lv = early[k]
            else:
                lv = self.values[n]
                tensor = te.compute(shape, _output_body(lv, bool(t.shape)), name=f"out{k}")
            outs.append(tensor)
            out_specs.append((shape, np.dtype(lv.dtype), t))
        func = distinct_lets(te.create_prim_func(self.params + outs)).with_attr("global_symbol", name)
        return KernelSignature(func, self.input_kinds, out_specs)

    def _stage_summed(self, o) -> None:
        """A costly value that a float sum reads, computed in a stage of its own (``summed``, lower)."""
        ov = self.values.get(o)
        if ov is not None and ov.shape and ov.fused_ops and not ov.staged and o not in self.segment.inputs \
                and self._size(ov) > SUMMED_STAGE_ABOVE:
            self.values[o] = _staged(o, ov)

    def _stage_arg_operand(self, o) -> None:
        """The operand of an argmax or argmin, computed in a stage of its own where it is an expression
        of more than ARG_STAGE_ABOVE nodes: the reduction's combiner reads each value several times (a
        NaN test, two comparisons, a choice), and TVM's passes over it took 13 s for ``np.log(a).argmax()``,
        3 s for ``(a // 3.0).argmin()``, at every new length."""
        ov = self.values.get(o)
        if ov is not None and ov.shape and ov.fused_ops and not ov.staged and o not in self.segment.inputs \
                and self._size(ov) > ARG_STAGE_ABOVE:
            self.values[o] = _staged(o, ov)

    def _stage_choices(self, n) -> None:
        """The operands of a float ``//`` or ``%`` that hold a choice (``clip``, ``where``, a NaN-aware
        ``maximum``), computed in stages of their own: its sign and zero tests read them several times,
        and TVM's passes took 0.7 s each over such a kernel (``np.mod(a, np.clip(a, lo, hi))``: 4-6 s
        to compile, nested in ``np.maximum``: 20-50 s), though small by its size (expression_size)."""
        for o in dict.fromkeys(n.operands):
            ov = self.values.get(o)
            if ov is None or not ov.shape or o in self.segment.inputs or ov.staged or not ov.fused_ops:
                continue
            if sm.holds_choice(self._probed(ov)):
                self.values[o] = _staged(o, ov)

    def _stage_operands(self, n) -> bool:
        """``n``'s value, Lets substituted, is past what TVM's passes take in reasonable time
        (expression_size): compute its compound operands in stages of their own; True if any was."""
        staged = False
        for o in dict.fromkeys(n.operands):
            ov = self.values.get(o)
            if ov is None or not ov.shape or o in self.segment.inputs or ov.staged:
                continue
            self.values[o] = _staged(o, ov)
            staged = True
        return staged

    def _size(self, lv) -> int:
        """``lv``'s expression size as TVM's passes see it once the schedule has inlined the kept stages.
        Every value is sized at the same index (``probe``), where elementwise values keep their
        expressions (``elementwise``): a chain's value reuses its operand's instead of building the
        whole chain again, and the size memo counts only what is new."""
        return substituted_size(self._probed(lv), STAGE_ABOVE + 1, self.kept_sizes, self.size_memo)

    def _probed(self, lv):
        """``lv``'s expression at the shared index of its rank (``probe``)."""
        rank = len(lv.shape)
        index = self.probe.setdefault(rank, tuple(tirx.Var(f"i{d}", "int64") for d in range(rank)))
        self.probing = True
        try:
            return lv.at(*index)
        finally:
            self.probing = False

    def add_input(self, n, k):
        t = self.ctx.types[n]
        if isinstance(t, WeakScalar):
            dt = WEAK_DTYPES.get(t.kind)
            if dt is None:
                raise Unsupported(f"a Python {t.kind.__name__} operand in a kernel")
            v = te.var(f"s{k}", dt)
            self.params.append(v)
            self.input_kinds.append("scalar")
            self.values[n] = Lowered((), dt, _constant_body(v, dt), python_int=t.kind is int)
        elif t.scalar or t.shape == ():
            dt = str(t.dtype)
            v = te.var(f"s{k}", dt)
            self.params.append(v)
            self.input_kinds.append("item")
            self.values[n] = Lowered((), dt, _constant_body(v, dt))
        else:
            p = te.placeholder(t.shape, str(t.dtype), name=f"in{k}")
            self.params.append(p)
            self.input_kinds.append("array")
            self.values[n] = Lowered(t.shape, str(t.dtype), _placeholder_body(p, str(t.dtype)))

    def node(self, n) -> Lowered:
        kind = OPS[n.op].kind
        if kind == "elementwise":
            return self.elementwise(n)
        if kind == "reduction":
            return self.reduction(n)
        if kind == "view":
            return self.view(n)
        if kind == "creation":
            return self.creation(n)
        raise Unsupported(f"{n.op} has no TVM lowering")

    # -- elementwise --------------------------------------------------------------------------------
    def elementwise(self, n) -> Lowered:
        from .support import elementwise_rule

        rule, operands, loop_dtypes = elementwise_rule(self.ctx, n)
        out_t = self.ctx.types[n]
        out_dtype = str(out_t.dtype)
        shape = out_t.shape
        ins = [operand(self.values, self.ctx, o) for o in operands]
        mappers = [broadcast_index(lv.shape, len(shape)) for lv in ins]
        getters = [lv.cast_at(dt) for lv, dt in zip(ins, loop_dtypes)]
        probed = {}      # while sizing: the expression at each index (kept with it, for its id)

        def at(*i):
            key = tuple(x if isinstance(x, int) else id(x) for x in i) if self.probing else None
            if key in probed:
                return probed[key][1]
            exprs = [g(*m(i)) for g, m in zip(getters, mappers)]
            result = sm.apply_once(rule, exprs)
            result_dtype = sm.dtype_of(result)
            if result_dtype != out_dtype:
                result = sm.truthy(result, result_dtype) if out_dtype == "bool" else result.astype(out_dtype)
            if key is not None:
                probed[key] = (i, result)
            return result

        return Lowered(shape, out_dtype, at, fused_ops=1 + sum(lv.fused_ops for lv in ins))

    # -- reductions ---------------------------------------------------------------------------------
    def reduction(self, n) -> Lowered:
        info = self.ctx.info[n]
        src = self.values[n.args[0]]
        out_t = self.ctx.types[n]
        out_dtype = str(out_t.dtype)
        name = n.op.removeprefix("np.")
        axes = info["axes"]
        keepdims = info["keepdims"]
        kept = [d for d in range(len(src.shape)) if d not in axes]
        count = 1
        for a in axes:
            count *= src.shape[a]
        if name in ARG_REDUCTIONS:
            return self.arg_reduction(n, src, out_t, axes, keepdims, kept, name == "argmax")
        # numpy's order of adding on the CPU; a GPU's reductions add in its own order, in float64
        cpu = self.ctx.device == "cpu"
        order, run = summation_order(self.ctx, n) if is_float_sum(self.ctx, n) and count != 1 and cpu else (None, 0)
        if name in ("any", "all"):       # counts of the elements that decide (not zero; zero)
            acc = "int64"
        elif is_float_sum(self.ctx, n) and cpu:
            acc = src.dtype if sm.is_float(src.dtype) else "float64"    # (numpy's: float32 in float32)
        elif name in ("sum", "prod", "mean", "var", "std") and (out_dtype.startswith("float")
                                                                or name in ("mean", "var", "std")):
            acc = "float64"
        elif name in ("sum", "prod") and out_dtype.startswith("int"):
            # numpy's signed sums and products wrap; TVM's signed arithmetic is marked as never
            # overflowing, and LLVM then folded a wrapped int64 sum's ``> 0`` the wrong way: the
            # unsigned integer of the same width adds and multiplies to the same bits, defined
            acc = "u" + out_dtype
        elif name in ("sum", "prod"):
            acc = out_dtype
        else:
            acc = src.dtype
        rshape = tuple(src.shape[a] for a in axes)
        out_shape = out_t.shape if out_t.shape else (1,)

        # float max/min: a NaN-aware combiner cannot be split into parallel partial results by TVM
        # (serial, unvectorized: 5x slower than numpy), so reduce with the plain max/min and count NaNs
        # in a second reduction; the result is NaN wherever a NaN was seen, as in numpy.
        split_nan = name in ("max", "min") and src.dtype.startswith("float")

        def accumulated(value):
            return sm.widen(value, src.dtype, acc) if src.dtype != acc else value

        def reduce_body(*i, what=name):
            ks = [te.reduce_axis((0, e), name=f"k{j}") for j, e in enumerate(rshape)]
            outer = list(i)
            if keepdims:
                outer = [outer[d] for d in kept]
            if not out_t.shape:
                outer = []
            full = []
            it_outer, it_k = iter(outer), iter(ks)
            for d in range(len(src.shape)):
                full.append(next(it_k) if d in axes else next(it_outer))
            value = src.at(*full)
            if what == "squares":         # var, std: the squared deviations from the mean (numpy's order)
                deviation = accumulated(value) - means[i if out_t.shape else (0,)]
                return te.sum(deviation * deviation, axis=ks)
            if name in ("any", "all"):
                return te.sum(_deciding(name, value, src.dtype), axis=ks)
            if name in ("sum", "prod") and not sm.is_float(acc):
                return _wrapping_reducer("add" if name == "sum" else "multiply", acc)(accumulated(value), axis=ks)
            if name in ("sum", "mean", "var", "std"):
                return te.sum(accumulated(value), axis=ks)
            if name == "prod":
                return _prod_reducer(acc)(accumulated(value), axis=ks)
            if what == "nan_count":   # NaNs << 32 + elements other than the identity-side infinity
                far = tirx.const(-np.inf if name == "max" else np.inf, src.dtype)

                def code(v):
                    return te.if_then_else(te.isnan(v), tirx.const(1 << 32, "int64"),
                                           te.if_then_else(tirx.EQ(v, far), tirx.const(0, "int64"),
                                                           tirx.const(1, "int64")))

                return te.sum(sm.apply_once(code, [value]), axis=ks)
            if split_nan:
                return (te.max if what == "max" else te.min)(value, axis=ks)
            if what == "max":
                return _max_reducer(src.dtype)(value, axis=ks)
            return _min_reducer(src.dtype)(value, axis=ks)

        if count == 1:
            # one element per result (axis=(), or reduced axes of length 1): its value. A reduction of
            # extent 1 is scheduled as a spatial block, and an epilogue (``.min() < 1``) was then folded
            # into every step of the reduction, giving a wrong result.
            def body(*i):
                outer = [i[d] for d in kept] if keepdims else list(i)
                if not out_t.shape:
                    outer = []
                it_outer = iter(outer)
                full = [0 if d in axes else next(it_outer) for d in range(len(src.shape))]
                value = src.at(*full) if src.shape else src.at()
                if name in ("any", "all"):
                    return _deciding(name, value, src.dtype)
                value = accumulated(value)
                if name in ("var", "std"):       # one element: 0, or NaN for NaN and infinities
                    deviation = sm.shielded(value, acc) - sm.shielded(value, acc)      # not folded to 0
                    return deviation * deviation
                if name in ("sum", "mean") and sm.is_float(acc):
                    # numpy adds to its identity, 0.0: the sum of [-0.0] is 0.0 (a zero the simplifier
                    # cannot fold away)
                    return sm.shielded(tirx.const(0.0, acc), acc) + value
                return value
        else:
            body = reduce_body
        # a reduction that keeps the last axis reads whole rows: schedule.py reduces them column-wise
        # (numpy adds the rows in order); numpy's pairwise sums are made exact by exact_sums
        column = "col" if order == IN_ORDER or kept and kept[-1] == len(src.shape) - 1 and count != 1 else ""
        # how exact_sums sums: ``_run<k>``, the pairwise sums of runs of the last k reduced axes added in
        # order; ``_buffered``, elements cast as they are added (the mean, var of ints) in numpy's buffers
        runs = f"_run{run}" if order == PAIRWISE and run < len(axes) else ""
        buffered = "_buffered" if order == PAIRWISE and src.dtype != acc and not runs else ""   # (runs: one buffer)
        if order == PAIRWISE:
            column = PAIRWISE
        means = None
        if name in ("var", "std") and count != 1:
            # numpy: the mean first (its sum / count), then the sum of squared deviations from it
            sums = te.compute(out_shape, _plain(body), name=f"{column}red{n.id}{runs}{buffered}")
            means = te.compute(out_shape, _plain(lambda *i: sums[i] / tirx.const(float(count), acc)),
                               name=f"mean{n.id}")
            body = functools.partial(reduce_body, what="squares")
            buffered = ""                                 # (the deviations are of the sum's type)
        # one element per result: a stage the schedules keep (inlined into its reader, the shielded load
        # then held the element's Let bindings, and LLVM's code generator rejected a second binding)
        tensor = te.compute(out_shape, _plain(body),
                            name=f"stage{n.id}" if count == 1 else
                            column + (f"red{n.id}" if means is None else f"var{n.id}") + runs + buffered)
        nans = None
        if split_nan and count != 1:
            nans = te.compute(out_shape, _plain(lambda *i: reduce_body(*i, what="nan_count")),
                              name=f"{column}nan{n.id}")

        def at(*i):
            index = i if out_t.shape else (0,)
            value = sm.shielded(tensor[index], acc)
            if name in ("any", "all"):          # any: some element is not zero; all: none is zero
                return value > tirx.const(0, acc) if name == "any" else tirx.EQ(value, tirx.const(0, acc))
            if name in ("var", "std"):           # numpy divides by max(count - ddof, 0): 0 gives inf or nan
                # (shielded: TVM's simplifier refuses a division by the constant 0.0)
                value = value / sm.shielded(tirx.const(float(max(count - info["ddof"], 0)), acc), acc)
                if name == "std":
                    value = tirx.sqrt(value)
                return value.astype(out_dtype) if acc != out_dtype else value
            if name == "mean":
                if out_dtype == "float32":
                    return value.astype("float32") / tirx.const(float(count), "float32")
                return (value / tirx.const(float(count), acc)).astype(out_dtype)
            if nans is not None:
                # the plain reducer starts from the lowest finite value: all -inf must still give -inf
                code = nans[index]
                far = tirx.const(-np.inf if name == "max" else np.inf, out_dtype)
                value = te.if_then_else(code >= tirx.const(1 << 32, "int64"), tirx.const(np.nan, out_dtype),
                                        te.if_then_else(code == tirx.const(0, "int64"), far, value))
            if acc == "u" + out_dtype:           # (its bits as the signed result: unbounded by TVM)
                return sm.wrap_int(value, acc, out_dtype)
            return value.astype(out_dtype) if acc != out_dtype else value

        return Lowered(out_t.shape, out_dtype, at)

    def arg_reduction(self, n, src, out_t, axes, keepdims, kept, largest: bool) -> Lowered:
        """argmax, argmin: the first index of the largest (smallest) element, or of the first NaN, as
        numpy's; the index is flat over the reduced axes (all of them for ``axis=None``) in C order.
        One reduction of (index, value) pairs whose combiner prefers a NaN, then the larger (smaller)
        value, then the smaller index: an order, so any split of the work gives the same pair."""
        dtype = "int8" if src.dtype == "bool" else src.dtype
        rshape = [src.shape[a] for a in axes]
        strides = [int(np.prod(rshape[k + 1:], dtype=np.int64)) for k in range(len(rshape))]
        out_shape = out_t.shape if out_t.shape else (1,)
        floating = sm.is_float(dtype)

        def combine(x, y):
            (xi, xv), (yi, yv) = x, y
            better = yv > xv if largest else yv < xv
            earlier = yi < xi
            if floating:
                xn, yn = te.isnan(xv), te.isnan(yv)
                neither = tirx.And(tirx.Not(xn), tirx.Not(yn))
                same = tirx.Or(tirx.And(xn, yn), tirx.And(neither, tirx.EQ(xv, yv)))
                take = tirx.Or(tirx.And(yn, tirx.Not(xn)), tirx.Or(tirx.And(neither, better), tirx.And(same, earlier)))
            else:
                take = tirx.Or(better, tirx.And(tirx.EQ(xv, yv), earlier))
            return tirx.Select(take, yi, xi), tirx.Select(take, yv, xv)

        def identity(ti, tv):
            if floating:
                far = tirx.const(-np.inf if largest else np.inf, dtype)
            else:
                far = tirx.min_value(dtype) if largest else tirx.max_value(dtype)
            return tirx.const(np.iinfo(np.int64).max, "int64"), far

        reducer = te.comm_reducer(combine, identity, name="argmax" if largest else "argmin")

        def body(*i):
            ks = [te.reduce_axis((0, e), name=f"k{j}") for j, e in enumerate(rshape)]
            outer = [i[d] for d in kept] if keepdims else (list(i) if out_t.shape else [])
            it_outer, it_k = iter(outer), iter(ks)
            full = [next(it_k) if d in axes else next(it_outer) for d in range(len(src.shape))]
            value = src.at(*full)
            value = sm.widen(value, src.dtype, dtype) if src.dtype != dtype else value
            flat = tirx.const(0, "int64")
            for k, stride in zip(ks, strides):
                flat = flat + k.var.astype("int64") * tirx.const(stride, "int64")
            return reducer((flat, value), axis=ks)

        if int(np.prod(rshape, dtype=np.int64)) == 1:      # one element: index 0 (no reduction of extent 1)
            return Lowered(out_t.shape, "int64", lambda *i: tirx.const(0, "int64"))
        index, _ = te.compute(out_shape, _plain(body), name=f"arg{n.id}")
        return Lowered(out_t.shape, "int64", lambda *i: index[i if out_t.shape else (0,)])

    # -- views and creation -------------------------------------------------------------------------
    def view(self, n) -> Lowered:
        info = self.ctx.info.get(n)
        if info is None:
            raise Unsupported(f"{n.op} is not an affine view")
        src = self.values[n.args[0]]
        out_t = self.ctx.types[n]
        offset, strides = info["offset"], info["strides"]
        base_shape = src.shape
        base_strides = []
        acc = 1
        for d in reversed(base_shape):
            base_strides.append(acc)
            acc *= d
        base_strides = base_strides[::-1]
        per_dim = _per_dimension(offset, strides, info["shape"], base_shape, base_strides)

        if per_dim is not None:
            def at(*i):
                idx = []
                for start, terms in per_dim:
                    e = tirx.const(start, "int32")
                    for k, step in terms:
                        e = e + i[k] * step if step != 1 else e + i[k]
                    idx.append(e)
                return src.at(*idx)
        else:
            def at(*i):
                flat = tirx.const(offset, "int64")
                for k, s in enumerate(strides):
                    if s and not isinstance(i[k], int):      # broadcasting passes a plain 0 for size-1 axes
                        flat = flat + i[k].astype("int64") * s
                    elif s:
                        flat = flat + i[k] * s
                idx = []
                for d, bs in zip(base_shape, base_strides):
                    idx.append(tirx.floormod(tirx.floordiv(flat, bs), d).astype("int32"))
                return src.at(*idx)

        return Lowered(out_t.shape, src.dtype, at, fused_ops=src.fused_ops)

    def creation(self, n) -> Lowered:
        out_t = self.ctx.types[n]
        dtype = str(out_t.dtype)
        fill = self.ctx.info[n]["fill"]
        if fill is None:
            fill_node = n.kwargs.get("fill_value") or n.args[1]
            lv = operand(self.values, self.ctx, fill_node)
            if lv.constant is not None:         # numpy's own conversion (300.7 into int8 is 44)
                with silenced():
                    fill = np.full((), lv.constant, dtype=dtype)[()]
                fill = fill.item()
            else:
                get = lv.cast_at(dtype)
                return Lowered(out_t.shape, dtype, lambda *i: get())
        c = tirx.const(fill, dtype) if dtype != "bool" else tirx.const(bool(fill), "bool")
        return Lowered(out_t.shape, dtype, lambda *i: sm.shielded(c, dtype))


def distinct_lets(func):
    """A rule that reads an operand twice (``isnan(x) ? x : ...``) binds its shielded Let variable twice;
    TVM's schedules reject a variable defined twice, so each binding gets its own variable."""
    return tvm.tirx.transform.ConvertSSA()(tvm.IRModule({"main": func}))["main"]


def _deciding(name, value, dtype):
    """1 where an element decides ``any`` (it is not zero: NaN counts) or ``all`` (it is zero), as int64."""
    # (truthy: NaN is true; a bool as it is, since a vector compare of bools is an invalid float compare
    # in TVM's LLVM code)
    value = sm.shielded(value, dtype)
    test = sm.truthy(value, dtype) if name == "any" else tirx.Not(sm.truthy(value, dtype))
    return tirx.Select(test, tirx.const(1, "int64"), tirx.const(0, "int64"))


def _plain(fn):
    """TE rejects compute bodies with keyword parameters: hide them behind ``*i``."""
    return lambda *i: fn(*i)


def _output_body(lv, has_shape):
    """TE inspects compute bodies: they must be plain ``*i`` functions, without default arguments."""
    if has_shape:
        return lambda *i: lv.at(*i)
    return lambda i: lv.at()


def _kept(n, lv) -> Lowered:
    """A costly elementwise value that several nodes read, as a stage of its own (``keep<id>``): the
    generic schedule inlines it back; the row schedule keeps one row of it in a buffer, so softmax
    computes each exponential once."""
    stage = te.compute(lv.shape, lambda *i: lv.at(*i), name=f"keep{n.id}")
    return Lowered(lv.shape, lv.dtype, _placeholder_body(stage, lv.dtype))


def _staged(n, lv) -> Lowered:
    """A value computed in a stage of its own (``stage<id>``), which the schedules keep: its readers
    load it from a buffer instead of substituting its expression (expression_size)."""
    stage = te.compute(lv.shape, lambda *i: lv.at(*i), name=f"stage{n.id}")
    return Lowered(lv.shape, lv.dtype, _placeholder_body(stage, lv.dtype), staged=True)


def _constant_body(value, dtype):
    return lambda *i: sm.shielded(value, dtype)


def _placeholder_body(p, dtype):
    return lambda *i: sm.shielded(p[i], dtype)


def _per_dimension(offset, strides, shape, base_shape, base_strides):
    """Split an affine view into one (start, [(out axis, step)]) per base axis, when it separates
    (slices, transposes, newaxis, integer indices); None when axes mix (reshape across axes)."""
    rem = offset
    starts = []
    for bs in base_strides:
        q, rem = divmod(rem, bs)
        starts.append(q)
    if any(not 0 <= s < d for s, d in zip(starts, base_shape) if d) and any(shape):
        return None
    terms = [[] for _ in base_shape]
    for k, (s, extent) in enumerate(zip(strides, shape)):
        if s == 0 or extent == 1:
            continue
        for d, bs in enumerate(base_strides):
            if base_shape[d] > 1 and s % bs == 0 and abs(s // bs) * (extent - 1) < base_shape[d]:
                step = s // bs
                # the whole range must stay within this axis
                last = starts[d] + step * (extent - 1)
                if 0 <= last < base_shape[d]:
                    terms[d].append((k, step))
                    break
        else:
            return None
    return [(st, t) for st, t in zip(starts, terms)]


def _identity_max(dtype):
    return tirx.min_value(dtype) if not dtype.startswith("float") else tirx.const(-np.inf, dtype)


def _identity_min(dtype):
    return tirx.max_value(dtype) if not dtype.startswith("float") else tirx.const(np.inf, dtype)


def _extremum_reducer(dtype, largest: bool):
    """max (largest) or min reducer: any/all on bool, NaN-propagating on floats."""
    kind = "max" if largest else "min"
    if dtype == "bool":
        combine = tirx.Or if largest else tirx.And
        return te.comm_reducer(lambda a, b: combine(a, b), lambda t: tirx.const(not largest, "bool"),
                               name="any" if largest else "all")
    identity = _identity_max if largest else _identity_min
    if dtype.startswith("float"):
        return te.comm_reducer(sm.nan_max if largest else sm.nan_min, lambda t: identity(str(t)),
                               name="nan" + kind)
    plain = te.max if largest else te.min
    return te.comm_reducer(lambda a, b: plain(a, b), lambda t: identity(str(t)), name=kind)


def _max_reducer(dtype):
    return _extremum_reducer(dtype, True)


def _min_reducer(dtype):
    return _extremum_reducer(dtype, False)


def _wrapping_reducer(op, dtype):
    """An integer sum or product that wraps as numpy's does, for ``dtype`` (the accumulator: uint64 for
    a signed sum, whose bits are the same). TVM's code generator marks integer adds and multiplies
    as never overflowing, signed and unsigned alike (``add nuw``), and LLVM folded a sum whose values it
    knew to have their top bit set (``np.minimum(z, -5)``, a uint64 constant past 2**63) to a wrong
    number: each step is computed where it cannot overflow (scalar_math.wrapping)."""
    identity = 0 if op == "add" else 1
    return te.comm_reducer(lambda a, b: sm.wrapping(op, dtype, a, b), lambda t: tirx.const(identity, str(t)),
                           name=f"wrapping_{op}")


def _prod_reducer(dtype):
    return te.comm_reducer(lambda a, b: a * b, lambda t: tirx.const(1, str(t)), name="prod")
