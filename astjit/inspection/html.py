"""HTML rendering of a jitted function, a Fragment and a cache entry, for notebooks (``_repr_html_``).

Self-contained: styles are inline attributes, source is highlighted by pygments with inline styles,
graphs are inline SVG (graph_svg), and nothing refers to the network. Every piece of user text
(source, names, reprs, messages) is escaped.
"""

import html
import inspect

from ..runtime.keys import describe_key
from .graph_svg import render_graph_html, segment_colors
from .text import enclosing_loop, entry_graph, is_loop, mark_loop_calls, render_mode, subgraph_lines

# one pastel per fragment in the original source, with a stronger edge colour
FRAGMENT_COLORS = (("#e7f0ff", "#4a7fd6"), ("#e8f6ea", "#3f9a55"), ("#f3ebff", "#8a5cd1"),
                   ("#fff1e0", "#d98a2b"), ("#e6f6f7", "#2f9aa3"), ("#fbe9ef", "#c2477a"))

FONT = "-apple-system,'Segoe UI',Helvetica,Arial,sans-serif"
MONO = "ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',monospace"
BOX = (f"font-family:{FONT};font-size:13px;color:#1f2328;background:#ffffff;line-height:1.45;"
       "padding:10px 12px;border:1px solid #d0d7de;border-radius:6px;max-width:100%;overflow-x:auto")
H2 = "font-size:15px;font-weight:600;margin:0 0 6px 0"
H3 = "font-size:13px;font-weight:600;margin:12px 0 4px 0;color:#3b4349"
PRE = (f"margin:0;padding:6px 8px;font-family:{MONO};font-size:12px;line-height:1.4;background:#f6f8fa;"
       "border:1px solid #d0d7de;border-radius:4px;overflow-x:auto;white-space:pre")
CODE = f"font-family:{MONO};font-size:12px"
MUTED = "color:#6a737d"
# Jupyter's own stylesheets (classic nbconvert exports, JupyterLab) style every table of an output:
# fixed layout, centred, cells right-aligned and middle-aligned, striped and highlighted rows. Every
# table and cell here states those properties itself, so the view looks the same inside Jupyter.
TABLE = ("border-collapse:collapse;font-size:12px;margin:2px 0;table-layout:auto;width:auto;"
         "border:none;color:#1f2328")
CELL = "line-height:1.45;white-space:normal;max-width:none;border:none"
TH = (f"{CELL};text-align:left;vertical-align:top;padding:3px 10px;border-bottom:2px solid #d0d7de;"
      "background:#f6f8fa;font-weight:600")
TD = f"{CELL};text-align:left;padding:3px 10px;border-bottom:1px solid #e4e8ec;vertical-align:top"
TR = "background:#ffffff"
SOURCE_TABLE = ("border-collapse:collapse;width:100%;table-layout:auto;margin:0;border:1px solid #d0d7de;"
                "background:#fafbfc;color:#1f2328;font-size:12px")


def esc(text) -> str:
    return html.escape(str(text), quote=True)


# -- source highlighting -----------------------------------------------------------------------------
def highlight_block(source: str) -> str:
    """Python source as a highlighted ``<pre>`` (inline styles); escaped plain text without pygments."""
    lines = highlight_lines(source.rstrip("\n").split("\n"))
    return f'<pre style="{PRE}">' + "\n".join(lines) + "</pre>"


def highlight_lines(lines: list) -> list:
    """Each source line as highlighted HTML (spans with inline styles), one string per line."""
    text = "\n".join(lines)
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return [esc(line) for line in lines]
    out = highlight(text, PythonLexer(stripnl=False, ensurenl=False),
                    HtmlFormatter(noclasses=True, nowrap=True)).split("\n")
    if len(out) > len(lines) and not "".join(out[len(lines):]).strip():
        out = out[:len(lines)]
    if len(out) != len(lines):              # pygments split differently: plain lines are safer
        return [esc(line) for line in lines]
    return out


def _fragment_color(frag):
    return FRAGMENT_COLORS[getattr(frag, "index", 0) % len(FRAGMENT_COLORS)]


def _latest(frag):
    return frag.entries[-1] if frag.entries else None


def _mode_summary(frag) -> str:
    entry = _latest(frag)
    return render_mode(entry) if entry is not None else "not specialized yet"


