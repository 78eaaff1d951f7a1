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
from autograder.workspace import ROOT, Workspace

NOTEBOOK = "03-softmax-attention"
LIMITS = sandbox.Limits(cpu_seconds=5, memory_bytes=512 << 20)


def _submit(ws: Workspace, student: str, answers: dict[str, str]) -> None:
    nb = nbformat.read(verdicts.release_path("attention", NOTEBOOK, ws.course), as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = (answers.get(meta["grade_id"])
                           or blame.reference_cell("attention", NOTEBOOK, meta["grade_id"], ROOT))
    path = ws.submission(student, "attention") / f"{NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(autouse=True)
def _no_warm_sandbox_left():
    """Each test grades in this process: the warm sandbox it shares (and its cgroups) ends with it,
    so later tests of this process find none of its cgroups."""
    from autograder.sandbox import warm

    yield
    shared = getattr(warm._local, "session", None)
    if shared is not None:
        shared.close()
        warm._local.session = None


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
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "s", {})
    first = verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws=ws)
    assert {f for f, _ in recorded} == {"softmax", "scaled_scores", "attention", "multi_head_attention"}
    recorded.clear()
    # scaled_scores changes (attention calls it, and multi_head_attention calls attention): softmax's code is the same
    _submit(ws, "s", {"scaled_scores": "def scaled_scores(Q, K):\n    return (Q @ K.T) / np.sqrt(K.shape[1])\n"})
    second = verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws=ws)
    assert {f for f, _ in recorded} == {"scaled_scores", "attention", "multi_head_attention"}, "softmax was run again"
    assert second.functions["softmax"] == first.functions["softmax"]
    assert second.cells["softmax-hidden"] == first.cells["softmax-hidden"]
    assert all(c.passed for c in second.cells.values()), second.cells


def test_every_decision_draws_fresh_inputs(tmp_path, recorded):
    """The same notebook decided twice (as ``--force`` does) meets other inputs, hidden ones included."""
    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "s", {})
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws=ws)
    once = list(recorded)
    recorded.clear()
    verdicts.forget_kept("s", "attention", NOTEBOOK, ws)
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws=ws)
    again = list(recorded)
    assert [f for f, _ in once] == [f for f, _ in again]
    assert all(a != b for (_, a), (_, b) in zip(once, again, strict=True)), "a run met the same inputs twice"


def test_a_stored_record_of_another_shape_is_decided_again(tmp_path, recorded):
    """A verdict file whose function records were tampered with (or written by an older grader) is
    not trusted: the function runs again."""
    import json

    ws = Workspace(tmp_path, ROOT)
    _submit(ws, "s", {})
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws=ws)
    path = ws.verdict("s", "attention", NOTEBOOK)
    stored = json.loads(path.read_text())
    stored["functions"]["softmax"]["checks"] = "all passed"
    path.write_text(json.dumps(stored))
    recorded.clear()
    _submit(ws, "s", {"scaled_scores": "def scaled_scores(Q, K):\n    return (Q @ K.T) / np.sqrt(K.shape[1])\n"})
    verdicts.grade_one("s", "attention", NOTEBOOK, LIMITS, ws=ws)
    assert "softmax" in {f for f, _ in recorded}


def test_a_batch_makes_every_public_run_before_any_hidden_run(tmp_path, monkeypatch):
    """Two students, two notebooks each, on a pool of two workers: every run whose feedback is
    detailed (public) ends before the first hidden run or blame re-run of the batch starts, so what a
    hidden run leaves in the machine's shared state (page cache, clocks) meets no public run after it."""
    import os
    import time
    from concurrent.futures import ProcessPoolExecutor

    from autograder.pipeline import grading_run
    from autograder.reporting.run_summary import Progress

    log = tmp_path / "runs.log"
    real = sandbox.run

    def run(cells, function, cases, limits=sandbox.DEFAULT, hidden=False, session=None, oracle=None):
        start = time.monotonic_ns()
        result = real(cells, function, cases, limits, hidden=hidden, session=session, oracle=oracle)
        with open(log, "a") as fh:  # one short line per run, appended whole
            fh.write(f"{int(hidden or oracle is not None)} {start} {time.monotonic_ns()}\n")
        return result

    monkeypatch.setattr(verdicts.sandbox, "run", run)
    ws = Workspace(tmp_path / "work", ROOT)
    wrong_softmax = "def softmax(S, axis=-1):\n    return np.exp(S) / np.exp(S).sum(axis=0, keepdims=True)\n"
    for student in ("ann", "ben"):
        _submit(ws, student, {"softmax": wrong_softmax} if student == "ben" else {})
        folder = ws.submission(student, "attention")
        release = verdicts.release_path("attention", "08-cost", ws.course)
        (folder / "08-cost.ipynb").write_bytes(release.read_bytes())
    jobs = [(s, "attention", nb, LIMITS) for s in ("ann", "ben") for nb in (NOTEBOOK, "08-cost")]
    with ProcessPoolExecutor(max_workers=2) as pool:
        futures = grading_run._submit_with_progress(pool, jobs, Progress(len(jobs), lambda *_: None), ws)
        done = [f.result() for f in futures]
    assert sorted((s, nb) for s, _a, nb, _t in done) == sorted((s, nb) for s, _a, nb, _l in jobs)
    runs = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
    public = [end for hidden, _start, end in runs if not hidden]
    secret = [start for hidden, start, _end in runs if hidden]
    assert public and secret and os.cpu_count()
    assert max(public) <= min(secret), "a public run came after a hidden run of the batch"
