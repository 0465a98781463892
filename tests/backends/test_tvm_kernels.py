"""The TVM backend's kernels: every rule support.py claims really compiles and matches numpy, on every
input layout numpy can hand over, at every vector-tail size, in parallel on large arrays, and without
crashing the process (integer division guards)."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from differential import assert_compiled, assert_same_as_numpy, assert_values_match, jit_unmeasured

from astjit import RecompileLimitWarning, jit
from astjit.backends.tvm import support
from astjit.runtime import new_extents

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.kind == "f":                               # quarters: sums are exact in any order
        v = (rng.integers(-12, 13, n) / 4).astype(dt)
        v[2:9] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0][: max(0, n - 2)]
    elif dt.kind == "i":
        v = rng.integers(-9, 10, n).astype(dt)
        v[2:6] = [0, -1, np.iinfo(dt).min, np.iinfo(dt).max][: max(0, n - 2)]
    else:
        v = rng.integers(0, 20, n).astype(dt)
    return v.reshape(shape)


# -- every claimed ufunc rule ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ufunc_module(tmp_path_factory):
    """One user-style function per ufunc with a TVM rule, in a real file (jit reads the source)."""
    lines = ["import numpy as np", ""]
    for name in sorted(support.UFUNC_RULES):
        params = ", ".join("xy"[: getattr(np, name).nin])
        lines += [f"def call_{name}({params}):", f"    return np.{name}({params})", "", ""]
    path = tmp_path_factory.mktemp("rules") / "ufunc_calls.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("ufunc_calls", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# float32 and int32 for every rule; float64 for the libm rules (double functions); uint32 and bool for
# the integer and logic rules (libm rules run the same float64 loop as for int32: a few suffice)
RULE_CASES = [(name, dtype) for name in sorted(support.UFUNC_RULES)
              for dtype in ("float32", "float64", "int32", "uint32", "bool")
              if dtype in ("float32", "int32") or (dtype == "float64") == (name in support.sm.LIBM)
              or name in ("sin", "exp", "tanh")]


@pytest.mark.parametrize(("name", "dtype"), RULE_CASES, ids=str)
def test_every_claimed_ufunc_rule_compiles_and_matches(ufunc_module, name, dtype):
    """numpy's loop for these inputs is one the backend compiles: then the kernel must run compiled."""
    ufunc = getattr(np, name)
    fn = getattr(ufunc_module, f"call_{name}")
    args = [values(dtype, (3, 7), seed=k) for k in range(ufunc.nin)]
    if name in ("left_shift", "right_shift") and dtype != "bool":
        args[1] = (np.abs(args[1].astype(np.int64)) % 40).astype(dtype)
    try:
        with np.errstate(all="ignore"):
            want = ufunc(*args)
    except TypeError:
        want = None                                    # numpy has no loop (bitwise on floats): same error
    jf = assert_same_as_numpy(fn, *args)
    loop = [str(d) for d in ufunc.resolve_dtypes(tuple(a.dtype for a in args) + (None,))] if want is not None \
        else []
    if want is not None and all(d in support.SUPPORTED_DTYPES for d in loop):
        assert_compiled(jf)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
def test_power_where_clip_astype_copy_compile(dtype):
    jf = assert_same_as_numpy(_power_where_clip_astype_copy, values(dtype, (4, 5)), values(dtype, (5,), 1))
    assert_compiled(jf)


def _power_where_clip_astype_copy(a, b):
    return a**2, np.where(a > b, a, b), np.clip(a, 1, 5), a.astype(np.float64), a.copy(), np.copy(b)


# -- input layouts ----------------------------------------------------------------------------------------

def fused(a, b):
    return np.sqrt(np.abs(a)) * b + a, (a * b).sum(axis=-1), a.max()


