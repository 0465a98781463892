"""Generated fixed-arity functions for the per-call hot path.

A cached call should cost little more than the kernel itself (the issue's target: 16 elements no slower
than numpy's eager chain). Generic ``*args`` code spends most of a microsecond packing tuples and
looping, so the cache lookup, the single-kernel runner and the loop-kernel runner are generated
per arity with ``exec``.
"""

import functools

import numpy as np

from .fpstate import current_state, kernels_allowed, last_quiet
from .keys import ListOf, TupleOfLength, list_key, tuple_key

try:           # numpy's C functions themselves: np.may_share_memory's dispatch layer doubles its cost
    from numpy._core._multiarray_umath import may_share_memory, shares_memory
except ImportError:  # another numpy layout
    may_share_memory, shares_memory = np.may_share_memory, np.shares_memory


def _names(n):
    return [f"a{i}" for i in range(n)]


INT64 = np.iinfo(np.int64)
DISJOINT = object()      # what ``overlapping`` gives for arrays sharing memory but no element (the kernel runs)


def make_dispatch(cache: dict, miss, n: int, counter: list, as_python, key_by="shape", promote=None,
                  promoting=(False,)):
    """``dispatch(a0, .., an)``: count the call, look the key up in ``cache`` and call its runner, else
    ``miss(args)`` (which counts the call itself). Inside ``with np.errstate(all="raise")`` (numpy's
    error state not a quiet one) the block's Python runs instead: ``as_python(args)``. (A loop region
    about to do a few statements' work never calls it: frontend/loop_guard runs the loop inline.)
    ``promote(key, runner)`` is told of each hit while ``promoting[0]`` holds (``make_hot_dispatch``)."""
    from ..devices import device_key, device_types
    from .keys import KEY_CODE

    names = _names(n)
    params = ", ".join(names)
    packed = f"({params}{',' if n else ''})"
    key = ", ".join(KEY_CODE[key_by].format(x=x) for x in names)
    src = (f"def dispatch({params}):\n"
           f"    if fp_state() is not fp_quiet[0] and not fp_allowed():\n"
           f"        counter[0] += 1\n"
           f"        return as_python({packed})\n"
           f"    key = ({key}{',' if n else ''})\n"
           f"    runner = cache_get(key)\n"
           f"    if runner is not None:\n"
           f"        counter[0] += 1\n"
           f"        if promoting[0]:\n"
           f"            promote(key, runner)\n"
           f"        return runner({params})\n"
           f"    return miss({packed})\n")
    namespace = {"ndarray": np.ndarray, "cache_get": cache.get, "miss": miss, "counter": counter,
                 "fp_state": current_state, "fp_quiet": last_quiet, "fp_allowed": kernels_allowed,
                 "as_python": as_python, "promote": promote, "promoting": promoting,
                 "device_key": device_key, "device_types": device_types, "tuple_key": tuple_key,
                 "list_key": list_key}
    exec(compile(src, "<astjit dispatch>", "exec"), namespace)
    return namespace["dispatch"]


