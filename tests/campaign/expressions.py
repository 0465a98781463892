"""Random numpy expressions over a program's variables, each evaluated as it is built.

Every sub-expression is evaluated on the values the variables have in the program's first call, so the
generator knows the dtype and shape it holds and picks axes, indices and operands that are usually
valid. Each expression also records what the comparison needs to know: whether it contains an op whose
compiled result may differ from numpy's by rounding (``inexact``), and which values it reads under an
op that is discontinuous (a comparison, a cast to an integer, an index), where a rounding difference
could turn into a different integer or branch (``disc_reads``).
"""

import warnings
from dataclasses import dataclass

import numpy as np

from .choices import Chooser
from .watchdog import ProgramTimeout, time_limit

INVALID = object()

ARITHMETIC = ("+", "-", "*", "/", "//", "%", "**")
BITWISE = ("&", "|", "^", "<<", ">>")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
TRANSCENDENTAL = ("exp", "log", "sin", "cos", "tanh", "log1p", "expm1", "arctan", "cbrt")
EXACT_UNARY = ("sqrt", "square", "abs", "negative", "fabs")
STEP_UNARY = ("floor", "ceil", "rint", "trunc", "sign", "isnan", "isinf", "isfinite", "logical_not")
BINARY_FUNCTIONS = ("maximum", "minimum", "fmax", "fmin")
LOGICAL = ("logical_and", "logical_or", "logical_xor")
REDUCTIONS = ("sum", "mean", "max", "min", "prod")
DTYPE_LITERALS = ("np.float32", "np.float64", "np.int8", "np.int16", "np.int32", "np.int64", "np.uint8",
                  "np.uint16", "np.uint32", "np.uint64", "np.bool_")
INT_LITERALS = ("0", "1", "2", "3", "-1", "-2", "7", "127", "255", "300", "2**31", "2**63 - 1", "-2**63")
FLOAT_LITERALS = ("0.5", "1.0", "2.0", "-0.0", "0.0", "1.5", "-3.25", "1e-3", "1e300", "np.nan", "np.inf",
                  "-np.inf")
ATTRIBUTE_HOLDERS = ("settings", "cfg")


@dataclass(frozen=True)
class Expr:
    """One generated expression: its source, its value in the first call, and what it reads."""

    src: str
    value: object = INVALID
    reads: frozenset = frozenset()
    inexact: bool = False
    disc_reads: frozenset = frozenset()
    disc_inexact: bool = False

    @property
    def ok(self) -> bool:
        return self.value is not INVALID

    @property
    def is_array(self) -> bool:
        return isinstance(self.value, np.ndarray | np.generic)

    @property
    def ndim(self) -> int:
        return np.ndim(self.value) if self.ok else 0


