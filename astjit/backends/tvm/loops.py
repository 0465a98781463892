"""Lower a loop region (frontend/loops) to one TIR function: the whole loop nest in one kernel call.

The function is built with TVM's IR builder. Each ``for ... in range`` becomes a ``while`` over an
iteration counter (``break`` and ``continue`` become flags in its test), each scalar variable a
one-element local buffer (LLVM keeps it in a register), each array argument a buffer with symbolic
extents and strides, so one kernel serves every length and memory layout.

What Python would raise is checked where Python raises it, in the same order: an index out of bounds,
a division by zero of Python numbers, a ``math`` domain error, a Python int that does not fit the
array it is stored in. A failed check records which one in the ``status`` buffer and stops the kernel
before the statement has any effect, so the arrays hold what Python would have left; the runner then
raises the same exception (runtime/loop_fragment). Python ints are int64 here: where a result could
leave that range, the kernel checks it and stops with an OverflowError that says so (plain Python
would have gone on with a larger int).
"""

import ast
import copy
import functools
import math
import operator
import os
import struct
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field

import gast
import numpy as np

from ...errors import Unsupported
from ...frontend.inline import Inlined, inlined_names
from ...frontend.loops import (
    CHAIN_AXES,
    MATH_BINARY,
    MATH_FUNCTIONS,
    MATH_TO_INT,
    assigned_in_body,
    assigned_names,
    constant_items,
    index_items,
    is_divmod,
    rebound_names,
    return_values,
    shape_axis,
)
from ...frontend.lower import attribute_of
from ...runtime.fragment import UNBOUND
from ...runtime.keys import tuple_key
from ...runtime.plain_attribute import NOT_PLAIN
from . import loop_complex as cx
from . import loop_spans as spans
from . import scalar_math as sm
from .loop_arrays import LocalArray, LocalArrays, written_in_place
from .loop_bounds import (
    IndexBounds,
    Interval,
    element_accesses,
    has_jumps,
    has_nested_loops,
    has_while,
    in_bounds_conditions,
    nested_counters,
    walk_nest,
)
from .loop_checks_first import ChecksFirst
from .loop_complex import ComplexValues, Pair
from .loop_dots import RowDots
from .loop_lists import AppendedLists
from .loop_named_rows import NamedRows, named_row_sites
from .loop_reductions import RowReductions, reduction_operand
from .loop_rotation import RotatedArray, RotatedArrays, find_rotation
from .loop_rows import RowStatements, ScalarLeaf, is_row_statement
from .loop_settling import SettlingTypes
from .loop_types import (
    BINARY,
    COMPARE,
    PYTHON_DTYPES,
    UFUNC_OF_BINARY,
    UFUNC_OF_COMPARE,
    Array,
    Scalar,
    holds_ints_as_floats,
    ordered,
    possible_results,
    quietly,
    storage_dtype,
    type_of_result,
    type_of_sequence,
    type_of_value,
)
from .runtime import tvm_module
from .support import UFUNC_RULES, numpy_loop_faster, svml_faster

tvm = tvm_module()
from tvm import tirx  # noqa: E402
from tvm.script.ir_builder import IRBuilder  # noqa: E402
from tvm.tirx.script import builder as T  # noqa: E402

I64 = "int64"
SAFE_BITS = 62                 # range() arguments stay below 2**62 (checked where not known)
EXTENT_BITS = 48               # array extents and incoming int64s below 2**48 (else the loop runs as Python)
BITS_PASSES = 3                # builds that tighten bounds on int variables (counters of counters)
MOST_TYPE_PASSES = 64          # builds before the types of the loop's variables must have settled
INT64 = np.iinfo(np.int64)
FLOAT_INT_LIMIT = float(2**63 - 2**13)   # a float estimate at or above this may be out of int64's range
EXACT_FLOAT_BITS = 53
EXACT_FLOAT_INT = 2**EXACT_FLOAT_BITS   # ints below this convert to float64 exactly (int/int, int < float)

# status buffer: [site + 1 (0: finished, BAIL: not started, run the Python), value, value, value,
# then per live-out name: its value's bits as int64, the index of its type]; one buffer, because each
# array argument costs a conversion on every call
STATUS_SIZE = 8                # status[0]: what stopped the kernel; then values for its message
SLOTS_PER_VALUE = 3            # a live-out value's bits, the index of its type, a complex one's imaginary part
BAIL = -1
RETURNED = -2                  # status[0] where the loop executed ``return`` (not an error)


class _Stale(Exception):
    """A variable read before this pass knows its type: build again with the types seen so far."""

    def __init__(self, name, node):
        super().__init__(name)
        self.name = name
        self.node = node


@dataclass
class ErrorSite:
    """One place the kernel may stop: what Python raises there, built from the status values."""
    line: int
    raise_: object                 # callable(values) -> an exception instance
    filename: str | None = None    # a line of an inlined function's file (else the loop's)
    function: str | None = None    # that inlined function's name (else the loop's function)
    callers: tuple = ()            # the calls of inlined functions it is in (frontend/inline.renamed_callee)


@dataclass
class Val:
    """A lowered scalar: its expression, the types it may have and, if several, which one (``tag``,
    an int8 index into ``types``). ``bits``: a bound on an int's magnitude (2**bits), where known."""
    expr: object
    types: tuple
    tag: object = None
    bits: int | None = None
    span: tuple | None = None      # (lo, hi) of an int value, where known (loop_spans)
    ub: tuple | None = None        # (extent key, k, c): at most k * extent + c (loop_spans)

    @property
    def dtype(self) -> str:
        return storage_dtype(self.types)


@dataclass
class Variable:
    name: str
    buffer: object
    dtype: str
    types: tuple
    tag: object = None             # int8 local buffer: index into types, when there are several


@dataclass
class LoopKernel:
    func: object
    arrays: list                    # names of the array arguments, in order
    scalars: list                   # (name, dtype) of the scalar arguments, in order
    outputs: list                   # Variable of each live-out name, in order
    sites: list = field(default_factory=list)
    stores: set = field(default_factory=set)     # arrays the loop writes
    locals: list = field(default_factory=list)   # LocalArraySpec of each local array (loop_arrays)
    groups: list = field(default_factory=list)   # names that must share one shape, per local array group
    returns: object = False         # values a ``return`` gives back (the last outputs); None: nothing;
    #                                 False: the loop has no ``return``
    blas_libraries: list = field(default_factory=list)   # libraries of the BLAS functions it calls (loop_dots)
    # arrays the runner checks are aligned, else the loop's Python runs:
    aligned_arrays: list = field(default_factory=list)   # those a BLAS dot reads (numpy copies a misaligned one)
    # those a float sum reads, where they hold more than BUFFER elements (numpy adds a misaligned array's
    # elements in buffers of BUFFER, not pairwise over the row)
    summed_arrays: list = field(default_factory=list)
    sequences: dict = field(default_factory=dict)        # name -> Sequence: a tuple or list the runner converts
    appended: list = field(default_factory=list)         # (name, Scalar) per list the loop appends to (loop_lists)
    unbound_after: frozenset = frozenset()               # live-outs read back as UNBOUND where not bound
    # the kernel may stop after writing arrays where Python goes on (an int beyond int64): the runner
    # copies the arrays it writes before a call (runtime/loop_fragment) and puts them back before running
    # the loop's Python
    restores: bool = False
    bails: bool = False             # it may stop where Python goes on (then the loop's Python runs instead)
    # it applies a function over rows that numpy's SVML loop runs faster (support.svml_faster), or
    # divides a row of ints by one number (numpy's SIMD division by a constant: a row of 10,000 int64
    # ``// 7`` 3.5x faster than the kernel's): the runner times it against the loop's Python
    # (runtime/loop_weighing)
    weigh: bool = False


