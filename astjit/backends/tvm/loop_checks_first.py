"""Counted loops whose checks run first: a loop whose body checks values (``round(a[i] / step)`` of a
NaN raises, ``int(x)`` of an inf, Python int arithmetic that leaves int64) runs as a ``while`` that
stops at a failed check, which LLVM can neither unroll nor vectorize. Where the loop reads no array
it writes, its checks see the same values whether or not its stores happen, so the kernel runs:

1. every position of a chunk with its stores left out and its variables restored afterwards, finding
   the first position whose check fails (a ``min`` over the positions, which vectorizes);
2. the chunk's positions before that one as a plain counted loop without checks;
3. where one failed, from that position on the checked ``while``, which fails there with the effects
   Python has; else the next chunk.

Why: over 100,000 elements, ``out[i] = 1.0 / float(a[i])`` (a Python float divided: a zero raises)
took 99 us in the checked ``while``, 35 us so, and ``out[i] = round(x[i])`` 75 us, 56 us so."""

import gast
from tvm import tirx
from tvm.tirx.script import builder as T

I64 = "int64"
# positions per chunk: the first part's pass over a chunk of two float64 arrays stays in the L1 cache
# for the second part, and a check failing at the first position costs a chunk, not the whole array
CHUNK = 2048


class ChecksFirst:
    """Mixin of the loop lowering: records, per loop, the arrays its body stores and whether it does
    anything but element reads and stores (rows, lists, dot products, local arrays); emits a loop in
    the three parts above."""

    def start_access_record(self) -> None:
        self.access_seen = getattr(self, "access_record", {})
        self.access_record = {}         # id of a loop -> {"stores": set of array names, "other": bool}
        self.check_mode = None          # None, "find" (1: a failed check clears the position's flag)
        #                                 or "trusted" (2: no check is emitted)
        self.array_stores_left_out = False

    def note_access(self, kind, name=None) -> None:
        """``kind``: "store" of array ``name``, or "other" for an effect this file does not follow."""
        for loop_id in self.bodies_emitting:
            record = self.access_record.setdefault(loop_id, {"stores": set(), "other": False})
            if kind == "store":
                record["stores"].add(name)
            else:
                record["other"] = True

    def checks_can_run_first(self, loop) -> bool:
        """By the last build's record: ``loop`` (with no loop inside, nor in a function it inlines)
        stores elements of argument arrays that neither it nor a function it inlines reads by name,
        and does nothing else."""
        record = self.access_seen.get(id(loop))
        if record is None or record["other"] or self.rotation is not None or self.local_types:
            return False
        own = [n for s in loop.body for n in gast.walk(s)]
        inlined = [n for c in self.inlined_callees(loop.body) for s in c.body for n in gast.walk(s)]
        if any(isinstance(n, gast.For | gast.While) or _divides_by_a_variable(n, self.calls) for n in own + inlined):
            return False
        # (an element read at a computed index stays behind its check in part 1, where LLVM cannot
        # vectorize it: part 1 would cost as much as the checked loop)
        if not self.accesses_unchecked(loop) or any(isinstance(n, gast.Subscript) for n in inlined):
            return False
        # (a name read in a function being inlined is its parameter's: the array passed to it)
        return not (record["stores"] & {self.array_origin.get(n, n) for n in self.names_read(loop.body)})

    def inlined_callees(self, stmts) -> list:
        """The functions that ``stmts`` inline, and those that they inline in turn."""
        found, pending = {}, list(stmts)
        while pending:
            for n in gast.walk(pending.pop()):
                callee = self.calls.get(n) if isinstance(n, gast.Call) else None
                if callee is not None and hasattr(callee, "body") and id(callee) not in found:
                    found[id(callee)] = callee
                    pending.extend(callee.body)
        return list(found.values())

    def names_read(self, stmts) -> set:
        """The names ``stmts`` read, those of the functions they inline included, except an array
        whose element a plain assignment stores (``out[i] = ...``; ``out[i] += ...`` reads it)."""
        names = set()
        for body in [stmts] + [c.body for c in self.inlined_callees(stmts)]:
            stored_into = set()
            for s in (n for st in body for n in gast.walk(st) if isinstance(n, gast.Assign)):
                for target in s.targets:
                    for t in target.elts if isinstance(target, gast.Tuple) else [target]:
                        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                            stored_into.add(id(t.value))
            names |= {n.id for st in body for n in gast.walk(st)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in stored_into}
        return names

    def checks_first(self, loop, start, step, count, counter_bits, run_position) -> None:
        """The three parts, chunk by chunk of CHUNK positions (a check that fails early costs at
        most one chunk's first part; the second part reads what the first left in the cache);
        ``run_position(k)`` emits the body at position ``k``."""
        entry = dict(self.refined)
        at = T.alloc_buffer((1,), I64, scope="global")
        going = T.alloc_buffer((1,), "bool", scope="global")
        T.buffer_store(at, tirx.const(0, I64), [0])
        T.buffer_store(going, tirx.const(True, "bool"), [0])
        with T.While(tirx.And(going[0], at[0] < count)), self.scope():
            base = self.bind(at[0], I64)
            n = self.bind(tirx.min(count - base, tirx.const(CHUNK, I64)), I64)
            first = T.alloc_buffer((1,), I64, scope="global")
            T.buffer_store(first, n, [0])
            saved = self.save_variables(loop)
            kept, position_ok = (self.ok, self.check_mode, self.array_stores_left_out), T.alloc_buffer(
                (1,), "bool", scope="global")
            self.ok, self.check_mode, self.array_stores_left_out = position_ok, "find", True
            try:
                with T.serial(tirx.const(0, I64), n) as k, self.scope():
                    T.buffer_store(position_ok, tirx.const(True, "bool"), [0])
                    run_position(base + k)
                    T.buffer_store(first, tirx.min(first[0], tirx.Select(position_ok[0], n, k)), [0])
            finally:
                self.ok, self.check_mode, self.array_stores_left_out = kept
            self.restore_variables(saved)
            self.refined = dict(entry)
            clean = self.bind(first[0], I64)
            kept_mode, self.check_mode = self.check_mode, "trusted"
            try:
                with T.serial(tirx.const(0, I64), clean) as k, self.scope():
                    run_position(base + k)
            finally:
                self.check_mode = kept_mode
            self.refined = dict(entry)
            with T.If(clean < n):
                with T.Then(), self.scope():
                    failing = base + clean
                    self.checked_loop(loop, start + failing * step, step, count - failing, counter_bits)
                    T.buffer_store(going, tirx.const(False, "bool"), [0])
            self.refined = dict(entry)
            T.buffer_store(at, base + n, [0])

    def save_variables(self, loop) -> list:
        """Copies of the locals (values, type tags, bound flags) of the names ``loop`` assigns."""
        from ...frontend.loops import assigned_names

        saved = []
        for name in sorted(assigned_names(loop)):
            var = self.variables.get(name)
            if var is None:
                continue
            for buf in (var.buffer, var.tag, self.bound_flags.get(name)):
                if buf is not None:
                    copy = T.alloc_buffer(buf.shape, buf.dtype, scope="global")
                    for j in range(int(buf.shape[0])):
                        T.buffer_store(copy, buf[j], [j])
                    saved.append((buf, copy))
        return saved

    @staticmethod
    def restore_variables(saved) -> None:
        for buf, copy in saved:
            for j in range(int(buf.shape[0])):
                T.buffer_store(buf, copy[j], [j])


def _divides_by_a_variable(node, calls) -> bool:
    """``x // d``, ``x % d`` or ``divmod(x, d)`` with ``d`` not a constant: an int division stays behind
    its zero check in part 1 (LLVM does not run a division that may trap ahead of its test)."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.FloorDiv | gast.Mod):
        return not isinstance(node.right, gast.Constant)
    if isinstance(node, gast.Call) and calls.get(node) == "divmod" and len(node.args) == 2:
        return not isinstance(node.args[1], gast.Constant)
    return False
