"""The statements that replace a loop region in the rewritten function: the loop as written where it
is about to do less work (frontend/loops.work_expression) than its kernel's call costs (``tiny_work``:
frontend/loop_call_cost, or ``ASTJIT_TINY_LOOP`` units), the region's Fragment call otherwise.

A kernel call costs a microsecond or two; a loop of a handful of scalar statements costs less as Python.
Deciding that inside the Fragment would cost three more Python calls on every call of the function
(the dispatch, the work estimate, the loop as a function of its own), as much again as the loop, so
the rewritten function decides itself, before the loop, and runs the loop inline::

    try:                                   # a ``for`` region
        __astjit_tiny = True if <frontend/loops.work_expression> <= <tiny_work> else False
    except Exception:                      # (the loop as written raises it, or the kernel's lowering refuses)
        __astjit_tiny = True
    if __astjit_tiny:
        for i in range(1, len(x)): ...     # as written
    else:
        __astjit_fragment_0(x, y, a)

A ``while`` loop's count is not known before it runs: its first iterations run as written and the
rest in the kernel, from the state they left (the kernel evaluates the test again; a test in a loop
region has no effects)::

    for __astjit_trips_0 in (0, 1, 2, 3, 4, 5):    # first_positions: twice tiny_work's units of work
        if abs(x * x - target) > tol:
            x = x - (x * x - target) / (2.0 * x)
        else:
            break
    else:                                  # (a ``break`` of the body leaves too, without the kernel)
        x = __astjit_fragment_0(tol, x, target)

(where a trip's work depends on values, a loop inside it, their number is counted before the loop:
``__astjit_left_0 = 2 * tiny_work // <its work>``, and the ``for`` goes over ``range(__astjit_left_0)``.)

A ``for`` loop that may leave early (a ``break`` of its own or a ``return``, no loop inside it: a
search) is handed over the same way: its estimate would count every position, and a kernel call
costs more than a search that stops at the first. Before it starts, the work of its positions after
the first few (``first_positions``) is weighed: where it is at most twice a tiny loop's work (the
handover pays a counter and a kernel call), the loop runs as written, without a counter; otherwise its first positions run as written and the kernel runs the
rest of the same range, from the position reached; where it declines the arguments (a list, a
read-only array it writes: ``DECLINED``, before any effect), the loop goes on as written::

    try:                                   # the work after the first positions (frontend/loops.position_work),
        __astjit_left_0 = True if len(a) > 18 else False    # (len(a) - 6) * 10 > 2 * tiny_work
    except Exception:
        __astjit_left_0 = True
    if __astjit_left_0:
        __astjit_trips_0 = 0
        for i in range(len(a)):
            if __astjit_trips_0 == 6:      # first_positions: tiny_work's units of work
                __astjit_result_0 = __astjit_fragment_0(a, v, k)
                if __astjit_result_0 is not __astjit_declined:
                    k = __astjit_result_0
                    break
            __astjit_trips_0 += 1
            if a[i] > v:
                k = i
                break
    else:
        for i in range(len(a)):            # as written
            if a[i] > v:
                k = i
                break

``show`` prints the Fragment call alone (``SHOWN``: what each generated statement prints as).
"""

import ast
import collections
import copy
import itertools

import gast

from ..config import tiny_loop_work
from .inline import Inlined
from .loop_call_cost import (
    ELEMENT_UNIT_NS,
    MIXED_UNIT_NS,
    SEARCHED_SEQUENCE_MOST,
    SEQUENCE_ITEM_NS,
    SEQUENCE_NS,
    SHAPE_ATTRIBUTES,
    UNIT_NS,
    kernel_call_ns,
    kernel_call_units,
)
from .loops import (
    ISINSTANCE_NAME,
    LEN_NAME,
    NDARRAY_NAME,
    NOT_PLAIN_ERROR_NAME,
    NUMBERS_NAME,
    NUMPY_SCALAR_NAME,
    PLAIN_OBJECT_NAME,
    PLAIN_VALUE_NAME,
    RANGE_NAME,
    SHARED_AS,
    appended_lists,
    assigned_names,
    constant_value,
    copied_work,
    is_exactly_array,
    iteration_work,
    plain_attribute_read,
    position_work,
    row_test,
    substituted,
    without_effects,
    work_expression,
)
from .outline import mark_for_outlining
from .prepare import rejoin_tests

TINY_NAME = "__astjit_tiny"
UNKNOWN_POSITION_WORK = 8       # a position whose work depends on values (``s = s + x``: an array?)
DECLINED_NAME = "__astjit_declined"      # cell: runtime/loop_fragment.DECLINED
# a ``while``'s first trips as written: this many times ``tiny_work``. Its count is not known
# before it runs, and one that ends within its first trips (a Newton iteration: 5 or 6) pays no kernel
# call: with the ``for`` threshold's budget it called the kernel and ran 0.4x plain Python
WHILE_TRIPS = 2
# with an integer ASTJIT_TINY_LOOP, a loop that appends to lists pays this much more for its kernel
# call, per list (``auto`` prices lists in frontend/loop_call_cost): the values are
# handed to the list after the call (backends/tvm/loop_lists); measured about 0.7 us for a list of 8
# (a runner of 1.6 us around a 0.35 us kernel, where a loop without lists has about 0.9 us)
LIST_HANDOFF_WORK = 64
# a ``for`` loop that may leave early runs this many times a tiny loop's work as written before its
# kernel takes over: a search's position (a comparison of an element) costs about 45-50 ns as Python,
# a fifth of what its units say, and the handover's kernel call 1.3-2.6 us. With the tiny loop's
# budget, a search ending at its 3rd-10th position ran 2.2-4.4x slower than plain Python (3-4
# positions as written, then the kernel); with 8 times it, about 30 positions run as written, the
# worst case is the per-call overhead (0.55-0.75x from the 1st to the 20th position), and a search
# ending at position 100 is still 1.5x faster than Python (1.7x with the tiny budget). With an integer
# ASTJIT_TINY_LOOP, that value is the budget
HANDOVER_BUDGET = 8
# a search hands a list it reads over to its kernel only where the rest of its positions are worth this
# many times the list's conversion (SEQUENCE_ITEM_NS an item): a search stops where it finds
HANDOVER_CONVERSIONS = 4
MOST_LISTED_TRIPS = 64          # a ``while``'s first trips: a constant tuple up to this many, else a range
SHOWN = "astjit_shown"          # attribute of a generated statement: the statements ``show`` prints instead


