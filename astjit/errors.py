"""Typed errors that point at the user's own file and line, never at compiler internals."""

import linecache


class AstjitError(Exception):
    """Base class of every error astjit raises on purpose."""


class SourceUnavailableError(AstjitError):
    """The function's source cannot be read (a lambda typed into a REPL, exec'd code, a builtin)."""


class NotAFunctionError(SourceUnavailableError, TypeError):
    """``jit`` of something that is not a Python function (a builtin, ``np.sum``, a
    ``functools.partial``, a class): raised at decoration, with or without ``strict``."""


class NotTraceable(AstjitError):
    """A statement or expression that cannot become part of a Fragment.

    Raised inside the frontend and caught there: the statement then stays Python.
    """

    def __init__(self, reason: str, node=None):
        super().__init__(reason)
        self.reason = reason
        self.node = node


class Unsupported(AstjitError):
    """A Fragment cannot be specialized for these argument types; the block runs as Python."""


class RaisesAsPython(Unsupported):
    """numpy raised its own error while typing the block for these arguments (a shape mismatch, a bad
    operand type): the block's Python raises it at the user's line, even under ``strict=True``."""


class CompileFailed(Unsupported):
    """A backend's compile() failed unexpectedly (out of memory, a full disk, a compiler's internal
    error) rather than refusing: the part runs on numpy in this process, and the disk cache does not
    remember it, as the next process's compile may succeed."""


class RuleError(AstjitError, ValueError):
    """A rewrite rule that cannot be used: its pattern or replacement calls something astjit has no
    op for, their parameters differ, or a name in ``rewrites=`` names no rule."""


class LocatedError(AstjitError):
    """An error at a line of the user's code: its message is ``File "...", line N: reason``, then the
    source line with a caret under the expression; ``reason``, ``filename`` and ``lineno`` are also
    attributes."""

    def __init__(self, reason: str, filename: str | None = None, lineno: int | None = None,
                 col: int | None = None, end_col: int | None = None):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        super().__init__(render_location(reason, filename, lineno, col, end_col))


class StrictModeError(LocatedError):
    """Raised by ``jit(strict=True)`` where the default would silently fall back to Python."""


class StrictSourceUnavailableError(StrictModeError, SourceUnavailableError):
    """``jit(strict=True)`` of a function whose source astjit cannot use (exec'd code, a file edited
    after import): a StrictModeError naming the function's file and line, and a SourceUnavailableError."""


class FrameIntrospection(AstjitError):
    """The function reads its own frame (``locals()``, ``eval``): all of it runs as Python. ``lineno``,
    ``col`` and ``end_col`` place the call in the function's file."""

    def __init__(self, reason: str, lineno: int, col: int | None = None, end_col: int | None = None):
        super().__init__(reason)
        self.lineno, self.col, self.end_col = lineno, col, end_col


def strict_error(exc: AstjitError, fn) -> LocatedError:
    """What ``jit(strict=True)`` raises for ``exc``, a reason to run all of ``fn`` as Python: a
    StrictModeError at the reason's line where ``exc`` has one (a caret under it), else at ``fn``'s
    ``def``; ``exc`` itself where it already names its place."""
    if isinstance(exc, LocatedError):
        return exc
    code = getattr(fn, "__code__", None)
    filename, first = (code.co_filename, code.co_firstlineno) if code is not None else (None, None)
    cls = StrictSourceUnavailableError if isinstance(exc, SourceUnavailableError) else StrictModeError
    return cls(f"{exc} (strict=True forbids running it as Python)", filename, getattr(exc, "lineno", None) or first,
               getattr(exc, "col", None), getattr(exc, "end_col", None))


class DeviceError(LocatedError, ValueError):
    """A call passes arrays on different devices (a CuPy array and a numpy array, two GPUs), or arrays
    on another device than ``@jit(device=...)`` names."""


def render_location(message: str, filename, lineno, col=None, end_col=None) -> str:
    """``file:line: message`` followed by the source line and a caret under the column."""
    if not filename or not lineno:
        return message
    text = f'File "{filename}", line {lineno}: {message}'
    line = linecache.getline(filename, lineno).rstrip("\n")
    if line:
        text += "\n    " + line
        if col is not None:
            width = max(1, (end_col - col) if end_col and end_col > col else 1)
            text += "\n    " + " " * col + "^" * width
    return text


class RecompileLimitWarning(UserWarning):
    """A block reached ASTJIT_RECOMPILE_LIMIT specializations: new argument types run as Python."""


class CacheDirectoryWarning(UserWarning):
    """The kernel cache's folder is not safe to load code from, or cannot be made: the cache is off."""


class ConfigurationWarning(UserWarning):
    """An ``ASTJIT_*`` environment variable holds a value astjit does not read: its default applies."""


class GradError(LocatedError, TypeError):
    """``astjit.grad`` cannot differentiate a statement of the user's function: an op without an adjoint
    rule, an in-place update of an array the gradient flows through, a ``return`` inside a loop."""