def _flow(frag) -> str:
    ins = ", ".join(esc(n) for n in frag.live_in)
    outs = ", ".join(esc(n) for n in frag.live_out)
    return (f'in <span style="{CODE}">({ins})</span> &rarr; '
            f'out <span style="{CODE}">({outs})</span>')


def _lines_text(frag) -> str:
    first, last = frag.lines
    return f"line {first}" if first == last else f"lines {first}&ndash;{last}"


# -- the original source with fragment ranges ----------------------------------------------------------
def original_source_html(jf) -> str:
    """The function as written, each fragment's line range shaded and labelled; a loop region is also
    drawn as a bar beside all of its lines (the fragments inside it run when it runs as Python)."""
    try:
        lines, start = inspect.getsourcelines(jf.original)
    except (OSError, TypeError):
        return f'<div style="{MUTED}">(the original source is not available)</div>'
    lines = [line.rstrip("\n") for line in lines]
    if start == 0:
        start = 1
    frags = jf.fragments
    loops = [f for f in frags if is_loop(f)]
    highlighted = highlight_lines(lines)
    cell = f"{CELL};vertical-align:top;text-align:left"
    rows = []
    for i, code in enumerate(highlighted):
        lineno = start + i
        here = [f for f in frags if f.lines[0] <= lineno <= f.lines[1]]
        loop_here = [f for f in loops if f.lines[0] <= lineno <= f.lines[1]]
        loop_bar = f"background:{_fragment_color(loop_here[-1])[1]}" if loop_here else "background:transparent"
        for frag in (f for f in here if f.lines[0] == lineno):
            bg, edge = _fragment_color(frag)
            what = "loop region" if is_loop(frag) else "fragment"
            outer = enclosing_loop(frag, frags)
            inside = f" &middot; inside the loop of {esc(outer.name)}" if outer is not None else ""
            rows.append(
                f'<tr style="{TR}"><td style="{cell};padding:0;width:1%"></td>'
                f'<td style="{cell};{loop_bar};width:4px;padding:0"></td>'
                f'<td style="{cell};background:{edge};width:4px;padding:0"></td>'
                f'<td style="{cell};background:{bg};padding:2px 8px;font-size:11px;border-top:1px solid {edge}">'
                f'<b style="{CODE};font-size:11px;color:{edge}">{esc(frag.name)}</b> &middot; {what} &middot; '
                f'{_lines_text(frag)}{inside} &middot; {_flow(frag)} &middot; {esc(_mode_summary(frag))} '
                f'&middot; {frag.calls} calls</td></tr>')
        if here:
            bg, edge = _fragment_color(here[-1])
            marker = f"background:{edge}"
        else:
            bg, marker = "transparent", "background:transparent"
        rows.append(
            f'<tr style="{TR}"><td style="{cell};{MUTED};{CODE};text-align:right;padding:0 8px 0 4px;'
            f'user-select:none;width:1%;white-space:nowrap">{lineno}</td>'
            f'<td style="{cell};{loop_bar};width:4px;padding:0"></td>'
            f'<td style="{cell};{marker};width:4px;padding:0"></td>'
            f'<td style="{cell};background:{bg};padding:0 8px"><pre style="margin:0;padding:0;border:none;'
            f'{CODE};line-height:1.45;background:transparent;white-space:pre;overflow:visible;text-align:left">'
            f'{code or " "}</pre></td></tr>')
    return f'<table style="{SOURCE_TABLE}"><tbody>{"".join(rows)}</tbody></table>'


# -- cache tables and subgraphs ------------------------------------------------------------------------
def _key_cells(names, key) -> str:
    parts = []
    for name, k in zip(names, key):
        if isinstance(k, tuple):
            dims = f"{k[1]}-d" if isinstance(k[1], int) else ",".join(str(d) for d in k[1])
            parts.append(f"{esc(name)}: {esc(k[0])}[{esc(dims)}]")
        else:
            parts.append(f"{esc(name)}: {esc(getattr(k, '__name__', k))}")
    return f'<span style="{CODE}">' + "<br>".join(parts) + "</span>"


def _guards(names, entry) -> str:
    out = []
    for i, v in sorted(entry.value_guards.items()):
        out.append(f"{names[i] if i < len(names) else i} == {v!r}")
    for i, (lo, hi) in sorted(entry.range_guards.items()):
        out.append(f"{lo} <= {names[i] if i < len(names) else i} <= {hi}")
    return "<br>".join(esc(g) for g in out) or f'<span style="{MUTED}">&ndash;</span>'


