"""What one call of a loop region's kernel costs, in units of the loop's Python work
(frontend/loops.operations): below it, the loop runs as written (frontend/loop_guard).

A kernel call's price is mostly per argument, not per iteration: the runner converts each array
through DLPack, tests each array the loop writes against each other array for overlap, converts
each number, boxes each live-out value and hands appended values to their lists. Its price is
estimated from the loop's source, before any call, so the rewritten function compares the loop's
work with a constant. Measured on the 2-core machine (a kernel doing one iteration, less the same
loop as Python): 0.55 us with no array, 0.15 us more per array, 0.1 us per written array and other
array pair, 0.07 us per number passed in, 0.1 us per live-out value, 0.7 us per list (its values
handed over after the call: backends/tvm/loop_lists).

A unit's price depends on the values the loop computes with (measured per loop: work in units against
its Python's time per position): 5-9 ns where they are Python ints and floats, 12-19 ns where the
loop reads elements of arrays (numpy makes a scalar object of each, and arithmetic on numpy scalars
costs two to three times Python's). A loop that reads elements of its arguments is priced at
ELEMENT_UNIT_NS a unit, others at the fast end, UNIT_NS: below the kernel's price the loop is faster
as Python. (A loop reading the items of a Python list runs at the fast end too. Converting the list costs the
kernel's runner about 45 ns an item, more than a simple position of the loop costs as Python: a loop
whose position is worth less than SEQUENCE_ITEM_NS runs as written over any list, frontend/loop_guard.)
"""

import gast

from .loops import appended_lists

CALL_NS = 550                 # the runner and the kernel's call, with no argument
ARRAY_NS = 150                # an array argument (DLPack conversion, the kernel's checks of it)
OVERLAP_NS = 100              # a written array and another array: may_share_memory
NUMBER_NS = 70                # a number passed in
LIVE_OUT_NS = 100             # a live-out value read back from the status buffer and boxed
LIST_NS = 700                 # a list the loop appends to: its values handed over after the call
ATTRIBUTE_NS = 170            # an object's attribute read before the call (runtime/plain_attribute)
UNIT_NS = 7                   # one unit of Python work on Python numbers, at the fast end
ELEMENT_UNIT_NS = 20          # one unit of a loop that reads elements of arrays (12-36 ns measured)
# one unit of a loop over a list of Python numbers that also reads elements of an array: part of its
# arithmetic is on numpy scalars, part on Python's (frontend/loop_guard._sequence_test)
MIXED_UNIT_NS = 13
# one item of a list or tuple the runner converts into the kernel's array (its items' types tested,
# then np.array): 43-46 ns measured, at 20 and 1000 floats, besides the kernel's own work. A loop whose
# position is estimated below this runs as written over a list (frontend/loop_guard), which is then
# faster at any length: measured over lists of floats, a position of 10 units (``tot += v * 2.0``
# under an ``if``) 21-32 ns as Python against 44 ns an item in a kernel, 15 units 74-102 ns against 46
SEQUENCE_ITEM_NS = 80
# a list or tuple of numbers the runner converts into the kernel's array, besides its items and the
# array's own price: the test of its items' types, np.array (0.44 us more than an array of one item,
# 20-45 ns an item more after it)
SEQUENCE_NS = 400
# a loop that may stop early runs as written over a list or tuple of more than this many items that it
# searches through (frontend/loop_guard.searched_sequences): converting it would cost about what the
# loop's Python spends on each item, and a search stops where it finds
SEARCHED_SEQUENCE_MOST = 64
SHAPE_ATTRIBUTES = ("shape", "size", "ndim", "strides", "dtype")


def kernel_call_units(loop, live_in, live_out, loop_calls, object_attributes=()) -> int:
    """The kernel call's estimated price, in units of Python work, for the loop region ``loop`` (its
    kernel form) with these live-in and live-out names; ``loop_calls``: call node -> scalar op name
    (frontend/loops.LoopChecker.calls: ``"append"`` for a list's append); ``object_attributes``: the
    live-ins read from objects before the call (``rod.u``)."""
    price, reads = kernel_call_ns(loop, live_in, live_out, loop_calls, object_attributes)
    return price // (ELEMENT_UNIT_NS if reads else UNIT_NS)


def kernel_call_ns(loop, live_in, live_out, loop_calls, object_attributes=()) -> tuple[int, bool]:
    """(the kernel call's estimated price in nanoseconds, whether the loop reads elements of its
    arrays) for ``kernel_call_units``' arguments."""
    names = set(live_in)
    lists = appended_lists(loop_calls)
    arrays, written, reads = set(), set(), False
    for n in gast.walk(loop):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and n.value.id in names:
            arrays.add(n.value.id)
            if isinstance(n.ctx, gast.Store):
                written.add(n.value.id)
            else:
                reads = True
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Subscript) \
                and isinstance(n.target.value, gast.Name):
            written.add(n.target.value.id)
        elif isinstance(n, gast.Attribute) and n.attr in SHAPE_ATTRIBUTES and isinstance(n.value, gast.Name) \
                and n.value.id in names:
            arrays.add(n.value.id)
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "len" and n.args \
                and isinstance(n.args[0], gast.Name) and n.args[0].id in names:
            arrays.add(n.args[0].id)
    arrays -= lists
    written &= arrays
    overlaps = sum(len(arrays - {w}) for w in written)
    numbers = len(names - arrays - lists)
    price = (CALL_NS + ARRAY_NS * len(arrays) + OVERLAP_NS * overlaps + NUMBER_NS * numbers
             + LIVE_OUT_NS * len(live_out) + LIST_NS * len(lists) + ATTRIBUTE_NS * len(object_attributes))
    return price, reads
