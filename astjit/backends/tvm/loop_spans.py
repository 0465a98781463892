"""Value ranges (spans) of the int64 values of a loop kernel, to leave out checks that cannot fail.

A span is ``(lo, hi)``, inclusive Python ints; None where nothing is known (an int64 value then lies
anywhere in int64's range, since every Python-int result is checked against it). Spans come from
constants, extents (below 2**48: backends/tvm/loops bails on larger ones), dtype ranges of loaded
elements, range() arguments, and the loop's own tests: inside ``while lo < hi`` (or the branch of an
``if`` comparison), ``lo <= hi.hi - 1`` and ``hi >= lo.lo + 1`` until one of them is assigned.

The spans of the loop's variables are found by guessing and checking (``widen``): every variable is
guessed to lie in ``FIRST_GUESS``, one build of the kernel reads the guesses and records the span of
each value assigned; where an assigned span leaves the guess, the guess widens to the next power of two
and the kernel is built again. A guess that holds for every assignment holds throughout the loop (by
induction over the assignments it executes), so the last build may rely on it. A binary search
``mid = (lo + hi) // 2; lo = mid + 1 or hi = mid`` under ``while lo < hi`` then needs no overflow
check of ``lo + hi`` nor a wrap of ``mid`` as a negative index.

Counters (``c += 1`` under a test, ``t += mask[i]``) never settle that way: each guess is left by one
more step. Their bound comes from time instead (``counting_steps``): a variable whose other values
stay within ``COUNTER_BASE`` and which otherwise only steps by at most ``COUNTER_STEP`` per statement
cannot leave ``COUNTER_SPAN`` before ``2**COUNTER_STEPS_BITS`` such statements have run, over three
months of one kernel call at 32 billion steps a second. Its steps then need no overflow check, and a
numpy int64 counter no wrapping add, which LLVM cannot vectorize.
"""

import gast

INT64_LO, INT64_HI = -2**63, 2**63 - 1
EXTENT = (0, 2**48 - 1)                   # an array extent or len()
FIRST_GUESS = (0, 2**48)
WIDEST_BITS = 62                          # a guess beyond 2**62 is given up: the checks stay


COUNTER_STEP = 8
COUNTER_STEPS_BITS = 58
COUNTER_BASE = (-2**60, 2**60)
COUNTER_SPAN = (COUNTER_BASE[0] - COUNTER_STEP * 2**COUNTER_STEPS_BITS,
                COUNTER_BASE[1] + COUNTER_STEP * 2**COUNTER_STEPS_BITS)


def counting_steps(bodies) -> dict:
    """name -> {id of a statement that may step it: its increment's span, or None where the kernel's
    build tells}: ``c += x`` and ``c -= x`` (None: a step where the span of ``x`` lies within
    COUNTER_STEP of 0), ``c = c + 1``, ``c = 1 + c``, ``c = c - 1`` (an int constant of 1 to
    COUNTER_STEP)."""
    steps = {}
    for node in (n for b in bodies for n in gast.walk(b)):
        found = _step_of(node)
        if found is not None:
            steps.setdefault(found[0], {})[id(node)] = found[1]
    return steps


def _step_of(node):
    def small(e):
        return isinstance(e, gast.Constant) and type(e.value) is int and 1 <= e.value <= COUNTER_STEP

    def named(e):
        return e.id if isinstance(e, gast.Name) else None

    if isinstance(node, gast.AugAssign) and isinstance(node.op, gast.Add | gast.Sub):
        name = named(node.target)
        return None if name is None else (name, None)
    if not (isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.value, gast.BinOp)):
        return None
    target, e = named(node.targets[0]), node.value
    if target is None or not isinstance(e.op, gast.Add | gast.Sub):
        return None
    if named(e.left) == target and small(e.right):
        k = e.right.value if isinstance(e.op, gast.Add) else -e.right.value
        return target, (k, k)
    if isinstance(e.op, gast.Add) and named(e.right) == target and small(e.left):
        return target, (e.left.value, e.left.value)
    return None


def counter_span(guess, increments):
    """A counter's span: COUNTER_SPAN on the side its increments go, its guess on the other (a count
    up from 0 stays >= 0)."""
    lo, hi = COUNTER_SPAN
    if increments is not None and increments[0] >= 0:
        lo = guess[0]
    if increments is not None and increments[1] <= 0:
        hi = guess[1]
    return lo, hi


def widen_counter(guess, seen, increments):
    """The next guess of a counter: widened where a value leaves it on the side its steps do not go
    (only values other than steps can: the steps' side is COUNTER_SPAN's); None to give up."""
    if seen is None:
        return None
    lo, hi = guess
    up = increments is not None and increments[0] >= 0
    down = increments is not None and increments[1] <= 0
    return widen(guess, (seen[0] if up else lo, seen[1] if down else hi))


def step_of(op: str, span):
    """The increment of ``c += x`` (``op`` "Add") or ``c -= x`` ("Sub") for ``x`` of this span, if it is
    a counter's step; else None."""
    if op not in ("Add", "Sub") or not within(span, (-COUNTER_STEP, COUNTER_STEP)):
        return None
    return span if op == "Add" else (-span[1], -span[0])


COUNTER_AFTER = 2        # a stepped variable whose guess must widen this often is taken as a counter


def fits_int64(span) -> bool:
    return span is not None and INT64_LO < span[0] and span[1] < INT64_HI


def bits(span) -> int | None:
    """A bound on the magnitude: ``|v| < 2**bits``."""
    if span is None:
        return None
    return max(abs(span[0]), abs(span[1])).bit_length()


