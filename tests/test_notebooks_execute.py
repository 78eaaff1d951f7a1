"""Both faces of every notebook run in a real kernel, as a student and an instructor would run them."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "solutions").glob("*/*.ipynb"))
RELEASES = sorted((ROOT / "notebooks").glob("*/*.ipynb"))


def _run(path: Path, allow_errors: bool):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=allow_errors,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_instructor_notebook_passes_every_check(path):
    nb = _run(path, allow_errors=False)
    ticks = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert ticks.count("✓") >= 2, "the public and hidden checks print their ticks"
    widgets = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    assert widgets.get("state"), "the notebook's widget was built"


@pytest.mark.parametrize("path", RELEASES, ids=lambda p: p.stem)
def test_student_notebook_runs_and_asks_for_the_answers(path):
    nb = _run(path, allow_errors=True)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, f"a cell raised, so Restart & Run All would stop there: {[e.ename for e in errors]}"
    failed = [o.text for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
              for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert failed and all(t.startswith("✗ ") for t in failed), "the stubs should make the checks fail"
    assert any("not written yet" in t for t in failed)
    summary = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert "Public checks pass for exercises worth 0 of" in summary, summary
