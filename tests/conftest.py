import os
import sys
import weakref

sys.path.insert(0, os.path.dirname(__file__))
# the example programs the tests check (examples/loop_programs.py), importable by name
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
os.environ.setdefault("TVM_NUM_THREADS", "2")
# the on-disk kernel cache is tested on its own (tests/runtime/test_disk_cache.py, in temporary
# folders); elsewhere every test compiles, as a first run would, and writes nothing to the home folder
os.environ.setdefault("ASTJIT_CACHE", "0")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _forget_short_lived_jitted_functions():
    """Each test starts without the process's count of jitted functions made and dropped at each call
    (api.SHORT_LIVED_AT_MOST): tests that jit a def of their own once per parameter would otherwise run
    the later parameters as Python."""
    from astjit import api

    api._short_lived.clear()
    yield


def _pin_measurements(monkeypatch, python_seconds, compiled_seconds):
    """Every block's first-call measurement finds these times for its Python and its compiled code."""
    from astjit.runtime import measure

    fallbacks = weakref.WeakSet()
    measuring_runner = measure.measuring_runner

    def noting_the_fallback(fragment, spec, key):
        fallbacks.add(fragment.fallback)
        return measuring_runner(fragment, spec, key)

    monkeypatch.setattr(measure, "measuring_runner", noting_the_fallback)
    monkeypatch.setattr(measure, "_best", lambda fn, *args, **kwargs: python_seconds if fn in fallbacks
                        else compiled_seconds)


@pytest.fixture
def kernels_measure_faster(monkeypatch):
    """Every block's first-call measurement finds its compiled code faster than its Python (1 us against
    2 us), whatever this machine's numpy and kernels run at: for tests of what follows a kernel's win
    (new lengths compiled once they recur), which a block of a few elements measured slower than its
    Python would not reach."""
    _pin_measurements(monkeypatch, 2e-6, 1e-6)


@pytest.fixture
def python_measures_faster(monkeypatch):
    """Every block's first-call measurement finds its Python faster (1 us against 2 us): for tests of
    what follows Python's win (a block settled on its Python), which a kernel that happens to win on
    some machine would not reach."""
    _pin_measurements(monkeypatch, 1e-6, 2e-6)
