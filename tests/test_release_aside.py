"""make release generates aside and swaps in: a release that fails (a graded cell added to a
notebook students have submitted) leaves notebooks/ byte for byte as it was, and says why in one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
from grading_support import RELEASE, ROOT, SOLUTIONS
from nbformat.v4 import new_code_cell

NB = "04-scaling"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _release(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "release.py")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_failing_release_leaves_notebooks_unchanged_and_says_why_in_one_line(tmp_path):
    course, work = tmp_path / "course", tmp_path / "work"
    (course / "solutions" / "attention").mkdir(parents=True)
    (course / "notebooks" / "attention").mkdir(parents=True)
    work.mkdir()
    shutil.copy(SOLUTIONS / f"{NB}.ipynb", course / "solutions" / "attention")
    shutil.copy(RELEASE / f"{NB}.ipynb", course / "notebooks" / "attention")
    env = dict(os.environ, AUTOGRADER_COURSE=str(course), AUTOGRADER_WORKDIR=str(work),
               JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    first = _release(env)
    assert first.returncode == 0, first.stderr[-2000:]
    assert _tree(course / "notebooks") == {f"attention/{NB}.ipynb": (RELEASE / f"{NB}.ipynb").read_bytes()}

    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings(), Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own ORM use, as autograde's (steps.py)
        gb.add_student("ann")
        gb.add_submission("attention", "ann")  # a student has submitted

    source = course / "solutions" / "attention" / f"{NB}.ipynb"
    nb = nbformat.read(source, as_version=4)
    nb.cells.append(new_code_cell("assert True", metadata={"nbgrader": {
        "grade": True, "grade_id": "new-exercise-test", "locked": True, "points": 1, "schema_version": 3,
        "solution": False, "task": False}}))
    nbformat.write(nb, source)
    before = _tree(course / "notebooks")
    result = _release(env)
    assert result.returncode != 0
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "notebooks/ unchanged" in lines[0] and f"attention/{NB} gains or loses graded cells" in lines[0], lines
    assert "new assignment" in lines[0] and "Changing the course mid-term" in lines[0], lines
    assert _tree(course / "notebooks") == before
    assert not [p.name for p in course.iterdir() if p.name.startswith(".")]  # nothing left aside