def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _const(value):
    return gast.Constant(value=value, kind=None)


def _assign(name, value):
    return gast.Assign(targets=[_store(name)], value=value, type_comment=None)


def trips_name(block) -> str:
    return f"__astjit_trips_{block.index}"


def range_name(block) -> str:
    return f"__astjit_range_{block.index}"


def left_name(block) -> str:
    return f"__astjit_left_{block.index}"


def result_name(block) -> str:
    return f"__astjit_result_{block.index}"


def tiny_work(loop, live_in, live_out, loop_calls, object_attributes=()) -> int:
    """The work at or below which the loop region runs as written: the price of its kernel call in
    units (frontend/loop_call_cost), or ASTJIT_TINY_LOOP's where it is an integer, more for a loop
    whose kernel call hands values to lists (none where ASTJIT_TINY_LOOP is 0: kernels always).
    ``object_attributes``: the live-ins that are attributes of objects, read before the call.

    0 (kernels always) where the loop calls a helper of the user's whose body loops: the estimate
    counts a call as one operation, and the helper's loops read names it assigns, whose trips no
    estimate knows (a loop of 3 calls of a 60x60 matrix product ran as Python, 241 ms against the
    kernel's 0.4 ms)."""
    if any(isinstance(callee, Inlined) and _loops_in(callee.body) for callee in loop_calls.values()):
        return 0
    tiny = tiny_loop_work()
    if tiny is None:
        return kernel_call_units(loop, live_in, live_out, loop_calls, object_attributes)
    return tiny + LIST_HANDOFF_WORK * len(appended_lists(loop_calls)) if tiny > 0 else tiny


def _loops_in(stmts) -> bool:
    return any(isinstance(n, gast.For | gast.While) for s in stmts for n in gast.walk(s))


def weighed_names(block) -> list:
    """The live-in names a work estimate tests for arrays: those not known to hold a number when the
    loop starts (frontend/entry_facts.numbers_at_entry: ``s = 0.0`` right before the loop), since
    each test costs about 35 ns on every call."""
    return [n for n in block.live_in if n not in block.numbers_at_entry]


def first_positions(loop, live_in, budget) -> int:
    """How many positions (iterations) of a loop that may leave early run as written before the kernel
    takes over: about ``budget`` units of work (a tiny loop's, as long as a kernel call); none where
    one position is more than that (a sieve's trip for 2 crosses out half of its array)."""
    if budget <= 0:
        return 0                        # (kernels even for tiny loops, from the first position)
    each = constant_value(iteration_work(loop, live_in))
    return budget // (each or UNKNOWN_POSITION_WORK)


def resume_position(loop, kernel_loop, live_in, maybe_unbound, tiny) -> int:
    """Where the kernel of a loop region starts: 0, or for a ``for`` loop that may leave early, the
    positions its first iterations run as Python (``first_positions``; ``live_in``: the names its
    estimate tests for arrays, ``weighed_names``)."""
    if not isinstance(loop, gast.For) or isinstance(loop.iter, gast.Tuple) or maybe_unbound:
        return 0
    inner = [n for s in loop.body for n in gast.walk(s) if isinstance(n, gast.For | gast.While)]
    if inner or not _leaves(loop.body):
        return 0
    # Python took the range (or the arrays) once, at the start: a kernel taking them again part way
    # would see what the loop has rebound since (``n -= 1`` in ``for i in range(n)``)
    if {n.id for n in gast.walk(loop.iter) if isinstance(n, gast.Name)} & assigned_names(loop) or not _fixed(loop.iter):
        return 0
    # (an integer ASTJIT_TINY_LOOP is the budget itself)
    return first_positions(kernel_loop, live_in, tiny if tiny_loop_work() is not None else HANDOVER_BUDGET * tiny)


