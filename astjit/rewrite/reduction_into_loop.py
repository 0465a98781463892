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
- the loop has no ``break``, ``return`` or ``yield`` (its steps are all the steps) nor ``with``, and
  the function changes no error state (ERROR_STATE_CALLS: the steps would be reduced under another
  state than the original reduction); between the loop and the reduction only numpy's functions
  returning new arrays, ``len`` and ``range`` are called;
- the stacked array is reduced by ``np.sum``/``mean``/``max``/``min`` (or the method) over every axis
  or over the step axis (``axis=0``), once whenever its plain statement runs (in no loop,
  comprehension, generator, lambda, function, conditional expression or and/or of it: there is one
  total, and the operands read at each step are read where the original reads them), after
  elementwise operations (operators, numpy ufuncs; every function named through the numpy module,
  ``resolve``) whose other operands are numbers, or names bound when the loop starts that the loop,
  the statements up to the reduction and the
  reduction's own statement never assign nor write into (``out=``, ``.fill()``, item assignment):
  they only read them, and the function as written binds them only to new arrays, makes no view or
  alias of them, never writes into them and mentions them in no function of its own (no other name
  of the function reaches their data);
- each appended value is a new array (an arithmetic expression, a numpy call that returns a new
  array and has no ``out``, by keyword or by position; not ``np.einsum``, which may return a view;
  ``.copy()``), or a name bound to one in the loop (not by a walrus, not global, in no closure) and,
  in the loop, up to and in the reduction, never
  changed in place, passed to an unknown function or read through a method: the list holds it by
  reference, and a later change in place would reach it.

