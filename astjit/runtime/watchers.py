"""Jitted functions to transform again when what their compiled form depends on changes globally
(registered rewrite rules, registered backends)."""

import weakref

_functions = weakref.WeakSet()


def watch(jitted) -> None:
    """``jitted._configuration_changed()`` is called at each ``changed()``."""
    _functions.add(jitted)


def changed() -> None:
    for jf in list(_functions):
        jf._configuration_changed()
