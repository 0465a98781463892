"""assert_same_as_numpy: the main assertion of the suite (values, dtypes, shapes, in-place effects)."""

import copy

import numpy as np

from astjit import jit

# Documented tolerance (docs: semantics): compiled float32 kernels may differ from numpy by the rounding
# of transcendental functions (a few ulp); float sums add in numpy's order (tests/backends/tvm/
# test_exact_sums checks their bits).
RTOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-12}


def _tolerances(dtype, rtol, atol):
    base = RTOL.get(np.dtype(dtype), 0.0)
    return (base if rtol is None else rtol), (0.0 if atol is None else atol)


def assert_values_match(got, want, rtol=None, atol=None, path="result"):
    assert type(got) is type(want), f"{path}: type {type(got).__name__} != numpy's {type(want).__name__}"
    if isinstance(want, tuple | list):
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_values_match(g, w, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(want, np.ndarray | np.generic):
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != numpy's {want.dtype}"
        assert np.shape(got) == np.shape(want), f"{path}: shape {np.shape(got)} != numpy's {np.shape(want)}"
        r, a = _tolerances(want.dtype, rtol, atol)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=r, atol=a, equal_nan=True, err_msg=path)
            if want.dtype.kind == "f":          # a zero is numpy's zero, of the same sign
                zeros = (np.asarray(want) == 0) & (np.asarray(got) == 0)
                np.testing.assert_array_equal(np.signbit(got)[zeros], np.signbit(want)[zeros],
                                              err_msg=f"{path}: the sign of a zero")
        else:
            np.testing.assert_array_equal(got, want, err_msg=path)
        return
    if isinstance(want, float) and np.isnan(want):
        assert np.isnan(got), path
        return
    assert got == want, f"{path}: {got!r} != {want!r}"


def assert_same_as_numpy(fn, *args, rtol=None, atol=None, jitted=None, **jit_options):
    """Run ``fn`` as plain Python and jitted on equal copies of ``args``; compare the results and every
    argument afterwards (in-place effects). Returns the jitted function for further checks."""
    jf = jitted if jitted is not None else jit(fn, **jit_options)
    plain_args = copy.deepcopy(args)
    jit_args = copy.deepcopy(args)
    want_error = None
    try:
        want = fn(*plain_args)
    except Exception as exc:  # the jitted function must raise the same
        want_error = exc
    if want_error is not None:
        try:
            jf(*jit_args)
        except type(want_error) as exc:
            assert str(exc) == str(want_error), f"message {exc} != numpy's {want_error}"
            return jf
        raise AssertionError(f"numpy raised {want_error!r}; the jitted function did not")
    got = jf(*jit_args)
    assert_values_match(got, want, rtol, atol)
    for i, (g, w) in enumerate(zip(jit_args, plain_args)):
        assert_values_match(g, w, rtol, atol, f"argument {i} after the call")
    return jf


def jit_unmeasured(fn, **jit_options):
    """``jit(fn, backend="tvm")``: compiled code kept without the first-call measurement against the
    block's Python. For tests that count specializations or Fragment calls: a block measured slower
    than its Python (a few elements of ``tanh`` where numpy's is AVX-512) runs inline for its next
    calls, which no Fragment counts and which look at no new key, so such counts depend on the
    machine."""
    return jit(fn, backend="tvm", **jit_options)


def modes(jf) -> set:
    """The execution modes of every specialization made so far ("tvm", "mixed", "numpy", "python")."""
    return {e.mode for frag in jf.fragments for e in frag.entries}


def assert_compiled(jf):
    """Every elementwise and reduction node ran compiled, except integer arithmetic that may wrap around,
    float products of more than two factors and arithmetic on scalars alone in a block of arrays, which
    numpy runs by design (TVM assumes integers never overflow; where a float product overflows depends
    on the order of its factors; a kernel of scalar work is compiled again for each shape of the block's
    arrays); a specialization that runs as Python must owe that to such nodes alone."""
    from astjit.backends.partition import SCALAR_WORK_REASON
    from astjit.backends.tvm.support import FLOAT_PRODUCT_REASON, WRAP_REASON
    from astjit.graph.ops import OPS

    by_design = (WRAP_REASON, FLOAT_PRODUCT_REASON, SCALAR_WORK_REASON)

    assert modes(jf) <= {"tvm", "mixed", "python"}, f"ran as {modes(jf)}:\n{jf.explain()}"
    assert jf.fragments and all(frag.entries for frag in jf.fragments if frag.calls), "nothing specialized"
    for frag in jf.fragments:
        for entry in frag.entries:
            reasons = entry.reasons
            assert reasons is not None, f"{frag.name} could not be specialized: {entry.note}"
            left = {n.op: r for n, r in reasons.items()
                    if OPS[n.op].kind in ("elementwise", "reduction") and r not in by_design}
            assert not left, f"left to numpy: {left}"
            if entry.mode == "python":
                assert set(by_design) & set(reasons.values()), f"{frag.name} runs as Python: {entry.note}"
            else:
                assert not entry.note, entry.note


def misaligned(a: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of ``a`` starting one byte past an aligned address (``flags.aligned`` False):
    numpy reads such an array through buffers of its own."""
    memory = np.zeros(a.nbytes + 1, np.uint8)
    out = np.ndarray(a.shape, a.dtype, buffer=memory.data, offset=1)
    out[...] = a
    assert not out.flags.aligned
    return out
