"""Attributes of objects read by a compiled loop or block (runtime/plain_attribute): ``self.dt`` and
``grid.u[i]`` are read once and passed to the kernel where that is what Python's reads give; a
property, a missing attribute or a dynamic one leaves the loop (the block) to Python, which reads it
where the loop (the block's statements) does."""

import collections
import math
from dataclasses import dataclass

import numpy as np
import pytest
from loop_checks import kernels_for_tiny_loops  # noqa: F401 - a fixture

from astjit import jit
from astjit.runtime.plain_attribute import NOT_PLAIN, plain_attribute

pytestmark = pytest.mark.usefixtures("kernels_for_tiny_loops")
rng = np.random.default_rng(11)


class Grid:
    scale = 2.0                                   # a class attribute

    def __init__(self, n, dx):
        self.n = n
        self.dx = dx
        self.u = rng.random(n)

    def double(self):
        return 2


@dataclass
class Settings:
    steps: int
    dt: float


class Slotted:
    __slots__ = ("n", "w")

    def __init__(self, n, w):
        self.n, self.w = n, w


Pair = collections.namedtuple("Pair", "lo hi")


class Measured:
    """An attribute that is a property counting its reads."""

    def __init__(self, dx):
        self._dx = dx
        self.reads = 0
        self.u = rng.random(20)

    @property
    def dx(self):
        self.reads += 1
        return self._dx


class Dynamic:
    def __getattr__(self, name):
        return 0.5


def test_plain_attribute_reads_what_python_reads_once():
    g = Grid(5, 0.1)
    assert plain_attribute(g, "dx") == 0.1 and plain_attribute(g, "u") is g.u
    assert plain_attribute(g, "scale") == 2.0                       # from the class
    g.scale = 3.0
    assert plain_attribute(g, "scale") == 3.0                       # the instance's own first
    assert plain_attribute(Settings(3, 0.5), "dt") == 0.5
    assert plain_attribute(Slotted(4, 1.5), "w") == 1.5
    assert plain_attribute(Pair(1, 9), "hi") == 9
    assert plain_attribute(Grid, "scale") == 2.0                    # a class's own value
    for obj, name in [(g, "missing"), (g, "double"), (Measured(1.0), "dx"), (Dynamic(), "dx"), (math, "pi"),
                      (Slotted.__new__(Slotted), "n"), (Grid, "double"), (NOT_PLAIN, "x")]:
        assert plain_attribute(obj, name) is NOT_PLAIN, (obj, name)


def test_a_property_added_to_the_class_later_is_seen():
    class Box:
        def __init__(self):
            self.w = 2.0

    box = Box()
    assert plain_attribute(box, "w") == 2.0 and plain_attribute(box, "w") == 2.0     # (the second: cached)
    Box.w = property(lambda self: 5.0)
    assert plain_attribute(box, "w") is NOT_PLAIN and box.w == 5.0
    box.z = 1.0
    assert plain_attribute(box, "z") == 1.0 and plain_attribute(box, "z") == 1.0
    Box.__getattribute__ = lambda self, name: 7.0
    assert plain_attribute(box, "z") is NOT_PLAIN and box.z == 7.0


def laplacian(grid, out):
    for i in range(1, grid.n - 1):
        out[i] = (grid.u[i + 1] - 2 * grid.u[i] + grid.u[i - 1]) / (grid.dx * grid.dx) * grid.scale
    return out


def integrate(s, x):
    for k in range(s.steps):
        x = x + s.dt * (1.0 - x)
    return x


def weighted(p, a):
    total = 0.0
    for i in range(p.lo, p.hi):
        total += a[i] * p.hi
    return total


def slotted_sum(s, a):
    total = 0.0
    for i in range(s.n):
        total += s.w * a[i]
    return total


def compiled(jitted) -> list:
    return [e.mode for f in jitted.fragments if f.block.kind == "loop" for e in f.entries]


