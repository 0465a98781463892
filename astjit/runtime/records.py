"""What explain() reports: statements left to Python, specializations that fell back, recompiles."""

from dataclasses import dataclass


@dataclass
class Record:
    kind: str            # "statement" | "fallback" | "numpy" | "recompile" | "function"
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
