"""Loop regions: ``for ... in range(...)`` and ``while`` nests whose whole body can run inside one
compiled kernel.

A loop qualifies when every statement of its body is scalar work on array elements: element reads and
writes with one integer index per axis, scalar temporaries, ``if``/``elif``/``else``, nested
``for ... in range(...)`` loops and loops over small tuples of constants (``for di in (-1, 0, 1)``),
``break``/``continue``, calls of scalar functions (``abs``,
``min``, ``max``, ``int``, ``float``, ``round``, ``divmod``, ``len``, ``math.*``, numpy ufuncs, numpy's
scalar types as casts) and of the user's own
functions whose bodies qualify (frontend/inline), tuples of numbers held in names (``s = (x, y, z)``,
``x, y, z = s``: backends/tvm/loop_tuples), and ``append`` of numbers to a list (backends/tvm/loop_lists). This module decides that
from the syntax alone and names the first line that keeps a loop in Python; the types of the values
(which arrays, which dtypes) are checked again on every new set of argument types, when the loop is
compiled (backends/tvm/loops.py).
"""

import ast
import builtins
import copy
import functools
import math
import operator

import gast
import numpy as np

from ..runtime.plain_attribute import NAME as PLAIN_ATTRIBUTE_NAME
from ..runtime.plain_attribute import NOT_PLAIN
from .inline import (
    INLINE_DEPTH,
    VALUE_UNUSED,
    Inlined,
    NotInlinable,
    callee_function,
    code_path,
    parse_callee,
    renamed_callee,
)
from .loop_iteration import (
    ESTIMATE_INT_CALL,
    INDEX_CALL,
    INT_CALL,
    INTEGER_CALL,
    ISINSTANCE_CALL,
    LEN_CALL,
    RANGE_CALL,
    TYPE_CALL,
    CountedForm,
    NotIterable,
    builtin_name,
    reversed_range,
)
from .lower import attribute_chain, hoisted_name, statement_kind

# Python and math functions a loop body may call on scalars, by the object the name resolves to
SCALAR_BUILTINS = {builtins.abs: "abs", builtins.min: "min", builtins.max: "max", builtins.int: "int",
                   builtins.float: "float", builtins.len: "len", builtins.bool: "bool",
                   builtins.round: "round", builtins.divmod: "divmod", builtins.complex: "complex"}
MATH_FUNCTIONS = {math.sqrt: "sqrt", math.exp: "exp", math.log: "log", math.sin: "sin", math.cos: "cos",
                  math.tan: "tan", math.tanh: "tanh", math.fabs: "fabs", math.atan: "arctan",
                  math.sinh: "sinh", math.cosh: "cosh", math.log1p: "log1p", math.expm1: "expm1",
                  math.asin: "arcsin", math.acos: "arccos", math.asinh: "arcsinh", math.acosh: "arccosh",
                  math.atanh: "arctanh", math.log2: "log2", math.log10: "log10", math.cbrt: "cbrt",
                  math.exp2: "exp2", math.erf: "erf", math.erfc: "erfc", math.degrees: "degrees",
                  math.radians: "radians"}
# of two floats: from the C library as CPython calls them (hypot: CPython's own algorithm); of one
# float to a Python int
MATH_BINARY = {math.atan2: "atan2", math.copysign: "copysign", math.pow: "pow", math.fmod: "fmod",
               math.hypot: "hypot"}
MATH_TO_INT = {math.floor: "floor", math.ceil: "ceil", math.trunc: "trunc"}
# of one number to a Python bool
MATH_PREDICATES = {math.isnan: "math.isnan", math.isinf: "math.isinf", math.isfinite: "math.isfinite"}
NUMPY_UFUNCS = ("sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "absolute", "fabs", "floor", "ceil",
                "arctan", "sinh", "cosh", "log1p", "expm1", "minimum", "maximum", "square", "negative",
                "isnan", "isinf", "isfinite", "sign", "trunc", "rint", "fmax", "fmin", "arcsin", "arccos",
                "arcsinh", "arccosh", "arctanh", "log2", "log10", "cbrt", "exp2", "arctan2", "hypot",
                "copysign", "degrees", "radians", "deg2rad", "rad2deg")
# numpy's scalar types called on a number (``np.float32(a[i])``, ``np.int32(k)``)
NUMPY_CASTS = {getattr(np, name): f"cast.{name}" for name in (
    "float32", "float64", "int64", "int32", "int16", "int8", "uint32", "uint16", "uint8", "complex64", "complex128")}
SCALAR_CALLS = {**SCALAR_BUILTINS, operator.index: "index", **MATH_FUNCTIONS, **MATH_BINARY, **MATH_TO_INT, **MATH_PREDICATES,
                **NUMPY_CASTS, np.clip: "np.clip", **{getattr(np, name): f"np.{name}" for name in NUMPY_UFUNCS}}
# reductions of a 1-d row to a numpy scalar: ``a[i:i + w].sum()``, ``np.mean(x[i] * y)``, ``a[i].max()``,
# ``np.argmin(d[i])``; the dot product of two (``np.dot(a[i, :j], x[:j])``, ``a[i].dot(x)``, ``a[i] @ x``);
# and a row's Euclidean norm (``np.linalg.norm(x[i] - x[j])``)
REDUCTIONS = ("sum", "mean", "max", "min", "argmax", "argmin", "any", "all")
REDUCTION_FUNCTIONS = {**{getattr(np, name): f"reduce.{name}" for name in REDUCTIONS}, np.dot: "reduce.dot",
                       np.amax: "reduce.max", np.amin: "reduce.min", np.linalg.norm: "reduce.norm"}
REDUCTION_ARITY = {**{f"reduce.{name}": 1 for name in REDUCTIONS}, "reduce.dot": 2, "reduce.norm": 1}

# what a global or a global's attribute read in a loop may hold to be passed in as an argument (the
# kernel takes numbers, arrays, and tuples and lists of numbers; anything else fails its types)
PASSED_VALUES = bool | int | float | np.generic | np.ndarray | tuple | list

TUPLE_LOOP_ITEMS = 64   # ``for d in (...)`` with at most this many constants of one type runs in a kernel

OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow, gast.BitAnd,
             gast.BitOr, gast.BitXor, gast.RShift, gast.LShift)


class NotALoopRegion(Exception):
    """Why a loop stays Python; ``node`` is where (for explain)."""

    def __init__(self, reason, node):
        super().__init__(reason)
        self.reason = reason
        self.node = node


