"""The statements that replace a loop region in the rewritten function: the loop as written where it
is about to do a few statements' work (``ASTJIT_TINY_LOOP`` units: frontend/loops.work_expression), the
region's Fragment call otherwise.

A kernel call costs a few microseconds; a loop of a handful of scalar statements costs less as Python.
Deciding that inside the Fragment would cost three more Python calls on every call of the function
(the dispatch, the work estimate, the loop as a function of its own), as much again as the loop, so
the rewritten function decides itself, before the loop, and runs the loop inline::

    try:                                   # a ``for`` region
        __astjit_tiny = True if <frontend/loops.work_expression> <= ASTJIT_TINY_LOOP else False
    except Exception:                      # (the loop as written raises it, or the kernel's lowering refuses)
        __astjit_tiny = False
    if __astjit_tiny:
        for i in range(1, len(x)): ...     # as written
    else:
        __astjit_fragment_0(x, y, a)

A ``while`` loop's count is not known before it runs: its first iterations run as written and the
rest in the kernel, from the state they left (the kernel evaluates the test again; a test in a loop
region has no effects)::

    __astjit_trips_0 = 0
    while abs(x * x - target) > tol:
        if __astjit_trips_0 >= 6:           # first_positions: ASTJIT_TINY_LOOP units of work
            x = __astjit_fragment_0(tol, x, target)
            break
        __astjit_trips_0 += 1
        x = x - (x * x - target) / (2.0 * x)

A ``for`` loop that may leave early (a ``break`` of its own or a ``return``, no loop inside it: a
search) is handed over: its estimate would count every position, and a kernel call costs more than
a search that stops at the first. Its first positions (``first_positions``) run as written, from an
iterator that the rest goes on from, so the loop pays no counter per position; then the kernel runs
the rest of the same range, from the position reached, unless the positions left are a few
statements' work (the kernel would cost more than finishing as written) or the kernel declines the
arguments (a list, a read-only array it writes: ``DECLINED``, before any effect)::

    try:
        __astjit_trips_0 = len(a)          # positions, and the work of each (frontend/loops.position_work)
        __astjit_tiny = False if __astjit_trips_0 * 8 > ASTJIT_TINY_LOOP else True
    except Exception:                      # (the loop as written raises it)
        __astjit_tiny = True
    if __astjit_tiny:
        for i in range(len(a)): ...        # as written
    else:
        __astjit_iter_0 = __astjit_iter(range(len(a)))
        for i in __astjit_islice(__astjit_iter_0, 12):     # first_positions
            if a[i] > v:
                k = i
                break
        else:                              # (no break: those positions done, or all of them)
            if (__astjit_trips_0 - 12) * 8 > ASTJIT_TINY_LOOP:
                __astjit_result_0 = __astjit_fragment_0(a, v, k)
            else:
                __astjit_result_0 = __astjit_declined
            if __astjit_result_0 is __astjit_declined:
                for i in __astjit_iter_0:     # the rest as written
                    ...
            else:
                k = __astjit_result_0

``show`` prints the Fragment call alone (``SHOWN``: what each generated statement prints as).
"""

import copy
import itertools

import gast

from ..config import tiny_loop_work
from .loop_iteration import builtin_name
from .loops import assigned_names, constant_value, position_work, work_expression, work_expression_of_body

TINY_NAME = "__astjit_tiny"
UNKNOWN_POSITION_WORK = 8       # a position whose work depends on values (``s = s + x``: an array?)
DECLINED_NAME = "__astjit_declined"      # cell: runtime/loop_fragment.DECLINED
ISLICE_NAME = "__astjit_islice"
GUARD_CELLS = {ISLICE_NAME: itertools.islice, builtin_name("iter"): iter}   # what the statements call
SHOWN = "astjit_shown"          # attribute of a generated statement: the statements ``show`` prints instead


def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _const(value):
    return gast.Constant(value=value, kind=None)


def _call(name, args):
    return gast.Call(func=_load(name), args=args, keywords=[])


def _assign(name, value):
    return gast.Assign(targets=[_store(name)], value=value, type_comment=None)


def trips_name(block) -> str:
    return f"__astjit_trips_{block.index}"


def iterator_name(block) -> str:
    return f"__astjit_iter_{block.index}"


def result_name(block) -> str:
    return f"__astjit_result_{block.index}"


