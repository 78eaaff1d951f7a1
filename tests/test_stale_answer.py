"""A check re-run after its answer cell was edited but not run judges the text that ran, while grading
reads the saved notebook: the check says so, on a ✓ and on a ✗ (a live kernel, its cells run as
JupyterLab runs them, each execute request naming its cell)."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient
from student_support import execute_as_a_front_end

RIGHT = ("def softmax(S, axis=-1):\n    S = np.asarray(S, dtype=float)\n"
         "    m = np.max(S, axis=axis, keepdims=True)\n    m = np.where(np.isfinite(m), m, 0.0)\n"
         "    e = np.exp(S - m)\n    return e / e.sum(axis=axis, keepdims=True)\n")
WRONG = "def softmax(S, axis=-1):\n    e = np.exp(S)\n    return e / e.sum(axis=0, keepdims=True)\n"
STALE = "the cell of softmax as saved differs from the text that ran"


def _execute(client: NotebookClient, cell, index: int) -> str:
    """Run ``cell`` as JupyterLab does; what it showed."""
    execute_as_a_front_end(client, cell, index)
    return " ".join(o.get("text", "") + o.get("evalue", "") for o in cell.outputs).replace("\n    ", " ")

def test_the_check_says_when_the_saved_answer_is_not_the_one_that_ran(tmp_path):
    answer = nbformat.v4.new_code_cell(RIGHT, metadata={"nbgrader": {"grade_id": "softmax", "solution": True}})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import numpy as np\nfrom selfattn.checking import check\n"
                                  "import selfattn.exercise_checks"),
        answer, nbformat.v4.new_code_cell('check(softmax, "softmax/axis")')])
    path = tmp_path / "03-softmax-attention.ipynb"
    nbformat.write(nb, path)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel():
        _execute(client, nb.cells[0], 0)
        _execute(client, answer, 1)
        fresh = _execute(client, nb.cells[2], 2)
        # the student edits the answer and the notebook is saved, but the cell is not run again
        saved = nbformat.read(path, as_version=4)
        saved.cells[1].source = WRONG
        nbformat.write(saved, path)
        stale_pass = _execute(client, nb.cells[2], 2)
        # the other way round: the wrong text runs, the saved file still holds the right one
        answer.source = WRONG
        _execute(client, answer, 1)
        saved.cells[1].source = RIGHT
        nbformat.write(saved, path)
        stale_fail = _execute(client, nb.cells[2], 2)
    assert fresh.startswith("✓ softmax") and STALE not in fresh, fresh
    assert stale_pass.startswith("✓ softmax") and STALE in stale_pass, stale_pass
    assert stale_fail.startswith("✗") and STALE in stale_fail, stale_fail