class LoopChecker:
    """Check the syntax of a ``for`` statement; ``calls`` maps each call node to its scalar op name
    or to the Inlined callee; ``free_names`` are the globals the callees read."""

    def __init__(self, resolver, local_names, local_functions=None):
        self.resolver = resolver
        self.local_names = local_names
        self.local_functions = local_functions or {}    # name -> its def in this function (inline.local_functions)
        self.region = None                              # the loop being checked as a region (check)
        self.calls: dict = {}
        self.free_names: list = []
        self.closure_names: list = []     # this function's locals that the local functions it inlines read
        self.hoisted: dict = {}           # attribute reads of globals in inlined functions (hoist_attribute_reads)
        self.depth = 0                      # how many inlined callees the statements checked are in
        self.procedures = []                # per inlined callee: whether it is called as a statement
        self.sites = 0
        self.counters = 0                   # loops over arrays given a counter (frontend/loop_iteration)
        self.return_arity = False           # no ``return`` in the loop; else None (of nothing) or a count

    def check(self, loop) -> None:
        self.region = loop
        if isinstance(loop, gast.While):      # scalar iterations (``while err > tol``) compile too
            self.while_loop(loop)
            return
        self.for_loop(loop)

    def refuse(self, reason, node):
        raise NotALoopRegion(reason, node)

    # statements
    def body(self, stmts) -> None:
        for s in stmts:
            self.statement(s)

    def statement(self, s) -> None:
        if isinstance(s, gast.For):
            self.for_loop(s)
        elif isinstance(s, gast.While):
            self.while_loop(s)
        elif isinstance(s, gast.Return) and self.depth:
            if return_values(s) is None and not self.procedures[-1]:
                self.refuse("return of None from a function whose value is read", s)
            for v in return_values(s) or ():      # (a tuple's items: ``a, b = f(x)`` unpacks them)
                self.expr(v)                      # (a bare ``return``: a callee called as a statement)
        elif isinstance(s, gast.Return) and not self.depth:
            self.loop_return(s)
        elif isinstance(s, gast.If):
            self.expr(s.test)
            self.body(s.body)
            self.body(s.orelse)
        elif isinstance(s, gast.Assign):
            if len(s.targets) != 1:
                self.refuse("chained assignment", s)
            if isinstance(s.value, gast.Tuple) and isinstance(s.targets[0], gast.Tuple | gast.Name):
                self.tuple_items(s.value)                         # (``s = (x, y, z)``: backends/tvm/loop_tuples)
            else:
                self.expr(s.value)
            self.target(s.targets[0], s)
        elif isinstance(s, gast.AugAssign):
            if not isinstance(s.op, OPERATORS):
                self.refuse(f"augmented assignment {type(s.op).__name__}", s)
            self.expr(s.value)
            self.target(s.target, s)
        elif isinstance(s, gast.Break | gast.Continue | gast.Pass):
            pass
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant):
            pass                                                  # a docstring or a bare constant
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and self.is_list_append(s.value):
            self.calls[s.value] = "append"                        # ``peaks.append(i)`` (backends/tvm/loop_lists)
            self.expr(s.value.args[0])
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            setattr(s.value, VALUE_UNUSED, True)                  # ``bump(a, i)``: its value unused
            self.call(s.value)
        elif isinstance(s, gast.Raise):
            self.raise_statement(s)
        else:
            self.refuse(statement_kind(s), s)

    def tuple_items(self, e) -> None:
        """A tuple display's items, none starred (``s = (x, y, z)``, ``rhs((x, y, z))``): whether its
        name then holds a tuple of numbers is known when the loop is compiled (backends/tvm/loop_tuples)."""
        for item in e.elts:
            if isinstance(item, gast.Starred):
                self.refuse("a starred item in a tuple", item)
            self.expr(item)

    def raise_statement(self, s) -> None:
        """``raise E(...)`` of an exception class, called with constants, f-strings and values the loop
        computes: the kernel stops there and its runner raises ``E(...)`` made from those values
        (backends/tvm/loops.LoopLowering.raise_statement); ``calls[s]`` is the class."""
        call = s.exc if isinstance(s.exc, gast.Call) else None
        func = call.func if call is not None else s.exc
        if s.exc is None or s.cause is not None or (call is not None and call.keywords):
            self.refuse("a raise other than of an exception class called with values", s)
        cls = self.resolved(func) if attribute_chain(func) is not None else None
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            self.refuse("a raise of something other than an exception class", s)
        for a in call.args if call is not None else ():
            if isinstance(a, gast.Constant):
                continue                                   # (a str too: it stays Python's)
            if isinstance(a, gast.JoinedStr):
                for v in a.values:
                    if isinstance(v, gast.FormattedValue):
                        if v.format_spec is not None and not all(isinstance(c, gast.Constant)
                                                                 for c in v.format_spec.values):
                            self.refuse("a raise whose f-string has a computed format", v)
                        self.expr(v.value)
                continue
            if isinstance(a, gast.Starred):
                self.refuse("a raise whose arguments are not values of the loop", a)
            self.expr(a)
        self.calls[s] = cls

    def is_list_append(self, e) -> bool:
        """``name.append(value)`` as a statement of the loop itself (not of an inlined function), on a
        name of this function: whether it holds a list is known when the loop is compiled."""
        f = e.func
        return (isinstance(f, gast.Attribute) and f.attr == "append" and isinstance(f.value, gast.Name)
                and f.value.id in self.local_names and len(e.args) == 1 and not e.keywords
                and not isinstance(e.args[0], gast.Starred) and not self.depth)

    def loop_return(self, s) -> None:
        """``return`` out of the loop (and the function): of nothing, one value or a tuple of values,
        the same number at each ``return`` of the loop (``return_arity``)."""
        values = return_values(s)
        for v in values or ():
            self.expr(v)
        arity = None if values is None else len(values)
        if self.return_arity is not False and self.return_arity != arity:
            self.refuse("returns of different numbers of values", s)
        self.return_arity = arity

    def for_loop(self, loop) -> None:
        if loop is self.region and any(_jumps(s) for s in loop.orelse):
            self.refuse("a break or continue of the loop around this one, in its else", loop)
        self.body(loop.orelse)                                    # (``for ... else``: after the loop)
        if isinstance(loop.iter, gast.Tuple):
            if not isinstance(loop.target, gast.Name):
                self.refuse("a loop target that is not one name", loop)
            if constant_items(loop.iter) is None:
                self.refuse(f"a loop over a tuple that is not 1 to {TUPLE_LOOP_ITEMS} constants of one type "
                            "(int, float or bool)", loop.iter)
            self.body(loop.body)
            return
        if self.is_call(loop.iter, builtins.reversed, 1) and self.is_call(loop.iter.args[0], builtins.range, 2):
            loop.iter = reversed_range(loop.iter, self.calls)
        call = loop.iter
        if not (isinstance(call, gast.Call) and (self.calls.get(call) == "range" or self.is_call(call, builtins.range, 3))):
            self.counted(loop)               # (its own calls need no check)
            self.body(loop.body)
            return
        if not isinstance(loop.target, gast.Name):
            self.refuse("a loop target that is not one name", loop)
        self.calls[call] = "range"
        for a in call.args:
            self.expr(a)
        self.body(loop.body)

    def is_call(self, node, fn, most_args) -> bool:
        """``node`` calls the builtin ``fn`` with 1 to ``most_args`` positional arguments."""
        return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and not node.keywords
                and 1 <= len(node.args) <= most_args and self.resolved(node.func) is fn)

    def counted(self, loop) -> None:
        """A loop over arrays (``for x in a``, ``enumerate``, ``zip``) as a loop over ``range`` (in place:
        the loop is the kernel's copy)."""
        def builtin(func):
            fn = self.resolved(func)
            return "enumerate" if fn is builtins.enumerate else ("zip" if fn is builtins.zip else None)

        if not isinstance(loop.target, gast.Name | gast.Tuple):
            self.refuse("a loop target that is not a name or a tuple of names", loop.target)
        self.counters += 1
        try:
            CountedForm(loop, builtin, self.calls, assigned_names(loop), f"__astjit_k{self.counters}").rewrite()
        except NotIterable as exc:
            self.refuse(exc.reason, exc.node)

    def while_loop(self, loop) -> None:
        if loop.orelse:
            self.refuse("while ... else", loop)
        self.expr(loop.test)
        self.body(loop.body)

    def target(self, t, stmt) -> None:
        if isinstance(t, gast.Name):
            return
        if isinstance(t, gast.Subscript):
            flatten_chained_index(t)
        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
            self.index(t.slice)
            return
        if isinstance(t, gast.Tuple) and isinstance(stmt, gast.Assign) and all(
                isinstance(e, gast.Name) for e in t.elts) and self.is_shape(stmt.value):
            return                                                # n, m = x.shape
        if isinstance(t, gast.Tuple) and isinstance(stmt, gast.Assign) and all(
                isinstance(e, gast.Name) for e in t.elts) and isinstance(self.calls.get(stmt.value), Inlined):
            return                                                # dx, dy = rhs(x, y): its return's items
        if isinstance(t, gast.Tuple) and isinstance(stmt, gast.Assign) and all(
                isinstance(e, gast.Name) or (isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name))
                for e in t.elts) and (isinstance(stmt.value, gast.Tuple) and len(stmt.value.elts) == len(t.elts)
                                      or is_divmod(stmt.value, self.calls) and len(t.elts) == 2
                                      or isinstance(stmt.value, gast.Name)):    # x, y, z = s (a tuple)
            for e in t.elts:                                      # lo, hi = 0, n  (the values were checked)
                if isinstance(e, gast.Subscript):                 # a[i], a[j] = a[j], a[i]
                    self.index(e.slice)
            return
        self.refuse("an assignment target other than a name or an array element", t)

    def index(self, node) -> None:
        """One integer or slice per axis (``a[i, j]``, ``a[i]``, ``u[1:-1]``, ``a[i:i + w, ::2]``)."""
        for item in index_items(node):
            if isinstance(item, gast.Constant) and item.value in (None, Ellipsis):
                self.refuse("None or ... in an index", item)
            if isinstance(item, gast.Slice):
                for bound in (item.lower, item.upper, item.step):
                    if bound is not None:
                        self.expr(bound)
            else:
                self.expr(item)

    def is_shape(self, node) -> bool:
        return isinstance(node, gast.Attribute) and node.attr == "shape" and isinstance(node.value, gast.Name)

    # expressions
    def expr(self, e) -> None:
        if isinstance(e, gast.Name):
            return
        if isinstance(e, gast.Constant):
            if type(e.value) not in (int, float, bool, complex):
                self.refuse(f"a {type(e.value).__name__} constant", e)
        elif isinstance(e, gast.BinOp) and isinstance(e.op, gast.MatMult):
            self.calls[e] = "reduce.dot"                          # ``a[i] @ x``
            self.expr(e.left)
            self.expr(e.right)
        elif isinstance(e, gast.BinOp):
            if not isinstance(e.op, OPERATORS):
                self.refuse(f"the operator {type(e.op).__name__}", e)
            self.expr(e.left)
            self.expr(e.right)
        elif isinstance(e, gast.UnaryOp):
            self.expr(e.operand)
        elif isinstance(e, gast.BoolOp | gast.Compare):
            for v in (e.values if isinstance(e, gast.BoolOp) else [e.left, *e.comparators]):
                self.expr(v)
            if isinstance(e, gast.Compare) and any(isinstance(o, gast.Is | gast.IsNot | gast.In | gast.NotIn)
                                                   for o in e.ops):
                self.refuse("is / in comparisons", e)
        elif isinstance(e, gast.IfExp):
            self.expr(e.test)
            self.expr(e.body)
            self.expr(e.orelse)
        elif isinstance(e, gast.Subscript):
            if self.is_shape(e.value):
                if shape_axis(e) is None:
                    self.refuse("x.shape indexed by something other than an integer constant", e)
                return
            flatten_chained_index(e)
            if not isinstance(e.value, gast.Name):
                self.refuse("indexing something other than a named array", e)
            self.index(e.slice)
        elif isinstance(e, gast.Call):
            self.call(e)
        elif isinstance(e, gast.Attribute) and e.attr in ("size", "ndim") and isinstance(e.value, gast.Name):
            return                                                # x.size, x.ndim of an array
        elif isinstance(e, gast.Attribute) and e.attr in ("real", "imag"):
            self.expr(e.value)                                    # a number's parts
        elif isinstance(e, gast.Attribute):
            # (the loop's own statements have such reads hoisted before the loop: hoist_attribute_reads)
            self.refuse(f"the attribute .{e.attr}" + (" (only the loop's own statements read attributes "
                                                       "before the loop: pass its value in)" if self.depth else ""), e)
        else:
            self.refuse(f"an expression of kind {type(e).__name__}", e)

    def call(self, e) -> None:
        if isinstance(self.calls.get(e), str):          # generated by CountedForm, its op given
            for a in e.args:
                self.expr(a)
            return
        method = isinstance(e.func, gast.Attribute) and not e.keywords and not (
            isinstance(e.func.value, gast.Name) and e.func.value.id not in self.local_names)
        if method and e.func.attr == "conjugate" and not e.args:
            self.calls[e] = "conjugate"                             # a number's conjugate
            self.expr(e.func.value)
            return
        if method and (e.func.attr in REDUCTIONS and not e.args or e.func.attr == "dot" and len(e.args) == 1):
            self.calls[e] = f"reduce.{e.func.attr}"                 # ``a[i].sum()``, ``a[i].dot(x)``: a row's method
            self.expr(e.func.value)
            for a in e.args:
                self.expr(a)
            return
        if isinstance(e.func, gast.Name) and e.func.id in self.local_functions:
            self.inline_local(e, self.local_functions[e.func.id])
            return
        chain = attribute_chain(e.func)
        fn = self.resolved(e.func) if chain is not None else None
        name = (SCALAR_CALLS.get(fn) or REDUCTION_FUNCTIONS.get(fn)) if fn is not None and _hashable(fn) else None
        if name and name.startswith("reduce.") and len(e.args) != REDUCTION_ARITY[name]:
            self.refuse(f"np.{name.removeprefix('reduce.')} with other than {REDUCTION_ARITY[name]} argument"
                        + "s" * (REDUCTION_ARITY[name] > 1), e)
        callee = callee_function(fn) if fn is not None and name is None else None
        if callee is not None:
            self.inline(e, chain, fn, callee)
            return
        if name is None or e.keywords:
            what = ".".join(chain) if chain else (
                f"the method .{e.func.attr}()" if isinstance(e.func, gast.Attribute) else "this call")
            self.refuse(f"a call of {what} (only scalar functions run inside a compiled loop)", e)
        self.calls[e] = name
        for a in e.args:
            self.expr(a)

    def inline(self, e, chain, obj, fn) -> None:
        """A call of the user's own function: its body is checked as the loop's, renamed apart."""
        what = ".".join(chain)
        self.check_depth(e)
        try:
            callee = parse_callee(fn, e, self.sites, self.resolver.fn.__globals__)
        except NotInlinable as exc:
            self.refuse(f"a call of {what} ({exc})", e)
        self.sites += 1
        self.resolver.guards[tuple(chain) + code_path(obj)] = fn.__code__
        if fn.__defaults__:        # (numbers the kernel takes as constants: positional_call)
            self.resolver.guards[tuple(chain) + code_path(obj)[:-1] + ("__defaults__",)] = fn.__defaults__
        for name in callee.free_names:
            if name in self.local_names or name in self.resolver.cells:
                self.refuse(f"a call of {what}, which reads the global {name!r}: a local of this function too", e)
        self.hoist_globals(callee)
        self.inline_body(e, what, callee)
        self.free_names.extend(callee.free_names)

    def inline_local(self, e, fndef) -> None:
        """A call of a function defined in this one (``def sq(v): ...`` before the loop): its body is
        checked as the loop's, renamed apart. The locals of this function it reads (as a closure does,
        their values at the call) are the loop's own variables, passed in."""
        what = fndef.name
        self.check_depth(e)
        try:
            callee = renamed_callee(fndef, e, self.sites, self.resolver.fn.__code__.co_filename)
        except NotInlinable as exc:
            self.refuse(f"a call of {what} ({exc})", e)
        self.sites += 1
        local = [n for n in callee.free_names if n in self.local_names]
        self.closure_names.extend(n for n in local if n not in self.local_functions)
        self.hoist_globals(callee)
        self.inline_body(e, what, callee)
        self.free_names.extend(n for n in callee.free_names if n not in local)

    def hoist_globals(self, callee) -> None:
        """Attribute reads of globals in an inlined function's body (``math.pi``, ``Params.k``, a module
        of constants) as names the loop takes, read right before it, as the loop's own statements' are:
        the function shares the caller's globals (inline.parse_callee), and a read rooted in a local
        of the caller, whose name the function reads as a global, stays as written (and refused)."""
        hoisted, _ = hoist_attribute_reads(callee.body, self.resolver, self.local_names, globals_only=True)
        self.hoisted.update(hoisted)

    def check_depth(self, e) -> None:
        if self.depth >= INLINE_DEPTH:
            self.refuse(f"calls of user functions nested more than {INLINE_DEPTH} deep (or recursive)", e)

    def inline_body(self, e, what, callee) -> None:
        for a in e.args:
            if isinstance(a, gast.Tuple):                 # a tuple of numbers passed: backends/tvm/loop_tuples
                self.tuple_items(a)
            else:
                self.expr(a)
        self.depth += 1
        self.procedures.append(callee.procedure)
        try:
            self.body(callee.body)
        except NotALoopRegion as exc:
            line = getattr(exc.node, "lineno", None)
            self.refuse(f"{exc.reason} in {what} (at {callee.filename}:{line})", e)
        finally:
            self.depth -= 1
            self.procedures.pop()
        self.calls[e] = callee

    def resolved(self, func):
        from .resolve import MISSING

        chain = attribute_chain(func)
        if chain is None or chain[0] in self.local_names:
            return None
        obj = self.resolver.resolve_chain(chain)
        if obj is MISSING:
            return None
        self.resolver.guard_chain(chain, obj)
        return obj


