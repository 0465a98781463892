"""The backend written in docs/backends.md runs as printed there, in a fresh process."""

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "backends.md"


def test_the_documented_backend_example_runs_and_prints_what_the_page_says(tmp_path):
    text = DOC.read_text()
    code = next(block for block in re.findall(r"```python\n(.*?)```", text, re.S) if "class AffineBackend" in block)
    script = tmp_path / "affine_backend.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={"ASTJIT_CACHE": "0", "PATH": ""})
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    assert printed == "['numpy', 'affine chain: multiply multiply add']"
    assert f"It prints `{printed}`" in text
