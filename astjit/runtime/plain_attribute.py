"""Reading an object's attribute once for a loop that reads it at every iteration (``self.dt``,
``grid.u[i]``), or for a block that reads it (``b = a * o.scale; c = b + o.scale``): the rewritten
function passes the value to the kernel, which is the same as Python's reads only where reading it
has no effect and gives the same value each time.

That holds for a value stored on the instance (its ``__dict__`` or a ``__slots__`` slot, a namedtuple
field) or a plain class attribute, looked up the way ``object.__getattribute__`` looks it up. Anything
else (a property or another descriptor, a class with its own ``__getattribute__`` such as a module or
a proxy, an attribute that is missing) gives NOT_PLAIN, whose type no kernel takes: the loop then runs
as written, and Python reads the attribute where and when the loop does (or never, where it runs no
iteration); a block runs its statements as Python, which read it from the object.
"""

import collections
import types


class NotPlain:
    """The marker of an attribute that must be read by Python itself (see the module's docstring)."""

    __slots__ = ()
    shown_as = "read by Python"             # in a specialization's key (runtime/keys.describe_key)

    def __repr__(self):
        return "<an attribute read as Python reads it>"


NOT_PLAIN = NotPlain()
NAME = "__astjit_plain_attribute"          # the rewritten function's cell holding plain_attribute

# descriptors that only read what the instance stores: slots, namedtuple fields
_STORED = (types.MemberDescriptorType, type(collections.namedtuple("_Pair", "a").a))
_ABSENT = object()
# CPython's generic attribute lookup, as ``object`` and ``tuple`` (namedtuples) expose it
_OBJECT_LOOKUP, _TUPLE_LOOKUP = object.__getattribute__, tuple.__getattribute__


# (class, name) whose lookup found no attribute of that name on the class or its bases, and the
# generic lookup: the instance's ``__dict__`` alone answers. A descriptor later added to a base class
# under that name is not seen (one added to the class itself is)
_ON_INSTANCE = set()


# types of values that are no descriptors (``hasattr(type(v), "__get__")`` is False), tested first
_PLAIN_VALUES = frozenset({int, float, bool, complex, str, bytes, tuple, type(None)})
_TYPE_ATTRIBUTES = frozenset(type.__dict__)       # what the metaclass ``type`` serves itself


def plain_attribute(obj, name: str):
    """``obj.name`` where reading it once is reading it at each use, else NOT_PLAIN."""
    kind = type(obj)
    if (kind, name) in _ON_INSTANCE and name not in kind.__dict__ and kind.__getattribute__ is _OBJECT_LOOKUP:
        stored = obj.__dict__
        return stored[name] if name in stored else NOT_PLAIN
    if kind is type:
        # ``cls.k`` of a class (``cls`` in a classmethod): a value stored in the class or a base, that is
        # no descriptor (a method, a classmethod, a property) and that the metaclass ``type`` does not
        # serve itself (``__name__``, ``__doc__``); walked here, not in _on_class: a third of the time
        if name in _TYPE_ATTRIBUTES:
            return NOT_PLAIN
        for klass in obj.__mro__:
            value = klass.__dict__.get(name, _ABSENT)
            if value is not _ABSENT:
                return value if type(value) in _PLAIN_VALUES or not hasattr(type(value), "__get__") else NOT_PLAIN
        return NOT_PLAIN
    return _looked_up(obj, name, kind)


def _looked_up(obj, name, kind):
    lookup = kind.__getattribute__
    if lookup is not _OBJECT_LOOKUP and lookup is not _TUPLE_LOOKUP:
        return NOT_PLAIN
    on_class = _on_class(kind, name)
    if on_class is _ABSENT:
        stored = getattr(obj, "__dict__", None)
        if type(stored) is not dict:
            return NOT_PLAIN
        _ON_INSTANCE.add((kind, name))
        return stored[name] if name in stored else NOT_PLAIN
    if hasattr(type(on_class), "__get__"):
        if type(on_class) in _STORED:
            try:
                return on_class.__get__(obj, kind)
            except AttributeError:                   # an empty slot
                return NOT_PLAIN
        if hasattr(type(on_class), "__set__") or hasattr(type(on_class), "__delete__"):
            return NOT_PLAIN                         # a property or another data descriptor
    stored = getattr(obj, "__dict__", None)
    if type(stored) is dict and name in stored:
        return stored[name]
    if hasattr(type(on_class), "__get__"):
        return NOT_PLAIN                             # a method (or another non-data descriptor)
    return on_class


def _on_class(cls, name):
    """What ``cls`` or the first of its bases that has ``name`` stores under it, else _ABSENT."""
    for klass in cls.__mro__:
        value = klass.__dict__.get(name, _ABSENT)
        if value is not _ABSENT:
            return value
    return _ABSENT
