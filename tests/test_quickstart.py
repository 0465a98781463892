"""The README's example, end to end."""

import numpy as np
from differential import assert_same_as_numpy, jit_unmeasured, modes


def step(a, b, c, n):
    x = (a + 3) * 4 / 100
    y = np.tanh(x) * c + b
    if y.sum() > 0:
        z = y * 2
    else:
        z = y - 1
    for i in range(n):
        z = z * 0.9 + a
    return z.mean(), z


def test_step_matches_numpy_and_compiles_everything():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    jf = assert_same_as_numpy(step, a, b, c, 3, jitted=jit_unmeasured(step))
    assert modes(jf) <= {"tvm", "mixed"}
    entries = sum(len(f.entries) for f in jf.fragments)
    jf(a, b, c, 3)                                   # same shapes: nothing compiles
    assert sum(len(f.entries) for f in jf.fragments) == entries
    small = [x[:16] for x in (a, b, c)]
    assert_same_as_numpy(step, *small, 2, jitted=jf)  # new shape: new specializations, old kept
    keys = {e.key for f in jf.fragments if f.block.kind == "block" for e in f.entries}
    assert any(k[0][1] == (1000,) for k in keys) and any(k[0][1] == (16,) for k in keys)
    loop = [f for f in jf.fragments if f.block.kind == "loop"]       # the whole for loop: one kernel,
    assert len(loop) == 1 and [e.mode for e in loop[0].entries] == ["tvm"]      # any length
