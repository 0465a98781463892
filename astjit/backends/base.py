"""The Backend protocol and the Segment a partitioner hands to a backend (DESIGN.md section 4)."""

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(eq=False)
class Segment:
    """A connected run of nodes one backend executes as a unit, in graph order."""

    backend: str
    nodes: list = field(default_factory=list)
    inputs: list = field(default_factory=list)     # nodes produced outside, read inside (non-static)
    outputs: list = field(default_factory=list)    # nodes produced inside, needed after the segment
    executable: object = None                      # callable(*input values) -> tuple of output values
    description: str = ""


class Backend(Protocol):
    name: str

    def supports(self, ctx, node) -> str | None:
        """None when this backend can run ``node`` with the types in ``ctx``, else the reason not."""

    def compile(self, ctx, segment: Segment):
        """Return a callable taking the segment's input values and returning its output values."""
