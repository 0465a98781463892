"""``astjit.grad`` and ``astjit.value_and_grad``: the generated gradient function and its jitted form.

The gradient of ``f`` is a new Python function (forward pass, then backward pass; grad/reverse.py)
whose source is registered with ``linecache`` under ``<astjit.grad of f>``: tracebacks and pdb show its
lines, and ``astjit.jit`` compiles it like any other function, so its straight-line stretches of
forward and adjoint code become Fragments, fused, specialized and cached. Errors about what cannot be
differentiated point at the line of ``f``.
"""

import ast
import copy
import itertools
import linecache
import numbers
import types

import gast
import numpy as np

from ..errors import SourceUnavailableError
from ..frontend.local_imports import local_modules
from ..frontend.lower import attribute_chain
from ..frontend.resolve import MISSING, Resolver
from ..frontend.source import parse_function
from . import helpers, numpy_rules  # noqa: F401  (registers the shipped rules)
from .activity import Activity
from .aliasing import aliased
from .inline_calls import guard_callees, inline_calls, stored_names
from .lower import Lowering
from .mutation import mutated
from .normalize import located, normalize
from .reverse import Reverser, drop_unneeded_saves, group_runs

_serial = itertools.count(1)


class GradFunction:
    """The gradient (or value and gradient) of a function; call it like the function."""

    def __init__(self, fn, argnums, with_value, jit_options):
        self.original = fn
        self.argnums = argnums
        self.with_value = with_value
        self.jit_options = jit_options
        self.__name__ = f"{fn.__name__}_{'value_and_grad' if with_value else 'grad'}"
        self.__qualname__ = self.__name__
        self.__doc__ = f"{'Value and gradient' if with_value else 'Gradient'} of {fn.__qualname__} (astjit)."
        self._jitted = None
        self._source = None
        self._guards_hold = None
        self._defaults = None

    def __call__(self, *args, **kwargs):
        # (the generated function takes the original's defaults when built: new ones rebuild it)
        if self._jitted is None or self.original.__defaults__ is not self._defaults or not self._guards_hold():
            self._build()
        return self._jitted(*args, **kwargs)

    def build(self):
        """Generate and jit the gradient function now (``GradError`` at the line of the function for
        what cannot be differentiated); calls and ``show`` do it at first use."""
        if self._jitted is None:
            self._build()
        return self

    @property
    def source(self) -> str:
        """The generated Python source of the gradient function."""
        if self._source is None:
            self._build()
        return self._source

    @property
    def jitted(self):
        """The ``JitFunction`` running the generated gradient function."""
        if self._jitted is None:
            self._build()
        return self._jitted

    def show(self, file=None, fragments: bool = False) -> None:
        """Print the generated gradient function as astjit runs it, with its Fragments."""
        print(f"# {self.__doc__} Generated source:\n{self.source}", file=file)
        self.jitted.show(file=file, fragments=fragments)

    def explain(self):
        return self.jitted.explain()

    def _repr_html_(self) -> str:
        return self.jitted._repr_html_()

    def _build(self):
        from ..api import jit

        self._defaults = self.original.__defaults__
        source, function, self._guards_hold = build_gradient(self.original, self.argnums, self.with_value)
        jitted = jit(function, **self.jit_options)
        if jitted.strict:
            # strict is about the user's code: each statement of the original must compile (the error points
            # at its line); the gradient's tape and helper calls run as Python by design, its blocks strictly
            jit(self.original, **self.jit_options)._ensure()
            jitted.statements_may_run_as_python = True
        self._source = source
        self._jitted = jitted


def _argnums(fn, argnums, params):
    single = isinstance(argnums, numbers.Integral)
    try:
        nums = (argnums,) if single else tuple(argnums)
    except TypeError:                     # (1.0, None: not a sequence either)
        nums = ()
    if not nums or any(not isinstance(i, numbers.Integral) or isinstance(i, bool | np.bool_) for i in nums):
        raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    nums = tuple(int(i) for i in nums)    # (np.int64(1) as 1)
    for i in nums:
        if not -len(params) <= i < len(params):
            raise ValueError(f"argnums {i} is out of range: {fn.__qualname__} has {len(params)} positional "
                             f"parameters")
    return single, [params[i] for i in nums]


