"""The instructor's face of every notebook (its solutions) runs in a real kernel, every check ticked.

The student's face, each released notebook, runs where a student runs it: in the installed student
bundle, with the package that withholds the graded functions
(``test_every_notebook_runs_in_the_students_install`` in ``tests/test_student_bundle.py``, which asserts
what a run of it here asserted, and that its widget is built)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "solutions").glob("*/*.ipynb"))


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
