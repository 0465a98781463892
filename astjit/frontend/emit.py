"""Rewrite blocks into Fragment calls and compile the new function in the original's namespace.

The rewritten def is compiled with the user's file name and line numbers (tracebacks and pdb point at
the user's own lines), inside a factory function so that it closes over the original closure cells and
over the Fragment objects; nothing is added to the module's globals. Each block's original statements
are compiled the same way into a fallback function, run whenever a Fragment cannot be specialized.
"""

import ast
import copy
import functools
import inspect
import linecache
import types

import astor
import gast

from .loop_guard import DECLINED_NAME, SHOWN, result_name, tiny_loop_guard
from .loops import plain_attribute_read
from .outline import outline


def load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def param(name):
    return gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)


def fragment_name(block) -> str:
    return f"__astjit_fragment_{block.index}"


def fallback_name(block) -> str:
    return f"__astjit_block_{block.index}"


# cells of the factory (frontend/transform): the value passed for a live-in that is unbound, and the
# exception reading it raises (as cells, so that no global of the user's module can shadow them)
UNBOUND_NAME = "__astjit_unbound"
UNBOUND_ERROR_NAME = "__astjit_unbound_error"
# a cell of the factory: what reading a global, a closure variable or a global's attribute raises once
# it is gone, or whatever a module's ``__getattr__`` raises (the value passed is then UNBOUND: the
# Fragment declines, its Python raises where it reads, after the statements before)
GONE_ERRORS_NAME = "__astjit_gone_errors"
GONE_ERRORS = Exception
# cells of the factory for windows the caller takes (_view_reads): numpy's ndarray, the types of the
# values a window's index may read, and what is passed for a window not taken
NDARRAY_NAME = "__astjit_ndarray"
INDEX_TYPES_NAME = "__astjit_index_types"
NOT_TAKEN_NAME = "__astjit_not_taken"
PYTHON_INTS_NAME = "__astjit_python_ints"


# cells of the factory: the builtin next, and per straight-line block an iterator that says whether to
# run the block's own statements inline instead of calling its Fragment (runtime/fragment.settle_python)
NEXT_NAME = "__astjit_next"


# cells of the factory for loop regions with ``return``: the class wrapping what the loop returned
# (runtime/loop_fragment.Returned) and the builtin type, whatever the user's module names so
RETURNED_NAME = "__astjit_returned"
TYPE_NAME = "__astjit_type"
ESTIMATE_PREFIX = "__astjit_estimate_"     # a large work estimate's function (frontend/outline)


def python_switch_name(block) -> str:
    return f"__astjit_as_python_{block.index}"


def switch_local_name(block) -> str:
    return f"__astjit_py_{block.index}"


SWITCH_LOCAL = "astjit_switch_local"     # attribute of a block's ``if next(switch):``: the local it reads


def checked_name(name) -> str:
    return f"__astjit_in_{name}"


def _arguments(names):
    return gast.arguments(args=[param(n) for n in names], posonlyargs=[], vararg=None, kwonlyargs=[],
                          kw_defaults=[], kwarg=None, defaults=[])


def _targets(names):
    if len(names) == 1:
        return store(names[0])
    return gast.Tuple(elts=[store(n) for n in names], ctx=gast.Store())


def _assign(name, value):
    return gast.Assign(targets=[store(name)], value=value, type_comment=None)


def _delete(names):
    return gast.Delete(targets=[gast.Name(id=n, ctx=gast.Del(), annotation=None, type_comment=None)
                                for n in names])


def _check(name):
    """``try: __astjit_in_v = v`` / ``except __astjit_unbound_error: __astjit_in_v = __astjit_unbound``"""
    handler = gast.ExceptHandler(type=load(UNBOUND_ERROR_NAME), name=None,
                                 body=[_assign(checked_name(name), load(UNBOUND_NAME))])
    return gast.Try(body=[_assign(checked_name(name), load(name))], handlers=[handler], orelse=[],
                    finalbody=[])


