"""push_reductions_into_loops: a reduction of stacked per-step arrays accumulates in the loop; its
must-not-fire cases stay exactly as written."""

import warnings

import numpy as np
import pytest
from differential import assert_values_match
from scan_then_reduce import scan_loss as mse_scan

from astjit import jit

PUSH = ["push_reductions_into_loops"]


def sum_of_steps(h, xs):
    outs = []
    for t in range(len(xs)):
        h = h * 0.5 + xs[t]
        outs.append(h)
    total = np.sum(np.array(outs))
    return total



def max_over_steps(h, xs):
    outs = []
    for t in range(len(xs)):
        h = np.abs(h - xs[t])
        outs.append(h)
    return np.stack(outs).max(axis=0)


def step_axis_mean(h, xs, bias):
    outs = []
    for t in range(len(xs)):
        h = np.sin(h + xs[t])
        outs.append(h.copy())
    return np.mean(np.stack(outs) * 2.0 + bias, axis=0)


def min_with_continue(xs):
    outs = []
    for t in range(len(xs)):
        if t % 2:
            continue
        outs.append(xs[t] * 2.0)
    return np.min(np.stack(outs))


def fires(jf) -> bool:
    return any(r.kind == "rewrite" and "push_reductions_into_loops" in r.message for r in jf.records())


def check(fn, make_args, fire=True, rtol=1e-5, calls=3):
    jf = jit(fn, rewrites=PUSH)
    for k in range(calls):
        args = make_args(k)
        want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        got = jf(*args)
        assert_values_match(got, want, rtol=rtol)
    assert fires(jf) == fire, jf.explain()
    assert ("outs" not in jf.source) == fire
    return jf


