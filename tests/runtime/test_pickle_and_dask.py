"""Jitted functions pickle and scale out: by reference where module.qualname names them, by value (the
original function and the options) under cloudpickle otherwise; nothing compiled is pickled, and every
process compiles its own kernels. Workers: multiprocessing, concurrent.futures, joblib, dask, distributed."""

import io
import linecache
import multiprocessing
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import jitted_kernels as jk
import numpy as np
import pytest
from differential import assert_values_match

import astjit.pickling
from astjit import JitFunction, jit

RNG = np.random.default_rng(11)
SCALES = (0.5, 1.5, -2.0)


def inputs(n=1000, dtype=np.float64, count=3):
    return [RNG.standard_normal(n).astype(dtype) for _ in range(count)]


def make_nested(k):
    @jit(strict=True, backend="tvm")
    def nested(x, s):
        y = np.tanh(x * s) + k
        return y * y
    return nested


def keys(jf) -> set:
    return {e.key for frag in jf.fragments for e in frag.entries}


@pytest.fixture
def forget_by_value(monkeypatch):
    """A function that makes this process forget the jitted functions pickled or unpickled by value, as
    a new process would not know them (the registries are restored after the test)."""
    monkeypatch.setattr(astjit.pickling, "_by_token", type(astjit.pickling._by_token)())
    monkeypatch.setattr(astjit.pickling, "_recent", type(astjit.pickling._recent)())

    def forget():
        astjit.pickling._by_token.clear()
        astjit.pickling._recent.clear()
    return forget


# backend="tvm" here and in make_nested: compiled code is kept without the measurement against the
# block's Python, because test_distributed_by_value_compiles_once_per_worker counts each worker's
# Fragment calls; a block measured slower than its Python (numpy's exp where it is AVX-512) runs
# inline for the next calls, which its Fragment does not count.
NOTEBOOK_CELL = '''\
import numpy as np
from astjit import jit


@jit(backend="tvm")
def cell_kernel(x, s):
    y = np.exp(x * s) + 1.0
    return y / y.sum()
'''


@pytest.fixture
def notebook_function(monkeypatch, tmp_path):
    """A jitted function of ``__main__`` whose source exists only in this process's linecache, as in a
    notebook cell: no other process can read its file."""
    filename = str(tmp_path / "no-such-dir" / "cell_7.py")
    linecache.cache[filename] = (len(NOTEBOOK_CELL), None, NOTEBOOK_CELL.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(NOTEBOOK_CELL, filename, "exec"), namespace)
    jf = namespace["cell_kernel"]
    monkeypatch.setattr(sys.modules["__main__"], "cell_kernel", jf, raising=False)
    yield jf
    linecache.cache.pop(filename, None)


# -- in-process round trips -----------------------------------------------------------------------
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_module_function_pickles_by_reference(protocol):
    data = pickle.dumps(jk.squash, protocol)
    assert b"jitted_kernels" in data and b"squash" in data and len(data) < 80
    assert pickle.loads(data) is jk.squash
    for x, s in zip(inputs(), SCALES):
        assert_values_match(pickle.loads(data)(x, s), jk.squash.original(x, s))
    assert pickle.dumps(jk.squash, protocol) == data                 # compiled state is never pickled


def test_options_methods_and_static_methods_pickle_by_reference():
    for f in (jk.normalize, jk.affine, jk.Scaler.double):
        assert pickle.loads(pickle.dumps(f)) is f
    assert (jk.normalize.strict, jk.affine.backend) == (True, "numpy")
    scaler = jk.Scaler(3.0)
    bound = pickle.loads(pickle.dumps(scaler.apply))                 # pickle's (getattr, (obj, name))
    triple = pickle.loads(pickle.dumps(jk.Scaler.triple))
    for x, s in zip(inputs(16), SCALES):
        assert_values_match(pickle.loads(pickle.dumps(jk.normalize))(x, s), jk.normalize.original(x, s))
        assert_values_match(pickle.loads(pickle.dumps(jk.affine))(x, s), jk.affine.original(x, s))
        assert_values_match(bound(x), jk.Scaler.apply.original(scaler, x))
        assert_values_match(jk.Scaler.double(x), jk.Scaler.double.original(x))
        assert_values_match(triple(x), x * 3.0 + 1.0)


