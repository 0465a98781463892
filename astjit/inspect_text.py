"""Plain-text rendering of a jitted function: transformed source, fragments, cache entries."""


def render_function(jf) -> str:
    out = [f"# transformed source of {jf.original.__qualname__}", jf.source.rstrip()]
    for frag in jf.fragments:
        first, last = frag.lines
        out.append("")
        out.append(f"# {frag.name}: lines {first}-{last}, live-in ({', '.join(frag.live_in)}), "
                   f"live-out ({', '.join(frag.live_out)})")
        out.append(frag.graph.listing())
        for e in frag.entries:
            out.append(f"#   specialization {e.key}: {e.mode}, compiled in {e.compile_seconds * 1e3:.1f} ms"
                       + (f" ({e.note})" if e.note else ""))
    return "\n".join(out)
