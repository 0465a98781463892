"""The generated gradient function is ordinary Python: show prints it, the command line too, and it
agrees with jax.grad where jax is installed."""

import io
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from grad_corpus import for_loop, mlp_loss, rnn_loss

import astjit


def test_show_prints_the_generated_source_and_its_fragments():
    g = astjit.grad(mlp_loss, argnums=(0, 2))
    out = io.StringIO()
    g.show(file=out)
    text = out.getvalue()
    assert "def mlp_loss_grad(w1, b1, w2, b2, x, y):" in text
    assert "h = np.tanh(" in text                 # the forward statements as written
    assert "_d_w1" in text and "_d_w2" in text     # the adjoints
    assert "_d_b1 =" not in text and "_d_x =" not in text     # no adjoint for what is not differentiated
    assert "__astjit_fragment_0(" in text         # and it runs as Fragments
    assert g.source in text


def test_command_line_show_of_a_gradient(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import numpy as np
        import astjit

        def loss(w, x):
            return np.sum(np.tanh(x @ w) ** 2)

        loss_grad = astjit.grad(loss)
    """))
    result = subprocess.run([sys.executable, "-m", "astjit", "show", "model.py:loss_grad", "--shapes",
                             "w=float32[3,2],x=float32[4,3]"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "def loss_grad(w, x):" in result.stdout
    assert "_matmul_right(" in result.stdout
    assert "cache entry [x=float32[4,3], w=float32[3,2]]" in result.stdout


def test_against_jax_grad():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    rng = np.random.default_rng(7)

    def jax_for_loop(x, w, n):
        h = x
        for i in range(n):
            h = jnp.tanh(h * w + 0.1 * i)
        return jnp.sum(h)

    def jax_rnn(w, u, xs, h0):
        h = h0
        for t in range(xs.shape[0]):
            h = jnp.tanh(h @ w + xs[t] @ u)
        return jnp.sum(h * h)

    for n in (3, 6):
        x, w = rng.standard_normal(n), rng.standard_normal(n)
        ours = astjit.grad(for_loop, argnums=(0, 1))(x, w, n)
        theirs = jax.grad(jax_for_loop, argnums=(0, 1))(x, w, n)
        for a, b in zip(ours, theirs):
            assert np.allclose(a, np.asarray(b), rtol=1e-12, atol=1e-14)
        args = (rng.standard_normal((n, n)) * 0.5, rng.standard_normal((2, n)), rng.standard_normal((5, 2, 2)),
                rng.standard_normal((2, n)))
        ours = astjit.grad(rnn_loss, argnums=(0, 1, 3))(*args)
        theirs = jax.grad(jax_rnn, argnums=(0, 1, 3))(*args)
        for a, b in zip(ours, theirs):
            assert np.allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)