def fragment_call(block) -> list:
    """The statements replacing the block: its Fragment call, preceded by a check of each live-in that
    may be unbound. Such a name is passed as the UNBOUND marker rather than read by the call, so that
    UnboundLocalError comes from the block's own statement that reads it (the fallback deletes it), in
    order, after the statements before it have run::

        try:
            __astjit_in_v = v
        except __astjit_unbound_error:
            __astjit_in_v = __astjit_unbound
        w = __astjit_fragment_0(a, __astjit_in_v)
        del __astjit_in_v
    """
    hoisted = {n: plain_attribute_read(block.hoisted[n]) for n in block.live_in if n in block.hoisted_locals}
    checked = set(block.maybe_unbound) | block.free_names
    args = [hoisted[n] if n in hoisted else load(checked_name(n) if n in checked else n)
            for n in block.live_in]
    keep = {id(m) for e in hoisted.values() for m in gast.walk(e)}   # an attribute read raises at its own line
    call = gast.Call(func=load(fragment_name(block)), args=args, keywords=[])
    if block.kind == "loop" and (block.returns is not False or block.resume_at or block.declines_inline):
        main = _loop_result(block, call)
        if block.declines_inline and not block.resume_at:
            # its Python as a function of its own would rebind its own copy of a name that a function
            # defined in this one reads (from the cell): where the kernel declines, the loop runs here
            inline = [copy.deepcopy(s) for s in block.stmts]
            keep |= {id(m) for s in inline for m in gast.walk(s)}
            declined = gast.Compare(left=load(result_name(block)), ops=[gast.Is()], comparators=[load(DECLINED_NAME)])
            main = main[:1] + [gast.If(test=declined, body=inline, orelse=main[1:])]
    elif not block.live_out:
        main = [gast.Expr(value=call)]
    else:
        main = [gast.Assign(targets=[_targets(block.live_out)], value=call, type_comment=None)]
    gone = _gone_checks(block)
    if gone:            # ``show`` prints the call with what it reads: ``f(a, SCALE, cfg.DT)``
        shown = _AsRead(block).visit_all(copy.deepcopy(main))
        for n in (n for s in shown for n in gast.walk(s)):
            gast.copy_location(n, block.stmts[0])
        for s, shows in [(gone[0], [])] + list(zip(main, [shown] + [[]] * len(main))):
            setattr(s, SHOWN, shows)
    checks = [_check(n) for n in block.maybe_unbound] + gone + (_view_reads(block) if block.views else [])
    # a check holds the old value: drop it, so that a block rebinding the name does not keep it alive
    # (and a window its array)
    dropped = [checked_name(n) for n in block.maybe_unbound] + list(block.views)
    drop = [_delete(dropped)] if dropped else []
    anchor = block.stmts[0]
    stmts = checks + main + drop + [_unbind(n) for n in block.unbound_after]
    if block.kind == "loop":
        # a loop about to do a few statements' work runs inline, as written (frontend/loop_guard)
        stmts, as_written = tiny_loop_guard(block, stmts)
        keep |= {id(m) for s in as_written for m in gast.walk(s)}
    # a block that settled on Python runs its statements here: a Fragment call costs several times a
    # few scalar statements (runtime/fragment.settle_python); in a loop, the switch is read into a
    # local before the loop around it and after each call (build: _read_switches_before_loops)
    test = gast.Call(func=load(NEXT_NAME), args=[load(python_switch_name(block))], keywords=[])
    stmts = [gast.If(test=test, body=[copy.deepcopy(s) for s in block.stmts], orelse=stmts)]
    setattr(stmts[0], SWITCH_LOCAL, switch_local_name(block))
    keep |= {id(m) for s in stmts[0].body for m in gast.walk(s)}
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.expr | gast.stmt | gast.excepthandler) and id(n) not in keep:
                gast.copy_location(n, anchor)
                n.end_lineno, n.end_col_offset = getattr(anchor, "end_lineno", None), getattr(
                    anchor, "end_col_offset", None)
    return stmts


def passed_attributes(block) -> list:
    """The hoisted attribute reads of globals (``settings.DT``) that ``block``'s call takes."""
    return [n for n in block.live_in if n in block.hoisted and n not in block.hoisted_locals]