def is_divmod(e, calls) -> bool:
    """``divmod(x, y)``, unpacked into two targets (``q, r = divmod(x, y)``)."""
    return isinstance(e, gast.Call) and calls.get(e) == "divmod" and len(e.args) == 2


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def plain_attribute_read(node):
    """``self.grid.u`` as ``plain(plain(self, 'grid'), 'u')`` (runtime/plain_attribute): the value, or
    NOT_PLAIN where Python must read it itself."""
    chain = attribute_chain(node)
    expr = gast.copy_location(_name(chain[0]), node)
    for attr in chain[1:]:
        expr = gast.Call(func=_name(PLAIN_ATTRIBUTE_NAME), args=[expr, gast.Constant(value=attr, kind=None)],
                         keywords=[])
    return expr


def hoist_attribute_reads(loop, resolver, local_names, globals_only=False) -> tuple[dict, set]:
    """Replace, in ``loop`` (the kernel's copy), each read of a global object's attribute holding a
    number, an array, a tuple or a list (``math.pi``, ``np.inf``, ``settings.DT``, ``grid.cells[i]``) by a name, and
    return {name: the attribute expression}: the rewritten function reads it right before the loop's
    Fragment call and passes it in, so each call sees its current value, as the kernel's other
    arguments. Attributes of a local object (``self.alpha``, ``grid.u[i]``) are replaced too, and
    their names returned apart: the rewritten function reads them through
    runtime/plain_attribute, which gives NOT_PLAIN, and so the loop as written, wherever a read
    could differ from Python's (a property, a missing attribute). Attributes that numbers and arrays
    have (``a.shape``, ``x.real``) are not taken for an object's. ``loop`` may be a list of statements
    (an inlined function's body); ``globals_only``: only reads of globals are replaced."""
    from .resolve import MISSING

    hoisted, of_locals = {}, set()
    nodes = loop if isinstance(loop, list) else [loop]
    assigned = set().union(*(assigned_names(n) for n in nodes)) if nodes else set()

    class Hoist(gast.NodeTransformer):
        def visit_Call(self, node):               # (a called chain is a function: frontend/resolve)
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node

        def visit_Attribute(self, node):
            chain = attribute_chain(node)
            if chain is None or not isinstance(node.ctx, gast.Load):
                return self.generic_visit(node)
            name = hoisted_name(chain)
            if chain[0] in local_names:
                if globals_only or chain[0] in assigned or any(attr in VALUE_ATTRIBUTES for attr in chain[1:]):
                    return self.generic_visit(node)
                of_locals.add(name)
            else:
                obj = resolver.resolve_chain(chain)
                if obj is MISSING or not isinstance(obj, PASSED_VALUES):
                    return self.generic_visit(node)
            hoisted.setdefault(name, copy.deepcopy(node))
            return gast.copy_location(_name(name), node)

    for n in nodes:
        Hoist().visit(n)
    return hoisted, of_locals