def join(a, b):
    if a is None or b is None:
        return None
    return min(a[0], b[0]), max(a[1], b[1])


def within(span, bound) -> bool:
    return span is not None and bound[0] <= span[0] and span[1] <= bound[1]


def meet(a, b):
    """What both say (None: the other one alone)."""
    if a is None:
        return b
    if b is None:
        return a
    return max(a[0], b[0]), min(a[1], b[1])


def _corners(fn, a, b):
    if a is None or b is None:
        return None
    values = [fn(x, y) for x in a for y in b]
    return min(values), max(values)


def add(a, b):
    return _corners(lambda x, y: x + y, a, b)


def sub(a, b):
    return _corners(lambda x, y: x - y, a, b)


def mul(a, b):
    return _corners(lambda x, y: x * y, a, b)


def floordiv(a, b):
    """``a // b`` for a divisor known to be positive (monotone in each operand there: the corners)."""
    if b is None or b[0] < 1:
        return None
    return _corners(lambda x, y: x // y, a, b)


def mod(a, b):
    if b is None or b[0] < 1:
        return None
    return 0, b[1] - 1


def excludes(span, value) -> bool:
    return span is not None and not span[0] <= value <= span[1]


def refine(op: str, a, b):
    """(a's span, b's span) where ``a <op> b`` holds; None for unknown reads as int64's range."""
    a_lo, a_hi = a if a is not None else (INT64_LO, INT64_HI)
    b_lo, b_hi = b if b is not None else (INT64_LO, INT64_HI)
    if op == "Lt":
        return (a_lo, min(a_hi, b_hi - 1)), (max(b_lo, a_lo + 1), b_hi)
    if op == "LtE":
        return (a_lo, min(a_hi, b_hi)), (max(b_lo, a_lo), b_hi)
    if op == "Gt":
        return (max(a_lo, b_lo + 1), a_hi), (b_lo, min(b_hi, a_hi - 1))
    if op == "GtE":
        return (max(a_lo, b_lo), a_hi), (b_lo, min(b_hi, a_hi))
    return a, b


NEGATED = {"Lt": "GtE", "LtE": "Gt", "Gt": "LtE", "GtE": "Lt"}


def widen(guess, seen):
    """The next guess for a variable whose assignments span ``seen``: the same where it holds, else
    wider to the next power of two on the side that left it; None to give up."""
    if seen is None:
        return None
    lo, hi = guess
    if seen[0] < lo:
        power = _next_power(-seen[0])
        lo = None if power is None else -power
    if seen[1] > hi:
        hi = _next_power(seen[1])
    if lo is None or hi is None:
        return None
    return lo, hi


def _next_power(v: int):
    k = max(v, 1).bit_length()
    return 2**k if k <= WIDEST_BITS else None


# -- bounds by an extent ------------------------------------------------------------------------------
# An upper bound ``(key, k, c)``: the value is at most ``k * E + c``, ``E`` the extent ``key`` = (array
# name, axis) of this call (fixed for the call, never negative). ``lo, hi = 0, len(a)`` under
# ``while lo < hi`` gives ``mid = (lo + hi) // 2 <= E - 1``: ``a[mid]`` needs no check at all.

def ub_add(a_ub, a_span, b_ub, b_span):
    if a_ub is None and b_ub is None:
        return None
    if a_ub is not None and b_ub is not None:
        return (a_ub[0], a_ub[1] + b_ub[1], a_ub[2] + b_ub[2]) if a_ub[0] == b_ub[0] else None
    ub, span = (a_ub, b_span) if a_ub is not None else (b_ub, a_span)
    return None if span is None else (ub[0], ub[1], ub[2] + span[1])


def ub_sub(a_ub, b_span):
    if a_ub is None or b_span is None:
        return None
    return a_ub[0], a_ub[1], a_ub[2] - b_span[0]


def ub_floordiv(a_ub, b_span):
    """``(k * E + c) // d`` is ``(k / d) * E + c // d`` where ``d`` divides ``k`` (E is an int)."""
    if a_ub is None or b_span is None or b_span[0] != b_span[1] or b_span[0] < 1 or a_ub[1] % b_span[0]:
        return None
    d = b_span[0]
    return a_ub[0], a_ub[1] // d, a_ub[2] // d


def ub_minus(ub, k: int):
    return None if ub is None else (ub[0], ub[1], ub[2] - k)


def ub_meet(a, b):
    if a is None:
        return b
    if b is None or (a[0], a[1]) != (b[0], b[1]):
        return a
    return a[0], a[1], min(a[2], b[2])


def ub_join(terms, optimistic=False):
    """One bound for values assigned with these ``(ub, span)``: a number ``v <= h`` is below
    ``k * E + h`` too. ``optimistic`` (the first guess): leave out values without a bound that are not
    constants (a build reading no bounds may not know theirs yet)."""
    bounds = [ub for ub, _ in terms if ub is not None]
    if not bounds or len({(b[0], b[1]) for b in bounds}) != 1:
        return None
    key, k = bounds[0][0], bounds[0][1]
    c = max(b[2] for b in bounds)
    for ub, span in terms:
        if ub is None:
            if optimistic and (span is None or span[0] != span[1]):
                continue                   # (a constant counts: ``lo = 0``)
            if span is None:
                return None
            c = max(c, span[1])
    return key, k, c


def ub_within(ub, bound) -> bool:
    return ub is not None and bound is not None and (ub[0], ub[1]) == (bound[0], bound[1]) and ub[2] <= bound[2]