def _gone_checks(block) -> list:
    """Each global, closure variable and global's attribute the block takes, read before its call::

        try:
            __astjit_in_SCALE = SCALE
            __astjit_attr_cfg_1DT = cfg.DT
        except __astjit_gone_errors:
            __astjit_in_SCALE = __astjit_attr_cfg_1DT = __astjit_unbound

    One deleted since (``del SCALE`` in a branch of another call) is passed as UNBOUND, which the
    Fragment declines: its Python raises where a statement reads it, after the statements before (or
    not at all, where no taken branch reads it), as in Python."""
    reads = _gone_reads(block)
    if not reads:
        return []
    gone = gast.Assign(targets=[store(name) for name, _ in reads], value=load(UNBOUND_NAME), type_comment=None)
    handler = gast.ExceptHandler(type=load(GONE_ERRORS_NAME), name=None, body=[gone])
    return [gast.Try(body=[_assign(name, value) for name, value in reads], handlers=[handler], orelse=[],
                     finalbody=[])]


def windows_switch_name(block) -> str:
    return f"__astjit_windows_{block.index}"


def _view_reads(block) -> list:
    """The windows a block reads, taken by the caller once its Fragment asks for them
    (frontend/window_views)::

        try:
            if __astjit_windows_0 and type(a) is ndarray and type(hi) in INDEX_TYPES \
                    and type(lo) in PYTHON_INTS and type(w) in PYTHON_INTS:
                __astjit_view_0_0_a = a[lo:lo + w]
            else:
                __astjit_view_0_0_a = __astjit_not_taken
        except __astjit_gone_errors:
            __astjit_view_0_0_a = __astjit_not_taken

    Taking a view of an ndarray with ints has no effects, so the block's Python may take it again
    where the Fragment runs it; a name unbound here (bound in one branch only) passes NOT_TAKEN, and
    the block's statements raise where they read it."""
    def is_type(n, op, kind):
        called = gast.Call(func=load(TYPE_NAME), args=[load(n)], keywords=[])
        return gast.Compare(left=called, ops=[op], comparators=[load(kind)])

    tests = [load(windows_switch_name(block))]
    for view in block.views.values():
        tests.append(is_type(view.base, gast.Is(), NDARRAY_NAME))
        tests += [is_type(n, gast.In(), INDEX_TYPES_NAME) for n in view.index_names]
        tests += [is_type(n, gast.In(), PYTHON_INTS_NAME) for n in view.computed_names]
    not_taken = gast.Assign(targets=[store(n) for n in block.views], value=load(NOT_TAKEN_NAME), type_comment=None)
    taken = [_assign(n, copy.deepcopy(view.expr)) for n, view in block.views.items()]
    choice = gast.If(test=gast.BoolOp(op=gast.And(), values=tests), body=taken, orelse=[copy.deepcopy(not_taken)])
    handler = gast.ExceptHandler(type=load(GONE_ERRORS_NAME), name=None, body=[not_taken])
    return [gast.Try(body=[choice], handlers=[handler], orelse=[], finalbody=[])]


def _gone_reads(block) -> list:
    """(the name read into, what is read) of each read of _gone_checks."""
    return ([(checked_name(n), load(n)) for n in block.live_in if n in block.free_names]
            + [(n, copy.deepcopy(block.hoisted[n])) for n in passed_attributes(block)])


class _AsRead(gast.NodeTransformer):
    """The names _gone_checks reads into, as what they read (``__astjit_in_SCALE`` as ``SCALE``)."""

    def __init__(self, block):
        self.reads = dict(_gone_reads(block))

    def visit_all(self, stmts) -> list:
        return [self.visit(s) for s in stmts]

    def visit_Name(self, node):
        read = self.reads.get(node.id)
        return copy.deepcopy(read) if read is not None and isinstance(node.ctx, gast.Load) else node


def _unbind(name):
    """``if v is __astjit_unbound: del v``: a name the loop did not bind is unbound after it, as in
    Python (reading it raises UnboundLocalError at the statement that reads it)."""
    return gast.If(test=gast.Compare(left=load(name), ops=[gast.Is()], comparators=[load(UNBOUND_NAME)]),
                   body=[_delete([name])], orelse=[])


def _loop_result(block, call) -> list:
    """A loop region's call whose result may be other than its live-out values: what the loop
    returned (``return`` in the loop: the function returns it) or, for a handed-over loop, DECLINED
    (frontend/loop_guard: the first statement is the call, the rest read its result)::

        __astjit_result_0 = __astjit_fragment_0(a, v)
        if __astjit_type(__astjit_result_0) is __astjit_returned:
            return __astjit_result_0.value
        k = __astjit_result_0
    """
    result = result_name(block)
    out = [gast.Assign(targets=[store(result)], value=call, type_comment=None)]
    if block.returns is not False:
        returned = gast.Compare(left=gast.Call(func=load(TYPE_NAME), args=[load(result)], keywords=[]),
                                ops=[gast.Is()], comparators=[load(RETURNED_NAME)])
        value = gast.Attribute(value=load(result), attr="value", ctx=gast.Load())
        out.append(gast.If(test=returned, body=[gast.Return(value=value)], orelse=[]))
    if block.live_out:
        out.append(gast.Assign(targets=[_targets(block.live_out)], value=load(result), type_comment=None))
    return out


