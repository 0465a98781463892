"""Windows whose bounds change between calls: the caller takes the view, the kernel gets the window.

A block reading ``a[lo:lo + w]`` with ``lo`` and ``w`` from outside the block specializes on their
values (a slice's bounds decide the result's shape, and the kernel reads ``a`` at a constant offset).
That costs nothing while they stay put, but a window moved at each call (a signal scanned in steps,
an offset from the caller) met a new specialization, or the block's Python, at every call: 0.8x
plain numpy for a 1,000-element window. Such a block gets a second graph here, in which each such
read is an input of its own: once the Fragment meets new values of those bounds
(runtime/fragment), the rewritten function takes the views itself right before the call (numpy's
basic slicing, about 0.2 us each) and passes them in, so a specialization depends on the windows'
lengths, not on where they lie. Until then it passes NOT_TAKEN for each, and the block's own graph
runs (taking them at every call cost a stencil with four windows of fixed bounds 3 us a call).

Only reads whose base and bounds are the block's live-ins (values from before the block) qualify, in
blocks that update no array in place (the kernel does not know that a window and the other arrays
it reads share memory), and whose names none of the block's statements before assigns (as written,
the read is of the values from before the block). The caller takes the views only where the base is
an ndarray, each name the index reads as it is an int, a numpy int or None, each it computes with a
Python int, and nothing raises (frontend/emit._view_reads); otherwise it passes NOT_TAKEN, and the
block's own graph takes the call as before.
"""

import ast
from dataclasses import dataclass

import gast
import numpy as np

from ..graph.ops import updates_in_place

VIEW_PREFIX = "__astjit_view_"
# index arithmetic the caller may compute ahead of the block: on ints it cannot have effects
INDEX_ARITHMETIC = frozenset({"add", "subtract", "multiply", "floor_divide", "negative"})
# what a name in a window's index may hold for the caller to take the view (bool is an int to a slice)
INDEX_TYPES = frozenset({int, bool, type(None)} | {np.dtype(c).type for c in np.typecodes["AllInteger"]})
PYTHON_INTS = frozenset({int})     # what a name the index computes with may hold


@dataclass(frozen=True)
class WindowView:
    """A subscript read the caller takes for the block: ``expr`` as written, ``base`` the array's name,
    ``index_names`` the names its index reads as they are (each must hold an int, a numpy int or None),
    ``computed_names`` those it computes with (``lo + w``: each must hold a Python int, whose
    arithmetic neither wraps nor warns, so that the block's Python, taking the window again where it
    runs, warns as plain Python does)."""
    expr: object
    base: str
    index_names: tuple
    computed_names: tuple = ()


def view_name(block_index: int, k: int, base: str) -> str:
    return f"{VIEW_PREFIX}{block_index}_{k}_{base}"


def spelled_view(name: str) -> str:
    """``a[...]`` for the input name of a window of ``a`` (runtime/keys, inspection)."""
    return name.removeprefix(VIEW_PREFIX).split("_", 2)[2] + "[...]"


def hoist_windows(graph, subscripts: dict, value_names: set, block_index: int) -> tuple[dict, object]:
    """({input name: WindowView}, the block's graph with each qualifying window read an input of its
    own), or ({}, None). ``graph`` (outputs set) gets those inputs too, unread: a call passes them
    either way (NOT_TAKEN where the caller did not take the windows)."""
    if updates_in_place(graph):
        return {}, None
    found = []
    for node in [n for n in graph.nodes if n.op == "getitem" and n in subscripts]:
        base, index = node.args
        if base.op != "input" or base.value not in value_names:
            continue
        names = _index_names(index, value_names)
        if names:
            bare, computed = names
            name = view_name(block_index, len(found), base.value)
            found.append((node.id, name, WindowView(subscripts[node], base.value, tuple(dict.fromkeys(bare)),
                                                    tuple(dict.fromkeys(computed)))))
    if not found:
        return {}, None
    for _, name, _ in found:
        graph.input(name)
    windowed = graph.clone()
    inputs = {n.value: n for n in windowed.inputs}
    reads = [(windowed.nodes[k], inputs[name]) for k, name, _ in found]
    for read, view in reads:
        windowed.move_before(view, read)      # (where the read was: operands come before their users)
        windowed.replace_all_uses(read, view)
        windowed.remove_dead([read] + _index_nodes(read.args[1]))
    windowed.verify()
    return {name: view for _, name, view in found}, windowed


def window_taker(live_in: list, views: dict):
    """A function of the block's live-ins giving the tuple of its windows, as the caller takes them
    (the Fragment looks at their shapes before it asks the caller for them)."""
    reads = ", ".join(ast.unparse(gast.gast_to_ast(view.expr)) for view in views.values())
    namespace = {"__builtins__": {}}
    exec(compile(f"def take({', '.join(live_in)}):\n    return ({reads},)\n", "<astjit windows>", "exec"),
         namespace)
    return namespace["take"]


def _index_names(index, value_names) -> tuple | None:
    """(the live-in names an index reads as they are, those it computes with), where it is made of
    slices (one at least, with a bound known only at run time), constants and int arithmetic on
    live-ins; else None."""
    bare, computed, windowed = [], [], False

    def walk(n, in_slice, in_arithmetic=False):
        nonlocal windowed
        if n.op == "const":
            return n.value is None or n.value is Ellipsis or type(n.value) is int
        if n.op == "input":
            if n.value not in value_names:
                return False
            (computed if in_arithmetic else bare).append(n.value)
            windowed |= in_slice
            return True
        if n.op == "slice":
            return all(walk(p, True) for p in n.args)
        if n.op == "tuple":
            return all(walk(p, in_slice) for p in n.args)
        if n.op in INDEX_ARITHMETIC and not n.kwargs:
            return all(walk(p, in_slice, True) for p in n.args)
        return False

    if not walk(index, False) or not windowed:
        return None
    return [n for n in bare if n not in computed], computed


def _index_nodes(index) -> list:
    """The nodes an index is computed by (candidates for removal once the window is an input)."""
    found, stack = [], [index]
    while stack:
        n = stack.pop()
        if n.op not in ("input", "const") and n not in found:
            found.append(n)
            stack.extend(n.operands)
    return found
