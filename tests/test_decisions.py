"""What a submission learns in one grading decision is worthless in the next.

Every decision draws fresh inputs, so an unchanged notebook graded again (``--force``) meets other
hidden inputs; and a function whose code did not change is not run again when a sibling cell
changes: it keeps its stored results, so it never meets a second draw at all (a leak from one run,
handed to it by a sibling's run, finds nothing to answer).
"""

from __future__ import annotations

import nbformat
import pytest

from autograder import sandbox
from autograder.verdicts import blame
from autograder.verdicts import decide as verdicts
from autograder.workspace import Workspace

NOTEBOOK = "03-softmax-attention"
LIMITS = sandbox.Limits(cpu_seconds=5, memory_bytes=512 << 20)


def _submit(ws: Workspace, student: str, answers: dict[str, str]) -> None:
    nb = nbformat.read(verdicts.release_path("attention", NOTEBOOK, ws.course), as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = answers.get(meta["grade_id"]) or blame.reference_cell("attention", NOTEBOOK, meta["grade_id"])
    path = ws.submission(student, "attention") / f"{NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture
def recorded(monkeypatch):
    """Every sandbox run of the test: (function, its cases' arguments as bytes)."""
    runs: list[tuple[str, bytes]] = []
    real = sandbox.run

    def run(cells, function, cases, *args, **kwargs):
        runs.append((function, b"".join(a.tobytes() if hasattr(a, "tobytes") else repr(a).encode()
                                        for c in cases for a in c.args)))
        return real(cells, function, cases, *args, **kwargs)

    monkeypatch.setattr(verdicts.sandbox, "run", run)
    return runs


def test_an_unchanged_function_is_not_run_again_when_a_sibling_changes(tmp_path, recorded):
    ws = Workspace(tmp_path)
    _submit(ws, "s", {})
    first = verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws)
    assert {f for f, _ in recorded} == {"softmax", "scaled_scores", "attention"}
    recorded.clear()
    # scaled_scores changes (and attention calls it): softmax's code is the same
    _submit(ws, "s", {"scaled_scores": "def scaled_scores(Q, K):\n    return (Q @ K.T) / np.sqrt(K.shape[1])\n"})
    second = verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws)
    assert {f for f, _ in recorded} == {"scaled_scores", "attention"}, "softmax was run again"
    assert second["functions"]["softmax"] == first["functions"]["softmax"]
    assert second["cells"]["softmax-hidden"] == first["cells"]["softmax-hidden"]
    assert all(c["passed"] for c in second["cells"].values()), second["cells"]


def test_every_decision_draws_fresh_inputs(tmp_path, recorded):
    """The same notebook decided twice (as ``--force`` does) meets other inputs, hidden ones included."""
    ws = Workspace(tmp_path)
    _submit(ws, "s", {})
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws)
    once = list(recorded)
    recorded.clear()
    verdicts.forget_kept("s", "attention", NOTEBOOK, ws)
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws)
    again = list(recorded)
    assert [f for f, _ in once] == [f for f, _ in again]
    assert all(a != b for (_, a), (_, b) in zip(once, again, strict=True)), "a run met the same inputs twice"


def test_a_stored_record_of_another_shape_is_decided_again(tmp_path, recorded):
    """A verdict file whose function records were tampered with (or written by an older grader) is
    not trusted: the function runs again."""
    import json

    ws = Workspace(tmp_path)
    _submit(ws, "s", {})
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws)
    path = ws.verdict("s", "attention", NOTEBOOK)
    stored = json.loads(path.read_text())
    stored["functions"]["softmax"]["checks"] = "all passed"
    path.write_text(json.dumps(stored))
    recorded.clear()
    _submit(ws, "s", {"scaled_scores": "def scaled_scores(Q, K):\n    return (Q @ K.T) / np.sqrt(K.shape[1])\n"})
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws)
    assert "softmax" in {f for f, _ in recorded}
