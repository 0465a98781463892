"""Small and scalar work where plain Python is hard to beat: plain Python vs astjit (default ``@jit``).

    python benchmarks/small_work.py [--quick] [--only NAME ...]

Each case is a shape of code that once ran slower under ``@jit`` than without it; the column ``numpy``
is the plain function here (its own numpy calls included), so ``numpy/astjit`` below 1 means astjit
costs time. The first-call measurement may keep a block's Python (``->python`` in the check line); the
point is the cost of that choice on every later call.

``power_p2_1k``, ``power_p2_100k``: ``(a * 2.0 + 1.0) ** p`` with ``p = 2`` known only at run time;
``attr_method``: a method reading six float attributes of ``self`` and doing some arithmetic;
``first_element``: ``if a[0] > 0.5`` on a 1000-element array, numbers only in the block;
``alternating_global``: a global switched between ``np.sin`` and ``np.cos`` before every call;
``empty_loop``: a loop over an empty array (numpy 2 gives it strides of 0);
``median_1x1``: a 3x3 median filter's loop nest on a 1x1 image (nested ranges of negative length);
``star_args_*``, ``default_*``, ``kwonly_*``: ``f(x, *offsets)``, ``f(x, scale=2.0)`` and
``f(x, *, scale=2.0, off=1.0)`` on a float and 100k float64;
``list_loop_*``: a loop with a heavy position over a list of 3 and 10k floats; ``collatz_*``: a
``while`` loop on a small int and on one beyond int64; ``exp_*``: ``np.exp`` of 100 and 1M float64;
``jit_at_each_call_16``: ``jit(lambda y: y * k + 1.0)(x)`` made at each call;
``read_only_block_*``: an elementwise block of four arrays locked with ``setflags(write=False)``, 16 and 100k
float64; ``read_only_loop_*``: a loop of dot products over two locked arrays of 16 and 10k float64;
``tuple_200``: ``a * t[0] + t[1]`` with the same tuple of 200 floats at each call (its value is guarded);
``property_method``: a method whose block reads a property of ``self``;
``fortran_block_*``: ``2.0 * x + y`` of Fortran-ordered 10x10 and 1000x1000 (numpy keeps the layout:
the block is refused);
``list_search_100k``: a search returning at position 2000 of a list of 100k floats;
``tuple_operand_3``: ``pts * s + 1.0`` with ``s = (sx, sy, sz)`` and 1000x3 points (numpy makes an array of
the tuple at each call);
``struct_field_gather``: a loop gathering 100 elements of a structured array's float64 field (strides of
12 bytes);
``scatter_copy_8MB``: a loop writing 200 elements of an 8 MB array while summing Python ints (the
kernel's runner copies the array it writes);
``list_merge_60``, ``list_merge_1000``: a ``while`` loop merging two sorted lists of 60 and 1000 floats;
``uint64_big_constant``, ``uint64_big_constant_16``: ``(a + 2**63) ^ (2**64 - 1)`` on 100k and 16 uint64
(TVM refused the Python int);
``fnv1a_8_bytes``: a 64-bit FNV-1a hash of 8 bytes, its Python int starting beyond int64 (its loop kernel
bailed at every call);
``binary_search_1k``: a ``while`` binary search through 1000 sorted floats (a kernel call for the 3 trips
left after 7 as written);
``fixed_point_cos_*``: ``for _ in range(1000)`` iterating ``x = cos(x)`` until it moves less than 1e-3 or
1e-12 (16 or 69 trips, then ``break``);
``fibonacci_200``: 200 steps of ``a, b = b, a + b`` (the ints leave int64: its kernel bails);
``horner_from_zero_30``: ``y = 0.0`` then ``y = y * x + c`` over 30 coefficients on 1,000 float64 (the loop
stays Python: ``y`` holds a number, then arrays; its block's first trip and the others alternate keys);
``row_method_100x1000``: a method writing ``self.buf[i] = x * 2.0 + 1.0`` into a 100x1000 buffer
(its block could not be timed on copies: ``self``); ``row_into_76MB``: ``out[i] = a * 2.0 + 1.0``
into a 100,000x100 float64 array (too large to copy for timing); ``tanh_chain_*``:
``np.tanh(a * 2.0 + b) * 0.5 - a`` over 1,000 and 100,000 float64 (the kernel's tanh was the C
library's), ``tanh_kernel_*`` the same forced to its kernel (``backend="tvm"``);
``int_sum_*``: ``np.minimum(z, -5).sum()`` of 16 and 1M int32 (a sum through the wrapping combiner);
``missing_global_*``: ``x * 2.0 + 1.0`` after a branch not taken that reads a global never defined
(its guard tests that the name stays undefined), on 16 and 100k float64;
``window_moved_*``: ``x = a[lo:lo + w]; (x * x).sum() / w + x.mean()`` with ``lo`` moved by 97 at each call,
``w`` 16 and 1000 in 100k float64 (each position met the block's Python: a window read at fixed bounds).

Then ``new lengths``: a short chain called on 60 arrays of random lengths (1,000 to 200,000), each length
once per pass, three passes; the total time of each pass, numpy's and astjit's (each new length once
compiled a kernel: runtime/new_extents).
"""

