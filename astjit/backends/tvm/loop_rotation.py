"""Array names a loop rotates: ``u_prev, u, u_next = u, u_next, u_prev`` or ``u, v = v, u`` at the end of
a time step, the ping-pong buffers of stencil and wave codes.

Python rebinds the names; the arrays stay where they are, and a write through a name reaches whichever
array it holds at that moment. The kernel does the same without moving data: the rotation makes the
names a permutation of the same arguments, which repeats after a few iterations (its *period*: 2 for a
swap, 3 for a three-way rotation). The loop body is lowered once per phase, each time with the names
bound to the buffers they hold in that phase, and a phase variable picks the copy at each iteration;
the rotation statement itself only sets the next phase. After the loop each live-out name hands back
the argument it holds in the final phase: the same object as in Python.

It applies where the rotation is one tuple assignment at the top of the outermost loop's body, its
values a permutation of its targets, all of them array arguments of one dtype, rank and layout that the
loop rebinds nowhere else (a ``while`` test must not read them: it is evaluated before the phase's
copy). Their shapes must be equal (checked where the kernel starts; otherwise the loop runs as Python),
so that an index proven in bounds of one name's extent is in bounds of every array the name may hold.
"""

from dataclasses import dataclass

import gast
from tvm import tirx
from tvm.script.ir_builder import tirx as T

from ...frontend.loops import assigned_names
from .loop_rows import I64

MOST_PHASES = 6           # a rotation that repeats later than this keeps the loop in Python


@dataclass(frozen=True)
class Rotation:
    statement: object      # the tuple assignment (a node of the loop's body)
    members: tuple         # the names rotated, in the order of the statement's targets
    bindings: tuple        # per phase: {name: the member whose argument it holds}


@dataclass
class RotatedArray:
    """A live-out name of a rotation: its status slot says which member's argument it holds."""
    name: str
    members: tuple


def find_rotation(loop, array_types) -> Rotation | None:
    """The rotation at the top of ``loop``'s body, or None where it has none this module can lower."""
    candidates = [s for s in loop.body if _is_name_permutation(s)]
    if len(candidates) != 1:
        return None
    s = candidates[0]
    targets = [t.id for t in s.targets[0].elts]
    values = [v.id for v in s.value.elts]
    types = {array_types.get(n) for n in targets}
    if None in types or len(types) != 1:
        return None
    stores = [n.id for n in gast.walk(loop) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
    if any(stores.count(n) != 1 for n in targets):          # rebound elsewhere too
        return None
    if isinstance(loop, gast.While) and any(isinstance(n, gast.Name) and n.id in targets
                                            for n in gast.walk(loop.test)):
        return None
    step = dict(zip(targets, values))
    bindings = [{n: n for n in targets}]
    while True:
        last = bindings[-1]
        following = {t: last[step[t]] for t in targets}
        if following == bindings[0]:
            break
        if len(bindings) == MOST_PHASES:
            return None
        bindings.append(following)
    return Rotation(s, tuple(targets), tuple(bindings))


def _is_name_permutation(s) -> bool:
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Tuple)
            and isinstance(s.value, gast.Tuple)):
        return False
    targets, values = s.targets[0].elts, s.value.elts
    if not all(isinstance(e, gast.Name) for e in targets + values):
        return False
    names = [t.id for t in targets]
    return len(set(names)) == len(names) >= 2 and sorted(names) == sorted(v.id for v in values) \
        and names != [v.id for v in values]


class RotatedArrays:
    """The part of LoopLowering (backends/tvm/loops) that lowers a rotation of array names."""

    def rotated_names(self) -> set:
        return set(self.rotation.members) if self.rotation is not None else set()

    def start_rotation(self) -> None:
        """At the kernel's start: the phase, and a bail where the rotated arrays differ in shape."""
        if self.rotation is None:
            return
        self.phase = T.alloc_buffer((1,), I64, scope="global")
        T.buffer_store(self.phase, tirx.const(0, I64), [0])
        first, *others = (self.own_arrays[n] for n in self.rotation.members)
        for buf in others:
            for a, b in zip(first.shape, buf.shape):
                self.bail_if(tirx.NE(a, b))

    def loop_body(self, loop, emit) -> None:
        """``emit()`` lowers ``loop``'s body; for the rotating loop, once per phase, each copy with the
        names bound as in its phase and run where the phase variable says."""
        if self.rotation is None or loop is not self.loop:
            emit()
            return
        before = dict(self.refined)

        def phase(k):
            self.refined = dict(before)
            self.bind_phase(k)
            emit()

        def chain(k):
            if k == len(self.rotation.bindings) - 1:
                phase(k)
                return
            with T.If(tirx.EQ(self.phase[0], tirx.const(k, I64))):
                with T.Then(), self.scope():
                    phase(k)
                with T.Else(), self.scope():
                    chain(k + 1)

        chain(0)
        self.bind_phase(0)
        self.rotation_phase = None
        self.refined = before
        self.forget_refinements(assigned_names(loop))

    def bind_phase(self, k) -> None:
        self.rotation_phase = k
        for name, member in self.rotation.bindings[k].items():
            self.arrays[name] = self.own_arrays[member]

    def rotate(self, s) -> None:
        """The rotation statement in the copy of phase ``k``: the names take phase ``k + 1``'s arrays."""
        if self.rotation_phase is None:
            raise self.refusal("a rotation of array names outside its loop's body", s)
        following = (self.rotation_phase + 1) % len(self.rotation.bindings)
        T.buffer_store(self.phase, tirx.const(following, I64), [0])
        self.bind_phase(following)

    def store_rotation_results(self, outs) -> None:
        """Each rotated live-out name's slot: the index (in ``members``) of the argument it holds."""
        if self.rotation is None:
            return
        members, bindings = self.rotation.members, self.rotation.bindings
        for k, var in enumerate(outs):
            if not isinstance(var, RotatedArray):
                continue
            held = [tirx.const(members.index(b[var.name]), I64) for b in bindings]
            index = held[-1]
            for p in range(len(bindings) - 2, -1, -1):
                index = tirx.Select(tirx.EQ(self.phase[0], tirx.const(p, I64)), held[p], index)
            self.store_slot(k, index)