def layouts(dtype):
    base = values(dtype, (6, 8))
    other = values(dtype, (6, 8), seed=1)
    buf = np.zeros(base.nbytes + 1, np.uint8)
    unaligned = np.frombuffer(buf.data, dtype=dtype, count=base.size, offset=1).reshape(6, 8)
    unaligned[...] = base
    readonly = base.copy()
    readonly.flags.writeable = False
    return {
        "contiguous": (base, other),
        "strided": (values(dtype, (6, 16))[:, ::2], other),
        "reversed": (base[::-1, ::-1], other[::-1]),
        "fortran": (np.asfortranarray(base), np.asfortranarray(other)),
        "transposed": (values(dtype, (8, 6)).T, other),
        "broadcast_to": (np.broadcast_to(base[0], (6, 8)), other),
        "read_only": (readonly, other),
        "offset_by_one_element": (values(dtype, (49,))[1:].reshape(6, 8), other),
        "unaligned": (unaligned, other),
    }


@pytest.mark.parametrize("layout", list(layouts("float32")))
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_any_input_layout(dtype, layout):
    """A C-contiguous array (at any offset, read-only or unaligned too: a copy) runs the kernel; another layout
    (strided, reversed, transposed, Fortran-ordered, broadcast) runs the block as numpy does, in its
    own layout: a kernel would copy it at each call."""
    a, b = layouts(dtype)[layout]
    jf = jit(fused)
    for _ in range(2):              # (the arrays as they are: assert_same_as_numpy passes copies)
        assert_values_match(jf(a, b), fused(a, b))
    if a.flags.c_contiguous:
        assert_compiled(jf)
    else:
        [entry] = jf.fragments[0].entries
        assert entry.mode == "python" and "not a C-contiguous array" in entry.note
    np.testing.assert_array_equal(a, layouts(dtype)[layout][0])    # inputs untouched


def test_each_layout_has_a_specialization_of_its_own():
    """The code chosen (and measured) for C-contiguous arrays never runs on another layout of the same
    shape: alternating calls each get their own, and the same results as numpy (an unaligned or
    read-only C-contiguous array shares the C-contiguous one's: the kernel takes a copy of it)."""
    jf = jit_unmeasured(fused)
    for _ in range(2):
        for layout in ("contiguous", "unaligned", "strided", "read_only", "contiguous"):
            a, b = layouts("float32")[layout]
            assert_values_match(jf(a, b), fused(a, b))
    entries = jf.fragments[0].entries
    assert [e.mode for e in entries] == ["tvm", "python"] and len({e.key for e in entries}) == 2


# -- vector tails, reductions, parallel kernels ---------------------------------------------------------

def tail_kernel(a, b):
    return a * b - a // 3


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_every_vector_tail_size(dtype, monkeypatch):
    """Lengths 1..19 and a few 2-d rows: the 8-lane loop and its peeled tail."""
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", "100")
    monkeypatch.setattr(new_extents, "EXTENTS_AT_ONCE", 100)    # (each length compiles at its first call)
    jf = jit(tail_kernel)
    shapes = [(n,) for n in range(1, 20)] + [(3, 9), (2, 17), (5, 8), (129,), (1000,)]
    for shape in shapes:
        assert_same_as_numpy(tail_kernel, values(dtype, shape), values(dtype, shape, 1), jitted=jf)
    assert_compiled(jf)
    assert sum(len(f.entries) for f in jf.fragments) == len(shapes)


def big_kernel(a, b):
    q = a // b
    r = a % b
    return q + r * 2, (q * r).sum(axis=0), np.maximum(a, b).max(axis=1), (a - b).sum()


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_large_arrays_take_the_parallel_schedule(dtype):
    """2**21 elements: the outer loop runs on the thread pool; zero divisors are spread all over."""
    shape = (1024, 2048)
    a = values(dtype, shape)
    b = values(dtype, shape, seed=1)
    if dtype != "float32":
        b.flat[::97] = 0
        b.flat[1::101] = -1
        a.flat[1::101] = np.iinfo(dtype).min
    jf = assert_same_as_numpy(big_kernel, a, b, rtol=1e-6 if dtype == "float32" else None)
    assert_compiled(jf)


def full_reduction(a):
    return a.sum(), a.prod(), a.max(), a.min(), a.mean(), a[: a.size - a.size % 3].reshape(3, -1).sum(axis=-1)