def cache_table_html(frag, entries=None) -> str:
    """Key (dtype/shape per live-in), mode, compile time, guards and notes of each cache entry."""
    entries = frag.entries if entries is None else entries
    names = frag.live_in
    caption = (f'<div style="{MUTED};font-size:12px;margin:2px 0">{len(frag.entries)} cache '
               f'{"entry" if len(frag.entries) == 1 else "entries"}; {esc(frag.name)} called '
               f'{frag.calls} {"time" if frag.calls == 1 else "times"}</div>')
    if not entries:
        return caption + f'<div style="{MUTED}">(no cache entries: the fragment has not run yet)</div>'
    head = "".join(f'<th style="{TH}">{h}</th>' for h in ("#", "key", "mode", "compile ms", "guards", "note"))
    rows = []
    for entry in entries:
        k = frag.entries.index(entry) if entry in frag.entries else "&ndash;"
        rows.append(
            f'<tr style="{TR}"><td style="{TD}">{k}</td><td style="{TD}">{_key_cells(names, entry.key)}</td>'
            f'<td style="{TD}">{_mode_badge(entry)}</td>'
            f'<td style="{TD};text-align:right">{entry.compile_seconds * 1e3:.1f}</td>'
            f'<td style="{TD};{CODE}">{_guards(names, entry)}</td>'
            f'<td style="{TD}">{esc(entry.note) if entry.note else ""}</td></tr>')
    return caption + f'<table style="{TABLE}"><tbody><tr style="{TR}">{head}</tr>{"".join(rows)}</tbody></table>'


MODE_COLORS = {"tvm": "#cfe3ff", "mixed": "#e3d9ff", "numpy": "#ffdcae", "python": "#eeeeee"}


def _mode_badge(entry) -> str:
    color = MODE_COLORS.get(entry.mode, MODE_COLORS["tvm"])     # any other compiled backend
    return (f'<span style="background:{color};border-radius:3px;padding:0 5px;white-space:nowrap">'
            f'{esc(render_mode(entry))}</span>')


def subgraphs_html(entry) -> str:
    """The legend of the graph picture: which backend runs which nodes, and why numpy got some."""
    if entry is None:
        return ""
    colored = segment_colors(entry)
    if not colored:
        why = f": {esc(entry.note)}" if entry.note else ""
        return f'<div style="{MUTED};font-size:12px">no compiled subgraphs; {esc(render_mode(entry))}{why}</div>'
    texts = subgraph_lines(entry)
    items, k = [], -1
    for text in texts:
        if text.startswith("subgraph "):
            k += 1
            color = colored[k][1] if k < len(colored) else "#eeeeee"
            items.append(f'<div style="margin:1px 0"><span style="display:inline-block;width:11px;height:11px;'
                         f'background:{color};border:1px solid #5b6770;border-radius:2px;'
                         f'vertical-align:-1px;margin-right:6px"></span><span style="{CODE}">{esc(text)}</span></div>')
        else:
            items.append(f'<div style="margin:0 0 2px 18px;color:#9a4d00;font-size:12px">{esc(text.strip())}</div>')
    return "".join(items)


def _graph_block(frag, entry) -> str:
    if frag.graph is None:               # a loop region: one kernel for the whole nest, no dataflow graph
        mode = esc(render_mode(entry)) if entry is not None else "not specialized yet"
        return (f'<div style="margin:4px 0;{MUTED};font-size:12px">a loop nest compiled as one kernel'
                f' ({mode}); its TIR: <code>astjit show --code tir</code></div>')
    return (f'<div style="margin:4px 0">{render_graph_html(entry_graph(frag, entry), entry)}</div>'
            f'<div style="margin:4px 0">{subgraphs_html(entry)}</div>')


