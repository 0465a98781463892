"""An exception raised by the user's code inside a compiled block reaches the user as plain Python shows
it: one exception, its last frame at the user's file and line, not chained ("During handling of the
above exception") to whatever a kernel or a segment raised before the block's Python ran."""

import traceback
from types import SimpleNamespace

import numpy as np
import pytest

from astjit import jit
from astjit.backends.tvm.executable import make_executable
from astjit.runtime import measure


def last_frame(exc: BaseException):
    return traceback.extract_tb(exc.__traceback__)[-1]


def chain(exc: BaseException) -> list:
    """The exception and those it was raised while handling."""
    out = []
    while exc is not None:
        out.append(exc)
        exc = exc.__context__
    return out


def doubled_at(a, i):
    x = a * 2
    return x[i]


@pytest.mark.parametrize("calls", [1, 3])       # the first call (measured) and later ones (the plan)
def test_an_index_error_in_a_compiled_block_is_the_users_alone(monkeypatch, calls):
    jf = jit(doubled_at)
    frag = jf.fragments[0]
    # the compiled code measures faster: later calls run its plan (a segment raises, then the Python)
    monkeypatch.setattr(measure, "_best", lambda fn, *args, **kwargs: 5e-5 if fn is frag.fallback else 1e-6)
    for _ in range(calls - 1):
        assert jf(np.ones(3), 1) == 2.0
    if calls > 1:
        assert [e.mode_chosen for e in frag.entries] == [e.mode for e in frag.entries] != ["python"]
    with pytest.raises(IndexError) as info:
        jf(np.ones(3), 5)
    with pytest.raises(IndexError) as plain:
        doubled_at(np.ones(3), 5)
    assert str(info.value) == str(plain.value)
    last = last_frame(info.value)
    assert last.filename == __file__ and last.line.strip() == "return x[i]", last
    assert chain(info.value) == [info.value]
    assert "During handling" not in "".join(traceback.format_exception(info.value))


def test_numpy_path_after_a_refused_kernel_is_not_chained_to_the_refusal():
    def kernel(a, out):
        raise ValueError("the kernel refuses this argument")

    def on_numpy(a):
        return a[5]

    run = make_executable(kernel, ["array"], [((3,), np.dtype(np.float64), SimpleNamespace(scalar=False, shape=(3,)))], on_numpy)
    with pytest.raises(IndexError) as info:
        run(np.ones(3))
    assert chain(info.value) == [info.value]


def test_a_loops_python_after_its_refused_kernel_is_not_chained_to_the_refusal():
    from astjit.runtime.dispatch import make_loop_kernel_runner

    def kernel(a, status):
        raise ValueError("the kernel refuses this argument")

    def checked(a):
        return a[5]                     # the loop's Python, raising as the user's code does

    appends = SimpleNamespace(size=lambda: 4, sharing=[], positions=[], fixed=4, extend=None)
    run = make_loop_kernel_runner(kernel, [np.ones(3)], [0], [], [], [], False, appends, checked,
                                  None, ("None", {}), None)
    with pytest.raises(IndexError) as info:
        run(np.ones(3))
    assert chain(info.value) == [info.value]