@pytest.mark.parametrize("n", [3, 7, 8, 17, 127, 128, 129, 1000, 4099])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_full_reduction_chunking(dtype, n):
    a = values(dtype, (n,))
    if dtype == "float64":
        a = np.where(np.isfinite(a), a, 1.0) / 4 + 1        # finite, positive: prod stays finite-ish
    if dtype == "int64":
        a = np.clip(a, -1000, 1000)     # int mean sums in float64: with +-2**63 the order would matter
    jf = assert_same_as_numpy(full_reduction, a)
    if dtype != "bool":
        assert_compiled(jf)


# -- scalars, caching ---------------------------------------------------------------------------------

def scalar_kernel(x, y):
    return x * 2 + y, np.sqrt(x) - y


@pytest.mark.parametrize(("x", "y"), [(np.float32(2.0), 1.5), (np.float64(3.0), np.float32(0.5)),
                                      (np.int32(7), 2), (np.array(2.5, np.float32), 1), (np.int64(5), True),
                                      (np.uint32(9), np.int64(4))], ids=repr)
def test_numpy_scalars_in_and_out(x, y):
    """numpy scalars and 0-d arrays enter as kernel parameters and come back as numpy scalars."""
    jf = assert_same_as_numpy(scalar_kernel, x, y)
    assert_compiled(jf)


def saxpy(a, x, y):
    return a * x + y


def test_specializations_are_reused_and_added_per_shape_and_dtype():
    jf = jit_unmeasured(saxpy)
    x, y = values("float32", (100,)), values("float32", (100,), 1)
    assert_same_as_numpy(saxpy, 2.0, x, y, jitted=jf)
    assert_same_as_numpy(saxpy, -1.5, x, y, jitted=jf)            # same key: no new kernel
    assert sum(len(f.entries) for f in jf.fragments) == 1
    assert_same_as_numpy(saxpy, 2.0, x[:50], y[:50], jitted=jf)
    assert_same_as_numpy(saxpy, 2.0, x.astype(np.float64), y, jitted=jf)
    assert sum(len(f.entries) for f in jf.fragments) == 3
    assert_compiled(jf)


def test_past_the_recompile_limit_results_stay_right(monkeypatch):
    monkeypatch.setenv("ASTJIT_RECOMPILE_LIMIT", "2")
    monkeypatch.setattr(new_extents, "EXTENTS_AT_ONCE", 100)    # (each length compiles at its first call)
    jf = jit(saxpy)
    with pytest.warns(RecompileLimitWarning):
        for n in (3, 4, 5, 6, 3):
            assert_same_as_numpy(saxpy, 2.0, values("int32", (n,)), values("int32", (n,), 1), jitted=jf)
    assert [e.mode for f in jf.fragments for e in f.entries] == ["tvm", "tvm"]
    assert any(r.kind == "limit" for r in jf.records())


# -- integer division guards: a wrong guard is SIGFPE, which would kill the test process ----------------

DIVISION_SCRIPT = textwrap.dedent("""
    import warnings
    import numpy as np
    from astjit import jit
    warnings.simplefilter("ignore")

    def kernel(a, b):
        return a // b, a % b, (a + 1) // b

    def by_minus_one(a):
        return a // -1, a % -1

    def scalars(a, b):
        return a // b, a % b

    def nested(a, v, n):
        # the divisor is itself a guarded remainder: TVM's common-subexpression pass hoisted ``a % n``
        # out of its guard, and a Python int 0 for n trapped
        return (v * a) // (a % n), a % n

    checked = 0
    for dtype in ("int8", "int16", "int32", "int64"):
        lo = np.iinfo(dtype).min
        for n in (5, 37, 1 << 20):
            a = np.resize(np.array([lo, lo, 5, -5, 0, lo, 7], dtype), n)
            b = np.resize(np.array([-1, 0, 0, -1, 0, -1, -1], dtype), n)
            for fn, args in ((kernel, (a, b)), (by_minus_one, (a,))):
                got, want = jit(fn)(*args), fn(*args)
                for g, w in zip(got, want):
                    assert g.dtype == w.dtype and np.array_equal(g, w), (dtype, n, fn.__name__, g, w)
                checked += 1
        got = jit(scalars)(np.dtype(dtype).type(lo), np.dtype(dtype).type(-1))
        assert got == scalars(np.dtype(dtype).type(lo), np.dtype(dtype).type(-1)), (dtype, got)
        got = jit(scalars)(np.dtype(dtype).type(5), np.dtype(dtype).type(0))
        assert got == (0, 0), (dtype, got)
    jn = jit(nested)
    for a in (np.array(False), np.array([True, False]), np.arange(-3, 4, dtype=np.int32)):
        for n in (0, -1, 2, 0):
            v = np.array(7, np.uint8)
            got, want = jn(a, v, n), nested(a, v, n)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and np.array_equal(g, w), (a, n, g, w)
    print("checked", checked)
""")


