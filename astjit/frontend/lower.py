"""Lower the statements of one straight-line block to a Graph (graph/ir).

Lowering happens once per block, before any types are known. It decides what is *traceable*: an
expression astjit can represent as graph nodes. Anything else raises NotTraceable with a reason the
user can act on; the statement then stays Python (frontend/blocks).
"""

import gast

from ..errors import NotTraceable
from ..graph import ops
from ..graph.ir import Graph
from ..graph.ops.elementwise import BINARY_OPERATORS
from .inline import callee_function, installed_library_function
from .resolve import MISSING, is_module

BINOP_NAMES = {
    gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "true_divide",
    gast.FloorDiv: "floor_divide", gast.Mod: "remainder", gast.Pow: "power", gast.MatMult: "matmul",
    gast.BitAnd: "bitwise_and", gast.BitOr: "bitwise_or", gast.BitXor: "bitwise_xor",
    gast.LShift: "left_shift", gast.RShift: "right_shift",
}
INPLACE_NAMES = {
    gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.Div: "itruediv", gast.FloorDiv: "ifloordiv",
    gast.Mod: "imod", gast.Pow: "ipow", gast.MatMult: "imatmul", gast.BitAnd: "iand", gast.BitOr: "ior",
    gast.BitXor: "ixor", gast.LShift: "ilshift", gast.RShift: "irshift",
}
# why a block leaves the call of a user's own function to Python (a compiled loop inlines it instead)
USER_CALL_REASON = "runs as Python (a block compiles numpy's operations; a compiled loop inlines your functions)"
UNARY_NAMES = {gast.USub: "negative", gast.UAdd: "positive", gast.Invert: "invert"}
COMPARE_NAMES = {
    gast.Lt: "less", gast.LtE: "less_equal", gast.Gt: "greater", gast.GtE: "greater_equal",
    gast.Eq: "equal", gast.NotEq: "not_equal",
}
assert set(BINOP_NAMES.values()) - {"matmul"} <= set(BINARY_OPERATORS)


def attribute_chain(node) -> list[str] | None:
    """['np', 'linalg', 'norm'] for ``np.linalg.norm``; None if the chain is not names only."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, gast.Name):
        return [node.id] + parts[::-1]
    return None


def describe(obj) -> str:
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return f"{module}.{name}" if module and module != "builtins" else name


# what explain calls a statement that stays Python, in the words of Python's grammar
_STATEMENT_KINDS = {"AnnAssign": "an annotated assignment", "Assign": "an assignment",
                    "AugAssign": "an augmented assignment", "Delete": "a del statement",
                    "Import": "an import statement", "ImportFrom": "an import statement",
                    "FunctionDef": "a def statement", "AsyncFunctionDef": "a def statement",
                    "ClassDef": "a class statement", "AsyncFor": "an async for statement",
                    "AsyncWith": "an async with statement", "TryStar": "a try statement"}
_EXPRESSION_KINDS = {"Yield": "a yield", "YieldFrom": "a yield from", "Await": "an await"}


def statement_kind(stmt) -> str:
    """``stmt``'s kind with its article, as a reason reads it: "an annotated assignment", "a with
    statement", "a yield" (an expression statement of a yield)."""
    name = type(stmt).__name__
    if isinstance(stmt, gast.AnnAssign) and stmt.value is None:
        return "an annotation without a value"
    if isinstance(stmt, gast.Expr):
        return _EXPRESSION_KINDS.get(type(stmt.value).__name__, "an expression statement")
    return _STATEMENT_KINDS.get(name, f"a {name.lower()} statement")


