"""The on-disk kernel cache: a new process reuses kernels without the compiler, and never a wrong one.

Each test uses its own cache folder. Kernels are exported from a background thread: ``wait()`` lets a
test read what was written.
"""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from differential import assert_same_as_numpy, assert_values_match

from astjit import CacheDirectoryWarning, Unsupported, backends, explain, jit
from astjit.backends import Backend, Compiled
from astjit.graph.fingerprint import NotFingerprintable, value_text
from astjit.inspection.codegen import kernel_code
from astjit.runtime import disk_cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "kernels"
    monkeypatch.setenv("ASTJIT_CACHE", "1")
    monkeypatch.setenv("ASTJIT_CACHE_DIR", str(folder))
    return folder


def entries(folder):
    return sorted(p.parent for p in folder.glob("v*/*/*/meta.json"))


def chain(x, y):
    z = np.exp(x) * 2.0 + y
    return z.sum(), z


def chain_again(x, y):        # the same block in another function: the same typed graph, the same kernel
    z = np.exp(x) * 2.0 + y
    return z.sum(), z


def descriptions(jf):
    return [s.description for f in jf.fragments for e in f.entries for s in e.segments if s.backend == "tvm"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_stored_kernel_is_loaded_and_gives_numpys_results(cache_dir, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(300).astype(dtype)
    y = rng.random(300).astype(dtype) + 0.5        # no cancellation: float32 exp is within an ulp of numpy's
    first = jit(chain)
    assert_same_as_numpy(chain, x, y, jitted=first)
    disk_cache.wait()
    assert len(entries(cache_dir)) == 1
    second = jit(chain_again)
    for scale in (1.0, -3.0, 0.0):
        assert_same_as_numpy(chain_again, x * scale, y, jitted=second)
    special = x.copy()
    special[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    with np.errstate(over="ignore", invalid="ignore"):
        assert_same_as_numpy(chain_again, special, y, jitted=second)
    assert all(d.endswith("(from the disk cache)") for d in descriptions(second)) and descriptions(second)
    assert not any(d.endswith("(from the disk cache)") for d in descriptions(first))
    tir = kernel_code(second.fragments[0].entries[0].segments[0], "tir")     # lowered again on demand
    assert "T.prim_func" in tir


def test_another_shape_or_dtype_is_another_entry(cache_dir):
    jf = jit(chain)
    for n, dtype in [(10, np.float64), (11, np.float64), (10, np.float32)]:
        assert_same_as_numpy(chain, np.arange(n, dtype=dtype), np.ones(n, dtype), jitted=jf)
    disk_cache.wait()
    assert len(entries(cache_dir)) == 3


def reduce_along(x, axis):
    return np.sum(x * 2.0, axis=axis)


def test_a_value_the_kernel_depends_on_is_part_of_the_key(cache_dir):
    x = np.arange(12.0).reshape(3, 4)
    assert_same_as_numpy(reduce_along, x, 0)
    disk_cache.wait()
    jf = jit(reduce_along)
    for axis in (1, 0, -1):
        assert_same_as_numpy(reduce_along, x, axis, jitted=jf)


@pytest.mark.parametrize("damage", ["truncated kernel", "garbage meta", "foreign key"])
def test_a_damaged_or_foreign_entry_is_ignored_and_rebuilt(cache_dir, damage):
    x, y = np.linspace(0, 1, 50), np.ones(50)
    assert_same_as_numpy(chain, x, y)
    disk_cache.wait()
    [entry] = entries(cache_dir)
    if damage == "truncated kernel":
        kernel = next(entry.glob("*.so"))
        kernel.write_bytes(kernel.read_bytes()[:200])
    elif damage == "garbage meta":
        (entry / "meta.json").write_text("{not json")
    else:
        meta = json.loads((entry / "meta.json").read_text())
        meta["key"] += "\nwritten for another graph"
        (entry / "meta.json").write_text(json.dumps(meta))
    jf = jit(chain)
    assert_same_as_numpy(chain, x, y, jitted=jf)
    assert not any(d.endswith("(from the disk cache)") for d in descriptions(jf))     # compiled again
    disk_cache.wait()
    assert entries(cache_dir) == [entry]                                                # and stored again
    assert_same_as_numpy(chain, x, y, jitted=jit(chain_again))


def assert_refused_and_left_alone(folder, n):
    """The cache at ``folder`` is refused with a warning, and a jitted call writes nothing there."""
    with pytest.warns(CacheDirectoryWarning, match="other users can write"):
        assert disk_cache.active() is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheDirectoryWarning)
        assert_same_as_numpy(chain, np.ones(n), np.ones(n))
    disk_cache.wait()
    assert entries(folder) == []


def test_a_folder_other_users_can_write_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    monkeypatch.setenv("ASTJIT_CACHE", "1")
    monkeypatch.setenv("ASTJIT_CACHE_DIR", str(folder))
    assert_refused_and_left_alone(folder, 8)


def test_a_relative_folder_is_checked_where_it_is_used(tmp_path, monkeypatch):
    """A relative ASTJIT_CACHE_DIR was checked once, against the first working directory, and then
    followed every later ``chdir``: into a folder other users can write."""
    private, shared = tmp_path / "private", tmp_path / "shared"
    private.mkdir(mode=0o700)
    shared.mkdir()
    (shared / "kernels").mkdir(mode=0o777)
    (shared / "kernels").chmod(0o777)
    monkeypatch.setenv("ASTJIT_CACHE", "1")
    monkeypatch.setenv("ASTJIT_CACHE_DIR", "kernels")
    monkeypatch.chdir(private)
    assert disk_cache.active().root == private / "kernels"
    monkeypatch.chdir(shared)
    assert_refused_and_left_alone(shared / "kernels", 9)


def test_a_folder_under_one_anyone_may_replace_is_refused(tmp_path, monkeypatch):
    """A private cache folder inside a folder everyone may write to (without the sticky bit of
    ``/tmp``): another user could rename it away and put a folder of their own in its place."""
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    monkeypatch.setenv("ASTJIT_CACHE", "1")
    monkeypatch.setenv("ASTJIT_CACHE_DIR", str(open_to_all / "kernels"))
    with pytest.warns(CacheDirectoryWarning, match="above"):
        assert disk_cache.active() is None
    open_to_all.chmod(0o1777)                            # the sticky bit: only the owner may rename
    monkeypatch.setenv("ASTJIT_CACHE_DIR", str(open_to_all / "kernels2"))
    assert disk_cache.active() is not None


def test_missing_parents_are_made_private_whatever_the_umask(tmp_path, monkeypatch):
    """Under ``umask 000`` the parents ``mkdir(parents=True)`` made were open to everyone, and the
    check above the cache folder then refused the cache at every run."""
    monkeypatch.setenv("ASTJIT_CACHE", "1")
    monkeypatch.setenv("ASTJIT_CACHE_DIR", str(tmp_path / "home" / ".cache" / "astjit"))
    old = os.umask(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CacheDirectoryWarning)
            assert disk_cache.active() is not None
    finally:
        os.umask(old)
    for folder in (tmp_path / "home", tmp_path / "home" / ".cache", tmp_path / "home" / ".cache" / "astjit"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_a_home_relative_folder_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("ASTJIT_CACHE", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ASTJIT_CACHE_DIR", "~/kernels")
    monkeypatch.chdir(tmp_path)
    assert disk_cache.active().root == tmp_path / "kernels"
    assert not (tmp_path / "~").exists()


def test_an_entry_in_a_folder_others_can_write_is_not_loaded(cache_dir):
    """The folders astjit makes inside the cache are private; an entry in one that other users can
    write to (they could have put it there) is compiled again, not loaded."""
    x, y = np.linspace(0, 1, 40), np.linspace(1, 2, 40)
    assert_same_as_numpy(chain, x, y, jitted=jit(chain))
    disk_cache.wait()
    [entry] = entries(cache_dir)
    entry.parent.chmod(0o777)
    again = jit(chain_again)
    assert_same_as_numpy(chain_again, x, y, jitted=again)
    assert descriptions(again) and not any(d.endswith("(from the disk cache)") for d in descriptions(again))
    entry.parent.chmod(0o700)
    third = jit(chain_again)
    assert_same_as_numpy(chain_again, x, y, jitted=third)
    assert all(d.endswith("(from the disk cache)") for d in descriptions(third))


def test_turned_off_writes_nothing(cache_dir, monkeypatch):
    monkeypatch.setenv("ASTJIT_CACHE", "0")
    assert_same_as_numpy(chain, np.ones(8), np.ones(8))
    disk_cache.wait()
    assert not cache_dir.exists() or entries(cache_dir) == []


def test_nothing_is_written_where_tvm_failed_to_import(cache_dir, monkeypatch):
    """A process whose ``import tvm`` failed (a module shadowing it on ``sys.path``) runs its blocks as
    Python for a reason of its own: stored, that choice would keep every later process on Python."""
    import astjit.backends.tvm as tvm_backend

    monkeypatch.setattr(tvm_backend, "import_error", lambda: "ImportError: a shadowing tvm.py")
    assert_same_as_numpy(chain, np.ones(8), np.ones(8))
    disk_cache.wait()
    assert not cache_dir.exists() or entries(cache_dir) == []


def half_sum(a, b):
    return a * 2 + b


def half_sum_again(a, b):        # the same block: the entry the first one stored
    return a * 2 + b


def test_a_fallback_loaded_from_the_cache_is_logged_as_when_it_was_made(cache_dir, monkeypatch, caplog):
    monkeypatch.setenv("ASTJIT_LOG", "fallbacks")
    args = (np.ones(3, np.float16), np.ones(3, np.float16))         # (float16: nothing compiles)
    for fn in (half_sum, half_sum_again):
        caplog.clear()
        with caplog.at_level("INFO", logger="astjit"):
            assert_same_as_numpy(fn, *args)
        disk_cache.wait()
        assert any("[fallbacks]" in r.getMessage() and "line" in r.getMessage() and "float16" in r.getMessage()
                   for r in caplog.records), [r.getMessage() for r in caplog.records]


def mixed(a, b):
    # Only correctly rounded ops, so the kernels give numpy's bits whichever plan the
    # measurement picks (np.tanh(c) + 1.0 cancels, and tanh may differ from numpy's by an ulp).
    c = a * 2.0 + b
    m = np.linalg.norm(c)         # numpy (BLAS) between two kernels
    return np.sqrt(np.abs(c / m)) * 0.5 + 1.0


def test_a_plan_with_numpy_segments_is_restored(cache_dir):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(400), rng.standard_normal(400)
    assert_same_as_numpy(mixed, a, b)
    disk_cache.wait()
    jf = jit(mixed)
    for scale in (1.0, 1e-3):
        assert_same_as_numpy(mixed, a * scale, b, jitted=jf)
    assert len(descriptions(jf)) == 2 and all("disk cache" in d for d in descriptions(jf))


class OnceFailing(Backend):
    """Runs add and multiply; its compile() raises ``error`` while ``failures`` lasts."""

    name = "once-failing"

    def __init__(self, error):
        self.error, self.failures = error, 1

    def supports(self, ctx, node):
        return None if node.op in ("add", "multiply") else "not add or multiply"

    def compile(self, ctx, segment):
        if self.failures:
            self.failures -= 1
            raise self.error

        def run(*inputs):
            values = dict(zip(segment.inputs, inputs))
            for n in segment.nodes:
                args = [values[o] if o in values else ctx.types[o].value for o in n.operands]
                values[n] = (np.add if n.op == "add" else np.multiply)(*args)
            return tuple(values[n] for n in segment.outputs)
        return Compiled(run, "once-failing ok")


def affine(a, b):
    return a * 2.0 + b


@pytest.mark.parametrize("error, stored", [(MemoryError("out of memory while compiling"), False),
                                           (Unsupported("this backend declines"), True)])
def test_only_a_refusal_to_compile_is_stored(cache_dir, error, stored):
    backend = backends.register(OnceFailing(error))
    try:
        x = np.linspace(0.0, 1.0, 8)
        first = assert_same_as_numpy(affine, x, x, backend="once-failing")
        assert first.fragments[0].entries[0].mode == "numpy"
        assert str(error) in str(explain(first))
        disk_cache.wait()
        assert len(entries(cache_dir)) == int(stored)
        # (as a new process would: the same typed graph, compile() now succeeds)
        second = assert_same_as_numpy(affine, x, x, backend="once-failing")
        assert second.fragments[0].entries[0].mode == ("numpy" if stored else "once-failing")
    finally:
        backends.unregister(backend)


def test_exact_text_of_values():
    assert value_text(0.0) != value_text(-0.0)
    assert value_text(float("nan")) != value_text(-float("nan"))
    assert value_text(1) != value_text(True) != value_text(1.0)
    assert value_text((1, 2)) != value_text([1, 2])
    assert value_text(np.float32(1)) != value_text(np.float64(1))
    assert value_text(np.exp) == "object:numpy:exp" and value_text(np) == "module:numpy"
    assert value_text(np.arange(3)) != value_text(np.arange(3.0))
    for opaque in (lambda x: x, object(), np.zeros(100_000), np.frompyfunc(abs, 1, 1)):
        with pytest.raises(NotFingerprintable):
            value_text(opaque)


SCRIPT = textwrap.dedent("""\
    import sys
    import numpy as np
    from astjit import CacheDirectoryWarning, jit

    @jit
    def f(x, y):
        z = np.exp(x) * 2.0 + y
        return z.sum(), z

    @jit
    def g(x):
        return np.linalg.inv(x) @ x          # nothing to compile: numpy's

    x = np.linspace(-1, 1, 1000) * float(sys.argv[1])
    y = np.full_like(x, 3.0)
    s, z = f(x, y)
    assert np.allclose(z, np.exp(x) * 2.0 + y, rtol=1e-15, atol=0) and np.isclose(s, z.sum(), rtol=1e-12), "wrong result"
    assert np.allclose(g(np.eye(3) * 2), np.eye(3))
    print("tvm imported" if "tvm" in sys.modules else "no tvm")
    """)


def new_process_runner(tmp_path, text):
    """``run(argument)``: ``text`` as a program in a new process sharing one cache folder; its output."""
    script = tmp_path / "program.py"
    script.write_text(text)
    env = dict(os.environ, ASTJIT_CACHE="1", ASTJIT_CACHE_DIR=str(tmp_path / "cache"))

    def run(argument):
        done = subprocess.run([sys.executable, str(script), argument], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    return run


@pytest.mark.slow
def test_a_new_process_runs_from_the_cache_without_the_compiler(tmp_path):
    run = new_process_runner(tmp_path, SCRIPT)
    assert run("1.0") == "tvm imported"
    assert run("2.5") == "no tvm"         # other values, same types: kernels and decisions from the cache


def smooth_in_place(u, w):
    n = len(u)
    for i in range(1, n - 1):
        u[i] = (1.0 - w) * u[i] + w * 0.5 * (u[i - 1] + u[i + 1])
    return u


def smooth_in_place_again(u, w):      # the same loop in another function: the same kernel text
    n = len(u)
    for i in range(1, n - 1):
        u[i] = (1.0 - w) * u[i] + w * 0.5 * (u[i - 1] + u[i + 1])
    return u


def loop_notes(jf):
    return [e.note for f in jf.fragments for e in f.entries if hasattr(e, "loop")]


def test_a_stored_loop_kernel_is_loaded_for_any_length(cache_dir):
    rng = np.random.default_rng(3)
    first = jit(smooth_in_place)
    assert_same_as_numpy(smooth_in_place, rng.random(200), 0.3, jitted=first)
    disk_cache.wait()
    assert len(entries(cache_dir)) == 1 and loop_notes(first) == ["the whole loop runs as one kernel"]
    second = jit(smooth_in_place_again)
    for n, w in [(200, 0.3), (57, -1.5), (3, 0.0), (1000, 2.0)]:
        assert_same_as_numpy(smooth_in_place_again, rng.standard_normal(n), w, jitted=second)
    assert loop_notes(second) == ["the whole loop runs as one kernel (from the disk cache)"]
    segment = next(s for f in second.fragments for e in f.entries for s in e.segments)
    assert "T.prim_func" in kernel_code(segment, "tir") and "define" in kernel_code(segment, "llvm")
    disk_cache.wait()
    assert len(entries(cache_dir)) == 1


def test_a_damaged_loop_kernel_is_compiled_again(cache_dir):
    u = np.linspace(0.0, 1.0, 40) ** 2
    assert_same_as_numpy(smooth_in_place, u, 0.5)
    disk_cache.wait()
    [entry] = entries(cache_dir)
    kernel = next(entry.glob("*.so"))
    kernel.write_bytes(kernel.read_bytes()[:300])
    jf = jit(smooth_in_place_again)
    assert_same_as_numpy(smooth_in_place_again, u, 0.5, jitted=jf)
    assert loop_notes(jf) == ["the whole loop runs as one kernel"]
    disk_cache.wait()
    assert entries(cache_dir) == [entry]
    assert_same_as_numpy(smooth_in_place, u * 3.0, 0.25, jitted=jit(smooth_in_place))


@pytest.mark.slow
def test_importing_tvm_keeps_torch_out_and_torch_still_imports_after():
    """TVM's FFI imports torch at its import when it can (seconds, for nothing astjit passes): astjit
    keeps it out, unless the program imported torch first; the program can still import torch later."""
    code = textwrap.dedent("""
        import importlib.util, sys
        from astjit.backends.tvm.runtime import tvm_module
        tvm_module()
        print("torch imported" if "torch" in sys.modules else "torch kept out")
        if importlib.util.find_spec("torch") is not None:
            import torch
            print("torch", "imports" if torch.ones(2).sum().item() == 2.0 else "broken")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "torch kept out", done.stdout
    assert lines[1] in ("torch imports", ""), done.stdout


def test_the_first_calls_measured_choice_is_stored_and_reused(cache_dir):
    x, y = np.linspace(-1, 1, 20000), np.ones(20000)
    first = jit(chain)                              # backend auto: the first call times kernel vs Python
    first(x, y)
    measured = first.fragments[0].entries[0]
    assert measured.measured is not None and measured.mode_chosen is not None
    disk_cache.wait()
    (folder,) = entries(cache_dir)
    stored = json.loads((folder / "measured.json").read_text())
    assert stored["runs"] == measured.runs and stored["compiled"] == measured.measured[0]
    for runs, times in (("python", (3e-5, 1e-5)), ("compiled", (1e-5, 3e-5))):     # clear wins
        (folder / "measured.json").write_text(json.dumps({"compiled": times[0], "python": times[1], "runs": runs}))
        second = jit(chain_again)
        for scale in (1.0, 2.0):
            got, want = second(x * scale, y), chain(x * scale, y)
            np.testing.assert_allclose(got[1], want[1], rtol=1e-15)
            assert np.isclose(got[0], want[0], rtol=1e-12)
        loaded = second.fragments[0].entries[0]
        assert loaded.measured == times and loaded.runs == runs and not loaded.measure


PYTHON_CHOSEN = textwrap.dedent("""
    import json, pathlib, sys
    import numpy as np
    from astjit import jit
    from astjit.inspection.text import code_lines

    def chain(x, y):
        z = np.exp(x) * 2.0 + y
        return z.sum(), z

    x = np.linspace(-1, 1, 20000) * float(sys.argv[1])
    y = np.ones(20000)
    f = jit(chain)
    s, z = f(x, y)
    assert np.array_equal(z, np.exp(x) * 2.0 + y) and s == z.sum(), "wrong result"
    entry = f.fragments[0].entries[0]
    ran = entry.runs
    loaded = "tvm_ffi" in sys.modules
    if sys.argv[1] == "1.0":               # (then the first call's choice, stored: Python, clearly)
        from astjit.runtime import disk_cache
        disk_cache.wait()
        (folder,) = [p.parent for p in pathlib.Path(sys.argv[2]).rglob("measured.json")]
        (folder / "measured.json").write_text(json.dumps(
            {"compiled": 3e-5, "python": 1e-5, "runs": "python", "load_per_core": 0.1}))
    tir = "\\n".join(code_lines(entry, "tir"))
    print(ran, "kernel loaded" if loaded else "no kernel loaded", "T.prim_func" in tir)
    """)


@pytest.mark.slow
def test_a_new_process_keeping_python_by_the_stored_timing_loads_no_kernel(tmp_path):
    """A block whose stored first-call timing chose its Python does not load its kernel in a new
    process (loading imports TVM's FFI: 0.1-0.2 s for a kernel no call runs); its code is still shown."""
    script = tmp_path / "program.py"
    script.write_text(PYTHON_CHOSEN)
    env = dict(os.environ, ASTJIT_CACHE="1", ASTJIT_CACHE_DIR=str(tmp_path / "cache"))

    def run(argument):
        done = subprocess.run([sys.executable, str(script), argument, str(tmp_path / "cache")], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run("1.0").endswith("kernel loaded True")
    assert run("2.0") == "python no kernel loaded True"
    assert run("0.5") == "python no kernel loaded True"


def test_a_near_tie_stored_by_another_process_is_timed_again(cache_dir):
    x, y = np.linspace(-1, 1, 5000), np.ones(5000)
    jit(chain)(x, y)
    disk_cache.wait()
    (folder,) = entries(cache_dir)
    (folder / "measured.json").write_text(json.dumps({"compiled": 1.01e-5, "python": 1e-5, "runs": "python"}))
    second = jit(chain_again)
    got, want = second(x, y), chain(x, y)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-15)
    entry = second.fragments[0].entries[0]
    assert entry.measured is not None and entry.measured != (1.01e-5, 1e-5)


def measured_after_storing(folder, x, y, times, runs, load):
    """The times a new jitted function's specialization holds after its first call, once the disk
    entry in ``folder`` stored ``times`` (compiled, Python) and ``runs`` at ``load`` per core."""
    disk_cache.wait()                # (a choice timed again is stored in the background)
    (folder / "measured.json").write_text(json.dumps(
        {"compiled": times[0], "python": times[1], "runs": runs, "load_per_core": load}))
    second = jit(chain_again)
    got, want = second(x, y), chain(x, y)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-15)
    return second.fragments[0].entries[0].measured


def test_a_win_measured_on_a_busy_machine_is_timed_again(cache_dir):
    """A clear win, stored while other work held the cores, is not reused, Python's or the kernel's
    (a burst of load can make either side look faster); on a quiet machine it is."""
    x, y = np.linspace(-1, 1, 5000), np.ones(5000)
    jit(chain)(x, y)
    disk_cache.wait()
    (folder,) = entries(cache_dir)
    stored = json.loads((folder / "measured.json").read_text())
    assert "load_per_core" in stored
    for runs, load, reused in (("python", 3.0, False), ("python", 0.2, True), ("compiled", 3.0, False),
                               ("compiled", 0.2, True)):
        times = (3e-5, 1e-5) if runs == "python" else (1e-5, 3e-5)
        measured = measured_after_storing(folder, x, y, times, runs, load)
        assert (measured == times) is reused, (runs, load, measured)


def test_a_kernel_stored_as_many_times_slower_than_python_is_timed_again(cache_dir):
    """A loss of more than SUSPECT_LOSS (a kernel measured while its threads waited for a core) is
    not reused; a loss of a few times is."""
    x, y = np.linspace(-1, 1, 5000), np.ones(5000)
    jit(chain)(x, y)
    disk_cache.wait()
    (folder,) = entries(cache_dir)
    for times, reused in (((3.5e-3, 4.6e-5), False), ((2.9e-3, 1.95e-4), False), ((1.5e-4, 4.6e-5), True)):
        measured = measured_after_storing(folder, x, y, times, "python", 0.1)
        assert (measured == times) is reused, (times, measured)


def test_a_damaged_measured_choice_is_ignored_and_timed_again(cache_dir):
    x, y = np.linspace(-1, 1, 5000), np.ones(5000)
    jit(chain)(x, y)
    disk_cache.wait()
    (folder,) = entries(cache_dir)
    (folder / "measured.json").write_text('{"compiled": "fast"')
    second = jit(chain_again)
    second(x, y)
    entry = second.fragments[0].entries[0]
    assert entry.measured is not None and entry.measured[0] != "fast"


BLAS_SCRIPT = textwrap.dedent("""\
    import sys
    import numpy as np
    from astjit import jit
    from astjit.runtime import disk_cache

    def lower_solve(lower, b, x):
        for i in range(x.shape[0]):
            x[i] = (b[i] - lower[i, :i] @ x[:i]) / lower[i, i]
        return x

    rng = np.random.default_rng(int(sys.argv[1]))
    n = 50 + int(sys.argv[1])
    lower = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
    b = rng.standard_normal(n)
    jitted = jit(lower_solve)
    got, want = jitted(lower, b, np.zeros(n)), lower_solve(lower, b, np.zeros(n))
    assert got.tobytes() == want.tobytes(), "wrong result"
    disk_cache.wait()
    print([e.note for f in jitted.fragments for e in f.entries if hasattr(e, "loop")][0])
    """)


@pytest.mark.slow
def test_a_loop_kernel_calling_numpys_blas_is_loaded_by_a_new_process(tmp_path):
    """The stored library is linked against numpy's BLAS: a new process loads it and calls BLAS
    without the compiler, and without numpy's BLAS symbols made global."""
    run = new_process_runner(tmp_path, BLAS_SCRIPT)
    assert run("1") == "the whole loop runs as one kernel"
    assert run("2") == "the whole loop runs as one kernel (from the disk cache)"


def two_blocks(x, y, flag):
    z = np.exp(x) * 2.0 + y
    if flag:
        w = z * 3.0 - 1.0
    else:
        w = z * 0.5 + 2.0
    return w


def test_no_kernel_is_written_to_the_cache_while_a_block_is_timed(cache_dir, monkeypatch):
    """Exporting a kernel (LLVM's code generation again, the C compiler) in the background took a core
    from the first call's timed runs: a kernel of two threads measured 4-10x its time and was left to
    Python in this process and every later one. An entry is now queued after its block's measurement,
    and a measurement waits for the writes queued before it."""
    import time

    from astjit.runtime import measure

    writes, timed = [], []
    real_write, real_best = disk_cache.DiskCache._write, measure._best

    def write(self, *args):
        start = time.perf_counter()
        real_write(self, *args)
        writes.append((start, time.perf_counter()))

    def best(*args, **kwargs):
        start = time.perf_counter()
        result = real_best(*args, **kwargs)
        timed.append((start, time.perf_counter()))
        return result

    monkeypatch.setattr(disk_cache.DiskCache, "_write", write)
    monkeypatch.setattr(measure, "_best", best)
    jf = jit(two_blocks)
    x, y = np.linspace(-1, 1, 50_000), np.linspace(0, 1, 50_000)
    for flag in (True, False, True):
        assert_values_match(jf(x, y, flag), two_blocks(x, y, flag))      # (a kernel's exp: within an ulp)
    disk_cache.wait()
    assert writes and timed
    assert not [(w, t) for w in writes for t in timed if w[0] < t[1] and t[0] < w[1]], (writes, timed)


TRUNCATION_SCRIPT = textwrap.dedent("""\
    import sys
    import numpy as np
    from astjit import jit

    @jit
    def f(x, y):
        return np.sqrt(x * x + 1.0) * 2.0 + y

    x = np.linspace(-1, 1, 1000) * float(sys.argv[1])
    print(np.array_equal(f(x, x), np.sqrt(x * x + 1.0) * 2.0 + x))
""")


def test_a_library_cut_short_is_compiled_again_in_a_new_process(tmp_path):
    """A library cut to half its size keeps a valid header: loading it mapped pages past its end, and
    touching them killed every later process (SIGBUS). ``meta.json`` holds each library's size and
    SHA-256, checked before it is loaded."""
    run = new_process_runner(tmp_path, TRUNCATION_SCRIPT)
    assert run("1.0") == "True"
    [library] = (tmp_path / "cache").glob("v*/*/*/kernel0.so")
    library.write_bytes(library.read_bytes()[:library.stat().st_size // 2])
    assert run("2.0") == "True"
    assert run("3.0") == "True"
    [entry] = entries(tmp_path / "cache")
    sizes = json.loads((entry / "meta.json").read_text())["files"]
    assert sizes["kernel0.so"][0] == (entry / "kernel0.so").stat().st_size


def _call_in_child(n, queue):
    x = np.linspace(0.0, 1.0, n)
    queue.put(bool(np.allclose(jit(chain)(x, x)[1], chain(x, x)[1], rtol=1e-12)))    # (exp: within an ulp)


def test_a_forked_child_does_not_wait_for_its_parents_cache_writer(cache_dir):
    """The parent's writer thread is not copied into a child made with fork; the child makes its own
    (it waited forever for a write queued to the parent's executor)."""
    import multiprocessing

    x = np.linspace(0.0, 1.0, 64)
    assert_same_as_numpy(chain, x, x)
    disk_cache.wait()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_call_in_child, args=(77, queue))
    child.start()
    child.join(120)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0 and queue.get(timeout=5) is True


def test_staging_folders_of_writers_no_longer_running_are_removed(cache_dir):
    x = np.linspace(0.0, 1.0, 32)
    assert_same_as_numpy(chain, x, x)
    disk_cache.wait()
    versions = next(cache_dir.glob("v*"))
    dead = versions / ".staging-999999999-abc"          # (no such process)
    mine = versions / f".staging-{os.getpid()}-def"
    for folder in (dead, mine):
        folder.mkdir()
        (folder / "kernel0.so").write_bytes(b"partial")
    disk_cache._swept.discard(versions)
    assert_same_as_numpy(chain, x.astype(np.float32), x.astype(np.float32))     # another entry: a write
    disk_cache.wait()
    assert not dead.exists() and mine.exists()


def test_a_measurement_waits_for_the_export_running_and_not_for_those_queued():
    """Exports yield to a first call's timing: it waits for the one running, and the ones queued after
    it wait for the timing (waiting for the whole queue, a first call after 40 compiled kernels took
    70 s on a loaded machine)."""
    import threading
    import time

    order, release = [], threading.Event()

    def export(k, hold=False):
        order.append(f"start {k}")
        if hold:
            release.wait(10)
        order.append(f"end {k}")

    writer = disk_cache._writer()
    writer.submit(disk_cache._between_measurements, export, 1, True)
    for k in (2, 3):
        writer.submit(disk_cache._between_measurements, export, k)

    def measure():
        with disk_cache.paused():
            order.append("measured")

    while order != ["start 1"]:
        time.sleep(0.001)
    timer = threading.Thread(target=measure)
    timer.start()
    while disk_cache._paused[0] == 0:
        time.sleep(0.001)
    release.set()
    timer.join(10)
    disk_cache.wait()
    assert order == ["start 1", "end 1", "measured", "start 2", "end 2", "start 3", "end 3"]