class LoopLowering(RowStatements, RowReductions, RowDots, LocalArrays, RotatedArrays, NamedRows, AppendedLists,
                   ComplexValues, SettlingTypes, ChecksFirst):
    def __init__(self, loop, live_in, live_out, args, calls, entry_facts=None, resume_at=0, returns=False,
                 unbound_after=()):
        self.loop = loop
        self.unbound_after = set(unbound_after)    # live-outs only the loop may bind: a flag says if it did
        self.bound_flags = {}                      # (per build: name -> its int8 flag)
        self.broke = {}                            # id of a ``for ... else`` -> whether a break of it ran
        self.resume_at = resume_at             # positions of the outer ``for`` that ran as Python first
        self.entry_facts = entry_facts or {}
        self.live_in = live_in
        # a ``return`` in the loop assigns its values to variables of their own, read back after the
        # live-out values (``returns``: how many; None for a return of nothing; False: no return)
        self.loop_returns = returns
        self.return_names = [f"__astjit_return_{k}" for k in range(returns or 0)]
        self.live_out = list(live_out) + self.return_names
        self.calls = calls
        self.incoming = {}
        self.array_types = {}
        self.sequences = {}                        # name -> Sequence (loop_types): taken as a 1-d array
        self.sequence_lengths = {}                 # name -> length of a short tuple (runtime/keys)
        self.find_appended_lists(live_in, args)
        self.status_fixed = STATUS_SIZE + SLOTS_PER_VALUE * len(self.live_out)   # (then the lists' counts and values)
        local_callees = {c.name for c in calls.values() if isinstance(c, Inlined)}
        bodies = [loop] + [s for c in calls.values() if isinstance(c, Inlined) for s in c.body]
        read = {n.id for b in bodies for n in gast.walk(b) if isinstance(n, gast.Name)}
        for name, value in zip(live_in, args):
            if name in self.list_names():
                continue
            if value is NOT_PLAIN:
                raise _no(f"{attribute_of(name)} is not a plain attribute "
                          "here (a property, a missing attribute or a proxy object): Python reads it as written")
            seq = type_of_sequence(value)
            if seq is not None:
                self.sequences[name] = seq
                if type(value) is tuple and tuple_key(value).length is not None:
                    self.sequence_lengths[name] = len(value)      # (the kernel's key holds it)
                self.array_types[name] = Array(seq.dtype, 1, True)
                continue
            t = type_of_value(value)
            if t is None and name in local_callees and callable(value):
                continue                       # a function defined in the caller, inlined where called
            if t is None and name not in read:
                continue                       # an object whose attributes come in read (plain_attribute)
            if t is None:
                raise _no(f"{name!r} is a {type(value).__name__}"
                                  + (f" of {value.dtype}" if isinstance(value, np.ndarray) else "")
                                  + ", which a compiled loop cannot take")
            if isinstance(t, Array):
                self.array_types[name] = t
            else:
                self.incoming[name] = t
        assigned = (assigned_names(loop) | inlined_names(calls) | set(self.return_names)
                    | {lst.variable for lst in self.lists})
        # an array argument the loop rebinds (``v = v + dt * a``) becomes a local array the runner
        # allocates; one it only updates in place (``v += dt * a``) stays the caller's array
        # arguments whose names the loop only rotates (``u, v = v, u``) stay the caller's (loop_rotation)
        self.rotation = find_rotation(loop, self.array_types)
        self.incoming_locals = (rebound_names(loop) - self.rotated_names()) & set(self.array_types)
        self.local_types = {n: (self.array_types[n].dtype, self.array_types[n].ndim) for n in self.incoming_locals}
        self.assigned = assigned - set(self.array_types)
        self.var_types = {n: {t} for n, t in self.incoming.items()}
        self.check_sequence_uses(bodies)
        # a loop that writes no array leaves nothing behind where it stops (the values it appends to lists
        # are the runner's to append, after the call: dropped where it stops early): where one of its
        # Python ints would leave int64 (a factorial, a big Fibonacci number), the runner runs the whole
        # loop as Python instead of raising (exact big ints, as Python computes them); where a list's
        # room runs out in a loop whose trip count is not known, the kernel runs again with more room
        self.effect_free = not any(
            isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
            or isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and n.target.id in self.array_types
            for b in bodies for n in gast.walk(b))
        for n in (n for b in bodies for n in gast.walk(b)):   # range() gives Python ints, a tuple its items' type
            if isinstance(n, gast.For):
                self.var_types.setdefault(n.target.id, set()).add(counter_type(n))
        self.var_bits = {}                         # name -> bound on an int variable's magnitude
        self.var_spans = {}                        # name -> (lo, hi) of an int64 variable (loop_spans)
        self.var_ubs = {}                          # name -> its bound by an extent (loop_spans)
        self.counting_steps = spans.counting_steps(bodies)   # name -> {id of ``c += 1``: increment}
        self.counters = set()                      # names whose span is a counter's (loop_spans)
        self.final = False                         # the last build: the bounds seen are trusted
        self.scratch_wanted = set()                # arrays a row statement copies through scratch
        self.locals_grown = False                  # a pass found a new local array (loop_arrays)
        self.blas_wanted = set()                   # arrays a BLAS dot product reads (loop_dots)
        self.blas_checked = set()                  # those whose strides this build's start checks
        self.blas_libraries = set()                # the libraries of the BLAS functions it calls
        self.summed_arrays = set()                 # arrays a float sum reads as they are (loop_reductions)
        self.in_place = written_in_place([loop], calls)
        self.named_row_sizes = {}                  # name -> {dtype: slots} its named row keeps (loop_named_rows)
        self.materialized_needs = {}               # key -> (dtype, arrays read) of a row a dot computes first
        callee_bodies = {id(c): c.body for c in calls.values() if isinstance(c, Inlined)}
        self.named_row_sites = named_row_sites([[loop], *callee_bodies.values()], set(self.live_out),
                                               set(live_in))

    def check_sequence_uses(self, bodies) -> None:
        """A tuple or list argument is only read by an integer index or measured by ``len()``: any other
        use (``c * 2`` repeats a tuple, ``c.count``, passing it to a function, a slice, a write) keeps
        the loop in Python."""
        if not self.sequences:
            return
        for node in (n for b in bodies for n in gast.walk(b)):
            for field_name, child in gast.iter_fields(node):
                for c in child if isinstance(child, list) else [child]:
                    if not (isinstance(c, gast.Name) and c.id in self.sequences):
                        continue
                    if isinstance(node, gast.Subscript) and field_name == "value" and isinstance(
                            node.ctx, gast.Load) and not isinstance(node.slice, gast.Slice | gast.Tuple):
                        continue
                    if isinstance(node, gast.Call) and self.calls.get(node) == "len" and len(node.args) == 1:
                        continue
                    kind = self.sequences[c.id].container.__name__
                    raise _no(f"{c.id!r} is a {kind}, which a compiled loop only reads by an index or "
                              "measures with len()", c)

    # -- driver ---------------------------------------------------------------------------------
    def lower(self) -> LoopKernel:
        """Build until the variables' types settle: a type assigned late in the body (``s = 0`` then
        ``s += a[i]``) is seen by the reads of the next pass. Then build once more with the bounds on
        int variables that pass saw (counters, extents): those bounds were found with every variable
        unbounded, so they hold for any bounds they are built with, and the last build may trust them
        instead of checking each index computation for int64 overflow."""
        # (a pass sees the types its reads found assigned by the previous one: a chain of temporaries
        # through inlined calls, ``k2 = f(y + h * k1)``, settles one link per pass)
        for _ in range(min(8 + len(self.assigned), MOST_TYPE_PASSES)):
            kernel, stale = self.build_pass()
            grown, self.locals_grown = self.locals_grown, False
            for name, types in self.seen.items():
                if not types <= self.var_types.setdefault(name, set()):
                    self.var_types[name] |= types
                    grown = True
            if not grown:
                if kernel is None:
                    raise _no(f"{stale.name!r} is read before the loop assigns it", stale.node)
                self.tighten_bits()
                self.infer_spans()
                self.final = True
                kernel, _ = self.build_pass()
                if self.blas_wanted != self.blas_checked:     # (a dot first seen in this build)
                    kernel, _ = self.build_pass()
                return kernel
        raise _no("the types of the loop's variables do not settle")

    def tighten_bits(self, passes=BITS_PASSES) -> None:
        """Bounds on int variables, each pass reading the previous pass's: a bound found from true
        bounds is true, so each pass's hold; a later pass sees more (``for i in range(1, n - 1)``:
        the first pass reads ``n`` unbounded, so ``i`` gets 2**62; the next reads ``n < 2**48``, so
        ``i < 2**49`` and ``u[i - 1, j]`` can be proven in bounds at the inner loop's entry)."""
        self.var_bits = dict(self.seen_bits)
        for _ in range(passes):
            self.build_pass()
            if self.seen_bits == self.var_bits:
                return
            self.var_bits = dict(self.seen_bits)

    def infer_spans(self, passes=10) -> None:
        """Spans of the int64 variables, guessed and checked (loop_spans): each build reads the guesses
        and records what is assigned; a guess every assignment keeps to holds throughout the loop."""
        guesses = {n: spans.FIRST_GUESS for n, var in self.variables.items() if _int64_variable(var)}
        counters, increments, widened = set(), {}, {}
        for _ in range(passes):
            self.counters = set(counters)
            self.var_spans = {**guesses, **{n: spans.counter_span(guesses[n], increments.get(n)) for n in counters}}
            self.build_pass()
            wider = {}
            for name, guess in guesses.items():
                seen = self.seen_spans.get(name)
                if name in counters:
                    new = spans.widen_counter(guess, seen, increments.get(name))
                else:
                    new = guess if seen is not None and spans.meet(seen, guess) == seen else spans.widen(guess, seen)
                if name not in counters and new != guess:
                    widened[name] = widened.get(name, 0) + 1
                    if (name in self.counting_steps and new is not None and self.seen_increments.get(name)
                            and widened[name] >= spans.COUNTER_AFTER):
                        counters.add(name)        # it keeps growing by its steps: a counter from now on
                        new = guess
                if new is not None:
                    wider[name] = new
            # a counter whose other values leave COUNTER_BASE is one no more (from the next build)
            kept = {n for n in counters if n in wider and spans.within(
                self.seen_base_spans.get(n, spans.COUNTER_BASE), spans.COUNTER_BASE)}
            seen_increments = {n: self.seen_increments.get(n) for n in kept}
            if wider == guesses and kept == counters and seen_increments == {n: increments.get(n) for n in kept}:
                self.infer_extent_bounds()
                return
            guesses, counters, increments = wider, kept, seen_increments
        self.var_spans = {}
        self.counters = set()

    def infer_extent_bounds(self, passes=4) -> None:
        """Bounds of int64 variables by an extent (loop_spans), with the spans settled: the first guess
        is what a build reading none of them sees assigned, leaving out values it knows nothing of;
        a variable whose guess an assignment exceeds loses it, until the rest hold."""
        self.var_ubs = {}
        self.build_pass()
        guesses = {n: spans.ub_join(terms, optimistic=True) for n, terms in self.seen_ub_terms.items()}
        guesses = {n: ub for n, ub in guesses.items() if ub is not None and n in self.var_spans}
        for _ in range(passes):
            if not guesses:
                break
            self.var_ubs = dict(guesses)
            self.build_pass()
            kept = {n: ub for n, ub in guesses.items()
                    if spans.ub_within(spans.ub_join(self.seen_ub_terms.get(n, [(None, None)])), ub)}
            if kept == guesses:
                return
            guesses = kept
        self.var_ubs = {}

    def build_pass(self):
        self.seen = {n: set() for n in self.assigned}
        self.seen_bits = {}
        self.seen_spans = {}
        self.seen_base_spans = {}          # of a counter: the span of its values other than its steps
        self.seen_increments = {}          # of a stepped variable: the span of its steps' increments
        self.seen_ub_terms = {}
        try:
            return self.build(), None
        except _Stale as exc:
            return None, exc

    def build(self) -> LoopKernel:
        self.sites = []
        self.checks_emitted = 0      # fail() calls so far: a branch of an expression that may stop (carried_checks)
        self.stores = set()
        self.restores = False                  # (fail: a site where Python goes on, after effects)
        self.bails = False                     # (fail: a site where Python goes on)
        self.array_origin = {}                 # an inlined function's array parameter -> the loop's array
        self.unchecked = set()                 # (access node id, axis) proven in bounds
        self.wrapped = set()                   # those of them proven in -extent ... extent - 1: wrapped
        self.clean_loops = {}                  # counted_if_clean's answers in this build
        self.positive_divisors = set()         # ids of ``x % d`` nodes with d proven positive
        self.flags = []                        # per enclosing loop: (break buffer, continue buffer)
        self.refined = {}                      # name -> (span, ub) of its value here: from its assignment
        #                                        or a test that holds (loop_spans.refine), until reassigned
        self.compared = {}                     # id of a one-operator comparison -> (op, left Val, right Val)
        self.counter_spans = {}                # id of a for loop -> span of its variable
        self.returns = []                      # per enclosing inlined call: what ``return`` does
        self.scratch_buffers = {}              # array buffer -> its scratch buffer (loop_rows)
        self.shape_parent = {}                 # local arrays and the arrays they must match (loop_arrays)
        self.named_rows = {}                   # name -> NamedRow it holds here (loop_named_rows)
        self.row_op_nodes = set()              # ids of the nodes lowered elementwise over rows (loop_rows)
        self.in_place_ops = set()              # ids of the operations of ``x += ...`` on rows (loop_rows)
        self.numpy_faster_rows = False         # numpy's loop may beat the kernel's over some rows (LoopKernel.weigh)
        self.pending = [[]]
        self.start_settling_record()
        self.start_access_record()
        with IRBuilder() as ib:
            with T.prim_func(), self.scope():
                T.func_name("main")
                self.arrays = {}
                for name, (dtype, ndim, compact) in [(n, (t.dtype, t.ndim, t.contiguous))
                                                     for n, t in self.array_types.items()
                                                     if n not in self.incoming_locals] + [
                        (n, (dtype, ndim, False)) for n, (dtype, ndim) in sorted(self.local_types.items())]:
                    shape = ([tirx.const(self.sequence_lengths[name], I64)] if name in self.sequence_lengths
                             else [tirx.Var(f"{name}_n{k}", I64) for k in range(ndim)])
                    strides = [tirx.Var(f"{name}_s{k}", I64) for k in range(ndim)]
                    if compact:
                        # C-contiguous: unit steps along the last axis, which LLVM then knows (vector
                        # loads and stores). (Declaring the whole array compact, rows n1 apart, made a
                        # binary search over 16 MB rows 2-5x slower; this form is as fast elsewhere.)
                        strides[-1] = tirx.const(1, I64)
                    # (an offset named here: TVM's own names for it follow set order, which varies from
                    # process to process, and the function's text is its disk cache key)
                    offset = tirx.Var(f"{name}_offset", I64)
                    self.arrays[name] = T.arg(name, T.Buffer(shape, dtype, strides=strides, elem_offset=offset,
                                                             align=1, offset_factor=1))
                self.own_arrays = dict(self.arrays)   # (each name's own buffer; a rotation rebinds names)
                self.rotation_phase = None
                params = {}
                for name, t in self.incoming.items():
                    if cx.is_complex(t.dtype):          # (the runner passes its two parts)
                        params[name] = Pair(*(T.arg(f"{name}_{part}", tirx.Var(f"{name}_{part}", cx.part_dtype(t.dtype)))
                                              for part in cx.PARTS))
                    else:
                        params[name] = T.arg(name, tirx.Var(name, t.dtype))
                status_size = tirx.Var("status_n", I64) if self.lists else self.status_fixed
                self.status = T.arg("status", T.Buffer((status_size,), I64, align=1))
                self.variables = {}
                for name in sorted((set(self.incoming) | self.assigned) - set(self.local_types)):
                    types = ordered(self.var_types.get(name) or {Scalar("float64", True)})
                    dtype = storage_dtype(types)
                    buf = cx.local_buffer(dtype)
                    tag = T.alloc_buffer((1,), "int8", scope="global") if len(types) > 1 else None
                    self.variables[name] = Variable(name, buf, dtype, types, tag)
                rotated = self.rotated_names()
                outs = [self.variables.get(name) or (RotatedArray(name, self.rotation.members) if name in rotated
                                                     else LocalArray(name)) for name in self.live_out]
                self.allocate_scratch()
                self.allocate_named_row_slots()
                self.ok = T.alloc_buffer((1,), "bool", scope="global")
                T.buffer_store(self.ok, tirx.const(True, "bool"), [0])
                self.bound_flags = {}
                for name in sorted(self.unbound_after):
                    if name not in self.variables:
                        raise _no(f"{name!r}, an array the loop binds, may be unbound after the loop", self.loop)
                    self.bound_flags[name] = T.alloc_buffer((1,), "int8", scope="global")
                    T.buffer_store(self.bound_flags[name], tirx.const(0, "int8"), [0])
                T.buffer_store(self.status, tirx.const(0, I64), [0])
                for k, var in enumerate(outs):           # (the runner reuses its status buffers)
                    if isinstance(var, LocalArray):
                        self.store_slot(k, tirx.const(0, I64))
                self.zero_append_counts()
                self.bail_on_huge_extents()
                self.bail_on_blas_strides()
                self.start_rotation()
                for name, t in self.incoming.items():
                    var = self.variables[name]
                    cx.store_local(var.buffer, _cast(params[name], t.dtype, var.dtype), var.dtype)
                    self.note_bits(name, self.incoming_bits(params[name], t))
                    self.note_span(name, *self.incoming_facts(name, t))
                    if var.tag is not None:
                        T.buffer_store(var.tag, tirx.const(var.types.index(t), "int8"), [0])
                self.check_append_room()
                with T.If(self.ok[0]):
                    with T.Then(), self.scope():
                        self.statement(self.loop)
                self.store_rotation_results(outs)
                for k, var in enumerate(outs):
                    if isinstance(var, LocalArray | RotatedArray):
                        continue                     # its slot says whether it was rebound (loop_arrays)
                    if cx.is_complex(var.dtype):    # its parts as float64s, the imaginary one after the tag
                        part = cx.part_dtype(var.dtype)
                        self.store_slot(k, _bits_as_int64(_cast(var.buffer[0], part, "float64"), "float64"))
                        T.buffer_store(self.status, _bits_as_int64(_cast(var.buffer[1], part, "float64"),
                                                                   "float64"), [status_slot(k) + 2])
                    else:
                        self.store_slot(k, _bits_as_int64(var.buffer[0], var.dtype))
                    tag = (var.tag[0] if var.tag is not None else tirx.const(0, "int8")).astype(I64)
                    if var.name in self.bound_flags:          # -1: the loop did not bind it
                        tag = tirx.Select(tirx.EQ(self.bound_flags[var.name][0], tirx.const(0, "int8")),
                                          tirx.const(-1, I64), tag)
                    T.buffer_store(self.status, tag, [status_slot(k) + 1])
        if self.stores & self.rotated_names():   # (a write through a rotated name may reach any of them)
            self.stores |= self.rotated_names()
        return LoopKernel(ib.get(), [n for n in self.array_types if n not in self.incoming_locals],
                          [(n, t.dtype) for n, t in self.incoming.items()], outs, self.sites, self.stores,
                          self.local_arrays(), self.shape_groups(), self.loop_returns, sorted(self.blas_libraries),
                          sorted(self.blas_checked), sorted(self.summed_arrays), dict(self.sequences), self.appended_types(),
                          frozenset(self.unbound_after), self.restores and bool(self.stores), self.bails,
                          self.numpy_faster_rows)

    def store_slot(self, k, value) -> None:
        """``value`` into the status slot of live-out value ``k``."""
        T.buffer_store(self.status, value, [status_slot(k)])

    def mark_rebound(self, k) -> None:
        """The status slot of live-out name ``k``: 1 once its local array holds a value the loop made."""
        self.store_slot(k, tirx.const(1, I64))

    def stale(self, name, node) -> Exception:
        return _Stale(name, node)

    def incoming_bits(self, param, t: Scalar):
        """A bound on an incoming int: its dtype's, or 2**48 for a Python int or int64 (a larger one
        makes the loop run as Python, like a huge extent: rare, and the bound spares the checks of
        index arithmetic on such ints)."""
        if t.kind == "b":
            return 1
        if t.kind not in "iu" or t.dtype == "uint64":
            return None
        if t.dtype != I64:
            return np.iinfo(t.dtype).bits - (t.kind == "i")
        limit = tirx.const(2**EXTENT_BITS, I64)
        self.bail_if(tirx.Or(param >= limit, param <= tirx.const(0, I64) - limit))
        return EXTENT_BITS

    def incoming_facts(self, name, t: Scalar):
        """(span, extent bound) of an incoming scalar: its type's range, or what the statements before
        the loop say (frontend/entry_facts: ``hi = len(a)`` is ``a``'s extent on entry)."""
        span = _incoming_span(t)
        fact = self.entry_facts.get(name)
        if fact is None or t.kind not in "iu" or t.dtype == "uint64":
            return span, None
        if fact[0] == "const":
            return spans.meet(span, (fact[1], fact[1])), None
        _, array, axis, c = fact
        buf = self.arrays.get(array)
        if buf is None or array in self.local_types or not -len(buf.shape) <= axis < len(buf.shape):
            return span, None
        return spans.meet(span, (c, spans.EXTENT[1] + c)), ((array, axis % len(buf.shape)), 1, c)

    def bail_on_huge_extents(self) -> None:
        """Arrays with an extent of 2**48 or more (only empty or broadcast ones can) run as Python, so
        that index arithmetic on extents and counters stays far from int64's limits."""
        limit = tirx.const(2**EXTENT_BITS, I64)
        huge = tirx.const(False, "bool")
        for buf in self.arrays.values():
            for extent in buf.shape:
                huge = tirx.Or(huge, extent >= limit)
        self.bail_if(huge)

    def bail_if(self, cond) -> None:
        """Before the loop starts: where ``cond`` holds, stop without effects and let the runner run
        the loop's Python (status BAIL)."""
        with T.If(cond):
            with T.Then():
                T.buffer_store(self.status, tirx.const(BAIL, I64), [0])
                T.buffer_store(self.ok, tirx.const(False, "bool"), [0])

    # -- control --------------------------------------------------------------------------------
    def live(self):
        cond = self.ok[0]
        if self.flags:
            brk, cont = self.flags[-1]
            cond = tirx.And(cond, tirx.Not(tirx.Or(brk[0], cont[0])))
        return cond

    def forget_refinements(self, names) -> None:
        """Names assigned ahead (a loop's body runs again after its assignments, a branch may run)."""
        self.refined = {k: v for k, v in self.refined.items() if k not in names}

    def refine_by(self, test, holds: bool) -> None:
        """Where ``test`` (one comparison of ints, evaluated just now) is ``holds``, the spans of the
        names compared (loop_spans.refine), until they are assigned."""
        recorded = self.compared.get(id(test))
        if recorded is None:
            return
        op, left, right = recorded
        if not holds:
            op = spans.NEGATED.get(op)
            if op is None:
                return
        a, b = spans.refine(op, left.span, right.span)
        # a bound by an extent, from above only: a < b gives a <= (b's bound) - 1, a > b gives b's likewise
        a_ub = spans.ub_minus(right.ub, 1) if op == "Lt" else (spans.ub_minus(right.ub, 0) if op == "LtE" else None)
        b_ub = spans.ub_minus(left.ub, 1) if op == "Gt" else (spans.ub_minus(left.ub, 0) if op == "GtE" else None)
        for side, span, ub in ((test.left, a, a_ub), (test.comparators[0], b, b_ub)):
            if isinstance(side, gast.Name) and side.id in self.variables and _int64_variable(self.variables[side.id]):
                old_span, old_ub = self.refined.get(side.id, (None, None))
                self.refined[side.id] = (spans.meet(old_span, span), spans.ub_meet(old_ub, ub))

    def fail(self, cond, node, raise_, values=()):
        """Stop the kernel where ``cond`` holds: Python raises ``raise_(values)`` at ``node``. Whatever
        the enclosing scope emits after this runs only if the check passed (an index is checked before
        the load that uses it). Where the checks run first (loop_checks_first): only the position's
        flag, or nothing where they passed."""
        if self.check_mode == "trusted":
            return
        self.checks_emitted += 1
        if self.check_mode == "find":
            with T.If(cond):
                with T.Then():
                    T.buffer_store(self.ok, tirx.const(False, "bool"), [0])
            self.go_on_if_ok()
            return
        self.sites.append(ErrorSite(getattr(node, "lineno", self.loop.lineno), raise_,
                                    getattr(node, "astjit_file", None), getattr(node, "astjit_function", None),
                                    getattr(node, "astjit_callers", ())))
        # where Python goes on (an int beyond int64: Python's is exact), the loop's Python runs from the
        # start instead: straight away for a loop without effects (BAIL); for one that writes arrays,
        # where the runner copied them before the call (LoopKernel.restores), after putting them back
        goes_on = getattr(raise_, "python_goes_on", False)
        stop = BAIL if self.effect_free and goes_on else len(self.sites)
        self.bails = self.bails or goes_on
        self.restores = self.restores or goes_on and not self.effect_free
        with T.If(cond):
            with T.Then():
                T.buffer_store(self.status, tirx.const(stop, I64), [0])
                if stop == BAIL:
                    self.zero_append_counts()
                for k, v in enumerate(values[:STATUS_SIZE - 1]):
                    T.buffer_store(self.status, _as_int64(v), [k + 1])
                T.buffer_store(self.ok, tirx.const(False, "bool"), [0])
        self.go_on_if_ok()

    @contextmanager
    def carried_checks(self):
        """Around an expression whose parts are evaluated in branches of their own (``x if c else E``,
        ``a or E``, ``a < b < E``, an inlined callee): where a check in one of them may stop the
        kernel, what the current scope emits after the expression (the store of its value into
        ``b[i]``) runs only while no check has failed, as Python stores nothing where E raises."""
        before = self.checks_emitted
        yield
        if self.checks_emitted != before:
            self.go_on_if_ok()

    @contextmanager
    def scope(self):
        """A nesting level of emitted statements; the guards ``fail`` opened in it close with it."""
        self.pending.append([])
        try:
            yield
        except BaseException:
            self.pending.pop()                   # the half-built function is dropped
            raise
        for frame in reversed(self.pending.pop()):
            frame.__exit__(None, None, None)

    def guarded(self, fn):
        """Run ``fn`` (which emits statements) only while the kernel, the loop and the iteration go on."""
        with T.If(self.live()):
            with T.Then(), self.scope():
                fn()

    def body(self, stmts) -> None:
        for emit in self.statement_runs(stmts):
            self.guarded(emit)

    def statement_runs(self, stmts):
        """An emitter per statement, or per run of consecutive whole-array assignments, which compute
        in one pass (``acc = -x - 0.1 * v; v = v + dt * acc``: loop_arrays)."""
        k = 0
        while k < len(stmts):
            run = 1
            if self.fusable(stmts[k]):
                while k + run < len(stmts) and self.fusable(stmts[k + run]):
                    run += 1
            if run > 1:
                self.note_access("other")
                yield lambda group=stmts[k:k + run]: self.fused_array_assignments(group)
            else:
                yield lambda s=stmts[k]: self.statement(s)
            k += run

    def statement(self, s) -> None:
        # (rows, named rows, whole arrays: effects that loop_checks_first does not follow)
        if self.rotation is not None and s is self.rotation.statement:
            self.note_access("other")
            self.rotate(s)
        elif self.is_named_row_assignment(s):
            self.note_access("other")
            self.bind_named_row(s)
        elif self.is_array_assignment(s):
            self.note_access("other")
            self.array_assignment(s)
        elif isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and s.target.id in self.arrays:
            self.note_access("other")
            self.check_in_place(s)
            self.row_statement(s)
        elif is_row_statement(self, s):
            self.note_access("other")
            self.row_statement(s)
        elif isinstance(s, gast.For):
            self.for_loop(s)
        elif isinstance(s, gast.While):
            self.while_loop(s)
        elif isinstance(s, gast.If):
            test = self.truth(self.expr(s.test))
            before = dict(self.refined)
            with T.If(test):
                with T.Then(), self.scope():
                    self.refine_by(s.test, True)
                    self.body(s.body)
                self.refined = dict(before)
                self.forget_refinements(assigned_names(s))
                if s.orelse:
                    with T.Else(), self.scope():
                        self.refine_by(s.test, False)
                        self.body(s.orelse)
                else:
                    self.unbiased_else()
            self.refined = before
            self.forget_refinements(assigned_names(s))
        elif isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Tuple) and isinstance(s.value, gast.Tuple):
                elements = any(isinstance(t, gast.Subscript) for t in target.elts)
                if self.has_array_items(s):
                    if elements:        # (rows: numpy's second store reads a view the first changed)
                        raise _no("a tuple assignment of rows to elements", s)
                    self.array_tuple_assignment(s)
                    return
                values = [self.settled(self.expr(e)) for e in s.value.elts]   # all first (a, b = b, a)
                self.store_targets(target, values, s)
                return
            if isinstance(target, gast.Tuple) and isinstance(self.calls.get(s.value), Inlined) and all(
                    isinstance(t, gast.Name) for t in target.elts):
                self.store_targets(target, self.inlined(self.calls[s.value], s.value, len(target.elts)), s)
                return
            if isinstance(target, gast.Tuple) and is_divmod(s.value, self.calls):
                x, y = (self.settled(self.expr(a)) for a in s.value.args)
                self.store_targets(target, [self.binary(op, x, y, s, raising=divmod) for op in ("FloorDiv", "Mod")], s)
                return
            if isinstance(target, gast.Tuple):
                self.unpack_shape(target, s.value)
                return
            if isinstance(target, gast.Subscript):
                value = self.expr(s.value)                  # Python: the value first, then the target
                self.store(target, value)
            else:
                self.assign(target.id, self.expr(s.value), s)
        elif isinstance(s, gast.AugAssign):
            op = type(s.op).__name__
            if isinstance(s.target, gast.Subscript):
                buf, index = self.element(s.target)
                old = self.load(buf, index)
                value = self.expr(s.value)
                self.store_at(s.target, buf, index, self.binary(op, old, value, s))
            else:
                old = self.read(s.target.id, s)
                value = self.expr(s.value)
                step = spans.step_of(op, value.span) if id(s) in self.counting_steps.get(s.target.id, ()) else None
                self.assign(s.target.id, self.binary(op, old, value, s), s, step=step or False)
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            self.call(s.value)
        elif isinstance(s, gast.Return):
            if not self.returns:
                self.loop_return(s)
            else:
                self.returns[-1](s)
        elif isinstance(s, gast.Raise):
            self.raise_statement(s)
        elif isinstance(s, gast.Break | gast.Continue):
            if not self.flags:
                raise _no("break/continue outside a loop")
            brk, cont = self.flags[-1]
            T.buffer_store(brk if isinstance(s, gast.Break) else cont, tirx.const(True, "bool"), [0])

    def raise_statement(self, s) -> None:
        """``raise E(args)`` (frontend/loops.LoopChecker.raise_statement): the kernel stops here, its
        effects kept, with the values of the arguments (and of the f-strings' fields) in its status,
        evaluated in order; the runner makes ``E(args)`` of them, each the Python value it was (a
        Python float, a numpy float64...), and raises it at the line."""
        cls = self.calls[s]
        args = [copy.deepcopy(a) for a in (s.exc.args if isinstance(s.exc, gast.Call) else [])]
        computed = []                        # (the expression's node, its Val), in evaluation order

        def value_of(node):
            v = self.settled(self.expr(node))
            if any(t.kind == "c" for t in v.types):
                raise _no("a raise of a complex value", node)
            computed.append(v)
            return gast.Name(id=f"__astjit_v{len(computed) - 1}", ctx=gast.Load(), annotation=None,
                             type_comment=None)

        # (the original nodes are evaluated: the loop's calls are known by them, not by their copies)
        originals = s.exc.args if isinstance(s.exc, gast.Call) else []
        for k, (a, original) in enumerate(zip(args, originals)):
            if isinstance(a, gast.JoinedStr):
                for v, v_original in zip(a.values, original.values):
                    if isinstance(v, gast.FormattedValue):
                        v.value = value_of(v_original.value)
            elif not isinstance(a, gast.Constant):
                args[k] = value_of(original)
        # each value's bits in a slot (in its storage's dtype), then, where it may have several types
        # (``x = 1.0`` then ``x -= step`` of a numpy float), the index of the one it has
        slots = []
        for v in computed:
            slots.append(_cast(v.expr, v.dtype, "float64" if np.dtype(v.dtype).kind == "f" else I64))
            if v.tag is not None:
                slots.append(v.tag.astype(I64))
        if len(slots) > STATUS_SIZE - 1:
            raise _no(f"a raise of more than {STATUS_SIZE - 1} computed values and types", s)
        read = _raised_values_reader([(v.types, np.dtype(v.dtype).kind == "f") for v in computed])
        made = python_function([f"__astjit_v{k}" for k in range(len(computed))], args)
        self.fail(tirx.const(True, "bool"), s, lambda vals: _made_exception(cls, made, read(vals)), slots)

    def loop_return(self, s) -> None:
        """``return`` out of the loop: its values into the return variables (every value first, as a
        tuple is built), then the kernel stops with status RETURNED, its effects kept."""
        if self.loop_returns is False:
            raise _no("return outside an inlined function", s)
        values = [self.settled(self.expr(v)) for v in return_values(s) or ()]
        for name, value in zip(self.return_names, values):
            self.assign(name, value, s)
        T.buffer_store(self.status, tirx.const(RETURNED, I64), [0])
        T.buffer_store(self.ok, tirx.const(False, "bool"), [0])

    def for_loop(self, loop) -> None:
        if isinstance(loop.iter, gast.Tuple):
            self.tuple_loop(loop)
            return
        values = [self.expr(a) for a in loop.iter.args]
        for a in values:
            for t in a.types:
                if t.kind not in "biu" or t.kind == "b" and not t.python:    # (numpy's bool: a TypeError)
                    raise _no(f"range() of a {t}", loop.iter)
            if isinstance(a.expr, tirx.IntImm) and abs(int(a.expr.value)) >= 2**SAFE_BITS:
                raise _no(f"a range() argument of 2**{SAFE_BITS} or more", loop.iter)
        args = [self.bind(_cast(a.expr, a.dtype, I64), I64) for a in values]    # evaluated once, as range()
        start, stop, step = (tirx.const(0, I64), args[0], tirx.const(1, I64)) if len(args) == 1 else (
            (args[0], args[1], tirx.const(1, I64)) if len(args) == 2 else args)
        if len(args) == 3:
            self.fail(tirx.EQ(step, tirx.const(0, I64)), loop.iter, lambda v: ValueError(
                "range() arg 3 must not be zero"))
        limit = tirx.const(2**SAFE_BITS, I64)
        for a, v in zip(args, values):
            if v.bits is None or v.bits > SAFE_BITS:
                self.fail(tirx.Or(a >= limit, a <= -limit), loop.iter, _int_overflow(loop.iter.lineno))
        bounds = [v.bits if v.bits is not None and v.bits <= SAFE_BITS else SAFE_BITS for v in values]
        counter_bits = max(bounds[:2] if len(values) > 1 else bounds + [0])   # between start and stop
        count = T.alloc_buffer((1,), I64, scope="global")
        zero, one = tirx.const(0, I64), tirx.const(1, I64)
        up = tirx.Select(stop > start, tirx.floordiv(stop - start + step - one, tirx.Max(step, one)), zero)
        down = tirx.Select(start > stop, tirx.floordiv(start - stop - step - one, tirx.Max(zero - step, one)),
                           zero)
        T.buffer_store(count, tirx.Select(step > zero, up, down), [0])
        if loop is self.loop and self.resume_at:
            # the first positions ran as Python (frontend/loop_guard): the rest of the same range
            # (the skipped positions lie inside the range, so their start cannot overflow)
            skipped = self.bind(tirx.Min(tirx.const(self.resume_at, I64), count[0]), I64)
            start = self.bind(start + skipped * step, I64)
            T.buffer_store(count, count[0] - skipped, [0])
        last = start + (count[0] - one) * step
        self.counter_spans[id(loop)] = _counter_span([v.span for v in values])
        self.run_loop(loop, start, step, count[0], counter_bits,
                      Interval(tirx.Min(start, last), tirx.Max(start, last), counter_bits))

    def tuple_loop(self, loop) -> None:
        """``for d in (-1, 0, 1)``: a counted loop over the positions, ``d`` the constant at each."""
        items = constant_items(loop.iter)
        bits = max(abs(int(v)).bit_length() for v in items) if type(items[0]) is not float else None
        span = (Interval(tirx.const(min(items), I64), tirx.const(max(items), I64), bits)
                if type(items[0]) is int else None)
        if type(items[0]) is int:
            self.counter_spans[id(loop)] = (min(items), max(items))
        self.run_loop(loop, tirx.const(0, I64), tirx.const(1, I64), tirx.const(len(items), I64), bits, span)

    def run_loop(self, loop, start, step, count, counter_bits, span) -> None:
        """The loop over ``count`` positions from ``start`` by ``step``: counted where its accesses are
        proven in bounds at its entry (``span``: the interval of its variable, None if not an int
        counter) or by an enclosing loop's entry, checked otherwise."""
        if self.var_types.get(loop.target.id, set()) - {counter_type(loop)}:
            raise _no(f"the loop variable {loop.target.id!r} also holds other types", loop)
        self.forget_refinements(assigned_names(loop))
        if loop.orelse:           # ``for ... else``: the else runs where no ``break`` of this loop ran
            self.broke[id(loop)] = T.alloc_buffer((1,), "bool", scope="global")
            T.buffer_store(self.broke[id(loop)], tirx.const(False, "bool"), [0])
        self.run_positions(loop, start, step, count, counter_bits, span)
        if loop.orelse:
            with T.If(tirx.And(self.ok[0], tirx.Not(self.broke[id(loop)][0]))):
                with T.Then(), self.scope():
                    self.body(loop.orelse)

    def run_positions(self, loop, start, step, count, counter_bits, span) -> None:
        if self.accesses_unchecked(loop):
            self.counted_if_clean(loop, start, step, count, counter_bits)
            return
        proven = self.proven_in_bounds(loop, span)
        if proven is None:
            self.checked_loop(loop, start, step, count, counter_bits)
            return
        condition, unchecked, wrapped, positive = proven
        with T.If(condition):
            with T.Then(), self.scope():
                saved = self.unchecked, self.wrapped, self.positive_divisors
                self.unchecked = saved[0] | unchecked
                self.wrapped = saved[1] | wrapped
                self.positive_divisors = saved[2] | positive
                self.counted_if_clean(loop, start, step, count, counter_bits)
                self.unchecked, self.wrapped, self.positive_divisors = saved
            with T.Else(), self.scope():
                self.checked_loop(loop, start, step, count, counter_bits)

    def known_count(self, loop) -> bool:
        """Whether a ``for`` has a trip count known as the kernel compiles (a tuple's items, ``range``
        of int constants, ``len()`` of a short tuple): LLVM unrolls such a loop, and the loop around
        it can then vectorize where the whole nest is proven in bounds at its entry."""
        if isinstance(loop.iter, gast.Tuple):
            return True
        for a in loop.iter.args:
            if isinstance(a, gast.UnaryOp) and isinstance(a.op, gast.USub):
                a = a.operand
            if isinstance(a, gast.Constant) and type(a.value) is int:
                continue
            if (isinstance(a, gast.Call) and self.calls.get(a) == "len" and len(a.args) == 1
                    and isinstance(a.args[0], gast.Name) and a.args[0].id in self.sequence_lengths):
                continue
            return False
        return True

    def accesses_unchecked(self, loop) -> bool:
        """Whether every element access in the loop is proven in bounds already (by an enclosing
        loop's entry), or it has none."""
        for node in element_accesses(loop.body):
            buf = self.arrays.get(node.value.id)
            items = index_items(node.slice)
            if buf is None or len(items) != len(buf.shape):
                continue
            if any((id(node), axis) not in self.unchecked for axis in range(len(items))):
                return False
        return True

    def counted_if_clean(self, loop, start, step, count, counter_bits) -> None:
        """The counted loop where its body adds no check and has no jump, else the checked one. Whether
        it adds one is found by emitting it once, unseen, in the last build (the earlier ones only
        gather types and bounds, from the same statements either way); the answer is kept for the
        build, as the same loop in the same context is emitted again within an enclosing loop's own
        trial."""
        clean = not has_jumps(loop)
        if clean and self.final:
            key = (id(loop), frozenset(self.unchecked), frozenset(self.wrapped), frozenset(self.positive_divisors),
                   repr(sorted(self.refined.items())), self.rotation_phase)
            clean = self.clean_loops.get(key)
            if clean is None:
                clean = not self.dry_run(lambda: self.counted_loop(loop, start, step, count, counter_bits))
                self.clean_loops[key] = clean
        if clean:
            self.counted_loop(loop, start, step, count, counter_bits)
        elif self.final and not has_jumps(loop) and self.checks_can_run_first(loop):
            def run_position(k):
                self.set_counter(loop, start + k * step, counter_bits)
                with self.emitting_body(loop):
                    self.loop_body(loop, lambda: self.body(loop.body))

            self.checks_first(loop, start, step, count, counter_bits, run_position)
        else:
            self.checked_loop(loop, start, step, count, counter_bits)

    def set_counter(self, loop, value, counter_bits) -> None:
        """Assign the loop variable its value at position ``value`` (the range's int, or the tuple's
        item at that index)."""
        target = self.variables[loop.target.id]
        t = counter_type(loop)
        if isinstance(loop.iter, gast.Tuple):
            items = constant_items(loop.iter)
            item = tirx.const(items[-1], t.dtype)
            for k in range(len(items) - 2, -1, -1):
                item = tirx.Select(tirx.EQ(value, tirx.const(k, I64)), tirx.const(items[k], t.dtype), item)
            value = item
        T.buffer_store(target.buffer, _cast(value, t.dtype, target.dtype), [0])
        self.mark_bound(loop.target.id)
        self.seen[loop.target.id].add(t)
        self.note_bits(loop.target.id, counter_bits)
        self.note_span(loop.target.id, self.counter_spans.get(id(loop)))

    def checked_loop(self, loop, start, step, count, counter_bits) -> None:
        """The loop as a ``while`` that stops at a failed check, a ``break`` or the end of the range."""
        zero, one = tirx.const(0, I64), tirx.const(1, I64)
        k = T.alloc_buffer((1,), I64, scope="global")
        T.buffer_store(k, zero, [0])
        brk = T.alloc_buffer((1,), "bool", scope="global")
        cont = T.alloc_buffer((1,), "bool", scope="global")
        T.buffer_store(brk, tirx.const(False, "bool"), [0])
        with T.While(tirx.And(tirx.And(self.ok[0], tirx.Not(brk[0])), k[0] < count)), self.scope():
            T.buffer_store(cont, tirx.const(False, "bool"), [0])
            self.set_counter(loop, start + k[0] * step, counter_bits)
            self.flags.append((brk, cont))
            with self.emitting_body(loop):
                self.loop_body(loop, lambda: self.body(loop.body))
            self.flags.pop()
            T.buffer_store(k, k[0] + one, [0])
        if id(loop) in self.broke:
            T.buffer_store(self.broke[id(loop)], brk[0], [0])

    def while_loop(self, loop) -> None:
        """``while test: body``: each iteration evaluates the test (with its checks) and runs the body
        only while it holds; a false test ends the loop as a ``break`` does."""
        brk = T.alloc_buffer((1,), "bool", scope="global")
        cont = T.alloc_buffer((1,), "bool", scope="global")
        T.buffer_store(brk, tirx.const(False, "bool"), [0])
        assigned = assigned_names(loop)
        self.forget_refinements(assigned)
        outside = dict(self.refined)
        with T.While(tirx.And(self.ok[0], tirx.Not(brk[0]))), self.scope():
            T.buffer_store(cont, tirx.const(False, "bool"), [0])
            T.buffer_store(brk, tirx.Not(self.truth(self.expr(loop.test))), [0])
            self.refine_by(loop.test, True)           # the body runs only where the test held
            self.flags.append((brk, cont))
            with self.emitting_body(loop):
                self.loop_body(loop, lambda: self.body(loop.body))
            self.flags.pop()
        self.refined = outside

    def counted_loop(self, loop, start, step, count, counter_bits) -> None:
        """The loop as a plain counted ``for`` (LLVM can unroll and vectorize it): only for a body with
        no check left and no ``break``/``continue``. Where a variable's type settles in its first
        assignment, in two phases (loop_settling)."""

        def emit_body():
            for emit in self.statement_runs(loop.body):
                emit()

        def run_position(k):
            self.set_counter(loop, start + k * step, counter_bits)
            with self.emitting_body(loop):
                self.loop_body(loop, emit_body)

        def run_counted(first, n):
            with T.serial(tirx.const(0, I64), n) as k, self.scope():
                run_position(first + k)

        settling = self.settling(loop)
        if not settling:
            run_counted(tirx.const(0, I64), count)
            return
        self.counted_in_phases(loop, settling, count, run_counted)

    def dry_run(self, emit) -> int:
        """How many checks ``emit`` would add, emitting nothing (the types it sees assigned count: the
        same code is emitted for real after it)."""
        with IRBuilder():
            with T.prim_func(), self.scope():
                sites, refined = list(self.sites), dict(self.refined)
                try:
                    emit()
                    return len(self.sites) - len(sites)
                finally:
                    self.sites, self.refined = sites, refined

    def proven_in_bounds(self, loop, span):
        """(condition, accesses, wrapped, divisors): the element indices of the loop, and of the ``for``
        loops nested in it, that lie in their arrays on every iteration when ``condition`` holds at the
        loop's entry (loop_bounds), those of them that are negative there and wrap, and the ``x % d``
        proven with ``d > 0``; None where none is proven."""
        if span is not None and span.bits > SAFE_BITS:
            return None
        nested = has_nested_loops(loop)
        if nested and (has_while(loop) or not all(self.known_count(n) for s in loop.body for n in gast.walk(s)
                                                  if isinstance(n, gast.For))):
            return None         # (a nest of loops of any length: proven at each inner entry, compiled faster)
        assigned = assigned_names(loop)
        counters = {loop.target.id: span} if span is not None and loop.target.id not in assigned_in_body(loop) else {}
        bounds = IndexBounds(counters, assigned, self.pure_leaf)
        conditions, unchecked, wrapped = [], set(), set()

        def visit(node):
            buf = self.arrays.get(node.value.id)
            items = index_items(node.slice)
            if buf is None or len(items) != len(buf.shape):
                return
            if nested and node.value.id in assigned:
                return          # (a name the nest rebinds: its buffer's extents may change inside)
            for axis, item in enumerate(items):
                interval = bounds.of(item)
                if interval is None:
                    continue
                holds, wraps = in_bounds_conditions(interval, buf.shape[axis])
                conditions.extend(holds)
                unchecked.add((id(node), axis))
                if wraps:
                    wrapped.add((id(node), axis))

        walk_nest(loop.body, bounds, visit, nested_counters(loop))
        if not unchecked:
            return None
        condition = conditions[0]
        for c in conditions[1:]:
            condition = tirx.And(condition, c)
        return condition, unchecked, wrapped, bounds.positive_divisors

    def pure_leaf(self, node):
        """The value of a name, int constant, extent or ``len()``, which emits no statement; None for
        a name the loop cannot read yet."""
        if isinstance(node, gast.Name) and (node.id not in self.variables or not self.var_types.get(node.id)):
            return None
        if isinstance(node, gast.Call) and (len(node.args) != 1 or not isinstance(node.args[0], gast.Name)
                                            or node.args[0].id not in self.arrays
                                            or self.calls.get(node) != "len"):
            return None
        if isinstance(node, gast.Subscript) and not (
                isinstance(node.value.value, gast.Name) and node.value.value.id in self.arrays
                and node.value.attr == "shape" and shape_axis(node) is not None):
            return None
        return self.expr(node)

    # -- variables ------------------------------------------------------------------------------
    def read(self, name, node) -> Val:
        if name in self.named_rows:
            raise _no(f"{name!r} holds a row, read here where a number is expected (a named row is read by "
                      "an index, len(), a reduction or a statement of rows)", node)
        var = self.variables.get(name)
        if var is None:
            raise _no(f"{name!r} is not a scalar the loop can read", node)
        if not self.var_types.get(name):
            raise _Stale(name, node)
        bits = EXACT_FLOAT_BITS if holds_ints_as_floats(var.types) else self.var_bits.get(name)
        span = ub = None
        if _int64_variable(var):
            here_span, here_ub = self.refined.get(name, (None, None))
            span = spans.meet(self.var_spans.get(name), here_span)
            ub = spans.ub_meet(here_ub, self.var_ubs.get(name))
        expr = cx.load_local(var.buffer, var.dtype) or _leaf(var.buffer[0], var.dtype)
        return Val(expr, var.types, var.tag[0] if var.tag is not None else None,
                   _tighter(bits, spans.bits(span)), span, ub)

    def assign(self, name, value: Val, node, step=None) -> None:
        """``step``: the increment's span where this is one of a counter's steps (loop_spans), False
        where it is not; None: the statement says (``c = c + 1``)."""
        var = self.variables[name]
        self.seen[name].update(value.types)
        self.note_bits(name, value.bits)
        ints = all(t.kind in "iu" for t in value.types)
        if step is None:
            step = self.counting_steps.get(name, {}).get(id(node)) if isinstance(node, gast.Assign) else None
        self.note_span(name, value.span if ints else None, value.ub if ints else None, step=step)
        if not set(value.types) <= set(var.types):
            return                                   # this pass's layout is stale; the next one fits
        self.exact_in(value, var.dtype, node)
        cx.store_local(var.buffer, _cast(value.expr, value.dtype, var.dtype), var.dtype)
        self.mark_bound(name)
        if var.tag is not None:
            T.buffer_store(var.tag, self.retag(value, var.types), [0])
            self.note_settling_store(name, var.types,
                                     var.types.index(value.types[0]) if value.tag is None else None)

    def mark_bound(self, name) -> None:
        if name in self.bound_flags:
            T.buffer_store(self.bound_flags[name], tirx.const(1, "int8"), [0])
            self.note_settling_store(name, None, "bound")

    def exact_in(self, value: Val, dtype, node) -> None:
        """An int stored in a float64 local (a variable that holds ints and floats) must be exact there:
        known to be below 2**53. Earlier builds only learn the types; the last one knows the bounds."""
        if not self.final or dtype not in ("float64", "complex128") or not any(t.kind in "iu" for t in value.types):
            return
        if value.bits is None or value.bits > EXACT_FLOAT_BITS:
            raise _no("an int that may reach 2**53, in a variable that also holds floats", node)

    def note_span(self, name, span, ub=None, step=None) -> None:
        """Record the span and extent bound of what ``name`` is assigned (joined with the others): they
        hold for its reads from here until it is assigned again or control flow joins. ``step``: the
        increment's span where this is a step of a counter (loop_spans): a counter's span holds the
        result, and its other values are recorded apart (they must stay in COUNTER_BASE)."""
        if step:
            seen = self.seen_increments
            seen[name] = step if name not in seen else spans.join(seen[name], step)
        if name in self.counters:
            if step:
                span = spans.meet(span, self.var_spans[name])
            else:
                seen = self.seen_base_spans
                seen[name] = span if name not in seen else spans.join(seen[name], span)
        self.refined[name] = (span, ub)
        self.seen_spans[name] = span if name not in self.seen_spans else spans.join(self.seen_spans[name], span)
        self.seen_ub_terms.setdefault(name, []).append((ub, span))

    def note_bits(self, name, bits) -> None:
        """Record a bound on what ``name`` is assigned: the largest one seen, or None if one is unknown."""
        if name in self.seen_bits:
            old = self.seen_bits[name]
            bits = None if old is None or bits is None else max(old, bits)
        self.seen_bits[name] = bits

    def retag(self, value: Val, types):
        """The tag of ``value`` as an index into ``types``."""
        if value.tag is None:
            return tirx.const(types.index(value.types[0]), "int8")
        expr = tirx.const(types.index(value.types[-1]), "int8")
        for k in range(len(value.types) - 2, -1, -1):
            expr = tirx.Select(tirx.EQ(value.tag, tirx.const(k, "int8")),
                               tirx.const(types.index(value.types[k]), "int8"), expr)
        return expr

    def settled(self, v: Val) -> Val:
        """``v`` computed now into locals: reading a variable gives a load, which a later assignment
        to that variable would change."""
        tag = self.bind(v.tag, "int8") if v.tag is not None else None
        if isinstance(v.expr, Pair):
            part = cx.part_dtype(v.dtype)
            return Val(Pair(self.bind(v.expr.re, part), self.bind(v.expr.im, part)), v.types, tag)
        return Val(self.bind(v.expr, v.dtype), v.types, tag, v.bits, v.span, v.ub)

    def unpack_shape(self, target, value) -> None:
        array = self.array(value.value.id, value)
        if len(target.elts) != len(array.shape):
            raise _no(f"unpacking a {len(array.shape)}-d shape into {len(target.elts)} names", target)
        for k, (name, extent) in enumerate(zip(target.elts, array.shape)):
            self.assign(name.id, Val(extent, (Scalar(I64, True),), bits=EXTENT_BITS, span=spans.EXTENT,
                                     ub=((value.value.id, k), 1, 0)), target)

    # -- arrays ---------------------------------------------------------------------------------
    def array(self, name, node):
        buf = self.arrays.get(name)
        if buf is None and name in self.named_rows:
            raise _no(f"{name!r} holds a row bound to a name, which the loop only reads by an index, len(), "
                      "a reduction or a statement of rows (not written, not passed on)", node)
        if buf is None:
            raise _no(f"{name!r} is indexed but is not an array", node)
        return buf

    def element(self, node):
        """The buffer and checked int64 indices of ``a[i, j]`` (negative indices wrap, as Python's)."""
        buf = self.array(node.value.id, node)
        items = index_items(node.slice)
        if len(items) != len(buf.shape) or any(isinstance(item, gast.Slice) for item in items):
            raise _no(f"{node.value.id!r} has {len(buf.shape)} axes and is indexed with {len(items)} "
                      "(a row or a slice is read or written only in a whole statement of rows)", node)
        return buf, self.indices(node, buf, items)

    def indices(self, node, buf, items) -> list:
        """The checked int64 indices of ``items``, integers for the leading axes of ``buf``: all of them
        evaluated first, then checked in order (Python builds the index tuple before numpy reads it)."""
        values = [self.index_val(item) for item in items]
        return [self.checked_index(node, axis, v.expr, buf.shape[axis], v) for axis, v in enumerate(values)]

    def index_value(self, item, v=None):
        """An integer index or slice bound (``v``: its value, if evaluated), in an int64 local."""
        return self.index_val(item, v).expr

    def index_val(self, item, v=None) -> Val:
        v = self.expr(item) if v is None else v
        if any(t.kind not in "iu" or t.dtype == "uint64" for t in v.types):
            raise _no(f"an index of type {'/'.join(map(str, v.types))}", item)
        return Val(self.bind(_cast(v.expr, v.dtype, I64), I64), v.types, bits=v.bits, span=v.span, ub=v.ub)

    def checked_index(self, node, axis, i, n, value: Val | None = None):
        """``i`` as an index into an axis of extent ``n``: IndexError outside ``-n <= i < n``, a
        negative index wrapped; neither where ``value`` (i's Val) is known to lie in ``0 ... n - 1``,
        no wrap where it is known not to be negative (loop_spans)."""
        if (id(node), axis) in self.unchecked:        # proven in bounds at the loop's entry
            if (id(node), axis) in self.wrapped:
                return self.bind(tirx.Select(i < tirx.const(0, I64), i + n, i), I64)
            return i
        if value is not None and _below_extent(value, (node.value.id, axis)):
            return i
        seq = self.sequences.get(node.value.id) if isinstance(node.value, gast.Name) else None
        raise_ = _index_error if seq is None else _sequence_index_error(seq.container.__name__)
        # (``A[i][j]`` flattened: Python's error names the axis of the link that raised, its row's 0)
        shown = axis - max((a for a in getattr(node, CHAIN_AXES, [0]) if a <= axis), default=0)
        self.fail(tirx.Or(i >= n, i < tirx.const(0, I64) - n), node, raise_, (i, shown, n))
        if value is not None and value.span is not None and value.span[0] >= 0:
            # (the test keeps its lower half, which never holds here: without it the game of life's
            # outer-row accesses ran 1.2x slower, as LLVM laid the loop out otherwise)
            return i
        return self.bind(tirx.Select(i < tirx.const(0, I64), i + n, i), I64)

    def load(self, buf, index) -> Val:
        dtype = str(buf.dtype)
        kind = np.dtype(dtype).kind
        bits = 1 if kind == "b" else (np.iinfo(dtype).bits - (kind == "i") if kind in "iu" else None)
        span = (0, 1) if kind == "b" else ((int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
                                           if kind in "iu" and dtype != "uint64" else None)
        return Val(self.bind(buf[tuple(index)], dtype), (Scalar(dtype, False),), bits=bits, span=span)

    def store(self, target, value) -> None:
        buf, index = self.element(target)
        self.store_at(target, buf, index, value)

    def store_at(self, target, buf, index, value: Val, from_array=False) -> None:
        """``from_array``: an element of an array being stored (numpy casts it, wrapping ints), not a
        number stored into an element or a row (numpy converts it through a Python int)."""
        dtype = str(buf.dtype)
        kind = np.dtype(dtype).kind
        for t in value.types:
            if t.kind in "fc" and kind in "biu" or t.kind == "c":
                raise _no(f"storing a {t} into an array of {dtype}", target)
        if kind in "iu":
            self.check_int_fits(value, dtype, target, numpy_ints=kind == "i" and not from_array)
        name = target.id if isinstance(target, gast.Name) else target.value.id
        name = self.array_origin.get(name, name)
        self.note_access("other" if name in self.local_types else "store", name)
        if name in self.incoming_locals and not isinstance(target, gast.Name):
            raise _no(f"{name!r} is written in place and rebound in the same loop", target)
        if name not in self.local_types:
            self.stores.add(name)
        if kind == "b":
            expr = sm.truthy(value.expr, value.dtype)
        else:
            expr = _cast(value.expr, value.dtype, dtype)
        if not self.array_stores_left_out:
            T.buffer_store(buf, expr, index)

    def bind(self, expr, dtype):
        """``expr`` computed once, here, into a local: later checks and uses read the local."""
        buf = T.alloc_buffer((1,), dtype, scope="global")
        T.buffer_store(buf, expr, [0])
        return _leaf(buf[0], dtype)

    # -- expressions ----------------------------------------------------------------------------
    def truth(self, v: Val):
        if isinstance(v.expr, Pair):
            return cx.truth(v.expr)
        return sm.truthy(v.expr, v.dtype)

    def expr(self, e) -> Val:
        if isinstance(e, gast.Name):
            return self.read(e.id, e)
        if isinstance(e, gast.Constant):
            t = type_of_value(e.value)
            value = e.value
            if t.kind == "c":
                return Val(cx.constant(value, t.dtype), (t,))
            if t.kind in "iu" and not -2**63 <= value < 2**63:
                raise _no("an int constant beyond int64", e)
            return Val(_leaf(tirx.const(value, t.dtype), t.dtype), (t,),
                       bits=abs(int(value)).bit_length() if t.kind != "f" else None,
                       span=(int(value), int(value)) if t.kind != "f" else None)
        if isinstance(e, gast.BinOp) and self.calls.get(e) == "reduce.dot":
            return self.dot(e)
        if isinstance(e, gast.BinOp):
            left = self.expr(e.left)
            right = self.expr(e.right)
            return self.binary(type(e.op).__name__, left, right, e)
        if isinstance(e, gast.UnaryOp):
            return self.unary(e)
        if isinstance(e, gast.Compare):
            return self.compare(e)
        if isinstance(e, gast.BoolOp):
            return self.bool_op(e)
        if isinstance(e, gast.IfExp):
            return self.select(e)
        if isinstance(e, gast.Subscript):
            if isinstance(e.value, gast.Attribute):               # x.shape[k]
                return self.extent(e.value.value.id, shape_axis(e), e)
            if isinstance(e.value, gast.Name) and e.value.id in self.named_rows:
                item = self.named_row_item(e)
                if not isinstance(item, ScalarLeaf):
                    raise _no(f"a row of {e.value.id!r} read where a number is expected", e)
                return item.value
            buf, index = self.element(e)
            value = self.load(buf, index)
            seq = self.sequences.get(e.value.id)
            if seq is not None:                 # a tuple's item is the Python number it holds
                return Val(value.expr, (seq.item,), bits=value.bits, span=value.span)
            return value
        if isinstance(e, gast.Call):
            return self.call(e)
        if isinstance(e, gast.Attribute) and e.attr in ("size", "ndim") and isinstance(e.value, gast.Name):
            return self.array_attribute(e)
        if cx.is_part(e):
            return self.complex_part(e)
        raise _no(f"an expression of kind {type(e).__name__}", e)

    def shape_of(self, name, node) -> list:
        """The extents of an array or of a named row (loop_named_rows)."""
        if name in self.named_rows:
            return self.named_row(name, node).tree.shape
        return self.array(name, node).shape

    def extent(self, name, k, node) -> Val:
        """``x.shape[k]`` (``len(x)``: k = 0), a Python int. An array's extent is fixed for the call, so
        it bounds what is compared with it (loop_spans); a named row's may change where it is bound again."""
        shape = self.shape_of(name, node)
        if not -len(shape) <= k < len(shape):
            raise _no(f"shape[{k}] of a {len(shape)}-d array", node)
        ub = ((name, k % len(shape)), 1, 0) if name not in self.named_rows else None
        return Val(shape[k], (Scalar(I64, True),), bits=EXTENT_BITS, span=spans.EXTENT, ub=ub)

    def array_attribute(self, e) -> Val:
        """``x.size`` (the product of the extents, a Python int) and ``x.ndim`` of an array argument or
        a named row."""
        shape = self.shape_of(e.value.id, e)
        if e.attr == "ndim":
            return Val(tirx.const(len(shape), I64), (Scalar(I64, True),), bits=EXTENT_BITS,
                       span=spans.EXTENT)
        size = tirx.const(1, I64)
        for extent in shape:
            size = size * extent
        # (one axis: bounded by its extent, as x.shape[0]; more: the product of extents, each below 2**EXTENT_BITS)
        ub = ((e.value.id, 0), 1, 0) if len(shape) == 1 and e.value.id not in self.named_rows else None
        return Val(size, (Scalar(I64, True),), bits=EXTENT_BITS if len(shape) <= 1 else None,
                   span=spans.EXTENT if len(shape) <= 1 else None, ub=ub)

    def common(self, fn, operands, what, node) -> Scalar:
        """The single result type of ``fn`` over every combination of the operands' possible types."""
        results = set(possible_results(fn, operands, what).values())
        if len(results) != 1:
            raise _no(f"{what} gives {' or '.join(sorted(map(str, results)))} depending on the "
                              "types the variables hold", node)
        return results.pop()

    def binary(self, op, a: Val, b: Val, node, raising=None) -> Val:
        """``a op b``; a division by zero of Python numbers raises what ``raising`` (default: the
        operator) raises for them (``divmod`` has its own message)."""
        if any(t.kind == "c" for t in a.types + b.types):
            return self.complex_binary(op, a, b, node)
        if op == "Pow":
            return self.power(a, b, node)
        fn = BINARY[op]
        types, tag = self.result_types(fn, (a, b), f"the operator {op}")
        if len(types) > 1:
            return self.float_of_either_kind(op, a, b, types, tag, node)
        r = types[0]
        loop = r.dtype
        if not r.python and r.kind in "iu":
            for v in (a, b):
                self.check_int_fits(v, r.dtype, node)
        if op == "Mod" and id(node) in self.positive_divisors and r.kind in "iu":
            # d >= 1 holds here; saying so lets LLVM compute an invariant x % d once, before the loop
            x, y = _cast(a.expr, a.dtype, r.dtype), _cast(b.expr, b.dtype, r.dtype)
            return Val(self.bind(tirx.floormod(x, tirx.Max(y, tirx.const(1, r.dtype))), r.dtype), (r,),
                       bits=b.bits)
        if op in ("Div", "FloorDiv", "Mod"):
            self.check_python_division(op, a, b, node, raising)
        if op == "RShift" and r.python:
            return self.python_right_shift(a, b, r, node)
        if op == "LShift" and r.python:
            return self.python_left_shift(a, b, r, node)
        if r.kind in "iu" and op in ("Add", "Sub", "Mult"):
            return self.int_arithmetic(op, a, b, r, node)
        x, y = _cast(a.expr, a.dtype, loop), _cast(b.expr, b.dtype, loop)
        if op == "Div" and r.python and all(t.kind in "biu" for t in a.types + b.types):
            for v in (a, b):         # (numpy ints divide as float64s, rounded as the kernel rounds them)
                self.check_exact_as_float(v, node, "an int above 2**53 divided")
        if r.kind in "iu" and op in ("FloorDiv", "Mod"):
            smallest = tirx.const(int(np.iinfo(loop).min), loop)
            # Python's -2**63 // -1 is 2**63, beyond int64; numpy's int64 gives -2**63 (and % gives 0),
            # as the rule computes it
            if loop == I64 and r.python and not (spans.excludes(a.span, spans.INT64_LO)
                                                 or spans.excludes(b.span, -1)):
                self.fail(tirx.And(tirx.EQ(x, smallest), tirx.EQ(y, tirx.const(-1, loop))), node,
                          _int_overflow(node.lineno))
        rule = UFUNC_RULES[UFUNC_OF_BINARY[op]](loop)
        expr = rule(x, y)
        bits = span = ub = None
        if r.kind in "iu" and op in ("FloorDiv", "Mod"):
            expr = self.bind(expr, loop)
            bits = a.bits if op == "FloorDiv" else b.bits      # |a // b| <= |a|, |a % b| < |b|
            if loop == I64:
                span = (spans.floordiv if op == "FloorDiv" else spans.mod)(a.span, b.span)
                bits = _tighter(bits, spans.bits(span))
                ub = spans.ub_floordiv(a.ub, b.span) if op == "FloorDiv" else None
        return Val(expr, (r,), bits=bits, span=span, ub=ub)

    def store_targets(self, target, values, node) -> None:
        """Each value (all evaluated first) into its target of tuple ``target``, left to right, as
        Python stores them: an array element or a variable."""
        for t, value in zip(target.elts, values):
            if isinstance(t, gast.Subscript):
                self.store(t, value)
            else:
                self.assign(t.id, value, node)

    def python_right_shift(self, a, b, r, node) -> Val:
        """``x >> n`` of Python ints (and bools): a negative count raises Python's ValueError; a count of
        63 or more leaves the sign (0 or -1), as Python's unbounded ints do; |x >> n| <= |x|."""
        x = _cast(a.expr, a.dtype, I64)
        _, count = self.shift_count(b, operator.rshift, node)
        return Val(self.bind(tirx.shift_right(x, count), I64), (r,), bits=a.bits)

    def shift_count(self, b, fn, node):
        """(the count as an int64, the count clamped to 0..63) of a shift of Python ints by ``b``: a
        negative count raises Python's ValueError (``fn``'s); a shift by 64 or more is undefined in LLVM."""
        n, zero = _cast(b.expr, b.dtype, I64), tirx.const(0, I64)
        if not (b.span is not None and b.span[0] >= 0):
            self.fail(n < zero, node, lambda v: _raised(fn, 1, -1))
        return n, self.bind(tirx.Min(tirx.Max(n, zero), tirx.const(63, I64)), I64)

    def python_left_shift(self, a, b, r, node) -> Val:
        """``x << n`` of Python ints (and bools): a negative count raises Python's ValueError; a result
        beyond int64 stops the loop with the documented OverflowError (Python's int would grow); 0
        shifted by any count is 0."""
        x, zero = _cast(a.expr, a.dtype, I64), tirx.const(0, I64)
        n, count = self.shift_count(b, operator.lshift, node)
        # through uint64: a shift that drops bits is defined there (TVM assumes a signed one exact)
        shifted = self.bind(tirx.reinterpret(I64, tirx.shift_left(tirx.reinterpret("uint64", x), tirx.reinterpret(
            "uint64", count))), I64)
        lost = tirx.Or(n > tirx.const(63, I64), tirx.NE(tirx.shift_right(shifted, count), x))
        self.fail(tirx.And(tirx.NE(x, zero), lost), node, _int_overflow(node.lineno))
        return Val(shifted, (r,))

    def float_of_either_kind(self, op, a, b, types, tag, node) -> Val:
        """``s * w`` where ``s`` is a Python float on some iterations and a numpy float on others
        (``s = 0.0`` then ``s += a[i]``): computed in each result type's dtype, the tag picks one.
        Ints (Python's grow, numpy's wrap) and ``//``, ``%`` stay refused; ``/`` raises where both
        operands are Python numbers on that iteration."""
        if op in ("Add", "Sub", "Mult") and set(types) == {Scalar(I64, True), Scalar(I64, False)}:
            return self.int64_of_either_kind(op, a, b, types, tag, node)
        if op in ("FloorDiv", "Mod") or any(t.kind != "f" for t in types):
            raise _no(f"the operator {op} gives {' or '.join(map(str, types))} depending on the types the "
                      "variables hold", node)
        if op == "Div":
            self.check_python_division(op, a, b, node)
            # Python divides two ints exactly rounded; an int and a float (or a numpy number) as floats,
            # as the kernel does: only iterations where both are Python ints need them exact as floats
            both_ints = [self.combination_holds((a, b), c) for c in possible_results(BINARY[op], (a, b), "/")
                         if all(t.python and t.kind in "biu" for t in c)]
            if both_ints:
                for v in (a, b):
                    self.check_exact_as_float(v, node, "an int above 2**53 divided",
                                              functools.reduce(tirx.Or, both_ints))
        storage = storage_dtype(types)
        rule = UFUNC_RULES[UFUNC_OF_BINARY[op]]
        per_type = [_cast(rule(t.dtype)(_cast(a.expr, a.dtype, t.dtype), _cast(b.expr, b.dtype, t.dtype)),
                          t.dtype, storage) for t in types]
        return Val(by_tag(tag, per_type), types, tag)

    def int64_of_either_kind(self, op, a, b, types, tag, node) -> Val:
        """``acc * x`` where ``acc`` is a Python int on some iterations and a numpy int64 on others
        (``acc = 0`` then ``acc = acc * x + c[i]``): the product modulo 2**64, which is numpy's, and
        Python's where it fits int64; where the Python int would leave int64 (on an iteration whose
        operands are all Python ints) the documented OverflowError."""
        x, y = _cast(a.expr, a.dtype, I64), _cast(b.expr, b.dtype, I64)
        python = [c for c, r in possible_results(BINARY[op], (a, b), f"the operator {op}").items() if r.python]
        holds = functools.reduce(tirx.Or, [self.combination_holds((a, b), c) for c in python])
        span = {"Add": spans.add, "Sub": spans.sub, "Mult": spans.mul}[op](a.span, b.span)
        if not spans.fits_int64(span):
            # (a branch, not And: the product's test divides, which an And evaluated on every iteration:
            # 5.6 ns an iteration where numpy int64 operands need no test)
            overflow = tirx.if_then_else(holds, _exact_int64_overflow(op, x, y), tirx.const(False, "bool"))
            self.fail(overflow, node, _int_overflow(node.lineno))
        return Val(self.bind(_wrapping_int64(op, x, y), I64), types, tag)

    def check_python_division(self, op, a, b, node, raising=None) -> None:
        """Python numbers divided by zero raise, numpy scalars give inf or nan: on an iteration where
        both operands are Python numbers, a zero divisor raises what Python raises for their types."""
        if spans.excludes(b.span, 0):
            return
        combos = [c for c in possible_results(BINARY[op], (a, b), f"the operator {op}")
                  if c[0].python and c[1].python]
        if not combos:
            return
        holds = [self.combination_holds((a, b), c) for c in combos]
        which = tirx.const(0, I64)                   # the index of the combination that holds now
        python = holds[0]
        for k in range(1, len(combos)):
            which = tirx.Select(holds[k], tirx.const(k, I64), which)
            python = tirx.Or(python, holds[k])
        fn = raising or BINARY[op]
        self.fail(tirx.And(python, tirx.Not(self.truth(b))), node,
                  lambda v: _raised(fn, combos[v[0]][0].sample(), combos[v[0]][1].type(0)), (which,))

    @staticmethod
    def combination_holds(operands, combo):
        """Whether the operands have the types ``combo`` now (their tags, where they have several)."""
        holds = tirx.const(True, "bool")
        for v, t in zip(operands, combo):
            if v.tag is not None:
                holds = tirx.And(holds, tirx.EQ(v.tag, tirx.const(v.types.index(t), "int8")))
        return holds

    def check_int_fits(self, v: Val, dtype, node, numpy_ints=False) -> None:
        """numpy raises OverflowError for a Python int outside an integer dtype (NEP 50: an operand
        beside ``np.int8(3)`` such as 300, or one stored into such an array) and, with ``numpy_ints``,
        for a numpy int stored into an element of a signed array, which numpy converts through a Python
        int (``a[i] = np.int64(300)`` for int8; into an unsigned array it wraps)."""
        info = np.iinfo(dtype)
        for t in v.types:
            if t.kind not in "iu":
                continue
            if t.python:
                if dtype == I64 or v.span is not None and info.min <= v.span[0] and v.span[1] <= info.max:
                    continue                 # (known to fit: a constant, a value checked already)
                now = self.combination_holds((v,), (t,))     # (a numpy int on other iterations wraps)
                x = _cast(v.expr, v.dtype, I64)
            else:
                source = np.iinfo(t.dtype)
                if not numpy_ints or (source.min >= info.min and source.max <= info.max):
                    continue
                now = self.combination_holds((v,), (t,))
                x = _cast(_cast(v.expr, v.dtype, t.dtype), t.dtype, I64)      # (uint64 never enters a loop kernel)
            self.fail(tirx.And(now, tirx.Or(x > tirx.const(int(info.max), I64), x < tirx.const(int(info.min), I64))),
                      node, _python_int_overflow(dtype), (x,))

    def check_exact_as_float(self, v: Val, node, what, where=None) -> None:
        """Stop where an int would not convert to float64 exactly (Python computes such cases exactly);
        ``where``: on the iterations where that matters (by the operands' types)."""
        if v.bits is not None and v.bits <= 53 or v.dtype == "float64":
            return       # (an int in a float64 local was known to be exact there when stored: exact_in)
        big = tirx.const(EXACT_FLOAT_INT, I64)
        x = _cast(v.expr, v.dtype, I64)
        beyond = tirx.Or(x >= big, x <= tirx.const(0, I64) - big)
        self.fail(beyond if where is None else tirx.And(where, beyond), node, _int_overflow(node.lineno, what))

    def int_arithmetic(self, op, a, b, r, node) -> Val:
        """+, -, * of integers. Python ints are checked against overflow where their bound is not known
        to be safe (a float estimate of the result): Python would go on with a larger int. numpy ints
        wrap as numpy's do (the kernel emits no warning)."""
        loop = r.dtype
        if loop == "uint64":
            raise _no("uint64 arithmetic in a loop", node)
        if loop != I64:
            x, y = _cast(a.expr, a.dtype, I64), _cast(b.expr, b.dtype, I64)
            wide = {"Add": x + y, "Sub": x - y, "Mult": x * y}[op]
            return Val(self.bind(sm.wrap_int(self.bind(wide, I64), I64, loop), loop), (r,),
                       bits=np.iinfo(loop).bits - (r.kind == "i"))
        x, y = _cast(a.expr, a.dtype, I64), _cast(b.expr, b.dtype, I64)
        expr = {"Add": x + y, "Sub": x - y, "Mult": x * y}[op]
        span = {"Add": spans.add, "Sub": spans.sub, "Mult": spans.mul}[op](a.span, b.span)
        ub = (spans.ub_add(a.ub, a.span, b.ub, b.span) if op == "Add" else
              spans.ub_sub(a.ub, b.span) if op == "Sub" else None)
        if spans.fits_int64(span):                       # no overflow: the operands' spans say so
            return Val(self.bind(expr, I64), (r,), bits=spans.bits(span), span=span, ub=ub)
        bits = None
        if a.bits is not None and b.bits is not None:
            bits = max(a.bits, b.bits) + 1 if op != "Mult" else a.bits + b.bits
        if (bits is None or bits > 63) and not r.python:      # numpy's int64 wraps
            return Val(self.bind(_wrapping_int64(op, x, y), I64), (r,))
        if bits is None or bits > 63:                    # |result| < 2**63 fits int64
            overflow = _constant_overflow(op, x, y)      # ``mid + 1``: one comparison
            if overflow is None:
                # a float estimate first: it does not wait for the sum, unlike a test of the wrapped sum's
                # sign, which made a binary search 1.5x slower; only an estimate within 2**13 of int64's
                # ends runs the exact test (-2**63 itself is an int64)
                fx, fy = x.astype("float64"), y.astype("float64")
                estimate = {"Add": fx + fy, "Sub": fx - fy, "Mult": fx * fy}[op]
                limit = tirx.const(FLOAT_INT_LIMIT, "float64")
                near = tirx.Or(estimate >= limit, estimate <= tirx.const(-FLOAT_INT_LIMIT, "float64"))
                overflow = tirx.if_then_else(near, _exact_int64_overflow(op, x, y), tirx.const(False, "bool"))
            self.fail(overflow, node, _int_overflow(node.lineno))
            bits = None
        return Val(self.bind(expr, I64), (r,), bits=bits)

    def power(self, a, b, node) -> Val:
        if (isinstance(node, gast.BinOp) and isinstance(node.right, gast.Constant)
                and node.right.value == 2 and type(node.right.value) is int):
            return self.square(a, node)
        if id(node) in self.row_op_nodes:
            raise _no("a power of array elements other than x ** 2 (numpy's array power may take other "
                      "paths than the C library's pow)", node)
        if all(t.kind in "biu" for t in a.types + b.types):
            return self.int_power(a, b, node)
        return self.float_power(a, b, node)

    def int_power(self, a, b, node) -> Val:
        """``x ** e`` of ints (and bools). To a constant exponent from 0 to 64: products by squaring,
        each as ``*`` computes it (Python ints checked against int64, the documented OverflowError;
        numpy ints wrapping, as numpy's power does); an intermediate power's magnitude is at most the
        result's, so a check fails only where the result leaves int64. To a Python int exponent known
        to be at least 0: the constant bases -1, 0, 1 and 2 (``(-1) ** k``, ``2 ** k``). A negative
        exponent gives a float in Python and an error in numpy: left to Python."""
        right = node.right if isinstance(node, gast.BinOp) else None
        if isinstance(right, gast.Constant) and type(right.value) is int:
            if not 0 <= right.value <= 64:
                raise _no("an int to a constant power outside 0 to 64", node)
            return self.power_by_squaring(a, right.value, node)
        left = node.left if isinstance(node, gast.BinOp) else None
        negative_base = isinstance(left, gast.UnaryOp) and isinstance(left.op, gast.USub) and isinstance(
            left.operand, gast.Constant) and left.operand.value == 1 and type(left.operand.value) is int
        base = -1 if negative_base else left.value if (isinstance(left, gast.Constant) and type(left.value) is int
                                                       and left.value in (0, 1, 2)) else None
        python_exponent = all(t.python and t.kind == "i" for t in b.types)
        if base is None or not python_exponent or b.span is None or b.span[0] < 0:
            raise _no("a power of ints other than to a constant exponent or of -1, 0, 1 or 2 to an exponent "
                      "known to be at least 0", node)
        r = Scalar(I64, True)
        e = _cast(b.expr, b.dtype, I64)
        one, zero = tirx.const(1, I64), tirx.const(0, I64)
        if base == 2:
            return self.python_left_shift(Val(one, (r,), bits=1, span=(1, 1)), b, r, node)
        if base == -1:
            value = tirx.Select(tirx.EQ(tirx.bitwise_and(e, one), one), tirx.const(-1, I64), one)
            return Val(self.bind(value, I64), (r,), bits=1, span=(-1, 1))
        if base == 0:
            return Val(self.bind(tirx.Select(tirx.EQ(e, zero), one, zero), I64), (r,), bits=1, span=(0, 1))
        return Val(one, (r,), bits=1, span=(1, 1))

    def power_by_squaring(self, a, exponent: int, node) -> Val:
        """``a ** exponent`` for a constant ``exponent`` >= 0, by ``*`` (its checks and wrapping)."""
        r = self.common(lambda x: x ** exponent, (a,), "the operator **", node)
        if exponent == 0:
            return Val(tirx.const(1, r.dtype), (r,), bits=1, span=(1, 1) if r.dtype == I64 else None)
        result, base = None, self.settled(a)
        while exponent:
            if exponent & 1:
                result = base if result is None else self.settled(self.binary("Mult", result, base, node))
            exponent >>= 1
            if exponent:
                base = self.settled(self.binary("Mult", base, base, node))
        if set(result.types) != {r}:          # (a bool to the first power: its type is the base's)
            result = Val(_cast(result.expr, result.dtype, r.dtype), (r,), bits=result.bits, span=result.span)
        return result

    def square(self, a, node) -> Val:
        if any(t.kind == "b" for t in a.types):
            raise _no("a power of a bool", node)
        square = self.binary("Mult", a, a, node)
        python_float = next((t for t in a.types if t.python and t.kind == "f"), None)
        if python_float is None:
            return square
        # a Python float's ** raises OverflowError where the result leaves the float range (its * and
        # numpy's ** give inf)
        result = self.bind(square.expr, square.dtype)
        x = self.bind(_cast(a.expr, a.dtype, "float64"), "float64")
        overflow = tirx.And(tirx.And(sm.te.isinf(result), sm.te.isfinite(x)),
                            self.combination_holds((a,), (python_float,)))
        self.fail(overflow, node, lambda vals: _raised(pow, _float_of_bits(vals[0]), 2), (x,))
        return Val(result, square.types, square.tag)

    def float_power(self, a, b, node) -> Val:
        """``x ** e`` of a float64 (a Python float or a numpy float64) and an int, or of a numpy float64
        and a constant float: the C library's ``pow``, which CPython's float power and numpy's scalar
        power both call. A Python float's power raises as CPython's: ZeroDivisionError for 0.0 to a
        negative power, OverflowError where a finite base gives an infinity. (A Python float to a
        power that is not an integer gives a complex where the base is negative: not compiled.)"""
        constant = isinstance(node, gast.BinOp) and isinstance(node.right, gast.Constant)
        exponent = _float_constant(node.right) if isinstance(node, gast.BinOp) else None
        if exponent is not None and a.types and all(t.python and (t.dtype == "float64" or t.kind == "i")
                                                    for t in a.types):
            return self.python_float_power(a, exponent, node)
        if not a.types or any(t.dtype != "float64" for t in a.types):
            raise _no(f"a power of {'/'.join(map(str, a.types))} (only float64 bases, other than x ** 2)", node)
        ints = all(t.kind in "iu" and t.dtype != "uint64" for t in b.types)
        if not ints and not (constant and type(node.right.value) is float and not any(t.python for t in a.types)):
            raise _no("a power whose exponent is not an int (a Python float's power may be complex)", node)
        if any(t.python for t in a.types) and not all(t.python for t in b.types):
            # (float's ** refuses a numpy int: numpy's power ufunc runs, whose vectorized pow differs from
            # the C library's in the last bit of some results)
            raise _no("a Python float to a numpy int's power (numpy's power ufunc, not the C library's pow)",
                      node)
        r = self.common(operator.pow, (a, b), "the operator **", node)
        x = self.bind(a.expr, "float64")
        e = self.bind(_cast(b.expr, b.dtype, "float64"), "float64")
        result = self.bind(sm.libm("pow", "float64", x, e), "float64")
        if r.python:              # a Python float and a Python int (a numpy int makes it numpy's power)
            exponent = self.bind(_cast(b.expr, b.dtype, I64), I64)
            raise_ = lambda vals: _raised(pow, _float_of_bits(vals[0]), int(vals[1]))  # noqa: E731
            self.fail(tirx.And(tirx.EQ(x, tirx.const(0.0, "float64")), exponent < tirx.const(0, I64)), node,
                      raise_, (x, exponent))
            self.fail(tirx.And(sm.te.isinf(result), sm.te.isfinite(x)), node, raise_, (x, exponent))
        return Val(result, (r,))

    def python_float_power(self, a, exponent: float, node) -> Val:
        """``x ** 0.5`` of a Python float or int and a constant float: CPython's float power, which is
        the C library's ``pow`` of the base as a float (an int converted as ``float()`` converts it,
        rounded to nearest) with CPython's errors: ZeroDivisionError for 0.0 to a negative power,
        OverflowError where a finite base to a finite power gives an infinity. A negative base to a power that is not an
        integer gives a complex number in Python: there the loop's Python runs instead."""
        r = Scalar("float64", True)
        x = self.bind(_cast(a.expr, a.dtype, "float64"), "float64")
        e = tirx.const(exponent, "float64")
        result = self.bind(sm.libm("pow", "float64", x, e), "float64")

        def raise_(vals):
            return _raised(pow, _float_of_bits(vals[0]), exponent)

        if not math.isfinite(exponent):  # (to an infinite exponent CPython gives inf, 1.0 or 0.0, no error)
            return Val(result, (r,))
        if exponent < 0:
            self.fail(tirx.EQ(x, tirx.const(0.0, "float64")), node, raise_, (x,))
        self.fail(tirx.And(sm.te.isinf(result), sm.te.isfinite(x)), node, raise_, (x,))
        if exponent != math.floor(exponent):       # (CPython takes an infinite base apart first)
            negative = tirx.And(x < tirx.const(0.0, "float64"), sm.te.isfinite(x))
            self.fail(negative, node, _complex_power(node.lineno))
        return Val(result, (r,))

    def unary(self, e) -> Val:
        return self.unary_value(type(e.op).__name__, self.expr(e.operand), e)

    def unary_value(self, op, v: Val, e) -> Val:
        if any(t.kind == "c" for t in v.types):
            return self.complex_unary(op, v, e)
        if op == "Not":
            return Val(tirx.Not(self.truth(v)), (Scalar("bool", True),))
        if op == "Invert":
            return self.invert(v, e)
        if any(t.kind == "b" for t in v.types):
            raise _no(f"unary {op} of a bool", e)
        if all(t.kind == "f" for t in v.types):      # a float keeps its type (and tag), exactly
            return Val(UFUNC_RULES["negative"](v.dtype)(v.expr) if op == "USub" else v.expr, v.types, v.tag)
        zero = Val(tirx.const(0, I64), (Scalar(I64, True),), bits=0)
        return self.binary("Sub" if op == "USub" else "Add", zero, v, e)

    def invert(self, v: Val, e) -> Val:
        """``~x``: of a Python int ``-x - 1`` (never beyond int64), of a numpy bool ``not x``, of a numpy
        int its bits flipped in its dtype. A Python bool (``~True`` is -2, deprecated) and floats (a
        TypeError) are left to Python."""
        if any(t.kind == "b" and t.python for t in v.types):
            raise _no("~ of a Python bool", e)
        r = self.common(operator.invert, (v,), "the operator ~", e)
        x = _cast(v.expr, v.dtype, r.dtype)
        return Val(self.bind(UFUNC_RULES["invert"](r.dtype)(x), r.dtype), (r,),
                   bits=v.bits + 1 if r.python and v.bits is not None else None)     # |~x| = |x + 1|

    def compare(self, e) -> Val:
        """``a < b < c``: ``c`` is evaluated only if ``a < b``; the value is the last comparison made.
        One comparison of a variable that is a Python int on some iterations and a numpy int on others
        (``c = 0`` then ``c += grid[i, j]``) gives a bool or a numpy bool: its tag says which."""
        out = T.alloc_buffer((1,), "bool", scope="global")
        steps = []

        def step(left, k):
            right = self.expr(e.comparators[k])
            v = self.compare_values(type(e.ops[k]).__name__, left, right, e)
            ints = all(t.kind in "biu" for t in left.types + right.types)
            if len(e.ops) == 1 and ints:
                self.compared[id(e)] = (type(e.ops[k]).__name__, left, right)
            steps.append((v.types, v.tag))
            T.buffer_store(out, v.expr, [0])
            if k + 1 < len(e.ops):
                with T.If(out[0]):
                    with T.Then(), self.scope():
                        step(right, k + 1)

        left = self.expr(e.left)
        with self.carried_checks():
            step(left, 0)
        if len(steps) == 1:
            types, tag = steps[0]
            return Val(out[0], types, tag)
        types = {t for types, _ in steps for t in types}
        if len(types) != 1:
            raise _no("a chained comparison of Python and numpy values", e)
        return Val(out[0], (types.pop(),))

    def compare_values(self, op, a: Val, b: Val, node) -> Val:
        """``a < b`` of two values (one comparison), with the type Python or numpy gives."""
        types, tag = self.result_types(COMPARE[op], (a, b), f"the comparison {op}")
        return Val(self.compare_pair(op, a, b, node), types, tag)

    def result_types(self, fn, operands, what):
        """(types, tag) of ``fn``'s result over the operands' possible types: one type and no tag, or
        several and the tag expression choosing among them from the operands' own tags."""
        results = possible_results(fn, operands, what)
        types = ordered(set(results.values()))
        if len(types) == 1:
            return types, None
        tag = None
        for combo, r in results.items():
            index = tirx.const(types.index(r), "int8")
            tag = index if tag is None else tirx.Select(self.combination_holds(operands, combo), index, tag)
        return types, self.bind(tag, "int8")          # the operands' tags as they are now

    def compare_pair(self, op, a: Val, b: Val, node):
        kinds = {t.kind for t in a.types + b.types}
        if "c" in kinds:
            return self.complex_compare(op, a, b, node)
        if kinds <= {"b", "i", "u"}:
            if "uint64" in (a.dtype, b.dtype):
                raise _no("a comparison with uint64", node)
            loop = I64 if kinds != {"b"} else "int8"
            return UFUNC_RULES[UFUNC_OF_COMPARE[op]](loop)(_cast(a.expr, a.dtype, loop), _cast(b.expr, b.dtype, loop))
        # Python compares an int with a float exactly; the float compare agrees below 2**53
        for x, y in ((a, b), (b, a)):
            if any(t.python and t.kind in "iu" for t in x.types) and any(t.python and t.kind == "f" for t in y.types):
                self.check_exact_as_float(x, node, "an int above 2**53 compared with a float")
        rule = UFUNC_RULES[UFUNC_OF_COMPARE[op]]
        promoted = possible_results(BINARY["Add"], (a, b), "promotion")
        expr = None                      # compared in the type the operands promote to on each iteration
        for combo, r in promoted.items():
            dtype = r.dtype
            if all(t.kind in "biu" for t in combo):
                # ints compare exactly, as in the branch above: np.uint8(7) < -2 is False, where the
                # promoted type would wrap the Python int to 254 (a variable that is a Python float on
                # some iterations and an element of a uint8 array on others)
                if any(t.dtype == "uint64" for t in combo):
                    raise _no("a comparison with uint64", node)
                dtype = "int8" if all(t.kind == "b" for t in combo) else I64
            here = rule(dtype)(_cast(a.expr, a.dtype, dtype), _cast(b.expr, b.dtype, dtype))
            expr = here if expr is None else tirx.Select(self.combination_holds((a, b), combo), here, expr)
        return expr

    def choice(self, values, node):
        """A local for a value chosen at run time among ``values``: ``put(v)`` stores one (with its tag
        where the types differ), ``current()`` reads what was stored last."""
        types = ordered({t for v in values for t in v.types})
        dtype = storage_dtype(types)
        out = cx.local_buffer(dtype)
        tag = T.alloc_buffer((1,), "int8", scope="global") if len(types) > 1 else None
        int_bits = []                    # bounds of the ints put (floats have none to keep)

        def put(v):
            self.exact_in(v, dtype, node)
            cx.store_local(out, _cast(v.expr, v.dtype, dtype), dtype)
            if tag is not None:
                T.buffer_store(tag, self.retag(v, types), [0])
            if any(t.kind in "iu" for t in v.types):
                int_bits.append(v.bits)

        def current():
            bits = None if not int_bits or None in int_bits else max(int_bits)
            expr = cx.load_local(out, dtype) or _leaf(out[0], dtype)
            return Val(expr, types, tag[0] if tag is not None else None, bits)

        return put, current

    def select(self, e) -> Val:
        test = self.truth(self.expr(e.test))

        def produce(put):
            with T.If(test):
                with T.Then(), self.scope():
                    put(self.expr(e.body))
                with T.Else(), self.scope():
                    put(self.expr(e.orelse))

        return self._twice(produce, e)

    def _twice(self, produce, node, arity=None):
        """Lower ``produce(put)`` once, unseen, to learn the types of the values it puts, then for real
        into a local of those types, chosen at run time among them: the local's value. With ``arity``,
        ``put`` takes lists of that many values, each position into a local of its own: their values."""
        probes = [[] for _ in range(arity or 1)]

        def items(value):
            return [value] if arity is None else value

        def collect(value):
            for probe, v in zip(probes, items(value)):
                probe.append(v)

        self.dry_run(lambda: produce(collect))
        choices = [self.choice(probe, node) for probe in probes]

        def put(value):
            for (put_one, _), v in zip(choices, items(value)):
                put_one(v)

        with self.carried_checks():
            produce(put)
        values = [current() for _, current in choices]
        return values[0] if arity is None else values

    def bool_op(self, e) -> Val:
        """``a and b`` is a if a is false, else b (the value, not a bool); b is evaluated only then."""
        is_and = isinstance(e.op, gast.And)

        def produce(put, k=0):
            v = self.expr(e.values[k])
            put(v)
            if k + 1 < len(e.values):
                test = self.truth(v)
                with T.If(test if is_and else tirx.Not(test)):
                    with T.Then(), self.scope():
                        produce(put, k + 1)

        return self._twice(produce, e)

    def call(self, e) -> Val:
        name = self.calls.get(e)
        if isinstance(name, Inlined):
            return self.inlined(name, e)
        if name in ("reduce.dot", "reduce.norm", "append"):
            self.note_access("other")
        if name == "reduce.dot":
            return self.dot(e)
        if name == "reduce.norm":
            return self.norm(e)
        if name == "append":
            return self.append(e)
        if isinstance(name, str) and name.startswith("reduce."):
            # (a loop over the row's elements inside the position: checks first would reduce each row
            # twice, and there is no position loop to vectorize)
            self.note_access("other")
            return self.reduction(name.removeprefix("reduce."), reduction_operand(e), e)
        if name == "conjugate":
            return self.conjugate(e)
        if name == "index":                          # operator.index: an enumerate()'s start
            v = self.expr(e.args[0])
            if any(t.kind not in "biu" or t.dtype == "uint64" or t.kind == "b" and not t.python for t in v.types):
                raise _no("enumerate() from a start that is not an int", e)     # (numpy's bool raises)
            return Val(_cast(v.expr, v.dtype, I64), (Scalar(I64, True),), bits=v.bits, span=v.span)
        if name == "len":
            if len(e.args) != 1 or not isinstance(e.args[0], gast.Name):
                raise _no("len() of something other than an array", e)
            return self.extent(e.args[0].id, 0, e)
        args = [self.expr(a) for a in e.args]
        if name == "complex":
            return self.make_complex(args, e)
        if name == "abs" and len(args) == 1 and any(t.kind == "c" for t in args[0].types):
            return self.complex_abs(args[0], e)
        if name in ("cast.complex64", "cast.complex128") and len(args) == 1:
            return self.numpy_cast(name.removeprefix("cast."), args[0], e)
        if any(t.kind == "c" for v in args for t in v.types):
            raise _no(f"{name}() of a complex number", e)
        if name == "np.clip":
            return self.clip(args, e)
        if name in MATH_PREDICATES_BY_NAME and len(args) == 1:
            x = _cast(args[0].expr, args[0].dtype, "float64")       # (``float(x)`` first, as CPython's)
            return Val(MATH_PREDICATES_BY_NAME[name](x), (Scalar("bool", True),))
        if name in ("min", "max"):
            if len(args) < 2:
                raise _no(f"{name}() of one iterable", e)
            return self.min_max(name, args, e)
        if name in MATH_BINARY_BY_NAME and len(args) == 2:
            return self.math_binary(name, args, e)
        if len(args) != 1 and not name.startswith("np."):
            raise _no(f"{name}() with {len(args)} arguments", e)
        if name in MATH_TO_INT_BY_NAME:
            return self.math_to_int(name, args[0], e)
        if name == "abs":
            v = args[0]
            if any(t.kind == "b" for t in v.types):
                raise _no("abs() of a bool", e)
            if all(t.kind == "f" for t in v.types):     # a float keeps its type (and tag), exactly
                return Val(sm.te.abs(v.expr), v.types, v.tag)
            r = self.common(abs, (v,), "abs", e)
            x = _cast(v.expr, v.dtype, r.dtype)
            if r.dtype == I64 and r.python:          # (numpy's int64 wraps: abs(-2**63) is -2**63)
                self.fail(tirx.EQ(x, tirx.const(-2**63, I64)), e, _int_overflow(e.lineno))
            return Val(self.bind(sm.absolute(r.dtype, x), r.dtype), (r,), bits=v.bits)
        if name == "float":
            v = args[0]
            return Val(_cast(v.expr, v.dtype, "float64"), (Scalar("float64", True),))
        if name == "bool":
            return Val(self.truth(args[0]), (Scalar("bool", True),))
        if name == "int":
            return self.to_int(args[0], e)
        if name == "round":
            return self.round_to_int(args[0], e)
        if name in MATH_FUNCTIONS_BY_NAME:
            return self.math(name, args[0], e)
        if name.startswith("cast."):
            return self.numpy_cast(name.removeprefix("cast."), args[0], e)
        if name.startswith("np."):
            return self.ufunc(name[3:], args, e)
        raise _no(f"the call {name}", e)

    def inlined(self, callee, e, arity=None):
        """A call of the user's function: the arguments evaluated in order and bound to its (renamed)
        parameters, then its body, where ``return value`` stores the call's value and skips the rest.
        With ``arity`` (``a, b = f(x)``), each ``return`` gives a tuple of that many values
        (``return p, q``): the list of their Vals."""
        values = []
        def assigns(param):
            return any(isinstance(n, gast.Name) and n.id == param and isinstance(n.ctx, gast.Store)
                       for s in callee.body for n in gast.walk(s))

        for param, arg in zip(callee.params, e.args):
            if isinstance(arg, gast.Name) and arg.id in self.arrays:      # an array passed on: its buffer
                if assigns(param):
                    raise _no(f"{callee.name} assigns its array parameter", e)
                values.append((self.arrays[arg.id], self.array_origin.get(arg.id, arg.id)))
            elif self.has_rows(arg):                # a row: the parameter is a named row (loop_named_rows)
                if assigns(param):
                    raise _no(f"{callee.name} assigns a parameter that is passed a row", e)
                self.bind_row_value(param, arg, e, callee.body)
                values.append(None)
            else:
                values.append(self.settled(self.expr(arg)))
        for param, v in zip(callee.params, values):
            if isinstance(v, Val):
                self.assign(param, v, e)
            elif v is not None:
                self.arrays[param], self.array_origin[param] = v
                self.named_rows.pop(param, None)

        def produce(put):
            done = T.alloc_buffer((1,), "bool", scope="global")
            T.buffer_store(done, tirx.const(False, "bool"), [0])

            def return_(s):
                if callee.procedure:                  # its value unused: computed for its errors only
                    v = [self.expr(x) for x in return_values(s) or ()]
                elif arity is None:
                    v = self.expr(s.value)
                else:
                    items = return_values(s)
                    if items is None or not isinstance(s.value, gast.Tuple) or len(items) != arity:
                        raise _no(f"{callee.name} returns something other than a tuple of {arity} values "
                                  "here", s)
                    v = [self.settled(self.expr(x)) for x in items]       # all first, as a tuple is built
                put(v)
                T.buffer_store(done, tirx.const(True, "bool"), [0])
                for brk, _ in self.flags[depth:]:     # a return from the callee's own loops ends them
                    T.buffer_store(brk, tirx.const(True, "bool"), [0])

            self.flags.append((done, done))
            depth = len(self.flags)
            self.returns.append(return_)
            try:
                self.body(callee.body)
            finally:
                self.flags.pop()
                self.returns.pop()

        if callee.procedure:                          # (called as a statement: nothing to choose among)
            with self.carried_checks():
                produce(lambda v: None)
            return None
        return self._twice(produce, e, arity)     # (a check failed in the callee stops what follows it too)

    def go_on_if_ok(self) -> None:
        """What the current scope emits from here runs only while no check has failed (``fail`` does
        this after its own check; a callee's checks close with the callee's scope)."""
        frames = [T.If(self.ok[0])]
        frames[0].__enter__()
        frames.append(T.Then())
        frames[1].__enter__()
        self.pending[-1].extend(frames)

    def min_max(self, name, args, e) -> Val:
        """Python's min/max: the first extreme argument, comparing with < or > (a NaN first stays). Of
        a Python and a numpy number the result's type is the chosen argument's (its tag)."""
        op = "Lt" if name == "min" else "Gt"
        put, current = self.choice(args, e)
        put(args[0])
        for v in args[1:]:
            with T.If(self.compare_pair(op, v, current(), e)):
                with T.Then(), self.scope():
                    put(v)
                self.unbiased_else()
        return current()

    def unbiased_else(self) -> None:
        """An ``else`` for the ``T.If`` being emitted: TVM marks the branch of an ``if`` without one as
        very likely taken, and LLVM then keeps a data-dependent choice (``m = x if x < m else m``) as a
        branch instead of a select, mispredicted half the time on random data (a DTW's ``min`` of three
        ran 3x numba's time). Its store, to a scratch value nothing reads, is removed by LLVM."""
        with T.Else():
            T.buffer_store(T.alloc_buffer((1,), "int8", scope="global"), tirx.const(0, "int8"), [0])

    def to_int(self, v: Val, e) -> Val:
        py_int = Scalar(I64, True)
        if all(t.kind in "biu" for t in v.types):
            if "uint64" in (t.dtype for t in v.types):
                raise _no("int() of a uint64", e)
            return Val(_cast(v.expr, v.dtype, I64), (py_int,), bits=v.bits)
        return self.float_to_int(_cast(v.expr, v.dtype, "float64"), sm.te.trunc, int, e)

    def round_to_int(self, v: Val, e) -> Val:
        """``round(x)``: a Python int, ties to even (C's nearbyint, in the default rounding mode), of a
        float32 or float64 as of a Python float; an int as it is (a numpy bool has no ``round``)."""
        if any(t.kind == "b" and not t.python for t in v.types):
            raise _no("round() of a numpy bool", e)
        if all(t.kind in "biu" for t in v.types):
            return self.to_int(v, e)
        return self.float_to_int(_cast(v.expr, v.dtype, "float64"), tirx.nearbyint, round, e)

    def float_to_int(self, x, rounding, fn, e, bounded=False) -> Val:
        """``fn(x)`` (``int``, ``math.floor``...) of a float64 ``x``, rounded by ``rounding``: a Python int
        (int64 here, beyond it the documented OverflowError), NaN and infinities raising as ``fn`` does.
        With ``bounded`` (``np.int64``) beyond int64 is ``fn``'s own error."""
        self.fail(sm.te.isnan(x), e, lambda vals: _raised(fn, float("nan")))
        self.fail(sm.te.isinf(x), e, lambda vals: _raised(fn, _float_of_bits(vals[0])), (x,))
        rounded = self.bind(rounding(x), "float64")
        limit = tirx.const(2.0**63, "float64")
        beyond = tirx.Or(rounded >= limit, rounded < -limit)
        if bounded:
            self.fail(beyond, e, lambda vals: _raised(fn, _float_of_bits(vals[0])), (x,))
        else:
            self.fail(beyond, e, _int_overflow(e.lineno))
        return Val(self.bind(rounded.astype(I64), I64), (Scalar(I64, True),))

    def math(self, name, v: Val, e) -> Val:
        """``math.f(x)``: x made a Python float, f from the C library (as CPython's), errors as CPython's."""
        x = self.bind(_cast(v.expr, v.dtype, "float64"), "float64")
        fn = MATH_FUNCTIONS_BY_NAME[name]
        check = MATH_CHECKS.get(name)
        if check is not None:
            result = None
            if check == "result":
                result = self.bind(_c_math(name, x), "float64")
                cond = _c_math_error(result, x)
            else:
                cond = check(x)
            self.fail(cond, e, lambda vals, fn=fn: _raised(fn, _float_of_bits(vals[0])), (x,))
            if result is not None:
                return Val(result, (Scalar("float64", True),))
        if name == "fabs":
            return Val(sm.te.abs(x), (Scalar("float64", True),))
        return Val(self.bind(_c_math(name, x), "float64"), (Scalar("float64", True),))

    def math_binary(self, name, args, e) -> Val:
        """``math.atan2(y, x)``, ``copysign``, ``pow``, ``fmod``: both made Python floats, the C library's
        function (CPython's: the same bits), and CPython's errors: a NaN from numbers that are not
        NaN is a domain error, an infinity from finite numbers a range error (which exception and
        message: Python's own call with the same values)."""
        x, y = (self.bind(_cast(v.expr, v.dtype, "float64"), "float64") for v in args)
        if name == "hypot":              # CPython's own algorithm, which never raises
            value = sm.python_hypot(x, y, lambda expr: self.bind(expr, sm.dtype_of(expr)),
                                    before_312=sys.version_info < (3, 12))
            return Val(self.bind(value, "float64"), (Scalar("float64", True),))
        r = self.bind(sm.libm(name, "float64", x, y), "float64")
        if name == "atan2":              # CPython returns its own NaN for a NaN input
            r = self.bind(sm.python_nan(r, x, y), "float64")
        fn = MATH_BINARY_BY_NAME[name]
        self.fail(_c_math_error(r, x, y), e,
                  lambda vals, fn=fn: _raised(fn, _float_of_bits(vals[0]), _float_of_bits(vals[1])), (x, y))
        return Val(r, (Scalar("float64", True),))

    def math_to_int(self, name, v: Val, e) -> Val:
        """``math.floor``, ``ceil``, ``trunc`` of a float: a Python int (int64 here, beyond it the
        documented OverflowError), NaN and infinities raising as Python does; of an int (or a bool)
        the same number as a Python int."""
        # an int: itself, as a Python int (math.trunc of a numpy int raises TypeError: no __trunc__)
        if all(t.kind in "biu" and t.python for t in v.types):
            return Val(_cast(v.expr, v.dtype, I64), (Scalar(I64, True),), bits=v.bits, span=v.span)
        if all(t.kind in "biu" and t.dtype != "uint64" for t in v.types) and name != "trunc":
            # a numpy int has no __floor__: Python makes it a float first (2**53 + 1 becomes 2**53)
            return self.float_to_int(_cast(v.expr, v.dtype, "float64"), getattr(sm.te, name),
                                     MATH_TO_INT_BY_NAME[name], e)
        if any(t.dtype != "float64" for t in v.types):
            raise _no(f"math.{name}() of a value other than a float or an int", e)
        return self.float_to_int(v.expr, getattr(sm.te, name), MATH_TO_INT_BY_NAME[name], e)

    def numpy_cast(self, dtype, v: Val, e) -> Val:
        """``np.float32(x)``, ``np.float64(x)``, ``np.int64(x)`` of a number. numpy makes a Python int a
        float through a Python float (two roundings: ``np.float32(2**62 + 2**38 + 1)`` is 2**62) and a
        numpy int directly; it makes a Python float an int64 as ``int()`` does (NaN and infinities
        raise), a numpy float by a C cast whose out-of-range result depends on the machine (left to
        Python)."""
        kinds = {t.kind for t in v.types}
        if "uint64" in (t.dtype for t in v.types):
            raise _no(f"np.{dtype}() of a uint64", e)
        if cx.is_complex(dtype):
            return self.complex_cast(dtype, v, e)
        result = (Scalar(dtype, False),)
        if dtype != I64 and np.dtype(dtype).kind in "iu":
            return self.narrow_int_cast(dtype, v, e)
        if dtype == I64:
            if kinds <= {"b", "i", "u"}:
                return Val(_cast(v.expr, v.dtype, I64), result, bits=v.bits)
            if any(not t.python for t in v.types if t.kind == "f") or kinds - {"f"}:
                raise _no("np.int64() of a numpy float or of a value that is not always a Python float", e)
            return Val(self.float_to_int(v.expr, sm.te.trunc, np.int64, e, bounded=True).expr, result)
        python_ints = {t.python for t in v.types if t.kind == "i"}
        if dtype == "float32" and v.dtype == I64 and True in python_ints:
            if False in python_ints:
                raise _no("np.float32() of a value that is a Python int on some iterations only", e)
            return Val(_cast(_cast(v.expr, I64, "float64"), "float64", dtype), result)   # through a Python float
        return Val(_cast(v.expr, v.dtype, dtype), result)

    def narrow_int_cast(self, dtype, v: Val, e) -> Val:
        """``np.int32(x)``, ``np.uint8(x)``...: a Python int (or bool) out of the dtype's range raises
        numpy's OverflowError, a numpy int wraps (a C conversion), a Python float is made an int as
        ``int()`` makes it and then range checked (numpy's errors, from numpy itself). A numpy float's
        out-of-range conversion depends on the machine: left to Python."""
        kinds = {t.kind for t in v.types}
        fn = getattr(np, dtype)
        if kinds <= {"b", "i", "u"}:
            self.check_int_fits(v, dtype, e)
            return Val(_cast(v.expr, v.dtype, dtype), (Scalar(dtype, False),))
        if any(not t.python for t in v.types if t.kind == "f") or kinds - {"f"}:
            raise _no(f"np.{dtype}() of a numpy float or of a value that is not always a Python float", e)
        whole = self.float_to_int(v.expr, sm.te.trunc, fn, e, bounded=True).expr
        info = np.iinfo(dtype)
        beyond = tirx.Or(whole > tirx.const(int(info.max), I64), whole < tirx.const(int(info.min), I64))
        self.fail(beyond, e, lambda vals: _raised(fn, _float_of_bits(vals[0])), (v.expr,))
        return Val(_cast(whole, I64, dtype), (Scalar(dtype, False),))

    def clip(self, args, e) -> Val:
        """``np.clip(x, lo, hi)`` of numbers: numpy's result type; NaN in any operand propagates, a tie
        keeps ``x`` (``clip(-0.0, 0.0, 1.0)`` is -0.0); of floats only (numpy drops an int bound beyond
        the dtype's range)."""
        if len(args) != 3:
            raise _no(f"np.clip with {len(args)} arguments", e)
        r = self.common(np.clip, args, "np.clip", e)
        # (of an int, numpy's clip takes a path that depends on whether an int bound fits the int's
        # dtype, and there a tie with a -0.0 bound can give -0.0)
        if r.python or r.kind != "f" or any(t.kind != "f" for t in args[0].types):
            raise _no("np.clip other than of a float", e)
        x, lo, hi = (_cast(v.expr, v.dtype, r.dtype) for v in args)
        rule = lambda x, lo, hi: sm.clip_bound(r.dtype, sm.clip_bound(r.dtype, x, lo, True), hi, False)  # noqa: E731
        return Val(self.bind(sm.apply_once(rule, [x, lo, hi]), r.dtype), (r,))

    def ufunc(self, name, args, e, over_arrays=False) -> Val:
        """``np.name(*args)`` on elements; ``over_arrays``: the elements of a whole-array or row
        statement's operands, where numpy would make one call of its loop over all of them."""
        if name == "clip":               # (a function over numpy's clip ufunc: no ``nin``)
            return self.clip(args, e)
        ufunc = getattr(np, name)
        if len(args) != ufunc.nin:
            raise _no(f"np.{name} with {len(args)} arguments", e)
        r = self.common(ufunc, args, f"np.{name}", e)
        if r.python:
            raise _no(f"np.{name} giving a Python number", e)
        kinds = {t.kind for v in args for t in v.types}
        if name in ("isnan", "isinf", "isfinite"):
            loop = args[0].dtype if kinds == {"f"} else "float64"
        else:
            loop = r.dtype
            if r.kind in "iu" and name not in ("absolute", "minimum", "maximum", "fmax", "fmin", "sign"):
                raise _no(f"np.{name} of integers", e)
            if r.kind in "iu":           # (NEP 50: a Python int beside np.uint8(3) must fit uint8)
                for v in args:
                    self.check_int_fits(v, r.dtype, e)
        if over_arrays and numpy_loop_faster(name, loop):
            raise _no(f"np.{name} over {loop} arrays: numpy's vectorized loop is faster than the kernel's "
                      "call of the C library per element", e)
        if over_arrays and svml_faster(name, loop):
            self.numpy_faster_rows = True
        xs = [_cast(v.expr, v.dtype, loop) for v in args]
        # (np.abs of an int64 wraps as numpy's does: np.abs(np.int64(-2**63)) is -2**63, no error)
        if name in ("maximum", "minimum", "fmax", "fmin"):
            xs = [self.bind(x, loop) for x in xs]
            return Val(self.bind(sm.scalar_extreme(name, loop, *xs), r.dtype), (r,))
        return Val(self.bind(UFUNC_RULES[name](loop)(*xs), r.dtype), (r,))


def _c_math_error(result, *inputs):
    """Where CPython's math module raises for a C library ``result``: a NaN from numbers that are not
    NaN (domain error), an infinity from finite numbers (range error)."""
    te = sm.te
    not_nan = [tirx.Not(te.isnan(x)) for x in inputs]
    finite = [te.isfinite(x) for x in inputs]
    return tirx.Or(tirx.And(te.isnan(result), functools.reduce(tirx.And, not_nan)),
                   tirx.And(te.isinf(result), functools.reduce(tirx.And, finite)))


def _c_math(name, x):
    """The C library's function, as CPython's ``math`` calls it (the same bits: numpy's float64 ``exp``
    and ``log`` rules are vectorized approximations within an ulp), else the ufunc's rule. The square
    root is correctly rounded by the C library and by the CPU's instruction alike: LLVM's intrinsic,
    which LLVM hoists out of a loop where its argument is invariant, and vectorizes."""
    if name == "sqrt":
        return sm.te.sqrt(x)
    if name in sm.LIBM:
        return sm.libm(sm.LIBM[name], "float64", x)
    if name in ("erf", "erfc"):
        return sm.libm(name, "float64", x)
    return UFUNC_RULES[name]("float64")(x)


def counter_type(loop) -> Scalar:
    """What a ``for`` gives its variable: a Python int for a range, the items' type for a tuple."""
    if isinstance(loop.iter, gast.Tuple):
        return Scalar(PYTHON_DTYPES[type(constant_items(loop.iter)[0])], True)
    return Scalar(I64, True)


def _no(reason, node=None) -> Unsupported:
    """Why the loop cannot compile, with the line that stops it (and its file, in an inlined function)."""
    line = getattr(node, "lineno", None)
    where = f"{os.path.basename(node.astjit_file)}:{line}" if hasattr(node, "astjit_file") else f"line {line}"
    return Unsupported(f"{reason} ({where})" if line else reason)


MATH_FUNCTIONS_BY_NAME = {name: fn for fn, name in MATH_FUNCTIONS.items()}
MATH_BINARY_BY_NAME = {name: fn for fn, name in MATH_BINARY.items()}
MATH_TO_INT_BY_NAME = {name: fn for fn, name in MATH_TO_INT.items()}
MATH_PREDICATES_BY_NAME = {"math.isnan": sm.te.isnan, "math.isinf": sm.te.isinf, "math.isfinite": sm.te.isfinite}
# CPython's checks of a C library result (domain: NaN from a number; range: infinity from a finite
# number), where the input alone tells; "result": from the result (_c_math_error)
MATH_CHECKS = {
    "sqrt": lambda x: x < tirx.const(0.0, "float64"),
    "log": lambda x: x <= tirx.const(0.0, "float64"),
    "log1p": lambda x: x <= tirx.const(-1.0, "float64"),
    "sin": lambda x: sm.te.isinf(x), "cos": lambda x: sm.te.isinf(x), "tan": lambda x: sm.te.isinf(x),
    **{name: "result" for name in ("exp", "sinh", "cosh", "expm1", "arcsin", "arccos", "arcsinh", "arccosh",
                                   "arctanh", "log2", "log10", "cbrt", "exp2", "erf", "erfc")},
}


def _constant_overflow(op, x, y):
    """Where ``x op y`` leaves int64, as one comparison of the other operand with a constant, when
    an operand of ``+`` or the right operand of ``-`` is a constant; else None."""
    if op == "Add" and isinstance(x, tirx.IntImm) and not isinstance(y, tirx.IntImm):
        x, y = y, x
    if not isinstance(y, tirx.IntImm) or isinstance(x, tirx.IntImm) or op not in ("Add", "Sub"):
        return None
    c = int(y.value) if op == "Add" else -int(y.value)       # x + c
    if not INT64.min <= c <= INT64.max:
        return None
    if c >= 0:
        return x > tirx.const(int(INT64.max) - c, I64)
    return x < tirx.const(int(INT64.min) - c, I64)


def _exact_int64_overflow(op, x, y):
    """Whether ``x op y`` leaves int64, from the wrapped result: a sum whose sign differs from both
    operands', a difference whose sign differs from the minuend's where the operands' signs differ, a
    product that does not divide back (the divisor made nonzero and not -1, which cannot trap)."""
    w = _wrapping_int64(op, x, y)
    zero = tirx.const(0, I64)
    if op == "Add":
        return tirx.bitwise_and(tirx.bitwise_xor(x, w), tirx.bitwise_xor(y, w)) < zero
    if op == "Sub":
        return tirx.bitwise_and(tirx.bitwise_xor(x, y), tirx.bitwise_xor(x, w)) < zero
    minus_one = tirx.const(-1, I64)
    trivial = tirx.Or(tirx.EQ(x, zero), tirx.EQ(x, minus_one))
    divisor = tirx.Select(trivial, tirx.const(1, I64), x)
    return tirx.Or(tirx.And(tirx.EQ(x, minus_one), tirx.EQ(y, tirx.const(int(INT64.min), I64))),
                   tirx.And(tirx.Not(trivial), tirx.NE(tirx.truncdiv(w, divisor), y)))


def _wrapping_int64(op, x, y):
    """``x + y``, ``x - y`` or ``x * y`` modulo 2**64, as numpy's int64 gives it (scalar_math.wrapping)."""
    return sm.wrapping({"Add": "add", "Sub": "subtract", "Mult": "multiply"}[op], I64, x, y)


def _leaf(expr, dtype):
    return sm.shielded(expr, dtype)


def by_tag(tag, values):
    """The one of ``values`` that ``tag`` (an int8 index into them) picks, as selects (a value that is
    the last one's own expression needs none): a value of several types computed in each."""
    expr = values[-1]
    for k in range(len(values) - 2, -1, -1):
        if values[k] is not values[-1]:
            expr = tirx.Select(tirx.EQ(tag, tirx.const(k, "int8")), values[k], expr)
    return expr


def _cast(expr, src, dst):
    """``expr`` of dtype ``src`` as ``dst``; an int or bool made float is shielded from the simplifier
    (``a[i] * 0`` would fold to 0.0 through the constant 0.0, where numpy gives nan for inf and nan)."""
    if src == dst:
        return expr
    if cx.is_complex(dst):
        return cx.as_pair(expr, src, dst, _cast)
    if cx.is_complex(src):
        raise Unsupported(f"a {src} value where a {dst} is expected")
    if dst == "bool":
        return sm.truthy(expr, src)
    if src == "bool":
        out = tirx.Select(expr, tirx.const(1, dst), tirx.const(0, dst))
        return sm.shielded(out, dst)
    if np.dtype(src).kind in "iu" and np.dtype(dst).kind in "iu":
        return sm.widen(expr, src, dst)
    if np.dtype(src).kind in "iu" and np.dtype(dst).kind == "f":
        return sm.shielded(expr.astype(dst), dst)
    return expr.astype(dst)


def _as_int64(v):
    if isinstance(v, int):
        return tirx.const(v, I64)
    dtype = sm.dtype_of(v)
    if dtype == I64:
        return v
    if dtype == "float64":
        return tirx.reinterpret(I64, v)
    return _cast(v, dtype, I64)


def _int64_variable(var) -> bool:
    """A variable holding only ints, stored as int64 (a span describes its value)."""
    return var.dtype == I64 and all(t.kind in "iu" for t in var.types)


def _below_extent(v: Val, key) -> bool:
    """``0 <= v <= extent - 1`` from its span and its bound by that extent (loop_spans)."""
    return v.span is not None and v.span[0] >= 0 and v.ub is not None and v.ub[0] == key and v.ub[1] == 1 \
        and v.ub[2] <= -1


def _tighter(bits, other):
    return other if bits is None else (bits if other is None else min(bits, other))


def _incoming_span(t: Scalar):
    """The span of a scalar argument: a Python int or int64 below 2**48 in magnitude (else the loop
    runs as Python: LoopLowering.incoming_bits), another int dtype's range."""
    if t.kind == "b":
        return 0, 1
    if t.kind not in "iu" or t.dtype == "uint64":
        return None
    if t.dtype == I64:
        return -(2**EXTENT_BITS) + 1, 2**EXTENT_BITS - 1
    info = np.iinfo(t.dtype)
    return int(info.min), int(info.max)


def _counter_span(args):
    """The span of a range() variable from its arguments' spans: ``range(stop)`` and
    ``range(start, stop)`` from start to stop - 1, a stepped range between the two."""
    if any(a is None for a in args):
        return None
    if len(args) == 1:
        return 0, max(0, args[0][1] - 1)
    start, stop = args[0], args[1]
    if len(args) == 2:
        return start[0], max(start[0], stop[1] - 1)
    return min(start[0], stop[0]), max(start[1], stop[1])


def python_function(params, exprs):
    """``lambda *params: (exprs,)`` of gast expressions, compiled."""
    lam = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], kwonlyargs=[],
                                        kw_defaults=[], defaults=[]),
                     body=ast.Tuple(elts=[gast.gast_to_ast(copy.deepcopy(e)) for e in exprs], ctx=ast.Load()))
    return eval(compile(ast.fix_missing_locations(ast.Expression(body=lam)), "<astjit raise>", "eval"))


