"""Settings travel as data to every grading worker: a pool started with ``spawn`` or ``forkserver``
(Python 3.14's default on Linux is no longer ``fork``) grades with the run's sandbox mode, warm
sandbox and cgroups setting and caps, and decides as a forked pool does."""

from __future__ import annotations

import multiprocessing

import nbformat
import pytest

from autograder import sandbox
from autograder.pipeline.grading_run import grading_pool
from autograder.settings import Settings
from autograder.verdicts import blame
from autograder.verdicts import decide as verdicts
from autograder.workspace import ROOT, Workspace

NOTEBOOK = "08-cost"


def _state() -> tuple[str, bool, bool]:
    """What a worker grades with: its sandbox mode, warm sessions on, cgroups in use."""
    from autograder.sandbox import cgroups, warm

    return sandbox.mode(), warm.enabled(), bool(cgroups.hierarchies())


def _caps(limits: sandbox.Limits) -> str:
    return sandbox.caps_in_force(limits)


CHOSEN = Settings(limits=sandbox.Limits(cpu_seconds=7, memory_bytes=700 << 20), sandbox="fallback",
                  warm_sandbox=False, cgroups=False)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_every_start_method_grades_with_the_run_settings(method):
    with grading_pool(2, CHOSEN, multiprocessing.get_context(method)) as pool:
        states = {pool.submit(_state).result() for _ in range(4)}
        caps = pool.submit(_caps, CHOSEN.limits).result()
    assert states == {("fallback", False, False)}, f"{method}: workers grade with {states}"
    assert "CPU 7 s" in caps and "/tmp not capped" in caps, caps


def _submit(ws: Workspace, student: str, answer: str | None) -> None:
    nb = nbformat.read(verdicts.release_path("attention", NOTEBOOK, ws.course), as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = (answer if meta["grade_id"] == "attention_flops" and answer
                           else blame.reference_cell("attention", NOTEBOOK, meta["grade_id"], ROOT))
    path = ws.submission(student, "attention") / f"{NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def test_spawned_and_forked_pools_give_the_same_verdicts(tmp_path):
    wrong = "def attention_flops(T, d):\n    return 2 * T * T * d\n"
    outcomes = {}
    for method in ("fork", "spawn"):
        ws = Workspace(tmp_path / method, ROOT)
        _submit(ws, "right", None)
        _submit(ws, "wrong", wrong)
        jobs = [(s, "attention", NOTEBOOK, CHOSEN.limits) for s in ("right", "wrong")]
        with grading_pool(2, CHOSEN, multiprocessing.get_context(method)) as pool:
            verdicts.decide_in_phases(jobs, ws, map_=pool.map)
        outcomes[method] = {s: ({g: (c.passed, c.points) for g, c in v.cells.items()}, v.sandbox)
                            for s in ("right", "wrong")
                            if (v := verdicts.stored_verdict(s, "attention", NOTEBOOK, ws))}
    assert outcomes["fork"] == outcomes["spawn"]
    assert outcomes["spawn"]["wrong"][1] == "fallback"
    assert not all(p for p, _ in outcomes["spawn"]["wrong"][0].values())
    assert all(p for p, _ in outcomes["spawn"]["right"][0].values())