class _WrappedReturns(gast.NodeTransformer):
    """``return v`` -> ``return __astjit_returned(v)``: a loop region's Python as a function of its own
    gives back what the loop returned apart from its live-out values."""

    def visit_Return(self, node):
        value = node.value if node.value is not None else gast.Constant(value=None, kind=None)
        node.value = gast.copy_location(gast.Call(func=load(RETURNED_NAME), args=[value], keywords=[]), node)
        return node

    def visit_FunctionDef(self, node):
        return node

    visit_Lambda = visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef


class _PassedOrAsWritten(gast.NodeTransformer):
    """Each hoisted attribute read and each global or closure variable the call passed (as the
    parameter ``__astjit_in_SCALE``), read as the value passed: the copies a measurement passes
    (runtime/measure) are what the statements update. Where that is UNBOUND (gone when the call read
    it) the read is as written, and raises at its own line: ``(n if n is not U else cfg.DT)``."""

    def __init__(self, hoisted, free_names):
        self.by_dump = {gast.dump(e): name for name, e in hoisted.items()}
        self.free_names = free_names

    @staticmethod
    def passed_or(name, node):
        passed = gast.Compare(left=load(name), ops=[gast.IsNot()], comparators=[load(UNBOUND_NAME)])
        return gast.copy_location(gast.IfExp(test=passed, body=load(name), orelse=node), node)

    def visit_Attribute(self, node):
        name = self.by_dump.get(gast.dump(node))
        if name is not None and isinstance(node.ctx, gast.Load):
            return self.passed_or(name, node)
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.free_names and isinstance(node.ctx, gast.Load):
            return self.passed_or(checked_name(node.id), node)
        return node


def fallback_def(block, stmts=None, name=None):
    """``def __astjit_block_k(live_in...): <original statements>; return live_out``.

    Blocks never assign global/nonlocal names (lowering refuses), and every name they read that is
    not a module or a function arrives as a parameter, so the body runs unchanged. ``stmts`` replaces
    the block's statements (a loop as written, without the Fragments of its body).
    """
    body = [copy.deepcopy(s) for s in (block.stmts if stmts is None else stmts)]
    if block.kind == "loop" and block.returns is not False:
        body = [_WrappedReturns().visit(s) for s in body]
    passed = {n: e for n, e in block.hoisted.items() if n not in block.hoisted_locals}
    if passed or block.free_names:   # (an object's attribute is read by the loop itself: Python's reads)
        body = [_PassedOrAsWritten(passed, block.free_names).visit(s) for s in body]
    # a live-in passed as UNBOUND is deleted: the statement reading it raises UnboundLocalError itself
    unbind = [gast.copy_location(gast.If(
        test=gast.Compare(left=load(n), ops=[gast.Is()], comparators=[load(UNBOUND_NAME)]),
        body=[_delete([n])], orelse=[]), block.stmts[0]) for n in block.maybe_unbound]
    body = unbind + body
    if block.live_out:
        # a name only the loop binds is read back as UNBOUND where it did not (fragment_call deletes it)
        returned = [load(checked_name(n) if n in block.unbound_after else n) for n in block.live_out]
        value = returned[0] if len(returned) == 1 else gast.Tuple(elts=returned, ctx=gast.Load())
        ret = [_check(n) for n in block.unbound_after] + [gast.Return(value=value)]
    else:
        ret = [gast.Return(value=None)]
    for r in ret:
        for n in gast.walk(r):
            gast.copy_location(n, block.stmts[-1])
    # a global or closure variable is the value passed, or read as written where it is gone
    params = [checked_name(n) if n in block.free_names else n for n in block.live_in]
    fdef = gast.FunctionDef(name=name or fallback_name(block), args=_arguments(params),
                            body=body + ret, decorator_list=[], returns=None, type_comment=None, type_params=[])
    return gast.copy_location(fdef, block.stmts[0])


