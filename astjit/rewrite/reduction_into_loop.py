"""``push_reductions_into_loops``: a reduction of per-step arrays stacked after a loop accumulates
inside the loop instead, and the list of steps disappears.

It rewrites, in the function's own statements::

    outs = []
    for t in range(steps):
        ...
        outs.append(h)
    loss = np.mean((np.stack(outs) - targets) ** 2)

into a ``StepReduction`` (rewrite/step_reduction) made where the list was, given each step where it
was appended, and asked for the result where the list was stacked. It fires only where that is the
same computation up to rounding:

- the list starts empty (``[]`` or ``list()``) and is read nowhere else: only appended to, in one
  ``for`` loop that follows it, and stacked once (``np.stack``, ``np.array``, ``np.asarray``) after;
- the loop has no ``break``, ``return`` or ``yield`` (its steps are all the steps);
- the stacked array is reduced by ``np.sum``/``mean``/``max``/``min`` (or the method) over every axis
  or over the step axis (``axis=0``), after elementwise operations (operators, numpy ufuncs) whose
  other operands are numbers, or names the loop and the statements up to the reduction never assign;
- each appended value is a new array (an arithmetic expression, a numpy call, ``.copy()``), or a
  name bound to one in the loop and never changed in place, passed to an unknown function or read
  through a method: the list holds it by reference, and a later change in place would reach it.

The sum is reordered (per step, then across steps), so results differ in rounding: never applied
unless named in ``@jit(rewrites=[...])``.
"""

import ast
import copy
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from ..frontend.emit import register_source
from .step_reduction import StepReduction

STEP_REDUCTION_NAME = "__astjit_StepReduction"
STEP_NAME = "__astjit_step"
REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "max", np.min: "min", np.amax: "max", np.amin: "min"}
METHOD_REDUCTIONS = {"sum": "sum", "mean": "mean", "max": "max", "min": "min"}
STACKS = (np.stack, np.array, np.asarray)
OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
FRESH_METHODS = ("copy",)
FRESH_FUNCTIONS = (np.dot, np.matmul, np.sum, np.mean, np.max, np.min, np.prod, np.std, np.var, np.where, np.clip,
                   np.concatenate, np.stack, np.copy, np.outer, np.einsum)     # each returns a new array
EARLY_EXITS = (gast.Break, gast.Return, gast.Yield, gast.YieldFrom, gast.Await)


@dataclass
class LoopRewrites:
    """What ``push_reductions_into_loops`` did: (line, message) per reduction moved into its loop, the
    lines of the statements it changed (they call astjit's own helpers, which stay Python, and
    ``explain`` need not list them) and the names the rewritten function reads (the helpers)."""

    done: list = field(default_factory=list)
    lines: set = field(default_factory=set)
    names: dict = field(default_factory=dict)


def push_reductions_into_loops(fndef, fn) -> LoopRewrites:
    """Rewrite ``fndef`` in place."""
    rewriter = _Rewriter(fndef, fn)
    rewriter.visit_body(fndef.body)
    return rewriter.result


