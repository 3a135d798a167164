"""Every notebook runs top to bottom (nbclient) on its small setting.

The kernel is this interpreter (the project's venv): a kernelspec pointing at
``sys.executable`` is written to a temporary JUPYTER_PATH, so neither a user-level
``python3`` kernel of another Python nor a missing kernelspec in a fresh venv can get in
the way. Notebooks read ``BPETOPICS_NOTEBOOK_SMALL=1`` and train a tiny run themselves.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # end-to-end: in `make test`, left out by `make test-quick`

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
KERNEL = "bpetopics-test"


@pytest.fixture
def kernel_name(tmp_path, monkeypatch):
    """A kernelspec for this interpreter, found first on JUPYTER_PATH."""
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bpetopics tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return KERNEL


def test_notebooks_are_committed_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    assert NOTEBOOKS, "no notebook found"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{path.name} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_name, shared_data, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("BPETOPICS_NOTEBOOK_SMALL", "1")
    monkeypatch.delenv("BPETOPICS_RUN", raising=False)
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(shared_data / "sklearn"))
    monkeypatch.setenv("NLTK_DATA", str(shared_data / "nltk_data"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's outputs land here
    monkeypatch.setenv("MPLBACKEND", "Agg")

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=kernel_name, timeout=300,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    if path.name != "explore_20newsgroups.ipynb":
        return
    shown = " ".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert "<iframe srcdoc=" in shown and "LDAvis" in shown  # pyLDAvis inline
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the graph