def test_nested_function_needs_cloudpickle_and_is_rebuilt_with_its_options(forget_by_value):
    cloudpickle = pytest.importorskip("cloudpickle")
    nested = make_nested(1.25)
    with pytest.raises((pickle.PicklingError, AttributeError), match="local object"):
        pickle.dumps(nested)                                         # as for a plain nested function
    data = cloudpickle.dumps(nested)
    assert cloudpickle.loads(data) is nested                         # same process: the same object
    nested(inputs(8)[0], 1.0)
    assert cloudpickle.dumps(nested) == data                         # compiled state is never pickled
    forget_by_value()
    rebuilt = cloudpickle.loads(data)
    assert isinstance(rebuilt, JitFunction) and rebuilt is not nested
    assert (rebuilt.strict, rebuilt.backend, rebuilt.__qualname__) == (True, "tvm", nested.__qualname__)
    assert rebuilt.cache_info() == {"__astjit_fragment_0": []}      # compiles on its own first call
    assert cloudpickle.loads(data) is rebuilt                        # later loads reuse it
    for x, s in zip(inputs(100), SCALES):
        assert_values_match(rebuilt(x, s), nested.original(x, s))
    assert [e["mode"] for e in rebuilt.cache_info()["__astjit_fragment_0"]] == ["tvm"]


