"""The CUDA compiler astjit puts in place of TVM's (no fast math) and the exact-constant pass, checked
without a GPU: NVRTC compiles where the ``cuda`` extra is installed (CI installs it)."""

import numpy as np
import pytest

from astjit.backends.tvm import cuda_compile, cuda_constants
from astjit.backends.tvm.runtime import tvm_module

needs_nvrtc = pytest.mark.skipif(cuda_compile.unavailable() is not None,
                                 reason=f"no CUDA compiler here: {cuda_compile.unavailable()}")


@needs_nvrtc
def test_a_kernel_compiles_to_a_cubin():
    source = 'extern "C" __global__ void k(double* a) { a[threadIdx.x] = __longlong_as_double(1LL); }'
    cubin = cuda_compile.compile_cubin(source, "sm_90")
    assert cubin[:4] == b"\x7fELF"                   # a cubin is an ELF image


@needs_nvrtc
def test_a_compile_error_names_the_compilers_own_error_line():
    with pytest.raises(cuda_compile.CudaCompileError, match="error") as info:
        cuda_compile.compile_cubin('extern "C" __global__ void k(float* a) { a[0] = undefined_name; }', "sm_90")
    assert "undefined_name" in str(info.value)


def test_the_compile_flags_keep_ieee_semantics():
    assert set(cuda_compile.EXACT_FLAGS) == {"--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true"}


@pytest.mark.parametrize("value", [1e-20, 0.30000000000000004, -0.0, 1e300, 2.5, float("inf"), float("nan")])
def test_a_float64_constant_becomes_its_bit_pattern(value):
    tvm = tvm_module()
    expr = cuda_constants.exact_expression(tvm.tirx.FloatImm("float64", value))
    assert expr.op.name == "tirx.call_pure_extern" and expr.args[0].value == "__longlong_as_double"
    bits = int(expr.args[1].value)
    assert np.array([bits], np.int64).view(np.float64)[0].tobytes() == np.float64(value).tobytes()


def test_reinterpretations_become_bit_casts_and_float32_constants_stay():
    tvm = tvm_module()
    tirx = tvm.tirx
    inner = tirx.call_intrin("int32", "tirx.reinterpret", tirx.FloatImm("float32", 2.0))
    outer = tirx.call_intrin("float32", "tirx.reinterpret", inner)
    expr = cuda_constants.exact_expression(outer)
    assert expr.args[0].value == "__int_as_float" and expr.args[1].args[0].value == "__float_as_int"
    assert float(expr.args[1].args[1].value) == 2.0                # float32 prints exactly (hex)


def test_the_exact_compiler_is_in_place_only_during_a_build():
    import tvm_ffi

    before = tvm_ffi.get_global_func(cuda_compile.CALLBACK, allow_missing=True)
    with cuda_compile.exact_compiler("sm_90"):
        inside = tvm_ffi.get_global_func(cuda_compile.CALLBACK, allow_missing=True)
        assert inside is not None and not (before is not None and inside.same_as(before))
    after = tvm_ffi.get_global_func(cuda_compile.CALLBACK, allow_missing=True)
    assert (after is None) == (before is None)