def _fixed(expr) -> bool:
    """Whether ``expr`` reads nothing a loop's body may change in place, besides the names it
    assigns: an element (``range(b[0])`` with ``b[0] -= 1`` in the body), an object's attribute, what
    a helper returns. An array's shape, size and rank cannot change."""
    shape = {id(n.value) for n in gast.walk(expr) if isinstance(n, gast.Subscript)
             and isinstance(n.value, gast.Attribute) and n.value.attr == "shape"}
    for n in gast.walk(expr):
        if isinstance(n, gast.Subscript) and id(n.value) not in shape:
            return False
        if isinstance(n, gast.Attribute) and n.attr not in ("shape", "size", "ndim"):
            return False
    return without_effects(expr)


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
    tiny = block.tiny_work
    loop = rejoin_tests(copy.deepcopy(block.written_loop))     # (as written: its tests in their ifs)
    for n in (n for stmt in call for n in gast.walk(stmt)):
        gast.copy_location(n, loop)          # (what ``show`` prints: some are not in the tree)
    if block.resume_at:
        return _handed_over_for(block, loop, call)
    if isinstance(loop, gast.While) and tiny > 0 and _inner_whiles(loop):
        counted = _counting_inner_whiles(block, loop, call)
        if counted is not None:
            return counted
    if isinstance(loop, gast.While):
        # its first trips as a ``for`` over a constant tuple: cheaper per trip than a counter; the body's
        # own ``break`` leaves that ``for`` (skipping the kernel, as it leaves the ``while``), its
        # ``continue`` goes to the next trip, whose test Python evaluates, as the ``while`` would
        each = iteration_work(block.kernel_loop, weighed_names(block))
        weigh = None
        if constant_value(each) is not None:
            first = first_positions(block.kernel_loop, weighed_names(block), WHILE_TRIPS * tiny)
            if first == 0:
                return call, []        # (a trip is more work than the budget, or kernels always)
            trips = (gast.Tuple(elts=[_const(k) for k in range(first)], ctx=gast.Load())
                     if first <= MOST_LISTED_TRIPS else gast.Call(func=_load(RANGE_NAME), args=[_const(first)],
                                                                   keywords=[]))
        else:
            # a trip whose work depends on values (a loop inside, an array statement): as many first
            # trips as written as the work allows, counted before the loop with the values it starts
            # from (none where the estimate raises: the kernel, which declines what it cannot take); a
            # trip of more than that work runs the kernel from the first trip (a sieve's first trips as
            # written would be most of its work)
            by_choice = _trips_by_choice(WHILE_TRIPS * tiny, each)
            if by_choice is not None:      # (the trips themselves, chosen: none where the choice raises)
                budget, none = _readable(by_choice, block), gast.Tuple(elts=[], ctx=gast.Load())
            else:
                budget = _readable(gast.BinOp(left=_const(WHILE_TRIPS * tiny), op=gast.FloorDiv(), right=each),
                                   block)
                none = _const(0)
            weigh = mark_for_outlining(gast.Try(body=[_assign(left_name(block), budget)],
                                                handlers=[gast.ExceptHandler(type=_load("Exception"), name=None,
                                                                             body=[_assign(left_name(block), none)])],
                                                orelse=[], finalbody=[]), block)
            setattr(weigh, SHOWN, [])
            trips = _load(left_name(block)) if by_choice is not None else gast.Call(
                func=_load(RANGE_NAME), args=[_load(left_name(block))], keywords=[])
        trip = gast.If(test=loop.test, body=list(loop.body), orelse=[gast.Break()])
        gast.copy_location(trip, loop)
        counted = gast.For(target=_store(trips_name(block)), iter=trips, body=[trip], orelse=copy.deepcopy(call),
                           type_comment=None)
        gast.copy_location(counted, loop)
        setattr(counted, SHOWN, call)
        kept = [loop.test] + list(loop.body)
        statements = ([] if weigh is None else [weigh]) + [counted]
        long_sequences = _long_sequences_test(searched_sequences(block))
        if long_sequences is None:
            return statements, kept
        # (a search through a long list or tuple: the loop as written, neither trips nor kernel)
        as_written = rejoin_tests(copy.deepcopy(block.written_loop))
        weigh_long = mark_for_outlining(_weighed(left_name(block), _readable(long_sequences, block), True), block)
        choose = gast.If(test=_load(left_name(block)), body=[as_written], orelse=statements)
        setattr(weigh_long, SHOWN, [])
        setattr(choose, SHOWN, call)
        return [weigh_long, choose], kept + [as_written]
    # the truth of the comparison is taken inside the ``try`` too: a range() of something that is
    # not an int may give a work estimate without one (an array), and the loop as written raises; an
    # estimate that raises (an inner range read at an outer range's first value, where the outer
    # range is empty) runs the loop as written, which raises where the kernel's call would
    small = _at_most(block.kernel_loop, weighed_names(block), tiny)
    rows = row_test(block.kernel_loop, block.live_in)
    if rows is not None:           # (tested only where the work looks tiny)
        small = gast.BoolOp(op=gast.And(), values=[small, gast.UnaryOp(op=gast.Not(), operand=rows)])
    sequence = _sequence_test(block)
    if sequence is not None:
        small = gast.BoolOp(op=gast.Or(), values=[small, sequence])
    # (an attribute the estimate cannot read as the call does, a property: the Fragment runs the loop's
    # Python, with the blocks and loops inside it compiled, where the loop as written has none)
    work = mark_for_outlining(_weighed(TINY_NAME, _readable(small, block), True, if_not_plain=False), block)
    choose = gast.If(test=_load(TINY_NAME), body=[loop], orelse=call)
    setattr(work, SHOWN, [])
    setattr(choose, SHOWN, call)
    return [work, choose], [loop]


def _inner_whiles(loop) -> list:
    return [n for s in loop.body for n in gast.walk(s) if isinstance(n, gast.While)]


