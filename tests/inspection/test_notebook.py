"""examples/inspect.ipynb runs headless, and its cells display astjit's HTML renderings."""

import json
import shutil
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "inspect.ipynb"


def has_dot() -> bool:
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


def python3_kernel(tmp_path) -> KernelManager:
    """The notebook's 'python3' kernel, run by this interpreter (this environment's astjit), whatever
    other 'python3' kernel specs are installed for the user or the system."""
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (astjit tests)", "language": "python"}))
    return KernelManager(kernel_name="python3",
                         kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")]))


def outputs_of(cell, mime):
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", "") if mime == "text/plain" else "")
        elif o.get("output_type") == "error":
            raise AssertionError(f"cell failed: {o.get('ename')}: {o.get('evalue')}")
        else:
            out.append(o.get("data", {}).get(mime, ""))
    return "".join(out)


def test_stored_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_inspect_notebook_runs_and_displays_html(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, km=python3_kernel(tmp_path), kernel_name="python3", timeout=300,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    by_source = {c.source.strip(): c for c in code}
    function_html = outputs_of(by_source["step"], "text/html")
    fragment_html = outputs_of(by_source["step.fragments[0]"], "text/html")
    entry_html = outputs_of(by_source["step.fragments[0].entries[0]"], "text/html")
    explained = outputs_of(by_source["print(explain(step))"], "text/plain")

    # the function: transformed source, every fragment marked in the original, graphs, caches
    assert "Transformed source" in function_html and "Fragments in the original source" in function_html
    for k in range(5):
        assert f"__astjit_fragment_{k}" in function_html
    assert "__astjit_cond_1" in function_html
    assert "compile ms" in function_html and "cache entr" in function_html
    # a fragment and a cache entry
    assert "__astjit_fragment_0" in fragment_html and "compile ms" in fragment_html
    assert "called 1 time" in fragment_html
    assert "cache entry 0 of" in entry_html and "a=float32[64]" in entry_html
    for page in (function_html, fragment_html, entry_html):
        if has_dot():
            assert "<svg" in page
        else:
            assert "graph as text" in page
        lowered = page.lower()
        assert "http://" not in lowered and "https://" not in lowered and "<script" not in lowered
    assert explained.startswith("step")