# attributes of arrays and numbers: read where they stand (``a.shape[0]``, ``x.real``), never taken for
# an object's attribute to pass in
VALUE_ATTRIBUTES = frozenset(dir(np.ndarray)) | frozenset(dir(np.generic)) | frozenset(dir(float)) | frozenset(
    dir(int))


def constant_items(node):
    """The values of a tuple display of 1 to TUPLE_LOOP_ITEMS constants of one type (``(-1, 0, 1)``,
    ``(0.5, 1.0)``), else None."""
    values = []
    for e in node.elts:
        negative = isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub | gast.UAdd)
        c = e.operand if negative else e
        if not isinstance(c, gast.Constant) or type(c.value) not in (int, float, bool):
            return None
        if negative and type(c.value) is bool:
            return None                     # -True is an int: keep to what reads plainly
        values.append(-c.value if negative and isinstance(e.op, gast.USub) else c.value)
    if not 1 <= len(values) <= TUPLE_LOOP_ITEMS or len({type(v) for v in values}) != 1:
        return None
    return values


# attribute of a subscript flattened from a chain (``A[i][j]`` -> ``A[i, j]``): the axis each link of
# the chain starts at, for the IndexError Python's own link would raise (``for axis 0`` of the row)
CHAIN_AXES = "astjit_chain_axes"