def test_loops_reading_plain_attributes_compile_and_see_each_calls_values():
    jitted = jit(laplacian)
    for n, dx in ((30, 0.1), (200, 0.02), (3, 1.0), (50, 0.5)):
        g = Grid(n, dx)
        want = laplacian(g, np.zeros(n))
        assert np.array_equal(jitted(g, np.zeros(n)), want)
        g.dx, g.scale = dx * 3, -1.0               # new values: the next call reads them
        assert np.array_equal(jitted(g, np.zeros(n)), laplacian(g, np.zeros(n)))
    assert set(compiled(jitted)) == {"tvm"}
    jitted = jit(integrate)
    for steps, dt in ((10, 0.1), (0, 0.5), (100, 0.01)):
        got, want = jitted(Settings(steps, dt), 0.25), integrate(Settings(steps, dt), 0.25)
        assert got == want and type(got) is type(want)
    jitted = jit(weighted)
    a = rng.random(40)
    for lo, hi in ((0, 40), (5, 9), (30, 10)):
        assert jitted(Pair(lo, hi), a) == weighted(Pair(lo, hi), a)
    jitted = jit(slotted_sum)
    for n, w in ((40, 0.5), (3, -2.0)):
        assert jitted(Slotted(n, w), a) == slotted_sum(Slotted(n, w), a)
    assert set(compiled(jitted)) == {"tvm"}


def scaled(m, out):
    for i in range(len(out)):
        out[i] = m.u[i] * m.dx
    return out


def test_a_property_is_read_by_python_at_each_iteration():
    jitted = jit(scaled)
    for n in (20, 0, 7):
        plain, jm = Measured(0.5), Measured(0.5)
        jm.u = plain.u
        assert np.array_equal(jitted(jm, np.zeros(n)), scaled(plain, np.zeros(n)))
        assert jm.reads == plain.reads == n
    assert "dx is not a plain attribute" in str(jitted.explain())


def reads_missing(obj, a):
    total = 0.0
    for i in range(len(a)):
        total += a[i] * obj.weight
    return total


def test_a_missing_or_dynamic_attribute_is_read_only_where_python_reads_it():
    jitted = jit(reads_missing)
    assert jitted(Grid(3, 0.1), np.zeros(0)) == 0.0         # no iteration: Python never reads it
    with pytest.raises(AttributeError, match="weight"):
        jitted(Grid(3, 0.1), np.ones(4))
    assert jitted(Dynamic(), np.ones(4)) == reads_missing(Dynamic(), np.ones(4))
    g = Grid(3, 0.1)
    g.weight = 3
    assert jitted(g, np.arange(5.0)) == reads_missing(g, np.arange(5.0))
    g.weight = 0.25                                             # another type: another kernel
    assert jitted(g, np.arange(5.0)) == reads_missing(g, np.arange(5.0))


def colliding(p, p_x, a):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * p.x_y + p_x.y
    return s


def colliding_block(p, p_x, a):
    return a * p.x_y + p_x.y


def test_attributes_whose_names_join_alike_are_read_apart():
    """``p.x_y`` and ``p_x.y`` once shared one passed-in name, and the second read the first's value."""
    loop, block = jit(colliding), jit(colliding_block)
    for x_y, y, n in ((1.0, 2.0, 10), (-3.5, 0.25, 40), (np.nan, -0.0, 3)):
        p, q = Grid(3, 0.1), Grid(3, 0.2)
        p.x_y, q.y = x_y, y
        a = np.arange(float(n))
        got, want = loop(p, q, a), colliding(p, q, a)
        assert got == want or (np.isnan(got) and np.isnan(want))
        np.testing.assert_array_equal(block(p, q, a), colliding_block(p, q, a))


# -- straight-line blocks: the same reads as Python's ----------------------------------------------
class Counting:
    """A property with an effect: each read counts."""

    def __init__(self):
        self.reads = 0

    @property
    def scale(self):
        self.reads += 1
        return float(self.reads)


class Peak:
    """A property of what the block updates in place before reading it."""

    def __init__(self, w):
        self.w = w

    @property
    def top(self):
        return self.w.max()


class Plain:
    def __init__(self, scale):
        self.scale = scale


def read_twice(a, o):
    b = a * o.scale
    c = b + o.scale
    return c


def read_after_update(w, m):
    w += 1.0
    c = w * m.top
    return c


