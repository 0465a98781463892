"""Python values that reach compiled code change between calls: every such value is either part of
what a specialization is guarded on or a runtime argument of the kernel, never a stale constant.
Each function is called several times with other values and compared with plain numpy."""

import threading
import types
import warnings

import numpy as np
import pytest
import settings_module as settings
from differential import assert_same_as_numpy

from astjit import explain, jit

WINDOW = (0, 2)
PICK = slice(1, 3)
LABEL = "sum"


def and_compare(data, result, pos, idx):
    result[pos] &= data[idx] <= data[pos]
    return result


def test_tuple_positions_change_between_calls():
    jf = jit(and_compare)
    x = np.arange(24.0).reshape(2, 3, 4)
    for pos, idx in [((0, 0, 0), (1, 1, 1)), ((1, 0, 0), (1, 1, 1)), ((1, 2, 3), (0, 0, 0)), ((0, 1, 2), (1, 2, 3))]:
        assert_same_as_numpy(and_compare, x, np.ones(x.shape, bool), pos, idx, jitted=jf)


def take_slice(a, s):
    return a[s] * 2.0


def test_slice_argument():
    jf = jit(take_slice)
    a = np.arange(10.0)
    for s in (slice(0, 3), slice(2, 5), slice(1, 9, 2), slice(None, None, -1), slice(4, 7)):
        assert_same_as_numpy(take_slice, a, s, jitted=jf)


def test_slice_bounds_of_another_type_are_another_slice():
    """``slice(0.0, 3) == slice(0, 3)``, but only the int one indexes: numpy's TypeError, not the
    specialization made for ``slice(0, 3)``."""
    jf = jit(take_slice)
    a = np.arange(10.0)
    for s in (slice(0, 3), slice(0.0, 3), slice(0, 3.0), slice(0, 3), slice(np.int64(0), 3), slice(True, 3)):
        assert_same_as_numpy(take_slice, a, s, jitted=jf)


def unpack_bounds(a, bounds):
    lo, hi = bounds
    return a[lo:hi] + 1.0


def test_tuple_unpacked_into_bounds():
    jf = jit(unpack_bounds)
    a = np.arange(12.0)
    for bounds in ((0, 3), (2, 5), (1, 10), (5, 8)):
        assert_same_as_numpy(unpack_bounds, a, bounds, jitted=jf)


def cast_to(a, t):
    return (a * 3).astype(t)


def test_dtype_passed_as_value():
    jf = jit(cast_to)
    a = np.linspace(-2, 2, 9)
    for t in (np.int32, np.float32, np.int64, np.dtype("uint8"), bool, "float64"):
        assert_same_as_numpy(cast_to, a, t, jitted=jf)


def reshape_and_sum(a, shape, axis):
    return a.reshape(shape).sum(axis=axis) * 1.5


def test_shapes_and_axes_as_tuples():
    jf = jit(reshape_and_sum)
    a = np.arange(24.0)
    for shape, axis in [((4, 6), (0,)), ((6, 4), (1,)), ((2, 3, 4), (0, 2)), ((4, 6), (0, 1)), ((2, 12), 1)]:
        assert_same_as_numpy(reshape_and_sum, a, shape, axis, jitted=jf)


def built_slice(a, i, j):
    s = slice(i, j)
    return a[s] - 1.0


def test_slice_built_in_the_function():
    jf = jit(built_slice)
    a = np.arange(10.0)
    for i, j in ((0, 2), (1, 4), (3, 9), (0, 2)):
        assert_same_as_numpy(built_slice, a, i, j, jitted=jf)


def slices_in_a_loop(a, pieces):
    total = np.zeros(2)
    for s in pieces:
        total = total + a[s] * 2.0
    return total