def rewrite(placements) -> None:
    """Replace each block's statements by its Fragment call, in place. ``placements`` is in source order,
    a loop region before the blocks of its body: taken backwards, each list is rewritten last block
    first, and a region's body before the region itself, so that the region's Python form (copied by
    fragment_call) holds its body's Fragment calls, in every process alike."""
    for stmts, start, end, block in reversed(placements):
        stmts[start:end] = fragment_call(block)


class _WithoutSwitches(gast.NodeTransformer):
    """The rewritten function as ``show`` prints it: each block as its Fragment call, without the switch
    to its inline statements (same code either way, but the switch doubles every block's text), and
    each loop region as its Fragment call, without the loop that runs where it is tiny."""

    def visit(self, node):
        shown = getattr(node, SHOWN, None)
        if shown is not None:
            return self.visit_all(shown)
        return super().visit(node)

    def visit_all(self, stmts) -> list:
        out = []
        for s in stmts:
            new = self.visit(s)
            out += new if isinstance(new, list) else [new]
        return out

    def visit_If(self, node):
        test = node.test
        if getattr(node, SWITCH_LOCAL, None) or (
                isinstance(test, gast.Call) and isinstance(test.func, gast.Name) and test.func.id == NEXT_NAME):
            return self.visit_all(node.orelse)
        return self.generic_visit(node)


def to_source(fndef) -> str:
    """The rewritten function as text: astor where it round-trips, ast.unparse otherwise."""
    fndef = _WithoutSwitches().visit(copy.deepcopy(fndef))
    tree = gast.gast_to_ast(gast.Module(body=[fndef], type_ignores=[]))
    try:
        text = astor.to_source(tree, pretty_source="".join)
        if ast.dump(ast.parse(text)) == ast.dump(ast.parse(ast.unparse(tree))):
            return text
    except Exception:  # astor lacks match, except*, type params: print with the standard library
        pass
    return ast.unparse(tree) + "\n"


