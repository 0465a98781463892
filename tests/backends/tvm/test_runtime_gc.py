"""Importing TVM's compiler leaves tens of thousands of objects the garbage collector walks at every
full collection; with ASTJIT_GC_FREEZE=1, backends/tvm/runtime.tvm_module freezes them (after a
collection). Not by default: whatever is alive at that moment is frozen too, and an object of the
program's that becomes cyclic garbage later would never be collected. Each case runs in a new process:
the import happens once per process."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import gc, weakref
    class Node:
        pass
    a, b = Node(), Node()
    a.other, b.other = b, a                     # a cycle that is garbage before the import
    dead = weakref.ref(a)
    del a, b
    kept = Node()
    kept.me = kept                              # a cycle alive at the import, garbage after it
    alive = weakref.ref(kept)
    gc.disable()                               # (so that only tvm_module collects before the import)
    from astjit.backends.tvm.runtime import tvm_module
    tvm_module()
    gc.enable()
    collected_before = dead() is None
    del kept
    gc.collect()
    print(gc.get_freeze_count(), collected_before, alive() is None)
""")


def run(env_extra):
    env = {k: v for k, v in os.environ.items() if k != "ASTJIT_GC_FREEZE"}
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    frozen, collected_before, collected_after = proc.stdout.split()
    return int(frozen), collected_before == "True", collected_after == "True"


@pytest.mark.slow
def test_by_default_nothing_is_frozen_and_a_cycle_alive_at_the_import_is_collected_later():
    assert run({}) == (0, False, True)
    assert run({"ASTJIT_GC_FREEZE": "0"}) == (0, False, True)


@pytest.mark.slow
def test_ASTJIT_GC_FREEZE_1_freezes_the_compilers_objects_after_a_collection():
    frozen, collected_before, collected_after = run({"ASTJIT_GC_FREEZE": "1"})
    assert frozen > 50_000           # (about 100,000: TVM's objects and the interpreter's own)
    assert collected_before          # (garbage before the import: collected, not kept for good)
    assert not collected_after       # (the documented price: a cycle alive then stays)
