"""The numpy backend (backends/numpy_backend): each node's reference implementation. It writes an
elementwise result into an intermediate array at its last use, as numpy reuses an operator's
temporary; results, dtypes, memory order and the caller's arrays stay numpy's."""

import numpy as np
import pytest

from astjit import jit

rng = np.random.default_rng(11)


def chain(x, y):
    return (x - 1.0) * y + 2.0


def keeps_a_view(x):
    t = x * 2.0
    v = t[::2]
    u = t + 1.0          # t's last use, while v (a view of it) is still read below
    return u, v * 3.0


def astype_of_input(x):
    t = x.astype(np.float64, copy=False)        # x itself where x is float64
    return t * 2.0, x


def operand_twice(x):
    t = x + 1.0
    return t * t


def mixed_layouts(x, y):
    t = x * 2.0          # C or F, as x
    return t + y


def int_to_float(a):
    t = a + 1            # int64
    return t / 2         # float64: not written into the int64 intermediate


def powers(x):
    t = x * 3.0
    return t ** 0.5, (x * 2.0) ** -1, (x + 1.0) ** 2      # numpy's sqrt, reciprocal and square


def same(a, b):
    return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
            and a.flags.c_contiguous == b.flags.c_contiguous and a.flags.f_contiguous == b.flags.f_contiguous
            and np.array_equal(a, b, equal_nan=True))


@pytest.mark.parametrize("fn, make", [
    (chain, lambda n: (rng.random(n), rng.random(n))),
    (keeps_a_view, lambda n: (rng.random(n),)),
    (astype_of_input, lambda n: (rng.random(n),)),
    (astype_of_input, lambda n: (rng.random(n).astype(np.float32),)),
    (operand_twice, lambda n: (rng.random(n),)),
    (mixed_layouts, lambda n: (np.asfortranarray(rng.random((n // 50, 50))), rng.random((n // 50, 50)))),
    (mixed_layouts, lambda n: (rng.random((n // 50, 50)), np.asfortranarray(rng.random((n // 50, 50))))),
    (int_to_float, lambda n: (rng.integers(-9, 9, n),)),
    (powers, lambda n: (rng.standard_normal(n) + 1j * rng.standard_normal(n),)),
    (powers, lambda n: (rng.standard_normal(n).astype(np.complex64),)),
    (powers, lambda n: (rng.standard_normal(n),)),
])
@pytest.mark.parametrize("n", [100, 200_000])
def test_results_and_arguments_are_numpys(fn, make, n):
    jitted = jit(fn, backend="numpy")
    for _ in range(3):
        args = make(n)
        kept = [a.copy(order="K") for a in args]
        want, got = fn(*[a.copy(order="K") for a in args]), jitted(*args)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        assert all(same(a, b) for a, b in zip(want, got)), fn.__name__
        assert all(same(a, b) for a, b in zip(args, kept)), "an argument changed"


def test_an_intermediate_takes_the_result():
    """The chain's product and sum go into the difference's array: a call allocates one array of
    the result's size (three through fresh arrays)."""
    import tracemalloc

    jitted = jit(chain, backend="numpy")
    x, y = rng.random(100_000), rng.random(100_000)
    jitted(x, y)
    tracemalloc.start()
    try:
        jitted(x, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert x.nbytes <= peak < 1.5 * x.nbytes, (peak, x.nbytes)
