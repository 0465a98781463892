"""Apply rewrite rules (astjit.rewrite) to a typed graph, to a fixpoint.

A rule's pattern and replacement are small graphs traced from plain numpy functions. A match binds
each pattern parameter to one node of the block (the same node wherever the parameter appears), its
operations to nodes of the same op and operands, its constants to equal constants (``0.0`` does not
match ``-0.0``). A match is refused where the result would differ from the block's in anything but
the rule's own rounding:

- a matched node other than the root is read outside the match, or is a live-out (it would have to
  be computed anyway: nothing saved, and a node shared by two uses is not the pattern's);
- a node writes in place (``x += 1``, ``out=``);
- the rule's ``where`` says no, or cannot answer (it read a value that is not known when compiling);
- the replacement's type (dtype, shape, Python or numpy scalar) is not the root's;
- the replacement is one of the bound values (``x * 1 -> x``) while the root's value could be seen
  as an array of its own: a live-out, or read by a view, an in-place write or ``astype`` (which may
  return its operand): a new array would become an alias;
- the replacement is one of the bound values and that value is a view or a strided argument: numpy
  reduces in memory order, and ``np.sum(a[:, ::2] * 1)`` sums a new C-contiguous array, the view's
  elements in another order;
- the replacement is one of the bound values and an in-place write between the root and the root's
  last reader may reach that value's array (``y = x * 1; x += 1; return y`` must not read the new
  ``x``): the root's value was taken before the write, the bound value's is read after it.

Every application is checked on a clone, typed again, then kept.
"""

import numpy as np

from ... import config
from ...errors import RuleError, Unsupported, render_location
from ..ops.registry import OPS
from ..types import ArrayType, Static

MAX_APPLICATIONS = 200          # a rule set that keeps firing (x -> x * 1 -> x ...) stops here
FRESH_USER_KINDS = ("elementwise", "reduction", "linalg")


def run(graph, ctx, state):
    if not state.rules:
        return None
    changed = False
    for _ in range(MAX_APPLICATIONS):
        step = _apply_one(graph, ctx, state)
        if step is None:
            return (graph, ctx) if changed else None
        graph, ctx = step
        changed = True
    config.log("passes", "%s: rewrite stopped after %d applications", graph.name, MAX_APPLICATIONS)
    return graph, ctx


def _apply_one(graph, ctx, state):
    """The first application of any rule (in the rules' order, then the nodes'), or None."""
    users = graph.users()
    outputs = {n for _, n in graph.outputs}
    for rule in state.rules:
        for root in graph.nodes:
            if not users[root] and root not in outputs:
                continue        # nothing reads it: nothing to gain, and the user's own code computes it
            bound = match(rule.pattern, root, users, outputs)
            if bound is None:
                continue
            values, matched = bound
            if rule.where is not None and not _where_holds(rule, values, ctx):
                continue
            applied = _try(graph, ctx, state, rule, root, values, matched, users, outputs)
            if applied is not None:
                state.applied.append((rule.name, root.lineno))
                config.log("passes", "%s: rule %s at line %s", graph.name, rule.name, root.lineno)
                return applied
    return None


def match(pattern, root, users, outputs):
    """({parameter name: node}, matched nodes, root first) where ``pattern`` matches at ``root``, or None."""
    values, matched = {}, []
    if not _match(pattern.outputs[0][1], root, values, matched):
        return None
    inner = set(matched[1:])
    for n in matched:
        if OPS.get(n.op) is not None and OPS[n.op].kind == "effect" or "out" in n.kwargs:
            return None
        if n in inner and (n in outputs or any(u not in inner and u is not root for u in users[n])):
            return None
    return values, matched


def _match(p, t, values, matched) -> bool:
    if p.op == "input":
        if p.value in values:
            return values[p.value] is t
        values[p.value] = t
        return True
    if p.op == "const":
        return t.op == "const" and same_constant(p.value, t.value)
    if t.op != p.op or len(t.args) != len(p.args) or set(t.kwargs) != set(p.kwargs):
        return False
    if t in matched:
        return False
    matched.append(t)
    return all(_match(pa, ta, values, matched) for pa, ta in zip(p.args, t.args)) and \
        all(_match(p.kwargs[k], t.kwargs[k], values, matched) for k in p.kwargs)


def same_constant(a, b) -> bool:
    """Equal numbers with the same sign (``0.0`` is not ``-0.0``; NaN matches nothing), bools only
    bools; other constants (dtypes, None, strings) by equality and type."""
    import math

    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _where_holds(rule, values, ctx) -> bool:
    """What the rule's ``where`` says of this match; an error in it (a bug of the rule, such as
    ``m["y"]`` for a parameter it does not have) is a RuleError at the ``where``'s own line."""
    from ...rewrite.match import Match

    try:
        return bool(rule.where(Match(values, ctx)))
    except Unsupported:          # it asked for a value known only at run time
        return False
    except Exception as exc:
        code = getattr(rule.where, "__code__", None)
        raise RuleError(render_location(f"the where of rule {rule.name} raised {type(exc).__name__}: {exc}",
                                        code and code.co_filename, code and code.co_firstlineno)) from exc


