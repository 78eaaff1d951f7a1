"""make release: nbgrader's generate_assignment of every ``solutions/<assignment>/`` into a folder
aside, swapped into ``notebooks/`` only when every assignment generated.

nbgrader's ``generate_assignment --force`` deletes the release folder before it generates, so a
generation that fails (a graded cell added to a notebook students have submitted: "Cannot add or
remove cells ... because there are submissions") left ``notebooks/`` empty. Here a failure leaves
``notebooks/`` as it was and stops with one line naming the cause (and, for that one, the supported
way: docs/instructors.md, *Changing the course mid-term*). The swap renames each assignment's
folder aside, then the new one into place; a run killed between the two renames is repaired by the
next one (the old folder is put back before anything else).

The course root and the work folder (its gradebook) are those of ``$AUTOGRADER_COURSE`` and
``$AUTOGRADER_WORKDIR`` (:func:`autograder.workspace.from_environment`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.errors import GradingError, command_line  # noqa: E402
from autograder.workspace import AUTOGRADER, Workspace, from_environment  # noqa: E402

GUIDE = "docs/instructors.md, section 'Changing the course mid-term'"


def _cause(assignment: str, output: str) -> str:
    """The one line that says why nbgrader's generate_assignment failed."""
    cells = re.search(r"Cannot add or remove cells for notebook '([^']+)'", output)
    if cells:
        return (f"{assignment}/{cells.group(1)} gains or loses graded cells, and students have already "
                f"submitted it (nbgrader's gradebook cannot change the cells of a submitted notebook); "
                f"add the exercise as a new assignment ({GUIDE})")
    if "Cannot modify existing assignment" in output:
        return (f"{assignment} gains or loses a notebook, and students have already submitted it; "
                f"add the notebook as a new assignment ({GUIDE})")
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.match(r"^\w*(Error|Exception)\b", ln) or "| ERROR]" in ln]
    return f"nbgrader generate_assignment {assignment} failed: {(errors or lines or ['no output'])[-1][:400]}"


def _old(ws: Workspace, assignment: str) -> Path:
    return ws.course / f".{assignment}.before-release"


def _repair(ws: Workspace, assignments: list[str]) -> None:
    """Put back a folder an interrupted swap left aside."""
    for a in assignments:
        old = _old(ws, a)
        if old.is_dir():
            if (ws.release / a).is_dir():
                shutil.rmtree(old)
            else:
                old.rename(ws.release / a)


def release(ws: Workspace, log=print) -> list[str]:
    """Generate every assignment aside, then swap them into ``notebooks/``; return the assignments.

    Raises
    ------
    GradingError
        One line naming the cause; ``notebooks/`` is then unchanged.
    """
    assignments = sorted(p.name for p in ws.solutions.iterdir() if p.is_dir() and not p.name.startswith("."))
    ws.release.mkdir(parents=True, exist_ok=True)
    _repair(ws, assignments)
    nbgrader = str(Path(sys.executable).parent / "nbgrader")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    with tempfile.TemporaryDirectory(prefix=".release-", dir=ws.course) as aside:
        for a in assignments:
            result = subprocess.run([nbgrader, "generate_assignment", a, "--force", "--log-level=WARN",
                                     f"--CourseDirectory.release_directory={aside}"],
                                    cwd=AUTOGRADER, env=env, capture_output=True, text=True)
            if result.returncode != 0 or not (Path(aside) / a).is_dir():
                raise GradingError(f"make release: stopped, notebooks/ unchanged: "
                                   f"{_cause(a, result.stdout + result.stderr)}")
        for a in assignments:
            current, old = ws.release / a, _old(ws, a)
            if current.exists():
                current.rename(old)
            (Path(aside) / a).rename(current)
            if old.exists():
                shutil.rmtree(old)
    log(f"released {', '.join(assignments)} into {ws.release}")
    return assignments


@command_line
def main() -> int:
    release(from_environment())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