def _counting_inner_whiles(block, loop, call):
    """(statements, the loop as written among them) for a ``while`` region with ``while`` loops inside
    (``loop``: its copy as written), or None where this form does not apply. The inner loops' trips
    are not known before they run: counted as one trip of unknown work, they called the kernel from
    the first trip, and a run-length encoding (a ``while`` scanning each run) of 1-8 values ran
    2.4-23x slower than plain Python.

    Before the loop, its work is weighed as if each loop, outer and inner, made as many trips as the
    arrays the inner loops index have elements (they stay in them, or raise): the kernel runs from
    the first trip where that is more than the first trips' budget (``WHILE_TRIPS`` times a tiny
    loop's work: a sieve crossing out multiples with a ``while``, whose first trip as written would
    be most of its work; a run-length encoding of 20 values, which would spend the budget and then
    call the kernel too, 1.5x plain Python's time). Otherwise the loop runs as written, each outer
    trip's own work and each inner trip's spent from the budget as they run, and the kernel takes
    over where it is spent (where the guess was wrong)::

        try:
            __astjit_left_0 = 224 if x.size * 23 <= 224 else 0
        except Exception:
            __astjit_left_0 = 0
        while __astjit_left_0 > 0:
            __astjit_left_0 -= 13              # the outer trip's own work
            if i < n:
                j = i
                while j < n and x[j] == x[i]:
                    __astjit_left_0 -= 10      # an inner trip's
                    j += 1
                ...
            else:
                break
        else:
            vals, lens, i = __astjit_fragment_0(...)

    It applies where the outer trip's own work and an inner trip's are constants and each inner loop
    indexes an argument."""
    names = weighed_names(block)
    own = constant_value(iteration_work(block.kernel_loop, names, inner_whiles=0))
    if own is None:
        return None
    assigned = assigned_names(loop)
    counter, budget = left_name(block), WHILE_TRIPS * block.tiny_work
    trip_work, indexed = own, []
    for inner in _inner_whiles(loop):
        units = constant_value(iteration_work(inner, names))
        arrays = [n.value.id for n in gast.walk(inner) if isinstance(n, gast.Subscript)
                  and isinstance(n.value, gast.Name) and n.value.id in block.live_in and n.value.id not in assigned]
        if units is None or not arrays:
            return None
        trip_work += units
        indexed += [a for a in arrays if a not in indexed]
        spend = gast.AugAssign(target=_store(counter), op=gast.Sub(), value=_const(units))
        inner.body.insert(0, gast.copy_location(spend, inner))
    extent = None
    for name in indexed:
        size = gast.Attribute(value=_load(name), attr="size", ctx=gast.Load())
        extent = size if extent is None else gast.BinOp(left=extent, op=gast.Add(), right=size)
    fits = gast.Compare(left=gast.BinOp(left=extent, op=gast.Mult(), right=_const(trip_work)), ops=[gast.LtE()],
                        comparators=[_const(budget)])
    weigh = gast.Try(body=[_assign(counter, gast.IfExp(test=_readable(fits, block), body=_const(budget),
                                                       orelse=_const(0)))],
                     handlers=[gast.ExceptHandler(type=_load("Exception"), name=None,
                                                  body=[_assign(counter, _const(0))])],
                     orelse=[], finalbody=[])
    spend = gast.copy_location(gast.AugAssign(target=_store(counter), op=gast.Sub(), value=_const(own)), loop)
    trip = gast.copy_location(gast.If(test=loop.test, body=list(loop.body), orelse=[gast.Break()]), loop)
    left = gast.Compare(left=_load(counter), ops=[gast.Gt()], comparators=[_const(0)])
    counted = gast.copy_location(gast.While(test=left, body=[spend, trip], orelse=copy.deepcopy(call)), loop)
    setattr(weigh, SHOWN, [])
    setattr(counted, SHOWN, call)
    return [weigh, counted], [loop.test] + list(loop.body)


def _sequence_test(block):
    """``not isinstance(xs, ndarray) and <a position's work> < SEQUENCE_ITEM_NS // UNIT_NS``, or'd over
    the live-in names a ``for`` region indexes (``for v in xs`` is ``xs[i]`` in its kernel form), or
    None: where a position's Python work is below what the kernel's runner pays to convert one item
    of a list or tuple (``np.array`` of its items, after a test of their types), the loop runs as
    written over a list whatever its length; over an array its size decides. A kernel converting a
    list of floats for ``tot += v * 2.0`` ran 3-17x slower than the loop's Python at 5-100 items and
    never faster at 100k, Horner's rule over a tuple of 8 coefficients 14x. With ``ASTJIT_TINY_LOOP``
    set, its threshold alone decides."""
    loop = block.kernel_loop
    if tiny_loop_work() is not None:      # (ASTJIT_TINY_LOOP set: its threshold, over lists too)
        return None
    if not isinstance(loop, gast.For) or isinstance(loop.iter, gast.Tuple):
        return None
    names = _indexed_live_ins(block)
    if not names:
        return None
    per_position = position_work(loop, weighed_names(block))[1]
    limit = SEQUENCE_ITEM_NS // UNIT_NS
    each = constant_value(per_position)
    cheap = [] if each is not None else [gast.Compare(left=per_position, ops=[gast.Lt()], comparators=[_const(limit)])]
    if each is None or each >= limit:
        # a position worth more: the loop's Python work against the kernel's call with the lists
        # converted (their items too), in nanoseconds (over two lists of 3 floats, a loop nest called
        # the kernel at 4-18x plain Python's time: its price was an array's)
        price, _ = kernel_call_ns(loop, block.live_in, block.live_out, block.loop_calls, block.hoisted_locals)
        price += SEQUENCE_NS * len(names)
        work = _readable(work_expression(loop, weighed_names(block)), block)

    def worth_less(n):
        items = gast.Call(func=_load(LEN_NAME), args=[_load(n)], keywords=[])
        kernel = gast.BinOp(left=_const(price), op=gast.Add(),
                            right=gast.BinOp(left=_const(SEQUENCE_ITEM_NS), op=gast.Mult(), right=items))
        # a unit on numpy scalars (``list(arr)``'s items) costs what it costs on an array's elements; one
        # of a loop that also indexes an array, MIXED_UNIT_NS: part of its arithmetic is on the numpy
        # scalars the array's elements give (Horner's rule over a tuple of 3 Python floats for each of 8
        # elements, ``acc = acc * x[k] + c``, priced at Python's fast end, ran as written at 0.7x plain
        # Python; priced at the elements' end, a loop over two lists of 20 floats adding one element
        # of an array per position called its kernel at 0.6x)
        first = gast.Subscript(value=_load(n), slice=_const(0), ctx=gast.Load())
        scalars = gast.Call(func=_load(ISINSTANCE_NAME), args=[first, _load(NUMPY_SCALAR_NAME)], keywords=[])
        unit = _const(UNIT_NS)
        arrays = [_is_array(m) for m in names if m != n]
        if arrays:
            unit = gast.IfExp(test=arrays[0] if len(arrays) == 1 else gast.BoolOp(op=gast.Or(), values=arrays),
                              body=_const(MIXED_UNIT_NS), orelse=unit)
        unit = gast.IfExp(test=scalars, body=_const(ELEMENT_UNIT_NS), orelse=unit)
        python = gast.BinOp(left=copy.deepcopy(work), op=gast.Mult(), right=unit)
        return gast.Compare(left=python, ops=[gast.LtE()], comparators=[kernel])

    def of_numbers(n):
        # not an array, and its first item a number (a list of arrays goes on to the kernel, which
        # declines it: the loop's blocks then compile for its arrays)
        first = gast.Subscript(value=_load(n), slice=_const(0), ctx=gast.Load())
        if each is not None and each < limit:
            small = []
        elif cheap:
            small = [gast.BoolOp(op=gast.Or(), values=copy.deepcopy(cheap) + [worth_less(n)])]
        else:
            small = [worth_less(n)]
        return gast.BoolOp(op=gast.And(), values=[
            gast.UnaryOp(op=gast.Not(), operand=_is_array(n)),
            gast.Call(func=_load(ISINSTANCE_NAME), args=[first, _load(NUMBERS_NAME)], keywords=[])] + small)

    tests = [of_numbers(n) for n in names]
    return tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.Or(), values=tests)


