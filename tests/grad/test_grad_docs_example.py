"""The example of docs/gradients.md runs as printed there, in a fresh process, and its gradient is right."""

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "gradients.md"


def test_the_documented_example_runs(tmp_path):
    code = next(block for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S) if "loss_grad" in block)
    code += textcheck
    script = tmp_path / "gradient_example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={"ASTJIT_CACHE": "0", "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert "def loss_grad(w, b, x, y):" in done.stdout
    assert "h = np.tanh(_t1)" in done.stdout
    assert done.stdout.rstrip().endswith("checked")


textcheck = """
eps = 1e-6
num = np.zeros_like(w)
for i in np.ndindex(w.shape):
    wp, wm = w.copy(), w.copy()
    wp[i] += eps
    wm[i] -= eps
    num[i] = (loss(wp, b, x, y) - loss(wm, b, x, y)) / (2 * eps)
assert np.allclose(dw, num, rtol=1e-6, atol=1e-9) and np.isclose(value, loss(w, b, x, y))
print("checked")
"""
