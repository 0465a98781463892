"""What a generated program is: its module text, its parameters, and the calls it is compared on."""

from dataclasses import dataclass

PRELUDE = '''import types

import numpy as np


class settings:
    """Read by the program; the campaign changes these between calls."""
    SCALE = 1.5
    OFFSET = 3
    FLAG = True
    AXIS = 0
    DTYPE = np.float32
    LIMIT = 2


cfg = types.ModuleType("cfg")
cfg.SCALE, cfg.OFFSET, cfg.FLAG, cfg.AXIS, cfg.DTYPE, cfg.LIMIT = 1.5, 3, True, 0, np.float64, 2
K = 2

'''

@dataclass(frozen=True)
class Param:
    name: str
    kind: str          # array | int | float | bool | tuple | slice | dtype
    role: str = ""     # int: count | value; tuple: axes | index | shape | reshape; dtype: type | instance
    ndim: int = 0      # arrays: number of axes (aligned right on the shared dimensions)
    ones: tuple = ()   # arrays: axes that have size 1 in every call
    target: str = ""   # tuples of axes / index / reshape: the array parameter they are for


@dataclass(frozen=True)
class Setup:
    """What the cache key of a call depends on: dimension sizes, and a dtype and layout per array."""
    sizes: tuple
    dtypes: dict
    layouts: dict


@dataclass
class Call:
    args: tuple
    attributes: dict                 # settings.X and cfg.X, by X
    global_k: object
    errstate: dict                   # the caller's np.errstate for this call ({}: numpy's default)

    def apply(self, namespace: dict) -> None:
        """Set the module attributes this call runs with."""
        for attr, value in self.attributes.items():
            setattr(namespace["settings"], attr, value)
            setattr(namespace["cfg"], attr, value)
        namespace["K"] = self.global_k


@dataclass
class Program:
    seed: int
    source: str                      # the whole module
    function: str                    # the def alone, for reports
    calls: list
    backend: str | None
    inexact: bool                    # uses an op whose compiled result may differ by rounding
    branch_fragile: bool             # ... and such a value decides a branch or a loop count
    unreliable: frozenset            # variables such a value reaches through a comparison, cast or index
    returned: list                   # per returned item, the variables it reads
    raises_first: bool = False       # the first call raises a numpy error
    sums: bool = False               # has a float sum, mean or product (whose terms may cancel)

    @property
    def fragile(self) -> bool:
        return self.branch_fragile or bool(self.unreliable)

    def may_differ(self, category: str, path: str) -> bool:
        """Whether rounding alone may explain a difference at ``path`` ("result[1]", "argument 0 ...")."""
        if self.branch_fragile or category == "cancellation" and self.sums:
            return True
        if not self.unreliable:
            return False
        if path.startswith("argument "):
            return self.params[int(path.split()[1])] in self.unreliable
        if path.startswith("result") and category not in ("exception", "aliasing"):
            index = 0 if len(self.returned) == 1 or path == "result" else int(path[7:].split("]")[0])
            return index >= len(self.returned) or bool(self.returned[index] & self.unreliable)
        return True

    @property
    def params(self) -> list:
        return self.function.split("(", 1)[1].split(")", 1)[0].split(", ")
