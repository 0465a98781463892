"""Gradients: astjit.grad against jax.jit(jax.grad(...)) and torch autograd on the CPU, in one run.

    python benchmarks/gradients.py [--quick]

Two losses, float32: a 2-layer MLP (1024 inputs, 512 tanh units, 10 classes, batch 256, softmax
cross-entropy) and a 100-step tanh recurrence (batch 32, 64 inputs, 128 units), each also written with
helper functions (``astjit.grad, helpers``: the helpers inlined, against the loss written out). Every
system computes the gradient with respect to all weights; each result is checked against astjit's
before timing.
Columns: median time per call, ratio to the fastest system, and the first call in this process
(astjit: generating the gradient function and compiling its Fragments; jax: tracing and compiling;
torch: the first eager call). Peers run when installed (``pip install -e .[bench]``).
"""

import importlib
import statistics
import time

import numpy as np
from _timing import _batch, batch_size, format_time, parse_args, print_header

import astjit


def _optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


jax, torch = _optional("jax"), _optional("torch")


def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.mean(np.sum(y * np.log(p), axis=1))


def rnn_loss(w, u, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ w + xs[t] @ u)
    return np.mean(h * h)


def dense(x, w, b):
    return np.tanh(x @ w + b)


def softmax_cross_entropy(logits, y):
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.mean(np.sum(y * np.log(p), axis=1))


def mlp_loss_with_helpers(w1, b1, w2, b2, x, y):
    """``mlp_loss`` written with helper functions, which astjit.grad inlines."""
    return softmax_cross_entropy(dense(x, w1, b1) @ w2 + b2, y)


def rnn_step(h, x, w, u):
    return np.tanh(h @ w + x @ u)


def rnn_loss_with_helpers(w, u, xs, h0):
    """``rnn_loss`` with its step in a helper function."""
    h = h0
    for t in range(xs.shape[0]):
        h = rnn_step(h, xs[t], w, u)
    return np.mean(h * h)


def _mlp_args(rng):
    f = np.float32
    return (rng.standard_normal((1024, 512)).astype(f) * 0.03, np.zeros(512, f),
            rng.standard_normal((512, 10)).astype(f) * 0.05, np.zeros(10, f),
            rng.standard_normal((256, 1024)).astype(f), np.eye(10, dtype=f)[rng.integers(0, 10, 256)])


def _rnn_args(rng):
    f = np.float32
    return (rng.standard_normal((128, 128)).astype(f) * 0.08, rng.standard_normal((64, 128)).astype(f) * 0.1,
            rng.standard_normal((100, 32, 64)).astype(f), np.zeros((32, 128), f))


def _jax_versions():
    jnp = jax.numpy

    def mlp(w1, b1, w2, b2, x, y):
        h = jnp.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        p = jax.nn.softmax(logits, axis=1)
        return -jnp.mean(jnp.sum(y * jnp.log(p), axis=1))

    def rnn(w, u, xs, h0):
        def step(h, x):
            return jnp.tanh(h @ w + x @ u), None
        h, _ = jax.lax.scan(step, h0, xs)
        return jnp.mean(h * h)

    return (jax.jit(jax.grad(mlp, argnums=(0, 1, 2, 3))), jax.jit(jax.grad(rnn, argnums=(0, 1))))


def _torch_versions():
    def mlp(w1, b1, w2, b2, x, y):
        params = [torch.from_numpy(a).requires_grad_() for a in (w1, b1, w2, b2)]
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        h = torch.tanh(x @ params[0] + params[1])
        logp = torch.log_softmax(h @ params[2] + params[3], dim=1)
        loss = -(y * logp).sum(dim=1).mean()
        return [g.numpy() for g in torch.autograd.grad(loss, params)]

    def rnn(w, u, xs, h0):
        params = [torch.from_numpy(a).requires_grad_() for a in (w, u)]
        xs, h = torch.from_numpy(xs), torch.from_numpy(h0)
        for t in range(xs.shape[0]):
            h = torch.tanh(h @ params[0] + xs[t] @ params[1])
        return [g.numpy() for g in torch.autograd.grad((h * h).mean(), params)]

    return mlp, rnn


def main():
    opts = parse_args(__doc__.splitlines()[0])
    print_header("gradients: astjit.grad vs jax.jit(jax.grad) vs torch autograd (CPU, float32)", opts.repeats)
    if torch is not None:
        torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    cases = [("MLP 1024-512-10, batch 256", mlp_loss, mlp_loss_with_helpers, (0, 1, 2, 3), _mlp_args(rng), 0),
             ("tanh recurrence, 100 steps", rnn_loss, rnn_loss_with_helpers, (0, 1), _rnn_args(rng), 1)]
    jaxes = _jax_versions() if jax is not None else None
    torches = _torch_versions() if torch is not None else None
    for title, loss, with_helpers, argnums, args, k in cases:
        systems = {"astjit.grad": astjit.grad(loss, argnums=argnums),
                   "astjit.grad, helpers": astjit.grad(with_helpers, argnums=argnums)}
        if jaxes is not None:
            systems["jax.jit(jax.grad)"] = (lambda f: lambda *a: [np.asarray(g) for g in f(*a)])(jaxes[k])
        if torches is not None:
            systems["torch autograd"] = torches[k]
        first, reference = {}, None
        for name, fn in systems.items():
            start = time.perf_counter()
            result = fn(*args)
            first[name] = time.perf_counter() - start
            result = [np.asarray(r) for r in result]
            if reference is None:
                reference = result
            for r, e in zip(result, reference):
                assert r.shape == e.shape and np.allclose(r, e, rtol=2e-3, atol=2e-5), (title, name)
        numbers = {name: batch_size(fn, args) for name, fn in systems.items()}
        times = {name: [] for name in systems}
        for r in range(opts.repeats):
            order = list(systems) if r % 2 == 0 else list(reversed(systems))
            for name in order:
                times[name].append(_batch(systems[name], args, numbers[name]))
        med = {name: statistics.median(t) for name, t in times.items()}
        best = min(med.values())
        print(f"\n   {title}")
        print(f"   {'system':<20} {'per call':>10} {'x fastest':>10} {'first call':>11}")
        for name in systems:
            print(f"   {name:<20} {format_time(med[name]):>10} {med[name] / best:>9.2f}x {first[name]:>10.2f}s")
        print(f"   astjit: {_modes(systems['astjit.grad'])}")


def _modes(g):
    modes = [f"{i}:{sorted({e.mode for e in f.entries})}" for i, f in enumerate(g.jitted.fragments) if f.entries]
    return "fragments " + " ".join(modes)


if __name__ == "__main__":
    main()
