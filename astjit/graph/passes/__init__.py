"""The passes a block's graph goes through for each specialization, in one declared order.

Every specialization starts from a ``clone`` of the block's graph (graph/ir), typed by inference for
that call's arguments, and runs ``PIPELINE`` on it: spellings made one (``canonicalize``), then the
active rewrite rules to a fixpoint (``rewrite``, astjit.rewrite; the nodes a rule leaves unread go
with it). A pass that changes the graph gives back the graph and its types inferred
again; ``verify`` checks the graph after each. ``ASTJIT_LOG=passes`` logs the order and each pass's
result.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from ... import config
from ..infer import infer
from . import canonicalize, rewrite


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable        # run(graph, ctx, state) -> (graph, ctx) after a change, or None


@dataclass
class PassState:
    """What the passes of one specialization share: the call's arguments, the active rules and what
    the rules did (``applied``: (rule name, line) per application)."""

    args: tuple
    rules: tuple = ()
    applied: list = field(default_factory=list)


PIPELINE = (
    Pass("canonicalize", canonicalize.run),
    Pass("rewrite", rewrite.run),
)


def describe() -> str:
    """The pipeline's order, as ``ASTJIT_LOG=passes`` prints it."""
    return " -> ".join(p.name for p in PIPELINE)


def run_pipeline(graph, args, rules=()):
    """(graph, types, applied) for one specialization: the passes run on a clone of ``graph``, which
    itself never changes. Raises Unsupported where the block's types cannot be inferred."""
    g = graph.clone()
    ctx = infer(g, args)
    state = PassState(tuple(args), tuple(rules))
    config.log("passes", "%s: %s", g.name, describe())
    for p in PIPELINE:
        result = p.run(g, ctx, state)
        if result is None:
            continue
        g, ctx = result
        g.verify()
        config.log("passes", "after %s:\n%s", p.name, g.listing(ctx.types))
    return g, ctx, state.applied


def infer_again(graph, args, before):
    """The types of a changed graph, keeping what the earlier inference made the specialization
    assume (a rule's condition may have read an argument's value)."""
    ctx = infer(graph, args)
    for k, v in before.value_guards.items():
        ctx.value_guards.setdefault(k, v)
    for k, (lo, hi) in before.range_guards.items():
        now = ctx.range_guards.get(k, (lo, hi))
        ctx.range_guards[k] = (max(lo, now[0]), min(hi, now[1]))
    for k, v in before.length_guards.items():
        ctx.length_guards.setdefault(k, v)
    return ctx
