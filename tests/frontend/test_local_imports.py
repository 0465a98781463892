"""A function that imports numpy (or math) in its own body compiles as one that imports it at module
level: ``np`` was a local, lowering took ``np.exp`` for a method of an unknown value, and every array
statement of the function ran as Python."""

import numpy
import pytest
from differential import assert_same_as_numpy
from loop_checks import check, kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import explain, jit

rng = numpy.random.default_rng(17)


def imports_numpy_first(a, b):
    import numpy as np
    c = np.sqrt(a) * 2.0 + np.abs(b) - np.pi
    return c


def imports_a_submodule(a):
    import numpy as np
    import numpy.linalg as la
    return np.maximum(a, 0.0) * 2.0 + la.norm(a)


def loop_with_imported_math(a):
    import math

    import numpy as np
    s = 0.0
    for i in range(a.shape[0]):
        s += math.sqrt(a[i]) * np.float64(2.0) + math.pi
    return s


def reads_before_its_import(a):
    c = np.sqrt(a) * 2.0   # noqa: F821 - the local np is unbound here: UnboundLocalError, as in Python
    import numpy as np
    return c + np.pi


def imports_in_one_branch(a, flag):
    if flag:
        import numpy as np
    c = np.sqrt(a) * 2.0
    return c


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_block_after_the_import_compiles(backend):
    jf = jit(imports_numpy_first, backend=backend)
    for n in (5, 100_000, 7):
        a, b = rng.random(n) * 3.0, rng.random(n) - 0.5
        assert_same_as_numpy(imports_numpy_first, a, b, jitted=jf)
    # a list or a dtype no kernel takes: the block's Python reads the module too
    assert_same_as_numpy(imports_numpy_first, [1.0, 4.0], [2.0, -3.0], jitted=jf)
    assert_same_as_numpy(imports_numpy_first, numpy.arange(5, dtype=numpy.float16),
                         numpy.ones(5, numpy.float16), jitted=jf)
    assert not any("not supported" in r.message for r in explain(jf))
    if backend == "tvm":
        assert any(e.mode in ("tvm", "mixed") for f in jf.fragments for e in f.entries)


def test_a_submodule_imported_under_a_name_resolves():
    jf = jit(imports_a_submodule, backend="tvm")
    for n in (4, 1000):
        assert_same_as_numpy(imports_a_submodule, rng.random(n) - 0.5, jitted=jf)
    # (resolved as numpy.linalg.norm, which astjit leaves to numpy: not taken for a method of a value)
    assert any("la.norm (numpy.linalg.norm) is not supported yet" in r.message for r in explain(jf))


@pytest.mark.usefixtures("kernels_for_tiny_loops")
def test_a_loop_reading_an_imported_module_compiles():
    check(loop_with_imported_math, [(rng.random(50),), (rng.random(7),), (numpy.zeros(0),), ([1.0, 4.0],)],
          compiled=False)
    jf = check(loop_with_imported_math, [(rng.random(50),), (rng.random(300),)])
    assert not any("not supported" in r.message for r in explain(jf))


@pytest.mark.parametrize("fn, args", [(reads_before_its_import, (numpy.ones(4),)),
                                      (imports_in_one_branch, (numpy.ones(4), True)),
                                      (imports_in_one_branch, (numpy.ones(4), False))],
                         ids=["read before", "in a branch, taken", "in a branch, not taken"])
def test_a_name_that_may_be_unbound_stays_a_local(fn, args):
    """Where the import may not have run when the name is read, Python's UnboundLocalError stays."""
    jf = jit(fn)
    for _ in range(3):
        try:
            want = ("returned", fn(*args))
        except UnboundLocalError as exc:
            want = ("raised", str(exc))
        try:
            got = ("returned", jf(*args))
        except UnboundLocalError as exc:
            got = ("raised", str(exc))
        assert got[0] == want[0] and (numpy.array_equal(got[1], want[1]) if got[0] == "returned" else got == want)


def rebinds_the_module_by_a_match_capture(a, k):
    import numpy as np
    match k:
        case 0:
            pass
        case np:       # noqa: F811 - binds np to k
            pass
    return np.sin(a) * 2.0


def test_a_match_capture_of_the_name_keeps_it_a_local():
    jf = jit(rebinds_the_module_by_a_match_capture)
    a = rng.random(50)
    assert numpy.array_equal(jf(a, 0), rebinds_the_module_by_a_match_capture(a, 0))
    for k in (5, 0, 7):
        try:
            want = ("returned", rebinds_the_module_by_a_match_capture(a, k))
        except AttributeError as exc:
            want = ("raised", str(exc))
        try:
            got = ("returned", jf(a, k))
        except AttributeError as exc:
            got = ("raised", str(exc))
        assert got[0] == want[0] and (numpy.array_equal(got[1], want[1]) if got[0] == "returned" else got == want)
