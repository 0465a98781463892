"""Long expressions (a sum of hundreds of terms): each op's expression is built once while the lowering
sizes them, a kernel fuses at most ``FUSED_OPS_AT_MOST`` ops per stage, so the first call's compile
time grows linearly with the length; and the source parses however deep Python itself compiles it
(frontend/nesting). Results stay numpy's: the kernel adds and multiplies in the order written."""

import importlib.util
import re

import numpy as np
import pytest
from differential import assert_compiled, assert_same_as_numpy

from astjit import jit
from astjit.backends.tvm import scalar_math as sm
from astjit.backends.tvm.expression_size import FUSED_OPS_AT_MOST

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def written(tmp_path, params, expression):
    """``def f(params): return expression``, from a file of its own (astjit reads the source)."""
    path = tmp_path / f"long_{abs(hash((params, expression)))}.py"
    path.write_text(f"import numpy as np\n\n\ndef f({params}):\n    return {expression}\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def tir_of(jf):
    return "\n".join(s.compiled.artifacts["tir"]() for f in jf.fragments for e in f.entries
                     for s in e.segments if s.backend == "tvm")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_sum_of_300_terms_is_compiled_with_numpys_values(tmp_path, dtype):
    f = written(tmp_path, "a", " + ".join(["a"] * 300))
    a = (np.random.default_rng(0).standard_normal(1000) * 100).astype(dtype)
    jf = assert_same_as_numpy(f, a)
    assert_compiled(jf)
    np.testing.assert_array_equal(jf(a), f(a))         # added in the order written: numpy's bits


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_a_product_chain_of_300_terms_is_compiled_with_numpys_values(tmp_path, dtype):
    f = written(tmp_path, "a, b", " * ".join(["a", "b"] * 150))
    rng = np.random.default_rng(1)
    if dtype == np.int64:                               # 3 ** 150 wraps around, as numpy's does
        a, b = rng.integers(-3, 4, 1000), rng.integers(-3, 4, 1000)
    else:                                               # some products overflow to inf, some vanish
        a, b = rng.uniform(0.2, 3.0, 1000), rng.uniform(0.2, 3.0, 1000)
    jf = assert_same_as_numpy(f, a, b)
    assert_compiled(jf)
    np.testing.assert_array_equal(jf(a, b), f(a, b))


def test_a_sum_of_distinct_arguments(tmp_path):
    names = [f"a{k}" for k in range(40)]
    f = written(tmp_path, ", ".join(names), " + ".join(names))
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((7, 9)).astype(np.float32) for _ in names]
    assert_compiled(assert_same_as_numpy(f, *arrays))


def test_a_long_chain_is_computed_in_stages_of_bounded_length(tmp_path):
    terms = 4 * FUSED_OPS_AT_MOST
    f = written(tmp_path, "a, b", " + ".join(["a * b"] * (terms // 2)))
    a, b = np.arange(100.0), np.arange(100.0) - 3
    jf = assert_same_as_numpy(f, a, b)
    stages = set(re.findall(r"\bstage\d+\b", tir_of(jf)))
    assert 3 <= len(stages) <= 2 * terms // FUSED_OPS_AT_MOST, stages


def test_each_ops_expression_is_built_a_bounded_number_of_times(tmp_path, monkeypatch):
    """Sizing each value of a chain built the whole chain again: n^2 / 2 rule applications (and as
    many walks of the growing expression) for n ops; a sum of 240 terms took 27 s to compile."""
    calls = []

    def counted(rule, operands):
        calls.append(rule)
        return apply_once(rule, operands)

    apply_once = sm.apply_once
    monkeypatch.setattr(sm, "apply_once", counted)
    n = 120
    f = written(tmp_path, "a", " + ".join(["a"] * n))
    jf = jit(f)
    a = np.arange(10.0)
    np.testing.assert_array_equal(jf(a), f(a))
    assert_compiled(jf)
    assert len(calls) <= 4 * n, len(calls)
