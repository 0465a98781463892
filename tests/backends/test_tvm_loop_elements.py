"""Loop kernels: element swaps (``a[j], a[j + 1] = a[j + 1], a[j]``), ``x.size``, ``x.ndim`` and
``x.shape[-1]``, attributes of global objects (``math.pi``, ``settings.dt``), and ``while`` loops
whose trips hold a loop of their own (the kernel runs from the first trip)."""

import math

import numpy as np
import pytest
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture
from loop_programs import angle_bins, bubble_sort, clip_items, sieve

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("kernels_for_tiny_loops")]

rng = np.random.default_rng(5)
EDGES = np.array([np.nan, 1.0, -0.0, 0.0, np.inf, -np.inf, 2.5, np.nan])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8])
def test_bubble_sort_swaps_elements(dtype):
    values = (rng.random(40) * 200).astype(dtype)
    check(bubble_sort, [(values,), (values[:7],), (values[:1],), (values[:0],), (np.sort(values),)])


def test_swaps_with_nan_and_signed_zeros():
    check(bubble_sort, [(EDGES.copy(),), (EDGES[::-1].copy(),), (EDGES.astype(np.float32),)])


def exchange(a, b, t):
    for i in range(len(a)):
        a[i], b[i] = b[i], a[i]             # between two arrays
        t, a[i] = a[i], t                   # a name and an element, values taken first
    return a, b, t


def test_swaps_between_arrays_and_names():
    x, y = rng.random(9), rng.random(9)
    check(exchange, [(x, y, 0.5), (x[:3], y[:3], -0.0), (x.astype(np.float32), y.astype(np.float32), 2.0),
                     (np.arange(5), np.arange(5, 10), 7)])


def chase(a, n):
    for _ in range(n):
        a[0], a[a[0]] = a[a[0]], a[0]       # the second target's index reads the first store
    return a


def test_targets_are_stored_left_to_right():
    check(chase, [(np.array([2, 0, 1, 3]), 5), (np.array([1, 3, 0, 2]), 7), (np.array([3, 2, 1, 0]), 1)])


def chase_out_of_range(a):
    for i in range(len(a)):
        a[i], a[a[i]] = 0, a[i]             # IndexError at the second store, after the first
    return a


def test_an_out_of_range_target_raises_after_the_stores_before_it():
    check(chase_out_of_range, [(np.array([1, 2, 9, 0]),), (np.array([0, 1]),), (np.array([5]),)])


def swap_rows(m):
    for i in range(m.shape[0] - 1):
        m[i], m[i + 1] = m[i + 1], m[i]     # numpy: the second store reads a view the first changed
    return m


def test_a_swap_of_rows_runs_as_python():
    check(swap_rows, [(rng.random((4, 3)),), (rng.random((2, 5)),)], compiled=False)


def mean_by_size(a):
    s = 0.0
    for i in range(a.size):
        s += a[i]
    return s / a.size, a.ndim


def flat_scale(m, out):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            out[i, j] = m[i, j] * m.size + m.ndim
    return out


def test_size_and_ndim():
    check(mean_by_size, [(rng.random(10),), (rng.random(1),), (rng.random(0),), (rng.random(5).astype(np.float32),),
                         (np.arange(6),)])                     # (an empty array: ZeroDivisionError, as Python)
    check(flat_scale, [(rng.random((3, 4)), np.zeros((3, 4))), (rng.random((1, 7)), np.zeros((1, 7))),
                       (np.arange(6).reshape(2, 3), np.zeros((2, 3), np.int64))])


def last_axis_scale(m, out):
    rows, cols = m.shape[-2], m.shape[-1]
    for i in range(rows):
        for j in range(m.shape[-1]):
            out[i, j] = m[i, j] * cols + m.shape[+0]
    return out


def beyond_the_rank(a):
    s = 0
    for i in range(a.shape[-3]):
        s += 1
    return s


def test_negative_constant_axes_of_a_shape():
    check(last_axis_scale, [(rng.random((3, 4)), np.zeros((3, 4))), (rng.random((1, 7)), np.zeros((1, 7))),
                            (rng.random((0, 2)), np.zeros((0, 2))), (np.arange(6).reshape(2, 3), np.zeros((2, 3)))])
    check(beyond_the_rank, [(rng.random((3, 4)),), (rng.random(2),)], compiled=False)   # IndexError, as Python
    check(beyond_the_rank, [(rng.random((2, 3, 4)),), (rng.random((0, 1, 2)),)])


def test_a_clip_over_size_compiles_with_edges():
    check(clip_items, [(rng.random(20), 0.2, 0.8, np.zeros(20)), (EDGES.copy(), 0.0, 1.0, np.zeros(8)),
                       (EDGES.copy(), -0.0, 0.0, np.zeros(8)), (rng.random(5).astype(np.float32), 0.5, 0.6,
                                                               np.zeros(5, np.float32))])


