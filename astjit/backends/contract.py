"""The backend contract: what a backend declares, what it is handed, and what it hands back.

A backend is asked, node by node, whether it runs an op for this specialization's device and types
(``supports``); the partitioner gives each run of consecutive nodes to the first backend in the device's
ordered list that takes them (``astjit.backends.registered``); the backend compiles each such
``Segment`` into a ``Compiled``: the function the runtime calls, a description, and artifacts that
inspection prints. Nothing in the runtime knows a backend by name.
"""

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(eq=False)
class Segment:
    """A connected run of nodes one backend executes as a unit, in graph order.

    ``inputs`` are the values produced outside and read inside (Python values, numpy arrays or
    device arrays, in this order), ``outputs`` the nodes whose values are needed after the segment.
    """

    backend: str
    nodes: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    compiled: "Compiled | None" = None
    description: str = ""
    reference: bool = False          # run by the reference backend (numpy)

    @property
    def executable(self):
        """``run(*input values) -> tuple of output values``."""
        return self.compiled.run if self.compiled is not None else None


@dataclass(eq=False)
class DirectCall:
    """A compiled function in destination-passing style that the runtime may call from generated
    straight-line code when a block is this one segment: ``function(*inputs, *outputs)`` with each
    output allocated as ``numpy.empty(shape, dtype)`` beforehand.

    ``input_kinds``: per input, "array" (passed as is), "item" (a numpy scalar passed as ``.item()``) or
    "scalar"; ``allocations``: (shape, dtype) per output; ``suffixes``: per output, the Python text
    turning the buffer into the value numpy gives (``"[0]"`` for a numpy scalar, ``".reshape(())"``,
    ``""``)."""

    function: Callable
    input_kinds: list
    allocations: list
    suffixes: list
    aligned: list = field(default_factory=list)   # inputs that must be aligned arrays, else the slower path


@dataclass(eq=False)
class Compiled:
    """What ``Backend.compile`` returns.

    ``run(*inputs)`` takes the segment's input values in order and returns a tuple with one value per
    segment output (values of the types inference gave them: numpy arrays, numpy scalars, or arrays of
    the caller's kind on a device). ``artifacts`` maps a code kind (``"tir"``, ``"llvm"``, ``"cuda"``,
    or a backend's own) to a function returning its text, for ``astjit show --code``. ``direct`` is an
    optional faster calling convention (``DirectCall``); ``persist`` an optional way into the disk cache
    (``Persisted``)."""

    run: Callable
    description: str = ""
    artifacts: dict = field(default_factory=dict)
    direct: DirectCall | None = None
    persist: "Persisted | None" = None


@dataclass(eq=False)
class Persisted:
    """How a compiled segment is stored in the on-disk cache: ``modules`` are exported as shared
    libraries (``export_library``), ``meta`` is JSON the backend's ``load`` reads back."""

    modules: list
    meta: dict


class Backend:
    """Subclass this to add a backend; register an instance with ``astjit.backends.register``.

    Attributes:
        name: shown by ``show``/``explain`` and accepted by ``@jit(backend=name)``.
        devices: the devices whose ordered lists it joins (``"cpu"``, ``"cuda"``).
        reference: True only for the numpy backend: it runs every op, is always asked last on the CPU,
            and runs what no other backend takes.
    """

    name: str = ""
    devices: tuple = ("cpu",)
    reference: bool = False

    def available(self, device: str) -> str | None:
        """None when this backend can run on ``device`` in this process, else why not (a missing
        library, no GPU). Asked once per specialization; an unavailable backend is skipped and the
        reason recorded for ``explain``."""
        return None

    def supports(self, ctx, node) -> str | None:
        """None when this backend runs ``node`` with this specialization's types, else why not.

        ``node.op`` is the op's name (``"np.exp"``, ``"add"``, ``"np.sum"``: ``astjit.graph.ops.OPS``),
        ``node.operands`` the nodes it reads, ``ctx.types[n]`` each node's type (``ArrayType`` with
        ``dtype``, ``shape`` and ``scalar``; ``WeakScalar`` for a Python number; ``Static`` for a value
        known when compiling), ``ctx.device`` the device."""
        return f"the {self.name} backend runs no ops"

    def compile(self, ctx, segment: Segment) -> Compiled:
        """Compile ``segment`` for this specialization's types. Raise ``astjit.Unsupported`` to
        decline: numpy runs the segment instead, or, on a device without numpy, the block runs as
        Python; the reason is recorded for ``explain`` and kept in the disk cache. Any other error is a
        failure that may not happen again: the same, in this process only."""
        raise NotImplementedError

    def cache_key(self, device: str) -> str:
        """What distinguishes this backend's compiled code in the disk cache (versions, target)."""
        return self.name

    def load(self, ctx, segment: Segment, meta: dict, libraries: list) -> Compiled:
        """A ``Compiled`` from what ``Compiled.persist`` stored (``libraries``: paths of the exported
        modules, in order). Only called for backends whose compiled segments persist."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<backend {self.name} for {', '.join(self.devices)}>"
