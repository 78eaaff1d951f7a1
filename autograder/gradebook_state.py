"""What the gradebook already holds, so a run redoes only what changed.

- ``.grading/state.json`` records, per submission, the written answers that ``make grade`` last
  autograded, and a digest of the grades the feedback was last generated from.
- After nbgrader re-autogrades a student (a resubmission), written answers whose text did not
  change keep their hand grading: nbgrader would otherwise put them back in the manual queue.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import NamedTuple

from .paths import AUTOGRADED, GRADING, SOLUTIONS, STAGED

STATE = GRADING / "state.json"


def load() -> dict:
    try:
        return json.loads(STATE.read_text())
    except (OSError, ValueError):
        return {}


def save(state: dict) -> None:
    STATE.parent.mkdir(parents=True, exist_ok=True)
    tmp = STATE.with_name(f".state.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True))
    tmp.replace(STATE)


#: Columns nbgrader looks rows up by that its schema leaves without an index of their own (its
#: unique constraints begin with another column): without these, every score nbgrader computes
#: (autograde, feedback, export) scans the whole class's grades, and export time grows with the
#: square of the class (3,000 students: 84 s without, 1 s with).
INDEXES = (("grade", "notebook_id"), ("comment", "notebook_id"), ("submitted_notebook", "assignment_id"),
           ("submitted_assignment", "student_id"))


def index_gradebook(db_url: str) -> None:
    """Add :data:`INDEXES` to an SQLite gradebook (idempotent; nbgrader's tables are unchanged)."""
    import sqlite3

    path = db_url[len("sqlite:///"):] if db_url.startswith("sqlite:///") else None
    if path is None or not os.path.isfile(path):
        return  # another database, or no gradebook yet
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            for table, column in INDEXES:
                db.execute(f"CREATE INDEX IF NOT EXISTS selfattn_{table}_{column} ON {table} ({column})")
    except sqlite3.OperationalError:
        pass  # only speed depends on it (a gradebook of another nbgrader version, or kept locked)
    finally:
        db.close()


def course_digest(assignment: str) -> str:
    """Digest of the instructor's notebooks of one assignment (re-register them when it changes)."""
    h = hashlib.sha256()
    for path in sorted((SOLUTIONS / assignment).rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(SOLUTIONS)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def written_answers(staged: dict[str, object]) -> dict[str, dict[str, str]]:
    """notebook -> grade_id -> digest of each hand-graded answer (a cell that is answer and grade)."""
    out = {}
    for notebook, nb in staged.items():
        out[notebook] = {c.metadata.nbgrader["grade_id"]: hashlib.sha256(c.source.encode()).hexdigest()
                         for c in nb.cells
                         if c.metadata.get("nbgrader", {}).get("solution") and c.metadata.nbgrader.get("grade")}
    return out


def hand_graded(db_url: str, course: str, student: str, assignment: str) -> set[tuple[str, str]]:
    """(notebook, grade id) of every grade a human has settled (manual score, not in the queue)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url, course) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return set()
        return {(nb.name, g.name) for nb in submission.notebooks for g in nb.grades
                if g.manual_score is not None and not g.needs_manual_grade}


def keep_hand_grading(db_url: str, course: str, student: str, assignment: str, settled: set[tuple[str, str]],
                      before: dict[str, dict[str, str]], now: dict[str, dict[str, str]]) -> int:
    """After re-autograding: grades a human had settled stay settled if their written answer is unchanged.

    nbgrader's autograde puts every manually scored cell back in the queue; ``settled`` is what
    :func:`hand_graded` returned before it ran. Returns how many grades were kept out of the queue."""
    from nbgrader.api import Gradebook, MissingEntry

    kept = 0
    with Gradebook(db_url, course) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return 0
        for nb in submission.notebooks:
            for grade in nb.grades:
                same = before.get(nb.name, {}).get(grade.name)
                if ((nb.name, grade.name) in settled and grade.manual_score is not None and grade.needs_manual_grade
                        and same is not None and same == now.get(nb.name, {}).get(grade.name)):
                    grade.needs_manual_grade = False
                    kept += 1
        gb.db.commit()
    return kept


def grades_digest(db_url: str, course: str, student: str, assignment: str) -> str | None:
    """Digest of everything the feedback of one submission shows (scores, comments, penalty)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url, course) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        rows = [str(submission.timestamp), str(submission.late_submission_penalty)]
        for nb in sorted(submission.notebooks, key=lambda n: n.name):
            rows += [f"{nb.name}:{g.name}:{g.auto_score}:{g.manual_score}:{g.extra_credit}:{g.needs_manual_grade}"
                     for g in sorted(nb.grades, key=lambda g: g.name)]
            rows += [f"{nb.name}:{c.name}:{c.auto_comment}:{c.manual_comment}"
                     for c in sorted(nb.comments, key=lambda c: c.name)]
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def roster_report(db_url: str, course: str, students: list[str], assignments: list[str]) -> tuple[list[str], list[str]]:
    """(students without a name in the gradebook, late submissions) among those graded."""
    from nbgrader.api import Gradebook, MissingEntry

    unknown, late = [], []
    with Gradebook(db_url, course) as gb:
        for student in students:
            try:
                s = gb.find_student(student)
            except MissingEntry:
                unknown.append(student)
                continue
            if not (s.first_name or s.last_name or s.email):
                unknown.append(student)
            for a in assignments:
                try:
                    sub = gb.find_submission(a, student)
                except MissingEntry:
                    continue
                if sub.total_seconds_late > 0:
                    late.append(f"{student}/{a}: {sub.total_seconds_late / 3600:.1f} h late, "
                                f"penalty {sub.late_submission_penalty or 0:g} points")
    return unknown, late


def autograded_is_current(student: str, assignment: str, notebooks: list[str]) -> bool:
    """Whether nbgrader's autograded folder holds exactly these notebooks, from this submission as
    staged now (same ``timestamp.txt``), whether ``make grade`` or formgrader's button autograded it."""
    folder = AUTOGRADED / student / assignment
    return (folder.is_dir() and sorted(p.stem for p in folder.glob("*.ipynb")) == sorted(notebooks)
            and _read(folder / "timestamp.txt") == _read(STAGED / student / assignment / "timestamp.txt"))


class AwaitingAnswer(NamedTuple):
    """One written answer in the hand-grading queue."""

    student: str
    assignment: str
    notebook: str
    grade_id: str


def awaiting_hand_grading(db_url: str, course: str) -> list[AwaitingAnswer]:
    """Every grade still in the manual queue (nbgrader's ``needs_manual_grade``), sorted."""
    from nbgrader.api import Gradebook

    out = []
    with Gradebook(db_url, course) as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                out += [AwaitingAnswer(sub.student.id, assignment.name, nb.name, g.name)
                        for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade]
    return sorted(out)
