"""``make publish`` brings formgrader onto the grader's new code, the hub left running.

The test starts a hub as root (``make hub``'s code) in a fresh state folder, with a student and an
instructor of random names, in the hub tests' environments (publishing changes neither). The
instructor generates and releases ``attention`` in formgrader; the student fetches, answers softmax
with a function that is right everywhere except on inputs of shape (5, 7, 11), and submits;
formgrader's Collect and Autograde give her softmax's hidden test its points. A course whose hidden
checks gained one on that shape (a fixed hidden check) is then published to the running hub:
formgrader's Autograde of the same submission now takes those points away, without ``make hub``.
The hub's process, the student's server processes and her login are as before, the students'
environment is unchanged, and her server runs with her course's own students' package first on
its ``PYTHONPATH``.
Run it as ``.venv/bin/python -m pytest tests/test_hub_formgrader_publish.py``, never under ``flock`` of the
hub tests' lock: it takes that lock itself, for the shared environments.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from hub_support import own_hub, uid_processes

from autograder.course.ids import COURSE_ID
from autograder.hub import control, formgrader_restart, publish
from autograder.hub.layout import HubLayout

ASSIGNMENT = "attention"
NB = "03-softmax-attention"
#: right except on one shape, which no check of the course draws
ANSWER = ('def softmax(S, axis=-1):\n'
          '    """Softmax of S along axis (any shape)."""\n'
          '    S = np.asarray(S, dtype=float)\n'
          '    if S.shape == (5, 7, 11):\n'
          '        return np.zeros_like(S)\n'
          '    m = np.max(S, axis=axis, keepdims=True)\n'
          '    m = np.where(np.isfinite(m), m, 0.0)\n'
          '    e = np.exp(S - m)\n'
          '    return e / e.sum(axis=axis, keepdims=True)\n')
#: the fixed hidden check: it draws that shape
FIX = ('\nSOFTMAX.hidden("shape-5-7-11", "scores of shape (5, 7, 11)",\n'
       '    lambda rng: [Case((rand(rng, 5, 7, 11),))])\n')
HIDDEN_CELL = "softmax-hidden"


def _source_course(dest: Path) -> Path:
    """A repository of the course (test_hub_commands's: the checkout's tracked files, the vendored
    assets) with the fix of the hidden check, its notebooks synced."""
    from test_hub_commands import _source_course as course_repository

    course_repository(dest)
    hidden = dest / "autograder" / "hidden_checks.py"
    hidden.write_text(hidden.read_text() + FIX)
    subprocess.run([sys.executable, "scripts/sync_notebooks.py"], cwd=dest, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(dest)})
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    return dest


def test_publish_brings_formgrader_onto_the_new_grader_without_a_hub_restart(tmp_path):
    from benchmarks.hub import _loopback_localhost

    if os.geteuid() != 0:
        pytest.fail("this test must run as root (it makes system users, as make hub does)")
    tag = secrets.token_hex(3)
    ada, ivy = f"sp{tag}a", f"sp{tag}i"
    source = _source_course(tmp_path / "course")
    roster = f"{ada},A,Ada,,student\n{ivy},I,Ivy,,instructor\n"
    with own_hub("publish", {COURSE_ID: roster}) as (layout, passwords, _), _loopback_localhost():
        _term(layout, source, passwords, ada, ivy)


def _hidden_softmax(grader, service: str, ada: str) -> tuple[float, float]:
    """Formgrader's Autograde of ada, then the score of her softmax's hidden test cell and its maximum
    (nbgrader's API, as formgrader's grading page reads them)."""
    done = grader.call("POST", service, f"formgrader/api/submission/{ASSIGNMENT}/{ada}/autograde")
    assert done["success"], done.get("log", "")[-3000:]
    notebooks = grader.call("GET", service, f"formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NB}")
    (mine,) = [n for n in notebooks if n["student"] == ada]
    grades = grader.call("GET", service, f"formgrader/api/grades?submission_id={mine['id']}")
    (cell,) = [g for g in grades if g["name"] == HIDDEN_CELL]
    return float(cell["auto_score"] if cell["manual_score"] is None else cell["manual_score"]), float(cell["max_score"])


def _term(layout: HubLayout, source: Path, passwords: dict[str, str], ada: str, ivy: str) -> None:
    from benchmarks.hub import _Client

    grader = _Client(layout.url, ivy, passwords[ivy])
    service = layout.service_url(COURSE_ID)
    grader.wait_for(service, "formgrader")
    for step in ("assign", "release"):
        assert grader.call("POST", service, f"formgrader/api/assignment/{ASSIGNMENT}/{step}")["success"], step

    student = _Client(layout.url, ada, passwords[ada])
    base = layout.user_url(ada)
    student.start_server(base)
    form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    assert student.call("POST", base, "assignments/fetch", data=form)["success"]
    path = f"{COURSE_ID}/{ASSIGNMENT}/{NB}.ipynb"
    nb = student.call("GET", base, f"api/contents/{path}?content=1")["content"]
    (cell,) = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "softmax"]
    cell["source"] = ANSWER
    student.call("PUT", base, f"api/contents/{path}", json={"type": "notebook", "format": "json", "content": nb})
    assert student.call("POST", base, "assignments/submit", data=form)["success"]
    assert grader.call("POST", service, f"formgrader/api/assignment/{ASSIGNMENT}/collect")["success"]
    score, most = _hidden_softmax(grader, service, ada)
    assert most > 0 and score == most, (score, most)

    # her server (and so each kernel it starts) imports her course's own selfattn first
    paths = {e[len(b"PYTHONPATH="):].decode() for pid in uid_processes(ada)
             for e in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if e.startswith(b"PYTHONPATH=")}
    assert paths == {f"{layout.students_site}:{layout.course_package(COURSE_ID)}"}, paths

    hub_before = control.running_pid(layout)
    assert hub_before is not None, "the running hub is not found by its pid file"
    formgrader_before = formgrader_restart.formgrader_pids(layout, COURSE_ID)
    server_before = uid_processes(ada)
    said: list[str] = []
    students_env = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in layout.student_env.rglob("*") if p.is_file()}
    publish.publish(layout, COURSE_ID, root=source, log=said.append)
    assert any("formgrader restarted on the grader's new code" in line for line in said), said

    assert control.running_pid(layout) == hub_before, "the hub itself was restarted"
    assert students_env and {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in layout.student_env.rglob("*")
                             if p.is_file()} == students_env, \
        "publishing one course changed the students' environment every course of the hub shares"
    assert formgrader_restart.formgrader_pids(layout, COURSE_ID) != formgrader_before
    assert server_before <= uid_processes(ada), "a process of the student's server ended"
    # her login and server stand: the same session reaches her server's API without logging in again
    assert student.call("GET", base, "api/status")["started"]
    grader.wait_for(service, "formgrader")  # the grader's page passes through the hub's login once more
    score, most = _hidden_softmax(grader, service, ada)
    assert score < most, f"formgrader's Autograde still used the grader's old hidden checks: {score} of {most}"
