"""The function's statements as items the reverse pass understands: each differentiable assignment is
split into primitive ops (``t1 = x @ W``, ``t2 = t1 + b``, ``h = np.tanh(t2)``), each with the adjoint
rule of its op; everything that carries no gradient stays a plain statement.
"""

import copy
import operator
from dataclasses import dataclass, field

import gast
import numpy as np

from ..frontend.lower import attribute_chain, describe
from .activity import COMPREHENSIONS, NAMESPACE_READERS, STORING_METHODS
from .helpers import in_place_result
from .mutation import snapshot
from .normalize import located
from .numpy_rules import astype, getitem
from .rules import is_non_differentiable, rule_for

BINARY = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "true_divide",
          gast.Pow: "power", gast.MatMult: "matmul", gast.Mod: "remainder"}
UNARY = {gast.USub: "negative", gast.UAdd: "positive"}
# the ufunc of ``x op= v`` whose error an in-place update numpy refuses raises (not matmul: a gufunc)
IN_PLACE_UFUNCS = {op: getattr(np, name) for op, name in BINARY.items() if op is not gast.MatMult}
METHODS = {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "var": "var", "std": "std",
           "prod": "prod", "reshape": "reshape", "ravel": "ravel", "flatten": "ravel", "squeeze": "squeeze",
           "transpose": "transpose", "swapaxes": "swapaxes", "dot": "dot", "clip": "clip", "copy": "copy",
           "cumsum": "cumsum"}
PACKED_METHODS = {"reshape", "transpose"}      # x.reshape(2, 3) means np.reshape(x, (2, 3))
# keywords numpy takes under a second name: ``x.clip(min=0.0)`` (the method's), ``np.clip(x, max=1.0)``
KEYWORD_ALIASES = {np.clip: {"min": "a_min", "max": "a_max"}}
# ops whose first operand is a tuple of arrays: each array written in the tuple is an operand of the
# adjoint rule (numpy_rules.concatenate, stack), ``axis`` a keyword
SEQUENCE_OPS = {"concatenate": ("axis",), "stack": ("axis",)}
MAX_SEQUENCE = 8


@dataclass(eq=False)
class Plain:
    """A statement that carries no gradient (kept as written)."""
    stmt: object


@dataclass(eq=False)
class Prim:
    """``target = op(operands...)`` with the op's adjoint rule."""
    target: str
    stmt: object
    rule: object
    operands: list                 # expressions: Names (active or not) or Constants
    keywords: dict
    active: set                    # indices of operands that carry a gradient
    node: object                   # the user's expression (for messages)


@dataclass(eq=False)
class IfItem:
    cond: str
    body: list
    orelse: list


@dataclass(eq=False)
class ForItem:
    target: str
    range_name: str
    count: str | None
    body: list
    node: object


@dataclass(eq=False)
class WhileItem:
    test: object
    count: str
    body: list


@dataclass(eq=False)
class Exit:
    stmt: object


