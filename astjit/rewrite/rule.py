"""``Rule``: a graph rewrite written as two plain numpy functions."""

import itertools

from ..errors import RuleError
from .trace import parameters, trace

_unnamed = itertools.count(1)


class Rule:
    """Replace what ``pattern`` computes by what ``replacement`` computes, wherever a block's graph
    computes it and ``where`` (if given) holds.

    Args:
        pattern: a function of array parameters made of numpy calls, operators and array methods,
            e.g. ``lambda x: np.exp(np.log(x))``.
        replacement: a function with the same parameters, e.g. ``lambda x: x``.
        where: ``where(match) -> bool``, with ``match["x"]`` giving the dtype, shape, ndim and (for a
            constant) value of what ``x`` matched (``astjit.rewrite.Match``).
        exact: whether the replacement gives the same bits as the pattern for every input. A rule
            with ``exact=False`` (it changes rounding or special values) runs only where a function
            names it in ``rewrites=`` or is jitted with ``fastmath=True``.
        name: how ``show`` and ``explain`` name the rule (default: the pattern function's name, or
            the file and line of a lambda).

    Raises:
        RuleError: the functions' parameters differ, or either uses something astjit has no op for.
    """

    def __init__(self, pattern, replacement, where=None, exact=True, name=None):
        names = parameters(pattern, "the pattern")
        if parameters(replacement, "the replacement") != names:
            raise RuleError(f"the pattern takes ({', '.join(names)}) but the replacement takes "
                            f"({', '.join(parameters(replacement, 'the replacement'))}): they must take the same "
                            "parameters")
        if where is not None and not callable(where):
            raise RuleError(f"where must be a function of the match, not {type(where).__name__}")
        self.name = name or _default_name(pattern)
        self.params = tuple(names)
        self.pattern = trace(pattern, names, f"the pattern of rule {self.name}")
        self.replacement = trace(replacement, names, f"the replacement of rule {self.name}")
        root = self.pattern.outputs[0][1]
        if root.op in ("input", "const"):
            raise RuleError(f"the pattern of rule {self.name} computes nothing: it would match every value")
        used = {n.value for n in self.pattern.nodes if n.op == "input" and n in _reachable(root)}
        if set(names) - used:
            raise RuleError(f"the pattern of rule {self.name} does not use {', '.join(sorted(set(names) - used))}: "
                            "every parameter must be bound by the match")
        self.where = where
        self.exact = bool(exact)

    def __repr__(self) -> str:
        return f"<Rule {self.name}{'' if self.exact else ' (changes rounding)'}>"


def _default_name(fn) -> str:
    name = getattr(fn, "__name__", "")
    if name and name != "<lambda>":
        return name
    code = getattr(fn, "__code__", None)
    if code is not None:
        return f"rule at {code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    return f"rule {next(_unnamed)}"


def _reachable(root) -> set:
    seen, work = set(), [root]
    while work:
        n = work.pop()
        if n not in seen:
            seen.add(n)
            work.extend(n.operands)
    return seen
