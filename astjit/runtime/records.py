"""What explain() reports: statements left to Python, specializations that fell back, recompiles."""

from dataclasses import dataclass


@dataclass
class Record:
    """One thing ``explain`` reports: where (``filename``, ``lineno``, ``col``), what (``kind``,
    ``message``), the ``source`` line and, for a block, the ``fragment`` name.

    Kinds: "statement" (stays Python for all arguments), "fallback" (a block that cannot be specialized
    for some argument types), "numpy" (part of a block ran on numpy instead of TVM), "measured" (the
    block's Python was faster), "recompile", "limit" (ASTJIT_RECOMPILE_LIMIT reached), "extents" (new
    array lengths run as Python until they recur: runtime/new_extents), "function"
    (the whole function runs as Python) and "rewrite" (a rewrite rule changed the block's graph).
    """

    kind: str            # see the class docstring
    filename: str
    lineno: int | None
    message: str
    source: str = ""
    fragment: str = ""
    col: int | None = None
    end_col: int | None = None

    def format(self) -> str:
        where = f"{self.filename}:{self.lineno}" if self.lineno else self.filename
        text = f"{where}: {self.message}"
        if self.source:
            text += f"\n    {self.source.strip()}"
        return text
