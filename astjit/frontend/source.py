"""Get a function's source as a gast FunctionDef whose line numbers are the file's own."""

import ast
import copy
import functools
import inspect
import linecache
import types

import gast

from ..errors import AstjitError, NotAFunctionError, SourceUnavailableError
from .mangle import mangle_private_names
from .nesting import nesting_depth, room_for_nesting


def parse(text: str) -> gast.Module:
    """``text`` as a gast Module. Python's own parser takes it first; gast's conversion, which recurses
    once per level, then runs with room for how deep the code is (frontend/nesting)."""
    tree = ast.parse(text)
    with room_for_nesting(nesting_depth(tree)):
        return gast.ast_to_gast(tree)


def parse_function(fn) -> tuple[gast.Module, gast.FunctionDef]:
    """Parse ``fn``; raise SourceUnavailableError with a hint when there is no usable source."""
    if not isinstance(fn, types.FunctionType):
        hint = ": decorate the function it wraps" if isinstance(fn, functools.partial) else ""
        raise NotAFunctionError(
            f"astjit.jit needs a Python function (a 'def' or a lambda), got {type(fn).__name__} {fn!r}{hint}")
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):   # (their def is not a FunctionDef)
        raise AstjitError("async functions are not compiled")
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn)
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"no source for {fn.__qualname__} ({fn.__code__.co_filename}): {exc}. astjit reads the source "
            "of the function, so define it in a file (or a notebook cell), not with exec or in a plain REPL"
        ) from None
    src = "".join(lines)
    try:
        if src[:1].isspace():                       # nested def or method: keep the true columns
            module = parse("if 1:\n" + src)
            fndef = module.body[0].body[0]
            gast.increment_lineno(fndef, start - 2)
        else:
            module = parse(src)
            fndef = module.body[0]
            gast.increment_lineno(fndef, start - 1)
    except SyntaxError as exc:
        raise SourceUnavailableError(f"cannot parse the source of {fn.__qualname__}: {exc}") from None
    if not isinstance(fndef, gast.FunctionDef) or fndef.name != fn.__name__:
        raise SourceUnavailableError(f"the source found for {fn.__qualname__} is not its def statement")
    fndef.decorator_list = []
    with room_for_nesting(nesting_depth(fndef)):
        mangle_private_names(fndef, fn.__code__.co_qualname)
    return gast.Module(body=[fndef], type_ignores=[]), fndef


def _within(code, node) -> bool:
    """Whether the source positions of ``code``'s instructions lie inside ``node``'s: of two lambdas on
    one line with the same constants and names (``lambda x: x - 1, lambda x: 1 - x``), only the one
    the code was compiled from."""
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    for line, end_line, col, end_col in code.co_positions():
        if None in (line, end_line, col, end_col) or (line, col) == (end_line, end_col):
            continue                        # (no position, or an empty one: the RESUME at column 0)
        if (line, col) < start or (end_line, end_col) > end:
            return False
    return True


# the def a lambda is parsed as: printed by show, so a name Python takes (the code keeps '<lambda>')
LAMBDA_NAME = "lambda_"


def _parse_lambda(fn) -> tuple[gast.Module, gast.FunctionDef]:
    """A lambda as ``def lambda_(params): return body``, found in its file by position.

    ``inspect`` gives a lambda's whole statement, which may not parse on its own (a lambda inside a
    multi-line call), so the whole file is parsed. Of the lambdas that start on the code's first line,
    the one whose compiled code matches ``fn``'s is taken (two lambdas can share a line)."""
    from .transform import same_code

    code = fn.__code__
    text = "".join(linecache.getlines(code.co_filename))
    if not text:
        raise SourceUnavailableError(
            f"no source for the lambda at {code.co_filename}:{code.co_firstlineno}: astjit reads the source "
            "of the function, so define it in a file or a notebook cell, not with exec or in a plain REPL")
    try:
        tree = parse(text)
    except SyntaxError as exc:
        raise SourceUnavailableError(f"cannot parse {code.co_filename}: {exc}") from None
    for node in gast.walk(tree):
        if isinstance(node, gast.Lambda) and node.lineno == code.co_firstlineno:
            ret = gast.Return(value=node.body)
            gast.copy_location(ret, node.body)
            fndef = gast.FunctionDef(name=LAMBDA_NAME, args=node.args, body=[ret], decorator_list=[],
                                     returns=None, type_comment=None, type_params=[])
            gast.copy_location(fndef, node)
            mangle_private_names(fndef, code.co_qualname)
            module = gast.Module(body=[fndef], type_ignores=[])
            if _within(code, node) and same_code(fn, fndef):
                return module, fndef
    raise SourceUnavailableError(
        f"the source of the lambda at {code.co_filename}:{code.co_firstlineno} was not found (was the file "
        "edited after import?)")


def as_python_text(fn, parsed, reasons) -> str:
    """What ``show`` prints for a function that runs as Python: why (``reasons``, Records), then its
    def as the running code has it, or a note where its file says otherwise (edited after import) or
    has no source: never text that is not what runs."""
    from .emit import to_source
    from .transform import same_code

    why = "; ".join(r.message.removesuffix(": the function runs as Python") for r in reasons)
    head = f"# {fn.__qualname__} runs as Python" + (f": {why}" if why else "") + "\n"
    if parsed is None:
        return head + "# (its source is not available)\n"
    fndef = parsed[1]
    if not same_code(fn, copy.deepcopy(fndef)):
        return head + f"# (its source in {fn.__code__.co_filename} is not what runs, so it is not shown)\n"
    return head + to_source(copy.deepcopy(fndef))