@dataclass(eq=False)
class Lowering:
    filename: str
    activity: object
    resolve: object                # AST callee -> object or None
    params: set
    bind_global: object            # (name, object) -> the generated function's name for that object
    prefix: str = "_"              # of generated names: no name of the user's function starts with it
    counter: list = field(default_factory=lambda: [0])
    aliased: set = field(default_factory=set)
    mutated: set = field(default_factory=set)      # names that may hold an array updated in place

    def fresh(self, hint="t") -> str:
        self.counter[0] += 1
        return f"{self.prefix}{hint}{self.counter[0]}"

    def error(self, node, reason):
        return located(self.filename, node, reason)

    def active(self, e) -> bool:
        return self.activity.expr(e)

    # -- statements ----------------------------------------------------------------------------------
    def statements(self, stmts) -> list:
        items = []
        for s in stmts:
            items += self.statement(s)
        return items

    def statement(self, s) -> list:
        self._refuse_namespace_readers(s)
        touches = any(isinstance(n, gast.Name) and n.id in self.activity.active for n in gast.walk(s))
        if touches:
            self._refuse_assignment_expressions(s)
            self._refuse_out_arguments(s)
        if isinstance(s, gast.Assign):
            return self.assign(s)
        if isinstance(s, gast.AugAssign):
            return self.aug_assign(s)
        if isinstance(s, gast.If):
            cond = self.fresh("cond")
            test = _assign(cond, s.test, s)
            return [Plain(test), IfItem(cond, self.statements(s.body), self.statements(s.orelse))]
        if isinstance(s, gast.For) and touches and self._differentiated_loop(s):
            return self.for_loop(s)
        if isinstance(s, gast.While) and touches and self._differentiated_loop(s):
            count = self.fresh("trips")
            return [Plain(_assign(count, gast.Constant(value=0, kind=None), s)),
                    WhileItem(s.test, count, self.statements(s.body))]
        if isinstance(s, gast.Break | gast.Continue):
            return [Exit(s)]
        if isinstance(s, gast.Expr) and touches and self._stores_in_container(s.value):
            raise self.error(s, f"`.{s.value.func.attr}()` puts a value the gradient flows through in a "
                             "container, which astjit.grad cannot follow: join arrays written in the call "
                             "instead (np.stack((a, b)), np.concatenate((a, b)))")
        if isinstance(s, gast.Expr) and touches and self._hands_over_active(s.value) and not self._is_print(s.value):
            raise self.error(s, "a statement whose effect astjit.grad cannot follow reads a value the gradient "
                             "flows through (only assignments, `if`, loops and print are differentiated)")
        if touches and isinstance(s, gast.Try | gast.With | gast.FunctionDef | gast.Delete | gast.Global
                                  | gast.Nonlocal | gast.ClassDef | gast.AsyncFor | gast.AsyncWith | gast.Match):
            raise self.error(s, f"`{type(s).__name__.lower()}` statements on values the gradient flows through "
                             "cannot be differentiated")
        return [Plain(s)]

    def _differentiated_loop(self, loop) -> bool:
        """Whether a loop that reads active values must be differentiated: it binds an active name, or
        a statement of its body is more than plain Python once lowered (or is refused there). A loop
        kept as plain Python contributes nothing to the gradient, so this must never miss one (its own
        target counts: ``for v in x: ...`` then ``v * 3.0`` after the loop)."""
        bound = loop.body + ([loop.target] if isinstance(loop, gast.For) else [])
        if any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in self.activity.active
               for b in bound for n in gast.walk(b)):
            return True
        return not _all_plain(self.statements(loop.body))

    def _refuse_namespace_readers(self, s):
        """``locals()``, ``vars()``, ``eval``, ``exec``: the gradient function holds the user's variables
        and its own (``len(locals())`` counted those too), and a value read by its name carries a
        gradient no rule follows."""
        if isinstance(s, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef):
            return
        for n in gast.walk(s):
            if not isinstance(n, gast.Call):
                continue
            called = self.resolve(n.func)
            # (``dir()`` and ``vars()`` read the locals only without an argument)
            if any(called is f for f in NAMESPACE_READERS) and not (called in (dir, vars) and (n.args or n.keywords)):
                raise self.error(n, f"`{n.func.id if isinstance(n.func, gast.Name) else 'this call'}` reads the "
                                 "function's variables by name, which astjit.grad cannot follow: the gradient "
                                 "function has variables of its own")

    def _refuse_assignment_expressions(self, s):
        """``y := v`` with an active ``v``: the lowering splits statements into ops and would not see it."""
        for n in gast.walk(s):
            if isinstance(n, gast.NamedExpr) and self.active(n.value):
                raise self.error(n, "an assignment expression (`:=`) of a value the gradient flows through "
                                 "cannot be differentiated: assign it in a statement of its own")

    def _refuse_out_arguments(self, s):
        """``np.exp(x, out=buf)`` (or ``np.multiply(x, c, buf)``) writes its result into ``buf``, which the
        lowering would not see: refused where the call reads or writes a value the gradient flows through."""
        for n in gast.walk(s):
            if not isinstance(n, gast.Call):
                continue
            callee = self.resolve(n.func)
            out = [k.value for k in n.keywords if k.arg == "out"]
            if isinstance(callee, np.ufunc):
                out += n.args[callee.nin:]
            if out and any(self.active(a) for a in list(n.args) + [k.value for k in n.keywords]
                           + [getattr(n.func, "value", None)]):
                raise self.error(n, "a call with an `out` array cannot be differentiated when the gradient flows "
                                 "through it: bind the result to a name instead (y = np.exp(x))")

    def _stores_in_container(self, e) -> bool:
        return isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and e.func.attr in STORING_METHODS \
            and any(self.active(a) for a in list(e.args) + [k.value for k in e.keywords])

    def _hands_over_active(self, e) -> bool:
        """Whether an expression statement gives a value the gradient flows through to a call that may
        keep or change it: as an argument, or as the object of a method (``x.sort()``); not where each
        such value reaches only functions registered as non-differentiable (``len(x)``, ``np.floor``)
        or is read for what carries none of it (``log.append(x.shape)``)."""
        if not isinstance(e, gast.Call):
            return True
        for n in gast.walk(e):
            if not isinstance(n, gast.Call):
                continue
            operands = list(n.args) + [k.value for k in n.keywords]
            if isinstance(n.func, gast.Attribute):
                operands.append(n.func.value)
            obj = self.resolve(n.func)
            if (obj is None or not is_non_differentiable(obj)) and any(self.active(a) for a in operands):
                return True
        return False

    def _is_print(self, e) -> bool:
        return isinstance(e, gast.Call) and self.resolve(e.func) is print

    def for_loop(self, s) -> list:
        it = s.iter
        if isinstance(it, gast.Call) and self.resolve(it.func) is range and not it.keywords:
            if not isinstance(s.target, gast.Name):
                raise self.error(s.target, "the target of a differentiated `for` loop must be one name")
            range_name = self.fresh("range")
            return self._range_loop(s, s.target.id, [Plain(_assign(range_name, it, s))], range_name, [])
        if self.active(it):
            return self._indexed_loop(s)
        raise self.error(s, "a loop the gradient flows through must be `for ... in range(...)` or over "
                         "arrays the gradient flows through")

    def _builtin(self, fn):
        return _name(self.bind_global(fn.__name__, fn))

    def _range_loop(self, s, position, before, range_name, first) -> list:
        """``before``, then the loop of ``position`` over ``range_name`` running ``first`` and the body."""
        items = list(before)
        count = None
        if any(isinstance(n, gast.Break) for b in s.body for n in _own_walk(b)):
            count = self.fresh("trips")
            items.append(Plain(_assign(count, gast.Constant(value=0, kind=None), s)))
        items.append(ForItem(position, range_name, count, first + self.statements(s.body), s))
        return items

    def _indexed_loop(self, s) -> list:
        """``for v in x``, ``for i, v in enumerate(x)`` and ``for a, b in zip(x, y)`` over arrays the
        gradient flows through, as a loop over positions reading ``v = x[k]`` (iterating an array is
        indexing its first axis), so each element's adjoint is added back at its position. The arrays
        are bound before the loop, as the iteration holds them: rebinding ``x`` in the body does not
        change what it iterates."""
        it, target = s.iter, s.target
        callee = self.resolve(it.func) if isinstance(it, gast.Call) else None
        if callee in (enumerate, zip) and (it.keywords or any(isinstance(a, gast.Starred) for a in it.args)):
            raise self.error(it, f"{callee.__name__}() with keywords or *args in a loop the gradient flows through")
        start = None
        if callee is enumerate and len(it.args) in (1, 2):
            sequences, counter = [it.args[0]], None
            start = it.args[1] if len(it.args) == 2 else None
            if isinstance(target, gast.Tuple | gast.List) and len(target.elts) == 2:
                counter, targets = target.elts[0], target.elts[1:]
            else:
                raise self.error(target, "the target of `for ... in enumerate(...)` must be `i, v`")
        elif callee is zip and it.args:
            sequences, counter = list(it.args), None
            if not (isinstance(target, gast.Tuple | gast.List) and len(target.elts) == len(sequences)):
                raise self.error(target, "the target of `for ... in zip(...)` must name each element")
            targets = target.elts
            inactive = [a for a in sequences if not self.active(a)]
            if inactive:
                raise self.error(inactive[0], "in a loop over zip(...) that the gradient flows through, each "
                                 "iterable must be an array the gradient flows through")
        else:
            sequences, counter, targets = [it], None, [target]
        if not all(isinstance(t, gast.Name) for t in targets) or counter is not None \
                and not isinstance(counter, gast.Name):
            raise self.error(target, "the target of a differentiated `for` loop must be names, one per element")
        before, held = [], []
        for a in sequences:
            name = self.fresh("iterated")
            before += self.value_into(name, a, s) if self.active(a) else [Plain(_assign(name, a, s))]
            held.append(name)
        lengths = [gast.Call(func=self._builtin(len), args=[_name(n)], keywords=[]) for n in held]
        stop = lengths[0] if len(lengths) == 1 else gast.Call(func=self._builtin(min), args=lengths, keywords=[])
        range_name, position = self.fresh("range"), self.fresh("position")
        before.append(Plain(_assign(range_name, gast.Call(func=self._builtin(range), args=[stop], keywords=[]), s)))
        first = []
        if counter is not None:
            count = _name(position)
            if start is not None:              # evaluated once, before the loop, as enumerate does (an int)
                first_count = self.fresh("start")
                as_int = gast.Call(func=self._builtin(operator.index), args=[start], keywords=[])
                before.append(Plain(_assign(first_count, as_int, s)))
                count = gast.BinOp(left=count, op=gast.Add(), right=_name(first_count))
            first.append(Plain(_assign(counter.id, count, s)))
        for t, n in zip(targets, held):
            element = gast.Subscript(value=_name(n), slice=_name(position), ctx=gast.Load())
            first += self.value_into(t.id, element, s)
        return self._range_loop(s, position, before, range_name, first)

    def assign(self, s) -> list:
        if len(s.targets) != 1:
            if self.active(s.value):
                raise self.error(s, "chained assignment (`a = b = ...`) of a value the gradient flows through")
            return [Plain(s)]
        target = s.targets[0]
        active_value = self.active(s.value)
        if isinstance(target, gast.Name):
            if not active_value:
                return [Plain(s)]
            return self.value_into(target.id, s.value, s)
        if isinstance(target, gast.Tuple | gast.List):
            if not active_value:
                return [Plain(s)]
            if not (isinstance(s.value, gast.Tuple | gast.List) and len(s.value.elts) == len(target.elts)
                    and all(isinstance(t, gast.Name) for t in target.elts)):
                raise self.error(s, "unpacking a value the gradient flows through: assign each part by name")
            items, temps = [], []
            for e in s.value.elts:
                t = self.fresh()
                items += self.value_into(t, e, s) if self.active(e) else [Plain(_assign(t, e, s))]
                temps.append(t)
            for t, name in zip(temps, target.elts):
                items += self.value_into(name.id, _name(t), s) if t in self.activity.active or self.active(
                    _name(t)) else [Plain(_assign(name.id, _name(t), s))]
            return items
        base = target
        while isinstance(base, gast.Subscript | gast.Attribute):
            base = base.value
        if active_value or (isinstance(base, gast.Name) and base.id in self.activity.active):
            raise self.error(s, "an in-place update of an array the gradient flows through cannot be "
                             "differentiated: build a new array instead (np.where, np.concatenate, ...)")
        return [Plain(s)]

    def aug_assign(self, s) -> list:
        target = s.target
        if not (self.active(s.value) or self.active(target)):
            return [Plain(s)]
        if not isinstance(target, gast.Name):
            raise self.error(s, "an in-place update of an array the gradient flows through cannot be "
                             "differentiated: build a new array instead (np.where, np.concatenate, ...)")
        if target.id in self.params:
            raise self.error(s, f"`{target.id} {_op_text(s.op)}= ...` updates an argument in place; astjit.grad "
                             f"cannot differentiate that: write `{target.id} = {target.id} {_op_text(s.op)} ...`")
        if target.id in self.aliased:
            raise self.error(s, f"`{target.id} {_op_text(s.op)}= ...` may update an array that another name "
                             f"or view also holds; astjit.grad cannot differentiate that: write "
                             f"`{target.id} = {target.id} {_op_text(s.op)} ...`")
        # `x op= v` on an array keeps x's dtype and shape: `x = in_place_result(x op v, x)`
        value = gast.BinOp(left=_name(target.id), op=s.op, right=s.value)
        gast.copy_location(value, s)
        result = self.fresh()
        items = self.value_into(result, value, s)
        ufunc = IN_PLACE_UFUNCS.get(type(s.op))
        keywords = {} if ufunc is None else {"ufunc": _name(self.bind_global(f"np_{ufunc.__name__}", ufunc))}
        kept = gast.Call(func=self._builtin(in_place_result), args=[_name(result), _name(target.id)],
                         keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])
        return items + [self._prim(target.id, kept, in_place_result, [_name(result), _name(target.id)], keywords,
                                   s, s)]

    # -- expressions ---------------------------------------------------------------------------------
    def atom(self, e, stmt, items) -> object:
        """A Name or Constant holding ``e``'s value, evaluated once (temporaries appended to ``items``); an
        inactive value that may be updated in place later is copied, as the backward pass reads it."""
        if isinstance(e, gast.Constant) or isinstance(e, gast.Name) and not self._may_change(e):
            return e
        t = self.fresh()
        if self.active(e):
            self.activity.active.add(t)
            items += self.value_into(t, e, stmt)
        else:
            items.append(Plain(_assign(t, self._snapshot(e) if self._may_change(e) else e, stmt)))
        return _name(t)

    def _may_change(self, e) -> bool:
        """Whether inactive ``e`` reads a name whose array may be updated in place later."""
        return not self.active(e) and any(isinstance(n, gast.Name) and n.id in self.mutated for n in gast.walk(e))

    def _snapshot(self, e):
        return gast.Call(func=self._builtin(snapshot), args=[e], keywords=[])

    def value_into(self, target, e, stmt) -> list:
        """Items computing active expression ``e`` into ``target``, one op per item."""
        items = []
        if isinstance(e, gast.Name | gast.Constant):
            return [self._prim(target, e, float, [e], {}, stmt, e)]
        if isinstance(e, gast.BinOp) and type(e.op) in BINARY:
            left, right = self.atom(e.left, stmt, items), self.atom(e.right, stmt, items)
            value = gast.BinOp(left=left, op=e.op, right=right)
            return items + [self._prim(target, value, _numpy(BINARY[type(e.op)]), [left, right], {}, stmt, e)]
        if isinstance(e, gast.UnaryOp) and type(e.op) in UNARY:
            operand = self.atom(e.operand, stmt, items)
            value = gast.UnaryOp(op=e.op, operand=operand)
            return items + [self._prim(target, value, _numpy(UNARY[type(e.op)]), [operand], {}, stmt, e)]
        if isinstance(e, gast.Subscript):
            x = self.atom(e.value, stmt, items)
            index = self.fresh("index")
            index_value = _index_value(e.slice, _name(self.bind_global("slice", slice)))
            if self._may_change(index_value):
                index_value = self._snapshot(index_value)
            items.append(Plain(_assign(index, index_value, stmt)))
            value = gast.Subscript(value=x, slice=_name(index), ctx=gast.Load())
            return items + [self._prim(target, value, getitem, [x, _name(index)], {}, stmt, e)]
        if isinstance(e, gast.Attribute) and e.attr == "T":
            x = self.atom(e.value, stmt, items)
            value = gast.Attribute(value=x, attr="T", ctx=gast.Load())
            return items + [self._prim(target, value, _numpy("transpose"), [x], {}, stmt, e)]
        if isinstance(e, gast.Call):
            return self._call_into(target, e, stmt, items)
        if isinstance(e, gast.IfExp):           # as the `if` statement it means
            cond = self.fresh("cond")
            return [Plain(_assign(cond, e.test, stmt)),
                    IfItem(cond, self.value_into(target, e.body, stmt), self.value_into(target, e.orelse, stmt))]
        if isinstance(e, gast.BoolOp):
            return self._bool_op_into(target, e, stmt, items)
        if isinstance(e, COMPREHENSIONS):
            raise self.error(e, "a comprehension over values the gradient flows through cannot be "
                             "differentiated: write it as a `for` loop")
        raise self.error(e, f"astjit.grad cannot differentiate this {type(e).__name__} expression")

    def _bool_op_into(self, target, e, stmt, items):
        """``a or b`` is ``a`` if ``bool(a)`` else ``b``, and ``a and b`` is ``b`` if ``bool(a)`` else ``a``: an
        ``if`` on ``bool(a)`` (taken once, as Python does), whose branches evaluate the rest only where
        Python does, so the operand returned gets the adjoint."""
        first = self.atom(e.values[0], stmt, items)
        rest = e.values[1] if len(e.values) == 2 else gast.copy_location(gast.BoolOp(op=e.op, values=e.values[1:]), e)
        cond = self.fresh("cond")
        items.append(Plain(_assign(cond, gast.Call(func=self._builtin(bool), args=[first], keywords=[]), stmt)))
        taken, other = (first, rest) if isinstance(e.op, gast.Or) else (rest, first)
        return items + [IfItem(cond, self.value_into(target, taken, stmt), self.value_into(target, other, stmt))]

    def _call_into(self, target, e, stmt, items):
        func = e.func
        if isinstance(func, gast.Attribute) and self.active(func.value) and self.resolve(func) is None:
            method = func.attr
            receiver = self.atom(func.value, stmt, items)
            args = list(e.args)
            if method in PACKED_METHODS and len(args) > 1:
                args = [gast.Tuple(elts=args, ctx=gast.Load())]
            if method == "astype":
                op = astype
            elif method in METHODS:
                op = _numpy(METHODS[method])
            else:
                raise self.error(e, f"no adjoint rule for the method .{method}() (astjit.adjoint registers one)")
            operands = [receiver] + [self.atom(a, stmt, items) for a in args]
            keywords = {k.arg: self.atom(k.value, stmt, items) for k in e.keywords}
            call = gast.Call(func=gast.Attribute(value=receiver, attr=method, ctx=gast.Load()),
                             args=operands[1:], keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])
            return items + [self._prim(target, call, op, operands, keywords, stmt, e)]
        for a in list(e.args) + [k.value for k in e.keywords]:
            if isinstance(a, COMPREHENSIONS) and self.active(a):
                raise self.error(a, "a comprehension over values the gradient flows through cannot be "
                                 "differentiated: write it as a `for` loop")
        op = self.resolve(func)
        if op is None:
            chain = attribute_chain(func)
            raise self.error(e, f"no adjoint rule for {'.'.join(chain) if chain else 'this call'}: astjit.grad "
                             "differentiates numpy functions with a registered rule (astjit.adjoint)")
        if any(isinstance(a, gast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
            raise self.error(e, "*args or **kwargs in a call the gradient flows through")
        if op is np.linspace and (len(e.args) > 4 or any(k.arg == "retstep" for k in e.keywords)):
            raise self.error(e, "np.linspace(..., retstep=...) cannot be differentiated: compute the step "
                             "as (stop - start) / (num - 1)")
        name = getattr(op, "__name__", None)
        if name in SEQUENCE_OPS and getattr(op, "__module__", "").startswith("numpy") and e.args \
                and isinstance(e.args[0], gast.Tuple | gast.List):
            return self._sequence_into(target, e, op, SEQUENCE_OPS[name], stmt, items)
        operands = [self.atom(a, stmt, items) for a in e.args]
        keywords = {k.arg: self.atom(k.value, stmt, items) for k in e.keywords}
        call = gast.Call(func=copy.deepcopy(func), args=operands,
                         keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])
        return items + [self._prim(target, call, op, operands, keywords, stmt, e)]

    def _sequence_into(self, target, e, op, positional, stmt, items):
        """``np.concatenate((a, b), axis=k)``, ``np.stack([a, b])``: each array of the written tuple is
        an operand; arguments after the tuple become keywords."""
        if len(e.args) > 1 + len(positional):
            raise self.error(e, f"{describe(op)} with more than {1 + len(positional)} positional arguments")
        if len(e.args[0].elts) > MAX_SEQUENCE:
            raise self.error(e, f"astjit.grad differentiates {describe(op)} of at most {MAX_SEQUENCE} arrays "
                             "written in the call")
        operands = [self.atom(a, stmt, items) for a in e.args[0].elts]
        keywords = {k: self.atom(a, stmt, items) for k, a in zip(positional, e.args[1:])}
        keywords.update({k.arg: self.atom(k.value, stmt, items) for k in e.keywords})
        packed = gast.Tuple(elts=operands, ctx=gast.Load())
        call = gast.Call(func=copy.deepcopy(e.func), args=[packed],
                         keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])
        return items + [self._prim(target, call, op, operands, keywords, stmt, e)]

    def _prim(self, target, value, op, operands, keywords, stmt, node):
        if op is np.ravel and len(operands) == 1 and "order" not in keywords:
            op = np.reshape                     # (C order: the adjoint reshapes back, fused with the code around)
        rule = rule_for(op)
        if rule is None:
            raise self.error(node, f"no adjoint rule for {describe(op)}: astjit.grad cannot differentiate it "
                             "(astjit.adjoint registers one)")
        aliases = KEYWORD_ALIASES.get(op, {})
        for k, v in keywords.items():
            if self.active(v):
                raise self.error(node, f"the gradient flows through keyword {k}= of {describe(op)}")
            if aliases.get(k, k) not in rule.operands:
                raise self.error(node, f"keyword {k}= of {describe(op)} is not handled by its adjoint rule")
        keywords = {aliases.get(k, k): v for k, v in keywords.items()}
        if len(operands) > len(rule.operands):
            raise self.error(node, f"{describe(op)} is called with more operands than its adjoint rule takes")
        out = dict(zip(rule.operands, operands)).get("out")        # (a keyword out= is refused before)
        if out is not None and not (isinstance(out, gast.Constant) and out.value is None):
            raise self.error(node, "a call with an `out` array cannot be differentiated when the gradient flows "
                             "through it: bind the result to a name instead (y = np.sum(x, 0))")
        active = {i for i, o in enumerate(operands) if self.active(o)}
        if any(i >= len(rule.operands) for i in active):
            raise self.error(node, f"{describe(op)} is called with more operands than its adjoint rule takes")
        self.activity.active.add(target)
        return Prim(target, gast.copy_location(_assign(target, value, stmt), stmt), rule, operands, keywords,
                    active, node)