def _is_array(name):
    """``isinstance(name, ndarray)`` as an expression of the rewritten function."""
    return gast.Call(func=_load(ISINSTANCE_NAME), args=[_load(name), _load(NDARRAY_NAME)], keywords=[])


def _indexed_live_ins(block) -> list:
    """The live-in names the loop region indexes and does not assign (``for v in xs`` is ``xs[i]`` in
    its kernel form), in order."""
    loop = block.kernel_loop
    assigned = assigned_names(loop)
    return list(dict.fromkeys(
        n.value.id for n in gast.walk(loop) if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)
        and n.value.id in block.live_in and n.value.id not in assigned))


def searched_sequences(block) -> list:
    """The live-ins a loop that may stop early searches through, where a long list or tuple among
    them runs the loop as written (``_long_sequences_test``): those a handed-over ``for`` iterates
    (``range(len(xs))``, ``enumerate(xs)``); those a ``while`` reads elements of in its test
    (``while i < len(xs) and xs[i] <= t``), or all it indexes where its body may ``break`` or
    ``return``. (A ``while`` whose test reads lengths only, a merge of two sorted lists, runs through
    them: its kernel repays their conversion.)"""
    loop, indexed = block.written_loop, _indexed_live_ins(block)
    if isinstance(loop, gast.For):
        iterated = {n.id for n in gast.walk(loop.iter) if isinstance(n, gast.Name)}
        return [n for n in indexed if n in iterated]
    leaves = _leaves(loop.body) or any(isinstance(n, gast.Return) for n in gast.walk(loop))
    # (walked by a position: ``xs[i]``, ``xs[i + 1]``; not a table read at a value, ``lut[a[i]]``)
    walked = {n.value.id for n in gast.walk(loop if leaves else loop.test) if isinstance(n, gast.Subscript)
              and isinstance(n.value, gast.Name) and _position(n.slice)}
    return [n for n in indexed if n in walked]


def _position(index) -> bool:
    """Whether ``index`` is a name, or a name plus or minus a constant."""
    if isinstance(index, gast.BinOp) and isinstance(index.op, gast.Add | gast.Sub) \
            and isinstance(index.right, gast.Constant):
        index = index.left
    return isinstance(index, gast.Name)


def _long_sequences_test(names):
    """``not isinstance(xs, ndarray) and len(xs) > SEARCHED_SEQUENCE_MOST``, or'd over ``names``, or
    None: converting a list or tuple for the kernel costs about as much as the loop's Python spends on
    each of its items, and a search stops where it finds (over a list of 100,000 floats, a search
    stopping at position 2000 ran 0.01x plain Python's speed)."""
    if not names:
        return None
    tests = [gast.BoolOp(op=gast.And(), values=[
        gast.UnaryOp(op=gast.Not(), operand=_is_array(n)),
        gast.Compare(left=gast.Call(func=_load(LEN_NAME), args=[_load(n)], keywords=[]), ops=[gast.Gt()],
                     comparators=[_const(SEARCHED_SEQUENCE_MOST)])]) for n in names]
    return tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.Or(), values=tests)