The sum is reordered (per step, then across steps), so results differ in rounding: never applied
unless named in ``@jit(rewrites=[...])``.
"""

import ast
import builtins
import copy
import functools
import types
import warnings
from dataclasses import dataclass, field

import gast
import numpy as np

from ..frontend.bound import DefinitelyBound
from ..frontend.emit import register_source
from .step_reduction import StepReduction

STEP_REDUCTION_NAME = "__astjit_StepReduction"
STEP_NAME = "__astjit_step"
REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "max", np.min: "min", np.amax: "max", np.amin: "min"}
METHOD_REDUCTIONS = {"sum": "sum", "mean": "mean", "max": "max", "min": "min"}
STACKS = (np.stack, np.array, np.asarray)
OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
FRESH_METHODS = ("copy",)
# functions that return a new array, each with the number of positional arguments before ``out``
# (np.dot(a, b, out) writes into out and returns it); np.einsum is not one: it may return a view
FRESH_FUNCTIONS = {np.dot: 2, np.sum: 3, np.mean: 3, np.max: 2, np.min: 2, np.prod: 3, np.std: 3, np.var: 3,
                   np.where: 3, np.clip: 3, np.concatenate: 2, np.stack: 2, np.copy: 3, np.outer: 2}
READ_BUILTINS = (len, range)
METADATA = ("shape", "ndim", "size", "dtype", "itemsize", "nbytes")     # attributes that are no view
EARLY_EXITS = (gast.Break, gast.Return, gast.Yield, gast.YieldFrom, gast.Await)
# statements and expressions whose parts may run any number of times, or later
REPEATS = (gast.For, gast.AsyncFor, gast.While, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
           gast.Lambda, gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.IfExp, gast.BoolOp)
# statements whose expressions run once, all of them (no branch, no loop, no ``with``)
SIMPLE_STATEMENTS = (gast.Assign, gast.AnnAssign, gast.AugAssign, gast.Expr, gast.Return)
# calls that change numpy's floating-point error state or the warnings filters: wherever the function
# makes one, the steps might be reduced under another state than the original's reduction
ERROR_STATE_CALLS = (np.seterr, np.seterrcall, np.errstate, warnings.simplefilter, warnings.filterwarnings,
                     warnings.resetwarnings, warnings.catch_warnings)


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
        self.original = copy.deepcopy(fndef.body)          # as written: before any reduction is pushed
        self.sole_names = {}                                # name -> whether sole_name(name)
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
        # (a with statement, np.errstate among them, would give the steps another error state than the reduction)
        if not appends or any(isinstance(n, EARLY_EXITS + (gast.With, gast.AsyncWith)) for n in _walk_own(loop)):
            return False
        k = next((m for m in range(j + 1, len(body)) if _mentions(body[m], name)), None)
        if k is None or not isinstance(body[k], SIMPLE_STATEMENTS) or self.sets_error_state:
            return False
        found = self.reduction_of_stack(body[k], name)
        if found is None:
            return False
        reduction, kind, axis, expression, operands, stacked_by = found
        # nothing between the loop and the reduction may change numpy's error state or the operands'
        # values unseen (the steps are reduced under the loop's state, against the operands as they
        # come): there only calls of numpy functions returning new arrays, len and range
        if not all(self.known_calls(s, skip=reduction) for s in body[j + 1:k + 1]):
            return False
        # the operands are bound when the loop starts (each step reads them; the original, once after
        # the loop: a name it may leave unbound raised only there, or never where the reduction did not run)
        # (a global: defined when the function is rewritten; one deleted later raises at the first step)
        bound = DefinitelyBound(self.fndef)(loop)
        if any(o.id not in bound if o.id in self.local_names else not self.defined(o.id) for o in operands):
            return False
        # the list is read nowhere else: its binding, its appends (each one Name), one stack
        if len(mentions) != 1 + len(appends) + 1:
            return False
        # the reduction runs once, whenever its statement does: a second run would be handed the same
        # total, and with operands changed since, the steps reduced against the old ones; a run that may
        # not come (``x if c else np.sum(...)``, ``c and ...``) must not have its operands read at each step
        if not _runs_once(body[k], reduction):
            return False
        # the operands are the same from the loop to the reduction: the steps are reduced against them as
        # they come; the reduction's own statement counts (a comprehension's variable, a .fill() before it)
        assigned = _assigned_names(loop) | {n for s in body[j + 1:k] for n in _assigned_names(s)} \
            | _bound_before_value(body[k])
        if any(o.id in assigned for o in operands):              # (each operand a name: elementwise)
            return False
        # nor changed in place (out=, .fill()): the original reduces against the operand's last values
        between = [loop] + body[j + 1:k + 1]
        if not all(self.only_read(o.id, between) for o in operands):
            return False
        # nor written through another name the function makes (tv = target.reshape(-1); tv[:] = t)
        if not all(self.sole_name(o.id) for o in operands):
            return False
        if not all(self.fresh_value(a.args[0], name, loop, body[j + 1:k + 1]) for a in appends):
            return False
        self.rewrite(body, i, start, appends, reduction, kind, axis, expression, operands, name, loop, stacked_by)
        return True

    def defined(self, name) -> bool:
        """Whether a global (or builtin) ``name`` is bound now."""
        return name in self.fn.__globals__ or hasattr(builtins, name)

    @functools.cached_property
    def sets_error_state(self) -> bool:
        """Whether the function calls anything in ERROR_STATE_CALLS (by any spelling it resolves)."""
        return any(isinstance(n, gast.Call) and any(self.resolve(n.func, True) is f for f in ERROR_STATE_CALLS)
                   for n in gast.walk(self.fndef))

    def known_calls(self, stmt, skip) -> bool:
        """Whether every call in ``stmt`` but ``skip`` (and what it holds) returns a new array of
        numpy's (fresh_call) or is ``len``/``range``: no other function runs there."""
        inside = {id(n) for n in gast.walk(skip)}
        return all(id(n) in inside or self.fresh_call(n) or any(self.resolve(n.func) is f for f in READ_BUILTINS)
                   for n in gast.walk(stmt) if isinstance(n, gast.Call))

    def reduction_of_stack(self, stmt, name):
        """(reduction call, kind, axis, elementwise expression, operands, the stacking function's name)
        where ``stmt`` reduces the stacked list, or None."""
        for node in gast.walk(stmt):
            if not isinstance(node, gast.Call):
                continue
            found = self.reduction_call(node)
            if found is None:
                continue
            kind, axis, argument = found
            stacks, operands = [], []
            if self.elementwise(argument, name, stacks, operands) and len(stacks) == 1:
                return node, kind, axis, argument, operands, self.resolve(stacks[0].func).__name__
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
        # (a name; not an attribute, which a property or a write to it in the loop makes another
        # value at each read: the steps read it at each append, the original once)
        if isinstance(e, gast.Name) and e.id != name:
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
            # 0 exactly: numpy refuses axis=0.0 with a TypeError the rewrite must not hide
            if axis is not None and not (isinstance(axis, gast.Constant) and type(axis.value) is int
                                         and axis.value == 0):
                return False
        return not keywords

    def sole_name(self, name) -> bool:
        """Whether ``name`` is the function's only way to its array: the function as written binds it
        only to new arrays (or not at all: an argument, a global), never makes an alias or a view of it
        nor writes into it, and no function or lambda of its own mentions it. (Another name the caller
        holds, an argument passed twice, is not seen.)"""
        if name not in self.sole_names:
            stores = [n for s in self.original for n in _walk_own(s) if isinstance(n, gast.Name) and n.id == name
                      and isinstance(n.ctx, gast.Store | gast.Del)]
            fresh = {id(s.targets[0]) for s in self.original for s in _walk_own(s)
                     if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                     and s.targets[0].id == name and self.fresh_expression(s.value)}
            self.sole_names[name] = all(id(n) in fresh for n in stores) and self.only_read(name, self.original) \
                and not any(_mentions(n, name) for n in self.nested_functions)
        return self.sole_names[name]

    @functools.cached_property
    def nested_functions(self) -> list:
        """The functions, lambdas and classes the function as written holds."""
        return [n for s in self.original for n in gast.walk(s)
                if isinstance(n, gast.FunctionDef | gast.AsyncFunctionDef | gast.Lambda | gast.ClassDef)]

    def fresh_expression(self, value) -> bool:
        """Whether ``value`` makes a new array (or number): arithmetic, a fresh numpy call, ``.copy()``."""
        if isinstance(value, gast.BinOp | gast.UnaryOp):
            return True
        if isinstance(value, gast.Constant):
            return type(value.value) in (bool, int, float, complex)
        if isinstance(value, gast.Call):
            if self.fresh_call(value):
                return True
            return isinstance(value.func, gast.Attribute) and value.func.attr in FRESH_METHODS and not value.args
        return False

    def fresh_value(self, value, name, loop, after=()) -> bool:
        """Whether a value appended to the list ``name`` is a new array nothing changes later, in the
        loop or in the statements ``after`` it (see the module docstring)."""
        if isinstance(value, gast.BinOp | gast.UnaryOp | gast.Call):
            return self.fresh_expression(value)
        if not isinstance(value, gast.Name):
            return False
        # a name no other function reaches (a global, a closure's cell: it could write into the array
        # the list holds last) and no walrus rebinds (an assignment these checks do not read)
        if value.id in self.declared or any(_mentions(n, value.id) for n in self.nested_functions) \
                or any(isinstance(n, gast.NamedExpr) and _mentions(n.target, value.id) for n in gast.walk(loop)):
            return False
        # bound to a new array earlier in the same step: never the value from before the loop
        position = next((k for k, s in enumerate(loop.body) if any(_is_append(n, None) and n.args[0] is value
                                                                  for n in gast.walk(s))), None)
        if position is None or not any(isinstance(s, gast.Assign) and _binds(s, value.id)
                                       for s in loop.body[:position]):
            return False
        bound = [s for s in _walk_own(loop) if isinstance(s, gast.Assign | gast.AugAssign | gast.AnnAssign | gast.For
                                                          | gast.With) and _binds(s, value.id)]
        if not all(isinstance(s, gast.Assign) and len(s.targets) == 1 and self.fresh_value(s.value, name, loop)
                   for s in bound):
            return False
        # read only as an operand of arithmetic or a numpy function (no alias, no change in place)
        return self.only_read(value.id, [loop], appends_to=name) and self.only_read(value.id, after)

    def only_read(self, name, statements, appends_to=None) -> bool:
        """Whether ``statements`` read ``name``'s array only to compute new values (arithmetic, numpy
        functions without ``out``, indexing or ``.shape`` read that way), never write into it or
        hand it to anything that might (a method, an unknown function, a view kept in a name); with
        ``appends_to``, appending it to that list counts as a read (to another list, it escapes).
        Rebinding the name is not a write."""
        for statement in statements:
            parents = {id(c): p for p in _walk_own(statement) for c in gast.iter_child_nodes(p)}
            for node in _walk_own(statement):
                if isinstance(node, gast.AugAssign) and _root_name(node.target) == name:
                    return False
                if not (isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load)):
                    continue
                while True:
                    parent = parents.get(id(node))
                    # x[i], x.shape, x.T: read as what they are used for (x.fill(0) is a call of one)
                    read_through = isinstance(parent, gast.Subscript) and parent.value is node or \
                        isinstance(parent, gast.Attribute)
                    if not (read_through and isinstance(parent.ctx, gast.Load)):
                        break
                    node = parent
                    if isinstance(node, gast.Attribute) and node.attr in METADATA:
                        break
                if isinstance(node, gast.Attribute) and node.attr in METADATA:
                    continue                         # x.shape, wherever it goes, holds none of x's data
                if isinstance(parent, gast.BinOp | gast.UnaryOp | gast.Compare):
                    continue
                if isinstance(parent, gast.Subscript) and parent.slice is node:
                    continue                         # used as an index: read
                if isinstance(parent, gast.Call) and node in parent.args and (
                        appends_to is not None and _is_append(parent, appends_to) or self.fresh_call(parent)
                        or any(self.resolve(parent.func) is f for f in READ_BUILTINS)):
                    continue
                return False
        return True

    def fresh_call(self, call) -> bool:
        """A call of a numpy ufunc or function that returns a new array (never its operand or a view of
        it, nor an ``out`` array, by keyword or by position)."""
        if any(k.arg == "out" for k in call.keywords):
            return False
        fn = self.resolve(call.func)
        if isinstance(fn, np.ufunc):
            return len(call.args) <= fn.nin
        return any(fn is f and len(call.args) <= positional for f, positional in FRESH_FUNCTIONS.items())

    def resolve(self, func, any_module=False):
        """The object ``np.x`` names, where ``np`` is a module-level name for numpy (or one of its
        modules) that the function does not assign, or the builtin a bare name is (``len``) where the
        module does not bind that name; else None. Not a module's own name for a function (``ACT =
        np.abs``, ``from numpy import exp``): the rewrite is made once, and a name rebound later would
        leave it reducing with the old function. ``any_module``: through any module (``warnings.x``)."""
        chain = []
        while isinstance(func, gast.Attribute):
            chain.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.local_names:
            return None
        if not chain:
            return None if func.id in self.fn.__globals__ else getattr(builtins, func.id, None)
        obj = self.fn.__globals__.get(func.id)
        if not (isinstance(obj, types.ModuleType) and (any_module or obj.__name__ == "numpy"
                                                       or obj.__name__.startswith("numpy."))):
            return None
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

    def rewrite(self, body, i, start, appends, reduction, kind, axis, expression, operands, name, loop, stacked_by):
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
                                                                     lam, _name(step_function),
                                                                     gast.Constant(stacked_by, None)]),
                           type_comment=None)
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


def _bound_before_value(stmt) -> set:
    """The names ``stmt`` binds or writes into while its value is computed: an assignment stores its
    targets after, any other statement may bind or write anywhere."""
    if isinstance(stmt, gast.Assign | gast.AugAssign | gast.AnnAssign) and stmt.value is not None:
        return _assigned_names(stmt.value)
    return _assigned_names(stmt)


def _runs_once(stmt, node) -> bool:
    """Whether ``node`` runs once each time ``stmt`` does: it is inside no loop, comprehension,
    generator, lambda, function, class, conditional expression or ``and``/``or`` that ``stmt`` holds."""
    parents = {id(c): p for p in gast.walk(stmt) for c in gast.iter_child_nodes(p)}
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, REPEATS):
            return False
    return True


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