def update_then_missing(a, o):
    a += 1.0
    c = a * o.scale
    return c


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_block_reads_a_property_where_and_as_often_as_python(backend):
    """The block read ``o.scale`` once, before it ran: a counting property was read once (result 2.0,
    Python's 3.0), and a property of an array the block updates first gave the value before the update."""
    twice, after = jit(read_twice, backend=backend), jit(read_after_update, backend=backend)
    for n in (5, 100_000, 7):
        a = rng.random(n)
        o_py, o_jit = Counting(), Counting()
        assert np.array_equal(twice(a, o_jit), read_twice(a, o_py)) and o_jit.reads == o_py.reads == 2
        w = rng.random(n)
        w_py, w_jit = w.copy(), w.copy()
        assert np.array_equal(after(w_jit, Peak(w_jit)), read_after_update(w_py, Peak(w_py)))
    plain = jit(read_twice, backend=backend)
    for n in (5, 100_000):                        # a plain attribute still reaches the kernel
        a = rng.random(n)
        assert np.array_equal(plain(a, Plain(2.5)), read_twice(a, Plain(2.5)))
    if backend == "tvm":
        assert {e.mode for f in plain.fragments for e in f.entries} & {"tvm", "mixed"}
        # explain names the attribute as written, not the name it is passed in as
        text = str(twice.explain())
        assert "'o.scale' is read as Python reads it" in text and "o.scale=read by Python" in text
        assert "__astjit" not in text


@pytest.mark.parametrize("backend", [None, "tvm"])
def test_a_missing_attribute_raises_after_the_blocks_earlier_statements(backend):
    jf = jit(update_then_missing, backend=backend)
    for n in (5, 100_000, 5):
        a = np.zeros(n)
        want = a.copy()
        with pytest.raises(AttributeError):
            update_then_missing(want, object())
        with pytest.raises(AttributeError):
            jf(a, object())
        assert np.array_equal(a, want) and a[0] == 1.0


class Model:
    alpha = 0.5

    @classmethod
    def scaled(cls, u):
        v = u * cls.alpha + 1.0
        return v

    @classmethod
    def named(cls, u):
        return u * 2.0 if cls.__name__ == "Model" else u

    @classmethod
    def weighted_sum(cls, u):
        s = 0.0
        for i in range(u.shape[0]):
            s += u[i] * cls.alpha
        return s


class Tuned(Model):
    alpha = 2.0


def test_a_class_attribute_read_through_cls_reaches_the_kernel():
    """``cls.alpha`` in a classmethod was refused as the attribute of a class object: the block ran as
    Python. A value stored on the class or a base is read once; what the metaclass serves or a
    descriptor gives stays Python's."""
    for name in ("scaled", "weighted_sum", "named"):
        jf = jit(getattr(Model, name).__func__, backend="tvm" if name == "scaled" else None)
        for klass in (Model, Tuned, Model):
            for n in (8, 1000):
                u = rng.random(n)
                got, want = jf(klass, u), getattr(klass, name)(u)
                assert type(got) is type(want) and np.array_equal(got, want)
        if name == "scaled":
            assert {e.mode for f in jf.fragments for e in f.entries} & {"tvm", "mixed"}
    assert plain_attribute(Model, "alpha") == 0.5 and plain_attribute(Tuned, "alpha") == 2.0
    for name in ("__name__", "__doc__", "scaled", "missing", "mro"):
        assert plain_attribute(Tuned, name) is NOT_PLAIN


def test_a_block_reading_a_property_runs_inline_without_its_fragment_call():
    """A block reading a property runs as Python at every call: it now settles, and runs its statements
    inline (a plain-attribute test and a Fragment call at each call made a method 1.8x plain), looking at
    its Fragment again now and then: an object with a plain attribute later still reaches the kernel."""
    jf = jit(read_twice, backend="tvm")
    a = rng.random(8)
    for _ in range(40):
        o_py, o_jit = Counting(), Counting()
        assert np.array_equal(jf(a, o_jit), read_twice(a, o_py)) and o_jit.reads == o_py.reads == 2
    fragment = next(f for f in jf.fragments if f.calls)
    assert fragment.calls < 20
    for _ in range(200):
        assert np.array_equal(jf(a, Plain(2.5)), read_twice(a, Plain(2.5)))
    assert "tvm" in {e.mode for e in fragment.entries}
