"""The whole frontend as one ordered pipeline: function -> rewritten function + Fragments.

Order matters where noted: tests and returns are hoisted before liveness (the hoisted names must be
analysed), liveness runs before the rewrite (beniget keys its results by the original nodes), and the
source text is printed before compiling (compiling strips defaults and annotations).
"""

import copy
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import FrameIntrospection, SourceUnavailableError
from ..runtime.fragment import UNBOUND, Fragment
from ..runtime.loop_fragment import DECLINED, LoopFragment, Returned
from ..runtime.plain_attribute import NAME as PLAIN_ATTRIBUTE_NAME
from ..runtime.plain_attribute import plain_attribute
from ..runtime.records import Record
from ..runtime.windows import NOT_TAKEN
from .blocks import BlockFinder
from .emit import (
    GONE_ERRORS,
    GONE_ERRORS_NAME,
    INDEX_TYPES_NAME,
    NDARRAY_NAME,
    NEXT_NAME,
    NOT_TAKEN_NAME,
    PYTHON_INTS_NAME,
    RETURNED_NAME,
    TYPE_NAME,
    UNBOUND_ERROR_NAME,
    UNBOUND_NAME,
    build,
    fragment_name,
    passed_attributes,
    python_switch_name,
    register_source,
    rewrite,
    to_source,
    windows_switch_name,
)
from .guard_prologue import MISSING, guard_prologue, takes_prologue
from .liveness import FunctionLiveness
from .local_imports import local_modules
from .loop_guard import DECLINED_NAME
from .loop_iteration import BUILTIN_CELLS
from .loops import ARRAY_WORK_CELLS
from .lower import BlockLowering
from .nesting import nesting_depth, room_for_nesting
from .prepare import expression_checker, hoist_tests_and_returns
from .resolve import Resolver, assigned_attribute_chains
from .source import parse_function
from .suspensions import guard_after_suspensions, resumes
from .window_views import INDEX_TYPES, PYTHON_INTS


@dataclass
class Transformed:
    function: object
    fragments: list
    resolver: Resolver
    source: str
    source_name: str
    records: list = field(default_factory=list)
    guarded: bool = False           # the function checks its guard itself (frontend/guard_prologue)


# the note of a statement that does not compile as a block of its own but does inside its loop's kernel:
# explain() leaves it out where every call of that loop ran its kernel (api.JitFunction.records)
IN_COMPILED_LOOP = " where its loop does (the loop compiles as a whole)"


def same_code(fn, fndef) -> bool:
    """Whether the parsed def compiles to ``fn``'s own code: the same constants, names, variables and
    instructions (``_instructions``: co_code itself differs legitimately, as CPython emits other
    opcodes for attributes of modules imported in the same file and for names it reads from other
    scopes). Constants and names alone took an edit from ``x - 1`` to ``1 - x`` for the same code."""
    try:
        rebuilt, _ = build(fn, copy.deepcopy(fndef), [], {})
    except (SyntaxError, ValueError, TypeError):
        return False
    return _signature(rebuilt.__code__) == _signature(fn.__code__)


def check_source_matches(fn, fndef) -> None:
    """The parsed def must compile to fn's own bytecode: a file edited after import gives other code."""
    if not same_code(fn, fndef):
        b = fn.__code__
        raise SourceUnavailableError(
            f"the source of {fn.__qualname__} in {b.co_filename} does not match the running function "
            "(was the file edited after import, or is this a wrapper?)")


FRAME_READERS = {"locals": None, "eval": None, "exec": None, "vars": 0, "dir": 0}   # name -> arity that reads


def check_no_frame_introspection(fndef, resolver) -> None:
    """``locals()``, ``eval``, ``exec`` and argument-less ``vars()``/``dir()`` see the function's local
    variables; a Fragment keeps its temporaries to itself and adds names of its own, so such a function
    runs as Python."""
    import builtins

    for node in gast.walk(fndef):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            continue
        name = node.func.id
        if name not in FRAME_READERS or resolver.lookup(name) is not getattr(builtins, name):
            continue
        if FRAME_READERS[name] is None or len(node.args) == FRAME_READERS[name]:
            raise FrameIntrospection(f"it calls {name}() (line {node.lineno}), which reads the function's "
                                     "local variables as Python keeps them", node.lineno, node.col_offset,
                                     node.end_col_offset if node.end_lineno == node.lineno else None)


