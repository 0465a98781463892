"""Minimal repros of what the generated-program campaign found, one test per class of mismatch.

Each function is called at least three times on one jitted function, with other values (and often
other shapes) in between, because most of these bugs only show once a specialization is cached. The
docstrings say what numpy gives and what the jitted function gave when the campaign found it.
"""

import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
from differential import assert_same_as_numpy

import astjit
from astjit import jit

from .compare import Tolerance, differences, zero_sign_defined

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def copies(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def check_calls(fn, calls, backend="tvm", exact=True, before_each=None):
    """assert_same_as_numpy for each argument tuple in turn, on one jitted function; with ``exact``, the
    results must also be equal bit for bit (the sign of zero included) and have numpy's memory order.
    ``before_each(i)`` runs before call ``i`` (to change module attributes)."""
    jitted = jit(fn, backend=backend)
    for i, args in enumerate(calls):
        if before_each is not None:
            before_each(i)
        assert_same_as_numpy(fn, *args, jitted=jitted)
        plain_args, jit_args = copies(args), copies(args)
        try:
            want = fn(*plain_args)
        except Exception as exc:      # same exception: checked above; its effects before it, here
            with pytest.raises(type(exc)):
                jitted(*jit_args)
            found = differences(jit_args, plain_args, Tolerance(exact), "arguments after the exception")
            assert not found, f"call {i}: {found}"
            continue
        found = differences(jitted(*jit_args), want, Tolerance(exact))
        assert not found, f"call {i}: {found}"
    return jitted


class settings:
    """Read by the functions below; the tests change the attributes between calls."""
    SCALE = -2.66
    LIMIT = 3
    AXIS = 0
    DTYPE = np.uint32


cfg = types.ModuleType("cfg")
cfg.FLAG, cfg.OFFSET = True, 100


def set_attributes(owner, **values_per_call):
    """A ``before_each`` that gives ``owner``'s attributes their value for call i."""
    def before_each(i):
        for name, per_call in values_per_call.items():
            setattr(owner, name, per_call[i])
    return before_each


# -- Python values read at each call, never compiled in --------------------------------------------
def return_module_attribute(b):
    v = cfg.FLAG
    c = b.astype(np.int32)
    return v, c


def test_module_attribute_returned_is_read_at_each_call():
    """cfg.FLAG True, then False: numpy returns False; the cached block returned True (seed 491)."""
    check_calls(return_module_attribute, [(np.array(3),), (np.array(4),), (np.array(5),)],
                before_each=set_attributes(cfg, FLAG=[True, False, True]))


def negate_class_attribute_plus(b):
    return (-(settings.SCALE + b)).copy()


def test_class_attribute_in_arithmetic_is_read_at_each_call():
    """settings.SCALE -2.66, then -2.25: the kernel kept -2.66 (2.658 != numpy's 2.248; seed 16)."""
    check_calls(negate_class_attribute_plus, [(np.array(-0.0),), (np.array(0.0015),), (np.array(1.0),)],
                before_each=set_attributes(settings, SCALE=[-2.66, -2.25, 0.5]))


def fill_from_attribute_bound(b):
    b[settings.LIMIT:2] = -1


def test_slice_bound_from_attribute_is_read_at_each_call():
    """settings.LIMIT 3, then 0: numpy fills b[0:2]; the cached block kept b[3:2] (empty; seed 502387)."""
    check_calls(fill_from_attribute_bound, [(np.array([-0.0, 0.5]),), (np.arange(5.0),), (np.arange(4.0),)],
                before_each=set_attributes(settings, LIMIT=[3, 0, 1]))


def mean_over_attribute_axis(a):
    return np.mean(a, axis=settings.AXIS)


def test_axis_from_attribute_is_read_at_each_call():
    """settings.AXIS 0, then 1 on a 1-d array: numpy raises AxisError; the cached block returned the
    mean over axis 0 (seed 1326); on a 2-d array it reduced the wrong axis (seed 2821)."""
    check_calls(mean_over_attribute_axis, [(np.arange(6.0).reshape(2, 3),), (np.arange(6.0).reshape(2, 3),),
                                           (np.arange(5.0),), (np.arange(6.0).reshape(3, 2),)],
                before_each=set_attributes(settings, AXIS=[0, 1, 1, -1]))


def product_as_attribute_dtype(a):
    return np.prod((np.logical_xor(a, a) | 7).astype(settings.DTYPE), axis=-1)


def test_dtype_from_attribute_is_read_at_each_call():
    """settings.DTYPE uint32, then uint64: the result stayed int64 where numpy's is uint64 (seed 5310)."""
    check_calls(product_as_attribute_dtype, [(np.ones((2, 3), bool),), (np.ones((2, 3), bool),),
                                             (np.zeros((2, 3), bool),)],
                before_each=set_attributes(settings, DTYPE=[np.uint32, np.uint64, np.int8]))


def scale_by_attribute_int(a):
    return False / np.expand_dims(cfg.OFFSET * a, -3)


def test_out_of_range_python_int_from_attribute_raises():
    """cfg.OFFSET -3, then 2**64: numpy raises OverflowError; the cached block returned (seed 123)."""
    check_calls(scale_by_attribute_int, [(np.array([[True, False, False]]),), (np.array([[True, True, False]]),),
                                         (np.array([[False, True, True]]),)],
                before_each=set_attributes(cfg, OFFSET=[-3, 2**64, 7]))


def floor_divide_element_by_attribute(a):
    a[-3] //= cfg.OFFSET


def test_inplace_floor_division_by_attribute():
    """cfg.OFFSET 100, then -3: numpy's a[-3] is -10923; the cached block divided by 100 (327; seed 89)."""
    check_calls(floor_divide_element_by_attribute,
                [(np.array([-1, -7, 0, 2], np.int16),), (np.array([-32768, 32767, 3, -32767], np.int16),),
                 (np.array([5, 9, 11, 13], np.int16),)],
                before_each=set_attributes(cfg, OFFSET=[100, -3, 4]))


def mean_over_tuple_axes(b, t):
    v = np.full_like(np.logical_and(b, b), 0.5).T
    return np.mean(v, axis=t)


def test_axes_passed_as_a_tuple_are_read_at_each_call():
    """t=(-1,), then (3,) on a 1-d array: numpy raises AxisError; the cached block returned (seed 0)."""
    b = np.array([2, 4, 0], np.uint64)
    check_calls(mean_over_tuple_axes, [(b, (-1,)), (b, (3,)), (b, (0,)), (b, ())])


def return_tuple_argument(a, x, t):
    x *= cfg.OFFSET
    return t, np.min(np.where(a < a, x, a), axis=0)


def test_tuple_argument_returned_is_the_callers():
    """t=(-1, 4), then (4,): the jitted function returned the first call's tuple (seed 93655)."""
    a = np.array([0.5, -1.0, 2.0, 3.0])
    check_calls(return_tuple_argument, [(a, 1.5, (-1, 4)), (a, -0.0, (4,)), (a, 2.0, ())],
                before_each=set_attributes(cfg, OFFSET=[4, 2**31, 3]))


def astype_dtype_argument(a, dt):
    return a.astype(dt)


def test_dtype_passed_as_a_value_is_read_at_each_call():
    """dt=np.int64, then np.bool_: the result stayed int64 (seed 112); also with shifted ints (287)."""
    a = np.array([[0.5, -2.0, 0.0]], np.float32)
    check_calls(astype_dtype_argument, [(a, np.int64), (a, np.bool_), (a, np.float64), (a, np.dtype("uint8"))])


def cos_of_full_with_tuple_shape(t, dt):
    return np.cos(np.full(t, 0.5, dt))


def test_shape_passed_as_a_tuple_is_read_at_each_call():
    """t=() then (1, 1): numpy returns a (1, 1) float16 array (cos of bool); the cached block returned a
    float16 scalar (seed 160)."""
    check_calls(cos_of_full_with_tuple_shape, [((), np.bool_), ((1, 1), np.bool_), ((2,), np.int64)],
                exact=False)


# -- numpy's memory order --------------------------------------------------------------------------
def broadcast_or_then_abs(a, c):
    return abs(np.logical_or(a, 300) | np.expand_dims(c, -1))


def test_broadcast_result_has_numpys_strides():
    """With a Fortran-ordered ``a``, numpy's result is neither C- nor F-contiguous; the kernel's was C
    (seed 1415)."""
    a = np.asfortranarray(np.array([[[6, -9], [127, 126]]], np.int8))
    c = np.array([[[1, 2], [-5, -5]]], np.int16)
    check_calls(broadcast_or_then_abs, [(a, c), (np.asfortranarray(a * 0), c), (a, c * 2)])


def transposed_where(a, x):
    return np.where(np.where(a > -129, a, x) < a + a, a, a - 129).T & (2**63 - 1)


def test_transposed_result_is_fortran_ordered():
    """numpy's result is F-ordered (a transposed elementwise result); the kernel's was C (seed 304)."""
    a = np.arange(-7, 8).reshape(5, 3)
    check_calls(transposed_where, [(a, -1.88), (a * 2, 0.5), (a[:, ::-1].copy(), 3.0)])


# -- found on the code of this campaign's own session ------------------------------------------------
def constant_fill_then_max(a):
    return np.full(a.shape, 300.7, np.int8).max()


def test_out_of_range_float_fill_then_reduction():
    """numpy converts 300.7 to int8 as 44 (and -3.5 to uint8 as 253); the fused kernel gave -128 (0;
    seed 18)."""
    check_calls(constant_fill_then_max, [(np.zeros(3),), (np.ones(5),), (np.arange(4.0).reshape(2, 2),)])


def update_out_of_range_row_in_branch(a, b):
    if np.expand_dims(a, 0).sum() == 0:
        b[2, :-1] //= 1


def test_out_of_range_update_in_a_branch_raises():
    """After two calls where b[2, :-1] is empty, b of 2 rows: numpy raises IndexError; the jitted function
    returned None (seed 556)."""
    check_calls(update_out_of_range_row_in_branch,
                [(np.array(False), np.ones((5, 1), np.int8)), (np.array(False), np.ones((5, 1), np.int8)),
                 (np.array(False), np.ones((2, 3), np.int8)), (np.array(False), np.ones((3, 3), np.int8))])


def errstate_raise_inside(a, b):
    with np.errstate(invalid="raise"):
        c = a * b
    return c


def test_errstate_raise_inside_the_function():
    """inf * 0 under np.errstate(invalid="raise") written in the function: numpy raises
    FloatingPointError; the compiled block returned nan (seed 367)."""
    check_calls(errstate_raise_inside, [(np.ones(3), np.ones(3)), (np.array([np.inf, 1.0, 2.0]), np.zeros(3)),
                                        (np.array([np.inf]), np.zeros(1)), (np.ones(2), np.zeros(2))])


def update_then_read_maybe_unbound(a, b, n):
    for i in range(n):
        v = b
    a[0] = 7.0
    w = v + 1
    return w


def test_effects_before_an_unbound_local_happen():
    """With n=0, numpy sets a[0] = 7 and then raises UnboundLocalError for v; the jitted function
    raised first (the block reads v on entry), so a[0] stayed 1.0 (seed 3771)."""
    check_calls(update_then_read_maybe_unbound, [(np.ones(2), np.ones(2), 1), (np.ones(2), np.ones(2), 0),
                                                 (np.ones(2), np.ones(2), 2), (np.ones(3), np.ones(3), 0)])


def inplace_cast_error_then_maybe_unbound(a, b, n):
    for i in range(n):
        v = b
    a *= 1.5
    return np.sign(v)


def test_numpy_error_comes_before_an_unbound_local():
    """int64 a, n=0: numpy raises UFuncTypeError at a *= 1.5; the jitted function raised
    UnboundLocalError for v (seed 3771)."""
    check_calls(inplace_cast_error_then_maybe_unbound,
                [(np.ones(2, np.int64), np.ones(2), 1), (np.ones(2, np.int64), np.ones(2), 0),
                 (np.ones(2, np.int64), np.ones(2), 2), (np.ones(3, np.int64), np.ones(3), 0)])


def broadcast_error_then_maybe_unbound(a, b, n):
    for i in range(n):
        for j in range(1):
            v = b
    a[1:] = b.T
    return v, np.minimum(v, 1)


def test_broadcast_error_comes_before_an_unbound_local():
    """n=0 and b.T not broadcastable into a[1:]: numpy raises ValueError at ``a[1:] = b.T``; the jitted
    function raised UnboundLocalError for v (the block read v when it started; seed 47491518869)."""
    check_calls(broadcast_error_then_maybe_unbound,
                [(np.zeros((3, 2)), np.ones((2, 1)), 1), (np.zeros((3, 2)), np.ones((3, 1)), 0),
                 (np.zeros((3, 2)), np.ones((2, 1)), 0), (np.zeros((3, 2)), np.ones((3, 1)), 2),
                 (np.zeros((3, 2)), np.ones((2, 1)), 3)])


def maybe_unbound_in_loop(a, n):
    for i in range(n):
        if i == 0:
            w = a * 2
        a = a + w          # w may be unbound here as far as the block knows: passed through a check
    return a


def test_checked_live_in_still_runs_compiled():
    """A live-in that may be unbound is checked before the Fragment call; when bound, it reaches the
    compiled block as before (and an unbound one raises at its own line, after the loop)."""
    jitted = check_calls(maybe_unbound_in_loop, [(np.ones(3), 3), (np.ones(3), 0), (np.ones(4), 2)])
    reads_w = [frag for frag in jitted.fragments if "w" in frag.live_in]
    assert reads_w and {e.mode for frag in reads_w for e in frag.entries} == {"tvm"}


# -- found on 7cdf48b by the 10,000-program campaign (seed 7) -----------------------------------------
def compare_signed_with_unsigned(a, b):
    return b <= a


def test_int64_compared_with_uint64():
    """b int64 [3, -1] <= a uint64 [2**64 - 1, 1]: numpy [True, True]; the kernel [False, True], as if
    2**64 - 1 were -1 (seeds 6862: ``b[None] -= b <= a``, 7212: ``x ** (a < b)``)."""
    check_calls(compare_signed_with_unsigned,
                [(np.array([2**64 - 1, 1], np.uint64), np.array([3, -1])),
                 (np.array([5, 2**63], np.uint64), np.array([-1, 2**62])),
                 (np.array([0, 2**64 - 2], np.uint64), np.array([0, -2**63]))])


def max_of_full_like(b, k):
    return np.full_like(b, k * 2).max()


def full_then_add(b, n):
    return np.full(b.shape, n, np.uint16) + b


def test_out_of_range_python_int_fill_raises():
    """np.full_like(int16 array, 4294967294): numpy raises OverflowError; the kernel returned -2 (seed
    2318215054366); np.full(s, -1, np.uint16) + b returned 65536.0 (seed 8293369)."""
    b = np.ones(3, np.int16)
    check_calls(max_of_full_like, [(b, 3), (b, 2**31 - 1), (b, -5), (b, 2**40)])
    check_calls(full_then_add, [(np.ones(2), 3), (np.ones(2), -1), (np.ones(3), 70000), (np.ones(2), 7)])


def where_infinity_as_int(a):
    return np.where(a < 0, a, -np.inf).astype(np.int32)


def maximum_of_infinity_as_uint8(c, b):
    return np.maximum(np.where(c <= b, b, np.inf), True).astype(np.uint8)


def test_infinity_from_a_where_cast_to_integers():
    """Integer ``a`` and -inf in np.where, cast to int32: numpy gives -2147483648 where -inf was chosen;
    the kernel gave ``a``'s value (1; seed 9579791761). Cast to uint8 after np.maximum: numpy 0, the
    kernel 1 (seed 3352)."""
    check_calls(where_infinity_as_int, [(np.array([1, -3], np.int16),), (np.array(1, np.int16),),
                                        (np.array([-1, 2, 3], np.int64),)])
    check_calls(maximum_of_infinity_as_uint8, [(np.array([2], np.uint64), np.array([-2147483647], np.int32)),
                                               (np.array([1], np.uint64), np.array([3], np.int32)),
                                               (np.array([9, 0], np.uint64), np.array([-5, 5], np.int32))])


def integer_times_isinf(c):
    return c * np.isinf(c).astype(np.float64)


def test_negative_integer_times_zero_is_negative_zero():
    """int64 [-1, 5] * isinf(...) (all 0.0): numpy [-0.0, 0.0]; the kernel [0.0, 0.0] (seed 298420)."""
    check_calls(integer_times_isinf, [(np.array([-1, 5]),), (np.array([3, -2, 0], np.int32),),
                                      (np.array([2**64 - 1, 5], np.uint64).astype(np.int32),)])


def clip_with_bounds_crossed(v, k):
    return np.clip(v, np.inf, k)


def test_clip_with_lower_bound_above_upper_bound():
    """np.clip(int8 array, np.inf, 255): numpy gives inf (its clip is max(min(a, hi), lo)); the kernel
    gave 255 (and np.prod of it 1.79e19 instead of inf; seed 117430)."""
    check_calls(clip_with_bounds_crossed, [(np.array([1, 2], np.int8), 255), (np.zeros(3, np.int8), 7),
                                           (np.array([-1], np.int8), -3)])


def product_stored_into_integers(b):
    v = np.zeros((2, 3), np.int32)
    v[0] = np.prod(b, axis=-1)
    return v


def test_float_product_overflows_in_numpy_order():
    """float32 prod([3e38, 3e38, 0]): numpy multiplies in float32, inf * 0 = nan, and ``v[0] = nan``
    raises ValueError; the kernel multiplied in float64 (0) and stored 0 (seed 27480951928). float64
    [1e300, 1e-300] * 1000: numpy 1.0; the kernel's split reduction made inf * 0 = nan."""
    check_calls(product_stored_into_integers, [(np.array([1, 2.5, 3], np.float32),),
                                               (np.array([3e38, 3e38, 0], np.float32),),
                                               (np.array([1e30, 1e30, 1e-30], np.float32),),
                                               (np.array([1e300, 1e-300] * 1000),)])


def reductions_of_transposed(a):
    return (np.mean(a.transpose(), axis=-1), a.transpose(1, 2, 0).max(axis=1),
            (a.T * 2).sum(axis=0, keepdims=True).sum(axis=0))


def test_reduction_of_a_transposed_view_keeps_numpy_memory_order():
    """np.mean(a.transpose(), axis=-1) of a C-ordered (1, 2, 4) array: numpy's result is F-contiguous
    (a reduction keeps its operand's memory order over the axes it keeps); the kernel wrote it in C
    order (seed 1649)."""
    check_calls(reductions_of_transposed, [(np.arange(24.0).reshape(2, 3, 4),), (np.ones((1, 2, 4)),),
                                           (np.arange(12, dtype=np.float32).reshape(3, 2, 2),),
                                           (np.arange(24, dtype=np.int32).reshape(2, 3, 4),)])


ABORTING = """
import numpy as np
import astjit
from astjit import jit

def bool_max_next_to_float(a, b):
    return np.minimum(b.max(), a)

jitted = jit(bool_max_next_to_float, backend="tvm")
for a in (np.array([-5.0]), np.array([2.0, -1.0, 3.0]), np.array([0.5])):
    b = a > 0
    got, want = jitted(a, b), bool_max_next_to_float(a, b)
    assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
print("ok")
"""


def test_one_element_bool_reduction_next_to_a_float_array(tmp_path):
    """``np.minimum(b.max(), a)`` with one-element arrays killed the process: "terminate called after
    throwing an instance of 'tvm::ffi::Error'" (seeds 3058657, 1112, 5461). Run in a subprocess."""
    script = tmp_path / "bool_max_next_to_float.py"
    script.write_text(textwrap.dedent(ABORTING))
    root = os.path.dirname(os.path.dirname(os.path.abspath(astjit.__file__)))     # this astjit
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=root))
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def test_sign_of_zero_from_fmax_and_fmin_is_not_compared():
    """``np.fmax(uint16 [0, 4, 1], -0.0)``: numpy [0., 4., 1.], the kernel [-0., 4., 1.]; ``np.fmax(0-d 0,
    -0.0)``: numpy 0.0, the kernel -0.0 (seeds 11741882832232, 34287199). numpy's own sign on such a tie
    depends on the element's position and the array's length (``np.fmax(np.zeros(3), -0.0)`` is
    ``[0., -0., -0.]`` on x86-64), so the campaign does not compare it in programs calling np.fmax or
    np.fmin; it still compares the values, and the sign of zero everywhere else."""
    def program(source):
        return types.SimpleNamespace(function=source)

    assert not zero_sign_defined(program("def f(a, x):\n    return np.fmax(a, x)\n"))
    assert not zero_sign_defined(program("def f(a):\n    return np.fmin(a, -0.0) + 1\n"))
    assert zero_sign_defined(program("def f(a, x):\n    return np.maximum(a, x)\n"))
    free = Tolerance(zero_sign=False)
    assert differences(np.array([-0.0, 4.0]), np.array([0.0, 4.0]), free) == []
    assert differences(np.array([-0.0, 4.0]), np.array([0.0, 4.0]), Tolerance()) != []
    assert differences(np.array([-0.0, 5.0]), np.array([0.0, 4.0]), free) != []
    assert differences(np.array([np.nan]), np.array([0.0]), free) != []