def _try(graph, ctx, state, rule, root, values, matched, users, outputs):
    """(graph, types) with the rule applied at ``root``, checked; or None where it is refused."""
    from . import infer_again

    returned = rule.replacement.outputs[0][1]
    if returned.op == "input":
        if root in outputs or any(not _takes_values_only(u) for u in users[root]):
            return None
        if _written_while_read(graph, root, values[returned.value], users):
            config.log("passes", "rule %s at line %s refused: its value is written in place before it is read",
                       rule.name, root.lineno)
            return None
        if not _laid_out_as_a_copy(values[returned.value], ctx, state.args):
            config.log("passes", "rule %s at line %s refused: its value is a view or a strided array, whose "
                       "elements a reduction would take in another order than the new array's", rule.name,
                       root.lineno)
            return None
    trial = graph.clone()
    at = {n: trial.nodes[n.id] for n in graph.nodes}
    new_root = splice(trial, rule.replacement, at[root], {k: at[v] for k, v in values.items()})
    trial.replace_all_uses(at[root], new_root)
    trial.remove_dead([at[n] for n in matched], keep=lambda n: n is new_root)
    try:
        trial.verify()
        new_ctx = infer_again(trial, state.args, ctx)
    except Unsupported as exc:
        config.log("passes", "rule %s at line %s refused: %s", rule.name, root.lineno, exc)
        return None
    if not same_type(ctx.types[root], new_ctx.types[new_root]):
        config.log("passes", "rule %s at line %s refused: it gives %s where the block gives %s", rule.name,
                   root.lineno, new_ctx.types[new_root], ctx.types[root])
        return None
    return trial, new_ctx


def _takes_values_only(user) -> bool:
    """Whether ``user`` only reads its operands' values (its result is a new array or number)."""
    op = OPS.get(user.op)
    return op is not None and op.kind in FRESH_USER_KINDS and user.op not in ("astype",) \
        and "out" not in user.kwargs


def _written_while_read(graph, root, value, users) -> bool:
    """Whether an in-place write after ``root`` and before its last reader may change ``value``'s
    array: the readers would see the written values where the root's copy kept the old ones."""
    position = {n: k for k, n in enumerate(graph.nodes)}
    last = max(position[u] for u in users[root])
    return any(OPS.get(n.op) is not None and OPS[n.op].kind == "effect" and _may_share_memory(n.args[0], value)
               for n in graph.nodes[position[root] + 1:last + 1])


def _laid_out_as_a_copy(node, ctx, args) -> bool:
    """Whether ``node``'s array has the memory order the root's new array would have (``x * 1`` of a
    C-contiguous array is C-contiguous too; of ``a[:, ::2]`` or ``a.T[::-1]`` it is not the view's):
    numpy's sums and products run in memory order, so reducing the view instead changed their bits. A
    number, an argument C-contiguous at this specialization (its key holds that flag), or an array the
    block makes with an elementwise op, a reduction or a creation (``x * 1`` keeps its order)."""
    if node.op == "input":
        value = args[ctx.input_index[node]]
        return not isinstance(value, np.ndarray) or value.flags.c_contiguous
    return _created_here(node) or isinstance(ctx.types.get(node), Static)


def _may_share_memory(a, b) -> bool:
    """False only where ``a`` and ``b`` are provably different arrays: one of them is (a view of) an
    array the block creates, and the other is not (a view of) the same one."""
    a, b = _storage(a), _storage(b)
    return a is b or not (_created_here(a) or _created_here(b))


def _storage(node):
    """The node whose array ``node`` is or views: through views, in-place writes and ``astype``."""
    while node.args and OPS.get(node.op) is not None and (OPS[node.op].kind in ("view", "effect")
                                                           or node.op == "astype"):
        node = node.args[0]
    return node


def _created_here(node) -> bool:
    op = OPS.get(node.op)
    return node.op == "const" or op is not None and op.kind in FRESH_USER_KINDS + ("creation",) \
        and node.op != "astype" and "out" not in node.kwargs


def splice(graph, replacement, anchor, values):
    """Copy ``replacement``'s nodes into ``graph`` before ``anchor``, its parameters read as
    ``values``; the node that holds its result."""
    copied = {}
    for r in replacement.nodes:
        if r.op == "input":
            copied[r] = values[r.value]
        elif r.op == "const":
            copied[r] = graph.insert_before(anchor, "const", value=r.value)
        else:
            copied[r] = graph.insert_before(anchor, r.op, [copied[a] for a in r.args],
                                            {k: copied[v] for k, v in r.kwargs.items()})
    return copied[replacement.outputs[0][1]]


def same_type(a, b) -> bool:
    """Types equal down to a static value's type and bits (``1`` is not ``1.0``)."""
    if isinstance(a, Static) or isinstance(b, Static):
        from ..fingerprint import NotFingerprintable, value_text

        if not (isinstance(a, Static) and isinstance(b, Static)):
            return False
        try:
            return value_text(a.value) == value_text(b.value)
        except NotFingerprintable:
            return False
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        return a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and a.scalar == b.scalar
    return a == b
