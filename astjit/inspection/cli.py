"""``astjit show file.py:func`` and ``astjit explain file.py:func`` (also ``python -m astjit``).

Errors a user can cause (no such file or function, a target that cannot be jitted, a bad --shapes
string) print one line and exit with status 2; everything else is a bug and keeps its traceback.
"""

import argparse
import importlib.util
import os
import sys

from ..errors import AstjitError


class CliError(Exception):
    """One line for the user; exit status 2."""


def load_target(target: str):
    """Import ``file.py`` and return the jitted function named by ``:name`` (``Class.method`` works)."""
    from ..api import JitFunction, jit

    path, sep, qualname = target.rpartition(":")
    if not sep or not path or not qualname:
        raise CliError(f"expected FILE.py:FUNCTION, got {target!r}")
    if not os.path.isfile(path):
        raise CliError(f"no such file: {path}")
    module_name = "_astjit_cli_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CliError(f"importing {path} failed: {type(exc).__name__}: {exc}") from None
    obj = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise CliError(f"{path} has no function {qualname!r}")
        obj = getattr(obj, part)
    if isinstance(obj, JitFunction):
        return obj
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    if not callable(obj) or not hasattr(obj, "__code__"):
        raise CliError(f"{qualname} in {path} is a {type(obj).__name__}, not a function")
    try:
        return jit(obj)
    except AstjitError as exc:
        raise CliError(str(exc)) from None


def _color(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _specialize(jf, shapes):
    from .shapes import parse_shapes, specialize_statically

    if jf._ensure() is None:
        reasons = "; ".join(r.message for r in jf.records())
        raise CliError(f"{jf.original.__qualname__} cannot be jitted: {reasons}")
    if shapes:
        try:
            return specialize_statically(jf, parse_shapes(shapes))
        except AstjitError as exc:
            raise CliError(str(exc)) from None
    return []


def cmd_show(args) -> int:
    from .text import render_function

    jf = load_target(args.target)
    notes = _specialize(jf, args.shapes)
    if args.code and not args.shapes:
        raise CliError("--code needs --shapes: kernels exist only once the fragments are specialized")
    print(render_function(jf, fragments=args.fragments or bool(args.code), code=args.code,
                          color=_color(args.color)))
    for note in notes:
        print(f"# note: {note}")
    return 0


def cmd_explain(args) -> int:
    jf = load_target(args.target)
    _specialize(jf, args.shapes)
    print(jf.explain())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="astjit", description="See what astjit does with a function.")
    sub = parser.add_subparsers(dest="command", required=True)
    shapes_help = ("argument types to specialize for, without running the function: "
                   "'a=float32[1000],b=float64[3,4],n=int'")
    show = sub.add_parser("show", help="print the transformed source, fragments and generated code")
    show.add_argument("target", metavar="FILE.py:FUNCTION")
    show.add_argument("--fragments", action="store_true", help="list each fragment's graph and backends")
    show.add_argument("--shapes", help=shapes_help)
    show.add_argument("--code", choices=("tir", "llvm", "cuda"), help="print the generated kernel code")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    show.set_defaults(func=cmd_show)
    explain = sub.add_parser("explain", help="list what runs as Python and why, and recompiles")
    explain.add_argument("target", metavar="FILE.py:FUNCTION")
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