def int_constant(node) -> int | None:
    """The value of an int constant, negative ones included (``-1`` is a unary minus on a constant in
    the tree); None for anything else."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub | gast.UAdd):
        v = int_constant(node.operand)
        return v if v is None or isinstance(node.op, gast.UAdd) else -v
    return None


def shape_axis(node) -> int | None:
    """The axis ``k`` of ``x.shape[k]`` when it is an int constant (``x.shape[-1]`` too); else None."""
    return int_constant(node.slice)


def flatten_chained_index(node) -> None:
    """``A[i][j]`` as ``A[i, j]``, in place (the kernel's copy of the loop): the same element, or row,
    of an array where every link before the last takes whole axes by integers. Only where Python's
    evaluation order cannot tell (it checks ``i`` before it evaluates ``j``): the later links' items
    are names, numbers, and sums or differences of them, which raise nothing."""
    chain = [node]                                   # the name's link first
    while isinstance(chain[0].value, gast.Subscript):
        chain.insert(0, chain[0].value)
    if len(chain) == 1 or not isinstance(chain[0].value, gast.Name):
        return
    if any(isinstance(item, gast.Slice) or isinstance(item, gast.Constant) and item.value in (None, Ellipsis)
           for link in chain[:-1] for item in index_items(link.slice)):
        return
    if not all(_raises_nothing(item) for link in chain[1:] for item in index_items(link.slice)):
        return
    items, starts = [], []
    for link in chain:
        starts.append(len(items))
        items.extend(index_items(link.slice))
    node.value = chain[0].value
    node.slice = gast.Tuple(elts=items, ctx=gast.Load())
    setattr(node, CHAIN_AXES, starts)


def _raises_nothing(item) -> bool:
    if isinstance(item, gast.Slice):
        return all(b is None or _raises_nothing(b) for b in (item.lower, item.upper, item.step))
    if isinstance(item, gast.BinOp) and isinstance(item.op, gast.Add | gast.Sub):
        return _raises_nothing(item.left) and _raises_nothing(item.right)
    if isinstance(item, gast.UnaryOp) and isinstance(item.op, gast.USub):
        return _raises_nothing(item.operand)
    return isinstance(item, gast.Name) or isinstance(item, gast.Constant) and type(item.value) is int


def _jumps(stmt) -> bool:
    """Whether ``stmt`` holds a ``break`` or ``continue`` of the loop around it (none of a loop in it)."""
    if isinstance(stmt, gast.Break | gast.Continue):
        return True
    if isinstance(stmt, gast.For | gast.While):
        return any(_jumps(s) for s in stmt.orelse)
    return any(_jumps(s) for name in ("body", "orelse") for s in getattr(stmt, name, None) or [])


def index_items(index) -> list:
    """The per-axis items of a subscript's index (``a[i, j]``: i and j; ``a[i]``: i)."""
    return index.elts if isinstance(index, gast.Tuple) else [index]


def return_values(s) -> list | None:
    """What a ``return`` gives back: None for nothing (``return``, ``return None``), else its values
    (one, or a tuple's items)."""
    if s.value is None or (isinstance(s.value, gast.Constant) and s.value.value is None):
        return None
    return list(s.value.elts) if isinstance(s.value, gast.Tuple) else [s.value]


def appended_lists(loop_calls) -> set:
    """The names a loop region appends to (``LoopChecker.calls``: call node -> ``"append"``)."""
    return {n.func.value.id for n, op in loop_calls.items() if op == "append"}


def assigned_names(loop) -> set:
    """Every name a loop (its targets, its body's assignments), or any statement, binds."""
    out = set()
    for n in gast.walk(loop):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            out.add(n.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            out.add(n.target.id)
    return out


def assigned_in_body(loop) -> set:
    """The names a loop's body binds (not its own target, unless the body binds it too)."""
    return set().union(*(assigned_names(s) for s in loop.body))


def rebound_names(loop) -> set:
    """The names a loop binds anew (``x = ...``, loop targets), not those it only updates with ``+=``."""
    augmented = {id(n.target) for n in gast.walk(loop) if isinstance(n, gast.AugAssign)}
    return {n.id for n in gast.walk(loop)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in augmented}


def loop_liveness(liveness, bound, loop) -> tuple[list, list]:
    """(live_in, live_out) of a loop region, at the granularity of nodes (block liveness works by
    statement, and a loop is one statement).

    live-in: a local name read in the loop that some definition outside the loop may reach, or that may
    be read before the loop's own assignment on the first iteration (not definitely bound at its
    statement): such a name is passed in, or found unbound there. live-out: a name the loop assigns and
    code after the loop reads, or that a closure reads (``FunctionLiveness.captured``)."""
    inside = set()
    statement_of = {}
    for stmt in _statements(loop):
        for n in gast.walk(stmt):
            inside.add(n)
            statement_of[n] = stmt                   # innermost statement last
    live_in = {}
    for n in gast.walk(loop):
        use = n.target if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) else n
        if not (isinstance(use, gast.Name) and (isinstance(use.ctx, gast.Load) or use is not n)):
            continue
        if use.id not in liveness.local_names:
            continue
        reaching = liveness.udc.chains.get(use, [])
        outside = not reaching or any(d.node not in inside for d in reaching)
        if outside or use.id not in bound(statement_of.get(use, loop)):
            live_in[use.id] = None
    live_out = {}
    for n in gast.walk(loop):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n in liveness.duc.chains:
            if n.id in liveness.captured or any(u.node not in inside for u in liveness.duc.chains[n].users()):
                live_out[n.id] = None
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            chain = liveness.duc.chains.get(n.target)
            if n.target.id in liveness.captured or \
                    chain is not None and any(u.node not in inside for u in chain.users()):
                live_out[n.target.id] = None
    return list(live_in), list(live_out)


def _statements(loop):
    """Every statement of the loop nest, the loop itself first."""
    todo = [loop]
    while todo:
        s = todo.pop(0)
        yield s
        for name in ("body", "orelse"):
            todo.extend(getattr(s, name, None) or [])


UNKNOWN_TRIPS = 1 << 30            # a loop whose range depends on the loop's own variables: assume large
SLICE_STATEMENT_WORK = 64          # a statement on slices (``u[1:-1] = ...``): several numpy calls
# what each array argument a whole-array statement rebinds (``v = v + dt * a``) adds to the kernel's
# call: buffers of the kernel's (np.empty, their conversion, the argument copied in; the temporaries
# beside it, ``acc = -x - 0.1 * v``), about 0.7 us. Measured on an oscillator of three such statements
# over 64 points (two rebound arguments): its Python 2.1 us a step, a kernel call 3.0 us (priced 1.1 us
# without them, so one step called the kernel, 1.4x plain Python's time). The price is set below
# what was measured because SLICE_STATEMENT_WORK, one price per statement whatever its numpy calls
# and lengths, undercounts longer statements and arrays: ``z = z * 0.9 + a`` over 1000 float32, 3
# steps, takes 6 us as Python and 2.5 us as a kernel, and stays the kernel's at this price
LOCAL_ARRAY_WORK = 30
LEN_NAME, RANGE_NAME, ESTIMATE_INT_NAME = builtin_name(LEN_CALL), builtin_name(RANGE_CALL), builtin_name(ESTIMATE_INT_CALL)
ISINSTANCE_NAME, NDARRAY_NAME = "__astjit_isinstance", "__astjit_ndarray"    # cells: isinstance, np.ndarray
NUMBERS_NAME = "__astjit_numbers"          # cell: the types of a list's items a kernel converts
NUMPY_SCALAR_NAME = "__astjit_numpy_scalar"  # cell: np.generic (arithmetic on its items is slower)
# bytes the kernel's runner copies per unit of work (7 ns): an array argument the loop rebinds is copied
# into a buffer of the kernel's at each call (np.empty and np.copyto: 211 us for 8 MB, 38 GB/s)
COPIED_BYTES_PER_UNIT = 256


class NotPlainInEstimate(Exception):
    """An attribute a work estimate reads is not a plain one (a property): Python must read it where the
    loop does, and the loop's Fragment, which runs its Python with its inner blocks compiled, decides."""


def plain_value(value):
    """``value`` (runtime/plain_attribute's reading of an attribute), or NotPlainInEstimate."""
    if value is NOT_PLAIN:
        raise NotPlainInEstimate
    return value


# the types whose ``len()``, ``.shape`` and items a work estimate may read before the loop reads them:
# reading them has no effect (a user's ``__len__``, a ``shape`` property, a defaultdict's item would run
# once more than the loop runs it, or at positions the loop never reaches)
PLAIN_OBJECT_TYPES = frozenset({np.ndarray, list, tuple, dict, range, str, bytes, int, float, bool, complex})


def plain_object(value):
    """``value``, where a work estimate may measure it or read its items; else NotPlainInEstimate."""
    if type(value) in PLAIN_OBJECT_TYPES or isinstance(value, np.generic):
        return value
    raise NotPlainInEstimate


PLAIN_VALUE_NAME, NOT_PLAIN_ERROR_NAME = "__astjit_plain_value", "__astjit_not_plain"   # cells
PLAIN_OBJECT_NAME = "__astjit_plain_object"   # cell: plain_object
TYPE_OF_NAME = "__astjit_type_of"          # cell: type
ARRAY_WORK_CELLS = {ISINSTANCE_NAME: isinstance, NDARRAY_NAME: np.ndarray, TYPE_OF_NAME: type,
                    NUMBERS_NAME: (int, float, complex, np.generic), NUMPY_SCALAR_NAME: np.generic,
                    PLAIN_VALUE_NAME: plain_value, PLAIN_OBJECT_NAME: plain_object,
                    NOT_PLAIN_ERROR_NAME: NotPlainInEstimate}


def copied_work(loop, live_in):
    """The cost of the copies a kernel call makes of the live-in arrays the loop indexes and rebinds
    (``x[i]``, then ``x = x * 0.5``: the kernel works on a copy of ``x``), as a Python expression of them
    (``(x.nbytes // COPIED_BYTES_PER_UNIT if type(x) is ndarray else 0) + ...``: inline, as a
    function's call cost 0.26 us a call), or None where it rebinds none. A loop of three positions that
    may rebind a 1,000,000-element argument copied 8 MB at each call: 211 us where its Python took
    0.4 us. (Names
    only rebound, ``s = s * r + c``, are left out: the test would cost a scalar loop's every call.)"""
    indexed = {n.value.id for n in gast.walk(loop) if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)}
    names = sorted({t.id for s in gast.walk(loop) if isinstance(s, gast.Assign) for t in s.targets
                    if isinstance(t, gast.Name) and t.id in live_in and t.id in indexed})
    if not names:
        return None
    # (only an ndarray itself: a subclass's ``nbytes`` may be a property Python would not read)
    terms = [gast.IfExp(test=is_exactly_array(n), body=gast.BinOp(
        left=gast.Attribute(value=_name(n), attr="nbytes", ctx=gast.Load()), op=gast.FloorDiv(),
        right=gast.Constant(value=COPIED_BYTES_PER_UNIT, kind=None)), orelse=gast.Constant(value=0, kind=None))
        for n in names]
    return _sum(terms)


