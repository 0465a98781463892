"""Loop nests (scalar-indexed, on rows and slices): plain Python vs astjit (default ``@jit``) vs numba ``njit``, in one run.

    python benchmarks/loops.py [--quick]

Each program is the same Python source for all three (numba when installed: ``pip install -e .[bench]``).
Results are checked against plain Python first. Ratios are plain Python time / peer time (above 1:
faster than Python); the compile column is the first call's time (parse, lower, compile the kernel).
"""

import math
import statistics
import time

import numpy as np
from _timing import _batch, batch_size, format_time, parse_args, print_header

from astjit import jit

try:
    import numba
except ImportError:
    numba = None


def recurrence(x, y, a):
    for i in range(1, len(x)):
        y[i] = a * y[i - 1] + (1 - a) * x[i]
    return y


def jacobi(u, v):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return v


def pairwise(points, d):
    n = points.shape[0]
    for i in range(n):
        for j in range(n):
            acc = 0.0
            for k in range(points.shape[1]):
                diff = points[i, k] - points[j, k]
                acc += diff * diff
            d[i, j] = math.sqrt(acc)
    return d


def histogram(values, counts, lo, width):
    for i in range(len(values)):
        b = int((values[i] - lo) / width)
        if 0 <= b < len(counts):
            counts[b] += 1
    return counts


def forward_substitution(L, b, x):
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    return x


def convolve(signal, taps, out):
    n, k = len(signal), len(taps)
    for i in range(n - k + 1):
        acc = 0.0
        for j in range(k):
            acc += signal[i + j] * taps[j]
        out[i] = acc
    return out


def life(grid, new):
    n, m = grid.shape
    for i in range(n):
        for j in range(m):
            alive = (grid[(i - 1) % n, (j - 1) % m] + grid[(i - 1) % n, j] + grid[(i - 1) % n, (j + 1) % m]
                     + grid[i, (j - 1) % m] + grid[i, (j + 1) % m]
                     + grid[(i + 1) % n, (j - 1) % m] + grid[(i + 1) % n, j] + grid[(i + 1) % n, (j + 1) % m])
            if grid[i, j] == 1 and (alive == 2 or alive == 3) or grid[i, j] == 0 and alive == 3:
                new[i, j] = 1
            else:
                new[i, j] = 0
    return new


def life_offsets(grid, new):
    n, m = grid.shape
    for i in range(n):
        for j in range(m):
            alive = 0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    if di != 0 or dj != 0:
                        alive += grid[(i + di) % n, (j + dj) % m]
            new[i, j] = 1 if alive == 3 or (alive == 2 and grid[i, j] == 1) else 0
    return new


def decay(y, h, t_end):
    t = 0.0
    while t < t_end:
        y = y + h * (-0.5 * y + math.sin(t))
        t += h
    return y


def bisect_rows(m, x, out):
    for r in range(m.shape[0]):
        lo, hi = 0, m.shape[1]
        while lo < hi:
            mid = (lo + hi) // 2
            if m[r, mid] < x[r]:
                lo = mid + 1
            else:
                hi = mid
        out[r] = lo
    return out


def newton(x0, target, tol):
    x = x0
    while abs(x * x - target) > tol:
        x = x - (x * x - target) / (2.0 * x)
    return x


def affine_rows(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0 + 1.0
    return out


def scatter_rows(a, w, c):
    for i in range(a.shape[0]):
        c[i % c.shape[0], :] += w[i] * np.sqrt(np.abs(a[i])) - a[i] ** 2
    return c


def dist(x1, y1, x2, y2):
    dx = x2 - x1
    dy = y2 - y1
    return math.sqrt(dx * dx + dy * dy)


def total_distance(x, y):
    total = 0                                  # an int, then floats
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            total += dist(x[i], y[i], x[j], y[j])
    return total


def weighted_sum(a, w):
    total = 0
    for i in range(a.shape[0]):
        total += a[i] * w
    return total


def heat(u, steps, alpha):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:])
    return u


def heat2d(u, steps, c):
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + c * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                             - 4 * u[1:-1, 1:-1])
    return u


def moving_sums(a, w, out):
    for i in range(a.shape[0] - w + 1):
        out[i] = a[i:i + w].sum()
    return out


def oscillators(x, v, dt, steps):
    for _ in range(steps):                   # whole arrays rebound each step: per-iteration Fragments
        acc = -x - 0.1 * v
        v = v + dt * acc
        x = x + dt * v
    return x + v


