"""numpy's own BLAS dot product, called from a loop kernel (``np.dot(a[i, :j], x[:j])`` in a loop).

numpy computes ``x @ y`` of two float64 (float32) vectors whose strides are positive multiples of the
item size as ``0.0 + cblas_ddot(n, x, incx, y, incy)`` (``cblas_sdot``, the sum taken in double), and
otherwise one product at a time in order; ``np.dot`` does the same except for vectors of one element,
whose product it returns as it is (``np.dot([-0.0], [1.0])`` is -0.0, ``@`` gives 0.0). The order in
which BLAS adds the products depends on the library, its version and the CPU (OpenBLAS picks a kernel
per CPU at run time and splits long vectors among its threads), so a kernel gives numpy's bits only
by calling the very function numpy calls.

That function is found among the libraries the process has loaded (numpy's wheel bundles
scipy-openblas in ``numpy.libs``), and used only after calls of it through ctypes gave the bits of
``np.dot`` and ``@`` on vectors of several lengths and strides. The kernel is linked against that library
(``link_options``), so the symbol resolves within the kernel's own dependencies; making the library's
symbols global instead would let a BLAS loaded later (scipy's, with the same internal names such as
``gotoblas``) bind to numpy's.
"""

import ctypes
import functools
import os
import shutil
import tempfile

import numpy as np

# (symbol, integer type of n and the increments), most specific first: numpy's wheels (scipy-openblas,
# 64-bit integers), then a system CBLAS with 64-bit or 32-bit integers
CANDIDATES = {
    "float64": [("scipy_cblas_ddot64_", "int64"), ("cblas_ddot64_", "int64"), ("scipy_cblas_ddot", "int32"),
                ("cblas_ddot", "int32")],
    "float32": [("scipy_cblas_sdot64_", "int64"), ("cblas_sdot64_", "int64"), ("scipy_cblas_sdot", "int32"),
                ("cblas_sdot", "int32")],
}
LENGTHS = (0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 100, 1000, 4099, 20_011)
STEPS = (1, 2, 5)


class BlasDot:
    """A dot function of numpy's BLAS: its symbol, the integer type it takes, its library's path."""

    def __init__(self, symbol, int_dtype, library):
        self.symbol = symbol
        self.int_dtype = int_dtype
        self.library = library


def _loaded_libraries() -> list:
    """Paths of the shared libraries this process has loaded that may hold a BLAS, numpy's own first."""
    own = os.path.realpath(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs"))
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split(None, 5)[-1].strip() for line in f if ".so" in line}
    except OSError:              # not Linux: the dot stays Python
        return []
    paths = [p for p in paths if os.path.isfile(p) and any(k in os.path.basename(p).lower() for k in ("blas", "mkl"))]
    return sorted(paths, key=lambda p: (not p.startswith(own), p))


def _agrees_with_numpy(fn, dtype, int_type) -> bool:
    """Whether ``0.0 + fn(n, x, incx, y, incy)`` (added in double, as numpy adds it) gives the bits of
    ``@`` and of ``np.dot`` (the product itself for one element) on vectors of several lengths and
    strides, -0.0 among them."""
    fn.restype = ctypes.c_double if dtype == "float64" else ctypes.c_float
    fn.argtypes = [int_type, ctypes.c_void_p, int_type, ctypes.c_void_p, int_type]
    rng = np.random.default_rng(20261124)
    cases = [(np.array([-0.0], dtype), np.array([1.0], dtype), 1)]
    for n in LENGTHS:
        for step in STEPS:
            if n * step <= 50_000:
                cases.append((rng.standard_normal(n * step).astype(dtype), rng.standard_normal(n * step).astype(dtype),
                              step))
    for a, b, step in cases:
        x, y = a[::step], b[::step]
        got = np.dtype(dtype).type(0.0 + fn(len(x), x.ctypes.data, step, y.ctypes.data, step))
        got_dot = x[0] * y[0] if len(x) == 1 else got
        if got.tobytes() != (x @ y).tobytes() or got_dot.tobytes() != np.dot(x, y).tobytes():
            return False
    return True


@functools.cache
def dot_function(dtype: str) -> BlasDot | None:
    """numpy's BLAS dot for ``dtype`` (float64, float32), checked against numpy; None where not found."""
    for path in _loaded_libraries():
        try:
            library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)      # (already loaded: nothing is loaded)
        except OSError:
            continue
        for symbol, int_dtype in CANDIDATES.get(dtype, []):
            fn = getattr(library, symbol, None)
            int_type = ctypes.c_int64 if int_dtype == "int64" else ctypes.c_int32
            if fn is not None and _agrees_with_numpy(fn, dtype, int_type):
                return BlasDot(symbol, int_dtype, path)
    return None


def link_options(libraries) -> list:
    """Options of the linker that make a kernel library depend on ``libraries`` (their paths)."""
    options = ["-Wl,--no-as-needed"]
    for path in sorted(set(libraries)):
        options += [path, f"-Wl,-rpath,{os.path.dirname(path)}"]
    return options


class LinkedKernel:
    """A compiled loop kernel that calls numpy's BLAS, run from a library linked against it (TVM's
    in-memory code would look the symbol up among the process's global ones, where it is not)."""

    def __init__(self, compiled, libraries):
        from .loader import tvm_ffi_module

        self.compiled = compiled
        self.libraries = list(libraries)
        folder = tempfile.mkdtemp(prefix="astjit-kernel-")
        try:
            path = os.path.join(folder, "kernel.so")
            self.export_library(path)
            self.loaded = tvm_ffi_module().load_module(path)     # (loaded: the file may go)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @property
    def mod(self):
        return self.compiled.mod

    def export_library(self, path, **options) -> None:
        from .runtime import export_library

        export_library(self.compiled, path, options=link_options(self.libraries), **options)

    def __getitem__(self, name):
        return self.loaded[name]