# -- public renderers ----------------------------------------------------------------------------------
def _fragment_body(frag, source=True) -> str:
    bg, edge = _fragment_color(frag)
    parts = [f'<div style="{H2};{CODE};font-size:14px;color:{edge}">{esc(frag.name)}</div>',
             f'<div style="font-size:12px">{"loop region, " if is_loop(frag) else ""}{_lines_text(frag)} of <span style="{CODE}">{esc(frag.filename)}'
             f'</span> &middot; {_flow(frag)} &middot; {esc(_mode_summary(frag))}</div>']
    if source:
        parts.append(f'<div style="{H3}">Source</div>')
        parts.append(_numbered_block(frag))
    latest = _latest(frag)
    which = "" if latest is None else f" (types and subgraphs of cache entry {len(frag.entries) - 1})"
    parts.append(f'<div style="{H3}">Graph{which}</div>')
    parts.append(_graph_block(frag, latest))
    parts.append(f'<div style="{H3}">Cache</div>')
    parts.append(cache_table_html(frag))
    return "".join(parts)


def _numbered_block(frag) -> str:
    first, _ = frag.lines
    lines = frag.source_lines()
    if not any(line.strip() for line in lines):
        return f'<div style="{MUTED}">(source not available)</div>'
    width = len(str(first + len(lines)))
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    code = highlight_lines([line[indent:] for line in lines])
    numbered = [f'<span style="{MUTED}">{str(first + i).rjust(width)}</span>  {c}' for i, c in enumerate(code)]
    return f'<pre style="{PRE}">' + "\n".join(numbered) + "</pre>"


def render_fragment_html(frag) -> str:
    """A Fragment: its lines, live-ins/outs, graph picture (latest specialization) and cache table."""
    bg, edge = _fragment_color(frag)
    return f'<div style="{BOX};border-left:4px solid {edge}">{_fragment_body(frag)}</div>'


def render_entry_html(frag, entry) -> str:
    """One cache entry (Specialization) of ``frag``: its key, mode, guards and graph as it runs."""
    if frag is None:
        names = [f"arg{i}" for i in range(len(entry.key))]
        return (f'<div style="{BOX}"><div style="{H2}">astjit cache entry</div>'
                f'<div style="{CODE}">{esc(describe_key(names, entry.key))}</div>'
                f'<div>{_mode_badge(entry)} compiled in {entry.compile_seconds * 1e3:.1f} ms</div></div>')
    bg, edge = _fragment_color(frag)
    index = frag.entries.index(entry) if entry in frag.entries else None
    title = f"cache entry {index} of " if index is not None else "cache entry of "
    parts = [f'<div style="{H2}">{title}<span style="{CODE};color:{edge}">{esc(frag.name)}</span></div>',
             f'<div style="{CODE}">[{esc(describe_key(frag.live_in, entry.key))}]</div>',
             f'<div style="margin:4px 0">{_mode_badge(entry)} &middot; compiled in '
             f'{entry.compile_seconds * 1e3:.1f} ms &middot; {_lines_text(frag)} &middot; {_flow(frag)}</div>',
             f'<div style="{H3}">Source</div>', _numbered_block(frag),
             f'<div style="{H3}">Graph</div>', _graph_block(frag, entry),
             f'<div style="{H3}">Cache entry</div>', cache_table_html(frag, [entry])]
    return f'<div style="{BOX};border-left:4px solid {edge}">{"".join(parts)}</div>'


def render_function_html(jf) -> str:
    """A jitted function: the source astjit runs, its fragments marked in the original source, and
    each fragment's graph and cache."""
    fn = jf.original
    filename = getattr(getattr(fn, "__code__", None), "co_filename", "")
    frags = jf.fragments
    source = mark_loop_calls(jf.source, frags)
    parts = [f'<div style="{H2}">astjit: <span style="{CODE};font-size:14px">{esc(fn.__qualname__)}</span></div>',
             f'<div style="{MUTED};font-size:12px">{esc(filename)} &middot; {len(frags)} '
             f'{"fragment" if len(frags) == 1 else "fragments"}</div>',
             f'<div style="{H3}">Transformed source (what runs)</div>', highlight_block(source),
             f'<div style="{H3}">Fragments in the original source</div>', original_source_html(jf)]
    records = jf.records()
    if records:
        parts.append(f'<div style="{H3}">explain(): what runs as Python, and recompiles</div>')
        parts.append(f'<pre style="{PRE}">' + esc("\n".join(r.format() for r in records)) + "</pre>")
    for frag in frags:
        bg, edge = _fragment_color(frag)
        parts.append(f'<div style="margin-top:12px;padding:8px 10px;border:1px solid #d0d7de;'
                     f'border-left:4px solid {edge};border-radius:4px">{_fragment_body(frag, source=False)}</div>')
    return f'<div style="{BOX}">{"".join(parts)}</div>'
