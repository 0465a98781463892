"""The generated runner of a straight-line kernel (runtime/dispatch) and the executable's slower path
(backends/tvm/executable): what an argument the kernel refuses costs."""

import weakref

import numpy as np
import pytest

from astjit.backends.array_views import writeable_view
from astjit.backends.tvm.executable import _passable
from astjit.runtime.dispatch import make_kernel_runner


def test_a_refused_call_frees_its_outputs_before_the_slower_path_allocates():
    seen = []

    def kernel(a, out):
        seen.append(weakref.ref(out))
        raise BufferError("read-only")

    def slow(args):
        return seen[-1]() is None        # the runner's output is gone: its memory can be reused

    run = make_kernel_runner(kernel, 1, ["a0"], [((1000,), np.dtype(np.float64))], "o0", slow)
    assert run(np.zeros(3)) is True


def test_a_kernel_that_accepts_returns_its_output():
    def kernel(a, out):
        out[:] = a + 1

    run = make_kernel_runner(kernel, 1, ["a0"], [((3,), np.dtype(np.float64))], "o0", lambda args: None)
    np.testing.assert_array_equal(run(np.arange(3.0)), [1.0, 2.0, 3.0])


def test_after_a_refused_read_only_array_the_runner_passes_such_arrays_as_read_only_tensors():
    """The kernel's refusal of a read-only array (an exception, 5 us) and the slower path cost a
    block over 100 read-only floats 4x plain numpy's time at every call: after the first, the runner
    converts them itself; writeable arrays and numbers still pass as they are."""
    passed, slow_calls = [], []

    def kernel(a, k, out):
        if isinstance(a, np.ndarray) and not a.flags.writeable:
            raise BufferError("read-only")
        passed.append(type(a))
        out[:] = np.from_dlpack(a) * k

    def slow(args):
        slow_calls.append(args)
        return "slow"

    run = make_kernel_runner(kernel, 2, ["a0", "a1"], [((3,), np.dtype(np.float64))], "o0", slow, ["a0"])
    locked = np.arange(3.0)
    locked.flags.writeable = False
    assert run(locked, 2.0) == "slow" and len(slow_calls) == 1        # the first refusal
    for _ in range(3):
        np.testing.assert_array_equal(run(locked, 2.0), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(run(np.ones(3), 3.0), [3.0, 3.0, 3.0])
    assert len(slow_calls) == 1 and passed[-1] is np.ndarray and passed[0] is not np.ndarray


def test_a_read_only_input_passes_as_a_read_only_tensor_of_its_memory():
    """DLPack 1.0 carries the read-only flag: the kernel gets the array's own memory, without the
    3 us of a writeable view made at each call."""
    a = np.arange(12.0).reshape(3, 4)
    a.flags.writeable = False
    passed = _passable(a)
    assert passed.data_ptr() == a.__array_interface__["data"][0] and tuple(passed.shape) == a.shape
    np.testing.assert_array_equal(np.from_dlpack(passed), a)
    b = np.arange(5.0)
    assert _passable(b) is b              # a writeable C-contiguous array passes as itself


def test_a_strided_input_is_copied_in_c_order():
    a = np.arange(10.0)[::2]
    passed = _passable(a)
    assert passed.flags.c_contiguous and not np.shares_memory(passed, a)
    np.testing.assert_array_equal(passed, a)


def test_writeable_view_of_a_broadcast_keeps_its_strides():
    a = np.broadcast_to(np.arange(3.0), (4, 3))
    v = writeable_view(a)
    assert v.strides == a.strides and np.shares_memory(v, a)
    np.testing.assert_array_equal(v, a)


def test_writeable_view_is_kept_for_a_view_and_made_anew_when_it_changes():
    a = np.frombuffer(np.arange(6.0).tobytes())
    assert writeable_view(a) is writeable_view(a)           # (a view of another object's memory: kept)
    a.shape = (2, 3)
    assert writeable_view(a).shape == (2, 3) and np.array_equal(writeable_view(a), a)
    a.dtype = np.int64
    assert writeable_view(a).dtype == np.int64 and np.array_equal(writeable_view(a), a)
    other = np.frombuffer(np.arange(6.0).tobytes())
    assert writeable_view(other) is not writeable_view(a) and np.array_equal(writeable_view(other), other)


def test_an_array_owning_its_memory_stays_resizable():
    """A read-only array that owns its memory gets a new view each time: numpy may move its memory, and
    refuses to resize an array a weak reference holds."""
    owned = np.arange(6.0)
    owned.flags.writeable = False
    assert np.shares_memory(writeable_view(owned), owned)
    owned.resize(600, refcheck=False)
    owned.resize(6, refcheck=False)
    assert np.shares_memory(writeable_view(owned), owned) and writeable_view(owned).shape == (6,)


def read_total(x, k):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * k
    return s


def test_a_loop_reading_a_read_only_array_sees_its_values_at_each_call():
    """The generated loop runner passes read-only arrays as kept writeable views once it met one: the
    values a call reads are the array's at that call (a locked array unlocked, changed and locked)."""
    from loop_checks import check

    locked = np.linspace(0.0, 1.0, 40)
    locked.flags.writeable = False
    calls = []
    for k in range(4):
        calls.append((locked, 2.0 + k))
        calls.append((np.frombuffer(np.linspace(k, 3.0, 40).tobytes()), 0.5))
        calls.append((np.broadcast_to(1.5 * k, (40,)), 3.0))
    jitted = check(read_total, calls)
    locked.flags.writeable = True
    locked[:] = 7.0
    locked.flags.writeable = False
    assert jitted(locked, 2.0) == read_total(locked, 2.0) == 7.0 * 2.0 * 40


def blend(a, b, c, d):
    return np.sqrt(a * b + c * d + 1.0) * 0.5 - a


def dot_steps(a, b, k):
    s = 0.0
    for _ in range(k):
        for i in range(len(a)):
            s += a[i] * b[i]
    return s


@pytest.mark.parametrize("n", [16, 1000])
def test_read_only_arrays_reach_blocks_and_loops_after_writeable_ones(n):
    """The same function called with writeable arrays, then with locked ones (``setflags(write=False)``,
    arrays owning their memory), then writeable again: numpy's values at every call, the locked ones
    passing as read-only tensors (each used to cost a new writeable view, 7x plain numpy's time on 16
    elements)."""
    from astjit import jit

    rng = np.random.default_rng(n)
    blend_j, dot_j = jit(blend), jit(dot_steps)
    for locked in (False, False, True, True, False, True):
        arrays = [rng.random(n) for _ in range(4)]
        for x in arrays:
            x.setflags(write=not locked)
        np.testing.assert_array_equal(blend_j(*arrays), blend(*arrays))
        assert dot_j(arrays[0], arrays[1], 3) == dot_steps(arrays[0], arrays[1], 3)
