"""Shrink a program that shows a mismatch to the few statements that still show it.

The campaign does not let Hypothesis shrink (every attempt recompiles kernels); this reducer deletes one
statement at a time (or unwraps an ``if``/loop, or drops a returned item, or an earlier call) and keeps
the deletion while the same kind and category of finding remains: the starting point of a hand-written
regression test.
"""

import ast
import copy
from dataclasses import replace

from .compare import run_program
from .model import PRELUDE, Program


def with_function(program: Program, function: str, calls=None) -> Program:
    return replace(program, source=PRELUDE + "\n" + function, function=function,
                   calls=program.calls if calls is None else calls, branch_fragile=False,
                   unreliable=frozenset(), returned=[])


def signature(finding) -> tuple:
    return finding.kind, finding.category


def shows(program: Program, wanted: tuple) -> bool:
    return any(signature(f) == wanted for f in run_program(program).findings)


def statement_lists(tree):
    """Every list of statements in the function (bodies of the def, ifs and loops)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module):
            continue
        for name in ("body", "orelse"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield node, name


def candidates(function: str):
    """Smaller versions of ``function``, one edit each."""
    tree = ast.parse(function)
    for index, (owner, name) in enumerate(statement_lists(tree)):
        for position, stmt in enumerate(getattr(owner, name)):
            replacements = [[]]
            if isinstance(stmt, ast.If | ast.For | ast.While):
                replacements += [stmt.body] + ([stmt.orelse] if stmt.orelse else [])
            if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Tuple):
                for k in range(len(stmt.value.elts)):
                    smaller = copy.deepcopy(stmt)
                    del smaller.value.elts[k]
                    replacements.append([smaller])
            for new in replacements:
                edited = copy.deepcopy(tree)
                owner_copy, _ = list(statement_lists(edited))[index]
                block = getattr(owner_copy, name)
                block[position:position + 1] = copy.deepcopy(new)
                if not block:
                    block.append(ast.Pass())
                text = ast.unparse(edited) + "\n"
                try:
                    compile(text, "<candidate>", "exec")
                except SyntaxError:                 # a 'break' taken out of its loop
                    continue
                yield text


def reduce_program(program: Program, finding) -> Program:
    wanted = signature(finding)
    current = with_function(program, program.function, program.calls[:finding.call + 1])
    if not shows(current, wanted):
        return current
    for k in reversed(range(len(current.calls) - 1)):        # earlier calls the finding does not need
        fewer = current.calls[:k] + current.calls[k + 1:]
        if shows(with_function(current, current.function, fewer), wanted):
            current = with_function(current, current.function, fewer)
    progress = True
    while progress:
        progress = False
        for function in candidates(current.function):
            smaller = with_function(current, function, current.calls)
            if shows(smaller, wanted):
                current, progress = smaller, True
                break
    return current