def is_exactly_array(name):
    """``__astjit_type_of(name) is __astjit_ndarray``: an ndarray itself, not a subclass (whose
    attributes may be properties Python would not read), inline (a helper's call costs a tiny loop's
    every run)."""
    return gast.Compare(left=gast.Call(func=_name(TYPE_OF_NAME), args=[_name(name)], keywords=[]),
                        ops=[gast.Is()], comparators=[_name(NDARRAY_NAME)])


def _sum(terms):
    """``terms[0] + terms[1] + ...`` as an expression."""
    return functools.reduce(lambda a, b: gast.BinOp(left=a, op=gast.Add(), right=b), terms)


def _by_array_test(build):
    """The estimate ``build(arrays, names)`` makes, where ``arrays`` (bool) says whether the live-in
    names of ``name = <expression>`` statements hold arrays (each such statement a whole-array
    statement, several numpy calls, where they do) and ``build`` adds those names to the set
    ``names``. Where it added some, the two estimates behind one test of each name (inline: a helper's call would
    cost as much as the loop it weighs; one test per statement cost a microsecond in a loop of ten
    statements)::

        (<estimate with arrays> if __astjit_isinstance(s, __astjit_ndarray) or ... else <estimate>)
    """
    names: set = set()
    scalars = build(False, names)
    if not names:
        return scalars
    holds_array = [_holds_array(n) for n in sorted(names)]
    test = holds_array[0] if len(holds_array) == 1 else gast.BoolOp(op=gast.Or(), values=holds_array)
    return gast.IfExp(test=test, body=build(True, set()), orelse=scalars)


def _holds_array(name):
    """``__astjit_isinstance(name, __astjit_ndarray)``"""
    return gast.Call(func=_name(ISINSTANCE_NAME), args=[_name(name), _name(NDARRAY_NAME)], keywords=[])


ELEMENT_UNITS = 2        # an element read or write: numpy makes a scalar object, whose arithmetic is slow
CALL_UNITS = 2           # a call: ``abs(x)``, ``math.sqrt(x)`` cost about two operators
# ``max(m, x)``, ``min(m, x)``: about 90 ns of Python floats, as much as a dozen operators
ITERATING_CALLS, ITERATING_CALL_UNITS = ("max", "min"), 10


def operations(stmt) -> int:
    """A statement's work in Python, in units of about 5-20 ns: one for the statement, two for each
    element read or write (numpy creates a scalar object for each read, and arithmetic on numpy
    scalars costs several times Python's on floats), one for each operator and comparison, two for
    each call, ten for ``max`` and ``min`` (an ``if``: in its test; its branches count as statements
    of their own). Python's time per statement varies twentyfold (``s += x`` against
    ``v[i, j] = 0.25 * (u[i - 1, j] + ...)``); per unit it varies about threefold (measured on small
    loops: 5-9 ns a unit for Python floats and ints, 12-19 ns where elements of numpy arrays are
    read)."""
    exprs = [stmt.test] if isinstance(stmt, gast.If | gast.While) else [stmt]
    units = 1
    for e in exprs:
        for n in gast.walk(e):
            if isinstance(n, gast.Subscript):
                units += ELEMENT_UNITS
            elif isinstance(n, gast.Call):
                iterating = isinstance(n.func, gast.Name) and n.func.id in ITERATING_CALLS
                units += ITERATING_CALL_UNITS if iterating else CALL_UNITS
            elif isinstance(n, gast.BinOp | gast.UnaryOp):
                units += 1
            elif isinstance(n, gast.Compare):
                units += len(n.ops)
            elif isinstance(n, gast.BoolOp):
                units += len(n.values) - 1
    return units


def work_expression(loop, live_in=()):
    """A Python expression of the loop's live-in names: about how much work the nest does as Python, in
    ``operations`` (units of about 5-20 ns: frontend/loop_call_cost).

    Each ``for`` contributes its range's length (``stop - start``) when its arguments read only names
    the nest does not assign, the mean of its lengths at the first and the last value of the enclosing
    loops' variables when they read those (a triangular ``range(i)``), else UNKNOWN_TRIPS; times the
    operations of its body (a statement on slices counts as SLICE_STATEMENT_WORK: each of its
    operations is a numpy call). Evaluated before the loop, it lets a tiny loop run as Python
    (frontend/loop_guard): a kernel call costs one to two microseconds, more than a handful of Python
    statements. ``name = <expression>`` without subscripts counts as a statement on slices where a
    live-in name it reads holds an array (``_by_array_test``): ``x = x + dt * v``. An estimate only
    chooses between two correct paths: a negative length reads as tiny, as an empty range is."""
    if isinstance(loop, gast.While):
        return gast.Constant(value=UNKNOWN_TRIPS, kind=None)
    return _by_array_test(lambda arrays, names: _less_local_arrays(
        loop, live_in, arrays, _WorkEstimate(loop, live_in, arrays, names).statements([loop], {})))


def _less_local_arrays(loop, live_in, arrays, work):
    """``work`` less LOCAL_ARRAY_WORK for each live-in name a whole-array statement rebinds that holds
    an array (where ``arrays``: the names such statements read hold arrays): the price of the kernel's
    buffers for it and for the temporaries beside it. Each name is tested (``t = t + dt`` beside
    ``x = x + dt * v`` rebinds a number: 24 such names priced as arrays ran 12 steps as Python, 8x
    the kernel's time)."""
    if not arrays:
        return work
    bound = sorted({t.id for s in gast.walk(loop) if isinstance(s, gast.Assign) and not any(
        isinstance(n, gast.Subscript | gast.Slice) for n in gast.walk(s)) for t in s.targets
        if isinstance(t, gast.Name) and t.id in live_in})
    if not bound:
        return work
    arrays_bound = _sum([_holds_array(n) for n in bound])
    return gast.BinOp(left=work, op=gast.Sub(), right=gast.BinOp(
        left=gast.Constant(value=LOCAL_ARRAY_WORK, kind=None), op=gast.Mult(), right=arrays_bound))