def _raised_values_reader(kinds):
    """``read(slots)``: the values a ``raise`` computed, from the status slots (raise_statement): per
    value its ``(types, stored as float64)``, a slot of its bits, and one of its type's index where it
    has several (an int held in a float64 local is exact there). The types' Python classes are looked
    up once: at each raise they cost half a microsecond."""
    plan = [([(t.type, as_float and t.kind in "iu") for t in types], as_float) for types, as_float in kinds]

    def read(slots) -> list:
        values, at = [], 0
        for options, as_float in plan:
            stored = _float_of_bits(slots[at]) if as_float else slots[at]
            make, via_int = options[slots[at + 1]] if len(options) > 1 else options[0]
            at += 1 + (len(options) > 1)
            values.append(make(int(stored) if via_int else stored))
        return values

    return read


def _made_exception(cls, made, values) -> BaseException:
    """``cls(*args)`` of the arguments ``made(*values)`` gives; whatever that raises, where it does."""
    try:
        return cls(*made(*values))
    except BaseException as exc:  # noqa: B036 - what Python's own raise statement would meet
        return exc


def _float_of_bits(bits: int) -> float:
    return _FLOAT64.unpack(_INT64.pack(bits))[0]


_INT64, _FLOAT64 = struct.Struct("=q"), struct.Struct("=d")


