"""Counted loops whose variables settle: a variable that may hold several types keeps an int8 tag of
the one it holds, and a name the loop may leave unbound a flag. Where every assignment in the loop's
body gives the variable the same type (``s = 0.0`` then ``if a[i] > 0.0: s += a[i]``: a Python float
until the first element is added, a numpy float64 from then on), the loop runs in two phases: the
positions in counted runs of a few dozen until every such tag and flag holds its one value, then one
plain counted loop over the rest, entered with those values stored, in which LLVM folds them away.

Why: LLVM turns the branch into selects, and the tag's select shares the branch's compare with the
value's; x86 then lowers the value's float select as a branch (a float compare feeds a blend only
where it has one use), which mispredicts on data of random signs. Summing the positive ones of
100,000 normal numbers took 400 us, against 124 us from a numpy float64 start (numba: 123 us)."""

import contextlib

import gast
from tvm import tirx
from tvm.tirx.script import builder as T

from .loop_bounds import has_nested_loops

I64 = "int64"
# positions per counted run before the tags settle: a branch that never assigns (the type never
# settles) runs in such runs, which LLVM vectorizes as before; one at a time, ``count`` over 100,000
# elements ran 3-7x slower
SETTLING_RUN = 64


class SettlingTypes:
    """Mixin of the loop lowering: records, per loop, the tags and flags its body stores (each build
    reads the previous build's record: the types have settled by the builds that count), and emits a
    counted loop in its two phases."""

    def start_settling_record(self) -> None:
        """At the start of a build: the record of the last one becomes the one to read."""
        self.settling_seen = getattr(self, "settling_record", {})
        self.settling_record = {}          # id of a loop -> {name: set of (types, tag index)}
        self.bodies_emitting = []          # ids of the loops whose bodies are being emitted

    @contextlib.contextmanager
    def emitting_body(self, loop):
        self.bodies_emitting.append(id(loop))
        try:
            yield
        finally:
            self.bodies_emitting.pop()

    def note_settling_store(self, name, types, index) -> None:
        """An assignment of ``name`` storing tag ``index`` into ``types`` (None: a tag computed at run
        time; "bound": the flag of a name the loop may leave unbound)."""
        for loop_id in self.bodies_emitting:
            self.settling_record.setdefault(loop_id, {}).setdefault(name, set()).add((types, index))

    def settling(self, loop) -> list:
        """(buffer, value) of each tag and flag that every assignment in ``loop``'s body sets to one
        value, by the last build's record, where a branch may skip its assignment (one that every
        position runs settles in the first, and LLVM folds it from there). Empty where a loop is
        nested in the body (each level's second phase would double the code below it) or the trip
        count is a constant (LLVM unrolls such a loop whole)."""
        if self.known_count(loop) or has_nested_loops(loop):
            return []
        every_position = assigned_at_top(loop.body)
        found = []
        for name, stores in sorted(self.settling_seen.get(id(loop), {}).items()):
            if len(stores) != 1 or name in every_position:
                continue
            ((types, index),) = stores
            var = self.variables.get(name)
            if index == "bound":
                if name in self.bound_flags:
                    found.append((self.bound_flags[name], tirx.const(1, "int8")))
            elif index is not None and var is not None and var.tag is not None and var.types == types:
                found.append((var.tag, tirx.const(index, "int8")))
        return found

    def counted_in_phases(self, loop, settling, count, run_counted) -> None:
        """``count`` positions of ``loop``: counted runs of SETTLING_RUN positions
        (``run_counted(first, n)``) while a tag or flag of ``settling`` may still change, then the
        rest as one counted run, with them stored as they will stay."""
        k = T.alloc_buffer((1,), I64, scope="global")
        T.buffer_store(k, tirx.const(0, I64), [0])
        unsettled = None
        for buffer, value in settling:
            differs = tirx.NE(buffer[0], value)
            unsettled = differs if unsettled is None else tirx.Or(unsettled, differs)
        entry = dict(self.refined)            # (what holds at each position's start holds at both phases')
        with T.While(tirx.And(k[0] < count, unsettled)), self.scope():
            first = self.bind(k[0], I64)
            n = self.bind(tirx.min(count - first, tirx.const(SETTLING_RUN, I64)), I64)
            run_counted(first, n)
            T.buffer_store(k, first + n, [0])
        self.refined = dict(entry)
        with T.If(k[0] < count):
            with T.Then(), self.scope():
                for buffer, value in settling:
                    T.buffer_store(buffer, value, [0])
                first = self.bind(k[0], I64)
                run_counted(first, count - first)


def assigned_at_top(stmts) -> set:
    """The names that statements of ``stmts`` themselves assign (not those in a branch or a nested
    block): every run of ``stmts`` assigns them."""
    names = set()
    for s in stmts:
        targets = s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(
            s, gast.AugAssign | gast.AnnAssign) else []
        for t in targets:
            names |= {n.id for n in gast.walk(t) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return names