def test_slices_from_a_list_in_a_loop():
    jf = jit(slices_in_a_loop)
    a = np.arange(10.0)
    for pieces in ([slice(0, 2), slice(2, 4), slice(8, 10)], [slice(1, 3), slice(5, 7)]):
        assert_same_as_numpy(slices_in_a_loop, a, pieces, jitted=jf)


def default_tuple(a, window=(1, 3)):
    return a[window[0]:window[1]] * 2.0


def test_default_tuple_argument_and_explicit_values():
    jf = jit(default_tuple)
    a = np.arange(8.0)
    assert_same_as_numpy(default_tuple, a, jitted=jf)
    assert_same_as_numpy(default_tuple, a, (0, 5), jitted=jf)
    assert_same_as_numpy(default_tuple, a, jitted=jf)
    assert_same_as_numpy(default_tuple, a, (2, 4), jitted=jf)


def test_defaults_changed_after_the_first_call():
    def scaled(a, k=2.0, window=(0, 2)):
        return a[window[0]:window[1]] * k

    jf = jit(scaled)
    a = np.arange(6.0)
    assert_same_as_numpy(scaled, a, jitted=jf)
    for defaults in ((3.0, (1, 4)), (-1.0, (0, 6))):
        jf.__defaults__ = defaults
        scaled.__defaults__ = defaults
        assert_same_as_numpy(scaled, a, jitted=jf)


def global_tuple_slice_string(a):
    lo, hi = WINDOW
    picked = a[PICK] * 2.0
    window = a[lo:hi] + 1.0
    if LABEL == "sum":
        return picked.sum() + window.sum()
    return picked.max() + window.max()


def test_rebound_global_tuple_slice_and_string():
    global WINDOW, PICK, LABEL
    jf = jit(global_tuple_slice_string)
    a = np.arange(10.0)
    saved = WINDOW, PICK, LABEL
    try:
        for WINDOW, PICK, LABEL in [((0, 2), slice(1, 3), "sum"), ((1, 5), slice(0, 8, 2), "max"),
                                    ((3, 4), slice(None), "sum")]:
            assert_same_as_numpy(global_tuple_slice_string, a, jitted=jf)
    finally:
        WINDOW, PICK, LABEL = saved


def module_attributes(a):
    y = settings.FUNC(a) * settings.SCALE + settings.Config.offset
    return y[settings.PICK], y.sum(axis=settings.Config.axis)


def test_module_and_class_attributes_change_between_calls():
    jf = jit(module_attributes)
    a = np.linspace(0.1, 1.0, 6).reshape(2, 3)
    saved = settings.SCALE, settings.FUNC, settings.PICK, settings.Config.offset, settings.Config.axis
    try:
        assert_same_as_numpy(module_attributes, a, jitted=jf)
        settings.SCALE = 5.0
        assert_same_as_numpy(module_attributes, a, jitted=jf)
        settings.FUNC = np.sin
        settings.Config.offset = -2.0
        assert_same_as_numpy(module_attributes, a, jitted=jf)
        settings.PICK = slice(1, 2)
        settings.Config.axis = 1
        assert_same_as_numpy(module_attributes, a, jitted=jf)
    finally:
        settings.SCALE, settings.FUNC, settings.PICK, settings.Config.offset, settings.Config.axis = saved