def build_gradient(fn, argnums, with_value):
    """(source, function, guards_hold) of the gradient of ``fn`` with respect to its positional parameters
    ``argnums``."""
    _, fndef = parse_function(fn)
    filename = fn.__code__.co_filename
    args = fndef.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise located(filename, fndef, f"astjit.grad needs {fn.__name__} to take plain positional parameters")
    params = [a.id for a in args.args]
    single, wrt = _argnums(fn, argnums, params)
    # (``import numpy as np`` in the body: np is numpy, as for a jitted function; another local import
    # is a local name, never the module's global of that name)
    modules = local_modules(fndef)
    inliner = inline_calls(fn, fndef, Resolver(fn, set(params) | stored_names([fndef]), local_modules=modules)
                           .resolve_chain)
    modules = {**modules, **local_modules(fndef)}      # (an inlined helper's own ``import numpy as np``)
    prefix = _prefix(fn, fndef)
    body = normalize(fndef, filename, prefix + "returned")
    local_names = set(params) | stored_names(body)
    resolver = Resolver(fn, local_names, local_modules=modules)
    resolved = {}
    foreign = []                # (resolver of its module, chain, object) read through an inlined callee's global

    def resolve(node):
        chain = attribute_chain(node)
        if not chain or chain[0] in local_names and chain[0] not in modules:
            return None
        if chain[0] in inliner.bound:      # (a global of an inlined callee's module)
            obj, module, real = inliner.resolve(chain)
            if obj is not MISSING:
                foreign.append((module, real, obj))
            return None if obj is MISSING else obj
        obj = resolver.resolve_chain(chain)
        resolved[tuple(chain)] = obj
        return None if obj is MISSING else obj

    activity = Activity(resolve, wrt)
    activity.run(body)
    aliases = {alias: obj for alias, (obj, _, _) in inliner.bound.items()}

    def bind_global(name, obj):
        base = f"{prefix}{name}"
        alias, k = base, 1
        while alias in aliases and aliases[alias] is not obj:
            k += 1
            alias = f"{base}{k}"
        aliases[alias] = obj
        return alias

    lowering = Lowering(filename, activity, resolve, set(params), bind_global, prefix=prefix)
    lowering.aliased = aliased(body, prefix + "returned", resolve, inliner.prefix)
    lowering.mutated = mutated(body, resolve)
    items = lowering.statements(body)

    reverser = Reverser(lowering, bind_global, params, prefix, inliner.prefix)
    reverser.count_assignments(items)
    result = prefix + "value"
    value = prefix + "returned"
    np_ = bind_global("np", np)
    # the seed: np.ones_like inside the Fragment, so forward and backward code fuse into one; whether the
    # value is a real scalar is checked after the backward pass (which works for any shape)
    start = [gast.Assign(targets=[_store(result)], value=_load(value), type_comment=None),
             gast.Assign(targets=[_store(reverser.adjoint_name(value))],
                         value=gast.Call(func=gast.Attribute(value=_load(np_), attr="ones_like", ctx=gast.Load()),
                                         args=[_load(value)], keywords=[]), type_comment=None)]
    check = gast.Expr(value=gast.Call(func=_load(bind_global("check_scalar", helpers.check_scalar)),
                                      args=[_load(result), gast.Constant(fn.__qualname__, None)], keywords=[]))
    # a first pass finds the variables the backward pass reads; the second saves only those, a run of
    # statements at a time
    reverser.defined = {value}
    needed = drop_unneeded_saves(reverser.forward(copy.deepcopy(items)), reverser.backward(copy.deepcopy(items)))
    reverser.saved_candidates &= needed
    reverser.defined = {value}
    items = group_runs(items, reverser.saved_candidates)
    forward = reverser.forward(items)
    backward = reverser.backward(items)
    kept = drop_unneeded_saves(forward, backward) | reverser.saved_candidates
    gradient_of = bind_global("gradient_of", helpers.gradient_of)
    grads = [gast.Call(func=_load(gradient_of), args=[_load(reverser.adjoint_name(p)) if p in reverser.defined
                                                      else gast.Constant(0.0, None), _load(p)], keywords=[])
             for p in wrt]
    # (an argument named twice in argnums gets a gradient of its own each time: one array returned
    # twice, written through one, changed the other)
    copy_of = bind_global("fresh_copy", helpers.fresh_copy)
    grads = [gast.Call(func=_load(copy_of), args=[g], keywords=[]) if p in wrt[:k] else g
             for k, (p, g) in enumerate(zip(wrt, grads))]
    grad_value = grads[0] if single else gast.Tuple(elts=grads, ctx=gast.Load())
    returned = gast.Tuple(elts=[_load(result), grad_value], ctx=gast.Load()) if with_value else grad_value
    checks = [gast.Expr(value=gast.Call(func=_load(bind_global("check_differentiable", helpers.check_differentiable)),
                                        args=[_load(p), gast.Constant(p, None), gast.Constant(fn.__qualname__, None)],
                                        keywords=[])) for p in wrt]
    prologue = checks
    if kept:
        prologue.append(gast.Assign(targets=[_store(reverser.tape)], value=gast.List(elts=[], ctx=gast.Load()),
                                    type_comment=None))
        # (generated names only: a user's variable stays unbound until the user's code binds it)
        prologue += [gast.Assign(targets=[_store(n)], value=gast.Constant(None, None), type_comment=None)
                     for n in sorted(kept - set(params)) if not reverser.user_variable(n)]
    new_body = prologue + forward + start + backward + [check, gast.Return(value=returned)]
    source, function = _compile(fn, fndef, new_body, aliases, with_value)
    # a rule was chosen for what each called name meant now: the gradient is rebuilt if one is rebound.
    # The test is generated code, as a jitted function's (frontend/resolve.compiled_guard: numpy's
    # functions by their module's name only): resolving each chain again at each call cost 6-9 us
    for chain, obj in resolved.items():
        if obj is not MISSING:
            resolver.guard_chain(list(chain), obj)
    guard_callees(resolver, inliner.guards)
    for module, chain, obj in foreign:
        module.guard_chain(chain, obj)
    return source, function, inliner.guard_holds(resolver.compiled_guard())