def _numpy(name):
    import numpy as np

    return getattr(np, name)


def _name(n):
    return gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None)


def _assign(target, value, where):
    a = gast.Assign(targets=[gast.Name(id=target, ctx=gast.Store(), annotation=None, type_comment=None)],
                    value=value, type_comment=None)
    return gast.copy_location(a, where)


def _index_value(index, slice_):
    """An index as an expression (``1:, j`` -> ``(slice(1, None, None), j)``); ``slice_`` names the
    builtin (a generated name: the user's function may bind ``slice`` itself)."""
    if isinstance(index, gast.Slice):
        parts = [index.lower, index.upper, index.step]
        return gast.Call(func=copy.deepcopy(slice_), args=[p if p is not None else gast.Constant(value=None, kind=None)
                                                           for p in parts], keywords=[])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_index_value(e, slice_) for e in index.elts], ctx=gast.Load())
    return index


def _all_plain(items) -> bool:
    """Whether lowered ``items`` are plain Python throughout (branches and loop exits included)."""
    return all(isinstance(it, Plain | Exit) or isinstance(it, IfItem) and _all_plain(it.body)
               and _all_plain(it.orelse) for it in items)


def _own_walk(s):
    """The nodes of ``s`` outside nested loops (whose breaks are their own)."""
    yield s
    if isinstance(s, gast.For | gast.While):
        return
    for c in gast.iter_child_nodes(s):
        yield from _own_walk(c)


def _op_text(op):
    return {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
            gast.MatMult: "@", gast.Mod: "%"}.get(type(op), "op")