# functions that emit no warning on Python numbers: their exception is made without the warning filters
# and numpy error state of ``quietly``, which cost 8 us, 14x a loop raising at its second position
PLAIN_NUMBER_MODULES = ("math", "cmath", "_operator", "operator", "builtins")


def _raised(fn, *args) -> BaseException:
    """The exception ``fn(*args)`` raises in Python (its exact type and message)."""
    try:
        if getattr(fn, "__module__", None) in PLAIN_NUMBER_MODULES and all(
                type(a) in (int, float, complex, bool) for a in args):
            fn(*args)
        else:
            quietly(fn, *args)
    except BaseException as exc:  # noqa: B036 - any exception Python raises is the answer
        return exc
    return RuntimeError(f"astjit expected {getattr(fn, '__name__', fn)}{args} to raise")


def _index_error(values) -> BaseException:
    index, axis, size = values[:3]
    return IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")


def status_slot(k) -> int:
    """Where the status buffer holds live-out value ``k`` (the index of its type follows it, then a
    complex value's imaginary part)."""
    return STATUS_SIZE + SLOTS_PER_VALUE * k


def _sequence_index_error(kind):
    return lambda values: IndexError(f"{kind} index out of range")


def _python_int_overflow(dtype):
    return lambda values: OverflowError(f"Python integer {values[0]} out of bounds for {dtype}")


