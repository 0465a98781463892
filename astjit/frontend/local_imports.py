"""Modules a function imports in its own body (``import numpy as np`` as its first statement).

Such a name is a local of the function, which lowering would take for an object whose methods it
does not know (``np.exp`` read as the method ``.exp()`` of a local value): every array statement of
the function ran as Python. An import statement binds what ``sys.modules`` holds, so where the name is
bound by such imports alone, at the top level of the body and before any statement reads it, it
resolves as the module itself, as a global would. Only numpy, math and cmath (and numpy's
submodules) are taken: their functions are assumed never to be rebound, so nothing needs a guard.
"""

import sys

import gast

STABLE_MODULES = ("numpy", "math", "cmath")


def _stable(module_name: str) -> bool:
    return module_name in STABLE_MODULES or module_name.startswith("numpy.")


def local_modules(fndef) -> dict:
    """{local name: module} for the names ``fndef`` binds only by importing a stable module at its
    top level, read only after that import."""
    imported: dict = {}                 # name -> (module, line of its first import)
    top_imports = set()
    for stmt in fndef.body:
        if not isinstance(stmt, gast.Import):
            continue
        top_imports.add(id(stmt))
        for alias in stmt.names:
            name = alias.asname or alias.name.split(".")[0]
            module_name = alias.name if alias.asname else name
            module = sys.modules.get(module_name)
            previous = imported.get(name)
            if not _stable(module_name) or module is None or previous is not None and previous[0] is not module:
                imported[name] = (None, 0)
            elif previous is None:
                imported[name] = (module, stmt.lineno)
    if not imported:
        return {}
    rejected = {name for name, (module, _) in imported.items() if module is None}
    for node in gast.walk(fndef):
        if isinstance(node, gast.Name) and node.id in imported:
            if isinstance(node.ctx, gast.Store | gast.Del) or getattr(node, "lineno", 0) <= imported[node.id][1]:
                rejected.add(node.id)      # bound otherwise, or read before (or on the line of) the import
        elif isinstance(node, gast.Import | gast.ImportFrom) and id(node) not in top_imports:
            rejected.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, gast.Global | gast.Nonlocal):
            rejected.update(node.names)
        elif isinstance(node, gast.MatchAs | gast.MatchStar) and node.name:
            rejected.add(node.name)          # (``case np:`` binds it)
        elif isinstance(node, gast.MatchMapping) and node.rest:
            rejected.add(node.rest)
        elif isinstance(node, gast.FunctionDef | gast.AsyncFunctionDef | gast.ClassDef) and node is not fndef:
            rejected.add(node.name)
    return {name: module for name, (module, _) in imported.items() if name not in rejected}