def _readable(expr, block):
    """``expr`` (an estimate of the region's kernel form) as the rewritten function can evaluate it
    before the loop: each attribute read the region takes as an argument (``__astjit_attr_4self_1n``,
    frontend/loops.hoist_attribute_reads) read as the region's call reads it (``self.n`` where it is a
    plain attribute, runtime/plain_attribute): the name is not bound there, and an estimate that raised
    NameError ran every such loop one way whatever its size. A property or ``__getattr__`` is not read
    (a counting property counted one read more than Python's): the estimate raises NotPlainInEstimate
    (``_weighed``). A name it measures or indexes (``len(xs)``, ``g.shape``, ``d[i]``) is read only where
    it holds a value of PLAIN_OBJECT_TYPES (``_plain_objects``)."""
    if block.hoisted:
        expr = substituted(expr, {n: _plain_value(plain_attribute_read(e)) if n in block.hoisted_locals else e
                                  for n, e in block.hoisted.items()})
    return _plain_objects(expr)


def _plain_objects(expr):
    """``expr`` with each name it measures or indexes read as ``(x if type(x) is ndarray else
    plain_object(x))`` (inline for arrays: a call costs a tiny loop's every run), so that the estimate
    raises NotPlainInEstimate before a user's ``__len__``, a ``shape`` property or a defaultdict's item
    runs: the loop would run it again, or never (an inner ``range(d[i])`` read at an outer range's last
    value, where that range is empty)."""
    def checked(value):
        if isinstance(value, gast.Call):           # an attribute's plain value (``_readable``): once
            return gast.Call(func=_load(PLAIN_OBJECT_NAME), args=[value], keywords=[])
        check = gast.IfExp(test=is_exactly_array(value.id), body=_load(value.id),
                           orelse=gast.Call(func=_load(PLAIN_OBJECT_NAME), args=[_load(value.id)], keywords=[]))
        setattr(check, CHECKED_NAME, value.id)          # (_shared_reads: checked once where read twice)
        return check

    def read(value) -> bool:
        return isinstance(value, gast.Name) or (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                                                and value.func.id == PLAIN_VALUE_NAME)

    class Check(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if isinstance(node.func, gast.Name) and node.func.id in ("len", LEN_NAME):
                node.args = [checked(a) if read(a) else a for a in node.args]
            return node

        def visit_Attribute(self, node):
            self.generic_visit(node)
            if node.attr in SHAPE_ATTRIBUTES and read(node.value):
                node.value = checked(node.value)
            return node

        def visit_Subscript(self, node):
            self.generic_visit(node)
            if read(node.value):
                node.value = checked(node.value)
            return node

    return Check().visit(copy.deepcopy(expr))


def _plain_value(read):
    return gast.Call(func=_load(PLAIN_VALUE_NAME), args=[read], keywords=[])


def _weighed(name, test, if_raised: bool, if_not_plain=None):
    """``name = True if <test> else False``, or ``if_raised`` where the estimate raises (a ``range()`` of
    something that is not an int, an array where a number was expected: the loop as written raises,
    or the kernel's lowering refuses), ``if_not_plain`` (where given) where it reads an attribute that
    is not a plain one (``_readable``). The truth of the test is taken inside the ``try`` too."""
    decided = _constant_truth(test)
    if decided is not None:
        return _assign(name, _const(decided))
    handlers = [gast.ExceptHandler(type=_load("Exception"), name=None, body=[_assign(name, _const(if_raised))])]
    if if_not_plain is not None:
        handlers.insert(0, gast.ExceptHandler(type=_load(NOT_PLAIN_ERROR_NAME), name=None,
                                              body=[_assign(name, _const(if_not_plain))]))
    reads, test = _shared_reads(test)
    return gast.Try(body=reads + [_assign(name, gast.IfExp(test=test, body=_const(True), orelse=_const(False)))],
                    handlers=handlers, orelse=[], finalbody=[])


SHARED_READ_PREFIX = "__astjit_read_"
CHECKED_NAME = "astjit_checked_name"     # attribute of a name's check that _plain_objects makes: the name


def _shared_reads(test):
    """(assignments, ``test``) with each name the estimate reads checked several times
    (``(xs if type(xs) is ndarray else plain_object(xs))``, _plain_objects) checked once, ahead: the
    checks of a loop over a tuple cost about 1 us of a 2 us loop's every call. The check raises only
    for an object not of PLAIN_OBJECT_TYPES, whose estimate then raises NotPlainInEstimate ahead too."""
    def name_checked(node):
        """The variable a conditional expression may be computed into once: a name's check, or a range
        argument converted to a Python int (frontend/loops.SHARED_AS: an estimate of a triangular nest
        converted ``hi`` twenty times, 0.7 us)."""
        if not isinstance(node, gast.IfExp):
            return None
        checked = getattr(node, CHECKED_NAME, None)
        return SHARED_READ_PREFIX + checked if checked is not None else getattr(node, SHARED_AS, None)

    counts = collections.Counter(name_checked(n) for n in gast.walk(test))
    shared = {x for x, k in counts.items() if x is not None and k > 1}
    if not shared:
        return [], test
    first = {}

    class Share(gast.NodeTransformer):
        def visit_IfExp(self, node):
            self.generic_visit(node)
            x = name_checked(node)
            if x in shared:
                first.setdefault(x, node)
                return _load(x)
            return node

    test = Share().visit(test)
    return [_assign(x, first[x]) for x in sorted(first)], test


_FOLDED = (gast.Constant, gast.BinOp, gast.Compare, gast.BoolOp, gast.UnaryOp, gast.IfExp, gast.operator, gast.cmpop,
           gast.boolop, gast.unaryop, gast.expr_context)
_FOLDED_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Gt, gast.GtE, gast.Lt, gast.LtE, gast.Eq,
                     gast.And, gast.Or, gast.Not, gast.USub)
MOST_FOLDED_CHOICES = 3


class _Picked(gast.NodeTransformer):
    """Each conditional expression as the branch ``picked`` (id of the node -> True: its body) says."""

    def __init__(self, picked):
        self.picked = picked

    def visit_IfExp(self, node):
        return self.visit(node.body if self.picked[id(node)] else node.orelse)


