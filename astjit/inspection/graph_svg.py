"""A Fragment's graph as a picture: DOT built with the ``graphviz`` package, laid out by ``dot`` as SVG.

One box per node (``%3 add`` and, once specialized, its type), inputs and outputs as distinct shapes,
and each node filled with the colour of the subgraph (TVM kernel or numpy step) that runs it, the
subgraphs drawn as labelled clusters. The SVG is made to embed inline in HTML: no XML prolog, no
DOCTYPE, no namespace URLs. Without the package or its ``dot`` program the picture is the graph's text
listing in a ``<pre>``, with a line saying why.
"""

import html
import re

# fill colours of the subgraphs: blues/greens/violets for TVM kernels, warm colours for numpy steps
TVM_COLORS = ("#cfe3ff", "#d3f0d9", "#e3d9ff", "#cdeff2", "#dfe8c8")
NUMPY_COLORS = ("#ffdcae", "#ffd2d2", "#f7e8a6")
IO_COLOR = "#fff3c4"
PLAIN_COLOR = "#ffffff"
BORDER = "#5b6770"


def segment_colors(entry) -> list:
    """``[(segment, fill colour)]`` for a specialization's subgraphs, in execution order."""
    out = []
    counts = {"tvm": 0, "numpy": 0}
    for seg in entry.segments if entry is not None else ():
        palette = NUMPY_COLORS if seg.reference else TVM_COLORS
        k = counts.get(seg.backend, 0)
        counts[seg.backend] = k + 1
        out.append((seg, palette[k % len(palette)]))
    return out


def entry_types(entry) -> dict | None:
    return entry.ctx.types if entry is not None and entry.ctx is not None else None


def _dot_text(*parts) -> str:
    """A plain (never HTML-like) DOT label: backslashes escaped, parts on separate lines."""
    import graphviz

    return graphviz.nohtml("\\n".join(str(p).replace("\\", "\\\\") for p in parts))


def _short(text: str, n: int = 32) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def build_dot(graph, entry=None):
    """A ``graphviz.Digraph`` of ``graph``, typed and coloured by ``entry`` (a Specialization) if given."""
    import graphviz

    types = entry_types(entry) or {}
    dot = graphviz.Digraph(name=graph.name)
    dot.attr("graph", rankdir="TB", nodesep="0.25", ranksep="0.3", margin="0.05", fontname="Helvetica",
             fontsize="10", bgcolor="transparent")
    dot.attr("node", shape="box", style="rounded,filled", fillcolor=PLAIN_COLOR, color=BORDER,
             fontname="Helvetica", fontsize="10", height="0.3", margin="0.08,0.03")
    dot.attr("edge", color="#7a858c", arrowsize="0.6")

    def name(node):
        return f"%{node.id}"

    def declare(where, node, fill):
        t = types.get(node)
        if node.op == "input":
            label = _dot_text(node.value, t) if t is not None else _dot_text(node.value)
            where.node(name(node), label=label, shape="box", style="filled,bold", fillcolor=IO_COLOR)
        elif node.op == "const":
            where.node(name(node), label=_dot_text(_short(repr(node.value))), shape="plaintext",
                       style="", fontcolor="#6a737d", fontsize="9")
        else:
            head = f"%{node.id} {node.op}"
            label = _dot_text(head, _short(str(t), 40)) if t is not None else _dot_text(head)
            where.node(name(node), label=label, fillcolor=fill)

    placed = set()
    for k, (seg, color) in enumerate(segment_colors(entry)):
        members = [n for n in seg.nodes if n not in placed]
        if not members:
            continue
        with dot.subgraph(name=f"cluster_{k}") as cluster:
            what = seg.description or seg.backend
            cluster.attr(label=_dot_text(f"subgraph {k}: {what}"), style="rounded,dashed", color=BORDER,
                         fontcolor="#3b4349", labeljust="l")
            for n in members:
                declare(cluster, n, color)
                placed.add(n)
    for n in graph.nodes:
        if n not in placed:
            declare(dot, n, PLAIN_COLOR)
    for n in graph.nodes:
        for operand in n.operands:
            dot.edge(name(operand), name(n))
    for k, (out_name, node) in enumerate(graph.outputs):
        oid = f"out{k}"
        dot.node(oid, label=_dot_text(out_name), shape="box", style="filled,bold",
                 peripheries="2", fillcolor=IO_COLOR)
        dot.edge(name(node), oid)
    return dot


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)
_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')
_COMMENT = re.compile(r"<!--.*?-->\s*", re.S)
_ID_CLASS = re.compile(r'\s+(?:id|class)="[^"]*"')


def inline_svg(svg: str) -> str:
    """SVG text from ``dot`` made fit to sit inside an HTML page: no prolog/DOCTYPE/comments, no
    namespace URLs (the HTML parser puts ``<svg>`` in the SVG namespace itself), no ids or classes
    (several pictures share a page, and a notebook's own CSS must not style them), scaled to fit."""
    svg = _PROLOG.sub("", svg, count=1)
    svg = _COMMENT.sub("", svg)
    svg = _XMLNS.sub("", svg)
    svg = _ID_CLASS.sub("", svg)
    return svg.replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1).strip()


def graph_svg(graph, entry=None) -> str:
    """The graph as an inline ``<svg>`` element. Raises ImportError without the graphviz package,
    ``graphviz.ExecutableNotFound`` without ``dot``."""
    dot = build_dot(graph, entry)
    return inline_svg(dot.pipe(format="svg", encoding="utf-8"))


def render_graph_html(graph, entry=None) -> str:
    """An ``<svg>`` picture of the graph, or its text listing in a ``<pre>`` when graphviz cannot draw."""
    try:
        import graphviz
    except ImportError:
        return fallback_html(graph, entry, "the graphviz Python package is not installed")
    try:
        return graph_svg(graph, entry)
    except graphviz.ExecutableNotFound:
        return fallback_html(graph, entry, "graphviz's dot program is not installed")
    except (graphviz.CalledProcessError, OSError) as exc:
        return fallback_html(graph, entry, f"dot failed: {type(exc).__name__}")


def fallback_html(graph, entry, why: str) -> str:
    listing = graph.listing(entry_types(entry))
    return (f'<div style="font-size:11px;color:#6a737d;margin:2px 0">graph as text ({html.escape(why)}; '
            f'install graphviz for a picture)</div>'
            f'<pre style="margin:0;padding:6px 8px;background:#f6f8fa;border:1px solid #d0d7de;'
            f'border-radius:4px;font-size:12px;line-height:1.35;overflow-x:auto">{html.escape(listing)}</pre>')