def _int_overflow(line, what="an int result beyond the int64 range"):
    def make(values):
        return OverflowError(f"{what} in a compiled loop (line {line}): astjit computes Python ints in "
                             "loops as int64, where plain Python computes with a larger int (and raises "
                             "only where such an int reaches an array of a fixed-size type); run this "
                             "function with @jit(backend='python') for such values")
    make.python_goes_on = True      # (so the loop runs as Python instead, from its start: LoopLowering.fail)
    return make


def _float_constant(node):
    """The value of a float constant written ``0.5`` or ``-0.5``, else None."""
    sign = 1.0
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub | gast.UAdd):
        sign, node = (-1.0 if isinstance(node.op, gast.USub) else 1.0), node.operand
    if isinstance(node, gast.Constant) and type(node.value) is float:
        return sign * node.value
    return None


def _complex_power(line):
    def make(values):
        return TypeError(f"a negative number to a power that is not an integer in a compiled loop (line "
                         f"{line}): plain Python gives a complex number there, which astjit's kernel does not "
                         "compute; run this function with @jit(backend='python') for such values")
    make.python_goes_on = True      # (so the loop runs as Python instead, from its start: LoopLowering.fail)
    return make


def _bits_as_int64(v, dtype):
    """A scalar's bits in an int64 (read back by ``result_of``)."""
    kind, size = np.dtype(dtype).kind, np.dtype(dtype).itemsize
    if kind == "f":
        same_width = tirx.reinterpret(f"int{8 * size}", v)
        return same_width if size == 8 else same_width.astype(I64)
    if dtype == "uint64":
        return tirx.reinterpret(I64, v)
    return _cast(v, dtype, I64)