def test_threads_see_their_own_values():
    jf = jit(and_compare)
    x = np.arange(24.0).reshape(2, 3, 4)
    positions = [(i % 2, (i // 2) % 3, i % 4) for i in range(24)]
    wrong = []

    def worker(k):
        for n in range(30):
            pos = positions[(k * 7 + n) % 24]
            idx = positions[(k * 5 + 3 * n) % 24]
            want = and_compare(x, np.ones(x.shape, bool), pos, idx)
            got = jf(x, np.ones(x.shape, bool), pos, idx)
            if not np.array_equal(got, want):
                wrong.append((pos, idx))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


@pytest.mark.parametrize("value", [1, 2, 3])
def test_scalar_attribute_of_an_object_argument(value):
    class Holder:
        def __eq__(self, other):
            return self.k == other.k

    def scaled_by_attribute(h, a):
        return a * h.k + 1.0

    jf = jit(scaled_by_attribute)
    h = Holder()
    for k in (value, value * 2.5, -value):
        h.k = k
        assert_same_as_numpy(scaled_by_attribute, h, np.arange(4.0), jitted=jf)


# a global (and a closure variable) that a later call finds deleted: Python raises NameError only where
# a statement reads it, after the statements before it have run
SOMETIMES_SCALE = 2.0


def loop_reading_a_global_in_one_branch(a, flag):
    s = 0.0
    for i in range(a.shape[0]):
        if flag:
            s += a[i] * SOMETIMES_SCALE
        else:
            s += a[i]
    return s


def block_writing_before_reading_a_global(a):
    a[0] = 7.0
    return a * SOMETIMES_SCALE + 1.0


def _outcome(fn, *args):
    a = np.arange(1000.0)
    try:
        result = ("returned", fn(a, *args))
    except NameError as exc:
        result = ("raised", str(exc))
    return result, a


@pytest.mark.parametrize("backend", [None, "tvm"])
@pytest.mark.parametrize("fn, flags", [(loop_reading_a_global_in_one_branch, ((True,), (False,))),
                                       (block_writing_before_reading_a_global, ((),))],
                         ids=["loop, branch", "block, write first"])
def test_a_deleted_global_raises_where_python_reads_it(fn, flags, backend):
    """Each call read the global before the Fragment call: NameError where no taken branch reads it (a
    loop summing without the scale), or before the block's own earlier write into ``a``."""
    jf = jit(fn, backend=backend)
    try:
        for scale in (2.0, -0.5, 3.0):
            globals()["SOMETIMES_SCALE"] = scale
            for args in flags:
                (kind, got), a = _outcome(jf, *args)
                assert kind == "returned" and np.array_equal(got, fn(np.arange(1000.0), *args))
        del globals()["SOMETIMES_SCALE"]
        for args in flags * 2:
            (got, a), (want, b) = _outcome(jf, *args), _outcome(fn, *args)
            assert got[0] == want[0] and np.array_equal(got[1], want[1]) and np.array_equal(a, b)
    finally:
        globals()["SOMETIMES_SCALE"] = 2.0
    for args in flags:
        (kind, got), a = _outcome(jf, *args)
        assert kind == "returned" and np.array_equal(got, fn(np.arange(1000.0), *args))


def closure_over_a_cell_that_is_emptied():
    weights = np.full(1000, 3.0)

    def weighted(a, flag):
        a[0] = 9.0
        s = 0.0
        for i in range(a.shape[0]):
            if flag:
                s += a[i] * weights[i]
            else:
                s += a[i]
        return s

    def empty():
        nonlocal weights
        del weights

    return weighted, empty


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_an_emptied_closure_cell_raises_where_python_reads_it(backend):
    fn, empty = closure_over_a_cell_that_is_emptied()
    jf = jit(fn, backend=backend)
    for flag in (True, False, True):
        assert _outcome(jf, flag)[0] == _outcome(fn, flag)[0]
    empty()
    for flag in (False, True, False):
        (got, a), (want, b) = _outcome(jf, flag), _outcome(fn, flag)
        assert got[0] == want[0] and np.array_equal(got[1], want[1]) and np.array_equal(a, b)


ACCUMULATED = np.zeros(1000)


def accumulate_into_a_global(a):
    ACCUMULATED[:] = ACCUMULATED + a
    return ACCUMULATED


def closure_accumulating_into_its_cell():
    box = np.zeros(1000)

    def accumulate(a):
        box[:] = box + a
        return box

    def reset(n):
        nonlocal box
        box = np.zeros(n)

    return accumulate, reset


def test_a_measured_block_writes_into_a_global_or_a_cell_once():
    """A block's first call is timed against its Python on copies of what it writes: the Python read
    the global (or the cell) itself and added ``a`` into the real array at each timed run (6.0, not
    1.0, after the first call)."""
    closure, reset = closure_accumulating_into_its_cell()
    for fn, fresh in ((accumulate_into_a_global, lambda n: globals().__setitem__("ACCUMULATED", np.zeros(n))),
                      (closure, reset)):
        jf = jit(fn)
        for n in (1000, 1000, 1200, 3000):     # a new shape is a new specialization, timed again
            a = np.linspace(0.5, 2.0, n)
            fresh(n)
            want = fn(a).copy()
            fresh(n)
            got = jf(a)
            assert np.array_equal(got, want)
    globals()["ACCUMULATED"] = np.zeros(1000)


class Rebound:
    FUNC = np.sqrt
    DTYPE = np.float64


def rebinds_a_class_attribute_then_calls_it(x):
    y = Rebound.FUNC(x) * 2.0 + 1.0
    Rebound.FUNC = np.negative
    z = Rebound.FUNC(x) * 2.0 + 1.0
    return y, z


def rebinds_a_dtype_attribute_then_casts(x):
    y = (x * 2.0).astype(Rebound.DTYPE)
    Rebound.DTYPE = np.float32
    z = (x * 2.0).astype(Rebound.DTYPE) + 1.0
    return y, z


@pytest.mark.parametrize("fn", [rebinds_a_class_attribute_then_calls_it, rebinds_a_dtype_attribute_then_casts],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", [None, "tvm"])
def test_statements_after_the_function_rebinds_an_attribute_see_the_new_object(fn, backend):
    """The attribute was resolved when the function was transformed and guarded on entry only: the
    statements after ``Rebound.FUNC = np.negative`` kept calling np.sqrt (and casting to float64)."""
    jf = jit(fn, backend=backend)
    try:
        for n in (8, 100_000, 8):
            x = np.linspace(0.0, 1.0, n)
            Rebound.FUNC, Rebound.DTYPE = np.sqrt, np.float64
            want = fn(x)
            Rebound.FUNC, Rebound.DTYPE = np.sqrt, np.float64
            got = jf(x)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and np.array_equal(g, w)
    finally:
        Rebound.FUNC, Rebound.DTYPE = np.sqrt, np.float64


ALTERNATING = np.sin


def calls_an_alternating_global(a):
    b = ALTERNATING(a) * 2.0 + 1.0
    return b


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_global_function_that_alternates_reuses_its_earlier_transforms(backend):
    """Rebinding FN between np.sin and np.cos transformed the function again at every call (10-20 ms,
    thousands of times a plain call): each object's transform is kept and installed again."""
    jf = jit(calls_an_alternating_global, backend=backend)
    try:
        for k in range(12):
            globals()["ALTERNATING"] = (np.negative, np.abs, np.square)[k % 3]
            a = np.linspace(-1.0, 1.0, 50 + k % 2)
            assert np.array_equal(jf(a), calls_an_alternating_global(a))
        assert jf._transforms == 3
    finally:
        globals()["ALTERNATING"] = np.sin


def calls_through_a_module_global(a):
    b = MODULE.negative(a) * 2.0 + 1.0
    return b


MODULE = np


def test_a_global_rebound_to_new_objects_at_each_call_runs_as_python_past_the_limit(monkeypatch):
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", "4")
    jf = jit(calls_through_a_module_global)
    try:
        for k in range(8):
            module = types.ModuleType(f"fresh_{k}")       # a new module object each call
            module.negative = np.negative if k % 2 else np.abs
            globals()["MODULE"] = module
            a = np.linspace(-1.0, 1.0, 40)
            assert np.array_equal(jf(a), calls_through_a_module_global(a))
        assert jf._transforms == 5 and "keep being rebound" in str(explain(jf))
    finally:
        globals()["MODULE"] = np


def _lazy_module():
    module = types.ModuleType("lazy_settings")
    module.loaded = True

    def __getattr__(name):
        if name == "EXTRA" and module.loaded:
            return 2.0
        raise RuntimeError("settings not loaded")

    module.__getattr__ = __getattr__
    return module


LAZY = _lazy_module()


def writes_then_reads_a_lazy_attribute(a, out):
    out[:] = a * 2.0
    b = out * LAZY.EXTRA
    return b


def reads_a_lazy_attribute_in_an_untaken_branch(a, flag):
    s = 0.0
    for i in range(a.shape[0]):
        if flag:
            s += a[i] * LAZY.EXTRA
        else:
            s += a[i]
    return s


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_module_attribute_whose_read_raises_is_read_where_python_reads_it(backend):
    """A module's __getattr__ raising RuntimeError escaped the read before the Fragment call: before
    the block's earlier write into ``out``, and in a loop whose branch reading it was never taken."""
    block, loop = jit(writes_then_reads_a_lazy_attribute, backend=backend), jit(
        reads_a_lazy_attribute_in_an_untaken_branch, backend=backend)
    try:
        for n in (50_000, 50_000):
            a = np.linspace(0.0, 1.0, n)
            assert np.array_equal(block(a, np.zeros(n)), writes_then_reads_a_lazy_attribute(a, np.zeros(n)))
            assert loop(a, True) == reads_a_lazy_attribute_in_an_untaken_branch(a, True)
        LAZY.loaded = False
        for fn, jf in ((writes_then_reads_a_lazy_attribute, block), ):
            out_py, out_jit = np.zeros(50_000), np.zeros(50_000)
            with pytest.raises(RuntimeError):
                fn(a, out_py)
            with pytest.raises(RuntimeError):
                jf(a, out_jit)
            assert np.array_equal(out_py, out_jit) and out_jit[1] > 0
        assert loop(a, False) == reads_a_lazy_attribute_in_an_untaken_branch(a, False)
        with pytest.raises(RuntimeError):
            loop(a, True)
    finally:
        LAZY.loaded = True


def _lazy_functions():
    module = types.ModuleType("lazy_functions")
    module.available = True

    def __getattr__(name):
        if name == "ACT":
            if module.available:
                return np.tanh
            raise ImportError("optional backend for ACT not installed")
        raise AttributeError(name)

    module.__getattr__ = __getattr__
    return module


LAZY_FUNCTIONS = _lazy_functions()


def calls_a_lazy_function_in_a_branch(x, use):
    x[1] = 7.0
    if use:
        y = LAZY_FUNCTIONS.ACT(x) + 1.0
    else:
        y = x * 2.0 + 1.0
    return y


def test_a_function_whose_module_read_raises_is_read_where_python_reads_it():
    """A function the call resolves through a module's ``__getattr__`` that raises ImportError: the
    guard at the call's start took only some exceptions as "changed" and let this one escape, before
    the statement writing ``x[1]`` and where no branch taken reads it."""
    jf = jit(calls_a_lazy_function_in_a_branch)
    try:
        for use in (True, True, False, True):
            x1, x2 = np.linspace(0, 1, 3000), np.linspace(0, 1, 3000)
            # (np.tanh: a kernel's vectorized tanh is within docs/semantics.md's ulps of numpy's)
            np.testing.assert_allclose(jf(x1, use), calls_a_lazy_function_in_a_branch(x2, use), rtol=1e-15)
        LAZY_FUNCTIONS.available = False
        for use in (False, True, False, False, True):
            x1, x2 = np.linspace(0, 1, 3000), np.linspace(0, 1, 3000)
            if use:
                with pytest.raises(ImportError, match="optional backend"):
                    calls_a_lazy_function_in_a_branch(x1, use)
                with pytest.raises(ImportError, match="optional backend"):
                    jf(x2, use)
            else:
                assert np.array_equal(jf(x1, use), calls_a_lazy_function_in_a_branch(x2, use))
            assert np.array_equal(x1, x2) and x2[1] == 7.0
    finally:
        LAZY_FUNCTIONS.available = True


def falls_back_when_the_backend_is_missing(x):
    y = np.cos(x) * 2.0 + 1.0
    try:
        act = LAZY_FUNCTIONS.ACT
    except ImportError:
        act = np.negative
    return act(y)


def test_a_module_attribute_raising_at_the_first_call_does_not_stop_the_transform():
    """The transform resolved ``LAZY_FUNCTIONS.ACT`` with getattr, which raised the module's ImportError:
    the function ran as Python for good, also once the attribute became readable."""
    jf = jit(falls_back_when_the_backend_is_missing)
    try:
        LAZY_FUNCTIONS.available = False
        for n in (3000, 3000, 20):
            x = np.linspace(-1, 1, n)
            assert np.array_equal(jf(x), falls_back_when_the_backend_is_missing(x))
        LAZY_FUNCTIONS.available = True
        for n in (3000, 3000, 20):
            x = np.linspace(-1, 1, n)
            assert np.array_equal(jf(x), falls_back_when_the_backend_is_missing(x))
    finally:
        LAZY_FUNCTIONS.available = True
    assert "could not transform" not in str(jf.explain())
    assert any(f.entries for f in jf.fragments)


def scaled_by_a_later_global(a, out):
    for i in range(len(a)):
        out[i] = a[i] * LATER_SCALE  # noqa: F821
    return out


def shifted_by_a_later_global(a):
    return a * 2.0 + LATER_SHIFT  # noqa: F821


def test_a_global_defined_after_the_first_call_compiles_its_statements():
    """A global not defined when the function is compiled keeps its statements as Python (its first call
    raises NameError, as Python does); defining it later compiles them: a loop reading it ran as Python
    for good (0.9 ms where its kernel took 3 us), the notebook pattern of a NameError, then the
    constant defined. Deleting it again raises NameError again."""
    loop, block = jit(scaled_by_a_later_global), jit(shifted_by_a_later_global)
    a = np.arange(50.0)
    with pytest.raises(NameError):
        loop(a, np.zeros(50))
    with pytest.raises(NameError):
        block(a)
    globals()["LATER_SCALE"], globals()["LATER_SHIFT"] = 2.0, 1.5
    try:
        for k in (1, 2, 3):
            np.testing.assert_array_equal(loop(a * k, np.zeros(50)), a * k * 2.0)
            np.testing.assert_array_equal(block(a * k), a * k * 2.0 + 1.5)
        assert "not defined" not in str(explain(loop)) and "not defined" not in str(explain(block))
    finally:
        del globals()["LATER_SCALE"], globals()["LATER_SHIFT"]
    with pytest.raises(NameError):
        loop(a, np.zeros(50))


def scaled_by_a_later_setting(a, out):
    for i in range(len(a)):
        out[i] = a[i] * settings.LATER_K
    return out


def shifted_by_a_later_setting(a):
    return a * 2.0 + settings.Config.later_shift


def test_attributes_and_closure_variables_defined_after_the_first_call_compile_their_statements():
    """A module's or class's attribute missing at the first call (AttributeError, as Python raises) and
    a closure variable not yet assigned (NameError) are guarded to stay missing: assigning them later
    compiles the statements that read them (they ran as Python for good); deleting them again raises
    again."""
    loop, block = jit(scaled_by_a_later_setting), jit(shifted_by_a_later_setting)

    def make_closure():
        def scaled(a):
            return a * factor + 1.0
        jitted = jit(scaled)
        with pytest.raises(NameError):
            jitted(np.arange(5.0))
        factor = 3.0
        return jitted, factor

    closure, _ = make_closure()
    a = np.arange(50.0)
    with pytest.raises(AttributeError):
        loop(a, np.zeros(50))
    with pytest.raises(AttributeError):
        block(a)
    settings.LATER_K, settings.Config.later_shift = 2.0, 1.5
    try:
        for k in (1, 2, 3):
            np.testing.assert_array_equal(loop(a * k, np.zeros(50)), a * k * 2.0)
            np.testing.assert_array_equal(block(a * k), a * k * 2.0 + 1.5)
            np.testing.assert_array_equal(closure(a * k), a * k * 3.0 + 1.0)
        for jitted in (loop, block, closure):
            assert "supported" not in str(explain(jitted)) and "not defined" not in str(explain(jitted)), \
                str(explain(jitted))
    finally:
        del settings.LATER_K, settings.Config.later_shift
    with pytest.raises(AttributeError):
        loop(a, np.zeros(50))
    with pytest.raises(AttributeError):
        block(a)


class _CountedReads(type):
    """A metaclass whose property computes a value at each read (a counter, a clock, a draw)."""
    reads = 0

    @property
    def K(cls):
        _CountedReads.reads += 1
        return float(_CountedReads.reads)


class CountedSettings(metaclass=_CountedReads):
    pass


class _Counting:
    """A descriptor of the user's on a class: its ``__get__`` runs at each read."""

    def __get__(self, obj, owner):
        _CountedReads.reads += 1
        return float(_CountedReads.reads)


class DescribedSettings:
    K = _Counting()


def read_twice_by_a_metaclass_property(a):
    b = a * CountedSettings.K
    return (b + CountedSettings.K).sum()


def read_twice_by_a_descriptor(a):
    b = a * DescribedSettings.K
    return (b + DescribedSettings.K).sum()


def read_in_a_loop_by_a_metaclass_property(a, n):
    s = 0.0
    for i in range(n):
        s += a[i] * CountedSettings.K
    return s


@pytest.mark.parametrize("fn, args", [(read_twice_by_a_metaclass_property, (np.linspace(0, 1, 3000),)),
                                      (read_twice_by_a_descriptor, (np.linspace(0, 1, 3000),)),
                                      (read_in_a_loop_by_a_metaclass_property, (np.linspace(0, 1, 300), 200))])
def test_an_attribute_of_a_global_class_computed_at_each_read_is_read_as_python_reads_it(fn, args):
    """A metaclass's property or a descriptor of the user's on a global class is read where and as often
    as the statements read it (it was read once at the compile and once a call, and the statements
    saw one value)."""
    jitted = jit(fn)
    for _ in range(3):
        _CountedReads.reads = 0
        want, want_reads = fn(*args), _CountedReads.reads
        _CountedReads.reads = 0
        got, got_reads = jitted(*args), _CountedReads.reads
        assert got == want and got_reads == want_reads


def test_a_module_getattr_is_called_where_the_statements_read_it(tmp_path, monkeypatch):
    """A module's ``__getattr__`` (a deprecated name that warns) runs where Python reads the name, never
    at the compile, and is not read at all where no branch taken reads it."""
    (tmp_path / "deprecating.py").write_text(
        "import warnings\nNEW = 2.0\nreads = [0]\n"
        "def __getattr__(name):\n"
        "    if name == 'OLD':\n"
        "        reads[0] += 1\n"
        "        warnings.warn('OLD is deprecated', DeprecationWarning, stacklevel=2)\n"
        "        return NEW\n"
        "    raise AttributeError(name)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import deprecating

    def scaled(a, use_old):
        b = a * 2.0
        if use_old:
            b = b * deprecating.OLD
        return b.sum()

    jitted = jit(scaled)
    a = np.linspace(0, 1, 3000)
    for use_old in (False, True, False, True):
        deprecating.reads[0] = 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = jitted(a, use_old)
        assert got == scaled(a, False) * (2.0 if use_old else 1.0)
        assert deprecating.reads[0] == use_old and len(caught) == use_old
