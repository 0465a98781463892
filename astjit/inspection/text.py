"""Plain-text (optionally terminal-coloured) rendering of a jitted function and its Fragments."""

from ..runtime.keys import describe_key


def render_function(jf, fragments: bool = False, code: str | None = None, color: bool = False) -> str:
    source = mark_loop_calls(jf.source.rstrip(), jf.fragments)
    if color:
        source = highlight_python(source)
    how = "as astjit runs it" if jf._transformed is not None else "as Python runs it"
    out = [f"# {jf.original.__qualname__}, {how} ({jf.original.__code__.co_filename})", source]
    for frag in jf.fragments:
        out.append("")
        out.append(render_fragment(frag, graph=fragments, code=code, frags=jf.fragments))
    return "\n".join(out)


def is_loop(frag) -> bool:
    return frag.block.kind == "loop"


def enclosing_loop(frag, frags):
    """The innermost loop region whose lines hold ``frag`` (its blocks run when that loop runs as
    Python), or None."""
    first, last = frag.lines
    around = [f for f in frags if f is not frag and is_loop(f) and f.lines[0] <= first and last <= f.lines[1]]
    return max(around, key=lambda f: f.lines[0], default=None)


def region_text(frag, frags) -> str:
    """``loop region, lines 7-11`` / ``lines 8-8, inside the loop of __astjit_fragment_0``."""
    first, last = frag.lines
    text = f"{'loop region, ' if is_loop(frag) else ''}lines {first}-{last}"
    outer = enclosing_loop(frag, frags)
    if outer is not None:
        text += f", inside the loop of {outer.name} (runs when that loop runs as Python)"
    return text


def mark_loop_calls(source: str, frags) -> str:
    """The transformed source with each call of a loop region marked: ``# loop region, lines 7-11``."""
    marks = {f"{f.name}(": f"  # loop region, lines {f.lines[0]}-{f.lines[1]}" for f in frags if is_loop(f)}
    if not marks:
        return source
    out = []
    for line in source.split("\n"):
        mark = next((m for call, m in marks.items() if call in line and not line.lstrip().startswith("#")), None)
        out.append(line + mark if mark else line)
    return "\n".join(out)


def render_fragment(frag, graph: bool = True, code: str | None = None, frags=()) -> str:
    lines = [f"# {frag.name}: {region_text(frag, frags)}; live-in ({', '.join(frag.live_in)}) -> "
             f"live-out ({', '.join(frag.live_out)}); {frag.calls} calls"]
    if graph:
        latest = frag.entries[-1] if frag.entries else None
        if frag.graph is None:      # a compiled loop: its kernel is the listing (--code tir)
            lines.append("#   a loop nest, compiled as one kernel (see --code tir)")
        else:
            ctx = latest.ctx if latest is not None else None
            lines.append(entry_graph(frag, latest).listing(ctx.types if ctx is not None else None))
        rewrites = [r for r in frag.records if r.kind == "rewrite"]
        for r in rewrites:
            lines.append(f"#   {r.message.replace(' rewrote this line', ' rewrote line ' + str(r.lineno))}")
    for entry in frag.entries:
        lines.append(f"#   cache entry [{describe_key(frag.live_in, entry.key)}]: {render_mode(entry)}, "
                     f"compiled in {entry.compile_seconds * 1e3:.1f} ms")
        if graph:
            lines.extend("#     " + s for s in subgraph_lines(entry))
        if code:
            lines.extend(code_lines(entry, code))
    return "\n".join(lines)


def entry_graph(frag, entry):
    """The graph a specialization runs: the block's graph after the passes (graph/passes), or the
    block's own graph before any specialization."""
    ctx = entry.ctx if entry is not None else None
    return ctx.graph if ctx is not None else frag.graph


def render_mode(entry) -> str:
    text = {"tvm": "one TVM kernel" if len(entry.segments) == 1 else "TVM kernels",
            "mixed": "TVM kernels and numpy", "numpy": "numpy (reference interpreter)",
            "python": "runs as Python"}.get(entry.mode, entry.mode)
    if entry.note and entry.mode == "python":
        text += f" ({entry.note})"
    measured = entry.measured
    if entry.kernel_failed:
        return text + "; its compiled code raised at a call: runs as Python"
    if measured:
        compiled, python = measured
        chosen = "Python" if entry.runs == "python" else "compiled"
        faster = max(compiled, python) / max(min(compiled, python), 1e-12)
        text += (f"; measured {compiled * 1e6:.1f} us compiled vs {python * 1e6:.1f} us Python: runs {chosen} "
                 f"({faster:.2f}x faster)")
    return text


def subgraph_lines(entry) -> list[str]:
    """Which backend runs which nodes, and why numpy got the ones TVM did not take."""
    out = []
    reasons = entry.reasons or {}
    for k, seg in enumerate(entry.segments):
        nodes = ", ".join(f"%{n.id} {n.op}" for n in seg.nodes)
        what = seg.description or seg.backend
        out.append(f"subgraph {k}: {what}: {nodes}" if nodes else f"subgraph {k}: {what}")   # (a loop: no nodes)
        if seg.reference:
            why = sorted({reasons[n] for n in seg.nodes if reasons.get(n)})
            if why:
                out.append(f"  on numpy because: {'; '.join(why)}")
    return out


def code_lines(entry, kind) -> list[str]:
    from .codegen import kernel_code

    out = []
    for k, seg in enumerate(entry.segments):
        if seg.compiled is None or not seg.compiled.artifacts:
            continue
        out.append(f"# ---- {kind} code of subgraph {k} ({seg.backend}) ----")
        try:
            out.append(kernel_code(seg, kind).rstrip())
        except Exception as exc:  # e.g. a target TVM cannot generate here: say so, do not crash
            out.append(f"# could not generate {kind} code: {type(exc).__name__}: {exc}")
    return out


def highlight_python(text: str) -> str:
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer

    return highlight(text, PythonLexer(), TerminalFormatter()).rstrip()