class _Rewriter:
    def __init__(self, fndef, fn):
        self.fndef = fndef
        self.fn = fn
        self.local_names = {n.id for n in gast.walk(fndef) if isinstance(n, gast.Name)
                            and isinstance(n.ctx, gast.Store | gast.Del)}
        self.local_names |= {a.id for a in gast.walk(fndef.args) if isinstance(a, gast.Name)}
        self.declared = {name for n in gast.walk(fndef) if isinstance(n, gast.Global | gast.Nonlocal)
                         for name in n.names}
        self.result = LoopRewrites()
        self.done = self.result.done
        self.changed = self.result.lines

    # -- finding the three statements ---------------------------------------------------------------
    def visit_body(self, body):
        for stmt in list(body):
            for part in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, part, None)
                if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef | gast.AsyncFunctionDef
                                                              | gast.ClassDef):
                    self.visit_body(inner)
            for handler in getattr(stmt, "handlers", []):
                self.visit_body(handler.body)
        i = 0
        while i < len(body):
            if not self.try_at(body, i):
                i += 1

    def try_at(self, body, i) -> bool:
        start = body[i]
        name = _new_list_name(start)
        if name is None or name in self.declared:
            return False
        mentions = [n for n in gast.walk(self.fndef) if isinstance(n, gast.Name) and n.id == name]
        j = next((k for k in range(i + 1, len(body)) if _mentions(body[k], name)), None)
        if j is None or not isinstance(body[j], gast.For) or body[j].orelse:
            return False
        loop = body[j]
        appends = [n for n in gast.walk(loop) if _is_append(n, name)]
        if not appends or any(isinstance(n, EARLY_EXITS) for n in _walk_own(loop)):
            return False
        k = next((m for m in range(j + 1, len(body)) if _mentions(body[m], name)), None)
        if k is None:
            return False
        found = self.reduction_of_stack(body[k], name)
        if found is None:
            return False
        reduction, kind, axis, expression, operands = found
        # the list is read nowhere else: its binding, its appends (each one Name), one stack
        if len(mentions) != 1 + len(appends) + 1:
            return False
        assigned = _assigned_names(loop) | {n for s in body[j + 1:k] for n in _assigned_names(s)}
        if any(_root_name(o) in assigned for o in operands if _root_name(o) is not None):
            return False
        if not all(self.fresh_value(a.args[0], loop) for a in appends):
            return False
        self.rewrite(body, i, start, appends, reduction, kind, axis, expression, operands, name, loop)
        return True

    def reduction_of_stack(self, stmt, name):
        """(reduction call, kind, axis, elementwise expression, operands) where ``stmt`` reduces the
        stacked list, or None."""
        for node in gast.walk(stmt):
            if not isinstance(node, gast.Call):
                continue
            found = self.reduction_call(node)
            if found is None:
                continue
            kind, axis, argument = found
            stacks, operands = [], []
            if self.elementwise(argument, name, stacks, operands) and len(stacks) == 1:
                return node, kind, axis, argument, operands
        return None

    def reduction_call(self, call):
        """(kind, axis, reduced expression) of ``np.sum(e, axis=...)`` or ``e.sum(axis)``, else None."""
        keywords = {k.arg: k.value for k in call.keywords}
        if set(keywords) - {"axis"}:
            return None
        fn = self.resolve(call.func)
        kind = next((k for f, k in REDUCTIONS.items() if f is fn), None)
        if kind is not None:
            if len(call.args) != 1:
                return None
            argument, rest = call.args[0], []
        elif isinstance(call.func, gast.Attribute) and call.func.attr in METHOD_REDUCTIONS:
            kind, argument, rest = METHOD_REDUCTIONS[call.func.attr], call.func.value, list(call.args)
        else:
            return None
        if len(rest) > 1 or (rest and keywords):
            return None
        axis_node = rest[0] if rest else keywords.get("axis")
        if axis_node is None:
            axis = None
        elif isinstance(axis_node, gast.Constant) and (axis_node.value is None or type(axis_node.value) is int
                                                      and axis_node.value == 0):
            axis = axis_node.value
        else:
            return None
        return kind, axis, argument

    def elementwise(self, e, name, stacks, operands) -> bool:
        """Whether ``e`` is elementwise operations over the stacked list and operands (collected)."""
        if isinstance(e, gast.Call) and self.is_stack(e, name):
            stacks.append(e)
            return True
        if isinstance(e, gast.BinOp) and isinstance(e.op, OPERATORS):
            return self.elementwise(e.left, name, stacks, operands) and \
                self.elementwise(e.right, name, stacks, operands)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub | gast.UAdd):
            return self.elementwise(e.operand, name, stacks, operands)
        if isinstance(e, gast.Call):
            fn = self.resolve(e.func)
            return isinstance(fn, np.ufunc) and fn.nout == 1 and not e.keywords and len(e.args) == fn.nin \
                and all(self.elementwise(a, name, stacks, operands) for a in e.args)
        if isinstance(e, gast.Constant) and type(e.value) in (int, float, bool):
            return True
        if _is_name_chain(e) and not _mentions(e, name):
            operands.append(e)
            return True
        return False

    def is_stack(self, call, name) -> bool:
        fn = self.resolve(call.func)
        if fn is None or not any(fn is s for s in STACKS) or len(call.args) != 1:
            return False
        arg = call.args[0]
        if not (isinstance(arg, gast.Name) and arg.id == name):
            return False
        keywords = {k.arg: k.value for k in call.keywords}
        if fn is np.stack:
            axis = keywords.pop("axis", None)
            if axis is not None and not (isinstance(axis, gast.Constant) and axis.value == 0):
                return False
        return not keywords

    def fresh_value(self, value, loop) -> bool:
        """Whether an appended value is a new array nothing changes later (see the module docstring)."""
        if isinstance(value, gast.BinOp | gast.UnaryOp):
            return True
        if isinstance(value, gast.Call):
            if self.is_numpy_function(value.func) and not any(k.arg == "out" for k in value.keywords):
                return True
            return isinstance(value.func, gast.Attribute) and value.func.attr in FRESH_METHODS and not value.args
        if not isinstance(value, gast.Name):
            return False
        # bound to a new array earlier in the same step: never the value from before the loop
        position = next((k for k, s in enumerate(loop.body) if any(_is_append(n, None) and n.args[0] is value
                                                                  for n in gast.walk(s))), None)
        if position is None or not any(isinstance(s, gast.Assign) and _binds(s, value.id)
                                       for s in loop.body[:position]):
            return False
        bound = [s for s in _walk_own(loop) if isinstance(s, gast.Assign | gast.AugAssign | gast.AnnAssign | gast.For
                                                          | gast.With) and _binds(s, value.id)]
        if not all(isinstance(s, gast.Assign) and len(s.targets) == 1 and self.fresh_value(s.value, loop)
                   for s in bound):
            return False
        # read only as an operand of arithmetic or a numpy function (no alias, no change in place)
        parents = {id(c): p for p in _walk_own(loop) for c in gast.iter_child_nodes(p)}
        for node in _walk_own(loop):
            if not (isinstance(node, gast.Name) and node.id == value.id and isinstance(node.ctx, gast.Load)):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, gast.BinOp | gast.UnaryOp | gast.Compare):
                continue
            if isinstance(parent, gast.Call) and node in parent.args and not any(k.arg == "out" for k in parent.keywords):
                if _is_append(parent, None) or self.is_numpy_function(parent.func):
                    continue
            return False
        return True

    def is_numpy_function(self, func) -> bool:
        """A numpy ufunc or function that returns a new array (never its operand or a view of it)."""
        fn = self.resolve(func)
        return isinstance(fn, np.ufunc) or any(fn is f for f in FRESH_FUNCTIONS)

    def resolve(self, func):
        """The object ``np.x``/``x`` names, where it is a module-level name the function does not
        assign; else None."""
        chain = []
        while isinstance(func, gast.Attribute):
            chain.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.local_names:
            return None
        import builtins

        obj = self.fn.__globals__.get(func.id, getattr(builtins, func.id, None))
        for attr in reversed(chain):
            if not isinstance(obj, types.ModuleType):
                return None
            obj = getattr(obj, attr, None)
        return obj

    # -- the rewrite --------------------------------------------------------------------------------
    def step_function(self, name, kind, axis, expression, params):
        """One step's part of the reduction as a jitted function of the step's value and operands (its
        elementwise expression and reduction fuse into one kernel), written in the user's module."""
        from ..api import jit

        text = ast.unparse(gast.gast_to_ast(copy.deepcopy(expression)))
        if axis is None:
            text = f"__astjit_numpy.{'sum' if kind == 'mean' else kind}({text})"
        source = f"def {name}({', '.join([STEP_NAME] + params)}):\n    return {text}\n"
        filename = register_source(f"{self.fn.__qualname__}: {name}", source)    # jit reads it there
        namespace = dict(self.fn.__globals__)
        namespace["__astjit_numpy"] = np
        exec(compile(source, filename, "exec"), namespace)
        return jit(namespace[name])

    def rewrite(self, body, i, start, appends, reduction, kind, axis, expression, operands, name, loop):
        n = len(self.done)
        reducer = f"__astjit_reduce_{n}"
        params = [f"__astjit_o{k}" for k in range(len(operands))]
        copied, copied_operands = copy.deepcopy(expression), []
        self.elementwise(copied, name, [], copied_operands)          # the copy's operands, in the same order
        step_expression = _StepExpression(name, {id(o): p for o, p in zip(copied_operands, params)}).visit(copied)
        lam = gast.Lambda(args=_arguments([STEP_NAME] + params), body=step_expression)
        step_function = f"__astjit_step_{n}"
        self.result.names[step_function] = self.step_function(step_function, kind, axis, step_expression, params)
        self.result.names[STEP_REDUCTION_NAME] = StepReduction
        make = gast.Assign(targets=[_name(reducer, gast.Store())],
                           value=_call(_name(STEP_REDUCTION_NAME), [gast.Constant(kind, None), gast.Constant(axis, None),
                                                                     lam, _name(step_function)]), type_comment=None)
        body[i] = gast.copy_location(make, start)
        statements = [s for s in _walk_own(loop) if isinstance(s, gast.stmt)] + list(body)
        self.changed.add(start.lineno)
        self.changed |= {s.lineno for s in statements
                         if any(a in list(gast.walk(s)) for a in appends) or reduction in list(gast.walk(s))}
        for a in appends:
            call = a
            call.func = gast.Attribute(value=_name(reducer), attr="add", ctx=gast.Load())
            call.args = [call.args[0]] + [copy.deepcopy(o) for o in operands]
        result = _call(gast.Attribute(value=_name(reducer), attr="result", ctx=gast.Load()),
                       [copy.deepcopy(o) for o in operands])
        _replace(body, reduction, result)
        gast.fix_missing_locations(make)           # the new nodes take the list's line
        line = reduction.lineno
        self.done.append((line, f"push_reductions_into_loops: the {kind} of np.stack({name}) "
                                f"{'over every axis' if axis is None else 'over the step axis'} accumulates in the loop "
                                f"at line {loop.lineno}; the list {name} is gone"))