def sweeps_until_converged(u, tol):
    err = tol + 1.0
    sweeps = 0
    while err > tol:
        err = 0.0
        for i in range(1, u.shape[0] - 1):
            new = 0.5 * (u[i - 1] + u[i + 1])
            if abs(new - u[i]) > err:
                err = abs(new - u[i])
            u[i] = new
        sweeps += 1
    return u, sweeps


@pytest.mark.parametrize("tiny", ["0", "64", "100000"])
def test_while_loops_with_a_loop_inside(tiny, monkeypatch):
    """Whatever the tiny-loop setting, a ``while`` whose trips run a loop of their own gives Python's
    results; by default it runs the kernel from the first trip."""
    monkeypatch.setenv("ASTJIT_TINY_LOOP", tiny)
    compiled = tiny != "100000"
    check(sieve, [(100,), (2,), (1,), (1000,), (37,)], compiled=compiled)
    u = rng.random(30)
    u[0], u[-1] = 0.0, 1.0
    check(sweeps_until_converged, [(u, 1e-3), (u[:5].copy(), 1e-6), (u, 10.0)], compiled=compiled)


def test_a_sieve_runs_its_first_trips_in_the_kernel(monkeypatch):
    """Its first trips as written would be most of its work (the trip for 2 crosses out half of n)."""
    from astjit import jit

    monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)
    jitted = jit(sieve)
    assert np.array_equal(jitted(50_000), sieve(50_000))
    loop = next(f for f in jitted.fragments if f.block.kind == "loop" and f.entries)
    assert loop.calls == 1 and loop.entries[0].mode == "tvm"
    # a trip's work (the inner loop's range depends on ``i``: many positions) is more than the first
    # trips' budget (frontend/loop_guard): the rewritten function calls the kernel without counting
    # trips as written
    assert not any(name.startswith("__astjit_trips_") for name in jitted._transformed.function.__code__.co_varnames)


def scale_rows(m, out):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            out[i, j] = m[i, j] * 2.0
    return out


def test_empty_and_size_one_axes_run_the_kernel_whatever_their_strides(monkeypatch, caplog):
    """numpy ignores the stride of an axis of extent 0 or 1 (``x[None, :]`` has stride 0 there); the
    kernel's argument check does not, so the runner passes such arrays with C-order strides instead
    of running the loop's Python."""
    import logging

    from astjit import jit

    monkeypatch.setenv("ASTJIT_LOG", "fallbacks")
    x = rng.random(6)
    views = [x[None, :], np.zeros((0, 3)), x[:, None], np.zeros(0).reshape(0, 1), rng.random((2, 3))]
    assert any(m.strides[0] == 0 for m in views)
    jitted = jit(scale_rows)
    with caplog.at_level(logging.INFO, logger="astjit"):
        for m in views * 2:                  # (not copies: a copy gets C-order strides)
            got, want = jitted(m, np.zeros(m.shape)), scale_rows(m, np.zeros(m.shape))
            assert got.shape == want.shape and np.array_equal(got, want)
    assert "refused" not in caplog.text, caplog.text


class settings:                             # noqa: N801 - settings as a class of constants
    dt = 0.5
    weights = np.arange(4.0)
    steps = 3


def uses_module_constants(n, out):
    for i in range(n):
        out[i] = math.sin(2 * math.pi * i / n) + np.pi * settings.dt - (np.inf if i < 0 else 0.0)
    return out


def uses_settings(a):
    s = 0.0
    for i in range(len(a)):
        for k in range(settings.steps):
            s += a[i] * settings.weights[k % 4] * settings.dt
    return s


def test_attributes_of_global_objects_are_read_at_each_call(monkeypatch):
    """``math.pi`` and ``settings.dt`` (a module's or a class's attribute) are passed in as the loop's
    arguments: a new value reaches the next call without a new kernel, as in Python."""
    check(uses_module_constants, [(8, np.zeros(8)), (3, np.zeros(3)), (0, np.zeros(1))])
    a = rng.random(10)
    jitted = check(uses_settings, [(a,), (a[:3],)])
    kernels = sum(len(f.entries) for f in jitted.fragments if f.block.kind == "loop")
    for dt, weights, steps in ((0.25, np.arange(4.0) * -1.5, 2), (3, np.ones(4, np.float32), 5), (0.5, np.arange(4.0), 0)):
        monkeypatch.setattr(settings, "dt", dt)
        monkeypatch.setattr(settings, "weights", weights)
        monkeypatch.setattr(settings, "steps", steps)
        assert jitted(a) == uses_settings(a) and type(jitted(a)) is type(uses_settings(a))
    assert sum(len(f.entries) for f in jitted.fragments if f.block.kind == "loop") <= kernels + 2