def _constant_truth(test):
    """True or False where ``test`` comes out so whichever way each of its conditional expressions goes
    (an estimate whose work depends on whether names hold arrays: ``(1000 - 112) * (194 if
    isinstance(tol, ndarray) or isinstance(x, ndarray) else 13) > 224``), else None. Testing the
    names cost about 0.2 us a call of a loop whose answer was the same either way."""
    choices = [n for n in gast.walk(test) if isinstance(n, gast.IfExp)]
    if not choices or len(choices) > MOST_FOLDED_CHOICES:
        return None
    truths = set()
    for ways in itertools.product((True, False), repeat=len(choices)):
        expr = copy.deepcopy(test)
        picked = dict(zip((id(n) for n in gast.walk(expr) if isinstance(n, gast.IfExp)), ways))

        value = _folded(_Picked(picked).visit(expr))
        if value is None:
            return None
        truths.add(bool(value))
    return truths.pop() if len(truths) == 1 else None


def _folded(expr):
    """The value of ``expr`` where it is arithmetic and comparisons of int constants alone, else None."""
    if not all(isinstance(n, _FOLDED) for n in gast.walk(expr)) or not all(
            isinstance(n, _FOLDED_OPERATORS) for n in gast.walk(expr)
            if isinstance(n, gast.operator | gast.cmpop | gast.boolop | gast.unaryop)):
        return None
    if not all(type(n.value) in (int, bool) for n in gast.walk(expr) if isinstance(n, gast.Constant)):
        return None
    try:
        tree = ast.fix_missing_locations(ast.Expression(gast.gast_to_ast(copy.deepcopy(expr))))
        return eval(compile(tree, "<estimate>", "eval"), {"__builtins__": {}})
    except ArithmeticError:
        return None


def _trips_by_choice(budget, each):
    """``budget // each`` as a choice between constant trips (a tuple, or a ``range`` past
    MOST_LISTED_TRIPS) where ``each`` is conditional expressions over int constants (a trip's work
    whether its names hold arrays or numbers), else None: the ``for`` then goes over one of them, without
    a division and a ``range()`` at each call (a Newton iteration on floats paid 0.35 us a call for its
    first trips' count)."""
    if isinstance(each, gast.IfExp):
        body, orelse = _trips_by_choice(budget, each.body), _trips_by_choice(budget, each.orelse)
        if body is None or orelse is None:
            return None
        return gast.IfExp(test=each.test, body=body, orelse=orelse)
    work = _folded(each)
    if type(work) is not int or work <= 0:
        return None
    first = budget // work
    if first <= MOST_LISTED_TRIPS:
        return gast.Tuple(elts=[_const(k) for k in range(first)], ctx=gast.Load())
    return gast.Call(func=_load(RANGE_NAME), args=[_const(first)], keywords=[])


def _at_most(loop, live_in, tiny):
    """``work <= tiny`` for a loop's work estimate, as ``stop <= tiny // each + start`` where each
    position's work is a constant (a few nanoseconds less on every call that weighs it); the copies of
    the arrays the loop rebinds (frontend/loops.copied_work) add to the kernel's price."""
    copies = copied_work(loop, live_in)
    if isinstance(loop, gast.For) and not isinstance(loop.iter, gast.Tuple):
        positions, per_position = position_work(loop, live_in)
        each = constant_value(per_position)
        if each:
            most = tiny // each
            if (isinstance(positions, gast.BinOp) and isinstance(positions.op, gast.Sub)
                    and isinstance(positions.right, gast.Constant) and type(positions.right.value) is int):
                positions, most = positions.left, most + positions.right.value     # stop - start
            bound = _const(most) if copies is None else gast.BinOp(
                left=_const(most), op=gast.Add(), right=gast.BinOp(left=copies, op=gast.FloorDiv(), right=_const(each)))
            return gast.Compare(left=positions, ops=[gast.LtE()], comparators=[bound])
    bound = _const(tiny) if copies is None else gast.BinOp(left=_const(tiny), op=gast.Add(), right=copies)
    return gast.Compare(left=work_expression(loop, live_in), ops=[gast.LtE()], comparators=[bound])


