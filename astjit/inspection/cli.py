"""``astjit show file.py:func`` and ``astjit explain file.py:func`` (also ``python -m astjit``).

Errors a user can cause (no such file or function, a target that cannot be jitted, a bad --shapes
string) print one line and exit with status 2; everything else is a bug and keeps its traceback.
"""

import argparse
import importlib.util
import inspect
import os
import re
import sys

from ..errors import AstjitError


class CliError(Exception):
    """One line for the user; exit status 2."""


def load_target(target: str):
    """Import ``file.py`` and return the jitted function named by ``:name`` (``Class.method`` works)."""
    return _load(target)[0]


def _load(target: str):
    """(the jitted function, its receiver): the receiver is ``(parameter, value)`` for a method looked up
    on its class, whose first parameter Python fills (``self``: value None; ``cls``: the class)."""
    from ..api import JitFunction, jit

    path, sep, qualname = target.rpartition(":")
    if not sep or not path or not qualname:
        raise CliError(f"expected FILE.py:FUNCTION, got {target!r}")
    if not os.path.isfile(path):
        raise CliError(f"no such file: {path}")
    module_name = "_astjit_cli_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:            # a script that exits at import time, outside a __main__ guard
        raise CliError(f"importing {path} failed: it called sys.exit({exc.code!r})") from None
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]       # one line: the rest is in the file
        raise CliError(f"importing {path} failed: {type(exc).__name__}: {first}") from None
    owner, obj = None, module
    for part in qualname.split("."):
        try:    # as stored: a classmethod, not the method bound to its class
            owner, obj = obj, inspect.getattr_static(obj, part)
        except AttributeError:
            raise CliError(f"{path} has no function {qualname!r}") from None
    from ..grad import GradFunction

    if isinstance(obj, GradFunction):                 # astjit.grad(f): its generated function, jitted
        try:
            return obj.build(), None                     # GradError at the user's line
        except AstjitError as exc:
            raise CliError(str(exc)) from None
    method = isinstance(owner, type) and not isinstance(obj, staticmethod)
    receiver = owner if isinstance(obj, classmethod) else None
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    backend = None
    if isinstance(obj, JitFunction):
        if not obj.strict:
            return obj, _receiver(obj.original, method, receiver)
        # strict mode raises at the first fallback; the command line lists every one instead
        backend, obj = obj.backend, obj.original
    if not callable(obj) or not hasattr(obj, "__code__"):
        kind = type(obj).__name__
        article = "an" if kind[0] in "aeiou" else "a"
        raise CliError(f"{qualname} in {path} is {article} {kind}, not a function")
    try:
        return jit(obj, backend=backend), _receiver(obj, method, receiver)
    except AstjitError as exc:
        raise CliError(str(exc)) from None


def _receiver(fn, method, value):
    code = fn.__code__
    return (code.co_varnames[0], value) if method and code.co_argcount else None


def _color(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _can_color() -> bool:
    """Colour needs pygments, which is not a dependency of astjit: without it, print plain text."""
    return importlib.util.find_spec("pygments") is not None


def _specialize(jf, shapes, receiver=None):
    from .shapes import parse_shapes, specialize_statically

    if jf._ensure() is None:
        reasons = "; ".join(r.message for r in jf.records())
        raise CliError(f"{jf.original.__qualname__} cannot be jitted: {reasons}")
    if shapes:
        try:
            values = parse_shapes(shapes)
        except AstjitError as exc:
            raise CliError(str(exc)) from None
        params = list(inspect.signature(jf.original).parameters)
        unknown = [name for name in values if name not in params]
        if unknown:
            raise CliError(f"--shapes names {', '.join(map(repr, unknown))}, not an argument of "
                           f"{jf.original.__qualname__}({', '.join(params)})")
        try:
            return specialize_statically(jf, values, receiver)
        except AstjitError as exc:
            raise CliError(str(exc)) from None
    return []


def cmd_show(args) -> int:
    from .text import render_function

    if args.code and not args.shapes:
        raise CliError("--code needs --shapes: kernels exist only once the fragments are specialized")
    from ..grad import GradFunction

    jf, receiver = _load(args.target)
    if isinstance(jf, GradFunction):
        print(f"# {jf.__doc__} The generated function:\n{jf.source}")
        jf = jf.jitted
    notes = _specialize(jf, args.shapes, receiver)
    print(render_function(jf, fragments=args.fragments or bool(args.code), code=args.code,
                          color=_color(args.color) and _can_color()))
    for note in notes:
        print(f"# note: {note}")
    return 0


def cmd_explain(args) -> int:
    from ..grad import GradFunction

    jf, receiver = _load(args.target)
    if isinstance(jf, GradFunction):
        jf = jf.jitted
    _specialize(jf, args.shapes, receiver)
    print(jf.explain())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="astjit", description="See what astjit does with a function.")
    sub = parser.add_subparsers(dest="command", required=True)
    target_help = "a Python file and a function in it: examples/quickstart.py:step (Class.method works)"
    shapes_help = ("argument types to specialize for, without running the function: "
                   "'a=float32[1000],b=float64[3,4],n=int'")
    show = sub.add_parser("show", help="print the transformed source, fragments and generated code")
    show.add_argument("target", metavar="FILE.py:FUNCTION", help=target_help)
    show.add_argument("--fragments", action="store_true", help="list each fragment's graph and backends")
    show.add_argument("--shapes", help=shapes_help)
    show.add_argument("--code", choices=("tir", "llvm", "cuda"), help="print the generated kernel code")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="colour the source; auto (the default): if stdout is a terminal, NO_COLOR unset")
    show.set_defaults(func=cmd_show)
    explain = sub.add_parser("explain", help="list what runs as Python and why, and recompiles")
    explain.add_argument("target", metavar="FILE.py:FUNCTION", help=target_help)
    explain.add_argument("--shapes", help=shapes_help)
    explain.set_defaults(func=cmd_explain)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CliError as exc:
        print(f"astjit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:             # `astjit show ... | head`: the reader left early; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