def row_test(loop, live_in=()):
    """Whether the loop's element statements work on rows, as a Python expression of its live-in
    names, or None where it has none: ``out[i] = a[i] * 2.0 + 1.0`` costs a few numpy calls per
    position where ``out`` has more axes than indices, as a statement on slices does, which
    ``work_expression`` cannot tell from the source. Tested only where the estimate finds a tiny
    loop (a few rows of a large array are the kernel's work)::

        __astjit_isinstance(out, __astjit_ndarray) and out.ndim > 1

    The arrays tested: those the loop writes elements of, and those read in an assignment to a name
    (``s += a[i]``, an item read ``x = a[i]``); an ``if`` test on a row raises in Python anyway."""
    assigned = assigned_names(loop)
    indices: dict = {}

    def note(subscript):
        base, index = subscript.value, subscript.slice
        if not (isinstance(base, gast.Name) and base.id in live_in and base.id not in assigned):
            return
        if any(isinstance(n, gast.Slice) for n in gast.walk(index)):
            return                            # (a statement on slices: its own weight)
        count = len(index.elts) if isinstance(index, gast.Tuple) else 1
        indices[base.id] = min(count, indices.get(base.id, count))

    for stmt in _statements(loop):
        if isinstance(stmt, gast.Assign | gast.AugAssign):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, gast.Subscript):
                    note(t)
            if all(isinstance(t, gast.Name) for t in targets):
                for n in gast.walk(stmt.value):
                    if isinstance(n, gast.Subscript):
                        note(n)
    tests = [gast.BoolOp(op=gast.And(), values=[
        _holds_array(name),
        gast.Compare(left=gast.Attribute(value=_name(name), attr="ndim", ctx=gast.Load()), ops=[gast.Gt()],
                     comparators=[gast.Constant(value=count, kind=None)])]) for name, count in indices.items()]
    if not tests:
        return None
    return tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.Or(), values=tests)


def iteration_work(loop, live_in=(), inner_whiles=UNKNOWN_TRIPS):
    """The work of one iteration, as a Python expression of the loop's live-in names: of a ``for``,
    taking the next value and its body; of a ``while``, its test and its body. ``inner_whiles``: the
    work counted for a ``while`` inside it (0 where the caller counts their trips as they run)."""
    def build(arrays, names):
        estimate = _WorkEstimate(loop, live_in, arrays, names, inner_whiles)
        if isinstance(loop, gast.While):
            return gast.BinOp(left=gast.Constant(value=operations(loop), kind=None), op=gast.Add(),
                              right=estimate.statements(loop.body, {}))
        return estimate.position(loop.body, estimate.inner(loop, {}))

    return _by_array_test(build)


def position_work(loop, live_in=()):
    """(positions, work per position) of a ``for`` loop (its kernel form: ranges), as two Python
    expressions of its live-in names; their product is ``work_expression(loop)``. A loop handed over
    part way (frontend/loop_guard) weighs the positions left against a kernel call."""
    return _WorkEstimate(loop, live_in).trips(loop, {}), iteration_work(loop, live_in)


def _python_int(arg):
    """A range argument as a Python int (loop_iteration.estimate_int; a name holding one passes at the
    cost of a type test, a numpy int at that of ``operator.index``): the estimate's arithmetic on a
    numpy int wraps and warns where Python's never does (``range(np.int64(2**63 - 1))`` times a
    position's work; ``n * n`` positions of two ranges over an ``np.int32`` of 6,000; the last value of
    ``range(np.uint64(0))``), a warning plain Python never gives, and the wrapped estimate a wrong
    choice. An int constant, ``len()``, and an array's ``shape[k]``, ``size`` or ``ndim`` are taken as
    they are (Python's ints, for an array; converting them cost 0.08 us on a loop of 0.3 us)."""
    if _taken_as_python_int(arg):
        return arg
    if isinstance(arg, gast.BinOp) and isinstance(arg.op, gast.Add | gast.Sub | gast.Mult | gast.FloorDiv):
        # (``n - 1 - i``: each name converted, once per estimate, not the whole at each use: a bubble
        # sort's inner loop paid two calls at each of its outer positions, 0.4 us on 1 us)
        return _marked(gast.BinOp(left=_python_int(arg.left), op=arg.op, right=_python_int(arg.right)))
    by_call = _marked(gast.Call(func=_name(ESTIMATE_INT_NAME), args=[arg], keywords=[]))
    if not isinstance(arg, gast.Name):
        return by_call

    def builtin(call, *args):
        return gast.Call(func=_name(builtin_name(call)), args=[copy.deepcopy(a) for a in args], keywords=[])

    numpy_int = gast.IfExp(test=builtin(ISINSTANCE_CALL, arg, _name(builtin_name(INTEGER_CALL))),
                           body=builtin(INDEX_CALL, arg), orelse=by_call)
    is_int = gast.Compare(left=builtin(TYPE_CALL, arg), ops=[gast.Is()], comparators=[_name(builtin_name(INT_CALL))])
    converted = _marked(gast.IfExp(test=is_int, body=copy.deepcopy(arg), orelse=numpy_int))
    setattr(converted, SHARED_AS, f"__astjit_int_{arg.id}")       # (computed once: loop_guard._shared_reads)
    return converted


PYTHON_INT = "astjit_python_int"      # attribute of an expression _python_int made
SHARED_AS = "astjit_shared_as"        # attribute of a name's conversion: the variable it may be computed into


def _marked(node):
    setattr(node, PYTHON_INT, True)
    return node


def _taken_as_python_int(e) -> bool:
    """Whether ``e`` is a Python int already for the estimate: an int constant, ``len()``, an array's
    extent, what ``_python_int`` made (an inner range's bounds are the outer's, converted once), or
    arithmetic of those (deep copies keep the mark: each converted value is converted once)."""
    if getattr(e, PYTHON_INT, False) or isinstance(e, gast.Constant) and type(e.value) is int or _array_extent(e):
        return True
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id in ("len", LEN_NAME):
        return True
    if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add | gast.Sub | gast.Mult | gast.FloorDiv):
        return _taken_as_python_int(e.left) and _taken_as_python_int(e.right)
    return isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub) and _taken_as_python_int(e.operand)


def _array_extent(e) -> bool:
    """``x.shape[k]``, ``x.size``, ``x.ndim`` of a name: an array's are Python ints."""
    if isinstance(e, gast.Subscript) and shape_axis(e) is not None:
        e = e.value
        return isinstance(e, gast.Attribute) and e.attr == "shape" and isinstance(e.value, gast.Name)
    return isinstance(e, gast.Attribute) and e.attr in ("size", "ndim") and isinstance(e.value, gast.Name)