def test_integer_division_guards_do_not_crash_the_process(tmp_path):
    """x // 0, x % 0, INT_MIN // -1 in scalar, vectorized and parallel kernels, in a child process so a
    SIGFPE shows up as this test's failure instead of killing pytest."""
    script = tmp_path / "division_guards.py"                # jit reads the source: a real file
    script.write_text(DIVISION_SCRIPT)
    env = dict(os.environ, TVM_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode} (-8 is SIGFPE):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    assert "checked 24" in proc.stdout


def tanh_only(a):
    return np.tanh(a)


def test_float32_tanh_of_tiny_and_denormal_values():
    """Below 2**-12 tanh(x) rounds to x itself; the rational approximation alone lost the relative
    precision of tiny inputs (1e-5 near 1e-38) and flushed denormals (tanh(1e-45) gave 0)."""
    jf = jit(tanh_only)
    tiny = np.array([1e-45, -1e-45, 1e-38, -3e-38, 1e-30, 2.4e-4, 2.5e-4, 1e-3, -0.0, 0.0, 0.3, -5.0, 9.5,
                     np.inf, -np.inf, np.nan], np.float32)
    for scale in (1.0, 3.0, 0.5):
        a = (tiny * np.float32(scale)).astype(np.float32)
        got, want = jf(a), np.tanh(a)
        exact = np.tanh(a.astype(np.float64))
        finite = np.isfinite(exact) & (exact != 0)
        assert np.all(np.abs(got[finite] - exact[finite]) <= 4.2e-7 * np.abs(exact[finite])), (got, exact)
        assert np.array_equal(np.signbit(got), np.signbit(want))
        assert np.array_equal(np.isnan(got), np.isnan(want)) and got[0] == a[0]
    assert_compiled(jf)


def remainder_by_nan(c):
    return c % np.nan, np.floor_divide(c, np.nan)


@pytest.mark.parametrize("dtype", ["uint16", "int32", "int64", "bool", "float32"])
def test_remainder_by_a_nan_constant_writes_nan(dtype, monkeypatch):
    """``int_array % np.nan`` is all NaN. LLVM turned the kernel's ``fmod(float(c), nan)`` into an
    ``frem`` whose NaN is poison and deleted the store: the output kept what ``np.empty`` held (seeds
    120151789062, 706194). Outputs start as 77 here, so that an element the kernel never writes shows."""
    real_empty = np.empty
    monkeypatch.setattr(np, "empty", lambda shape, dtype=float, *args, **kwargs: np.full(shape, 77, dtype))
    jitted = jit(remainder_by_nan, backend="tvm")
    for shape in ((), (1, 1), (3, 2), (100,)):
        got = jitted(np.ones(shape, dtype))
        assert all(np.isnan(g).all() for g in got), f"{dtype}{list(shape)}: {got!r}"
    monkeypatch.setattr(np, "empty", real_empty)
    assert_compiled(jitted)