def rng_args(dtype, steps, width, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(width).astype(dtype), rng.standard_normal((steps, width)).astype(dtype),
            rng.standard_normal((steps, width)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mean_squared_error_of_a_scan(dtype):
    def make(k):
        h, xs, tg = rng_args(dtype, [5, 12, 1][k], [7, 33, 4][k], k)
        return h, dtype(0.5), xs, tg
    check(mse_scan, make, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_target_broadcast_over_steps_and_python_scalars():
    def make(k):
        h, xs, _ = rng_args(np.float64, 4 + k, 6, k)
        return h, 0.25, xs, np.linspace(0, 1, 6)        # (6,) target: the same for every step
    check(mse_scan, make, rtol=1e-12)

    def make_column(k):
        h, xs, _ = rng_args(np.float64, 4 + k, 6, k)
        return h, 0.25, xs, np.ones((1, 6))              # a length-1 step axis broadcasts
    check(mse_scan, make_column, rtol=1e-12)


def test_sum_over_every_axis_and_step_axis_mean():
    check(sum_of_steps, lambda k: rng_args(np.float64, 3 + k, 5, k)[:2], rtol=1e-12)
    check(step_axis_mean, lambda k: (*rng_args(np.float64, 3 + k, 5, k)[:2], np.float64(k)), rtol=1e-12)
    check(max_over_steps, lambda k: rng_args(np.float64, 2 + k, 5, k)[:2], rtol=0)
    check(min_with_continue, lambda k: (rng_args(np.float32, 5 + k, 4, k)[1],), rtol=0)


def test_errors_are_numpys():
    jf = jit(mse_scan, rewrites=PUSH)
    h, xs, tg = rng_args(np.float64, 0, 3, 0)
    with pytest.raises(ValueError, match="at least one array"):
        jf(h, 0.5, xs, tg)                                  # no steps: np.stack([]) raises
    h, xs, tg = rng_args(np.float64, 4, 3, 0)
    with pytest.raises(ValueError):
        mse_scan(h, 0.5, xs, tg[:3])
    with pytest.raises(ValueError):
        jf(h, 0.5, xs, tg[:3])                              # 3 targets for 4 steps
    assert np.isclose(jf(h, 0.5, xs, tg), mse_scan(h, 0.5, xs, tg))


def list_read_elsewhere(h, xs):
    outs = []
    for t in range(len(xs)):
        h = h + xs[t]
        outs.append(h)
    return np.sum(np.stack(outs)), len(outs)


def loop_breaks(h, xs):
    outs = []
    for t in range(len(xs)):
        h = h + xs[t]
        if h[0] > 2:
            break
        outs.append(h)
    return np.sum(np.stack(outs)) if outs else 0.0


def other_axis(h, xs):
    outs = []
    for t in range(len(xs)):
        h = h + xs[t]
        outs.append(h)
    return np.sum(np.stack(outs), axis=1)


def changed_in_place(h, xs):
    outs = []
    for t in range(len(xs)):
        h = h + xs[t]
        outs.append(h)
        h += 1.0                      # the list's entry changes too
    return np.sum(np.stack(outs))


def operand_assigned_in_loop(h, xs, target):
    outs = []
    for t in range(len(xs)):
        h = h + xs[t]
        outs.append(h)
        target = target * 2.0
    return np.sum((np.stack(outs) - target) ** 2)


def appends_a_view(h, xs):
    outs = []
    for t in range(len(xs)):
        outs.append(xs[t])
    xs[0] = 100.0
    return np.sum(np.stack(outs))


def error_state_in_the_loop(h, xs):
    outs = []
    for t in range(len(xs)):
        h = h + xs[t]
        with np.errstate(over="raise"):        # the steps' error state is not the reduction's
            outs.append(h)
    return np.sum(np.stack(outs))


@pytest.mark.parametrize("fn, extra", [
    (list_read_elsewhere, ()), (loop_breaks, ()), (other_axis, ()), (changed_in_place, ()),
    (operand_assigned_in_loop, (np.ones(4),)), (appends_a_view, ()), (error_state_in_the_loop, ()),
])
def test_must_not_fire(fn, extra):
    check(fn, lambda k: (*rng_args(np.float64, 3 + k, 4, k)[:2], *extra), fire=False, rtol=1e-12)


def test_not_applied_by_default():
    jf = jit(mse_scan)
    h, xs, tg = rng_args(np.float64, 3, 4, 0)
    jf(h, 0.5, xs, tg)
    assert not fires(jf) and "outs" in jf.source


def test_show_prints_the_rewritten_loop():
    jf = jit(mse_scan, rewrites=PUSH)
    text = jf.source
    assert "__astjit_reduce_0.add(h, targets)" in text and "__astjit_reduce_0.result(targets)" in text
    assert "np.stack" not in text


@pytest.mark.parametrize("steps, width", [(3, 20_000), (300, 1024)], ids=["a kernel per large step", "chunks of small steps"])
def test_large_steps_and_several_chunks(steps, width):
    """Steps of 160 KB go through the jitted step function one at a time; 300 steps of 8 KB make ten
    stacks of at most 256 KB, the step-indexed target sliced to match each."""
    def make(k):
        h, xs, tg = rng_args(np.float64, steps + k, width, k)
        return h, 0.5, xs, tg
    check(mse_scan, make, rtol=1e-12)
    check(step_axis_mean, lambda k: (*rng_args(np.float64, steps + k, width, k)[:2], np.ones((1, width))),
          rtol=1e-12)
    check(max_over_steps, lambda k: rng_args(np.float64, steps + k, width, k)[:2], rtol=0)
    h, xs, tg = rng_args(np.float64, steps, width, 0)
    with pytest.raises(ValueError):
        jit(mse_scan, rewrites=PUSH)(h, 0.5, xs, tg[:-1])


def test_special_values_pass_through():
    h, xs, tg = rng_args(np.float64, 4, 6, 0)
    xs[1, 2], xs[2, 3], tg[3, 0] = np.nan, np.inf, -0.0
    jf = jit(max_over_steps, rewrites=PUSH)
    assert_values_match(jf(h, xs), max_over_steps(h, xs))
    jf = jit(mse_scan, rewrites=PUSH)
    assert np.isnan(jf(h, 0.5, xs, tg)) and np.isnan(mse_scan(h, 0.5, xs, tg))


def operand_written_by_out(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
        np.add(target, 1.0, out=target)         # the original reduces against the last values
    return np.sum((np.stack(outs) - target) ** 2)


def operand_filled(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
        target.fill(t)
    return np.sum((np.stack(outs) - target) ** 2)


def appends_a_positional_out(xs, buffer):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(np.multiply(xs[t], 2.0, buffer))   # every entry is buffer
    return np.sum(np.stack(outs))


def appends_an_einsum_view(xs, m):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(np.einsum("ij->ji", m))             # a view of m
        m += 1.0
    return np.sum(np.stack(outs))


def step_kept_in_another_list(xs, target):
    outs = []
    kept = []
    for t in range(xs.shape[0]):
        h = xs[t] * 2.0
        outs.append(h)
        kept.append(h)                          # h escapes: kept[0] is outs[0]
    kept[0][:] = target
    return np.sum(np.stack(outs))


@pytest.mark.parametrize("fn", [operand_written_by_out, operand_filled, appends_a_positional_out,
                                appends_an_einsum_view, step_kept_in_another_list])
def test_must_not_fire_where_the_loop_writes_what_the_reduction_reads(fn):
    def make(k):
        xs = np.random.default_rng(k).standard_normal((3 + k, 20_000))
        return xs, (np.zeros((4, 4)) if fn is appends_an_einsum_view else np.zeros(20_000))
    check(fn, make, fire=False, rtol=1e-12)


def sum_of_array(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.sum(np.array(outs))


def mean_of_asarray(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.mean(np.asarray(outs))


def max_of_array(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.max(np.array(outs))


def run_both(fn, *args):
    """(numpy's outcome, the rewritten function's): a value, or the exception's type."""
    outcomes = []
    for f in (fn, jit(fn, rewrites=PUSH)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            except Exception as exc:
                value = type(exc)
        outcomes.append((value, sorted({type(w.message) for w in caught}, key=str)))
    return outcomes


@pytest.mark.parametrize("fn", [sum_of_array, mean_of_asarray, max_of_array])
def test_no_steps_give_what_numpy_gives_for_an_empty_array(fn):
    """np.array([]) is an empty float64 array: its sum is 0.0, its mean NaN with a warning, its max an error."""
    (want, want_warnings), (got, got_warnings) = run_both(fn, np.zeros((0, 4)))
    if isinstance(want, type):
        assert got is want
    else:
        assert_values_match(got, want)
    assert got_warnings == want_warnings
    assert_values_match(jit(fn, rewrites=PUSH)(np.ones((3, 4))), fn(np.ones((3, 4))))


def test_under_an_error_state_that_raises_the_reduction_is_numpys_own():
    """np.errstate(all="raise"): the stack is reduced as written, the same bits and the same errors."""
    rng = np.random.default_rng(0)
    jf = jit(sum_of_array, rewrites=PUSH)
    xs = rng.standard_normal((100, 20_000)).astype(np.float32)
    jf(xs[:2])                                      # transformed under the default state
    with np.errstate(all="raise"):
        assert jf(xs).tobytes() == sum_of_array(xs).tobytes()
        assert jf(np.zeros((0, 3))) == 0.0
        big = np.full((4, 20_000), 1e38, np.float32)
        with pytest.raises(FloatingPointError):
            sum_of_array(big)
        with pytest.raises(FloatingPointError):
            jf(big)
    assert fires(jf)


def int_steps_summed_over_the_step_axis(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 3)
    return np.sum(np.stack(outs), axis=0)


def mean_over_every_axis(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 1.0)
    return np.mean(np.stack(outs))


def mean_of_int_steps(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 1)
    return np.mean(np.stack(outs))


def mean_of_scalar_steps(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(np.sum(xs[t]))
    return np.mean(np.stack(outs), axis=0)


def sum_of_scalar_steps(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(np.sum(xs[t]))
    return np.sum(np.stack(outs), axis=0)


@pytest.mark.parametrize("fn, dtype, value", [
    (int_steps_summed_over_the_step_axis, np.int8, 100),       # numpy sums int8 in int64
    (int_steps_summed_over_the_step_axis, np.uint8, 200),      # and uint8 in uint64
    (int_steps_summed_over_the_step_axis, np.bool_, True),
    (mean_over_every_axis, np.float16, 60_000),                # a float16 mean accumulates in float32
    (mean_over_every_axis, np.int16, 30_000),
    (mean_of_int_steps, np.int64, 2**60),                     # numpy's mean sums int64 in float64: no wrap
    (mean_of_int_steps, np.uint64, 2**63),
    (mean_of_scalar_steps, np.float32, 1.5),                   # a numpy scalar, not a 0-d array
    (sum_of_scalar_steps, np.float64, 2.5),
], ids=["int8", "uint8", "bool", "float16 mean", "int16 mean", "int64 mean", "uint64 mean",
         "mean of scalars", "sum of scalars"])
def test_dtype_and_type_are_numpys(fn, dtype, value):
    for steps, width in [(3, 10), (3, 5_000), (3, 70_000), (1, 10), (1, 70_000)]:
        xs = np.full((steps, width), value, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jf = jit(fn, rewrites=PUSH)
            assert_values_match(jf(xs), fn(xs), rtol=1e-6)
            assert fires(jf)


def sum_then_changed(x, n):
    outs = []
    for t in range(n):
        h = x * 2.0
        outs.append(h)
    s = np.sum(np.stack(outs), axis=0)
    s += 1.0
    return s, h


@pytest.mark.parametrize("width", [5, 70_000])
def test_one_step_result_is_a_new_array(width):
    jf = jit(sum_then_changed, rewrites=PUSH)
    for n in (1, 2, 1):
        s, h = jf(np.ones(width), n)
        assert_values_match((s, h), sum_then_changed(np.ones(width), n))
    assert fires(jf)


def shrinking_steps(x, n):
    outs = []
    for t in range(n):
        outs.append(x[: x.shape[0] - t] * 2.0)
    return np.sum(np.stack(outs))


@pytest.mark.parametrize("width", [10, 1_000, 10_000])
def test_steps_of_different_shapes_raise_numpys_error(width):
    with pytest.raises(ValueError):
        shrinking_steps(np.ones(width), 3)
    jf = jit(shrinking_steps, rewrites=PUSH)
    for _ in range(2):
        with pytest.raises(ValueError, match="same shape"):
            jf(np.ones(width), 3)
    assert_values_match(jf(np.ones(width), 1), shrinking_steps(np.ones(width), 1))
    assert fires(jf)


def stacked_with_a_float_axis(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.sum(np.stack(outs, axis=0.0))


def test_a_stack_axis_numpy_refuses_is_refused_as_written():
    """np.stack(outs, axis=0.0) raises numpy's TypeError: the rewrite does not take 0.0 for 0."""
    (want, _), (got, _) = run_both(stacked_with_a_float_axis, np.ones((3, 4)))
    assert want is TypeError and got is TypeError
    assert not fires(jit(stacked_with_a_float_axis, rewrites=PUSH))


def operand_bound_by_a_comprehension(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return [np.sum(np.stack(outs) * k) for k in (1.0, 2.0)]


def operand_rebound_by_a_comprehension(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return [np.sum(np.stack(outs) - target) for target in (1.0,)]


def operand_filled_by_the_reduction_statement(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return target.fill(0.0) or np.sum(np.stack(outs) - target)


def step_filled_by_the_reduction_statement(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        h = xs[t] * 2.0
        outs.append(h)
    return h.fill(0.0) or np.sum(np.stack(outs) - target)


def reduced_in_a_loop(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    sums = []
    for c in range(2):
        sums.append(np.sum(np.stack(outs) - target, axis=0))
    sums[0][0] = 100.0                          # the second sum is an array of its own
    return sums


def reduced_in_a_comprehension(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    sums = [np.max(np.stack(outs), axis=0) for _ in range(2)]
    sums[1] += target
    return sums


@pytest.mark.parametrize("fn", [operand_bound_by_a_comprehension, operand_rebound_by_a_comprehension,
                                operand_filled_by_the_reduction_statement, step_filled_by_the_reduction_statement,
                                reduced_in_a_loop, reduced_in_a_comprehension])
@pytest.mark.parametrize("width", [4, 20_000])
def test_must_not_fire_where_the_reduction_statement_binds_changes_or_repeats(fn, width):
    """The statement that reduces is part of what the operands and steps must survive unchanged, and it must
    reduce once: the steps are reduced against the operands as they come."""
    def make(k):
        return np.random.default_rng(k).standard_normal((3 + k, width)), np.full(width, 10.0)
    check(fn, make, fire=False, rtol=1e-12)


def written_through_a_view_it_makes(xs, target):
    flat = target.reshape(-1)                   # the same data as target
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
        flat[:] = t
    return np.sum(np.stack(outs) - target)


def operand_is_a_view_it_makes(xs, target):
    flat = target.reshape(-1)
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
        target[:] = t
    return np.sum(np.stack(outs) - flat)


def written_by_a_function_it_makes(xs, target):
    def bump():
        target[:] += 1.0
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
        bump()
    return np.sum(np.stack(outs) - target)


@pytest.mark.parametrize("fn", [written_through_a_view_it_makes, operand_is_a_view_it_makes,
                                written_by_a_function_it_makes])
@pytest.mark.parametrize("width", [4, 20_000])
def test_must_not_fire_where_the_function_shares_an_operand_under_another_name(fn, width):
    def make(k):
        return np.random.default_rng(k).standard_normal((3 + k, width)), np.ones(width)
    check(fn, make, fire=False, rtol=1e-12)


def operand_made_and_measured_before(xs, target):
    width = target.shape[0]
    scaled = target * 2.0
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t, :width] * 2.0)
    return np.sum((np.stack(outs) - scaled) ** 2 * target)


def test_operands_only_measured_or_made_new_by_the_function_still_fire():
    check(operand_made_and_measured_before,
          lambda k: (np.random.default_rng(k).standard_normal((3 + k, 6)), np.ones(6)), rtol=1e-12)


@pytest.mark.parametrize("width", [3, 1_000, 20_000])
def test_one_step_broadcasts_against_every_step_of_an_operand(width):
    """np.stack of one step is (1, n): numpy broadcasts it against a (5, n) target."""
    rng = np.random.default_rng(0)
    h, xs, targets = rng.standard_normal(width), rng.standard_normal((1, width)), rng.standard_normal((5, width))
    check(mse_scan, lambda k: (h, 0.5, xs, targets), rtol=1e-12)
    check(mse_scan, lambda k: (h, 0.5, np.concatenate([xs] * (k + 2)), targets[: k + 2]), rtol=1e-12)


def dtype_changes_after_the_first_step(h, xs):
    outs = []
    for t in range(len(xs)):
        outs.append(h * 2)
        h = h + xs[t]                           # float32 + float64 or int64 + float64: float64 from step 1
    return np.sum(np.stack(outs))


def dtype_changes_over_the_step_axis(h, xs):
    outs = []
    for t in range(len(xs)):
        outs.append(h * 2)
        h = h + xs[t]
    return np.mean(np.stack(outs), axis=0)


@pytest.mark.parametrize("fn", [dtype_changes_after_the_first_step, dtype_changes_over_the_step_axis])
@pytest.mark.parametrize("start", [np.float32, np.int64])
@pytest.mark.parametrize("width", [4, 1_000, 20_000])
def test_steps_of_other_dtypes_give_numpys_promoted_result(fn, start, width):
    """np.stack promotes every step to the dtype of all: the result's dtype and type are numpy's."""
    check(fn, lambda k: (np.ones(width, start), np.full((3 + k, width), 0.25)), rtol=1e-6)


def sum_of_scalars_as_array(x):
    outs = []
    for t in range(x.shape[0]):
        outs.append(x[t] * 2.0)
    return np.sum(np.array(outs))


def calls_of_step_reduction_methods(fn, *args):
    """How many times the function runs a method of StepReduction (a call of add about 0.3 us)."""
    import sys

    from astjit.rewrite.step_reduction import StepReduction

    methods = {f.__code__ for f in vars(StepReduction).values() if hasattr(f, "__code__")}
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code in methods:
            calls += 1
    sys.setprofile(count)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    return result, calls


@pytest.mark.parametrize("fn, make", [
    (sum_of_scalars_as_array, lambda: (np.arange(10_000.0),)),
    (mse_scan, lambda: (*rng_args(np.float64, 2_000, 6, 0)[:1], 0.5, *rng_args(np.float64, 2_000, 6, 0)[1:])),
], ids=["scalar steps", "steps of 6 with an operand"])
def test_small_steps_cost_what_the_original_list_costs(fn, make):
    """Steps under 4 KiB cost the original only a list append, less than a Python call accumulating
    them (10,000 scalar steps: plain Python 1.3 ms, accumulated 6.3 ms): after the first step, the
    values go to a list by its own append and the reduction runs at the end as written."""
    jf = jit(fn, rewrites=PUSH)
    args = make()
    got, calls = calls_of_step_reduction_methods(jf, *args)
    assert_values_match(got, fn(*args), rtol=1e-12)
    assert fires(jf) and calls < 10, calls


def summed_steps(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 1.0)
    return np.sum(np.stack(outs), axis=0)


@pytest.mark.parametrize("width", [6, 20_000], ids=["stacked chunk", "a kernel per large step"])
def test_a_sum_of_negative_zeros_is_numpys_positive_zero(width):
    """numpy's sum starts from 0: steps of -0.0 sum to 0.0. The first large step, taken as the total
    itself, kept its -0.0."""
    jf = jit(summed_steps, rewrites=PUSH)
    for steps in (3, 1, 4):
        xs = np.full((steps, width), -0.0)
        xs[:, 1] = [5.0] * steps
        got, want = jf(xs), summed_steps(xs)
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def error_state_raised_between(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 1e200)
    old = np.seterr(over="raise")
    try:
        return np.sum(np.stack(outs) * 1e200)
    finally:
        np.seterr(**old)


def error_state_restored_between(xs):
    old = np.seterr(over="raise")
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 1e100)
    np.seterr(**old)
    return np.sum(np.stack(outs) * 1e300)


def warnings_made_errors_between(xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 1e200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = np.sum(np.stack(outs) * 1e200)
    return total


@pytest.mark.parametrize("fn", [error_state_raised_between, error_state_restored_between,
                                warnings_made_errors_between])
@pytest.mark.parametrize("width", [8, 8192])
def test_must_not_fire_where_the_function_changes_the_error_state(fn, width):
    """The steps would be reduced under the loop's error state, the original reduces under the one
    after it: numpy's FloatingPointError (or the warning made an error) must come where numpy's does."""
    jf = jit(fn, rewrites=PUSH)
    for k in range(3):
        xs = np.random.default_rng(k).standard_normal((3 + k, width))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = fn(xs)
            except (FloatingPointError, RuntimeWarning) as exc:
                with pytest.raises(type(exc)):
                    jf(xs)
                continue
            assert_values_match(jf(xs), want, rtol=1e-12)
    assert not fires(jf)


def reduced_only_when_asked(xs, flag):
    if flag:
        target = xs[0] + 1.0
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    loss = 0.0
    if flag:
        loss = np.sum(np.stack(outs) - target)
    return loss


def reduced_in_a_conditional_expression(xs, flag):
    if flag:
        target = xs[0] + 1.0
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.sum(np.stack(outs) - target) if flag else 0.0


def operand_read_through_an_attribute(xs, flag):
    data = Holder(xs[0] + 1.0)
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.sum(np.stack(outs) - data.target), data.reads


class Holder:
    def __init__(self, target):
        self._target, self.reads = target, 0

    @property
    def target(self):
        self.reads += 1
        return self._target


@pytest.mark.parametrize("fn", [reduced_only_when_asked, reduced_in_a_conditional_expression,
                                operand_read_through_an_attribute])
@pytest.mark.parametrize("width", [8, 20_000])
def test_must_not_fire_where_operands_may_be_unbound_or_read_at_each_step(fn, width):
    """The steps read the operands at each append: an operand the original reads only when the
    reduction runs (it may be unbound, the reduction may not run) or reads once (a property) must
    stay as written."""
    for flag in (False, True):
        check(fn, lambda k, flag=flag: (np.random.default_rng(k).standard_normal((3 + k, width)), flag), fire=False,
              rtol=1e-12)


def step_rebound_by_a_walrus_to_a_view(xs):
    outs = []
    for t in range(xs.shape[0]):
        h = xs[t] * 2.0
        _ = (h := xs[t])
        outs.append(h)
    xs[...] = 0.0
    return np.sum(np.stack(outs))


def step_written_by_a_closure(xs):
    h = None

    def reset():
        h[...] = 0.0
    outs = []
    for t in range(xs.shape[0]):
        h = xs[t] * 2.0
        outs.append(h)
    reset()
    return np.sum(np.stack(outs))


LAST_STEP = None


def zero_the_last_step():
    LAST_STEP[...] = 0.0


def step_held_by_a_global(xs):
    global LAST_STEP
    outs = []
    for t in range(xs.shape[0]):
        LAST_STEP = xs[t] * 2.0
        outs.append(LAST_STEP)
    zero_the_last_step()
    return np.sum(np.stack(outs))


@pytest.mark.parametrize("fn", [step_rebound_by_a_walrus_to_a_view, step_written_by_a_closure,
                                step_held_by_a_global])
@pytest.mark.parametrize("width", [8, 9000])
def test_must_not_fire_where_a_step_may_change_after_it_is_appended(fn, width):
    check(fn, lambda k: (np.random.default_rng(k).standard_normal((3 + k, width)),), fire=False, rtol=1e-12)


ACTIVATION = np.abs


def reduced_through_a_global_function(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.sum(ACTIVATION(np.stack(outs) - target))


@pytest.mark.parametrize("width", [8, 9000])
def test_a_function_the_module_may_rebind_is_not_taken_into_the_loop(width):
    """The rewrite is made once: ``ACTIVATION`` rebound after it must still be the one reducing."""
    global ACTIVATION
    jf = jit(reduced_through_a_global_function, rewrites=PUSH)
    try:
        for k, activation in enumerate((np.abs, np.square, np.abs, np.negative)):
            ACTIVATION = activation
            xs, target = np.random.default_rng(k).standard_normal((3 + k, width)), np.ones(width)
            assert_values_match(jf(xs, target), reduced_through_a_global_function(xs, target), rtol=1e-12)
    finally:
        ACTIVATION = np.abs
    assert not fires(jf)


def mean_against_a_target(xs, target):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(xs[t] * 2.0)
    return np.mean((np.stack(outs) - target) ** 2)


def sum_of_masked_steps(xs, mask):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(np.ma.masked_array(xs[t] * 2.0, mask=mask))
    return np.sum(np.stack(outs))


@pytest.mark.parametrize("width", [64, 3000, 20_000])
def test_masked_operands_and_steps_keep_numpys_result(width):
    """A masked target's mean counts its unmasked elements; np.stack of masked steps drops their masks:
    the steps' totals could tell neither (a wrong mean, a sum skipping masked elements)."""
    rng = np.random.default_rng(width)
    mask = rng.random(width) > 0.5
    jm, js = jit(mean_against_a_target, rewrites=PUSH), jit(sum_of_masked_steps, rewrites=PUSH)
    for k in range(3):
        xs = rng.standard_normal((4 + k, width))
        target = np.ma.masked_array(rng.standard_normal(width), mask=mask)
        np.testing.assert_allclose(jm(xs, target), mean_against_a_target(xs, target), rtol=1e-12)
        np.testing.assert_allclose(js(xs, mask), sum_of_masked_steps(xs, mask), rtol=1e-12)


def against_a_global_defined_later(xs, log):
    outs = []
    for t in range(xs.shape[0]):
        log.append(t)
        outs.append(xs[t] * 2.0)
    return np.sum(np.stack(outs) - LATER_TARGET)  # noqa: F821


def steps_of_dtypes_that_do_not_stack(xs, log):
    outs = []
    for t in range(xs.shape[0]):
        log.append(t)
        outs.append(xs[t] * 2.0 if t < 2 else np.full(xs.shape[1], np.datetime64("2026-01-01")))
    return np.sum(np.stack(outs))


@pytest.mark.parametrize("fn", [against_a_global_defined_later, steps_of_dtypes_that_do_not_stack])
def test_errors_come_after_the_loop_as_the_originals_do(fn):
    """An operand that is an undefined global (NameError) and steps np.stack cannot promote
    (DTypePromotionError) raise where the original raises, after every step of the loop ran."""
    for k in range(2):
        xs = np.random.default_rng(k).standard_normal((5, 9000))
        plain_log, jit_log = [], []
        with pytest.raises(Exception) as plain:
            fn(xs, plain_log)
        with pytest.raises(type(plain.value)):
            jit(fn, rewrites=PUSH)(xs, jit_log)
        assert jit_log == plain_log == list(range(5))
