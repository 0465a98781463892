"""The Hypothesis strategy ``programs()``: random numpy functions as source text, with argument sets.

A program is a module (a ``settings`` class, a ``cfg`` module and a global ``K`` that the function
reads) and a ``def f(...)`` of 2 to 6 statements (more inside ``if``, ``for``, ``while`` and ``with``).
It comes with 3 or 4 calls: the first; one with the same shapes and dtypes but other values (scalars,
tuples, slices, dtypes passed as values, the attributes of ``settings`` and ``cfg``, ``K``); one with
other shapes and some dtypes changed; and sometimes the first shapes again. The JIT caches per shape and
dtype, so the repeated keys check that nothing value-dependent was compiled in.

Every program comes from one seed (``make_program(seed)``); the strategy draws the seed.
"""

from hypothesis import strategies as st

from .arguments import make_call, parameters, setups
from .choices import Chooser
from .model import PRELUDE, Program
from .statements import ProgramMaker, indent

# Mostly compiled by force: on these tiny arrays the default backend would measure Python as faster.
BACKENDS = ("tvm",) * 8 + (None, "numpy")


def make_program(seed: int) -> Program:
    """The program of ``seed``: the same seed always gives the same program and arguments."""
    choose = Chooser(seed)
    params = parameters(choose)
    first_setup, other_setup = setups(choose, params)
    calls = [make_call(params, first_setup, choose.integer(0, 2**32)),
             make_call(params, first_setup, choose.integer(0, 2**32)),
             make_call(params, other_setup, choose.integer(0, 2**32))]
    if choose.chance(50):
        calls.append(make_call(params, first_setup, choose.integer(0, 2**32)))
    backend = choose.pick(BACKENDS)
    maker = ProgramMaker(choose.integer(0, 2**32), params, calls[0])
    for _ in range(maker.integer(2, 6)):
        maker.add_statement()
        if maker.raised:
            break
    maker.pending = []
    body = maker.body + maker.return_statement()
    maker.steps += maker.pending
    function = "\n".join([f"def f({', '.join(p.name for p in params)}):"] + indent(body or ["pass"])) + "\n"
    inexact, branch_fragile, unreliable = maker.rounding_analysis()
    return Program(seed, PRELUDE + "\n" + function, function, calls, backend, inexact, branch_fragile,
                   unreliable, maker.returned, maker.raised, maker.sums)


def program_seeds():
    """Hypothesis strategy for the seed of a program (see ``make_program``)."""
    return st.integers(0, 2**63 - 1)


def programs():
    """Hypothesis strategy: one generated program (source and calls) per example."""
    return program_seeds().map(make_program)
