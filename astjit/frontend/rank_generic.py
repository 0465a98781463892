"""A straight-line block as a one-trip loop region: one kernel for arrays of any length.

A straight-line Fragment is specialized per shape; arrays of ever new lengths met the block's Python
after two compiled lengths (runtime/new_extents), since each further compile costs 50-300 ms. A
loop region's kernel takes extents and strides as parameters (backends/tvm/loops), so the same
statements inside ``for _ in range(1)`` compile once per dtypes and ranks. Where a block's Fragment
meets a new length it would otherwise run as Python, it runs this twin instead (runtime/fragment):
``(d * d).mean()`` over 60 random lengths between 1,000 and 200,000 took 0.6-0.7x numpy's time
against numpy's own time before. The twin is built at that first need, from the block's statements,
where the loop region's syntax admits them; its kernel runs the statements as the loop kernel does
(numpy's pairwise sums included), and it declines, to the block's Python, wherever the kernel would.
A block reading windows (frontend/window_views) gets one too: its kernel reads ``a[lo:lo + w]`` at
any bounds, where windows of ever new lengths would meet the block's Python.
"""

import copy

import gast

from ..graph.ops import OPS, updates_in_place
from .loop_iteration import RANGE_CALL, builtin_name
from .loops import LoopChecker, NotALoopRegion

ONCE = "__astjit_once"


def one_trip_loop(stmts, calls: dict):
    """``for __astjit_once in range(1): <stmts>`` (the range registered in ``calls`` as the kernel's)."""
    count = gast.Constant(value=1, kind=None)
    call = gast.Call(func=gast.Name(id=builtin_name(RANGE_CALL), ctx=gast.Load(), annotation=None,
                                    type_comment=None), args=[count], keywords=[])
    calls[call] = "range"
    loop = gast.For(target=gast.Name(id=ONCE, ctx=gast.Store(), annotation=None, type_comment=None), iter=call,
                    body=[copy.deepcopy(s) for s in stmts], orelse=[], type_comment=None)
    for node in gast.walk(loop):
        if getattr(node, "lineno", None) is None:
            gast.copy_location(node, stmts[0])
    return loop


FRESH_KINDS = ("elementwise", "reduction")


def fresh_outputs(graph) -> bool:
    """Whether each value the block publishes is a new array or number of its own, made by an
    elementwise op or a reduction (or a tuple of such): the twin's kernel gives each live-out a buffer
    of its own, where ``d = c`` publishes one array under two names, and ``y = x[1:]`` a view."""
    values = []
    for _, node in graph.outputs:
        values += node.args if node.op == "tuple" else [node]
    return len({id(v) for v in values}) == len(values) and all(
        v.op in OPS and OPS[v.op].kind in FRESH_KINDS for v in values)


def may_have_twin(graph, live_in, views, hoisted, maybe_unbound) -> bool:
    """Whether a block (its graph, outputs set, and what frontend/blocks knows of its live-ins) may get
    a twin: no attribute reads the caller makes, no live-in maybe unbound, no array updated in place,
    fresh outputs (``fresh_outputs``), and the windows a caller may take as its last live-ins (the twin
    leaves them out)."""
    return not (hoisted or maybe_unbound or updates_in_place(graph)) and fresh_outputs(graph) \
        and list(views) == live_in[len(live_in) - len(views):]


def rank_generic_twin(block, resolver, value_names, local_functions):
    """The Block of kind "loop" running ``block``'s statements once, with the block's live-ins (but the
    windows a caller may take, the last ones: frontend/window_views) and live-outs; None where the
    loop region's syntax refuses them."""
    from .blocks import Block

    checker = LoopChecker(resolver, value_names, local_functions)
    loop = one_trip_loop(block.stmts, checker.calls)
    try:
        checker.check(loop)
    except NotALoopRegion:
        return None
    if checker.hoisted or checker.closure_names or checker.free_names or checker.return_arity is not False:
        return None
    live_in = [n for n in block.live_in if n not in block.views]
    return Block(block.index, [loop], None, live_in, list(block.live_out), kind="loop",
                 loop_calls=checker.calls, kernel_loop=loop, written_loop=copy.deepcopy(loop),
                 in_loop=block.in_loop, in_region=block.in_region, free_names=block.free_names)