def _signature(code):
    consts = tuple(_signature(c) if hasattr(c, "co_code") else (type(c), c) for c in code.co_consts)
    return (consts, frozenset(code.co_names), code.co_varnames, code.co_argcount, code.co_kwonlyargcount,
            _instructions(code))


# instructions that only bookkeep (cells, calls' preparation) and loads whose opcode depends on the
# scope a name is read from: the rebuilt function is compiled inside a factory (emit.build)
_BOOKKEEPING = {"RESUME", "COPY_FREE_VARS", "MAKE_CELL", "NOP", "CACHE", "EXTENDED_ARG", "PRECALL",
                "PUSH_NULL", "KW_NAMES"}
_NAME_LOADS = {"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLOSURE", "LOAD_FAST", "LOAD_CLASSDEREF",
               "LOAD_FAST_CHECK"}
_SAME_OPCODE = {"LOAD_METHOD": "LOAD_ATTR", "CALL_METHOD": "CALL", "CALL_FUNCTION": "CALL"}


def _instructions(code) -> tuple:
    """``code``'s instructions as (operation, argument) without bookkeeping, jump targets and the
    scope of each name read: what the source says, not where the compiler put it."""
    import dis

    out = []
    for ins in dis.get_instructions(code):
        if ins.opname in _BOOKKEEPING:
            continue
        op = "LOAD_NAME" if ins.opname in _NAME_LOADS else _SAME_OPCODE.get(ins.opname, ins.opname)
        arg = None if "JUMP" in ins.opname or ins.opname in ("FOR_ITER", "SEND") or hasattr(ins.argval, "co_code") \
            else repr(ins.argval)
        out.append((op, arg))
    return tuple(out)


def transform(fn, strict=False, backend=None, parsed=None, rewrites=(), fastmath=False,
              device=None, guard_failed=None, missing_arguments=None) -> Transformed:
    """``guard_failed(args, kwargs)``, ``missing_arguments(kwargs)``: where given and the signature is
    plain (frontend/guard_prologue), the rewritten function checks its guard itself and calls them when
    the guard fails or an argument is left out (``Transformed.guarded``)."""
    module, fndef = parsed if parsed is not None else parse_function(fn)
    with room_for_nesting(nesting_depth(fndef)):          # (its passes recurse into each expression)
        return _transform(fn, strict, backend, (module, fndef), rewrites, fastmath, device, guard_failed,
                          missing_arguments)