def _handed_over_for(block, loop, call):
    """A ``for`` loop that may leave early: unless the positions after its first ``block.resume_at``
    are at most twice a tiny loop's work, those first positions as written, then the kernel for the rest, unless it
    declines (see the module's docstring); the loop as written otherwise, without a counter."""
    # the reads of globals before the call (emit._gone_checks), the call into the result, then what
    # reads it (emit._loop_result; no live-in may be unbound here: resume_position)
    at = next(k for k, s in enumerate(call) if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
              and s.targets[0].id == result_name(block))
    reads, first, took = call[:at], call[at], call[at + 1:]
    tiny, done = block.tiny_work, block.resume_at
    positions, per_position = position_work(block.kernel_loop, weighed_names(block))
    counter, result, left = trips_name(block), result_name(block), left_name(block)
    # weighed before the loop starts: the range's arguments are the ones the loop takes (resume_position),
    # and a loop whose rest is tiny work runs as written, without paying for a counter at each position
    # (the handover pays a counter at each first position and the kernel's call, and a search's
    # positions are often cheaper than the units say (a comparison, no arithmetic): the rest must be
    # twice a tiny loop's work)
    most = 2 * tiny
    each = constant_value(per_position)
    rest = gast.BinOp(left=gast.BinOp(left=copy.deepcopy(positions), op=gast.Sub(), right=_const(done)),
                      op=gast.Mult(), right=_const(each) if each else copy.deepcopy(per_position))
    if each:                       # (positions - done) * each > most, for a whole number of positions
        test = gast.Compare(left=positions, ops=[gast.Gt()], comparators=[_const(done + most // each)])
    else:
        test = gast.Compare(left=copy.deepcopy(rest), ops=[gast.Gt()], comparators=[_const(most)])
    long_sequences = _long_sequences_test(searched_sequences(block))
    if long_sequences is not None:     # (as written over a long list: no counter, no kernel)
        test = gast.BoolOp(op=gast.And(), values=[test, gast.UnaryOp(op=gast.Not(), operand=long_sequences)])
    # a list it reads otherwise (``n = len(xs)`` before ``for i in range(n)``, a table): handed over
    # only where the rest of the loop is worth HANDOVER_CONVERSIONS times its conversion
    for n in _indexed_live_ins(block):
        converted = gast.BinOp(left=_const(HANDOVER_CONVERSIONS * SEQUENCE_ITEM_NS), op=gast.Mult(),
                               right=gast.Call(func=_load(LEN_NAME), args=[_load(n)], keywords=[]))
        worth = gast.Compare(left=gast.BinOp(left=copy.deepcopy(rest), op=gast.Mult(), right=_const(UNIT_NS)),
                             ops=[gast.GtE()], comparators=[converted])
        test = gast.BoolOp(op=gast.And(), values=[test, gast.BoolOp(op=gast.Or(), values=[_is_array(n), worth])])
    weigh = mark_for_outlining(_weighed(left, _readable(test, block), True), block)
    as_written = rejoin_tests(copy.deepcopy(block.written_loop))
    # (a ``range`` as written: the kernel's loop over an array's items is over a range too)
    if isinstance(loop.iter, gast.Call) and isinstance(loop.iter.func, gast.Name) and loop.iter.func.id == "range" \
            and block.loop_calls.get(block.kernel_loop.iter) == "range" and isinstance(loop.target, gast.Name) \
            and not loop.orelse:
        return _sliced_handover(block, loop, as_written, weigh, call, (reads, first, took))
    attempt = copy.deepcopy(reads) + [copy.deepcopy(first),
               gast.If(test=gast.Compare(left=_load(result), ops=[gast.IsNot()], comparators=[_load(DECLINED_NAME)]),
                       body=copy.deepcopy(took) + [gast.Break()], orelse=[])]
    handover = gast.If(test=gast.Compare(left=_load(counter), ops=[gast.Eq()], comparators=[_const(done)]),
                       body=attempt, orelse=[])
    count = gast.AugAssign(target=_store(counter), op=gast.Add(), value=_const(1))
    kept = [loop.target, loop.iter] + list(loop.body) + [as_written]
    loop.body = [handover, count] + loop.body
    choose = gast.If(test=_load(left), body=[_assign(counter, _const(0)), loop], orelse=[as_written])
    setattr(weigh, SHOWN, [])
    setattr(choose, SHOWN, call)
    return [weigh, choose], kept


def _sliced_handover(block, loop, as_written, weigh, call, call_parts):
    """``_handed_over_for``'s form for a ``for`` over a ``range``, without a counter: its first
    positions as a ``for`` over the range's first items (a slice of a range is a range), then, where
    it did not leave and positions are left, the kernel from the next one, which the target holds as
    at that position; where the kernel declines, the rest of the range as written. A counter at each
    position cost about a third of a short search's or convergence loop's trip (a fixed point of
    ``cos`` in 16-69 trips ran at 0.54-0.81x plain Python)::

        __astjit_range_0 = range(1000)
        for _ in __astjit_range_0[:112]:
            <the body>
        else:
            __astjit_range_0 = __astjit_range_0[112:]
            if __astjit_range_0:
                _ = __astjit_range_0[0]
                __astjit_result_0 = __astjit_fragment_0(x, tol)
                if __astjit_result_0 is not __astjit_declined:
                    x = __astjit_result_0
                else:
                    for _ in __astjit_range_0:
                        <the body>
    """
    reads, first, took = call_parts
    done, rng, left, result = block.resume_at, range_name(block), left_name(block), result_name(block)
    taken = _assign(rng, loop.iter)
    gast.copy_location(taken, loop)

    def part(lower, upper):
        return gast.Subscript(value=_load(rng), slice=gast.Slice(lower=lower, upper=upper, step=None),
                              ctx=gast.Load())

    rest = copy.deepcopy(loop)
    rest.iter = _load(rng)
    at = gast.Assign(targets=[copy.deepcopy(loop.target)],
                     value=gast.Subscript(value=_load(rng), slice=_const(0), ctx=gast.Load()), type_comment=None)
    attempt = [at] + copy.deepcopy(reads) + [copy.deepcopy(first),
               gast.If(test=gast.Compare(left=_load(result), ops=[gast.IsNot()], comparators=[_load(DECLINED_NAME)]),
                       body=copy.deepcopy(took) or [gast.Pass()], orelse=[rest])]    # (a loop leaving no value)
    # (the positions left as a range: its truth, unlike len(), takes a range of 2**70 positions)
    remains = [_assign(rng, part(_const(done), None)), gast.If(test=_load(rng), body=attempt, orelse=[])]
    kept = [loop.target, loop.iter] + list(loop.body) + [as_written, rest]
    loop.iter = part(None, _const(done))
    loop.orelse = remains
    choose = gast.If(test=_load(left), body=[taken, loop], orelse=[as_written])
    setattr(weigh, SHOWN, [])
    setattr(choose, SHOWN, call)
    return [weigh, choose], kept