@pytest.mark.parametrize("seed", [
    4480,     # a 0-d uint64 above 2**63 beside a read-only array: TVM's TypeError escaped the retry on copies
    97854,    # np.fmax(b, -0.0) then a division: the infinity's sign follows numpy's SIMD-dependent zero
])
def test_campaign_program_replays_clean(seed):
    from .compare import run_program
    from .programs import make_program

    outcome = run_program(make_program(seed))
    assert not [f for f in outcome.findings if f.kind != "soft"], [f.report() for f in outcome.findings]


def ones_times_sum_of_exp(x):
    s = np.sum(np.exp(x))
    d = np.reshape(np.ones_like(s), (1,)) * np.ones_like(x)
    return np.sum(d * 2.0, axis=()) * np.exp(x)


def test_constant_operand_read_twice_in_a_select_compiles():
    """A constant (``np.ones_like``) reaching a rule that reads its operand in a select's condition and
    a branch: TVM bounded the constant's shielding Let as the range [1, 2) at each visit and refused the
    second binding (InternalError), so the block ran on numpy. The constant is now opaque to that
    analysis too; the block compiles and gives numpy's values."""
    jitted = jit(ones_times_sum_of_exp, backend="tvm")
    for n in (3, 5, 3):
        x = np.random.default_rng(n).standard_normal(n)
        assert_same_as_numpy(ones_times_sum_of_exp, x, jitted=jitted)
    for special in ([np.nan, 1.0, -0.0], [np.inf, -0.0, 2.0], [-np.inf, 0.0, -1.0]):
        assert_same_as_numpy(ones_times_sum_of_exp, np.array(special), jitted=jitted)
    assert not [r for r in jitted.records() if "could not compile" in r.message]
