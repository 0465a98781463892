"""Private names (``self.__k`` in a method of ``K``) written as Python compiles them (``self._K__k``).

Python renames an identifier ``__name`` used inside a class to ``_Class__name``. astjit compiles the
rewritten function outside any class (frontend/emit), and its analyses read attributes and globals by
name: the parsed def is renamed once, as the class would have it, so that everything after sees the
names the running code uses, and compiling it anywhere gives the original's bytecode.
"""

import gast

from ..errors import AstjitError


def enclosing_class(qualname: str) -> str | None:
    """The innermost class around the code qualified ``qualname``: the last part followed by another
    name, not by ``<locals>`` (``K.m.<locals>.g`` -> ``K``; ``f.<locals>.g`` -> None)."""
    parts = qualname.split(".")
    classes = [p for p, after in zip(parts, parts[1:]) if p != "<locals>" and after != "<locals>"]
    return classes[-1] if classes else None


def mangled(name: str, cls: str | None) -> str:
    """``name`` as Python compiles it inside class ``cls``: ``__k`` -> ``_K__k``; names ending in two
    underscores, and every name in a class of underscores only, stay as they are."""
    stripped = (cls or "").lstrip("_")
    if not stripped or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    return f"_{stripped}{name}"


def mangle_private_names(fndef, qualname: str) -> None:
    """Rename, in place, the private names of ``fndef``, the def (or lambda) compiled as ``qualname``.

    A nested def, class or import binding a private name is refused (AstjitError): Python names the
    object itself unmangled but binds it mangled, which no renamed source can say."""
    cls = enclosing_class(qualname)
    if cls is not None and cls.lstrip("_"):
        _Mangler(cls).visit_body(fndef)


class _Mangler(gast.NodeVisitor):
    def __init__(self, cls):
        self.cls = cls

    def visit_body(self, fndef):
        for field in ("args", "body"):
            value = getattr(fndef, field)
            for node in value if isinstance(value, list) else [value]:
                self.visit(node)

    def _refuse(self, node, name, what):
        raise AstjitError(f"it {what} {name} (line {node.lineno}), a private name inside class {self.cls}, "
                          "which astjit does not rename")

    def visit_Name(self, node):
        node.id = mangled(node.id, self.cls)

    def visit_Attribute(self, node):
        node.attr = mangled(node.attr, self.cls)
        self.generic_visit(node)

    def visit_Global(self, node):
        node.names = [mangled(n, self.cls) for n in node.names]

    visit_Nonlocal = visit_Global

    def visit_MatchAs(self, node):
        if node.name is not None:
            node.name = mangled(node.name, self.cls)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name is not None:
            node.name = mangled(node.name, self.cls)

    def visit_MatchMapping(self, node):
        if node.rest is not None:
            node.rest = mangled(node.rest, self.cls)
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        if mangled(node.name, self.cls) != node.name:
            self._refuse(node, node.name, "defines")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        if mangled(node.name, self.cls) != node.name:
            self._refuse(node, node.name, "defines")
        for field in ("bases", "keywords", "decorator_list"):
            for child in getattr(node, field):
                self.visit(child)
        inner = _Mangler(node.name)         # the class's own body mangles with its own name
        for stmt in node.body:
            inner.visit(stmt)

    def visit_Import(self, node):
        for alias in node.names:
            for name in (alias.name.split(".")[0], alias.asname):
                if name is not None and mangled(name, self.cls) != name:
                    self._refuse(node, name, "imports")

    visit_ImportFrom = visit_Import
