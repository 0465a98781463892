"""numpy-level ops. Importing this package registers every op (see registry.py)."""

from . import creation, elementwise, linalg, misc, reductions, views  # noqa: F401
from .registry import ATTRIBUTES, METHODS, OPS, Op, lookup_callable, updates_in_place  # noqa: F401