def make_hot_dispatch(key: tuple, runner, generic, counter: list, key_by="shape", others=()):
    """A dispatch for one key: the arguments are compared with the key's parts where they stand (a dtype
    by identity, a shape by ``==``) instead of building the key and hashing it, about half the cost;
    anything else, or numpy's error state not the known quiet one, goes to ``generic`` (the full
    dispatch). A dtype equal to the key's but another object is only a miss here, never a wrong hit.
    ``others``: (key, runner) pairs compared after it, in order (keys that alternate: the first trip
    of a loop whose name holds a number, then arrays).

    A kernel's runner that has ``refused`` (``make_loop_kernel_runner``, ``make_kernel_runner``) is
    called after testing only the type of the arrays the kernel takes (its ``checked_by_kernel``
    positions) and the first one's shape: the kernel itself tests their dtype and shape (or, for a
    loop kernel, number of axes and compact strides: the key's C-contiguous parts) as it converts
    them, before it runs, and an argument it refuses sends the call to ``generic``. Other arrays (a
    loop's array copied into a buffer of its own, one read only for its shape) are compared with the
    key here."""
    names = _names(len(key))
    params = ", ".join(names)
    namespace = {"ndarray": np.ndarray, "generic": generic, "counter": counter,
                 "fp_state": current_state, "fp_quiet": last_quiet, "fp_allowed": kernels_allowed,
                 "tuple_key": tuple_key, "list_key": list_key}
    # (a state not the known quiet one is worked out here, the key's tests following where kernels may
    # run: a block under an ``np.errstate`` entered at each call went through the full dispatch)
    lines = [f"def dispatch({params}):", "    if fp_state() is fp_quiet[0] or fp_allowed():"]
    for j, (k, r) in enumerate(((key, runner), *others)):
        test, run = _hot_test(k, r, j, names, namespace, generic, counter, key_by)
        lines += [f"        if {test}:", "            counter[0] += 1", f"            return {run}({params})"]
    lines.append(f"    return generic({params})")
    exec(compile("\n".join(lines) + "\n", "<astjit hot dispatch>", "exec"), namespace)
    return namespace["dispatch"]


def _hot_test(key, runner, j, names, namespace, generic, counter, key_by):
    """The test of ``make_hot_dispatch`` for one key (its names suffixed ``_j`` in ``namespace``), and
    the name of the runner it calls."""
    trusting = hasattr(runner, "refused")
    checked = runner.checked_by_kernel if trusting else frozenset()
    if trusting:
        def refused(*args):
            counter[0] -= 1                   # (the full dispatch counts the call)
            return generic(*args)

        runner = runner.refused(refused)
    namespace[f"runner_{j}"] = runner
    terms = []
    shape_compared = key_by != "shape"      # (a loop kernel takes any extents)
    for i, (x, part) in enumerate(zip(names, key)):
        if isinstance(part, TupleOfLength):
            namespace[f"t{i}_{j}"] = part
            terms.append(f"type({x}) is tuple and tuple_key({x}) is t{i}_{j}")
            continue
        if isinstance(part, ListOf):
            namespace[f"t{i}_{j}"] = part
            terms.append(f"type({x}) is list and list_key({x}) is t{i}_{j}")
            continue
        if not isinstance(part, tuple):
            namespace[f"t{i}_{j}"] = part
            terms.append(f"type({x}) is t{i}_{j}")
            continue
        terms.append(f"type({x}) is ndarray")
        if i in checked and part[2] is True:
            # (the kernel refuses another dtype, shape or layout itself; the first such array's shape is
            # compared here too: a refusal is an exception whose backtrace costs 0.3 ms, the first in a
            # process whose kernels all came from the disk cache 190 ms, and arrays of new lengths,
            # each refused, are the common case; all of them compared cost 0.2 us on a call of 1.3)
            if not shape_compared:
                shape_compared = True
                namespace[f"s{i}_{j}"] = part[1]
                terms.append(f"{x}.shape == s{i}_{j}")
            continue
        namespace[f"d{i}_{j}"] = part[0]
        terms.append(f"{x}.dtype is d{i}_{j}")
        if key_by == "shape":
            namespace[f"s{i}_{j}"] = part[1]
            terms.append(f"{x}.shape == s{i}_{j} and {x}.flags.c_contiguous is {bool(part[2])}")
        else:                                  # (dtype, ndim, C-contiguous): runtime/keys
            terms.append(f"{x}.ndim == {part[1]:d} and {x}.flags.c_contiguous is {bool(part[2])}")
    return (" and ".join(terms) or "True"), f"runner_{j}"


