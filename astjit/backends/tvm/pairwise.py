"""numpy's order of adding floats, as TIR built with TVMScript's IR builder: compiled loops
(loop_reductions) and straight-line kernels (exact_sums) emit it, so their float sums equal numpy's
bit for bit.

numpy adds float elements pairwise (``pairwise_sum`` in numpy's loops_utils.h.src): fewer than 8
elements one by one; 8 to 128 elements in eight partial sums ``r[j] = x[j] + x[j + 8] + ...``, combined
as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the last ``n % 8`` one by one; more than
128 split at half the length rounded down to a multiple of 8, each half summed so and the two added.
The reduction starts from +0.0 (``np.array([-0.0]).sum()`` is 0.0). Where the elements are cast as they
are summed (the float64 mean of ints, bools; the float32 mean of float16), numpy reads them through
buffers of 8192 elements and adds the pairwise sum of each buffer to the total in turn.

``x(k)`` is the k-th element (an int64 index) as an expression; ``bind(expr, dtype)`` computes an
expression once into a local and returns its value.
"""

from tvm import tirx
from tvm.script.ir_builder import tirx as T

I64 = "int64"
BLOCK = 128                 # numpy's PW_BLOCKSIZE
STACK = 64                  # splits halve the length: 64 levels cover any int64 length


def pairwise_sum(x, n, dtype, bind, chunk=None, lanes=False, index=I64):
    """numpy's sum of ``x(0) ... x(n - 1)`` in ``dtype``: ``0.0 + pairwise(x)``; with ``chunk``
    (elements cast as they are summed: numpy's buffered reduction), the pairwise sums of consecutive
    chunks of that many elements, added one after another to 0.0. ``lanes``: the eight partial sums
    of a block in one vectorized loop instead of eight statements (``x`` a pure expression, and
    ``x(base, j)`` the element ``base + j``, ``base`` a multiple of 8 from the first element);
    ``index``: the dtype of the indices (int32 lets a vectorized load be one contiguous load)."""
    c = _constants(index)
    zero = bind(tirx.const(0.0, dtype), dtype)      # a local: TVM would fold ``0.0 + s`` to ``s``
    total = T.alloc_buffer((1,), dtype, scope="global")
    part = T.alloc_buffer((1,), dtype, scope="global")
    T.buffer_store(total, zero, [0])
    if chunk is None:
        pairwise(x, n, dtype, zero, part, bind, lanes, index)
        T.buffer_store(total, zero + part[0], [0])
    else:
        size = c(chunk)
        with T.serial(c(0), tirx.floordiv(n + size - c(1), size)) as k:
            lo = bind(k * size, index)
            pairwise(lambda i, *j: x(lo + i, *j), bind(tirx.Min(size, n - lo), index), dtype, zero, part, bind,
                     lanes, index)
            T.buffer_store(total, total[0] + part[0], [0])
    return bind(total[0], dtype)


def pairwise(x, n, dtype, zero, out, bind, lanes=False, index=I64) -> None:
    """numpy's ``pairwise_sum`` of ``x(0) ... x(n - 1)`` into ``out[0]``."""
    c = _constants(index)
    with T.If(n < c(8)):
        with T.Then():
            T.buffer_store(out, zero, [0])
            with T.serial(c(0), n) as k:
                T.buffer_store(out, out[0] + x(k), [0])
        with T.Else():
            with T.If(n <= c(BLOCK)):     # one block: no stack to walk
                with T.Then():
                    block_sum(x, c(0), n, dtype, out, bind, lanes, index)
                with T.Else():
                    split_sums(x, n, dtype, out, bind, lanes, index)


