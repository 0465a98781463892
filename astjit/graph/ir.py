"""The graph IR: one Node per numpy-level operation of a straight-line block.

A Graph is built once per block from the AST (frontend/lower) with no types; types come per
specialization (graph/infer). Nodes appear in statement order, which is also a valid execution order:
effects (in-place updates) stay where the user wrote them.
"""

from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Node:
    id: int
    op: str
    args: list = field(default_factory=list)      # positional operands: Nodes
    kwargs: dict = field(default_factory=dict)    # keyword operands: name -> Node
    value: Any = None                             # for "const": the Python value; for "input": the name
    lineno: int | None = None
    col: int | None = None

    @property
    def operands(self) -> list:
        return list(self.args) + list(self.kwargs.values())

    def __repr__(self) -> str:
        return f"%{self.id}"


class Graph:
    def __init__(self, name: str):
        self.name = name
        self.nodes: list[Node] = []
        self.inputs: list[Node] = []
        self.outputs: list[tuple[str, Node]] = []

    def add(self, op: str, args=(), kwargs=None, value=None, lineno=None, col=None) -> Node:
        node = Node(len(self.nodes), op, list(args), dict(kwargs or {}), value, lineno, col)
        self.nodes.append(node)
        return node

    def input(self, name: str) -> Node:
        node = self.add("input", value=name)
        self.inputs.append(node)
        return node

    def const(self, value, lineno=None) -> Node:
        return self.add("const", value=value, lineno=lineno)

    def users(self) -> dict:
        result = {n: [] for n in self.nodes}
        for n in self.nodes:
            for o in n.operands:
                result[o].append(n)
        return result

    def listing(self, types: dict | None = None) -> str:
        """One line per node: ``%3 = add(%1, %2)  : float32[1000]   # line 12``."""
        lines = [f"fragment {self.name}({', '.join(n.value for n in self.inputs)})"]
        for n in self.nodes:
            if n.op == "input":
                rhs = f"input {n.value!r}"
            elif n.op == "const":
                text = repr(n.value)
                rhs = f"const {text if len(text) < 50 else text[:47] + '...'}"
            else:
                parts = [repr(a) for a in n.args] + [f"{k}={v!r}" for k, v in n.kwargs.items()]
                rhs = f"{n.op}({', '.join(parts)})"
            line = f"  %{n.id} = {rhs}"
            if types is not None and n in types:
                line += f"  : {types[n]}"
            if n.lineno:
                line += f"   # line {n.lineno}"
            lines.append(line)
        outs = ", ".join(f"{name}=%{node.id}" for name, node in self.outputs)
        lines.append(f"  return {outs}")
        return "\n".join(lines)
