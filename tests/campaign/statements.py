"""Statements of a generated program, each simulated on the first call's arguments as it is drawn.

A statement that raises on the first call is usually drawn again (sometimes kept: the program then
checks that the jitted function raises the same). The data flow of every statement is recorded, so that
the comparison knows where a rounding difference may have become a different integer or branch.
"""

from dataclasses import dataclass

import numpy as np

from . import values
from .expressions import ARITHMETIC, BITWISE, Expr, ExpressionMaker, quietly, result_is_float
from .model import PRELUDE, Call
from .watchdog import ProgramTimeout, time_limit


@dataclass(frozen=True)
class Step:
    """One statement's data flow: what it assigns or mutates, and a summary of what it reads;
    ``control``: a branch condition or loop bound."""
    targets: frozenset
    expr: Expr
    control: bool = False


def indent(lines, by="    "):
    return [by + line for line in lines]


class ProgramMaker(ExpressionMaker):
    """Builds the function body statement by statement, simulating it on the first call's arguments."""

    def __init__(self, seed: int, params, first: Call):
        namespace: dict = {}
        exec(compile(PRELUDE, "<campaign prelude>", "exec"), namespace)
        first.apply(namespace)
        super().__init__(seed, namespace)
        self.params = params
        self.first = first
        self.env = dict(zip([p.name for p in params], values.clone(first.args)))
        self.count_names = [p.name for p in params if p.role == "count"]
        self.body: list[str] = []
        self.steps: list[Step] = []
        self.pending: list[Step] = []
        self.counter = 0
        self.raised = False
        self.returned: list = []

    def fresh(self, prefix="v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def record(self, targets, *parts, control=False) -> None:
        self.pending.append(Step(frozenset(targets), self.node("0", parts), control))

    def aliases(self, name) -> set:
        """Variables whose value shares memory with ``name``'s (a write through one changes the other)."""
        value = self.env.get(name)
        if not isinstance(value, np.ndarray):
            return {name}
        return {name} | {n for n, v in self.env.items() if isinstance(v, np.ndarray) and np.shares_memory(v, value)}

    # simulation
    def simulate(self, body) -> dict | Exception | None:
        """The variables after running ``body`` on the first call; its exception; None if too slow."""
        names = ", ".join(p.name for p in self.params)
        src = "\n".join([f"def __campaign_sim({names}):"] + indent(body + ["return locals()"])) + "\n"
        namespace = dict(self.namespace)
        try:
            exec(compile(src, "<campaign simulation>", "exec"), namespace)
            with time_limit(5.0):
                return quietly(namespace["__campaign_sim"], *values.clone(self.first.args))
        except Exception as exc:
            return exc
        except ProgramTimeout:
            return None

    def add_statement(self) -> None:
        """Draw a statement that runs on the first call; now and then keep one that raises."""
        for _ in range(6):
            self.pending = []
            lines, _ = self.statement(depth=0)
            result = self.simulate(self.body + lines)
            if result is None:
                continue
            if isinstance(result, dict) or self.chance(5):
                self.body += lines
                self.steps += self.pending
                if isinstance(result, dict):
                    self.env = result
                else:
                    self.raised = True
                return

    # statement kinds
    def statement(self, depth: int, in_loop=False) -> tuple[list, set]:
        compound = 2 if depth < 2 else 0
        kind = self.weighted({"assign": 6, "augassign": 2, "setitem": 3, "empty_fill": 1 if depth == 0 else 0,
                              "if": compound, "for": compound, "while": compound // 2, "with": compound // 2})
        return getattr(self, f"_{kind}")(depth, in_loop)

    def block(self, depth, in_loop) -> tuple[list, set]:
        lines, bound = [], set()
        for _ in range(self.integer(1, 2)):
            more, names = self.statement(depth, in_loop)
            lines += more
            bound |= names
        return lines, bound

    def rebindable(self) -> list:
        """Names a statement may assign to: not loop counters or bounds (a while loop rereads its bound),
        not the slice, tuple and dtype parameters."""
        names = self.visible(lambda v: not isinstance(v, slice | type | np.dtype | tuple))
        return [n for n in names if n not in self.loop_vars and n not in self.count_names]  # while bounds

    def _assign(self, depth, in_loop):
        """``name = value``. A name keeps its kind (array or Python scalar) in every branch and call: an
        array name that became a Python int would make ``a ** k`` a Python power of a huge ``k``."""
        array_value = self.chance(85)
        value = self.array(3) if array_value else self.scalar()
        if value.ok:
            array_value = isinstance(value.value, np.ndarray | np.generic)
        names = [n for n in self.rebindable() if isinstance(self.env[n], np.ndarray | np.generic) == array_value]
        rebind = names and (self.chance(85 if in_loop else 30) or (depth > 0 and not array_value))
        if not rebind and depth > 0 and not array_value:
            value, rebind = self.array(2), False                    # new names in blocks hold arrays
        target = self.pick(names) if rebind else self.fresh()
        self.record({target}, value)
        return [f"{target} = {value.src}"], set() if rebind else {target}

    def _augassign(self, depth, in_loop):
        names = [n for n in self.rebindable() if isinstance(self.env[n], np.ndarray | np.generic | int | float)]
        if not names:
            return self._assign(depth, in_loop)
        target = self.pick(names)
        python_scalar = type(self.env[target]) in (int, float)     # no 2**63 ** 2**63 on Python ints
        op = self.pick(("+", "-", "*", "/", "//", "%") if python_scalar else ARITHMETIC + BITWISE)
        value = self.scalar() if python_scalar else self.operand(2)
        summary = self.node(f"({target} {op} {value.src})", [self.name(target), value],
                            disc=op in ("//", "%") + BITWISE)
        if op == "**" and result_is_float(summary.value):
            summary = self.node(summary.src, [summary], inexact=True)
        self.record(self.aliases(target), summary)
        return [f"{target} {op}= {value.src}"], set()

    def _setitem(self, depth, in_loop):
        names = self.visible(lambda v: isinstance(v, np.ndarray) and v.ndim > 0)
        if not names:
            return self._assign(depth, in_loop)
        target = self.pick(names)
        index, parts = self.index_items(self.env[target].shape)
        op = self.pick(["", "", "+", "-", "*", "//"])
        value = self.operand(1)
        index_expr = self.node("0", parts, disc=True)
        self.record(self.aliases(target), self.name(target), value, index_expr)
        return [f"{target}[{index}] {op}= {value.src}"], set()

    def _empty_fill(self, depth, in_loop):
        like = self.array_leaf()
        target = self.fresh()
        value = self.operand(2)
        self.record({target}, value)
        return [f"{target} = np.empty_like({like.src})", f"{target}[...] = {value.src}"], {target}

    def _if(self, depth, in_loop):
        cond = self.condition()
        self.record((), cond, control=True)
        then, then_bound = self.block(depth + 1, in_loop)
        other, other_bound = self.block(depth + 1, in_loop) if self.chance(60) else ([], set())
        for lines, missing in ((then, other_bound - then_bound), (other, then_bound - other_bound)):
            for name in sorted(missing):       # both branches bind the same names
                value = self.array(1)
                self.record({name}, value)
                lines.append(f"{name} = {value.src}")
        out = [f"if {cond.src}:"] + indent(then)
        if other:
            out += ["else:"] + indent(other)
        return out, then_bound | other_bound

    def _with(self, depth, in_loop):
        """A block under np.errstate: numpy raises FloatingPointError where it says "raise"."""
        setting = self.pick(['all="ignore"', 'divide="ignore", invalid="ignore"', 'all="raise"',
                             'divide="raise"', 'over="raise", invalid="ignore"'])
        body, bound = self.block(depth + 1, in_loop)
        return [f"with np.errstate({setting}):"] + indent(body), bound

    def loop_bound(self) -> Expr:
        kind = self.weighted({"count": 4 if self.count_names else 0, "literal": 2, "attr": 1, "shape": 2})
        if kind == "count":
            return self.name(self.pick(self.count_names))
        if kind == "attr":
            return self.attribute("LIMIT")
        if kind == "shape":
            x = self.array_leaf()
            return self.node(f"{x.src}.shape[0]" if x.ndim else f"{x.src}.ndim", [x])
        return self.node(str(self.integer(0, 4)))

    def with_loop_var(self, var, body_fn):
        self.loop_vars.append(var)
        self.env[var] = 0
        try:
            return body_fn()
        finally:
            self.loop_vars.remove(var)
            self.env.pop(var, None)
            self.hidden.add(var)

    def _for(self, depth, in_loop):
        bound = self.loop_bound()
        self.record((), self.node("0", [bound], disc=True), control=True)
        var = "i" if "i" not in self.loop_vars else "j"
        body, bound_names = self.with_loop_var(var, lambda: self.block(depth + 1, True))
        return [f"for {var} in range({bound.src}):"] + indent(body), bound_names

    def _while(self, depth, in_loop):
        bound = self.loop_bound()
        counter = self.fresh("w")
        self.record((), self.node("0", [bound], disc=True), control=True)

        def body():
            lines, names = self.block(depth + 1, True)
            stop = self.condition()
            self.record((), stop, control=True)
            return lines + [f"if {stop.src}:", "    break", f"{counter} += 1"], names

        lines, names = self.with_loop_var(counter, body)
        return [f"{counter} = 0", f"while {counter} < {bound.src}:"] + indent(lines), names

    def return_statement(self) -> list:
        if self.chance(8):
            return []
        params = [p.name for p in self.params]
        made = self.visible(lambda v: True)
        items = []
        for _ in range(self.integer(1, 3)):
            local = [n for n in made if n not in params]
            if local and self.chance(70):
                items.append(self.name(self.pick(local)))
            elif self.chance(50):
                value = self._reduce(1) if self.chance(60) else self.scalar()
                if value.ok:
                    self.record((), value)
                    items.append(value)
            else:
                items.append(self.name(self.pick([p for p in params if p in made] or ["None"])))
        self.returned = [item.reads for item in items]
        return [f"return {', '.join(item.src for item in items)}"] if items else []

    def rounding_analysis(self) -> tuple[bool, bool, frozenset]:
        """(inexact, branch_fragile, unreliable): whether any value may differ by rounding; whether such a
        value decides a branch; which variables it reaches through a discontinuous op (a comparison, a
        cast to an integer, an index), where a rounding difference becomes a different value. Fixpoints
        over the statements in any order, since loops feed values back."""
        def spread(seeds, through) -> set:
            found = set(seeds)
            changed = True
            while changed:
                changed = False
                for step in self.steps:
                    if through(step, found) and not step.targets <= found:
                        found |= step.targets
                        changed = True
            return found

        tainted = spread((), lambda step, found: step.expr.inexact or step.expr.reads & found)

        def flips(step, found=frozenset()):
            return step.expr.disc_inexact or step.expr.disc_reads & tainted or step.expr.reads & found

        branch_fragile = any(step.control and flips(step) for step in self.steps)
        unreliable = spread((), lambda step, found: not step.control and flips(step, found))
        return any(step.expr.inexact for step in self.steps), branch_fragile, frozenset(unreliable)
