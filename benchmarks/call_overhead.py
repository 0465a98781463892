"""Where the per-call time of a cached astjit call goes, on the issue's chain at 16 float32 elements.

    python benchmarks/call_overhead.py [--quick]

Times each layer of a cached call on its own (median per call, batches of >= 20 ms, interleaved rounds)
and prints the cost each layer adds on top of the one it calls:

    jf(a, b, c)                      JitFunction.__call__: global guard, then the transformed function
      transformed(a, b, c)           the rewritten Python function: calls the fragment, returns y
        fragment(a, c, b)            the fragment's dispatch for the key in use: each argument's type
                                     (the kernel checks dtypes and shapes itself), then the runner
          runner(a, c, b)            the cached runner: allocate the output, call the kernel, catch errors
            kernel(a, c, b, out)     the TVM packed function: DLPack conversion of 4 arrays + the loop

This reaches into astjit's internals (the transformed function, fragment cache, segment kernel) to time
the layers one by one, so it may need updating when those change; the other benchmarks use only ``jit``.
"""

import statistics

import numpy as np
from _timing import _batch, batch_size, describe_modes, format_time, parse_args, print_header

from astjit import jit
from astjit.runtime.keys import make_key


def chain(a, b, c):
    x = (a + 3) * 4 / 100
    y = np.tanh(x) * c + b
    return y


def empty_function(a, b, c):
    return a


def inline_key(a0, a1, a2, ndarray=np.ndarray):
    """The cache key as the generated dispatch computes it, for three arguments."""
    return ((a0.dtype, a0.shape) if type(a0) is ndarray else type(a0),
            (a1.dtype, a1.shape) if type(a1) is ndarray else type(a1),
            (a2.dtype, a2.shape) if type(a2) is ndarray else type(a2))


def layers(jitted, args):
    """(label, callable, arguments) for each layer of a cached call, outermost first."""
    a, b, c = args
    for _ in range(6):                              # compile, measure, then the dispatch for this key
        jitted(*args)
    transformed = jitted._transformed.function
    (fragment,) = jitted.fragments
    cells = dict(zip(transformed.__code__.co_freevars, transformed.__closure__ or ()))
    entry = cells[fragment.name].cell_contents      # what the transformed function actually calls
    frag_args = (a, c, b)                           # the fragment's live-ins, in its order
    assert fragment.live_in == ["a", "c", "b"], fragment.live_in
    key = make_key(frag_args)
    runner = fragment.cache[key]
    (spec,) = fragment.entries
    (segment,) = spec.segments
    kernel = segment.compiled.direct.function        # the compiled kernel, destination-passing
    out = np.empty_like(a)
    guard = getattr(jitted, "_guard", None)
    if guard is None or not callable(guard) or guard() is False:
        guard = jitted._transformed.resolver.guards_hold
    import tvm

    tvm_args = [tvm.runtime.tensor(x) for x in (a, c, b, out)]     # aligned copies
    cache_get = fragment.cache.get
    return [
        ("numpy: chain(a, b, c)", chain, args),
        ("python: empty 3-argument function", empty_function, args),
        ("jf(a, b, c)", jitted, args),
        ("  global guard", guard, ()),
        ("  transformed(a, b, c)", transformed, args),
        ("    fragment(a, c, b)", entry, frag_args),
        ("      make_key(args) (generic helper)", make_key, (frag_args,)),
        ("      key, inline for 3 arguments", inline_key, frag_args),
        ("      cache.get(key)", cache_get, (key,)),
        ("      runner(a, c, b)", runner, frag_args),
        ("        np.empty(16, float32)", np.empty, (a.shape, a.dtype)),
        ("        kernel(a, c, b, out), numpy arrays", kernel, frag_args + (out,)),
        ("        kernel(...), tvm Tensors (no DLPack)", kernel, tuple(tvm_args)),
    ]


def main():
    opts = parse_args(__doc__.splitlines()[0])
    print_header("cached-call overhead, chain on 16 float32 elements", opts.repeats)
    rng = np.random.default_rng(0)
    args = tuple(rng.standard_normal(16).astype(np.float32) for _ in range(3))
    jitted = jit(chain)
    cases = layers(jitted, args)
    print(f"   {describe_modes(jitted)}")
    for _, fn, a in cases:
        for _ in range(3):
            fn(*a)
    numbers = [batch_size(fn, a) for _, fn, a in cases]
    times = [[] for _ in cases]
    for r in range(opts.repeats):
        order = range(len(cases)) if r % 2 == 0 else reversed(range(len(cases)))
        for i in order:
            _, fn, a = cases[i]
            times[i].append(_batch(fn, a, numbers[i]))
    med = {label: statistics.median(t) for (label, _, _), t in zip(cases, times)}
    width = max(len(label) for label, _, _ in cases)
    for label, _, _ in cases:
        print(f"   {label:<{width}}  {format_time(med[label]):>10}")

    def us(x):
        return f"{x * 1e6:5.2f} us"

    total = med["jf(a, b, c)"]
    kernel = med["        kernel(a, c, b, out), numpy arrays"]
    parts = [
        ("JitFunction.__call__ (guard, *args forwarding)", total - med["  transformed(a, b, c)"]),
        ("transformed function (frame, call, return)", med["  transformed(a, b, c)"] - med["    fragment(a, c, b)"]),
        ("fragment dispatch (the key's own: type tests, call)", med["    fragment(a, c, b)"] - med["      runner(a, c, b)"]),
        ("runner (np.empty, try, call)", med["      runner(a, c, b)"] - kernel),
        ("  of which np.empty", med["        np.empty(16, float32)"]),
        ("TVM kernel call, numpy arguments", kernel),
        ("  of which converting 4 numpy arrays (DLPack)",
         kernel - med["        kernel(...), tvm Tensors (no DLPack)"]),
        ("  of which the call itself (tvm Tensors, incl. the loop)", med["        kernel(...), tvm Tensors (no DLPack)"]),
    ]
    print(f"\n   breakdown of jf(a, b, c) = {us(total)} (numpy eager: {us(med['numpy: chain(a, b, c)'])})")
    for label, value in parts:
        print(f"   {label:<{width + 14}}  {us(value)}")


if __name__ == "__main__":
    main()