def _find_code(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                return const
            found = _find_code(const, name)
            if found is not None:
                return found
    return None


def _read_switches_before_loops(fndef) -> None:
    """Each block's ``if next(switch):`` (fragment_call) in a loop as ``if <local>:``, the local read from the
    switch before the innermost loop around it and again after each Fragment call: once a call chooses
    Python the rest of the loop runs the block's statements for the price of reading a local, where
    ``next`` cost about 35 ns an iteration a block (a loop of three such blocks ran 1.4x slower than its
    plain Python). A block that chose Python is looked at again at a later entry of its loop, when the
    switch's run of True ends (runtime/fragment.settle_python)."""

    def read(local, switch_test, at):
        return gast.copy_location(gast.Assign(targets=[store(local)], value=copy.deepcopy(switch_test),
                                              type_comment=None), at)

    def visit(stmts, loop_reads, in_loop=False):
        """Rewrite the switches in ``stmts`` (``loop_reads``: gets the reads that belong before the loop
        around them)."""
        out = []
        for s in stmts:
            if isinstance(s, gast.For | gast.While | gast.AsyncFor):
                reads = []
                for name in ("body", "orelse"):
                    setattr(s, name, visit(getattr(s, name), reads, True))
                out += [read(local, test, s) for local, test in dict(reads).items()]
                out.append(s)
                continue
            local = getattr(s, SWITCH_LOCAL, None)
            if local is not None and isinstance(s, gast.If):
                # (outside loops the switch is read where the block runs: read at the function's
                # start, each block's cost a ``next`` on every call, run or not: twelve blocks of an
                # if/elif chain, two of them run, cost 0.4 us a call)
                if in_loop:
                    loop_reads.append((local, s.test))
                    s.orelse = s.orelse + [read(local, s.test, s.orelse[-1] if s.orelse else s)]
                    s.test = gast.copy_location(load(local), s.test)
                setattr(s, SWITCH_LOCAL, None)
            if not isinstance(s, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef | gast.Lambda):
                for name in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(s, name, None)
                    if inner:
                        if name == "handlers":
                            for h in inner:
                                h.body = visit(h.body, loop_reads, in_loop)
                        else:
                            setattr(s, name, visit(inner, loop_reads, in_loop))
            out.append(s)
        return out

    fndef.body = visit(fndef.body, [])


def build(fn, fndef, blocks, fragments: dict):
    """Compile the rewritten ``fndef`` and each block's fallback; returns (function, {index: fallback})."""
    a = fndef.args
    a.defaults, a.kw_defaults = [], [None] * len(a.kwonlyargs)
    for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if p is not None:
            p.annotation = None
    fndef.returns = None
    # a factory local named like the function would capture its recursive calls through the global name
    fndef.name = "__astjit_def"
    freevars = [v for v in fn.__code__.co_freevars if v != "__class__"]
    params = list(dict.fromkeys(freevars + list(fragments)))
    fallbacks = [fallback_def(b) for b in blocks]
    estimates = []                   # (large work estimates, in functions of their own: frontend/outline)
    for d in [fndef] + fallbacks:
        _read_switches_before_loops(d)
        estimates += outline(d, f"{ESTIMATE_PREFIX}{len(estimates)}_", SHOWN)
    inner = [fndef] + fallbacks + estimates
    if "__class__" in fn.__code__.co_freevars:      # zero-argument super() needs a __class__ cell
        # a class name of only underscores turns off name mangling, which would otherwise rename the
        # __astjit_fragment_k references inside it (NameError); long, so that no global name is shadowed
        inner = [gast.ClassDef(name="_" * 16, bases=[], keywords=[], body=[fndef], decorator_list=[],
                               type_params=[])] + fallbacks + estimates
    factory = gast.FunctionDef(name="__astjit_factory", args=_arguments(params),
                               body=inner + [gast.Return(value=None)], decorator_list=[], returns=None,
                               type_comment=None, type_params=[])
    module = gast.Module(body=[factory], type_ignores=[])
    tree = ast.fix_missing_locations(gast.gast_to_ast(module))
    filename = fn.__code__.co_filename
    module_code = compile(tree, filename, "exec", dont_inherit=True)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    # a cell given as a cell stays shared with its owner, which may swap its contents (a switch)
    cells.update({k: v if isinstance(v, types.CellType) else types.CellType(v) for k, v in fragments.items()})

    def make(code, name, defaults=None, kwdefaults=None):
        closure = tuple(cells[v] if v in cells else types.CellType() for v in code.co_freevars)
        f = types.FunctionType(code, fn.__globals__, name, defaults, closure)
        f.__kwdefaults__ = kwdefaults
        return f

    qualname = fn.__code__.co_qualname
    for d in estimates:              # (before the functions calling them, whose cells they fill)
        ecode = _find_code(module_code, d.name)
        cells[d.name] = types.CellType(make(_requalified(ecode, ecode.co_qualname, qualname), d.name))
    code = _find_code(module_code, fndef.name)
    code = _requalified(code, code.co_qualname, qualname).replace(co_name=fn.__code__.co_name)
    new = make(code, fn.__name__, fn.__defaults__, fn.__kwdefaults__)
    functools.update_wrapper(new, fn)
    built_fallbacks = {}
    for b in blocks:
        fcode = _find_code(module_code, fallback_name(b))
        fcode = _requalified(fcode, fcode.co_qualname, qualname).replace(co_qualname=fcode.co_qualname)
        built_fallbacks[b.index] = make(fcode, fallback_name(b))
    return new, built_fallbacks


def _requalified(code, old: str, new: str):
    """``code`` qualified as ``new`` instead of ``old`` (the factory's ``__astjit_factory.<locals>.__astjit_def``),
    and so are its nested functions, lambdas and classes: a def inside ``g`` is ``g.<locals>.h``,
    as in Python, in its repr, in pickling errors and in logs. A class takes its ``__qualname__`` from a
    constant of its body, which is renamed too (and so compiles to the original's constants)."""
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_qualname.startswith(old + "."):
            const = _requalified(const, const.co_qualname, new + const.co_qualname[len(old):])
        consts.append(const)
    if "__qualname__" in code.co_names and not code.co_flags & inspect.CO_OPTIMIZED:    # a class body
        consts = [new if c == old else c for c in consts]
    if code.co_qualname.startswith(old):
        code = code.replace(co_qualname=new + code.co_qualname[len(old):])
    return code.replace(co_consts=tuple(consts))


def register_source(qualname: str, text: str) -> str:
    """Put the transformed text in linecache under a synthetic name (mtime None keeps it there)."""
    name = f"<astjit {qualname}>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    return name
