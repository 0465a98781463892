"""The generated-program differential campaign, CI size, and one jitted function shared by 8 threads.

ASTJIT_CAMPAIGN_EXAMPLES sets the number of programs (default 500); ASTJIT_CAMPAIGN_SEED=<int> runs
another fixed set and ASTJIT_CAMPAIGN_SEED=random a new one each time. A failure prints every mismatch
and crash with the seed of its program: ``python -m tests.campaign.run --replay SEED`` reruns it.
"""

import os
import threading

import numpy as np
from hypothesis import given

from astjit import jit

from .compare import call, differences, load
from .programs import programs
from .run import campaign_settings, run_campaign, seed_from_environment
from .values import clone

EXAMPLES = int(os.environ.get("ASTJIT_CAMPAIGN_EXAMPLES", "500"))


def test_generated_programs_match_numpy():
    stats = run_campaign(EXAMPLES, seed_from_environment())
    print(stats.summary())
    assert stats.programs == EXAMPLES
    failures = stats.of_kind("mismatch") + stats.of_kind("crash")
    assert not failures, stats.summary(examples_per_category=3)


@campaign_settings(100, random_mode=False)
@given(programs())
def test_generated_programs_run_as_numpy_code(program):
    """The generator's own contract: the source compiles, and the first call (numpy errors not raised)
    raises only when the generator kept a statement that raises."""
    namespace, _ = load(program)
    first = program.calls[0]
    first.apply(namespace)
    run = call(namespace["f"], clone(first.args), {})         # the generator simulated it errors quiet
    assert (run.error is not None) <= program.raises_first, f"{run.error!r}\n{program.function}"


# -- threads -----------------------------------------------------------------------------------------
def shared_kernel(a, b, k, window):
    c = a * k + b
    d = np.where(c > 0, c, -c)
    if d.max() > 4:
        d = d[window] - 1
    a[..., :1] += k
    e = np.maximum(d, 2).astype(np.float32)
    return e, d.sum(axis=0), a


THREADS, CALLS = 8, 30
SHAPES = ((5,), (3, 4), (2, 3, 2))
DTYPES = (np.float64, np.int32, np.float32)


def arguments(rng):
    """Integer-valued data (float sums are then exact, so results compare bit for bit)."""
    shape = SHAPES[rng.integers(len(SHAPES))]
    dtype = DTYPES[rng.integers(len(DTYPES))]
    a = rng.integers(-6, 7, shape).astype(dtype)
    b = rng.integers(-6, 7, shape[-1:]).astype(dtype)
    k = int(rng.integers(-3, 4))
    window = slice(int(rng.integers(0, 2)), int(rng.integers(1, 4)))
    return a, b, k, window


def test_one_jitted_function_in_eight_threads():
    jitted = jit(shared_kernel, backend="tvm")
    barrier = threading.Barrier(THREADS)
    problems = []

    def work(seed):
        rng = np.random.default_rng(seed)
        barrier.wait()                                # all threads miss the cache together
        for _ in range(CALLS):
            args = arguments(rng)
            plain_args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args)
            jit_args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args)
            with np.errstate(all="ignore"):
                want = shared_kernel(*plain_args)
                try:
                    got = jitted(*jit_args)
                except Exception as exc:          # reported with its arguments below
                    problems.append(f"thread {seed}: {exc!r} for {args}")
                    continue
            found = differences(got, want) + differences(jit_args[0], plain_args[0], path="argument a after the call")
            if found:
                problems.append(f"thread {seed}, arguments {args}: {found}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not problems, "\n".join(problems[:10])
