"""When a block's arrays keep arriving in new lengths: compile a new length's kernel only once it recurs.

A straight-line Fragment is specialized per shape (runtime/keys.make_key), and a specialization costs
a compile of 50-300 ms (more for exact sums). A function called on arrays of ever new lengths (signals
of varying length, a recursion over halves, slices growing in a loop kept in Python) compiled one
kernel per call up to ASTJIT_RECOMPILE_LIMIT: 60 calls on lengths between 1,000 and 200,000 took 4.9 s
where numpy took 16 ms. The first EXTENTS_AT_ONCE lengths of one pattern (the same dtypes, ranks,
layouts and axes of extent 0 or 1) still compile at their first call. A further length runs the
block's Python until it has been met often enough to repay its compile: the time the compiled lengths
saved per element on their first-call measurement (runtime/measure), times its elements, against
their mean compile time; at least SIGHTINGS_TO_COMPILE times, and never where the block's Python was
measured faster at every length compiled so far, all at least as long. New values of the ints a
specialization depends on (a slice bound ``a[:k]``, a shape ``np.zeros(n)``) are new lengths too."""

import math

import numpy as np

EXTENTS_AT_ONCE = 2
SIGHTINGS_TO_COMPILE = 3
REMEMBERED = 1024      # lengths met once or twice; forgotten all at once beyond that


def extent_pattern(key) -> tuple | None:
    """``key`` with each array's extents reduced to 0, 1 or "n" (what broadcasting and empty results
    depend on), or None where no array's shape is part of it."""
    pattern, shaped = [], False
    for part in key:
        if type(part) is tuple and len(part) == 3 and type(part[1]) is tuple:
            shaped = True
            part = (part[0], tuple(d if d < 2 else "n" for d in part[1]), part[2])
        pattern.append(part)
    return tuple(pattern) if shaped else None


def elements(key) -> int:
    """The number of elements of the key's arrays, together."""
    return sum(int(np.prod(part[1])) for part in key
               if type(part) is tuple and len(part) == 3 and type(part[1]) is tuple)


class NewExtents:
    """A Fragment's record of the lengths met that it has not compiled yet."""

    def __init__(self):
        self.sightings: dict = {}

    def defer(self, entries, key, args=()) -> bool:
        """Whether a call with ``key`` and ``args`` (not held by the Fragment's specializations
        ``entries``) should run the block's Python instead of compiling."""
        exact = [e for e in entries if e.key == key]
        if exact:
            return self._defer_values(exact, key, args)
        pattern = extent_pattern(key)
        if pattern is None:
            return False
        same = [e for e in entries if extent_pattern(e.key) == pattern]
        if len(same) < EXTENTS_AT_ONCE:
            return False
        if all(e.runs == "python" for e in same) and elements(key) <= min(elements(e.key) for e in same):
            return True                 # (Python won at every length compiled, all longer than this)
        return self._sighted(key, same, key)

    def _defer_values(self, exact, key, args) -> bool:
        """The same rule for new values of the ints a key's specializations depend on (a slice bound
        ``a[:k]``, a shape ``np.zeros(n)``): past EXTENTS_AT_ONCE of them, a new value waits for its
        sightings, and never where the block's Python won for every value so far."""
        positions = sorted({i for e in exact for i in e.value_guards})
        if len(exact) < EXTENTS_AT_ONCE or not positions:
            return False
        sighting = (key, tuple((type(args[i]), args[i]) for i in positions))
        try:
            hash(sighting)
        except TypeError:                # (a slice, a list: compiled as before)
            return False
        if all(e.runs == "python" for e in exact):
            return True
        return self._sighted(sighting, exact, key)

    def _sighted(self, sighting, same, key) -> bool:
        seen = self.sightings.get(sighting, 0) + 1
        if seen >= sightings_to_repay(same, key):
            del self.sightings[sighting]
            return False
        if len(self.sightings) >= REMEMBERED:
            self.sightings.clear()
        self.sightings[sighting] = seen
        return True


def sightings_to_repay(same, key) -> int:
    """How many calls with ``key`` repay its compile, judged by the specializations ``same`` of its
    pattern: their mean compile time over the time their first-call measurement saved per element,
    times ``key``'s elements (at least SIGHTINGS_TO_COMPILE; that many where none was measured or
    none saved time: a longer array may be where a kernel starts to win)."""
    saved = [(python - compiled) / max(elements(e.key), 1) for e in same if e.measured
             for compiled, python in [e.measured]]
    per_call = max(saved, default=0.0) * elements(key)
    if per_call <= 0:
        return SIGHTINGS_TO_COMPILE
    compile_seconds = sum(e.compile_seconds for e in same) / len(same)
    return max(SIGHTINGS_TO_COMPILE, math.ceil(compile_seconds / per_call))
