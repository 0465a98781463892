"""Room on Python's recursion limit for deeply nested source while astjit parses and transforms it.

Python compiles an expression nested about three levels per unit of the recursion limit (a sum of
2000 terms under the default limit of 1000); gast's conversion and the frontend's passes recurse into
every level with several Python frames each, so a sum of 250 terms ran out of the default limit and its
function ran as Python. ``room_for_nesting`` raises the limit by what the source's depth needs, only for
source deep enough to need it, and puts it back when the last thread inside leaves.
"""

import ast
import contextlib
import sys
import threading

# Python frames the frontend's recursive passes take per level of nesting (gast's conversion: 3)
FRAMES_PER_LEVEL = 4

_lock = threading.Lock()
_inside = 0             # threads inside room_for_nesting
_restore_to = None      # the limit before the first of them entered
_raised_to = None       # the limit they set


def nesting_depth(tree) -> int:
    """The deepest chain of nested nodes in ``tree`` (an ast or gast tree), counted without recursion."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


@contextlib.contextmanager
def room_for_nesting(depth: int):
    """The recursion limit raised by ``FRAMES_PER_LEVEL`` frames per level of ``depth`` while inside,
    where that is more than a quarter of the limit (ordinary code leaves it as it is). Threads share
    the limit: it only grows while any is inside, and goes back when the last leaves, unless the
    program changed it meanwhile."""
    global _inside, _restore_to, _raised_to
    needed = FRAMES_PER_LEVEL * depth
    with _lock:
        limit = sys.getrecursionlimit()
        if _inside == 0:
            _restore_to = _raised_to = limit
        if needed > _restore_to // 4 and _restore_to + needed > limit:
            _raised_to = _restore_to + needed
            sys.setrecursionlimit(_raised_to)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and sys.getrecursionlimit() == _raised_to:
                sys.setrecursionlimit(_restore_to)
