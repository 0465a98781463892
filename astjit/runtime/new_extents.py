"""When a block's arrays keep arriving in new lengths: compile a new length's kernel only once it recurs.

A straight-line Fragment is specialized per shape (runtime/keys.make_key), and a specialization costs
a compile of 50-300 ms (more for exact sums). A function called on arrays of ever new lengths (signals
of varying length, a recursion over halves, slices growing in a loop kept in Python) compiled one
kernel per call up to ASTJIT_RECOMPILE_LIMIT: 60 calls on lengths between 1,000 and 200,000 took 4.9 s
where numpy took 16 ms. The first EXTENTS_AT_ONCE lengths of one pattern (the same dtypes, ranks,
layouts and axes of extent 0 or 1) still compile at their first call. A further length runs the
block's Python until it has been met often enough to repay its compile: the time the compiled lengths
saved per element on their first-call measurement (runtime/measure), times its elements, against
their mean compile time; at least SIGHTINGS_TO_COMPILE times. Where the block's Python was
measured faster at every length compiled so far and the new one is at most LONGER_TO_TRY times the
longest of them, the length runs the block's Python for good (NEVER: the Fragment caches the block's
Python for it, so its calls cost what a key that chose Python costs). A length met the first time
runs the block's Python inline for the next few calls (fragment.settle_python: ever new lengths cost
little); one met again is counted at each call instead (an inline run would hide the calls that
count, and run the block's Python for the lengths already compiled too). New values of the ints a
specialization depends on (a slice bound ``a[:k]``, a shape ``np.zeros(n)``) are new lengths too."""

import math

EXTENTS_AT_ONCE = 2
SIGHTINGS_TO_COMPILE = 3
MOST_SIGHTINGS = 64        # a new int value needing more calls to repay its compile: its Python for good
# Where the block's Python won at every length compiled, a length up to this many times the longest of
# them runs its Python for good; a longer one may be where a kernel starts to win (its call's cost
# spread over more elements, its threads). Short arrays of random lengths 1-59, the first two
# compiled lengths won by Python, had each further length compile after three calls and lose again:
# 1.7x plain Python's time.
LONGER_TO_TRY = 8
# A length whose kernel would save less than this a call runs the block's Python for good: counting
# its calls from the cache costs about as much (a dispatch and a runner, 0.3-0.5 us), and the compile
# would be repaid after hundreds of thousands of calls (arrays of random lengths 1-59, whose kernels
# saved 0.3 us a call, ran 1.6x plain Python's time while counted).
WORTH_COUNTING = 1e-6
# A length that runs the block's Python for good runs it inline (fragment.settle_python: the next calls
# skip the Fragment) unless a compiled length saves more than this a call: then through the Fragment, so
# that the compiled lengths keep their kernels between them. Each new length reaching the Fragment costs
# a miss (10-20 us): random lengths of 100-1,000 elements whose compiled lengths saved 1 us a call ran
# at 0.16x numpy.
KEEP_KERNELS_FROM = 5e-6
REMEMBERED = 1024          # lengths met and not compiled; forgotten all at once beyond that
WAIT, AGAIN, NEVER = "wait", "again", "never"     # met the first time, met again, Python for good


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
    return sum(math.prod(part[1]) for part in key
               if type(part) is tuple and len(part) == 3 and type(part[1]) is tuple)