def quietly(fn, *args):
    """Run ``fn`` with numpy's floating-point warnings silenced (the values are what matter)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def result_is_float(value) -> bool:
    if value is INVALID:
        return True
    return isinstance(value, float) or np.asarray(value).dtype.kind in "fc"


class ExpressionMaker(Chooser):
    """Draws expressions; ``env`` maps each visible variable to its value in the first call."""

    def __init__(self, seed: int, namespace: dict):
        super().__init__(seed)
        self.namespace = namespace
        self.env: dict = {}
        self.hidden: set = set()          # loop counters: visible only inside their loop
        self.loop_vars: list = []
        self.sums = False                 # a float sum, mean or product: its terms may cancel
        self.count_names: list = []       # int parameters that stay small (loop counts, indices)

    # -- building ----------------------------------------------------------------------------------
    def evaluate(self, src: str, parts) -> object:
        if any(not p.ok for p in parts):
            return INVALID
        try:
            with time_limit(1.0):             # Python ints: 2**63 ** 2**63 never ends
                return quietly(eval, src, self.namespace, dict(self.env))
        except (Exception, ProgramTimeout):
            return INVALID

    def node(self, src, parts=(), inexact=False, disc=False, reads=()) -> Expr:
        """An expression made of ``parts``; ``disc``: the op is discontinuous in its operands."""
        all_reads = frozenset(reads).union(*[p.reads for p in parts])
        any_inexact = inexact or any(p.inexact for p in parts)
        disc_reads = frozenset().union(*[p.disc_reads for p in parts])
        disc_inexact = any(p.disc_inexact for p in parts)
        if disc:
            disc_reads |= all_reads
            disc_inexact = disc_inexact or any_inexact
        return Expr(src, self.evaluate(src, parts), all_reads, any_inexact, disc_reads, disc_inexact)

    def name(self, name: str) -> Expr:
        return Expr(name, self.env.get(name, INVALID), frozenset([name]))

    def visible(self, test) -> list:
        return sorted(n for n, v in self.env.items()
                      if n not in self.hidden and not n.startswith("__") and test(v))

    # -- leaves ------------------------------------------------------------------------------------
    def array_names(self, kinds="biuf") -> list:
        return self.visible(lambda v: isinstance(v, np.ndarray | np.generic) and v.dtype.kind in kinds)

    def array_leaf(self, kinds="biuf") -> Expr:
        names = self.array_names(kinds) or self.array_names()
        if not names:
            return self.node("np.arange(3.0)")
        return self.name(self.pick(names))

    def attribute(self, attr: str) -> Expr:
        holder = self.pick(ATTRIBUTE_HOLDERS)
        return self.node(f"{holder}.{attr}", reads=[f"{holder}.{attr}"])

    def int_scalar(self, small=False) -> Expr:
        """A Python int: a literal, a parameter, a loop counter, a size, or a module attribute. ``small``:
        one that stays small in every call (an index, a shape, a loop bound: ``np.ones(k)`` with
        ``k = 2**31`` would allocate gigabytes)."""
        ints = self.visible(lambda v: type(v) is int)
        if small:
            ints = [n for n in ints if n in self.count_names]
        loop = [v for v in self.loop_vars if v in self.env]
        kind = self.weighted({"literal": 4, "param": 4 if ints else 0, "loop": 5 if loop else 0,
                              "size": 2, "attr": 2, "global": 0 if small else 1})
        if kind == "param":
            return self.name(self.pick(ints))
        if kind == "loop":
            return self.name(self.pick(loop))
        if kind == "size":
            arr = self.array_leaf()
            if arr.ndim and self.chance(60):
                return self.node(f"{arr.src}.shape[{self.integer(-1, arr.ndim - 1)}]", [arr])
            return self.node(f"{arr.src}.{self.pick(['size', 'ndim'])}", [arr])
        if kind == "attr":
            return self.attribute(self.pick(["LIMIT", "AXIS"] if small else ["OFFSET", "LIMIT"]))
        if kind == "global":
            return self.node("K", reads=["K"])
        return self.node(self.pick(INT_LITERALS[:5] if small else INT_LITERALS))

    def scalar(self) -> Expr:
        """A Python (or numpy) scalar operand."""
        floats = self.visible(lambda v: type(v) is float)
        bools = self.visible(lambda v: type(v) is bool)
        np_scalars = self.visible(lambda v: isinstance(v, np.generic))
        kind = self.weighted({"int": 4, "float_literal": 3, "float_param": 3 if floats else 0,
                              "bool": 1 if bools else 0, "np_scalar": 2 if np_scalars else 0,
                              "attr": 2, "true": 1, "arith": 1})
        if kind == "int":
            return self.int_scalar()
        if kind == "float_literal":
            return self.node(self.pick(FLOAT_LITERALS))
        if kind == "float_param":
            return self.name(self.pick(floats))
        if kind == "bool":
            return self.name(self.pick(bools))
        if kind == "np_scalar":
            return self.name(self.pick(np_scalars))
        if kind == "attr":
            return self.attribute(self.pick(["SCALE", "OFFSET", "FLAG"]))
        if kind == "true":
            return self.node(self.pick(["True", "False"]))
        left, right = self.int_scalar(), self.scalar_leaf()
        op = self.pick(["+", "-", "*", "//", "%"])
        return self.node(f"({left.src} {op} {right.src})", [left, right], disc=op in ("//", "%"))

    def scalar_leaf(self) -> Expr:
        return self.int_scalar() if self.chance(50) else self.node(self.pick(FLOAT_LITERALS))

    def operand(self, depth) -> Expr:
        return self.scalar() if self.chance(35) else self.array(depth)

    def dtype_expr(self) -> Expr:
        dtypes = self.visible(lambda v: isinstance(v, np.dtype) or (isinstance(v, type)
                                                                    and issubclass(v, np.generic)))
        kind = self.weighted({"param": 5 if dtypes else 0, "attr": 2, "literal": 3})
        if kind == "param":
            return self.name(self.pick(dtypes))
        if kind == "attr":
            return self.attribute("DTYPE")
        return self.node(self.pick(DTYPE_LITERALS))

    def axis_expr(self, ndim) -> Expr:
        tuples = self.visible(lambda v: type(v) is tuple and all(type(x) is int for x in v))
        kind = self.weighted({"none": 2, "literal": 5 if ndim else 1, "attr": 1, "tuple": 1 if ndim > 1 else 0,
                              "param": 2 if tuples else 0})
        if kind == "none":
            return self.node("None")
        if kind == "literal":
            return self.node(str(self.integer(-max(ndim, 1), max(ndim, 1) - 1)))
        if kind == "attr":
            return self.attribute("AXIS")
        if kind == "tuple":
            axes = self.sample(range(ndim), self.integer(1, ndim))
            return self.node(f"({', '.join(map(str, axes))},)")
        return self.name(self.pick(tuples))

    # -- array expressions -------------------------------------------------------------------------
    def array(self, depth: int, kinds="biuf") -> Expr:
        if depth <= 0 or self.chance(25):
            return self.array_leaf(kinds)
        kind = self.weighted({"arith": 6, "bitwise": 2, "compare": 2, "unary": 4, "binary_fn": 2, "where": 1,
                              "clip": 1, "logical": 1, "astype": 2, "reduce": 3, "view": 4, "index": 4,
                              "create": 1, "copy": 1})
        return getattr(self, f"_{kind}")(depth - 1)

    def _arith(self, d) -> Expr:
        op = self.pick(ARITHMETIC)
        left, right = self.array(d), self.operand(d)
        if self.chance(25):
            left, right = right, left
        e = self.node(f"({left.src} {op} {right.src})", [left, right], disc=op in ("//", "%"))
        if op == "**" and result_is_float(e.value):
            e = self.node(e.src, [left, right], inexact=True)
        return e

    def _bitwise(self, d) -> Expr:
        op = self.pick(BITWISE)
        left = self.array(d, kinds="biu")
        right = self.int_scalar() if self.chance(40) else self.array(d, kinds="biu")
        return self.node(f"({left.src} {op} {right.src})", [left, right], disc=True)

    def _compare(self, d) -> Expr:
        left, right = self.array(d), self.operand(d)
        return self.node(f"({left.src} {self.pick(COMPARISONS)} {right.src})", [left, right], disc=True)

    def _unary(self, d) -> Expr:
        x = self.array(d)
        fn = self.weighted({"minus": 2, "invert": 1, "abs": 1, "transcendental": 3, "exact": 2, "step": 3})
        if fn == "minus":
            return self.node(f"(-{x.src})", [x])
        if fn == "invert":
            x = self.array(d, kinds="biu")
            return self.node(f"(~{x.src})", [x], disc=True)
        if fn == "abs":
            return self.node(f"abs({x.src})", [x])
        if fn == "transcendental":
            return self.node(f"np.{self.pick(TRANSCENDENTAL)}({x.src})", [x], inexact=True)
        if fn == "exact":
            return self.node(f"np.{self.pick(EXACT_UNARY)}({x.src})", [x])
        return self.node(f"np.{self.pick(STEP_UNARY)}({x.src})", [x], disc=True)

    def _binary_fn(self, d) -> Expr:
        a, b = self.array(d), self.operand(d)
        return self.node(f"np.{self.pick(BINARY_FUNCTIONS)}({a.src}, {b.src})", [a, b])

    def _where(self, d) -> Expr:
        cond = self._compare(d)
        a, b = self.operand(d), self.operand(d)
        return self.node(f"np.where({cond.src}, {a.src}, {b.src})", [cond, a, b])

    def _clip(self, d) -> Expr:
        x, lo, hi = self.array(d), self.scalar(), self.scalar()
        if self.chance(30):
            return self.node(f"np.clip({x.src}, {lo.src}, None)", [x, lo])
        return self.node(f"np.clip({x.src}, {lo.src}, {hi.src})", [x, lo, hi])

    def _logical(self, d) -> Expr:
        a, b = self.array(d), self.operand(d)
        return self.node(f"np.{self.pick(LOGICAL)}({a.src}, {b.src})", [a, b], disc=True)

    def _astype(self, d) -> Expr:
        x, t = self.array(d), self.dtype_expr()
        e = self.node(f"{x.src}.astype({t.src})", [x, t])
        return self.node(e.src, [x, t], disc=not result_is_float(e.value))

    def _reduce(self, d) -> Expr:
        x = self.array(d)
        fn = self.pick(REDUCTIONS)
        inexact = fn in ("sum", "mean", "prod") and result_is_float(x.value) or fn == "mean"
        self.sums = self.sums or inexact
        axis = self.axis_expr(x.ndim)
        args = [] if axis.src == "None" and self.chance(50) else [f"axis={axis.src}"]
        if self.chance(25):
            args.append(f"keepdims={self.pick(['True', 'False'])}")
        if self.chance(50):
            return self.node(f"{x.src}.{fn}({', '.join(args)})", [x, axis], inexact=inexact)
        return self.node(f"np.{fn}({', '.join([x.src] + args)})", [x, axis], inexact=inexact)

    def _view(self, d) -> Expr:
        x = self.array(d)
        n = x.ndim
        tuples = self.visible(lambda v: type(v) is tuple and all(type(t) is int for t in v))
        kind = self.weighted({"T": 2, "transpose": 1, "reshape": 3, "ravel": 1, "expand": 2, "squeeze": 1,
                              "tuple": 1 if tuples else 0})
        if kind == "T":
            return self.node(f"{x.src}.T", [x])
        if kind == "transpose":
            axes = self.sample(range(n), n) if n > 1 and self.chance(60) else None
            arg = ", ".join(map(str, axes)) if axes else ""
            return self.node(f"{x.src}.transpose({arg})", [x])
        if kind == "reshape":
            shape = self.pick(["-1", "1, -1", "-1, 1", f"{x.src}.shape[::-1]", f"{x.src}.shape + (1,)",
                               "2, -1", f"-1, {x.src}.shape[-1]"])
            return self.node(f"{x.src}.reshape({shape})", [x])
        if kind == "ravel":
            return self.node(self.pick([f"{x.src}.ravel()", f"np.ravel({x.src})"]), [x])
        if kind == "expand":
            return self.node(f"np.expand_dims({x.src}, {self.integer(-n - 1, n)})", [x])
        if kind == "squeeze":
            return self.node(self.pick([f"{x.src}.squeeze()", f"np.squeeze({x.src})"]), [x])
        t = self.name(self.pick(tuples))
        return self.node(f"{x.src}.{self.pick(['reshape', 'transpose', 'sum'])}({t.src})", [x, t],
                         inexact=result_is_float(x.value))

    def index_items(self, shape) -> tuple[str, list]:
        """An index for an array of ``shape``: ints, slices (literal and runtime bounds), None, ..."""
        slices = self.visible(lambda v: type(v) is slice)
        items, parts = [], []
        count = self.integer(1, max(1, len(shape)))
        for axis in range(count):
            size = shape[axis] if axis < len(shape) else 1
            kind = self.weighted({"int": 3, "runtime_int": 2, "slice": 3, "runtime_slice": 2,
                                  "slice_param": 2 if slices else 0, "newaxis": 1, "all": 1})
            if kind == "int":
                items.append(str(self.integer(-max(size, 1), max(size, 1) - 1)))
            elif kind == "runtime_int":
                i = self.int_scalar(small=True)
                items.append(i.src)
                parts.append(i)
            elif kind == "slice":
                items.append(self.pick(["1:", ":-1", "::2", "::-1", "1:3", ":1", "-2:", "2:1"]))
            elif kind == "runtime_slice":
                lo, hi = self.int_scalar(small=True), self.int_scalar(small=True)
                items.append(self.pick([f"{lo.src}:{hi.src}", f"{lo.src}:", f":{hi.src}"]))
                parts += [lo, hi]
            elif kind == "slice_param":
                s = self.name(self.pick(slices))
                items.append(s.src)
                parts.append(s)
            elif kind == "newaxis":
                items.append("None")
            else:
                items.append(self.pick([":", "..."]))
        return ", ".join(items), parts

    def _index(self, d) -> Expr:
        x = self.array(d)
        tuples = self.visible(lambda v: type(v) is tuple and all(type(t) is int for t in v))
        if tuples and self.chance(15):
            t = self.name(self.pick(tuples))
            return self.node(f"{x.src}[{t.src}]", [x, t], disc=True)
        index, parts = self.index_items(np.shape(x.value) if x.ok else ())
        return self.node(f"{x.src}[{index}]", [x] + parts)

    def shape_expr(self) -> Expr:
        tuples = self.visible(lambda v: type(v) is tuple and all(type(t) is int for t in v))
        kind = self.weighted({"of_array": 3, "tuple": 2 if tuples else 0, "count": 2, "literal": 1})
        if kind == "of_array":
            x = self.array_leaf()
            return self.node(f"{x.src}.shape", [x])
        if kind == "tuple":
            return self.name(self.pick(tuples))
        if kind == "count":
            n = self.int_scalar(small=True)
            return self.node(f"({n.src}, 2)" if self.chance(40) else n.src, [n])
        return self.node(self.pick(["3", "(2, 3)", "()", "(0,)"]))

    def _create(self, d) -> Expr:
        x = self.array(d)
        kind = self.weighted({"zeros_like": 2, "ones_like": 1, "full_like": 2, "zeros": 1, "ones": 1, "full": 2})
        if kind in ("zeros_like", "ones_like"):
            if self.chance(40):
                t = self.dtype_expr()
                return self.node(f"np.{kind}({x.src}, dtype={t.src})", [x, t])
            return self.node(f"np.{kind}({x.src})", [x])
        fill = self.scalar()
        if kind == "full_like":
            return self.node(f"np.full_like({x.src}, {fill.src})", [x, fill])
        shape = self.shape_expr()
        t = self.dtype_expr()
        if kind == "full":
            return self.node(f"np.full({shape.src}, {fill.src}, {t.src})", [shape, fill, t])
        return self.node(f"np.{kind}({shape.src}, {t.src})", [shape, t])

    def _copy(self, d) -> Expr:
        x = self.array(d)
        return self.node(self.pick([f"{x.src}.copy()", f"np.copy({x.src})"]), [x])

    # -- conditions --------------------------------------------------------------------------------
    def condition(self) -> Expr:
        """A scalar condition for ``if`` and ``while``."""
        kind = self.weighted({"reduce": 5, "size": 2, "param": 2, "attr": 1, "element": 1, "loop": 1})
        op = self.pick(COMPARISONS)
        if kind == "reduce":
            x = self.array(1)
            fn = self.pick(REDUCTIONS[:4])
            inexact = fn in ("sum", "mean") and result_is_float(x.value) or fn == "mean"
            self.sums = self.sums or inexact
            bound = self.pick(["0", "1", "-1", "0.5", "settings.SCALE"])
            return self.node(f"{x.src}.{fn}() {op} {bound}", [x], inexact=inexact, disc=True)
        if kind == "size":
            n = self.int_scalar(small=True)
            return self.node(f"{n.src} {op} {self.pick(['0', '1', '2', '3'])}", [n], disc=True)
        if kind == "param":
            s = self.scalar()
            return self.node(f"{s.src} {op} {self.pick(['0', '1', '2.5', 'K'])}", [s], disc=True)
        if kind == "attr":
            return self.attribute("FLAG")
        if kind == "element":
            x = self.array_leaf()
            index, parts = self.index_items([1] * max(x.ndim, 1))
            return self.node(f"{x.src}[{index}].sum() > 0", [x] + parts, disc=True,
                             inexact=result_is_float(x.value))
        loop = [v for v in self.loop_vars if v in self.env]
        if loop:
            i = self.name(self.pick(loop))
            return self.node(f"{i.src} % 2 == 0", [i], disc=True)
        return self.node("settings.FLAG")