def make_kernel_runner(kernel, n: int, kernel_args: list, allocs: list, result, slow, arrays=(), aligned=()):
    """``run(a0, .., an)`` for a fragment that is one kernel over its live-ins, generated as straight-line
    code. ``kernel_args``: a Python expression per kernel input (``a2``, ``a0.item()``); ``allocs``:
    (shape, dtype) per kernel output ``o0``, ``o1``...; ``result``: the expression returned (``o0``,
    ``(o1[0], a1)``). Any failure goes to ``slow(args)``, which copies or falls back, as does a
    misaligned array among ``aligned`` (arrays a float sum reads: numpy adds those in buffers).

    ``run.checked_by_kernel``: the positions of the arguments the kernel takes as arrays, whose dtype
    and shape (the key's parts) it tests itself as it converts them; ``run.refused(refused)``: the same
    code calling ``refused(*args)`` instead of ``slow`` (``make_hot_dispatch``)."""
    build = functools.partial(_kernel_runner, kernel, n, kernel_args, allocs, result, list(arrays), list(aligned),
                              [False])
    run = build("slow", slow, packed=True)
    names = _names(n)
    run.checked_by_kernel = frozenset(names.index(a) for a in kernel_args if a in names)
    run.refused = lambda refused: build("refused", refused, packed=False)
    return run


def _kernel_runner(kernel, n, kernel_args, allocs, result, arrays, aligned, read_only, on_failure, failed, packed):
    """The runner's code, calling ``failed`` (named ``on_failure`` in it) where the kernel refuses its
    arguments: with the arguments as one tuple where ``packed``, else one by one.

    ``arrays``: the kernel arguments that are arrays (``a0``); ``read_only``: a one-item list set True
    once the kernel refused a read-only array (plain DLPack
    cannot carry one): from then on the runner passes each array argument that is not writeable as
    ``readable_by_kernel`` makes it, a test of each one's flag (the refusal, an exception, cost 5 us a
    call, and the slower path more: a block over 100 read-only floats ran 4x plain numpy's time)."""
    from ..backends.array_views import readable_by_kernel

    params = ", ".join(_names(n))
    namespace = {"empty": np.empty, "kernel": kernel, on_failure: failed, "read_only": read_only,
                 "readable": readable_by_kernel}
    failed_args = f"({params}{',' if n else ''})" if packed else params
    lines = [f"def run({params}):"]
    if aligned:
        test = " and ".join(f"{a}.flags.aligned" for a in aligned)
        lines += [f"    if not ({test}):", f"        return {on_failure}({failed_args})"]
    for k, (shape, dtype) in enumerate(allocs):
        namespace[f"s{k}"], namespace[f"d{k}"] = shape, dtype
        lines.append(f"    o{k} = empty(s{k}, d{k})")
    readable = {a: f"({a} if {a}.flags.writeable else readable({a}))" for a in arrays}
    call_args = ", ".join(list(kernel_args) + [f"o{k}" for k in range(len(allocs))])
    locked_args = ", ".join([readable.get(a, a) for a in kernel_args] + [f"o{k}" for k in range(len(allocs))])
    lines += ["    try:"]
    if arrays:
        lines += ["        if read_only[0]:", f"            kernel({locked_args})", "        else:",
                  f"            kernel({call_args})"]
    else:
        lines += [f"        kernel({call_args})"]
    lines += ["        return " + result, "    except Exception:", "        pass"]
    if arrays:
        writeable = " and ".join(f"{a}.flags.writeable" for a in arrays)
        lines += [f"    if not read_only[0] and not ({writeable}):", "        read_only[0] = True"]
    # the outputs freed before the slower path allocates its own: with both alive, a large output
    # came from fresh pages on every call (a block on read-only 1000x1000 arrays, which the kernel
    # refuses, ran 4x its kernel's time)
    if allocs:
        lines.append("    del " + ", ".join(f"o{k}" for k in range(len(allocs))))
    lines.append(f"    return {on_failure}({failed_args})")
    exec(compile("\n".join(lines) + "\n", "<astjit runner>", "exec"), namespace)
    return namespace["run"]