def cases():
    rng = np.random.default_rng(0)
    lower = np.tril(rng.random((300, 300))) + np.eye(300) * 300
    return [
        ("recurrence 20k", recurrence, (rng.random(20_000), np.zeros(20_000), 0.3)),
        ("jacobi 200x200", jacobi, (rng.random((200, 200)), np.zeros((200, 200)))),
        ("pairwise 200x3", pairwise, (rng.random((200, 3)), np.zeros((200, 200)))),
        ("histogram 100k", histogram, (rng.random(100_000), np.zeros(64, np.int64), 0.0, 1 / 64)),
        ("forward subst 300", forward_substitution, (lower, rng.random(300), np.zeros(300))),
        ("convolve 10k x 16", convolve, (rng.random(10_000), rng.random(16), np.zeros(10_000))),
        ("life 128x128", life, ((rng.random((128, 128)) < 0.3).astype(np.int64), np.zeros((128, 128), np.int64))),
        ("life offsets 128^2", life_offsets, ((rng.random((128, 128)) < 0.3).astype(np.int64),
                                              np.zeros((128, 128), np.int64))),
        ("while: decay 20k", decay, (1.0, 1e-4, 2.0)),
        ("while: bisect 2kx1k", bisect_rows, (np.sort(rng.random((2000, 1000)), axis=1), rng.random(2000),
                                              np.zeros(2000, np.int64))),
        ("while: newton", newton, (1.0, 2.0, 1e-12)),
        ("rows 500x200", affine_rows, (rng.random((500, 200)), np.zeros((500, 200)))),
        ("rows += 2000x64", scatter_rows, (rng.random((2000, 64)), rng.random(2000), np.zeros((8, 64)))),
        ("helper calls 300", total_distance, (rng.random(300), rng.random(300))),
        ("int then float 100k", weighted_sum, (rng.random(100_000), 0.5)),
        # whole-array time steps on slices, windows
        ("heat 1k x 200", heat, (rng.random(1000), 200, 0.1)),
        ("heat 100k x 20", heat, (rng.random(100_000), 20, 0.1)),
        ("heat2d 100^2 x 50", heat2d, (rng.random((100, 100)), 50, 0.1)),
        ("moving sums 10k/16", moving_sums, (rng.random(10_000), 16, np.zeros(10_000 - 15))),
        ("oscillators 1k x200", oscillators, (rng.random(1000), rng.random(1000), 0.01, 200)),
        # tiny and small loops: a kernel call costs a few microseconds, more than a few Python
        # statements; a loop of at most ASTJIT_TINY_LOOP statements runs as written
        ("recurrence 4", recurrence, (rng.random(4), np.zeros(4), 0.3)),
        ("recurrence 30", recurrence, (rng.random(30), np.zeros(30), 0.3)),
        ("jacobi 4x4", jacobi, (rng.random((4, 4)), np.zeros((4, 4)))),
        ("jacobi 8x8", jacobi, (rng.random((8, 8)), np.zeros((8, 8)))),
        ("histogram 8", histogram, (rng.random(8), np.zeros(4, np.int64), 0.0, 0.25)),
        ("histogram 20", histogram, (rng.random(20), np.zeros(4, np.int64), 0.0, 0.25)),
        ("convolve 8 x 3", convolve, (rng.random(8), rng.random(3), np.zeros(8))),
        ("forward subst 4", forward_substitution, (np.tril(rng.random((4, 4))) + np.eye(4), rng.random(4),
                                                   np.zeros(4))),
        ("life offsets 8x8", life_offsets, ((rng.random((8, 8)) < 0.3).astype(np.int64), np.zeros((8, 8), np.int64))),
        ("while: bisect 4x16", bisect_rows, (np.sort(rng.random((4, 16)), axis=1), rng.random(4),
                                             np.zeros(4, np.int64))),
        ("rows 4x8", affine_rows, (rng.random((4, 8)), np.zeros((4, 8)))),
        ("rows 40x8", affine_rows, (rng.random((40, 8)), np.zeros((40, 8)))),
        ("helper calls 8", total_distance, (rng.random(8), rng.random(8))),
        ("int then float 16", weighted_sum, (rng.random(16), 0.5)),
        ("int then float 100", weighted_sum, (rng.random(100), 0.5)),
    ]


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def first_call(fn, args):
    start = time.perf_counter()
    result = fn(*copies(args))
    return result, time.perf_counter() - start


def main():
    options = parse_args(__doc__.splitlines()[0])
    print_header("loop nests: plain Python vs astjit vs numba njit", options.repeats)
    print(f"   numba {numba.__version__ if numba else 'not installed'}")
    rows = []
    for name, fn, args in cases():
        want = fn(*copies(args))
        peers = [("python", fn), ("astjit", jit(fn))]
        if numba is not None:
            peers.append(("numba", numba.njit(fn)))
        compile_times = {}
        for peer, f in list(peers[1:]):
            try:
                got, compile_times[peer] = first_call(f, args)
            except Exception as exc:         # numba compiles only calls of functions it compiled itself
                if peer != "numba":
                    raise
                print(f"   {name}: numba cannot compile it ({type(exc).__name__})")
                peers.remove((peer, f))
                continue
            assert np.allclose(got, want, rtol=1e-12, atol=0), (name, peer)
        sizes = {peer: batch_size(f, args, 0.05) for peer, f in peers}
        times = {peer: [] for peer, _ in peers}
        for r in range(options.repeats):
            for peer, f in (peers if r % 2 == 0 else peers[::-1]):
                times[peer].append(_batch(f, args, sizes[peer]))
        medians = {peer: statistics.median(t) for peer, t in times.items()}
        rows.append((name, medians, compile_times))
    header = f"   {'case':<18} {'python':>10} {'astjit':>10} {'x python':>9} {'compile':>9}"
    if numba is not None:
        header += f" {'numba':>10} {'x python':>9} {'compile':>9} {'astjit/numba':>12}"
    print(header)
    speedups, versus = [], []
    for name, m, c in rows:
        line = (f"   {name:<18} {format_time(m['python']):>10} {format_time(m['astjit']):>10}"
                f" {m['python'] / m['astjit']:>8.1f}x {c['astjit']:>8.2f}s")
        speedups.append(m["python"] / m["astjit"])
        if numba is not None and "numba" in m:
            line += (f" {format_time(m['numba']):>10} {m['python'] / m['numba']:>8.1f}x {c['numba']:>8.2f}s"
                     f" {m['astjit'] / m['numba']:>11.2f}x")
            versus.append(m["astjit"] / m["numba"])
        print(line)
    print(f"   geomean astjit speedup over Python: {math.exp(np.mean(np.log(speedups))):.1f}x"
          + (f"; astjit time / numba time, geomean {math.exp(np.mean(np.log(versus))):.2f}x" if versus else ""))


if __name__ == "__main__":
    main()