class BlockLowering:
    """Builds one Graph; ``env`` maps a variable to the node holding its current value."""

    def __init__(self, name: str, resolver, local_names: set):
        self.graph = Graph(name)
        self.resolver = resolver
        self.local_names = local_names
        self.env: dict[str, object] = {}
        self.assigned: set[str] = set()
        self.hoisted: dict[str, gast.expr] = {}   # input name -> expression evaluated by the caller
        self.subscripts: dict = {}                # getitem node -> the subscript read it lowers, where no name
        #                                           it reads was assigned earlier in the block (window_views)

    # -- statements -------------------------------------------------------------------------------
    def statement(self, stmt) -> None:
        if isinstance(stmt, gast.Assign):
            value = self.expr(stmt.value)
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif isinstance(stmt, gast.AnnAssign) and stmt.value is not None and stmt.simple:
            self.assign(stmt.target, self.expr(stmt.value), stmt.value)
        elif isinstance(stmt, gast.AugAssign):
            self.augmented(stmt)
        elif isinstance(stmt, gast.Pass):
            pass
        elif isinstance(stmt, gast.Expr):
            self.expr(stmt.value)                      # surfaces the precise reason first
            raise NotTraceable("an expression statement (its value is discarded) stays Python", stmt)
        else:
            raise NotTraceable(f"{statement_kind(stmt)} stays Python", stmt)

    def assign(self, target, value, value_expr) -> None:
        if isinstance(target, gast.Name):
            self.bind(target.id, value)
        elif isinstance(target, gast.Tuple | gast.List):
            if any(isinstance(e, gast.Starred) for e in target.elts):
                raise NotTraceable("starred assignment stays Python", target)
            if isinstance(value_expr, gast.Tuple | gast.List) and len(value_expr.elts) == len(target.elts) \
                    and value.op in ("tuple", "list"):
                items = value.args
            else:
                count = self.graph.const(len(target.elts))
                items = [self.graph.add("item", [value, self.graph.const(i), count], lineno=target.lineno)
                         for i in range(len(target.elts))]
            for t, item in zip(target.elts, items):
                self.assign(t, item, None)
        elif isinstance(target, gast.Subscript):
            base = self.expr(target.value)
            index = self.index(target.slice)
            self.graph.add("setitem", [base, index, value], lineno=target.lineno, col=target.col_offset)
        else:
            raise NotTraceable(f"assignment to {type(target).__name__.lower()} stays Python", target)

    def augmented(self, stmt) -> None:
        op = INPLACE_NAMES[type(stmt.op)]
        value = self.expr(stmt.value)
        target = stmt.target
        if isinstance(target, gast.Name):
            current = self.name(target.id, target)
            self.bind(target.id, self.graph.add(op, [current, value], lineno=stmt.lineno, col=stmt.col_offset))
        elif isinstance(target, gast.Subscript):
            base = self.expr(target.value)
            index = self.index(target.slice)
            item = self.graph.add("getitem", [base, index], lineno=stmt.lineno)
            updated = self.graph.add(op, [item, value], lineno=stmt.lineno, col=stmt.col_offset)
            self.graph.add("setitem", [base, index, updated], lineno=stmt.lineno, col=stmt.col_offset)
        else:
            raise NotTraceable("augmented assignment to an attribute stays Python", stmt)

    def bind(self, name, node) -> None:
        if name not in self.local_names:
            raise NotTraceable(f"assignment to the global or nonlocal name '{name}' stays Python")
        self.env[name] = node
        self.assigned.add(name)

    # -- expressions ------------------------------------------------------------------------------
    def expr(self, e):
        g = self.graph
        if isinstance(e, gast.Constant):
            if isinstance(e.value, bytes):
                raise NotTraceable("bytes constants stay Python", e)
            return g.const(e.value, lineno=e.lineno)
        if isinstance(e, gast.Name):
            return self.name(e.id, e)
        if isinstance(e, gast.BinOp):
            return g.add(BINOP_NAMES[type(e.op)], [self.expr(e.left), self.expr(e.right)],
                         lineno=e.lineno, col=e.col_offset)
        if isinstance(e, gast.UnaryOp):
            if isinstance(e.op, gast.Not):
                raise NotTraceable("'not' tests truth in Python; it stays Python", e)
            return g.add(UNARY_NAMES[type(e.op)], [self.expr(e.operand)], lineno=e.lineno, col=e.col_offset)
        if isinstance(e, gast.Compare):
            if len(e.ops) != 1 or type(e.ops[0]) not in COMPARE_NAMES:
                raise NotTraceable("chained comparisons and 'is'/'in' tests stay Python", e)
            return g.add(COMPARE_NAMES[type(e.ops[0])], [self.expr(e.left), self.expr(e.comparators[0])],
                         lineno=e.lineno, col=e.col_offset)
        if isinstance(e, gast.Call):
            return self.call(e)
        if isinstance(e, gast.Attribute):
            return self.attribute(e)
        if isinstance(e, gast.Subscript):
            node = g.add("getitem", [self.expr(e.value), self.index(e.slice)], lineno=e.lineno,
                         col=e.col_offset)
            if not any(isinstance(n, gast.Name) and n.id in self.assigned for n in gast.walk(e)):
                self.subscripts[node] = e       # (as written, it reads the values from before the block)
            return node
        if isinstance(e, gast.Tuple | gast.List):
            if any(isinstance(x, gast.Starred) for x in e.elts):
                raise NotTraceable("starred expressions stay Python", e)
            op = "tuple" if isinstance(e, gast.Tuple) else "list"
            return g.add(op, [self.expr(x) for x in e.elts], lineno=e.lineno)
        raise NotTraceable(f"{_expression_name(e)} stays Python", e)

    def index(self, s):
        g = self.graph
        if isinstance(s, gast.Slice):
            parts = [self.expr(p) if p is not None else g.const(None) for p in (s.lower, s.upper, s.step)]
            return g.add("slice", parts, lineno=s.lineno if hasattr(s, "lineno") else None)
        if isinstance(s, gast.Tuple):
            return g.add("tuple", [self.index(x) for x in s.elts])
        return self.expr(s)

    def name(self, ident, node):
        if ident in self.env:
            return self.env[ident]
        if ident in self.local_names:
            n = self.graph.input(ident)
            self.env[ident] = n
            return n
        obj = self.resolver.lookup(ident)
        if obj is MISSING:
            self.resolver.guard_missing(ident)
            raise NotTraceable(f"name '{ident}' is not defined when the function is compiled", node)
        if is_module(obj) or callable(obj) and not _is_data(obj):
            self.resolver.guard(ident, obj)
            return self.graph.const(obj)
        n = self.graph.input(ident)               # a global or closure variable holding data
        self.env[ident] = n
        return n

    def call(self, e):
        if any(isinstance(a, gast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            raise NotTraceable("calls with *args or **kwargs stay Python", e)
        func = e.func
        op_name, receiver = self.callee(func)
        args = ([receiver] if receiver is not None else []) + [self.expr(a) for a in e.args]
        kwargs = {k.arg: self.expr(k.value) for k in e.keywords}
        node = self.graph.add(op_name, args, kwargs, lineno=e.lineno, col=e.col_offset)
        op = ops.OPS[op_name]
        if op.signature is not None:
            try:
                bound = op.signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise NotTraceable(f"{op_name}() called with arguments astjit does not handle ({exc})",
                                   e) from None
            out = bound.arguments.get("out")
            if out is not None and "out" not in kwargs and not (out.op == "const" and out.value is None):
                # (by position: np.exp(d, d), np.clip(d, 0, 1, d), d.clip(0, 1, d); the op's kernel
                # computed a new array and the write into ``d`` was lost, or a first call's timing
                # applied the update again and again; ``out=`` by keyword is refused at inference)
                raise NotTraceable(f"{op_name}() writes into an existing array (its out argument, given by "
                                   "position)", e)
        return node

    def callee(self, func):
        """(op name, receiver node or None) for a call's function expression."""
        chain = attribute_chain(func)
        if chain is not None and chain[0] not in self.local_names and chain[0] not in self.env:
            reduce = self.ufunc_reduce(chain)
            if reduce is not None:
                return reduce, None
            obj = self.resolver.resolve_chain(chain)
            if obj is MISSING:
                why = "this function assigns" if self.resolver.assigned_by_function(chain) else "cannot be resolved"
                raise NotTraceable(f"call to '{'.'.join(chain)}', which {why}, stays Python", func)
            op_name = ops.lookup_callable(obj)
            if op_name is None:
                spelled = ".".join(chain)
                function = callee_function(obj)
                if function is not None and not installed_library_function(function):
                    # (a function of the user's: a compiled loop inlines it, a block does not)
                    raise NotTraceable(f"{spelled} is your function: its call {USER_CALL_REASON}", func)
                resolved = describe(obj)
                name = spelled if resolved.endswith(spelled) or resolved == spelled else f"{spelled} ({resolved})"
                raise NotTraceable(f"{name} is not supported yet", func)
            self.resolver.guard_chain(chain, obj)
            return op_name, None
        if isinstance(func, gast.Attribute):
            op_name = ops.METHODS.get(func.attr)
            if op_name is None:
                raise NotTraceable(f"method .{func.attr}() is not supported yet", func)
            return op_name, self.expr(func.value)
        raise NotTraceable("calling a computed function stays Python", func)

    def ufunc_reduce(self, chain) -> str | None:
        """The op of ``np.add.reduce`` (and multiply, maximum, minimum), guarded as ``np.add``; else None."""
        import numpy as np

        if len(chain) < 3 or chain[-1] != "reduce":
            return None
        ufunc = self.resolver.resolve_chain(chain[:-1])
        name = f"np.{getattr(ufunc, '__name__', '')}.reduce"
        if not isinstance(ufunc, np.ufunc) or name not in ops.OPS or ops.OPS[name].impl != ufunc.reduce:
            return None
        self.resolver.guard_chain(chain[:-1], ufunc)
        return name

    def attribute(self, e):
        chain = attribute_chain(e)
        if chain is not None and chain[0] not in self.local_names and chain[0] not in self.env:
            obj = self.resolver.resolve_chain(chain)
            if obj is not MISSING and (is_module(obj) or isinstance(obj, type) or callable(obj)
                                       or self.resolver.is_numpy_chain(chain) and _is_constant(obj)
                                       or self.resolver.is_math_constant(chain) and _is_constant(obj)):
                # a module, class or function is guarded by identity (rebinding it re-transforms the
                # function); numpy's own constants (np.pi, np.newaxis) are assumed never to change;
                # math's (math.inf) are guarded too: ``m = -math.inf`` is then a constant, not a Fragment
                self.resolver.guard_chain(chain, obj)
                return self.graph.const(obj, lineno=e.lineno)
            if obj is not MISSING:                  # data (settings.SCALE): read by the caller at each call
                return self.hoisted_read(chain, e)
        op_name = ops.ATTRIBUTES.get(e.attr)
        if op_name is not None:
            return self.graph.add(op_name, [self.expr(e.value)], lineno=e.lineno, col=e.col_offset)
        if chain is not None and len(chain) == 2 and chain[0] in self.local_names \
                and chain[0] not in self.assigned:
            return self.hoisted_read(chain, e)      # e.g. self.weights
        raise NotTraceable(f"attribute .{e.attr} is not supported yet", e)

    def hoisted_read(self, chain, e):
        """An attribute the rewritten function reads right before the Fragment call and passes in, so
        its value is the one the original would read at that point."""
        key = hoisted_name(chain)
        if key not in self.env:
            self.hoisted[key] = e
            self.env[key] = self.graph.input(key)
        return self.env[key]


HOISTED_PREFIX = "__astjit_attr_"


def hoisted_name(chain) -> str:
    """The input name of an attribute the caller reads and passes in (``settings.dt``): each part
    after its length (``__astjit_attr_8settings_2dt``), so that no two chains share a name (joined
    plainly, ``p.x_y`` and ``p_x.y`` would, and one would be read for the other)."""
    return HOISTED_PREFIX + "_".join(f"{len(part)}{part}" for part in chain)


def attribute_of(name: str) -> str:
    """``settings.dt`` of ``hoisted_name(("settings", "dt"))``."""
    rest, parts = name.removeprefix(HOISTED_PREFIX), []
    while rest:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        size = int(rest[:digits])
        parts.append(rest[digits:digits + size])
        rest = rest[digits + size + 1:]
    return ".".join(parts)


def _is_data(obj) -> bool:
    import numpy as np

    return isinstance(obj, np.ndarray | np.generic | int | float | complex | bool)


def _is_constant(obj) -> bool:
    import numpy as np

    return obj is None or isinstance(obj, int | float | complex | bool | str | np.generic | np.dtype | type)


def _expression_name(e) -> str:
    names = {
        "IfExp": "a conditional expression", "BoolOp": "'and'/'or'", "Lambda": "a lambda",
        "ListComp": "a list comprehension", "GeneratorExp": "a generator expression",
        "DictComp": "a dict comprehension", "SetComp": "a set comprehension", "Dict": "a dict display",
        "Set": "a set display", "JoinedStr": "an f-string", "NamedExpr": "':='", "Yield": "yield",
        "YieldFrom": "yield from", "Await": "await", "Starred": "a starred expression",
    }
    return names.get(type(e).__name__, type(e).__name__)