def test_main_function_by_reference_under_pickle_by_value_under_cloudpickle(notebook_function):
    cloudpickle = pytest.importorskip("cloudpickle")
    plain = pickle.dumps(notebook_function)
    assert b"__main__" in plain and b"cell_kernel" in plain and len(plain) < 80
    assert pickle.loads(plain) is notebook_function
    by_value = cloudpickle.dumps(notebook_function)
    assert b"np.exp(x * s)" in by_value                              # the source travels with it
    # a fresh interpreter has neither this __main__ nor the cell's file: it rebuilds from the pickle
    code = ("import pickle, sys, numpy as np\n"
            "f = pickle.loads(sys.stdin.buffer.read())\n"
            "for s in (0.5, -1.0, 2.0):\n"
            "    x = np.linspace(-1, 1, 50) * s\n"
            "    np.save(sys.stdout.buffer, f(x, s))\n"
            "print(f.cache_info()['__astjit_fragment_0'][0]['mode'], file=sys.stderr)\n")
    run = subprocess.run([sys.executable, "-c", code], input=by_value, capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()
    out = io.BytesIO(run.stdout)
    for s in (0.5, -1.0, 2.0):
        x = np.linspace(-1, 1, 50) * s
        assert_values_match(np.load(out), notebook_function.original(x, s))
    assert run.stderr.decode().split()[-1] in ("tvm", "mixed")


# -- worker processes -------------------------------------------------------------------------------
def check_worker_results(results, arrays):
    by_pid = {}
    for (pid, before, got), (x, s) in zip(results, arrays):
        assert_values_match(got, jk.normalize.original(x, s))
        by_pid.setdefault(pid, []).append(before)
    for befores in by_pid.values():
        assert befores[0] == 0                    # nothing compiled came from the parent process
        assert all(b <= 2 for b in befores)       # two shapes: at most two specializations per worker
    return by_pid


def worker_arrays():
    return [(x, s) for x, s in zip(inputs(500) + inputs(64, np.float32), SCALES * 2)]


def test_process_pool_executor_workers_compile_their_own():
    arrays = worker_arrays()
    jk.normalize(*arrays[0])                      # compiled here first: workers do not get it
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert_values_match(list(pool.map(jk.squash, *zip(*arrays))),
                            [jk.squash.original(x, s) for x, s in arrays])
        check_worker_results(list(pool.map(jk.normalize_in_worker, *zip(*arrays))), arrays)


def test_multiprocessing_pool_by_reference():
    arrays = worker_arrays()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        reports = pool.starmap(jk.normalize_in_worker, arrays)
        got = pool.starmap(jk.normalize, arrays)
    for g, (x, s) in zip(got, arrays):
        assert_values_match(g, jk.normalize.original(x, s))
    check_worker_results(reports, arrays)


def test_joblib_loky_by_reference_and_by_value():
    joblib = pytest.importorskip("joblib")
    arrays = worker_arrays()
    nested = make_nested(1.25)
    with joblib.parallel_config(backend="loky", n_jobs=2):
        for f in (jk.squash, nested):                            # by reference, by value (cloudpickle)
            got = joblib.Parallel()(joblib.delayed(f)(x, s) for x, s in arrays)
            assert_values_match(got, [f.original(x, s) for x, s in arrays])


# -- dask ---------------------------------------------------------------------------------------------
def test_dask_map_blocks_threaded():
    da = pytest.importorskip("dask.array")
    import dask

    nested = make_nested(1.5)
    for dtype in (np.float64, np.float32):
        x = RNG.standard_normal(2000).astype(dtype)
        dx = da.from_array(x, chunks=600)                        # blocks of 600 and 200: two shapes
        for s in SCALES:
            for f in (jk.squash, nested):
                # meta= spares dask its probe call on an empty block (a specialization of shape (0,))
                got = da.map_blocks(f, dx, s, meta=np.array((), dtype)).compute(scheduler="threads")
                assert_values_match(got, f.original(x, s))
    blocks = {(np.dtype(dtype), (n,), True) for dtype in (np.float64, np.float32) for n in (600, 200)}
    assert {key[0] for key in keys(nested)} == blocks               # no probe of an empty block
    assert dask.base.tokenize(jk.squash) == dask.base.tokenize(pickle.loads(pickle.dumps(jk.squash)))
    assert dask.base.tokenize(nested) == dask.base.tokenize(nested) != dask.base.tokenize(make_nested(1.5))


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def test_distributed_map_and_submit_by_reference(client):
    arrays = worker_arrays() * 2
    futures = client.map(jk.squash, *zip(*arrays), pure=False)
    for got, (x, s) in zip(client.gather(futures), arrays):
        assert_values_match(got, jk.squash.original(x, s))
    reports = client.gather([client.submit(jk.normalize_in_worker, x, s, pure=False) for x, s in arrays])
    check_worker_results(reports, arrays)


def test_distributed_by_value_compiles_once_per_worker(client, notebook_function):
    nested = make_nested(1.75)
    arrays = worker_arrays() * 2
    for f in (nested, notebook_function):
        futures = client.map(f, *zip(*arrays), pure=False)
        for got, (x, s) in zip(client.gather(futures), arrays):
            assert_values_match(got, f.original(x, s))
        token = f._pickle_token                                  # set when it was pickled by value

        def specializations_and_calls(token=token):
            import astjit
            import astjit.pickling

            rebuilt = astjit.pickling._by_token.get(token)
            if rebuilt is None:
                return 0, 0, "not rebuilt here"
            if not rebuilt.fragments:      # (a worker that unpickled it without running a task, or a bug)
                return 0, 0, str(astjit.explain(rebuilt))
            return sum(len(fr.entries) for fr in rebuilt.fragments), rebuilt.fragments[0].calls, ""

        counts = list(client.run(specializations_and_calls).values())
        assert all(n <= 2 for n, _, _ in counts), counts          # two shapes: at most two compiles
        assert sum(calls for _, calls, _ in counts) == len(arrays), counts   # one JitFunction per worker ran them all


SHIPPED = ["import numpy as np\n\n\ndef first(x, s):\n    return np.tanh(x * s) + 1.0\n",
           "import numpy as np\n\n\ndef second(x, s):\n    return np.exp(x) * s - 2.0\n"]


def test_functions_shipped_under_one_file_name_that_is_no_file_keep_their_own_source(monkeypatch):
    """cloudpickle 3.1.3 names the file of every function it ships by value ``<dynamic-code>``: two
    such functions whose lines overlap there, with other lines already in linecache under that name,
    must each be compiled from its own source."""
    monkeypatch.setitem(linecache.cache, "<dynamic-code>", (90, None, ["# another function's line\n"] * 9,
                                                            "<dynamic-code>"))
    rebuilt, plain = [], []
    for k, text in enumerate(SHIPPED):
        namespace = {}
        exec(compile(text, "<dynamic-code>", "exec"), namespace)
        fn = namespace[("first", "second")[k]]
        plain.append(fn)
        source = (4, text.splitlines(True)[3:])
        rebuilt.append(astjit.pickling.rebuild(f"shipped-{k}-{id(fn)}", fn, False, None, source))
    x = np.linspace(-1, 1, 50)
    for jf, fn in zip(rebuilt, plain):
        for s in (0.5, 2.0):
            assert_values_match(jf(x, s), fn(x, s))
        assert jf.fragments, str(astjit.explain(jf))
        assert "does not match" not in str(astjit.explain(jf))