def math_unary(x, out):
    for i in range(len(x)):
        out[i] = (math.asin(x[i] / 4) + math.acos(x[i] / 4) + math.asinh(x[i]) + math.log2(x[i] + 3)
                  + math.log10(x[i] + 3) + math.cbrt(x[i]) + math.exp2(x[i]) + math.erf(x[i]) + math.erfc(x[i]))
    return out


def math_domains(x, out):
    for i in range(len(x)):
        out[i] = math.acosh(x[i]) + math.atanh(1 / x[i])
    return out


def math_binary(x, y, out):
    for i in range(len(x)):
        out[i] = math.atan2(y[i], x[i]) + math.copysign(x[i], y[i]) + math.pow(abs(x[i]), y[i]) + math.fmod(x[i], y[i])
    return out


def math_to_int(x, out):
    s = 0
    for i in range(len(x)):
        out[i] = math.floor(x[i]) - math.ceil(x[i]) * 2 + math.trunc(x[i])
        s += math.floor(x[i] * 1.5)
    return out, s


def test_math_functions_are_the_c_librarys_with_cpythons_errors():
    """Same bits as CPython's math module (both call the C library), and its ValueError or
    OverflowError where a NaN comes from numbers or an infinity from finite ones."""
    x = rng.standard_normal(50) * 2
    check(math_unary, [(x, np.zeros(50)), (np.array([0.5, 1.0]), np.zeros(2)), (np.array([5.0]), np.zeros(1)),
                       (np.array([np.nan, -0.0, 1e-310]), np.zeros(3)), (np.array([2000.0]), np.zeros(1)),
                       (x.astype(np.float32), np.zeros(50, np.float32))])
    check(math_domains, [(rng.random(20) * 5 + 1.5, np.zeros(20)), (np.array([0.5]), np.zeros(1)),
                         (np.array([1.0]), np.zeros(1)), (np.array([np.inf]), np.zeros(1))])
    check(math_binary, [(x, rng.standard_normal(50), np.zeros(50)), (EDGES.copy(), EDGES[::-1].copy(), np.zeros(8)),
                        (np.array([1.0]), np.array([0.0]), np.zeros(1)), (np.array([2.0]), np.array([2000.0]), np.zeros(1)),
                        (np.array([-0.0, 0.0]), np.array([-1.0, -3.0]), np.zeros(2))])
    check(math_to_int, [(x * 100, np.zeros(50)), (np.array([-0.5, 0.5, -2.0, 3.99, -0.0]), np.zeros(5)),
                        (np.array([np.nan]), np.zeros(1)), (np.array([-np.inf]), np.zeros(1))])


def test_angle_bins_with_atan2_pi_and_floor():
    x, y = rng.standard_normal(200), rng.standard_normal(200)
    check(angle_bins, [(x, y, np.zeros(16, np.int64)), (x[:5], y[:5], np.zeros(3, np.int64)),
                       (np.array([0.0, -0.0, -1.0, np.inf]), np.array([-0.0, 0.0, -0.0, 1.0]), np.zeros(8, np.int64))])


def floors_of_ints(a, k, out):
    for i in range(len(a)):
        out[i] = math.floor(a[i]) + math.ceil(a[i] * 2) + math.trunc(k) + math.floor(i > 2)
    return out


def floor_sum(a):
    s = 0
    for i in range(len(a)):
        s += math.floor(a[i]) + math.ceil(a[i] * 3)
    return s


def clipped(a, lo, hi):
    out = []
    for i in range(len(a)):
        out.append(np.clip(a[i], lo, hi))
    return out


def test_clip_of_ints_stays_python_and_of_floats_keeps_x_on_a_tie():
    # of an int, numpy's clip path depends on whether an int bound fits the dtype (a tie with a -0.0
    # bound then gives -0.0): the loop runs as Python
    for dtype in (np.uint8, np.int8):
        check(clipped, [(np.zeros(5, dtype), -1, -0.0), (np.zeros(5, dtype), -0.0, 300),
                        (np.arange(5, dtype=dtype), np.float32(-0.0), 3)], compiled=False)
    z = np.array([0.0, -0.0, 1.5, np.nan])
    check(clipped, [(z, -0.0, 0.0), (z, 0.0, -0.0), (z.astype(np.float32), -1, -0.0), (z, 0, 1)])


def truncs_of_numpy_ints(a, out):
    for i in range(len(a)):
        out[i] = math.trunc(a[i])            # TypeError: numpy's ints have no __trunc__
    return out