def _compile(fn, fndef, body, aliases, with_value):
    """The gradient function of source ``body``: its free variables are ``fn``'s (their cells shared with
    ``fn``, so a closure reads what its enclosing function binds now) and the ``aliases`` it calls."""
    name = f"{fndef.name}_{'value_and_grad' if with_value else 'grad'}"   # (a lambda's def: lambda_)
    function = gast.FunctionDef(name=name, args=fndef.args, body=body, decorator_list=[], returns=None,
                                type_comment=None, type_params=[])
    free = list(fn.__code__.co_freevars) + list(aliases)
    factory = gast.FunctionDef(
        name="__astjit_make", args=gast.arguments(args=[_param(a) for a in free], posonlyargs=[], vararg=None,
                                                  kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[function, gast.Return(value=_load(name))], decorator_list=[], returns=None, type_comment=None,
        type_params=[])
    shown = ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(
        gast.Module(body=[copy.deepcopy(function)], type_ignores=[])))) + "\n"
    module = gast.Module(body=[factory], type_ignores=[])
    source = ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(module))) + "\n"
    filename = f"<astjit.grad of {fn.__qualname__} #{next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    make = _code_named(compile(source, filename, "exec"), "__astjit_make")
    code = _code_named(make, name)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    # (a global an inlined callee's module does not define: an empty cell, NameError where it is read)
    cells.update({alias: types.CellType() if obj is MISSING else types.CellType(obj) for alias, obj in aliases.items()})
    function = types.FunctionType(code, fn.__globals__, name, fn.__defaults__,
                                  tuple(cells[v] for v in code.co_freevars))
    return shown, function


def _code_named(code, name):
    return next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name)


def _prefix(fn, fndef) -> str:
    """``_`` (or ``__``, ...): a prefix no name of the user's function starts with, for generated names."""
    code = fn.__code__
    names = set(code.co_varnames) | set(code.co_names) | set(code.co_freevars) | {
        n.id for n in gast.walk(fndef) if isinstance(n, gast.Name)}
    prefix = "_"
    while any(n.startswith(prefix) for n in names):
        prefix += "_"
    return prefix


def _load(n):
    return gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(n):
    return gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None)


def _param(n):
    return gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)


def grad(fn, argnums=0, **jit_options):
    """The gradient of ``fn`` (returning a real scalar) with respect to its positional parameters
    ``argnums`` (an int: one gradient; a tuple: a tuple of them), by reverse mode on its source.

    ``fn`` may be a plain function or an ``astjit.jit`` one (its options are kept); ``jit_options``
    (``backend=``, ``strict=``, ...) go to the ``astjit.jit`` of the generated gradient function.
    Each gradient has its argument's shape and dtype. Raises ``GradError`` (at the line of ``fn``) for
    what cannot be differentiated, at the first call or ``show()``."""
    return _make(fn, argnums, False, jit_options)


def value_and_grad(fn, argnums=0, **jit_options):
    """Like ``grad``, returning ``(fn(*args), gradient)`` from one forward pass."""
    return _make(fn, argnums, True, jit_options)


def _make(fn, argnums, with_value, jit_options):
    from ..api import JitFunction

    if isinstance(fn, JitFunction):
        jit_options = {"strict": fn.strict, "backend": fn.backend, **jit_options}
        fn = fn.original
    if isinstance(fn, GradFunction):
        raise TypeError("astjit.grad of a gradient (higher derivatives) is not supported")
    if not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(f"astjit.grad needs a Python function defined with 'def', got {fn!r}")
    params = [n for n in fn.__code__.co_varnames[:fn.__code__.co_argcount]]
    _argnums(fn, argnums, params)
    return GradFunction(fn, argnums, with_value, jit_options)


__all__ = ["grad", "value_and_grad", "GradFunction"]
