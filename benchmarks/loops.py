"""Loop nests (scalar-indexed, on rows and slices): plain Python vs astjit (default ``@jit``) vs numba ``njit``, in one run.

    python benchmarks/loops.py [--quick] [--only TEXT ...]

The programs are those of examples/loop_programs.py; each is the same Python source for all three (numba when installed: ``pip install -e .[bench]``).
Results are checked against plain Python first. Ratios are plain Python time / peer time (above 1:
faster than Python); the compile column is the first call's time (parse, lower, compile the kernel).
"""

import math
import statistics
import time

import numpy as np
from _timing import WARMUP_CALLS, _batch, batch_size, format_time, load_example, parse_args, print_header

from astjit import jit

try:
    import numba
except ImportError:
    numba = None


PROGRAMS = load_example("loop_programs")


def with_outlier(values):
    """``values`` with a fill value (1e30) halfway: its bin leaves int64, so the loop's Python runs."""
    values[len(values) // 2] = 1e30
    return values


def cases():
    p = PROGRAMS
    rng = np.random.default_rng(0)
    lower = np.tril(rng.random((300, 300))) + np.eye(300) * 300
    half = rng.random((200, 200))
    spd = half @ half.T + np.eye(200) * 200         # symmetric positive definite
    return [
        ("recurrence 20k", p.recurrence, (rng.random(20_000), np.zeros(20_000), 0.3)),
        ("jacobi 200x200", p.jacobi, (rng.random((200, 200)), np.zeros((200, 200)))),
        ("pairwise 200x3", p.pairwise, (rng.random((200, 3)), np.zeros((200, 200)))),
        ("histogram 100k", p.histogram, (rng.random(100_000), np.zeros(64, np.int64), 0.0, 1 / 64)),
        ("outlier: histogram 100k", p.histogram, (with_outlier(rng.random(100_000)), np.zeros(64, np.int64), 0.0,
                                                  1 / 64)),
        ("forward subst 300", p.forward_substitution, (lower, rng.random(300), np.zeros(300))),
        ("convolve 10k x 16", p.convolve, (rng.random(10_000), rng.random(16), np.zeros(10_000))),
        ("life 128x128", p.life, ((rng.random((128, 128)) < 0.3).astype(np.int64), np.zeros((128, 128), np.int64))),
        ("life offsets 128^2", p.life_offsets, ((rng.random((128, 128)) < 0.3).astype(np.int64),
                                              np.zeros((128, 128), np.int64))),
        ("while: decay 20k", p.decay, (1.0, 1e-4, 2.0)),
        ("while: bisect 2kx1k", p.bisect_rows, (np.sort(rng.random((2000, 1000)), axis=1), rng.random(2000),
                                              np.zeros(2000, np.int64))),
        ("while: newton", p.newton, (1.0, 2.0, 1e-12)),
        ("rows 500x200", p.affine_rows, (rng.random((500, 200)), np.zeros((500, 200)))),
        ("row sums 100x10k", p.row_sums, (rng.random((100, 10_000)), np.zeros(100))),
        ("row peaks 100x10k", p.row_peaks, (rng.random((100, 10_000)), np.zeros(100, np.int64), np.zeros(100))),
        ("np.exp rows 20x10k", p.exp_rows, (rng.random((20, 10_000)), np.zeros((20, 10_000)))),
        ("np.exp rows 200x100", p.exp_rows, (rng.random((200, 100)), np.zeros((200, 100)))),
        ("int // rows 20x10k", p.bucket_rows, (rng.integers(0, 10**6, (20, 10_000)), 7,
                                               np.zeros((20, 10_000), np.int64))),
        ("int // rows 200x100", p.bucket_rows, (rng.integers(0, 10**6, (200, 100)), 7,
                                                np.zeros((200, 100), np.int64))),
        ("row peaks 5000x40", p.row_peaks, (rng.random((5000, 40)), np.zeros(5000, np.int64), np.zeros(5000))),
        ("rows += 2000x64", p.scatter_rows, (rng.random((2000, 64)), rng.random(2000), np.zeros((8, 64)))),
        ("helper calls 300", p.total_distance, (rng.random(300), rng.random(300))),
        ("int then float 100k", p.weighted_sum, (rng.random(100_000), 0.5)),
        ("crc16 16k bytes", p.crc16, (rng.integers(0, 256, 16_000).astype(np.uint8),)),
        ("search: return 100k", p.first_above, (np.linspace(0, 1, 100_000), 0.99999)),
        ("search: leaves at 3", p.first_above, (np.linspace(0, 1, 100_000), 0.00002)),
        ("is sorted 100k", p.is_sorted, (np.linspace(0, 1, 100_000),)),
        ("items: for x in a 100k", p.item_sum, (rng.random(100_000),)),
        ("enumerate(zip) 100k", p.zip_dot, (rng.random(100_000), rng.random(100_000))),
        ("helper loop: mandel", p.mandelbrot, (np.zeros((100, 150), np.int64), 50)),
        ("swaps: bubble 300", p.bubble_sort, (rng.random(300),)),
        ("while+for: sieve 100k", p.sieve, (100_000,)),
        ("x.size: clip 100k", p.clip_items, (rng.random(100_000), 0.2, 0.8, np.zeros(100_000))),
        ("math: angle bins 100k", p.angle_bins, (rng.standard_normal(100_000), rng.standard_normal(100_000),
                                                np.zeros(16, np.int64))),
        ("list: collect 10k", p.clip_and_collect, (rng.random(10_000), 0.7)),
        ("list: peaks 100k", p.peaks, (rng.random(100_000),)),
        ("max from -inf 100k", p.running_max, (rng.random(100_000),)),
        ("sum if positive 100k", p.positive_sum, (rng.standard_normal(100_000),)),
        ("checks first: 1/x 100k", p.reciprocals, (rng.random(100_000) + 0.5, np.zeros(100_000))),
        ("reversed: back subst 300", p.back_substitution, (lower.T.copy(), rng.random(300))),
        # dot products of rows: numpy's BLAS called from the kernel (cholesky works in place: later
        # repeats factor the factor, the same work)
        ("dot rows: cholesky 200", p.cholesky, (spd.copy(),)),
        ("@ rows: lower solve 300", p.lower_solve, (lower, rng.random(300), np.zeros(300))),
        (".dot rows: seidel 200x3", p.gauss_seidel, (spd, rng.random(200), np.zeros(200), 3)),
        ("round/divmod/local def 100k", p.quantize, (rng.standard_normal(100_000) * 10, 0.25,
                                                     np.zeros(100_000, np.float32))),
        # rotations of array names, tuples of numbers, chains of helper calls
        ("rotation: wave 1k x 200", p.wave, (np.sin(np.linspace(0, 3, 1000)), np.sin(np.linspace(0, 3, 1000)),
                                            np.zeros(1000), 0.1, 200)),
        ("swap: heat 1k x 200", p.heat_swap, (rng.random(1000), np.zeros(1000), 0.2, 200)),
        ("tuple: horner 10k", p.horner, ((1.0, -2.0, 0.5, 3.0, -1.5), rng.random(10_000), np.zeros(10_000))),
        ("helper chain: rk4 10k", p.rk4, (1.0, 0.0, 10.0, 10_000)),
        # rows bound to names: differences of rows, loops over rows, rows passed to a helper
        ("named rows: pairwise 200x3", p.pairwise_rows, (rng.random((200, 3)), np.zeros((200, 200)))),
        ("norm rows: pairwise 200x3", p.pairwise_norms, (rng.random((200, 3)), np.zeros((200, 200)))),
        ("norm rows: 8x50k as they lie", p.row_norms, (rng.random((8, 50_000)), np.zeros(8))),
        ("float power: slice sieve 100k", p.slice_sieve, (100_000,)),
        ("any/all rows 20x100k", p.rows_over, (rng.random((20, 100_000)), 0.5, np.zeros(20, np.bool_))),
        ("int32 rows * k 100x1000", p.scaled_int32_rows, (rng.integers(-1000, 1000, (100, 1000), dtype=np.int32), 3,
                                                          np.zeros((100, 1000), np.int32))),
        ("named rows: nbody 50 x 5", p.nbody_step, (rng.random((50, 3)), rng.random((50, 3)) - 0.5,
                                                    rng.random(50) + 0.5, 0.001, 5)),
        ("for p in points: 20^2 x 50", p.density, (rng.random(20), rng.random(20), rng.random((50, 3)), 0.3)),
        ("rows to helper: nearest 2k", p.nearest_center, (rng.random((2000, 4)), rng.random((8, 4)),
                                                          np.zeros(2000, np.int64))),
        # counters (no overflow check), attributes of an object
        ("count: bools 100k", p.count_true, (rng.random(100_000) > 0.5,)),
        ("attributes: rod 100k", p.rod_step, (p.Rod(rng.random(100_000), 0.1),)),
        # scalar functions and operators, int powers, extremes of rows
        ("hypot/isnan/clip 100k", p.polar_bins, (rng.standard_normal(100_000), rng.standard_normal(100_000),
                                                 np.zeros(4, np.int64))),
        ("<< ^ ~: hash 100k", p.hash_codes, (rng.integers(0, 1000, 100_000),)),
        ("(-1) ** k: pi 100k", p.alternating_pi, (100_000,)),
        ("argmax rows: pivots 300", p.pivot_rows, (rng.standard_normal((300, 300)), np.zeros(300, np.int64))),
        # choices on random data, helpers returning tuples, a raise, a compensated sum
        ("min of 3: dtw 300^2", p.dtw, (rng.standard_normal(300), rng.standard_normal(300))),
        ("tuple helper: lorenz 20k", p.euler_lorenz, (1.0, 1.0, 1.0, 1e-3, 20_000)),
        ("tuple state: rk4 10k", p.rk4_lorenz, ((1.0, 1.0, 1.0), 1e-3, 10_000, np.zeros((10_000, 3)))),
        ("raise: solve 100", p.solve_in_place, (spd[:100, :100].copy(), rng.random(100))),
        ("abs: neumaier 100k", p.neumaier_sum, (rng.standard_normal(100_000),)),
        ("int or int64: horner 100k", p.int_horner, (rng.integers(-3, 3, 100_000), 1)),
        ("complex: mandel 150x100", p.mandelbrot_complex, (np.linspace(-2, 1, 150), np.linspace(-1.5, 1.5, 100), 50,
                                                     np.zeros((100, 150), np.int64))),
        ("complex: spectrum 512", p.power_spectrum, (rng.random(512), np.zeros(64))),
        ("while+append: events 20k", p.event_times, (10, np.array([0.05, 1.0]), rng.random(40_000), 1e9)),
        ("i after loop: search 100k", p.last_below, (np.linspace(0, 1, 100_000), 0.9999)),
        ("for-else: primes 20k", p.primes_for_else, (20_000, np.zeros(3000, np.int64))),
        ("list of floats 10k", p.list_total, (rng.random(10_000).tolist(),)),
        ("np.tanh steps 100k x 5", p.tanh_steps, (rng.random(100_000), 5)),
        ("A[i][j], f(x, k=): matmul 60", p.matmul_chained, (rng.random((60, 60)), rng.random((60, 60)),
                                                            np.zeros((60, 60)))),
        # whole-array time steps on slices, windows
        ("heat 1k x 200", p.heat, (rng.random(1000), 200, 0.1)),
        ("heat 100k x 20", p.heat, (rng.random(100_000), 20, 0.1)),
        ("heat2d 100^2 x 50", p.heat2d, (rng.random((100, 100)), 50, 0.1)),
        ("moving sums 10k/16", p.moving_sums, (rng.random(10_000), 16, np.zeros(10_000 - 15))),
        ("oscillators 1k x200", p.oscillators, (rng.random(1000), rng.random(1000), 0.01, 200)),
        ("oscillators 100k x20", p.oscillators, (rng.random(100_000), rng.random(100_000), 0.01, 20)),
        ("leapfrog 1k x 200", p.leapfrog, (rng.random(1000), rng.random(1000), 0.01, 200)),
        ("in place osc 1k x200", p.oscillators_in_place, (rng.random(1000), rng.random(1000), 0.01, 200)),
        # tiny and small loops: a kernel call costs a few microseconds, more than a few Python
        # statements; a loop of at most ASTJIT_TINY_LOOP statements runs as written
        ("recurrence 4", p.recurrence, (rng.random(4), np.zeros(4), 0.3)),
        ("recurrence 30", p.recurrence, (rng.random(30), np.zeros(30), 0.3)),
        ("jacobi 4x4", p.jacobi, (rng.random((4, 4)), np.zeros((4, 4)))),
        ("jacobi 8x8", p.jacobi, (rng.random((8, 8)), np.zeros((8, 8)))),
        ("histogram 8", p.histogram, (rng.random(8), np.zeros(4, np.int64), 0.0, 0.25)),
        ("histogram 20", p.histogram, (rng.random(20), np.zeros(4, np.int64), 0.0, 0.25)),
        ("outlier: histogram 8", p.histogram, (with_outlier(rng.random(8)), np.zeros(4, np.int64), 0.0, 0.25)),
        ("convolve 8 x 3", p.convolve, (rng.random(8), rng.random(3), np.zeros(8))),
        ("forward subst 4", p.forward_substitution, (np.tril(rng.random((4, 4))) + np.eye(4), rng.random(4),
                                                   np.zeros(4))),
        ("life offsets 8x8", p.life_offsets, ((rng.random((8, 8)) < 0.3).astype(np.int64), np.zeros((8, 8), np.int64))),
        ("while: bisect 4x16", p.bisect_rows, (np.sort(rng.random((4, 16)), axis=1), rng.random(4),
                                             np.zeros(4, np.int64))),
        ("rows 4x8", p.affine_rows, (rng.random((4, 8)), np.zeros((4, 8)))),
        ("rows 40x8", p.affine_rows, (rng.random((40, 8)), np.zeros((40, 8)))),
        ("helper calls 8", p.total_distance, (rng.random(8), rng.random(8))),
        ("int then float 16", p.weighted_sum, (rng.random(16), 0.5)),
        ("int then float 100", p.weighted_sum, (rng.random(100), 0.5)),
        ("heat 16 x 4", p.heat, (rng.random(16), 4, 0.1)),
        ("heat2d 6^2 x 2", p.heat2d, (rng.random((6, 6)), 2, 0.1)),
        ("moving sums 40/4", p.moving_sums, (rng.random(40), 4, np.zeros(37))),
        ("oscillators 16 x 4", p.oscillators, (rng.random(16), rng.random(16), 0.01, 4)),
        ("leapfrog 16 x 4", p.leapfrog, (rng.random(16), rng.random(16), 0.01, 4)),
        ("in place osc 16 x 4", p.oscillators_in_place, (rng.random(16), rng.random(16), 0.01, 4)),
        ("crc16 4 bytes", p.crc16, (rng.integers(0, 256, 4).astype(np.uint8),)),
        ("search: return 40", p.first_above, (np.linspace(0, 1, 40), 0.99)),
        ("is sorted 16", p.is_sorted, (np.linspace(0, 1, 16),)),
        ("items 16", p.item_sum, (rng.random(16),)),
        ("enumerate(zip) 16", p.zip_dot, (rng.random(16), rng.random(16))),
        ("helper loop: mandel 4x4", p.mandelbrot, (np.zeros((4, 4), np.int64), 10)),
        ("swaps: bubble 8", p.bubble_sort, (rng.random(8),)),
        ("while+for: sieve 30", p.sieve, (30,)),
        ("x.size: clip 16", p.clip_items, (rng.random(16), 0.2, 0.8, np.zeros(16))),
        ("math: angle bins 8", p.angle_bins, (rng.standard_normal(8), rng.standard_normal(8), np.zeros(4, np.int64))),
        ("list: collect 8", p.clip_and_collect, (rng.random(8), 0.7)),
        ("list: peaks 16", p.peaks, (rng.random(16),)),
        ("max from -inf 8", p.running_max, (rng.random(8),)),
        ("sum if positive 8", p.positive_sum, (rng.standard_normal(8),)),
        ("checks first: 1/x 8", p.reciprocals, (rng.random(8) + 0.5, np.zeros(8))),
        ("reversed: back subst 4", p.back_substitution, (np.triu(rng.random((4, 4))) + np.eye(4), rng.random(4))),
        ("@ rows: lower solve 4", p.lower_solve, (np.tril(rng.random((4, 4))) + np.eye(4), rng.random(4), np.zeros(4))),
        ("rotation: wave 16 x 4", p.wave, (np.linspace(0, 1, 16), np.linspace(0, 1, 16), np.zeros(16), 0.1, 4)),
        ("swap: heat 16 x 4", p.heat_swap, (rng.random(16), np.zeros(16), 0.2, 4)),
        ("tuple: horner 8", p.horner, ((1.0, -2.0, 0.5), rng.random(8), np.zeros(8))),
        ("helper chain: rk4 8", p.rk4, (1.0, 0.0, 1.0, 8)),
        ("named rows: pairwise 4x3", p.pairwise_rows, (rng.random((4, 3)), np.zeros((4, 4)))),
        ("norm rows: pairwise 4x3", p.pairwise_norms, (rng.random((4, 3)), np.zeros((4, 4)))),
        ("float power: slice sieve 30", p.slice_sieve, (30,)),
        ("any/all rows 8x16", p.rows_over, (rng.random((8, 16)), 0.5, np.zeros(8, np.bool_))),
        ("int32 rows * k 4x8", p.scaled_int32_rows, (rng.integers(-1000, 1000, (4, 8), dtype=np.int32), 3,
                                                     np.zeros((4, 8), np.int32))),
        ("named rows: nbody 3 x 1", p.nbody_step, (rng.random((3, 3)), rng.random((3, 3)) - 0.5,
                                                   rng.random(3) + 0.5, 0.001, 1)),
        ("for p in points: 2^2 x 3", p.density, (rng.random(2), rng.random(2), rng.random((3, 3)), 0.3)),
        ("rows to helper: nearest 8", p.nearest_center, (rng.random((8, 4)), rng.random((3, 4)), np.zeros(8, np.int64))),
        ("round/divmod/local def 8", p.quantize, (rng.standard_normal(8) * 10, 0.25, np.zeros(8, np.float32))),
        ("count: bools 8", p.count_true, (rng.random(8) > 0.5,)),
        ("attributes: rod 8", p.rod_step, (p.Rod(rng.random(8), 0.1),)),
        ("hypot/isnan/clip 8", p.polar_bins, (rng.standard_normal(8), rng.standard_normal(8), np.zeros(4, np.int64))),
        ("<< ^ ~: hash 8", p.hash_codes, (rng.integers(0, 1000, 8),)),
        ("(-1) ** k: pi 8", p.alternating_pi, (8,)),
        ("argmax rows: pivots 4", p.pivot_rows, (rng.standard_normal((4, 4)), np.zeros(4, np.int64))),
        ("min of 3: dtw 8^2", p.dtw, (rng.standard_normal(8), rng.standard_normal(8))),
        ("tuple helper: lorenz 8", p.euler_lorenz, (1.0, 1.0, 1.0, 1e-3, 8)),
        ("tuple state: rk4 8", p.rk4_lorenz, ((1.0, 1.0, 1.0), 1e-3, 8, np.zeros((8, 3)))),
        ("raise: solve 4", p.solve_in_place, (spd[:4, :4].copy(), rng.random(4))),
        ("abs: neumaier 8", p.neumaier_sum, (rng.standard_normal(8),)),
        ("int or int64: horner 8", p.int_horner, (rng.integers(-3, 3, 8), 1)),
        ("complex: mandel 4x4", p.mandelbrot_complex, (np.linspace(-2, 1, 4), np.linspace(-1.5, 1.5, 4), 10,
                                                 np.zeros((4, 4), np.int64))),
        ("complex: spectrum 8", p.power_spectrum, (rng.random(8), np.zeros(4))),
        ("while+append: events 8", p.event_times, (10, np.array([0.05, 1.0]), rng.random(16), 1e9)),
        ("i after loop: search 8", p.last_below, (np.linspace(0, 1, 8), 0.9)),
        ("for-else: primes 20", p.primes_for_else, (20, np.zeros(10, np.int64))),
        ("list of floats 20", p.list_total, (rng.random(20).tolist(),)),
        ("np.tanh steps 16 x 5", p.tanh_steps, (rng.random(16), 5)),
        ("A[i][j], f(x, k=): matmul 3", p.matmul_chained, (rng.random((3, 3)), rng.random((3, 3)), np.zeros((3, 3)))),
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
        if options.only and not any(part in name for part in options.only):
            continue
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
            for _ in range(WARMUP_CALLS):   # (steady state: a weighed loop settles within these calls)
                f(*copies(args))            # (on copies: the next peer's result is checked against want)
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
