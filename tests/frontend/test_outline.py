"""Large work estimates run in functions of their own (frontend/outline): the rewritten function stays
near the original's size, so that finding an instruction's line (each numpy warning of a loop run as
written, ``f_lineno``) costs what it costs in the original; results, warnings and errors unchanged."""

import sys
import warnings

import numpy as np
import pytest

from astjit import jit
from astjit.frontend import outline


def ratios(a, b):
    d = {}
    s = 0.0
    for i in range(len(a)):
        d[i % 3] = i                 # (a dict keeps the loop's kernel from taking it)
        s += a[i] / b[i]
    return s, d


def lines(n, a):
    s = 0
    for i in range(n):
        s += sys._getframe().f_lineno + int(a[i % len(a)] > 0.5)
    return s


def _estimates(jf):
    code = jf._function.__code__
    return [c for c in code.co_freevars if c.startswith("__astjit_estimate_")]


def test_a_large_estimate_is_a_call_and_the_function_keeps_its_size():
    jf = jit(ratios)
    a, b = np.ones(5), np.arange(5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jf(a, b)
    assert _estimates(jf)
    assert len(jf._function.__code__.co_code) < 6 * len(ratios.__code__.co_code)


@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_results_warnings_and_lines_are_the_originals(n):
    jf = jit(ratios)
    rng = np.random.default_rng(n)
    for k in range(4):
        a, b = rng.random(n), rng.random(n) * (k % 2)          # (b all zeros at odd k: a warning a step)
        with warnings.catch_warnings(record=True) as want_warned:
            warnings.simplefilter("always")
            want = ratios(a, b)
        with warnings.catch_warnings(record=True) as got_warned:
            warnings.simplefilter("always")
            got = jf(a, b)
        assert repr(got) == repr(want)
        assert [(w.category, str(w.message), w.lineno) for w in got_warned] == \
               [(w.category, str(w.message), w.lineno) for w in want_warned]
    jl = jit(lines)
    for m in (0, 3, 50):
        a = rng.random(4)
        assert jl(m, a) == lines(m, a)


def test_an_estimate_that_raises_runs_the_loop_as_written():
    jf = jit(ratios)
    for a, b, error in ((5, np.ones(5), TypeError), (np.ones(3), np.ones(2), IndexError)):
        with pytest.raises(error) as want:
            ratios(a, b)
        with pytest.raises(error) as got:
            jf(a, b)
        assert str(got.value) == str(want.value)


def test_a_small_estimate_or_one_reading_a_name_maybe_unbound_stays_inline():
    import gast

    class Block:
        maybe_unbound = ()
        live_in = ["x"]

    small = gast.Try(body=[], handlers=[], orelse=[], finalbody=[])
    assert not getattr(outline.mark_for_outlining(small, Block()), outline.OUTLINE, False)
    large = gast.Try(body=[gast.Expr(value=gast.Constant(value=k, kind=None)) for k in range(outline.OUTLINE_FROM)],
                     handlers=[], orelse=[], finalbody=[])
    assert getattr(outline.mark_for_outlining(large, Block()), outline.OUTLINE, False)
    Block.maybe_unbound = ("x",)
    large = gast.Try(body=large.body, handlers=[], orelse=[], finalbody=[])
    assert not getattr(outline.mark_for_outlining(large, Block()), outline.OUTLINE, False)


def horner_rows(coeffs, out):
    for k in range(out.shape[0]):
        acc = 0.0
        for c in coeffs:
            acc = acc * 0.5 + c
        out[k] = acc
    return out


class Coefficients:
    """Not a plain object: an estimate may not measure it (its ``__len__`` would run once more)."""

    def __init__(self, values):
        self.values = list(values)
        self.measured = 0

    def __len__(self):
        self.measured += 1
        return len(self.values)

    def __iter__(self):
        return iter(self.values)


def test_an_estimate_checks_each_name_it_measures_once():
    """``len(coeffs)`` read several times by an estimate is checked (an array, or a plain object) once,
    ahead; a user's object with ``__len__`` is measured by the loop alone, as plain Python does."""
    jf = jit(horner_rows)
    for coeffs in ((1.0, -2.0), [0.5] * 30, np.array([1.0, 2.0, 3.0])):
        for n in (1, 3, 40):
            got, want = jf(coeffs, np.zeros(n)), horner_rows(coeffs, np.zeros(n))
            assert np.array_equal(got, want)
    cells = dict(zip(jf._function.__code__.co_freevars, jf._function.__closure__))
    estimates = [cells[n].cell_contents for n in _estimates(jf)]
    assert estimates and any("__astjit_read_coeffs" in e.__code__.co_varnames for e in estimates)
    objects = Coefficients([1.0, 2.0, 3.0])
    assert np.array_equal(jf(objects, np.zeros(4)), horner_rows([1.0, 2.0, 3.0], np.zeros(4)))
    assert objects.measured == 0


class Base:
    def scale(self):
        return 2.0


class Scaled(Base):
    def ratios(self, a, b):
        k = super().scale()            # (a __class__ cell: the rewritten function sits in a class body)
        s = 0.0
        for i in range(len(a)):
            if b[i] != 0.0:
                s += a[i] / b[i] * k
        return s

    jitted = jit(ratios)


def test_a_method_using_super_with_an_outlined_estimate_compiles_its_loop():
    c = Scaled()
    for n in (3, 40, 2000):
        a, b = np.arange(1.0, n + 1), np.linspace(0.0, 1.0, n)
        assert c.jitted(a, b) == Scaled.ratios(c, a, b)
    jf = Scaled.__dict__["jitted"]
    assert _estimates(jf)
    assert not [r for r in jf.records() if r.kind == "fallback" and "transform" in r.message]
    assert any(e.mode == "tvm" for f in jf.fragments if f.block.kind == "loop" for e in f.entries)


WEIGHTS = np.arange(6.0) + 1.0


def weighted(a, n):
    s = 0.0
    for i in range(n):
        if WEIGHTS[i] > 0.5:
            s += a[i] / WEIGHTS[i]
    return s


def test_a_global_deleted_between_calls_raises_where_the_loop_reads_it(monkeypatch):
    """An outlined estimate reads globals and closure variables itself, inside its ``try``: a deleted
    one runs the loop as written, which raises where it reads it, or not at all for no trips."""
    jf = jit(weighted)
    a = np.random.default_rng(2).random(6)
    for k in range(12):
        assert jf(a, k % 7) == weighted(a, k % 7)
    assert _estimates(jf)
    monkeypatch.delitem(globals(), "WEIGHTS")
    assert jf(a, 0) == 0.0
    with pytest.raises(NameError) as info:
        jf(a, 3)
    frames = [f for f in __import__("traceback").extract_tb(info.value.__traceback__) if f.filename == __file__]
    assert frames[-1].line.strip() == "if WEIGHTS[i] > 0.5:"
