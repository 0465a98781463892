"""Get a function's source as a gast FunctionDef whose line numbers are the file's own."""

import inspect
import types

import gast

from ..errors import SourceUnavailableError


def parse_function(fn) -> tuple[gast.Module, gast.FunctionDef]:
    """Parse ``fn``; raise SourceUnavailableError with a hint when there is no usable source."""
    if not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(
            f"astjit.jit needs a Python function defined with 'def', got {type(fn).__name__} {fn!r}")
    if fn.__name__ == "<lambda>":
        raise SourceUnavailableError(
            f"astjit.jit cannot compile lambdas ({fn.__code__.co_filename}:{fn.__code__.co_firstlineno}); "
            "define the function with 'def' in a file")
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
            module = gast.parse("if 1:\n" + src)
            fndef = module.body[0].body[0]
            gast.increment_lineno(fndef, start - 2)
        else:
            module = gast.parse(src)
            fndef = module.body[0]
            gast.increment_lineno(fndef, start - 1)
    except SyntaxError as exc:
        raise SourceUnavailableError(f"cannot parse the source of {fn.__qualname__}: {exc}") from None
    if not isinstance(fndef, gast.FunctionDef) or fndef.name != fn.__name__:
        raise SourceUnavailableError(f"the source found for {fn.__qualname__} is not its def statement")
    fndef.decorator_list = []
    return gast.Module(body=[fndef], type_ignores=[]), fndef