def chained_floor_divisions(b, c):
    return ((b // c) // b) // c, (b % c) % (c // b)


def test_chained_float_divmod_runs_outer_steps_on_numpy():
    """A float // or % of another one's result compiled for minutes (TVM re-analyses each step's selects
    in every enclosing one); the outer steps run on numpy, with numpy's values."""
    from astjit.backends.tvm.support import NESTED_DIVMOD_REASON

    jitted = jit(chained_floor_divisions, backend="tvm")
    for b, c in [(np.array([1.5, -2.0, 3.0, np.nan]), np.array([0.5, 2.0, -1.0, 0.0])),
                 (np.linspace(-3, 3, 37), np.linspace(2, -1, 37)), (np.float32([7.5]), np.float32([-0.0]))]:
        with np.errstate(all="ignore"):
            assert_same_as_numpy(chained_floor_divisions, b, c, jitted=jitted)
    reasons = {r for frag in jitted.fragments for e in frag.entries for r in (e.reasons or {}).values()}
    assert NESTED_DIVMOD_REASON in reasons


def uint64_scalar_over_strided(a, b):
    return (a / b) % 3.0


def test_uint64_scalar_above_int64_beside_a_strided_array_runs_on_numpy():
    """A 0-d uint64 above 2**63 crosses into a kernel as a Python int, which TVM's int parameter
    refuses: numpy's values, beside read-only and strided operands (whose kernel is retried on copies)."""
    jf = jit(uint64_scalar_over_strided, backend="tvm")
    for value in (2**64 - 2, 5, 2**63):
        for b in (np.arange(1, 11, dtype=np.uint16)[::2], np.arange(1, 6, dtype=np.uint16)):
            b.flags.writeable = False
            assert_same_as_numpy(uint64_scalar_over_strided, np.array(value, np.uint64), b, jitted=jf)


def uint64_with_large_ints(a):
    return ((a + 2**63) * 3) ^ 18446744073709551615, (a // 9223372036854775809) | 12345678901234567890


def uint64_compared_with_large_ints(a):
    return (a > 2**63) | (a == 18446744073709551615)


@pytest.mark.parametrize("dtype", ["uint64", "int64", "uint32"])
def test_python_ints_above_int64_compile_beside_uint64(dtype):
    """A Python int of 2**63 or more is a uint64 constant in a kernel (TVM refused it as an int64 and the
    block ran on numpy); beside int64 or smaller operands numpy raises OverflowError for the
    arithmetic, as the jitted function does, and compares it exactly."""
    jf = jit_unmeasured(uint64_with_large_ints)
    for k in range(3):
        a = (np.arange(12, dtype=np.uint64) * np.uint64(2**60) + np.uint64(k)).astype(dtype)
        if dtype == "uint64":
            assert_same_as_numpy(uint64_with_large_ints, a, jitted=jf)
        else:
            with pytest.raises(OverflowError) as plain:
                uint64_with_large_ints(a)
            with pytest.raises(OverflowError) as jitted:
                jf(a)
            assert str(plain.value) == str(jitted.value)
    if dtype == "uint64":
        assert_compiled(jf)
    compared = jit_unmeasured(uint64_compared_with_large_ints)      # (numpy runs these comparisons)
    for k in range(3):
        a = (np.arange(12, dtype=np.uint64) * np.uint64(2**60) + np.uint64(k)).astype(dtype)
        assert_same_as_numpy(uint64_compared_with_large_ints, a, jitted=compared)


def sum_of_minimum_below_zero(z):
    return np.minimum(z, -5).sum(), (z | -128).sum(axis=-1), np.clip(z, -9, -3).prod()


def sum_of_uint64_constants(a):
    return (np.full(a.shape, 2**64 - 1, np.uint64).sum(), (np.zeros(a.shape, np.uint64) + 2**63).sum(),
            np.full(a.shape, 2**63 + 1, np.uint64).sum())


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_sums_of_values_known_negative_wrap_as_numpys(dtype):
    """TVM marks integer adds as never overflowing (``add nuw``, unsigned too); LLVM folded the sum of
    values it knew to be negative (their top bits set, in the uint64 accumulator) to a wrong number:
    -128 for ``np.minimum(z, -5).sum()`` over 256 elements (numpy: -1280)."""
    jf = jit(sum_of_minimum_below_zero, backend="tvm")
    for n in (16, 256, 300, 1000, 257):
        z = (np.arange(2 * n) % 100).astype(dtype).reshape(2, n)
        for got, want in zip(jf(z), sum_of_minimum_below_zero(z)):
            assert np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want), (n, got, want)


def test_uint64_sums_of_constants_past_two_to_the_63():
    jf = jit(sum_of_uint64_constants, backend="tvm")
    for n in (5, 1025, 20_000):
        a = np.zeros(n)
        got, want = jf(a), sum_of_uint64_constants(a)
        assert all(type(g) is type(w) and g == w for g, w in zip(got, want)), (n, got, want)
