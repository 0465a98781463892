"""The generated runner of a straight-line kernel (runtime/dispatch) and the executable's slower path
(backends/tvm/executable): what an argument the kernel refuses costs."""

import weakref

import numpy as np

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


def test_a_read_only_input_passes_as_a_view_of_its_memory():
    a = np.arange(12.0).reshape(3, 4)
    a.flags.writeable = False
    passed = _passable(a)
    assert passed.flags.writeable and np.shares_memory(passed, a)
    np.testing.assert_array_equal(passed, a)
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
