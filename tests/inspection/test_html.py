"""The HTML renderings used by notebooks (``_repr_html_``): content, graph pictures, fallback, safety."""

import re
import shutil
import sys

import numpy as np
import pytest
from loop_programs import histogram

from astjit import jit
from astjit.inspection import graph_svg
from astjit.inspection.html import render_entry_html, render_fragment_html, render_function_html
from astjit.runtime.fragment import Specialization
from astjit.runtime.keys import describe_key

HAS_DOT = shutil.which("dot") is not None
try:
    import graphviz  # noqa: F401
except ImportError:
    HAS_DOT = False


def step(a, b, c, n):
    x = (a + 3) * 4 / 100
    y = np.tanh(x) * c + b
    if y.sum() > 0:
        z = y * 2
    else:
        z = y - 1
    for _ in range(n):
        z = z * 0.9 + a
    return z.mean(), z


def hostile(a):
    label = "<script>alert('x')</script> \\ \"q\" & <b>"
    y = a * 2 + len(label)
    return y


@pytest.fixture(scope="module")
def jf():
    f = jit(step)
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(32).astype(np.float32) for _ in range(3))
    f(a, b, c, 2)
    f(a, b, c, 2)
    return f


def all_html(f):
    pages = [f._repr_html_(), render_function_html(f)]
    for frag in f.fragments:
        pages.append(frag._repr_html_())
        pages.extend(entry._repr_html_() for entry in frag.entries)
    return pages


def assert_self_contained(page):
    lowered = page.lower()
    for bad in ("http://", "https://", "<script", "<link", "<iframe", "<img", "@import", "url(", "<?xml",
                "<!doctype"):
        assert bad not in lowered, f"{bad!r} in the HTML"


def test_function_html_has_highlighted_transformed_source(jf):
    page = jf._repr_html_()
    assert page == render_function_html(jf)
    assert "Transformed source" in page
    # pygments with inline styles: the keyword 'def' is a styled span, and no CSS classes are needed
    assert re.search(r'<span style="[^"]+">def</span>', page)
    assert "__astjit_fragment_0" in page and "__astjit_cond_1" in page
    assert 'class="' not in page


def test_function_html_marks_fragments_in_the_original_source(jf):
    page = render_function_html(jf)
    original = page.split("Fragments in the original source", 1)[1]
    for frag in jf.fragments:
        assert frag.name in original
        first, last = frag.lines
        assert (f"lines {first}&ndash;{last}" if first != last else f"line {first}") in original
        for name in frag.live_in + frag.live_out:
            assert name in original
    # the original's code (not the transformed one) is shown, with its line numbers
    assert "tanh" in original and "__astjit_fragment_0(" not in original
    assert f">{jf.fragments[0].lines[0]}</td>" in original


def test_fragment_html_has_graph_and_cache_table(jf):
    for frag in jf.fragments:
        page = frag._repr_html_()
        assert page == render_fragment_html(frag)
        assert frag.name in page
        assert f"called {frag.calls} time" in page
        if frag.entries:
            assert "compile ms" in page and "<table" in page
        else:                                          # the branch that did not run
            assert "no cache entries" in page
        for entry in frag.entries:
            for name, k in zip(frag.live_in, entry.key):
                if isinstance(k, tuple):
                    dims = f"{k[1]}-d" if isinstance(k[1], int) else ','.join(map(str, k[1]))
                    assert f"{name}: {k[0]}[{dims}]" in page
        if frag.block.kind == "loop":                    # a kernel's TIR, no graph
            assert "a loop nest compiled as one kernel" in page or "no cache entries" in page
        elif HAS_DOT:
            assert "<svg" in page
        else:
            assert "graph as text" in page


def test_entry_html(jf):
    frag = jf.fragments[0]
    entry = frag.entries[0]
    assert entry.fragment is frag
    page = entry._repr_html_()
    assert page == render_entry_html(frag, entry)
    assert "cache entry 0 of" in page and frag.name in page
    assert describe_key(frag.live_in, entry.key) in page
    assert "compile ms" in page and f"{entry.compile_seconds * 1e3:.1f}" in page


def test_entry_without_fragment_still_renders():
    spec = Specialization((int,), None, "python", "backend=python")
    page = spec._repr_html_()
    assert "arg0=int" in page and "runs as Python" in page