import math
import time

import numpy as np
from _timing import compare, describe_modes, parse_args, print_header, print_results

from astjit import jit


def power(a, p):
    return (a * 2.0 + 1.0) ** p


class Oscillator:
    def __init__(self):
        self.mass, self.stiffness, self.damping = 1.5, 3.0, 0.1
        self.position, self.velocity, self.step = 0.25, -0.5, 0.01

    def energy_after_step(self):
        force = -self.stiffness * self.position - self.damping * self.velocity
        velocity = self.velocity + self.step * force / self.mass
        position = self.position + self.step * velocity
        return 0.5 * self.mass * velocity * velocity + 0.5 * self.stiffness * position * position


def first_element(a, low, high):
    if a[0] > 0.5:
        return high
    return low


WAVE = np.sin


def wave_at(x):
    return WAVE(x) * 2.0


def total_of_positives(a):
    t = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0:
            t += a[i]
    return t


def median3x3(img):
    h, w = img.shape
    out = img.copy()
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            out[i, j] = np.median(img[i - 1:i + 2, j - 1:j + 2])
    return out


def offset_all(x, *offsets):
    return x + sum(offsets)


def scaled_by(x, scale=2.0):
    return x * scale + 1.0


def shifted_by(x, *, scale=2.0, off=1.0):
    return x * scale + off


def heavy_items(xs):
    tot = 0.0
    for x in xs:
        y = x * 1.5 + 2.0
        z = y * y - x / (y + 1.0)
        tot += z * 0.5 + y if z > 1.0 else y - z * 0.25
    return tot


def collatz(n):
    c = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        c += 1
    return c


def exp_of(a):
    return np.exp(a)


def jitted_at_each_call(x, k):
    return jit(lambda y: y * k + 1.0)(x)


def plain_at_each_call(x, k):
    return (lambda y: y * k + 1.0)(x)


def centered_energy(x):
    y = x - x.mean()
    return (y * y).sum() / len(x)


def blend(a, b, c, d):
    return np.sqrt(a * b + c * d + 1.0) * 0.5 - a


def doubled_plus(x, y):
    return 2.0 * x + y


def dot_steps(a, b, k):
    s = 0.0
    for _ in range(k):
        for i in range(len(a)):
            s += a[i] * b[i]
    return s


def weighted_by(a, t):
    return a * t[0] + t[1]


class Scaled:
    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w

    def forward(self, x):
        return x * self.w + 1.0


def first_above(xs, t):
    for i in range(len(xs)):
        if xs[i] > t:
            return i
    return -1


def scaled_points(pts, s):
    return pts * s + 1.0


def gathered(src, idx, out):
    for k in range(len(idx)):
        out[k] = src[idx[k]] * 2.0
    return out


def scattered(src, out, idx):
    acc = 0
    for k in range(len(idx)):
        i = idx[k]
        out[i] = src[i] * 2.0
        acc += k * k
    return acc


def merged_total(a, b):
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            total += a[i]
            i += 1
        else:
            total += b[j]
            j += 1
    return total, i, j


def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h ^= int(b)
        h = (h * 1099511628211) % 2**64
    return h


def flipped_high_bit(a):
    return (a + 2**63) ^ 18446744073709551615


def sorted_lists(rng, n):
    return sorted(rng.random(n).tolist()), sorted(rng.random(n).tolist())


def searched_list(rng, n, at):
    xs = rng.random(n).tolist()
    xs[at] = 5.0
    return xs, 2.0