def split_sums(x, n, dtype, total, bind, lanes=False, index=I64) -> None:
    """The recursion of numpy's pairwise sum, for ``n >= 8``, as a loop over an explicit stack:
    each frame a range (``lo``, ``count``) and how far it got (0: nothing summed, 1: its first half
    summed into ``left``, 2: its second half summed into ``right``)."""
    c = _constants(index)
    lo = T.alloc_buffer((STACK,), index, scope="global")
    count = T.alloc_buffer((STACK,), index, scope="global")
    stage = T.alloc_buffer((STACK,), index, scope="global")
    left = T.alloc_buffer((STACK,), dtype, scope="global")
    right = T.alloc_buffer((STACK,), dtype, scope="global")
    top = T.alloc_buffer((1,), index, scope="global")
    value = T.alloc_buffer((1,), dtype, scope="global")
    T.buffer_store(top, c(0), [0])
    T.buffer_store(lo, c(0), [0])
    T.buffer_store(count, n, [0])
    T.buffer_store(stage, c(0), [0])
    t = top[0]

    def push(start, length):
        start, length, above = bind(start, index), bind(length, index), bind(t + c(1), index)
        T.buffer_store(top, above, [0])
        T.buffer_store(lo, start, [above])
        T.buffer_store(count, length, [above])
        T.buffer_store(stage, c(0), [above])

    def deliver():
        """Hand ``value`` to the frame below, or make it the total."""
        T.buffer_store(top, t - c(1), [0])
        with T.If(t < c(0)):
            with T.Then():
                T.buffer_store(total, value[0], [0])
            with T.Else():
                with T.If(tirx.EQ(stage[t], c(1))):
                    with T.Then():
                        T.buffer_store(left, value[0], [t])
                    with T.Else():
                        T.buffer_store(right, value[0], [t])

    with T.While(t >= c(0)):
        half = tirx.floordiv(count[t], c(2))
        half = half - tirx.floormod(half, c(8))
        with T.If(count[t] <= c(BLOCK)):
            with T.Then():
                block_sum(x, lo[t], count[t], dtype, value, bind, lanes, index)
                deliver()
            with T.Else():
                with T.If(tirx.EQ(stage[t], c(0))):
                    with T.Then():
                        T.buffer_store(stage, c(1), [t])
                        push(lo[t], half)
                    with T.Else():
                        with T.If(tirx.EQ(stage[t], c(1))):
                            with T.Then():
                                T.buffer_store(stage, c(2), [t])
                                push(lo[t] + half, count[t] - half)
                            with T.Else():
                                T.buffer_store(value, left[t] + right[t], [0])
                                deliver()


def block_sum(x, lo, n, dtype, out, bind, lanes=False, index=I64) -> None:
    """numpy's sum of 8 to 128 elements: eight partial sums, combined in a fixed tree, then the
    last ``n % 8`` elements one by one. numpy starts a partial sum at its first element, here it
    starts at 0.0: the same sum but for the sign of a zero, which the sum's own start, +0.0, gives
    anyway (``0.0 + -0.0``); each element's expression is emitted once less."""
    c = _constants(index)
    start = bind(lo, index)
    length = bind(n, index)
    r = T.alloc_buffer((8,), dtype, scope="global")
    full = length - tirx.floormod(length, c(8))
    if lanes:
        with T.vectorized(c(0), c(8)) as j:
            T.buffer_store(r, tirx.const(0.0, dtype), [j])
        with T.serial(c(0), tirx.floordiv(full, c(8))) as b:
            with T.vectorized(c(0), c(8)) as j:
                T.buffer_store(r, r[j] + x(start + b * c(8), j), [j])
    else:
        for j in range(8):
            T.buffer_store(r, tirx.const(0.0, dtype), [j])
        with T.serial(c(0), tirx.floordiv(full, c(8))) as b:
            for j in range(8):
                T.buffer_store(r, r[j] + x(start + b * 8 + j), [j])
    T.buffer_store(out, ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])), [0])
    if not (isinstance(n, tirx.IntImm) and int(n) % 8 == 0):         # (a known multiple of 8: no tail)
        with T.serial(full, length) as k:
            T.buffer_store(out, out[0] + x(start + k), [0])


def _constants(index):
    return lambda v: tirx.const(v, index)