def _transform(fn, strict, backend, parsed, rewrites, fastmath, device, guard_failed,
               missing_arguments) -> Transformed:
    from .. import rewrite as rewriting

    module, fndef = copy.deepcopy(parsed)
    fndef = module.body[0]
    check_source_matches(fn, fndef)
    applied, generated, helpers = apply_transformations(fndef, rewriting.transformations(rewrites), fn)
    rules = rewriting.active_rules(rewrites, fastmath)
    liveness = FunctionLiveness(module, fndef)                   # local names of the original
    assigned, modules = assigned_attribute_chains(fndef), local_modules(fndef)
    resolver = Resolver(fn, liveness.local_names, assigned, modules)
    check_no_frame_introspection(fndef, resolver)
    is_traceable = expression_checker(lambda: BlockLowering(
        "probe", Resolver(fn, liveness.local_names, assigned, modules), liveness.local_names - set(modules)))
    hoist_tests_and_returns(fndef, is_traceable)
    liveness = FunctionLiveness(module, fndef)                   # again, with the hoisted names
    resolver.local_names = liveness.local_names
    finder = BlockFinder(fndef, resolver, liveness, fn.__qualname__)
    blocks = finder.run()
    filename = fn.__code__.co_filename
    fragments = {fragment_name(b): (LoopFragment if b.kind == "loop" else Fragment)(
        b, filename, fn.__qualname__, strict, backend, rules, device) for b in blocks}
    rewrite(finder.placements)
    resuming = guard_after_suspensions(fndef, resolver) if resumes(fn) else None
    text = to_source(fndef)
    source_name = register_source(fn.__qualname__, text)
    cells = {name: f.dispatch_cell for name, f in fragments.items()}
    cells.update({python_switch_name(f.block): f.python_switch for f in fragments.values()})
    cells[NEXT_NAME] = next
    cells.update(helpers)
    cells.update(modules)        # (a block's Python, a function of its own, reads ``np`` from its cell)
    if any(b.maybe_unbound or b.unbound_after or b.free_names or passed_attributes(b) for b in blocks):
        cells.update({UNBOUND_NAME: UNBOUND, UNBOUND_ERROR_NAME: UnboundLocalError, GONE_ERRORS_NAME: GONE_ERRORS})
    if any(b.views for b in blocks):
        cells.update({GONE_ERRORS_NAME: GONE_ERRORS, TYPE_NAME: type, NDARRAY_NAME: np.ndarray,
                      INDEX_TYPES_NAME: INDEX_TYPES, PYTHON_INTS_NAME: PYTHON_INTS, NOT_TAKEN_NAME: NOT_TAKEN})
        cells.update({windows_switch_name(f.block): f.windows_switch for f in fragments.values() if f.block.views})
    if any(b.kind == "loop" for b in blocks):
        cells.update({**BUILTIN_CELLS, **ARRAY_WORK_CELLS, DECLINED_NAME: DECLINED, RETURNED_NAME: Returned,
                      TYPE_NAME: type})
    if any(b.hoisted_locals for b in blocks):
        cells[PLAIN_ATTRIBUTE_NAME] = plain_attribute
    if resuming:
        cells.update(resuming)
    guarded = guard_failed is not None and takes_prologue(fn)
    if guarded:
        prologue, guard_cells = guard_prologue(resolver, fndef, guard_failed, missing_arguments, fn)
        fndef.body[:0] = hoisted_declarations(fndef) + prologue
        # each in a cell of its own: a user's closure cell is read as the cell, not as its contents
        cells.update({name: types.CellType(value) for name, value in guard_cells.items()})
    new, fallbacks = build(fn, fndef, blocks, cells)
    if guarded:
        new.__defaults__ = (MISSING,) * fn.__code__.co_argcount
        new.__kwdefaults__ = {a.id: MISSING for a in fndef.args.kwonlyargs} or None
    for frag in fragments.values():
        # a handed-over loop's Python is the loop as written, going on where the kernel declines
        frag.fallback = _declining if frag.block.resume_at or frag.block.declines_inline else fallbacks[frag.index]
    records = [Record("statement", filename, s.lineno, f"{s.reason}: the statement runs as Python"
                      + (IN_COMPILED_LOOP if s.in_region else ""),
                      _line(filename, s.lineno), col=s.col, end_col=s.end_col) for s in finder.skipped
               if s.lineno not in generated]
    records += [Record("loop", filename, s.lineno, s.reason, _line(filename, s.lineno), col=s.col,
                       end_col=s.end_col) for s in finder.loop_notes]
    records += applied
    return Transformed(new, list(fragments.values()), resolver, text, source_name, records, guarded)


def hoisted_declarations(fndef) -> list:
    """The ``global`` and ``nonlocal`` statements of ``fndef``'s own scope, taken out of its body (a
    ``pass`` where one stood), as statements to put first: the guard prologue reads the names it
    resolved before the body, and Python refuses a name used before its declaration (a declaration
    holds for the whole scope wherever it stands)."""
    declared = {gast.Global: [], gast.Nonlocal: []}

    class Take(gast.NodeTransformer):
        def visit_FunctionDef(self, node):
            return node if node is not fndef else self.generic_visit(node)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_ClassDef(self, node):
            return node

        def visit_Global(self, node):
            declared[type(node)].extend(n for n in node.names if n not in declared[type(node)])
            return gast.copy_location(gast.Pass(), node)

        visit_Nonlocal = visit_Global

    Take().visit(fndef)
    return [gast.copy_location(kind(names=names), fndef) for kind, names in declared.items() if names]


def apply_transformations(fndef, transformations, fn) -> tuple[list, set, dict]:
    """Apply the function transformations named in ``rewrites=`` (astjit/rewrite) to the parsed def.
    Returns a Record per place each one changed, the lines of the statements it wrote and the names
    (helpers) the rewritten function reads."""
    records, generated, names = [], set(), {}
    for name in transformations:
        if name == "push_reductions_into_loops":
            from ..rewrite.reduction_into_loop import push_reductions_into_loops

            rewrites = push_reductions_into_loops(fndef, fn)
            generated |= rewrites.lines
            names.update(rewrites.names)
            for lineno, message in rewrites.done:
                records.append(Record("rewrite", fn.__code__.co_filename, lineno, message,
                                      _line(fn.__code__.co_filename, lineno)))
    return records, generated, names


def _line(filename, lineno):
    import linecache

    return linecache.getline(filename, lineno).rstrip("\n")


def _declining(*args):
    return DECLINED