def make_loop_kernel_runner(kernel, args, arrays, written, copied, scalars, has_locals, appends, checked,
                            stopped, result, allocate, aligned=(), converted=None, compacting=None,
                            overlapping=None, big_ints=None, snapshot=None, bailed=None, odd_strides=None,
                            shapes_refused=None):
    """The runner as straight-line code for this specialization's argument types (a call costs about a
    microsecond less than the generic loop over checks): an overlap test per written array and other
    array, the kernel call, and ``checked(*args)`` where the kernel's conversion of the arguments
    refuses them (runtime/loop_fragment.make_loop_runner: ``arrays``, ``written``, ``copied``,
    ``scalars`` are positions in ``args``, the arguments of the call being specialized), or where an
    array is misaligned with more elements than ``aligned`` allows ((position, most) pairs; most -1: none);
    ``converted``: position -> the function that makes
    the kernel's array of a tuple or list argument, or None (the call then takes ``checked``);
    ``compacting``: a one-item list that ``checked`` sets True once it passed an array with an axis
    of extent 0 or 1 as ``backends/array_views.compact`` makes it (numpy ignores the strides there and
    gives an empty array strides of 0, which the kernel refuses, with an exception that cost 30-60 us
    a call): from then on the runner passes each such array that way (a test of each array's size
    and shape, about 50 ns); ``overlapping(args)``: where a written array may share memory with
    another (``np.may_share_memory``), the loop's Python if they share an element, else DISJOINT
    (the kernel runs; by default ``checked``'s result); ``big_ints``: a one-item list that ``checked`` sets True
    once an int argument was beyond int64, which the kernel's conversion refuses with an exception
    costing about 20 us: from then on the runner tests the int arguments' range first; ``snapshot``:
    None, or ``snapshot(args)``, what the loop writes as it was before the call (copies of its arrays,
    the lengths of its lists; or None), handed to ``stopped`` with the status;
    ``odd_strides``: (a one-item list that ``checked`` sets True once an array came whose strides are not
    whole numbers of its items (a field of a structured array), which the kernel's conversion refuses
    with an exception: from then on the runner tests the arrays' strides first and runs the loop's
    Python for such arrays; the loop's Python);
    ``shapes_refused``: what runs a call whose local arrays ``allocate`` refuses (a group's arrays of
    different shapes), the arguments being this key's (by default the loop's Python);
    ``bailed``: None, or (a two-item list whose first item counts the calls left that run
    ``python(*args)``, the loop's Python, instead of the kernel; the loop's Python) for a kernel that
    may bail where Python goes on (runtime/loop_fragment). The status
    buffer comes from a pool (a new numpy array and its conversion cost about 0.3 us a call) and is
    read through memoryviews before it goes back: ``stopped`` gets it as a list where the kernel
    stopped; otherwise the runner returns ``result``: (a Python expression over the views ``q`` and
    ``d``, ``local`` (the local buffers) and the arguments, the names it reads). ``appends``
    (runtime/loop_fragment.AppendedValues): the status buffer's size, and the lists the loop appends
    to, which get the call's values however the kernel ended.

    ``run.checked_by_kernel``: the positions of the arrays the kernel takes, whose dtype, number of
    axes and strides it tests as it converts them; ``run.refused(refused)`` makes the same code
    calling ``refused(*args)`` instead of ``checked`` wherever it would: for a dispatch that leaves
    those checks to the kernel (``make_hot_dispatch``), whose arguments may belong to another key
    (``checked`` takes them as this key's)."""
    scalar_positions = set(scalars)     # (the runner reads only the numbers' types: no array outlives the call)
    # (and the arrays' dtypes and numbers of axes)
    args = [a if i in scalar_positions else np.empty((0,) * a.ndim, a.dtype) if isinstance(a, np.ndarray)
            else None for i, a in enumerate(args)]
    build = functools.partial(_loop_kernel_runner, kernel, args, arrays, written, copied, scalars, has_locals,
                              appends, checked, stopped, result, allocate, aligned, converted or {},
                              [False] if compacting is None else compacting,
                              overlapping or (lambda args: checked(*args)),
                              [False] if big_ints is None else big_ints, snapshot, bailed,
                              ([False], checked) if odd_strides is None else odd_strides, shapes_refused)
    run = build("checked")
    run.checked_by_kernel = frozenset(arrays)       # (not ``copied``: those are only copied into buffers)
    run.refused = lambda refused: build("refused", refused)
    return run


