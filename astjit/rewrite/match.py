"""What a rule's ``where`` sees: the values its pattern's parameters matched, with their types."""

import numpy as np

from ..graph.types import ArrayType, Static, WeakScalar


class Match:
    """``match["x"]``: the ``MatchedValue`` parameter ``x`` was bound to."""

    def __init__(self, values, ctx):
        self._values = values
        self._ctx = ctx

    def __getitem__(self, name) -> "MatchedValue":
        return MatchedValue(self._values[name], self._ctx)

    def __contains__(self, name) -> bool:
        return name in self._values

    def __iter__(self):
        return iter(self._values)


class MatchedValue:
    """One matched value. ``dtype``: a numpy dtype (a Python number's is the dtype numpy would give
    it alone, ``float`` -> float64), ``shape`` and ``ndim`` (a number's: ``()`` and 0), ``is_array``
    (a numpy array, not a number or numpy scalar), ``is_python_number``, ``is_constant`` (known when
    compiling: a literal in the code, or a value the specialization is made for) and ``value`` (the
    constant's value; asking for a value that is only known at run time makes the rule not apply;
    reading an argument's value makes the compiled code hold for that value only)."""

    def __init__(self, node, ctx):
        self._node = node
        self._ctx = ctx
        self.type = ctx.types[node]

    @property
    def dtype(self):
        t = self.type
        if isinstance(t, ArrayType):
            return t.dtype
        value = t.value if isinstance(t, Static) else t.kind(0) if isinstance(t, WeakScalar) else None
        if isinstance(value, bool | int | float | complex | np.generic):
            return np.asarray(value).dtype
        return None

    @property
    def shape(self) -> tuple:
        return tuple(self.type.shape) if isinstance(self.type, ArrayType) else ()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_array(self) -> bool:
        return isinstance(self.type, ArrayType) and not self.type.scalar

    @property
    def is_python_number(self) -> bool:
        t = self.type
        return isinstance(t, WeakScalar) or isinstance(t, Static) and type(t.value) in (bool, int, float, complex)

    @property
    def is_constant(self) -> bool:
        return isinstance(self.type, Static)

    @property
    def value(self):
        return self._ctx.static_value(self._node, "the value a rewrite rule asked for")

    def __repr__(self) -> str:
        return f"<matched {self.type}>"