def result_reader(kernel: LoopKernel, first=0, count=None):
    """``read(s)``: the live-out values as Python would hold them, from the tail of the status buffer
    read as a list of Python ints (``count`` of them from the ``first``); an array's place holds None
    (the runner hands back its buffer or the argument)."""
    items, namespace = result_expressions(kernel, first, count)
    src = f"def read(s):\n    return [{', '.join(item or 'None' for item in items)}]\n"
    exec(compile(src, "<astjit loop results>", "exec"), namespace)
    return namespace["read"]


# struct formats of a narrower float's bits (an int of its width), by itemsize
NARROW_FLOAT_BITS = {4: "i", 2: "h"}


def result_expressions(kernel: LoopKernel, first=0, count=None, views=False) -> tuple[list, dict]:
    """(a Python expression per live-out value, reading the status list ``s``, or None for an array;
    the names the expressions use), for generated code (``result_reader``, and the loop runner, which
    inlines them: a call of a reader costs as much as a short loop's arithmetic). A float64 slot's bits
    become its float through ``struct``. With ``views``, the expressions read the status buffer itself
    through memoryviews, ``q`` of its int64 slots and ``d`` of the same bytes as float64 (the runner's:
    cheaper than a list of every slot)."""
    namespace = {"pack": struct.Struct("q").pack, "unpack": struct.Struct("d").unpack}
    ints = "q" if views else "s"
    items = []
    outputs = kernel.outputs[first:] if count is None else kernel.outputs[first:first + count]
    for k, var in enumerate(outputs, first):
        at = status_slot(k)
        if isinstance(var, LocalArray | RotatedArray):
            items.append(None)
            continue
        dtype = np.dtype(var.dtype)
        if dtype.kind == "c":              # (its parts as float64s: Python's complex of them is exact)
            value = (f"complex(d[{at}], d[{at + 2}])" if views
                     else f"complex(unpack(pack(s[{at}]))[0], unpack(pack(s[{at + 2}]))[0])")
        elif dtype == np.float64:          # (Python numbers: the slot's exact value)
            value = f"d[{at}]" if views else f"unpack(pack(s[{at}]))[0]"
        elif dtype.kind in "iub" and dtype != np.uint64:
            value = f"{ints}[{at}]"
        elif dtype.kind == "f" and dtype.itemsize in NARROW_FLOAT_BITS:
            # (the narrower float's bits, sign-extended, packed by struct and read back as that float,
            # bit for bit (a signaling NaN too, which a Python float would make quiet): 0.3 us, where
            # a numpy array per read cost about 1.5 us, twice a short loop's whole call)
            namespace[f"pack{k}"], namespace[f"narrow{k}"] = struct.Struct(NARROW_FLOAT_BITS[dtype.itemsize]).pack, dtype
            namespace["frombuffer"] = np.frombuffer
            value = f"frombuffer(pack{k}({ints}[{at}]), narrow{k})[0]"
            if views and sys.byteorder == "little":
                # (the runner's views of the status buffer as such floats, ``f4`` and ``f2``: the slot's
                # low bytes, 60 ns where struct and frombuffer cost 220 ns)
                value = f"f{dtype.itemsize}[{at * (8 // dtype.itemsize)}]"
        else:
            width = np.dtype(f"int{8 * dtype.itemsize}") if dtype.kind == "f" or dtype == np.uint64 else None
            namespace[f"v{k}"] = (lambda st, at=at, w=width, d=dtype:
                                  np.array(st[at:at + 1], np.int64).astype(w).view(d)[0]
                                  if w is not None else np.array(st[at:at + 1], np.int64).astype(d)[0])
            value = f"v{k}({ints})"
        numpy_value = value.startswith(("v", "frombuffer", "f4[", "f2["))      # (a numpy scalar, not a Python number)
        converters = [_converter(t, numpy_value) if dtype.kind != "c" or t.kind == "c"
                      else _real_part_converter(t) for t in var.types]
        if len(converters) == 1 and (converters[0], dtype) in ((float, np.float64), (int, np.int64),
                                                                (complex, np.complex128)):
            items.append(value)            # (already the Python number it reads as)
            continue
        namespace[f"c{k}"] = converters[0] if len(converters) == 1 else converters
        items.append(f"c{k}({value})" if len(converters) == 1 else f"c{k}[{ints}[{at + 1}]]({value})")
    for k, var in enumerate(outputs):
        if items[k] is not None and var.name in kernel.unbound_after:     # (its tag -1: the loop did not bind it)
            namespace["UNBOUND"] = UNBOUND
            items[k] = f"(UNBOUND if {ints}[{status_slot(k + first) + 1}] < 0 else {items[k]})"
    return items, namespace


def _real_part_converter(typ: Scalar):
    """A real value of ``typ`` read from a complex variable's slots (exact: ``exact_in``)."""
    cls = typ.type
    return lambda v: cls(v.real)


def _converter(typ: Scalar, numpy_value: bool):
    """A value (a numpy scalar where ``numpy_value``, else a Python number) as ``typ`` (its class
    looked up once: np.dtype() costs 0.3 us)."""
    cls = typ.type
    if typ.python and numpy_value:
        return lambda v: cls(v.item() if isinstance(v, np.generic) else v)
    return cls


__all__ = ["LoopLowering", "LoopKernel", "result_reader", "result_expressions", "status_slot", "type_of_result"]
