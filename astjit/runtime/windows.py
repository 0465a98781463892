"""A Fragment's side of its block's windows (frontend/window_views): whether the caller takes them.

The rewritten function reads ``windows.switch`` before each call: while it is False it passes
NOT_TAKEN for every window, and the block's own graph takes the bounds as values it specializes on.
The switch flips once a window of a length met before comes at other bounds (a specialization of
these argument types exists, only the bounds moved); from then on the caller takes the views, and a
specialization holds for any bounds giving its windows' lengths. A window the kernel cannot take (not
C-contiguous) switches it back for good.
"""

import types

import numpy as np

from ..frontend.window_views import INDEX_TYPES, window_taker
from .new_extents import REMEMBERED


class _NotTaken:
    """What the rewritten function passes for a window it did not take: the block's own graph, which
    takes it, runs."""

    __slots__ = ()
    window_not_taken = True          # (runtime/keys leaves it out of what it prints)

    def __repr__(self) -> str:
        return "<window not taken>"


NOT_TAKEN = _NotTaken()


class Windows:
    """The windows of one block, as positions among its live-ins, and the switch the caller reads."""

    def __init__(self, live_in: list, views: dict):
        self.switch = types.CellType(False)
        self.positions = [live_in.index(n) for n in views]           # the windows themselves
        self.bases = [live_in.index(v.base) for v in views.values()]
        self.index_positions = [live_in.index(n) for v in views.values() for n in v.index_names + v.computed_names]
        self.computed_positions = [live_in.index(n) for v in views.values() for n in v.computed_names]
        self.shapes_seen: set = set()
        self.take = window_taker(live_in, views) if views else None

    def taken(self, args) -> bool:
        """Whether the caller took the windows (``args``: the call's arguments, or a key made of them):
        it takes all of them or none."""
        if not self.positions:
            return False
        first = args[self.positions[0]]
        return first is not NOT_TAKEN and first is not _NotTaken

    def decided(self, fragment, args):
        """The runner for this call where it switched the caller (the block's Python: no specialization
        for these bounds, none would meet them again), else None: the call goes on."""
        if self.taken(args):
            if all(args[p].flags.c_contiguous for p in self.positions):
                return None
            self.stop(fragment, "a window read is not C-contiguous: the block's graph takes its bounds' "
                                "values as constants")
            return fragment.fallback
        if self.switch.cell_contents or fragment.strict:
            return None
        shapes = self.shapes(args)
        if shapes is None:
            return None
        from .fragment import _same_value

        key = fragment.make_key(args)
        moved = any(spec.key == key and any(p in self.index_positions and not _same_value(args[p], v)
                                            for p, v in spec.value_guards.items()) for spec in fragment.entries)
        if not moved or shapes not in self.shapes_seen:
            if len(self.shapes_seen) < REMEMBERED:
                self.shapes_seen.add(shapes)
            return None
        self.switch.cell_contents = True
        fragment._record("windows", "a window's bounds moved: the rewritten function takes the window and "
                                    "passes it in, and a specialization holds for any bounds giving its length")
        return fragment.fallback

    def shapes(self, args):
        """The shapes of the windows the caller would take for ``args``, or None where it would not take
        them (not an ndarray, an index not an int, an error, a window not C-contiguous)."""
        if any(type(args[p]) is not np.ndarray for p in self.bases) \
                or any(type(args[p]) not in INDEX_TYPES for p in self.index_positions) \
                or any(type(args[p]) is not int for p in self.computed_positions):
            return None
        try:
            views = self.take(*args)
        except Exception:
            return None
        if not all(type(v) is np.ndarray and v.flags.c_contiguous for v in views):
            return None
        return tuple(v.shape for v in views)

    def stop(self, fragment, why) -> None:
        self.switch.cell_contents = False
        self.positions = []
        fragment._record("windows", why)