def structured_field(rng, n):
    rec = np.zeros(n, dtype=[("a", "f8"), ("b", "i4")])
    rec["a"] = rng.random(n)
    return rec["a"]


def locked(*arrays):
    for a in arrays:
        a.setflags(write=False)
    return arrays


def new_lengths(passes=3, calls=60):
    """Each pass's total time, plain and jitted, over ``calls`` arrays of random lengths."""
    rng = np.random.default_rng(1)
    arrays = [rng.random(n) for n in rng.integers(1_000, 200_000, calls)]
    jitted = jit(centered_energy)
    print(f"== new lengths: {calls} calls of centered_energy on arrays of random lengths, total per pass")
    for k in range(passes):
        times = []
        for fn in (centered_energy, jitted):
            started = time.perf_counter()
            results = [fn(x) for x in arrays]
            times.append(time.perf_counter() - started)
            if fn is centered_energy:
                want = results
        assert all(abs(g - w) <= 1e-12 * abs(w) for g, w in zip(results, want))
        print(f"   pass {k + 1}: numpy {times[0] * 1e3:8.1f} ms   astjit {times[1] * 1e3:8.1f} ms   "
              f"numpy/astjit {times[0] / times[1]:.2f}x")
    print(f"   {describe_modes(jitted)}")


def switching(fn):
    """Calls ``fn`` with the global ``WAVE`` switched first, so that both sides see every switch."""
    waves = [np.sin, np.cos]
    state = {"k": 0}

    def call(x):
        global WAVE
        state["k"] ^= 1
        WAVE = waves[state["k"]]
        return fn(x)

    return call


def binary_search(a, v):
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


def fixed_point_cos(x, tol):
    for _ in range(1000):
        nx = math.cos(x)
        if abs(nx - x) < tol:
            break
        x = nx
    return x


