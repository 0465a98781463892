"""Importing TVM's compiler leaves tens of thousands of objects the garbage collector would walk at
every full collection; backends/tvm/runtime.tvm_module freezes them (after a collection), so plain
Python code in the process does not pay for them. Each case runs in a new process: the import
happens once per process."""

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
    gc.disable()                               # (so that only tvm_module collects it)
    from astjit.backends.tvm.runtime import tvm_module
    tvm_module()
    gc.enable()
    print(gc.get_freeze_count(), dead() is None)
""")


def run(env_extra):
    env = dict(os.environ, **env_extra)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    frozen, collected = proc.stdout.split()
    return int(frozen), collected == "True"


@pytest.mark.slow
def test_the_compilers_objects_are_frozen_and_garbage_before_them_collected():
    frozen, collected = run({})
    assert frozen > 50_000           # (about 100,000: TVM's objects and the interpreter's own)
    assert collected                 # (collected before the freeze, not kept for good)


@pytest.mark.slow
def test_ASTJIT_GC_FREEZE_0_freezes_nothing():
    frozen, collected = run({"ASTJIT_GC_FREEZE": "0"})
    assert frozen == 0 and not collected