class _StepExpression(gast.NodeTransformer):
    """The reduced expression for one step: the stack is the step's value, each operand a parameter."""

    def __init__(self, name, params):
        self.name = name
        self.params = params

    def visit(self, node):
        if id(node) in self.params:
            return _name(self.params[id(node)])
        return super().visit(node)

    def visit_Call(self, node):
        if node.args and isinstance(node.args[0], gast.Name) and node.args[0].id == self.name:
            return _name(STEP_NAME)
        return self.generic_visit(node)


def _replace(body, old, new):
    for stmt in body:
        for parent in gast.walk(stmt):
            for attr, value in gast.iter_fields(parent):
                if value is old:
                    setattr(parent, attr, gast.copy_location(new, old))
                    gast.fix_missing_locations(new)
                    return
                if isinstance(value, list) and any(v is old for v in value):
                    value[[id(v) for v in value].index(id(old))] = gast.copy_location(new, old)
                    gast.fix_missing_locations(new)
                    return


def _new_list_name(stmt):
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    v = stmt.value
    empty = isinstance(v, gast.List) and not v.elts or isinstance(v, gast.Call) and isinstance(v.func, gast.Name) \
        and v.func.id == "list" and not v.args and not v.keywords
    return stmt.targets[0].id if empty else None


def _binds(stmt, name) -> bool:
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target] if hasattr(stmt, "target") else \
        [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return any(isinstance(n, gast.Name) and n.id == name for t in targets for n in gast.walk(t))


def _is_append(node, name) -> bool:
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "append"
            and isinstance(node.func.value, gast.Name) and (name is None or node.func.value.id == name)
            and len(node.args) == 1 and not node.keywords)