class NewExtents:
    """A Fragment's record of the lengths met that it has not compiled yet."""

    def __init__(self):
        self.sightings: dict = {}     # a length (or a key and int values) -> (times met, times needed)
        self.ready: set = set()       # lengths whose compile is repaid: their next call compiles (count)
        self._facts: dict = {}        # key -> (extent_pattern, elements): computed once per key

    def facts(self, key) -> tuple:
        known = self._facts.get(key)
        if known is None:
            if len(self._facts) >= REMEMBERED:
                self._facts.clear()
            known = self._facts[key] = (extent_pattern(key), elements(key))
        return known

    def defer(self, entries, key, args=()):
        """None where a call with ``key`` and ``args`` (not held by the Fragment's specializations
        ``entries``) should compile; else WAIT (met the first time: run the block's Python), AGAIN
        (met before and counted again: run it) or NEVER (run the block's Python for good)."""
        if key in self.ready:
            self.ready.discard(key)
            return None
        seen = self.sightings.get(key)
        if seen is not None:                  # (a length met before: one lookup)
            return self._count(key, seen)
        exact = [e for e in entries if e.key == key]
        if exact:
            return self._defer_values(exact, key, args)
        pattern, size = self.facts(key)
        if pattern is None:
            return None
        same = [e for e in entries if self.facts(e.key)[0] == pattern]
        if len(same) < EXTENTS_AT_ONCE:
            return None
        if all(e.runs == "python" for e in same) and size <= LONGER_TO_TRY * max(self.facts(e.key)[1] for e in same):
            return NEVER                # (Python won at every length compiled, none much shorter than this)
        saving = saving_per_call(same, size, self.facts)
        if 0 < saving < WORTH_COUNTING:
            return NEVER                # (its kernel would save less than counting its calls costs)
        # (no cap: the Fragment caches a counting runner for a length met again, a cheap call)
        return self._first_sighting(key, sightings_to_repay(same, size, self.facts), most=None)

    def _defer_values(self, exact, key, args):
        """The same rule for new values of the ints a key's specializations depend on (a slice bound
        ``a[:k]``, a shape ``np.zeros(n)``): past EXTENTS_AT_ONCE of them, a new value waits for its
        sightings, and never compiles where the block's Python won for every value so far."""
        positions = sorted({i for e in exact for i in e.value_guards})
        if len(exact) < EXTENTS_AT_ONCE or not positions:
            return None
        sighting = (key, tuple((type(args[i]), args[i]) for i in positions))
        try:
            seen = self.sightings.get(sighting)
        except TypeError:                # (a slice, a list: compiled as before)
            return None
        if seen is not None:
            return self._count(sighting, seen)
        if all(e.runs == "python" for e in exact):
            return NEVER
        return self._first_sighting(sighting, sightings_to_repay(exact, self.facts(key)[1], self.facts))

    def _first_sighting(self, sighting, needed: int, most=MOST_SIGHTINGS):
        if most is not None and needed > most:
            return NEVER
        if len(self.sightings) >= REMEMBERED:
            self.sightings.clear()
        self.sightings[sighting] = (1, needed)
        return WAIT

    def _count(self, sighting, seen):
        met, needed = seen
        if met + 1 >= needed:
            del self.sightings[sighting]
            return None
        self.sightings[sighting] = (met + 1, needed)
        return AGAIN

    def left(self, sighting) -> int:
        """How many more calls of a length met again repay its compile; from now on its calls are
        counted by the Fragment's cached runner (``repaid`` when none are left)."""
        met, needed = self.sightings.pop(sighting, (0, SIGHTINGS_TO_COMPILE))
        return max(needed - met, 1)

    def repaid(self, sighting) -> None:
        """The calls counted repay the compile of ``sighting``: its next call compiles."""
        self.ready.add(sighting)


def saving_per_call(same, size: int, facts) -> float:
    """The seconds a kernel would save on a call with ``size`` elements, judged by the first-call
    measurements of the specializations ``same`` (the best saving per element, times ``size``; 0.0
    where none was measured or none saved time)."""
    saved = [(python - compiled) / max(facts(e.key)[1], 1) for e in same if e.measured
             for compiled, python in [e.measured]]
    return max(0.0, max(saved, default=0.0) * size)


def sightings_to_repay(same, size: int, facts) -> int:
    """How many calls with ``size`` elements repay its compile, judged by the specializations ``same``
    of its pattern (``facts(key)``: its pattern and elements): their shortest compile time over the
    time their first-call measurement saved per element, times ``size`` (at least SIGHTINGS_TO_COMPILE;
    that many where none was measured or none saved time: a longer array may be where a kernel starts
    to win). The shortest, not the mean: a block's first compile pays the compiler's warm-up (a mean
    squared error's first length 0.35 s, its second 0.05 s), and with the mean six recurring lengths
    of 22-37 elements waited 130,000 calls each, counted at 1.3x plain Python's time."""
    per_call = saving_per_call(same, size, facts)
    if per_call <= 0:
        return SIGHTINGS_TO_COMPILE
    compile_seconds = min(e.compile_seconds for e in same)
    return max(SIGHTINGS_TO_COMPILE, math.ceil(compile_seconds / per_call))