def fibonacci(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def window_energy(a, lo, w):
    x = a[lo:lo + w]
    return (x * x).sum() / w + x.mean()


def moving_window(fn, a, w, step=97):
    """``fn(a, lo, w)`` with ``lo`` moved by ``step`` at each call (wrapping before the end)."""
    at = [0]

    def call():
        at[0] = (at[0] + step) % (len(a) - w)
        return fn(a, at[0], w)

    return call


def horner_from_zero(x, coeffs):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


class Recorder:
    def __init__(self, rows, cols):
        self.buf = np.zeros((rows, cols))

    def put(self, i, x):
        self.buf[i] = x * 2.0 + 1.0


def row_into(out, i, a):
    out[i] = a * 2.0 + 1.0


def tanh_chain(a, b):
    return np.tanh(a * 2.0 + b) * 0.5 - a


def clipped_total(z):
    return np.minimum(z, -5).sum()


def checked_scale(x, strict):
    if strict:
        raise NOT_DEFINED_YET(x)  # noqa: F821  (a global the program defines later, if ever)
    return x * 2.0 + 1.0


def reciprocal_or_none(a, k):
    try:
        return a * (1 / k)
    except ZeroDivisionError:
        return None


def row_absmax(A, out):
    for i in range(A.shape[0]):
        out[i] = np.abs(A[i]).max()
    return out


def clipped_items(x):
    res = []
    for i in range(len(x)):
        if x[i] > 0:
            res.append(x[i])
        else:
            res.append(0)
    return res


def back_substitution(U, b, x):
    n = len(b)
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= U[i, j] * x[j]
        x[i] = s / U[i, i]
    return x


def last_axis_total(a):
    s = 0.0
    for j in range(a.shape[-1]):
        s += a[0, j] * 2.0
    return s


def bump(out, i, v):
    if v < 0.25:
        return
    out[i] += v


def bumped(a, out):
    for i in range(len(a)):
        bump(out, i, a[i])
    return out


def cases():
    rng = np.random.default_rng(0)
    osc = Oscillator()
    jitted_energy = jit(Oscillator.energy_after_step)
    jitted_wave = jit(wave_at)
    return [
        ("power_p2_1k", power, jit(power), (rng.random(1000), 2)),
        ("power_p2_100k", power, jit(power), (rng.random(100_000), 2)),
        ("attr_method", Oscillator.energy_after_step, jitted_energy, (osc,)),
        ("first_element", first_element, jit(first_element), (rng.random(1000) + 0.5, 1.0, 2.0)),
        ("alternating_global", switching(wave_at), switching(jitted_wave), (rng.random(16),), jitted_wave),
        ("empty_loop", total_of_positives, jit(total_of_positives), (np.zeros(0),)),
        ("median_1x1", median3x3, jit(median3x3), (np.ones((1, 1)),)),
        ("star_args_float", offset_all, jit(offset_all), (1.0, 2.0, 3.0)),
        ("star_args_100k", offset_all, jit(offset_all), (rng.random(100_000), 2.0, 3.0)),
        ("default_float", scaled_by, jit(scaled_by), (1.5,)),
        ("default_100k", scaled_by, jit(scaled_by), (rng.random(100_000),)),
        ("kwonly_float", shifted_by, jit(shifted_by), (1.5,)),
        ("kwonly_100k", shifted_by, jit(shifted_by), (rng.random(100_000),)),
        ("list_loop_3", heavy_items, jit(heavy_items), (rng.random(3).tolist(),)),
        ("list_loop_10k", heavy_items, jit(heavy_items), (rng.random(10_000).tolist(),)),
        ("collatz_27", collatz, jit(collatz), (27,)),
        ("collatz_2**100+1", collatz, jit(collatz), (2**100 + 1,)),
        ("exp_100", exp_of, jit(exp_of), (rng.random(100),)),
        ("exp_1M", exp_of, jit(exp_of), (rng.random(1_000_000),)),
        ("jit_at_each_call_16", plain_at_each_call, jitted_at_each_call, (rng.random(16), 3.0)),
        ("read_only_block_16", blend, jit(blend), locked(*(rng.random(16) for _ in range(4)))),
        ("read_only_block_100k", blend, jit(blend), locked(*(rng.random(100_000) for _ in range(4)))),
        ("read_only_loop_16", dot_steps, jit(dot_steps), (*locked(rng.random(16), rng.random(16)), 16)),
        ("read_only_loop_10k", dot_steps, jit(dot_steps), (*locked(rng.random(10_000), rng.random(10_000)), 4)),
        ("tuple_200", weighted_by, jit(weighted_by), (rng.random(4), tuple(rng.random(200).tolist()))),
        ("property_method", Scaled.forward, jit(Scaled.forward), (Scaled(2.5), rng.random(4))),
        ("fortran_block_100", doubled_plus, jit(doubled_plus),
         tuple(np.asfortranarray(rng.random((10, 10))) for _ in range(2))),
        ("fortran_block_1M", doubled_plus, jit(doubled_plus),
         tuple(np.asfortranarray(rng.random((1000, 1000))) for _ in range(2))),
        ("list_search_100k", first_above, jit(first_above), searched_list(rng, 100_000, 2000)),
        ("tuple_operand_3", scaled_points, jit(scaled_points), (rng.random((1000, 3)), (1.0, 2.0, 0.5))),
        ("struct_field_gather", gathered, jit(gathered),
         (structured_field(rng, 1000), rng.integers(0, 1000, 100), np.zeros(100))),
        ("scatter_copy_8MB", scattered, jit(scattered),
         (rng.random(2_000_000), np.zeros(1_000_000), rng.integers(0, 1_000_000, 200))),
        ("list_merge_60", merged_total, jit(merged_total), sorted_lists(rng, 60)),
        ("list_merge_1000", merged_total, jit(merged_total), sorted_lists(rng, 1000)),
        ("uint64_big_constant_16", flipped_high_bit, jit(flipped_high_bit),
         (rng.integers(0, 2**63, 16, dtype=np.uint64),)),
        ("uint64_big_constant", flipped_high_bit, jit(flipped_high_bit),
         (rng.integers(0, 2**63, 100_000, dtype=np.uint64),)),
        ("fnv1a_8_bytes", fnv1a, jit(fnv1a), (rng.integers(0, 256, 8).astype(np.uint8),)),
        ("binary_search_1k", binary_search, jit(binary_search), (np.sort(rng.random(1000)), 0.3)),
        ("fixed_point_cos_16", fixed_point_cos, jit(fixed_point_cos), (0.5, 1e-3)),
        ("fixed_point_cos_69", fixed_point_cos, jit(fixed_point_cos), (0.5, 1e-12)),
        ("fibonacci_200", fibonacci, jit(fibonacci), (200,)),
        ("horner_from_zero_30", horner_from_zero, jit(horner_from_zero),
         (rng.random(1000), rng.standard_normal(30).tolist())),
        ("row_method_100x1000", Recorder.put, jit(Recorder.put), (Recorder(100, 1000), 7, rng.random(1000))),
        ("row_into_76MB", row_into, jit(row_into), (np.zeros((100_000, 100)), 7, rng.random(100))),
        ("tanh_chain_1k", tanh_chain, jit(tanh_chain), (rng.standard_normal(1000), rng.standard_normal(1000))),
        ("tanh_chain_100k", tanh_chain, jit(tanh_chain),
         (rng.standard_normal(100_000), rng.standard_normal(100_000))),
        ("int_sum_16", clipped_total, jit(clipped_total), ((np.arange(16) % 100).astype(np.int32),)),
        ("int_sum_1M", clipped_total, jit(clipped_total), ((np.arange(1_000_000) % 100).astype(np.int32),)),
        ("raising_reciprocal_8", reciprocal_or_none, jit(reciprocal_or_none), (rng.random(8), 0)),
        ("row_absmax_20x10k", row_absmax, jit(row_absmax), (rng.standard_normal((20, 10_000)), np.zeros(20))),
        ("mixed_list_100", clipped_items, jit(clipped_items), (rng.standard_normal(100),)),
        ("mixed_list_1k", clipped_items, jit(clipped_items), (rng.standard_normal(1000),)),
        ("back_substitution_2", back_substitution, jit(back_substitution),
         (np.triu(rng.random((2, 2))) + 2 * np.eye(2), rng.random(2), np.zeros(2))),
        ("last_axis_loop_1k", last_axis_total, jit(last_axis_total), (rng.random((3, 1000)),)),
        ("procedure_loop_1k", bumped, jit(bumped), (rng.random(1000), np.zeros(1000))),
        ("missing_global_16", checked_scale, jit(checked_scale), (rng.random(16), False)),
        ("missing_global_100k", checked_scale, jit(checked_scale), (rng.random(100_000), False)),
        ("tanh_kernel_1k", tanh_chain, jit(tanh_chain, backend="tvm"),
         (rng.standard_normal(1000), rng.standard_normal(1000))),
        ("tanh_kernel_100k", tanh_chain, jit(tanh_chain, backend="tvm"),
         (rng.standard_normal(100_000), rng.standard_normal(100_000))),
    ] + [(f"window_moved_{w}", moving_window(window_energy, a, w), moving_window(jitted, a, w), (), jitted)
         for w, a, jitted in [(16, rng.random(100_000), jit(window_energy)),
                              (1000, rng.random(100_000), jit(window_energy))]]


# cases of a transcendental function, whose kernel may differ from numpy's in the last bits
# (docs/semantics.md, "Tolerances")
WITHIN_ULPS = ("tanh_chain_1k", "tanh_chain_100k", "tanh_kernel_1k", "tanh_kernel_100k")


def same(got, want, name=""):
    if isinstance(want, np.ndarray):
        if name in WITHIN_ULPS:
            return got.dtype == want.dtype and got.shape == want.shape and np.allclose(got, want, rtol=1e-13,
                                                                                        atol=1e-15)
        return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    return type(got) is type(want) and got == want


def main():
    opts = parse_args(__doc__.splitlines()[0])
    print_header("small and scalar work: plain Python (column numpy) vs astjit", opts.repeats)
    chosen = []
    for name, plain, jitted, args, *inspected in cases():
        if opts.only and not any(text in name for text in opts.only):
            continue
        for _ in range(3):                         # both sides see the same sequence of calls
            got, want = jitted(*args), plain(*args)
            assert same(got, want, name), (name, got, want)
        shown = (inspected or [jitted])[0]
        modes = describe_modes(shown) if hasattr(shown, "fragments") else "a new jitted function at each call"
        print(f"   check {name}: equal to plain Python; {modes}")
        chosen.append((name, plain, jitted, args))
    results = [compare(name, plain, jitted, args, repeats=opts.repeats) for name, plain, jitted, args in chosen]
    print_results(results)
    if not opts.only or any(text in "new lengths" for text in opts.only):
        new_lengths()


if __name__ == "__main__":
    main()
