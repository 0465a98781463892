import os
import sys

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