@pytest.mark.skipif(not HAS_DOT, reason="graphviz's dot is not installed")
def test_graph_svg_is_inline_and_coloured_by_subgraph(jf):
    frag = jf.fragments[0]
    entry = frag.entries[-1]
    svg = graph_svg.render_graph_html(entry.ctx.graph, entry)
    assert svg.startswith("<svg")
    assert "xmlns" not in svg and "<!--" not in svg
    # one box per node: op names with their types, inputs and outputs shown by name
    assert "%2 add" in svg and "float32[32]" in svg
    for name in frag.live_in + frag.live_out:
        assert f">{name}<" in svg
    colors = dict((seg.backend, color) for seg, color in graph_svg.segment_colors(entry))
    assert colors and all(f'fill="{c}"' in svg for c in colors.values())
    assert f'fill="{graph_svg.IO_COLOR}"' in svg
    # the source of the picture: inputs and outputs are shaped differently from op nodes
    source = graph_svg.build_dot(entry.ctx.graph, entry).source
    assert '"filled,bold"' in source and "peripheries=2" in source and "cluster_0" in source


def test_text_fallback_without_dot(jf, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))          # graphviz finds no `dot` on the PATH
    frag = jf.fragments[0]
    page = frag._repr_html_()
    assert "<svg" not in page
    assert "graph as text" in page and "dot program is not installed" in page
    assert "fragment step:0(a, c, b)" in page and "= add(%0, %1)" in page
    assert_self_contained(page)
    assert "<svg" not in jf._repr_html_()


def test_text_fallback_without_graphviz_package(jf, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)   # `import graphviz` raises ImportError
    page = jf.fragments[0].entries[0]._repr_html_()
    assert "<svg" not in page
    assert "graphviz Python package is not installed" in page and "fragment step:0(a, c, b)" in page


def test_nothing_loads_from_the_network(jf):
    for page in all_html(jf):
        assert_self_contained(page)


def test_user_text_is_escaped():
    f = jit(hostile)
    f(np.ones(4))
    pages = all_html(f)
    assert all("&lt;script&gt;" in p for p in pages)        # in the source and in the graph's const
    for page in pages:
        assert_self_contained(page)
        assert "<b>" not in page


def test_a_loop_region_is_drawn_and_named_in_the_original_source():
    f = jit(histogram)
    f(np.random.default_rng(1).random(50), np.zeros(10, np.int64), 0.0, 0.1)
    loop = next(frag for frag in f.fragments if frag.block.kind == "loop")
    inner = [frag for frag in f.fragments if frag is not loop]
    page = render_function_html(f)
    transformed, original = page.split("Fragments in the original source", 1)
    assert f"# loop region, lines {loop.lines[0]}-{loop.lines[1]}" in transformed
    assert f"{loop.name}</b> &middot; loop region" in original
    assert inner and all(f"inside the loop of {loop.name}" in original for _ in inner)
    edge = html_edge(loop)
    for line in range(loop.lines[0], loop.lines[1] + 1):          # the bar beside every line of the loop
        row = original.split(f">{line}</td>", 1)[1].split("</tr>", 1)[0]
        assert f"background:{edge};width:4px" in row
    from astjit.inspection.text import render_function
    text = render_function(f)
    assert f"{loop.name}: loop region, lines {loop.lines[0]}-{loop.lines[1]}" in text
    assert all(f"{frag.name}: lines {frag.lines[0]}-{frag.lines[1]}, inside the loop of {loop.name}" in text
               for frag in inner)


def html_edge(frag):
    from astjit.inspection.html import _fragment_color
    return _fragment_color(frag)[1]


@pytest.mark.parametrize("page_of", [render_function_html, lambda f: render_fragment_html(f.fragments[0])])
def test_tables_hold_their_layout_inside_jupyters_stylesheet(jf, page_of):
    """Jupyter (nbconvert exports, JupyterLab) styles every output table: fixed layout, centred, cells
    right-aligned. Each table and cell states its own layout and alignment."""
    page = page_of(jf)
    tables = re.findall(r"<table([^>]*)>", page)
    assert tables
    for attrs in tables:
        assert "table-layout:auto" in attrs
    cells = re.findall(r"<t[dh]( [^>]*)?>", page)
    assert cells
    for attrs in cells:
        assert attrs and "text-align:" in attrs and "vertical-align:" in attrs, attrs