def has_odd_strides(array) -> bool:
    """Whether a stride of ``array`` is not a whole number of its items (DLPack counts strides in
    items: a kernel cannot take it)."""
    size = array.itemsize
    return any(s % size for s in array.strides)


def _python_number(value) -> str:
    """The builtin converting the numpy scalar ``value`` to the Python number its ``.item()`` gives."""
    if isinstance(value, np.bool_):
        return "bool"
    if isinstance(value, np.complexfloating):
        return "complex"
    return "float" if isinstance(value, np.floating) else "int"


def _loop_kernel_runner(kernel, args, arrays, written, copied, scalars, has_locals, appends, checked,
                        stopped, result, allocate, aligned, converted, compacting, overlapping, big_ints,
                        snapshot, bailed, odd_strides, shapes_refused, on_refusal, refused=None):
    from ..backends.array_views import compact, readable_by_kernel
    from ..backends.tvm.loop_lists import NEED_ROOM

    names = _names(len(args))
    params = ", ".join(names)
    packed = f"({params}{',' if names else ''})"
    # where only the loop's Python can take the call (odd strides, misaligned arrays, ints beyond int64):
    # straight to it, since ``checked`` would test everything again (2 us a call where every call brings
    # such an argument, a 64-bit hash's offset basis)
    python_loop = "python_loop" if on_refusal == "checked" else on_refusal
    lines = [f"def run({params}):"]
    if bailed is not None:        # (the kernel bailed lately: the loop's Python runs for a few calls)
        lines += ["    if bailed[0]:", "        bailed[0] -= 1", f"        return python({params})"]
    for p in converted:
        lines += [f"    q{p} = convert{p}({names[p]})", f"    if q{p} is None:", f"        return {on_refusal}({params})"]
    if aligned:
        test = " and ".join(f"({names[p]}.flags.aligned or {names[p]}.size <= {most:d})" for p, most in aligned)
        lines += [f"    if not ({test}):", f"        return {python_loop}({params})"]
    taken = [p for p in arrays if p not in converted and isinstance(args[p], np.ndarray)]
    if taken:           # (each array's number of axes and item size are its key's)
        test = " or ".join(f"{names[p]}.strides[{d}] % {args[p].itemsize}" for p in taken
                           for d in range(args[p].ndim))
        lines += [f"    if odd_strides[0] and ({test}):", f"        return {python_loop}({params})"]
    others = sorted((set(arrays) - set(converted)) | set(copied))
    pairs = [(p, q) for p in sorted(written) for q in others if q != p]
    if pairs:
        test = " or ".join(f"may_share({names[p]}, {names[q]})" for p, q in pairs)
        # (arrays that only share a stretch of memory, ``x[::2]`` and ``x[1::2]``, go on to the kernel)
        lines += [f"    if {test}:", f"        shared = overlapping({packed})", "        if shared is not DISJOINT:",
                  "            return shared"]
    call = [f"q{p}" if p in converted else names[p] for p in arrays]
    if has_locals:
        # (arrays of a group that differ in shape, broadcast: the loop's Python, straight, where the
        # arguments are this key's; through ``checked``, which tests them all again, such a call cost
        # 6 us more than plain Python's 4)
        refuse = "shapes_refused" if on_refusal == "checked" else on_refusal
        lines += [f"    local = allocate({packed})", "    if local is None:", f"        return {refuse}({params})"]
        call.append("*local")
    ints = [names[p] for p in scalars if type(args[p]) is int]
    if ints:            # (after a call with an int beyond int64: the kernel's refusal of it cost 20 us)
        test = " and ".join(f"{INT64.min} <= {x} <= {INT64.max}" for x in ints)
        lines += ["    if big_ints[0] and not (" + test + "):", f"        return {python_loop}({params})"]
    for p in scalars:
        # (a numpy scalar as the Python number its .item() gives: float() of an np.float32 costs 10 ns,
        # its .item() 190 ns, a quarter of a short loop's call)
        x = f"{_python_number(args[p])}({names[p]})" if isinstance(args[p], np.generic) else names[p]
        # (a complex number goes in as its two parts, Python floats)
        call.append(f"{x}.real, {x}.imag" if isinstance(args[p], complex | np.complexfloating) else x)
    expression, result_names = result
    if appends.sharing:
        test = " or ".join(f"{names[p]} is {names[q]}" for p, q in appends.sharing)
        lines += [f"    if {test}:", f"        return {on_refusal}({params})"]
    # (after an empty or size-1 axis, or a read-only array: each array as ``compact`` makes it, each
    # read-only one the kernel only reads as ``readable_by_kernel`` makes it; else as it is, for one test
    # a call)
    prepared, preparing = [], []
    for k, (p, x) in enumerate(zip(arrays, call)):
        if p in converted:
            prepared.append(x)
            continue
        compacted = f"({x} if {x}.size and 1 not in {x}.shape else compact({x}))"
        if p not in written:
            preparing += [f"            w{k} = {compacted}",
                          f"            w{k} = w{k} if w{k}.flags.writeable else readable_by_kernel(w{k})"]
            compacted = f"w{k}"
        prepared.append(compacted)
    prepared += call[len(arrays):]
    if snapshot is not None:
        lines.append(f"    saved = snapshot({packed})")
    lines += ["    try:", "        status = take()", "    except IndexError:", "        status = new_status()",
              "    try:", "        if compacting[0]:", *preparing, f"            kernel({', '.join(prepared)}, status[0])",
              "        else:", f"            kernel({', '.join(call)}, status[0])",
              "    except Exception:", "        give(status)", "        status = None",
              # (the refusal's path outside the except clause: an exception of the loop's Python is the
              # user's alone, not chained to the kernel's refusal)
              "    if status is None:", f"        return {on_refusal}({params})",
              "    q = status[1]"]
    if appends.positions:
        lines.append(f"    extend(status[3], q, {packed})")
    # (a buffer too short for the lists' values is dropped: stopped() grows them)
    lines += ["    if q[0]:", f"        s = q[:{appends.fixed}].tolist()", f"        if s[0] != {NEED_ROOM}:",
              "            give(status)", f"        return stopped(s, {packed}{', saved' if snapshot is not None else ''})"]
    lines += ["    d = status[2]"] + (["    f4 = status[4]"] if "f4[" in expression else []) + (
        ["    f2 = status[5]"] if "f2[" in expression else []) + [f"    r = {expression}", "    give(status)",
                                                              "    return r"]
    pool = []

    def new_status():
        """A status buffer as the kernel takes it without a conversion (a TVM tensor), with memoryviews
        of the same memory to read it, as int64 (``q``) and as float64 (``d``): one slot read costs less
        than a list of them; each buffer is reused by later calls (the kernel clears what it reads)."""
        import tvm_ffi

        view = np.zeros(appends.size(), np.int64)
        ints = memoryview(view)
        # (and the same memory as float32 and float16 elements: a narrower float's slot holds its bits
        # in its low bytes, read as a numpy scalar of that type: backends/tvm/loops.result_expressions)
        return (tvm_ffi.from_dlpack(view), ints, ints.cast("B").cast("d"), view, view.view(np.float32),
                view.view(np.float16))

    namespace = {**result_names, "may_share": may_share_memory, "checked": checked, "allocate": allocate,
                 "take": pool.pop, "give": pool.append, "new_status": new_status, "kernel": kernel,
                 "stopped": stopped, "refused": refused, "extend": appends.extend, "compacting": compacting,
                 "compact": compact, "readable_by_kernel": readable_by_kernel, "overlapping": overlapping,
                 "DISJOINT": DISJOINT, "big_ints": big_ints, "snapshot": snapshot, "odd_strides": odd_strides[0],
                 "python_loop": odd_strides[1],
                 "shapes_refused": shapes_refused if shapes_refused is not None else odd_strides[1],
                 **({"bailed": bailed[0], "python": bailed[1]} if bailed is not None else {}),
                 **{f"convert{p}": f for p, f in converted.items()}}
    exec(compile("\n".join(lines) + "\n", "<astjit loop runner>", "exec"), namespace)
    return namespace["run"]
