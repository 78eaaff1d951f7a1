"""A kernel's state that grading starts without never decides a check: in a live kernel, a scratch cell
that adds an attribute to NumPy, or sets NumPy's error handling to raise, or moves the working
directory, is put back while the check runs the answer as graded; a check that fails for such a change
names it; and the kernel keeps what the student set."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

SOFTMAX = ("def softmax(S, axis=-1):\n    S = np.asarray(S, dtype=float)\n"
           "    m = np.max(S, axis=axis, keepdims=True)\n    m = np.where(np.isfinite(m), m, 0.0)\n"
           "    e = np.exp(S - m)\n    return e / e.sum(axis=axis, keepdims=True)\n")
USES_PATCH = ("def softmax(S, axis=-1):\n    e = np.exp(np.shifted(S, axis))\n"
              "    return e / e.sum(axis=axis, keepdims=True)\n")
READS_FILE = ("def softmax(S, axis=-1):\n    scale = float(open('scale.txt').read())\n"
              "    e = np.exp(S - np.max(S, axis=axis, keepdims=True))\n"
              "    return scale * e / e.sum(axis=axis, keepdims=True)\n")
CHECK = 'check(softmax, "softmax/large-scores")'


def _run(cells: list[str], tmp_path) -> list[str]:
    """Each cell's text as the notebook shows it (its error's message or what it printed)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import numpy as np\nfrom selfattn.checking import check\nimport selfattn.exercise_checks")]
        + [nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return [" ".join(o.get("evalue", "") + o.get("text", "") + o.get("data", {}).get("text/plain", "")
                     for o in cell.outputs).replace("\n    ", " ") for cell in nb.cells[1:]]


def test_a_kernels_module_state_is_put_back_for_the_check_and_named_when_it_decides(tmp_path):
    (tmp_path / "scale.txt").write_text("1.0\n")
    shown = _run([
        # a numpy attribute set in a scratch cell: the answer using it fails as graded, and the check says why
        "np.shifted = lambda S, axis: S - np.max(S, axis=axis, keepdims=True)", USES_PATCH, CHECK,
        # numpy's errors raised in a scratch cell: a right answer still passes (grading has the defaults)
        "np.seterr(all='raise')", SOFTMAX, CHECK,
        # and the kernel keeps both changes
        "print(hasattr(np, 'shifted'), np.geterr()['under'])",
        # a file beside the notebook is not there when graded
        "np.seterr(all='warn', under='ignore')", READS_FILE, CHECK,
    ], tmp_path)
    assert shown[2].startswith("✗") or "CheckFailed" in shown[2] or "your notebook changed" in shown[2], shown[2]
    assert "your notebook changed `numpy.shifted` outside the answer" in shown[2], shown[2]
    assert "✓ softmax" in shown[5], shown[5]
    assert shown[6].strip() == "True raise", shown[6]
    assert "✓ softmax" not in shown[9] and "scale.txt" in shown[9], shown[9]
