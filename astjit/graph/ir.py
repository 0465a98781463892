"""The graph IR: one Node per numpy-level operation of a straight-line block.

A Graph is built once per block from the AST (frontend/lower) with no types; types come per
specialization (graph/infer). Nodes appear in statement order, which is also a valid execution order:
effects (in-place updates) stay where the user wrote them.

Passes (graph/passes) work on a ``clone`` per specialization, so the block's own graph, which every
later specialization starts from, never changes. They mutate it only through ``insert_before``,
``move_before``, ``replace_all_uses`` and ``remove_dead``, which keep that order; ``verify`` checks it after each pass.
"""

from dataclasses import dataclass, field
from typing import Any


class GraphError(Exception):
    """A pass left a graph inconsistent (a bug in the pass, not in the user's code)."""


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

    def clone(self) -> "Graph":
        """A copy with new Node objects (same ids, ops and constants), inputs and outputs in order."""
        copy = Graph(self.name)
        mapping = {}
        for n in self.nodes:
            mapping[n] = Node(n.id, n.op, [mapping[a] for a in n.args],
                              {k: mapping[v] for k, v in n.kwargs.items()}, n.value, n.lineno, n.col)
            copy.nodes.append(mapping[n])
        copy.inputs = [mapping[n] for n in self.inputs]
        copy.outputs = [(name, mapping[n]) for name, n in self.outputs]
        return copy

    def insert_before(self, anchor: Node, op: str, args=(), kwargs=None, value=None) -> Node:
        """A new node placed right before ``anchor`` (its operands must come earlier), with anchor's
        source position; ids are renumbered in order."""
        node = Node(-1, op, list(args), dict(kwargs or {}), value, anchor.lineno, anchor.col)
        self.nodes.insert(self.nodes.index(anchor), node)
        self._renumber()
        return node

    def move_before(self, node: Node, anchor: Node) -> None:
        """Place ``node``, which reads nothing (an input, a constant), right before ``anchor``; ids are
        renumbered in order."""
        assert not node.operands, "only a node without operands can move"
        self.nodes.remove(node)
        self.nodes.insert(self.nodes.index(anchor), node)
        self._renumber()

    def replace_all_uses(self, old: Node, new: Node) -> None:
        """Every operand and output that reads ``old`` reads ``new`` instead (``old`` stays, unused)."""
        for n in self.nodes:
            n.args = [new if a is old else a for a in n.args]
            n.kwargs = {k: new if v is old else v for k, v in n.kwargs.items()}
        self.outputs = [(name, new if n is old else n) for name, n in self.outputs]

    def remove_dead(self, candidates, keep=lambda node: False) -> list:
        """Remove those of ``candidates`` that nothing reads, nor reads once the others are gone (and
        that ``keep`` does not keep); inputs and outputs always stay. Returns the removed nodes. Only
        candidates are considered: a temporary the user's code computes and never reads is still
        computed, since computing it may raise."""
        outputs = {n for _, n in self.outputs}
        removed = []
        changed = True
        while changed:
            changed = False
            for node in [c for c in candidates if c in self.nodes]:
                if node.op == "input" or node in outputs or keep(node):
                    continue
                if any(node in u.operands for u in self.nodes):
                    continue
                self.nodes.remove(node)
                removed.append(node)
                changed = True
        if removed:
            self._renumber()
        return removed

    def _renumber(self) -> None:
        for k, n in enumerate(self.nodes):
            n.id = k

    def verify(self) -> None:
        """Raise GraphError unless ids follow the order, every operand is an earlier node of this graph
        and inputs and outputs are nodes of it."""
        position = {}
        for k, n in enumerate(self.nodes):
            if n.id != k:
                raise GraphError(f"{self.name}: node at position {k} has id {n.id}")
            for o in n.operands:
                if o not in position:
                    raise GraphError(f"{self.name}: %{k} {n.op} reads a node that is not before it")
            if n in position:
                raise GraphError(f"{self.name}: %{k} appears twice")
            position[n] = k
        for n in self.inputs:
            if n not in position or n.op != "input":
                raise GraphError(f"{self.name}: input {n!r} is not an input node of the graph")
        for name, n in self.outputs:
            if n not in position:
                raise GraphError(f"{self.name}: output {name} reads a node not in the graph")

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