class _WorkEstimate:
    """The terms of ``work_expression``: positions of each ``for``, statements of each body, with the
    live-in names of ``name = <expression>`` statements holding arrays or not (``arrays``), those
    names noted in ``names`` (``_by_array_test``)."""

    def __init__(self, loop, live_in, arrays=False, names=None, inner_whiles=UNKNOWN_TRIPS):
        self.assigned = assigned_names(loop)
        self.live_in = live_in
        self.arrays = arrays
        self.inner_whiles = inner_whiles            # a ``while`` inside: its trips are not known
        self.names = set() if names is None else names
        self.depth = 0              # how many loops the statements counted are in

    @staticmethod
    def count(args):
        if len(args) == 1:          # cheaper than len(range(...))
            return _python_int(args[0])
        if len(args) == 2:
            return gast.BinOp(left=_python_int(args[1]), op=gast.Sub(), right=_python_int(args[0]))
        step = int_constant(args[2])
        if step:
            # (a constant step: the length by arithmetic, negative where the range is empty, as the
            # forms above; ``len(range(...))`` costs a range object at each use, about 0.1 us)
            span = (gast.BinOp(left=_python_int(args[1]), op=gast.Sub(), right=_python_int(args[0])) if step > 0
                    else gast.BinOp(left=_python_int(args[0]), op=gast.Sub(), right=_python_int(args[1])))
            if abs(step) == 1:
                return span
            return gast.BinOp(left=gast.BinOp(left=span, op=gast.Add(), right=gast.Constant(value=abs(step) - 1, kind=None)),
                              op=gast.FloorDiv(), right=gast.Constant(value=abs(step), kind=None))
        return gast.Call(func=_name(LEN_NAME), args=[gast.Call(func=_name(RANGE_NAME),
                                                               args=[_python_int(a) for a in args], keywords=[])],
                         keywords=[])

    def trips(self, node, outer):
        if isinstance(node.iter, gast.Tuple):
            return gast.Constant(value=len(node.iter.elts), kind=None)
        if not all(without_effects(a) for a in node.iter.args):
            return gast.Constant(value=UNKNOWN_TRIPS, kind=None)
        names = {n.id for a in node.iter.args for n in gast.walk(a) if isinstance(n, gast.Name)}
        if not names & self.assigned:
            return self.count([copy.deepcopy(a) for a in node.iter.args])
        if not names & self.assigned <= set(outer):
            return gast.Constant(value=UNKNOWN_TRIPS, kind=None)
        ends = [self.count([substituted(a, {n: outer[n][k] for n in names & self.assigned}) for a in node.iter.args])
                for k in (0, 1)]
        return gast.BinOp(left=gast.BinOp(left=ends[0], op=gast.Add(), right=ends[1]), op=gast.FloorDiv(),
                          right=gast.Constant(value=2, kind=None))

    def inner(self, node, outer) -> dict:
        """``outer`` and, where known, (first, last) of this ``for``'s variable over range(...) (last: the
        stop less one, a value the variable takes: an inner range ``range(p[i], p[i + 1])`` read at
        it stays in the array)."""
        inner = dict(outer)
        args = node.iter.args if isinstance(node.iter, gast.Call) else []
        names = {n.id for a in args for n in gast.walk(a) if isinstance(n, gast.Name)}
        if not (isinstance(node.target, gast.Name) and not names & self.assigned and len(args) in (1, 2, 3)
                and all(without_effects(a) for a in args)):
            return inner
        if len(args) < 3:
            first = gast.Constant(value=0, kind=None) if len(args) == 1 else _python_int(args[0])
            last = gast.BinOp(left=_python_int(args[-1]), op=gast.Sub(), right=gast.Constant(value=1, kind=None))
        else:                   # (a step, ``range(n - 1, -1, -1)``: start + (length - 1) * step)
            first = _python_int(copy.deepcopy(args[0]))
            steps = gast.BinOp(left=self.count([copy.deepcopy(a) for a in args]), op=gast.Sub(),
                               right=gast.Constant(value=1, kind=None))
            last = gast.BinOp(left=_python_int(copy.deepcopy(args[0])), op=gast.Add(), right=gast.BinOp(
                left=steps, op=gast.Mult(), right=_python_int(copy.deepcopy(args[2]))))
        inner[node.target.id] = (first, last)
        return inner

    def position(self, body, outer):
        """One position of a loop: taking the next value (one unit) and the body."""
        self.depth += 1
        body_work = self.statements(body, outer)
        self.depth -= 1
        return gast.BinOp(left=gast.Constant(value=1, kind=None), op=gast.Add(), right=body_work)

    @staticmethod
    def at_least_zero(trips):
        """``(t if t > 0 else 0)`` for a nested loop's length ``t``: two negative lengths multiply into
        a large positive work (a 3x3 filter's ``range(1, h - 1)`` nest on a 1x1 image called the
        kernel, 12x plain Python's time); the outermost loop's sign reads as tiny by itself."""
        if isinstance(trips, gast.Constant):
            return trips
        positive = gast.Compare(left=trips, ops=[gast.Gt()], comparators=[gast.Constant(value=0, kind=None)])
        return gast.IfExp(test=positive, body=copy.deepcopy(trips), orelse=gast.Constant(value=0, kind=None))

    def statements(self, stmts, outer):
        total = None
        for s in stmts:
            if isinstance(s, gast.While):
                term = gast.Constant(value=self.inner_whiles, kind=None)
            elif isinstance(s, gast.For):
                trips = self.at_least_zero(self.trips(s, outer)) if self.depth else self.trips(s, outer)
                term = gast.BinOp(left=trips, op=gast.Mult(), right=self.position(s.body, self.inner(s, outer)))
            else:
                # (an ``if``'s branches count below, each statement once)
                slices = not isinstance(s, gast.If) and any(isinstance(n, gast.Slice) for n in gast.walk(s))
                units = SLICE_STATEMENT_WORK if slices else operations(s)
                term = gast.Constant(value=units, kind=None)
                if isinstance(s, gast.Assign | gast.AugAssign) and not slices and not any(
                        isinstance(n, gast.Subscript) for n in gast.walk(s)):
                    names = {n.id for n in _value_names(s) if n.id in self.live_in}
                    self.names |= names
                    if names and self.arrays:
                        term = gast.Constant(value=SLICE_STATEMENT_WORK, kind=None)
                for name in ("body", "orelse"):
                    if getattr(s, name, None):
                        term = gast.BinOp(left=term, op=gast.Add(), right=self.statements(getattr(s, name), outer))
            total = term if total is None else gast.BinOp(left=total, op=gast.Add(), right=term)
        return gast.Constant(value=0, kind=None) if total is None else total


# calls a range() argument may make and still be evaluated again by an estimate: builtins and the
# functions of math and numpy (a user's helper, which the kernel inlines, may have effects)
EFFECTLESS_CALLS = frozenset({"len", "min", "max", "abs", "int", "float", "round", "range", "enumerate", "zip", "reversed"})
EFFECTLESS_MODULES = frozenset({"math", "np", "numpy"})


def without_effects(expr) -> bool:
    """Whether evaluating ``expr`` once more than the loop does (the work estimate, before the loop)
    cannot change what the loop sees: ``range(bump(a), n)`` with ``bump`` writing into ``a`` can."""
    for n in gast.walk(expr):
        if isinstance(n, gast.Call):
            func = n.func
            if isinstance(func, gast.Name) and (func.id in EFFECTLESS_CALLS or func.id.startswith("__astjit_")):
                continue
            root = func
            while isinstance(root, gast.Attribute):
                root = root.value
            if isinstance(func, gast.Attribute) and isinstance(root, gast.Name) and root.id in EFFECTLESS_MODULES:
                continue
            return False
    return True


def _value_names(stmt):
    """The names a statement computes with: not those it only measures (``len(a)``, ``a.shape``,
    ``a.size``, ``a.ndim``), which give numbers whatever ``a`` holds (``stop = i >= len(a)`` is scalar
    work where ``a`` is an array)."""
    measured = set()
    for n in gast.walk(stmt):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in ("len", LEN_NAME):
            measured.update(id(a) for a in n.args if isinstance(a, gast.Name))
        elif isinstance(n, gast.Attribute) and n.attr in ("shape", "size", "ndim") and isinstance(n.value, gast.Name):
            measured.add(id(n.value))
    return [n for n in gast.walk(stmt) if isinstance(n, gast.Name) and id(n) not in measured]


def constant_value(expr):
    """The value of an expression of constants (``1 + (3 + 1)``), or None."""
    if not all(isinstance(n, gast.Constant | gast.BinOp | gast.operator) for n in gast.walk(expr)):
        return None
    tree = ast.fix_missing_locations(gast.gast_to_ast(gast.Expression(body=copy.deepcopy(expr))))
    return eval(compile(tree, "<work>", "eval"))


def substituted(expr, values: dict):
    """A copy of ``expr`` with each name in ``values`` replaced by a copy of its expression."""
    class Substitute(gast.NodeTransformer):
        def visit_Name(self, node):
            return copy.deepcopy(values[node.id]) if node.id in values else node

    return Substitute().visit(copy.deepcopy(expr))


def _name(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