def _mentions(node, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))


def _walk_own(node):
    """gast.walk without descending into nested functions, lambdas and classes."""
    work = [node]
    while work:
        n = work.pop()
        yield n
        for child in gast.iter_child_nodes(n):
            if not isinstance(child, gast.FunctionDef | gast.AsyncFunctionDef | gast.Lambda | gast.ClassDef):
                work.append(child)


def _assigned_names(stmt) -> set:
    names = set()
    for n in _walk_own(stmt):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store | gast.Del):
            names.add(n.id)
        if isinstance(n, gast.AugAssign) or isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store):
            root = _root_name(n.target if isinstance(n, gast.AugAssign) else n.value)
            if root is not None:
                names.add(root)
    return names


def _is_name_chain(e) -> bool:
    while isinstance(e, gast.Attribute):
        e = e.value
    return isinstance(e, gast.Name)


def _root_name(e):
    while isinstance(e, gast.Attribute | gast.Subscript):
        e = e.value
    return e.id if isinstance(e, gast.Name) else None


def _name(ident, ctx=None):
    return gast.Name(id=ident, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _call(func, args):
    return gast.Call(func=func, args=args, keywords=[])


def _arguments(names):
    return gast.arguments(args=[_name(n, gast.Param()) for n in names], posonlyargs=[], vararg=None,
                          kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