def test_floor_and_ceil_of_ints_are_python_ints():
    check(floors_of_ints, [(np.arange(-3, 4), 5, np.zeros(7)), (np.arange(5, dtype=np.uint8), True, np.zeros(5, np.int64)),
                           (np.array([True, False]), -7, np.zeros(2, np.int16))])
    # a numpy int has no __floor__: Python makes it a float first (2**53 + 1 becomes 2**53)
    big = np.array([2**53 + 1, -(2**53) - 1, 2**62 + 2**9 + 1, 7])
    check(floor_sum, [(big,), (big[::-1].copy(),), (np.arange(5, dtype=np.int32),)])
    check(floor_sum, [(np.array([2**63 - 1]),)], compiled=False)     # 2**63 as a float: beyond int64
    check(truncs_of_numpy_ints, [(np.arange(3), np.zeros(3))], compiled=False)


def product_by_rows(A, B, C):
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i][k] * B[k][j]
            C[i][j] = s
    return C


def shifted_rows(A, out, d):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            out[i][j] = A[i][j + d] - A[i - 1][j]
    return out


def first_items(a):
    s = 0.0
    for i in range(len(a)):
        s += a[i][0]
    return s


def test_chained_indexing_reads_and_writes_elements():
    """``A[i][j]`` is ``A[i, j]`` of an array: the same element, and out of bounds the IndexError Python
    raises at its own link (``axis 0`` of the row); of a 1-d array ``a[i][0]`` raises at the scalar."""
    check(product_by_rows, [(rng.random((4, 3)), rng.random((3, 5)), np.zeros((4, 5))),
                            (rng.random((1, 1)), rng.random((1, 2)), np.zeros((1, 2)))])
    check(shifted_rows, [(rng.random((4, 5)), np.zeros((4, 5)), d) for d in (0, 1, -5, -6)])
    check(first_items, [(rng.random((4, 2)),), (rng.random((0, 3)),)])
    check(first_items, [(rng.random(4),)], compiled=False)


def gathered(src, idx, out):
    for k in range(len(idx)):
        out[k] = src[idx[k]] * 2.0
    return out


def test_a_field_of_a_structured_array_runs_the_loops_python_without_the_kernels_refusal(monkeypatch, caplog):
    """A field of a structured array has strides that are not whole items (12 bytes between float64s),
    which the kernel's conversion refuses with an exception (17 us a call, 0.44x plain Python): the
    runner tests strides once such an array came, and runs the loop's Python for it; C-contiguous
    arrays after it run the kernel."""
    import logging

    from astjit import jit

    monkeypatch.setenv("ASTJIT_LOG", "fallbacks")
    rec = np.zeros(50, dtype=[("a", "f8"), ("b", "i4")])
    rec["a"] = rng.standard_normal(50)
    assert rec["a"].strides == (12,)
    jitted = jit(gathered)
    with caplog.at_level(logging.INFO, logger="astjit"):
        for src in [rec["a"], rng.random(50), rec["a"], rec["a"][::-2], rng.random(50)[::3], rec["a"]]:
            idx = rng.integers(0, len(src), 9)
            got, want = jitted(src, idx, np.zeros(9)), gathered(src, idx, np.zeros(9))
            assert np.array_equal(got, want)
    assert "refused" not in caplog.text, caplog.text


def scattered(src, out, idx):
    acc = 0
    for k in range(len(idx)):
        i = idx[k]
        out[i] = src[i] * 2.0
        acc += int(src[i] * 1e3) * k
    return acc


def test_a_loop_copying_the_arrays_it_writes_is_weighed_against_its_python():
    """Where an int may leave int64 after the loop wrote elements, the runner copies the arrays it
    writes before each call; a loop touching 200 elements of an 8 MB array paid 580 us a call for
    52 us of Python (0.09x). Such a loop's kernel is timed against its Python per size class
    (runtime/loop_weighing), results Python's either way; a loop that needs no copy is not."""
    from astjit import jit

    src, idx = rng.standard_normal(4000), rng.integers(0, 2000, 200)
    idx[7] = -3
    calls = [(src, np.zeros(2000), idx), (src, np.zeros(2000), idx[:5])] * 5 + [
        (np.concatenate([src[:100], [1e300], src[101:]]), np.zeros(2000), np.arange(150))]
    jitted = check(scattered, calls)
    runner = next(f for f in jitted.fragments if f.block.kind == "loop").entries[0].runner
    assert isinstance(getattr(runner, "weighed", None), dict), runner
    plain = jit(gathered)
    plain(src, idx, np.zeros(200))
    assert not hasattr(next(f for f in plain.fragments if f.block.kind == "loop").entries[0].runner, "weighed")