def first_positions(loop, live_in) -> int:
    """How many positions (iterations) of a loop that may leave early run as written before the kernel
    takes over: about ASTJIT_TINY_LOOP units of work, as long as a kernel call (at least one)."""
    tiny = tiny_loop_work()
    if tiny <= 0:
        return 0                        # (kernels even for tiny loops, from the first position)
    if isinstance(loop, gast.While):
        each = constant_value(work_expression_of_body(loop, live_in))
    else:
        each = constant_value(position_work(loop, live_in)[1])
    return max(1, tiny // (each or UNKNOWN_POSITION_WORK))


def resume_position(loop, kernel_loop, live_in, maybe_unbound) -> int:
    """Where the kernel of a loop region starts: 0, or for a ``for`` loop that may leave early, the
    positions its first iterations run as Python (``first_positions``)."""
    if not isinstance(loop, gast.For) or isinstance(loop.iter, gast.Tuple) or maybe_unbound:
        return 0
    inner = [n for s in loop.body for n in gast.walk(s) if isinstance(n, gast.For | gast.While)]
    if inner or not _leaves(loop.body):
        return 0
    # Python took the range (or the arrays) once, at the start: a kernel taking them again part way
    # would see what the loop has rebound since (``n -= 1`` in ``for i in range(n)``)
    if {n.id for n in gast.walk(loop.iter) if isinstance(n, gast.Name)} & assigned_names(loop):
        return 0
    return first_positions(kernel_loop, live_in)


def _leaves(stmts) -> bool:
    """Whether a ``break`` of these statements' own loop, or a ``return``, is among them (not in a
    nested loop)."""
    for s in stmts:
        if isinstance(s, gast.Break | gast.Return):
            return True
        if isinstance(s, gast.If) and (_leaves(s.body) or _leaves(s.orelse)):
            return True
    return False


def tiny_loop_guard(block, call: list) -> tuple[list, list]:
    """(statements, the loop as written among them) for loop region ``block`` whose Fragment call is
    ``call``; the caller keeps the loop's own source positions (tracebacks, pdb)."""
    tiny = tiny_loop_work()
    loop = copy.deepcopy(block.written_loop)
    if block.resume_at:
        return _handed_over_for(block, loop, call)
    if isinstance(loop, gast.While):
        counter = trips_name(block)
        first = first_positions(block.kernel_loop, block.live_in)
        handover = gast.If(test=gast.Compare(left=_load(counter), ops=[gast.GtE()], comparators=[_const(first)]),
                           body=call + [gast.Break()], orelse=[])
        count = gast.AugAssign(target=_store(counter), op=gast.Add(), value=_const(1))
        kept = list(loop.body)
        loop.body = [handover, count] + loop.body
        start = _assign(counter, _const(0))
        setattr(start, SHOWN, [])
        setattr(loop, SHOWN, call)
        return [start, loop], [loop.test] + kept
    # the truth of the comparison is taken inside the ``try`` too: a range() of something that is
    # not an int may give a work estimate without one (an array), and the loop as written raises
    is_tiny = gast.IfExp(test=gast.Compare(left=work_expression(block.kernel_loop, block.live_in), ops=[gast.LtE()],
                                           comparators=[_const(tiny)]), body=_const(True), orelse=_const(False))
    work = gast.Try(body=[_assign(TINY_NAME, is_tiny)],
                    handlers=[gast.ExceptHandler(type=_load("Exception"), name=None,
                                                 body=[_assign(TINY_NAME, _const(False))])],
                    orelse=[], finalbody=[])
    choose = gast.If(test=_load(TINY_NAME), body=[loop], orelse=call)
    setattr(work, SHOWN, [])
    setattr(choose, SHOWN, call)
    return [work, choose], [loop]


def _handed_over_for(block, loop, call):
    """A ``for`` loop that may leave early: its first ``block.resume_at`` positions as written, then the
    kernel for the rest, unless it is a few statements' work or the kernel declines (see the module's
    docstring)."""
    first, *took = call            # the call into the result, then what reads it (emit._loop_result;
    #                                no live-in may be unbound here: resume_position)
    for s in call:
        for n in gast.walk(s):
            gast.copy_location(n, loop)      # (what ``show`` prints: these are not in the tree)
    tiny, done = tiny_loop_work(), block.resume_at
    positions, per_position = position_work(block.kernel_loop, block.live_in)
    trips, iterator, result = trips_name(block), iterator_name(block), result_name(block)

    def more_than_tiny(count):
        work = gast.BinOp(left=count, op=gast.Mult(), right=copy.deepcopy(per_position))
        return gast.Compare(left=work, ops=[gast.Gt()], comparators=[_const(tiny)])

    def loop_over(iterable):
        """The loop as written, over ``iterable``, at the loop's own positions (tracebacks, pdb)."""
        again = copy.deepcopy(block.written_loop)
        again.iter = gast.copy_location(iterable, block.written_loop.iter)
        return again

    is_tiny = gast.IfExp(test=more_than_tiny(_load(trips)), body=_const(False), orelse=_const(True))
    estimate = gast.Try(body=[_assign(trips, positions), _assign(TINY_NAME, is_tiny)],
                        handlers=[gast.ExceptHandler(type=_load("Exception"), name=None,
                                                     body=[_assign(TINY_NAME, _const(True))])],
                        orelse=[], finalbody=[])
    start = _assign(iterator, _call(builtin_name("iter"), [copy.deepcopy(loop.iter)]))
    gast.copy_location(start, loop)
    first_positions = loop_over(_call(ISLICE_NAME, [_load(iterator), _const(done)]))
    left = gast.BinOp(left=_load(trips), op=gast.Sub(), right=_const(done))
    attempt = gast.If(test=more_than_tiny(left), body=[copy.deepcopy(first)],
                      orelse=[_assign(result, _load(DECLINED_NAME))])
    rest = gast.If(test=gast.Compare(left=_load(result), ops=[gast.Is()], comparators=[_load(DECLINED_NAME)]),
                   body=[loop_over(_load(iterator))], orelse=copy.deepcopy(took) or [gast.Pass()])
    first_positions.orelse = [attempt, rest]
    choose = gast.If(test=_load(TINY_NAME), body=[loop], orelse=[start, first_positions])
    for s in (estimate, attempt, rest):
        for n in gast.walk(s):
            if not hasattr(n, "lineno") or n.lineno is None:
                gast.copy_location(n, loop)
    setattr(estimate, SHOWN, [])
    setattr(choose, SHOWN, call)
    kept = [loop, first_positions.target, first_positions.iter] + first_positions.body + [rest.body[0]]
    return [estimate, choose], kept
