"""What the gradebook already holds, so a run redoes only what changed.

- ``.grading/state.json`` records the digest of the grades each submission's feedback was last
  generated from, and of the instructor's notebooks registered in the gradebook.
- ``.grading/answers/<student>/<assignment>/answers.json`` records the written answers (text and
  pasted images) nbgrader last autograded, and the answer each hand grade was given for. Whenever
  nbgrader autogrades (``make grade``, ``nbgrader autograde``, formgrader's button) written answers
  whose text did not change keep their hand grading (nbgrader would put them back in the manual
  queue); a changed one goes back to the queue with its previous grade in its comment
  (:func:`settle_hand_grades`).
- :func:`awaiting_hand_grading` lists what still waits for a human grade.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from autograder.outputs import json_files
from autograder.workspace import Workspace


def state_file(ws: Workspace) -> Path:
    """What the runs of ``ws`` remember between them (digests of the course and of the feedback)."""
    return ws.grading / "state.json"


def answers_folder(ws: Workspace) -> Path:
    """Per submission, the written answers nbgrader autograded last and those hand grades were given for."""
    return ws.grading / "answers"


def load(ws: Workspace) -> dict:
    try:
        state = json_files.read(state_file(ws), "state")
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def save(state: dict, ws: Workspace) -> None:
    json_files.write(state_file(ws), "state", state, indent=1, sort_keys=True)


#: Columns nbgrader looks rows up by that its schema leaves without an index of their own (its
#: unique constraints begin with another column): without these, every score nbgrader computes
#: (autograde, feedback, export) scans the whole class's grades, and export time grows with the
#: square of the class (3,000 students: 84 s without, 1 s with).
INDEXES = (("grade", "notebook_id"), ("comment", "notebook_id"), ("submitted_notebook", "assignment_id"),
           ("submitted_assignment", "student_id"))


def sqlite_file(db_url: str) -> Path | None:
    """The file of an SQLite gradebook's SQLAlchemy URL (``sqlite:///.../gradebook.db``); None for
    another database."""
    prefix = "sqlite:///"
    return Path(db_url[len(prefix):]) if db_url.startswith(prefix) else None


def index_gradebook(db_url: str) -> None:
    """Add :data:`INDEXES` to an SQLite gradebook (idempotent; nbgrader's tables are unchanged)."""
    import sqlite3

    path = sqlite_file(db_url)
    if path is None or not path.is_file():
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


def course_digest(assignment: str, ws: Workspace) -> str:
    """Digest of the instructor's notebooks of one assignment (re-register them when it changes)."""
    h = hashlib.sha256()
    for path in sorted((ws.solutions / assignment).rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(ws.solutions)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def answer_digest(cell) -> str:
    """Digest of one written answer as the grader sees it: its text and its pasted images."""
    attachments = json.dumps(cell.get("attachments") or {}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(cell.source.encode() + b"\0" + attachments.encode()).hexdigest()


def written_answers(staged: dict[str, object]) -> dict[str, dict[str, str]]:
    """notebook -> grade_id -> :func:`answer_digest` of each hand-graded answer (a cell that is
    answer and grade), of notebooks by name."""
    out = {}
    for notebook, nb in staged.items():
        out[notebook] = {c.metadata.nbgrader["grade_id"]: answer_digest(c)
                         for c in nb.cells
                         if c.metadata.get("nbgrader", {}).get("solution") and c.metadata.nbgrader.get("grade")}
    return out


def _answers_record(student: str, assignment: str, ws: Workspace) -> Path:
    return answers_folder(ws) / student / assignment / "answers.json"


def _read_record(student: str, assignment: str, ws: Workspace) -> dict:
    try:
        record = json_files.read(_answers_record(student, assignment, ws), "answers")
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def autograded_answers(student: str, assignment: str, ws: Workspace) -> dict[str, dict[str, str]]:
    """The written answers (:func:`written_answers`) of the notebooks nbgrader autograded last
    for one submission: what formgrader shows and a hand grade was given for."""
    record = _read_record(student, assignment, ws)
    if "autograded" not in record:  # autograded before the record was kept: read the notebooks once
        record["autograded"] = written_answers(_notebooks_in(ws.autograded / student / assignment))
        json_files.write(_answers_record(student, assignment, ws), "answers", record, sort_keys=True)
    return record["autograded"]


def note_autograded(student: str, assignment: str, ws: Workspace) -> None:
    """Record the written answers nbgrader has just autograded (read from its autograded folder)."""
    record = _read_record(student, assignment, ws)
    record["autograded"] = written_answers(_notebooks_in(ws.autograded / student / assignment))
    json_files.write(_answers_record(student, assignment, ws), "answers", record, sort_keys=True)


def _notebooks_in(folder: Path) -> dict[str, object]:
    import nbformat

    out = {}
    for path in sorted(folder.glob("*.ipynb")) if folder.is_dir() else []:
        try:
            out[path.stem] = nbformat.read(path, as_version=4)
        except (OSError, ValueError):
            continue
    return out


PREVIOUS = "Previous hand grade, given for an earlier version of this answer: {score:g} / {max:g}."


def settle_hand_grades(db_url: str, course: str, student: str, assignment: str,
                       answers: dict[str, dict[str, str]], ws: Workspace) -> tuple[int, int]:
    """Keep hand grades where they belong, after nbgrader autograded (or before it does).

    ``answers`` are the written answers nbgrader holds for this submission now
    (:func:`autograded_answers`). A settled hand grade (manual score, not in the queue) is recorded
    with the answer it was given for. nbgrader's autograde puts every manually scored answer back
    in the queue: one whose answer is still the one its grade was given for is settled again; one
    whose answer changed goes back to the queue without a score, its comment starting with the
    previous grade (:data:`PREVIOUS`; formgrader shows it in the answer's comment box, the
    feedback beside the answer). A manual score in the queue with no record of its answer (left
    by an autograde that kept none, such as formgrader's button before this step existed) is
    taken as given for the answer nbgrader holds, and settled.

    Returns (grades settled again, answers put back in the queue)."""
    from nbgrader.api import BaseCell, Grade, Gradebook, MissingEntry, Notebook, SubmittedNotebook

    record = _read_record(student, assignment, ws)
    given = record.setdefault("hand_graded", {})
    kept = reopened = 0
    with Gradebook(db_url, course) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return 0, 0
        # the manually scored grades of the submission, in one query (not a lazy load per notebook,
        # grade and grade id); each is settled on its own, so their order does not matter
        scored = (gb.db.query(Grade, Notebook.name, BaseCell.name)
                  .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
                  .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
                  .join(BaseCell, Grade.cell_id == BaseCell.id)
                  .filter(SubmittedNotebook.assignment_id == submission.id, Grade.manual_score.isnot(None)))
        for grade, notebook, grade_id in scored.all():
            now = answers.get(notebook, {}).get(grade_id)
            if now is not None:
                settled, back = _settle(grade.notebook, grade, now, given.setdefault(notebook, {}))
                kept, reopened = kept + settled, reopened + back
        gb.db.commit()
    json_files.write(_answers_record(student, assignment, ws), "answers", record, sort_keys=True)
    return kept, reopened


def _settle(nb: Any, grade: Any, now: str, given: dict[str, str]) -> tuple[int, int]:
    """Settle one manually scored ``grade`` of notebook ``nb`` (nbgrader's gradebook rows) whose
    written answer is now ``now`` (its digest), against ``given`` (grade id -> the digest of the
    answer each settled hand grade was given for, updated here). Returns (settled again, put back)."""
    then = given.get(grade.name)
    if not grade.needs_manual_grade:  # settled: remember the answer it was given for
        given[grade.name] = now
        return 0, 0
    if then in (now, None):  # None: put back by an autograde that kept no record
        grade.needs_manual_grade = False
        given[grade.name] = now
        return 1, 0
    comment = next((c for c in nb.comments if c.name == grade.name), None)
    previous = PREVIOUS.format(score=grade.manual_score, max=grade.max_score)
    if comment is not None:
        comment.manual_comment = "\n\n".join(t for t in (previous, comment.manual_comment) if t)
    grade.manual_score = None
    del given[grade.name]
    return 0, 1


class Awaiting(NamedTuple):
    """One answer waiting for a human grade in the gradebook."""

    student: str
    assignment: str
    notebook: str
    grade_id: str


def awaiting_hand_grading(db_url: str) -> list[Awaiting]:
    """Every answer awaiting hand-grading (nbgrader's ``needs_manual_grade``) in the gradebook at
    ``db_url`` (an SQLAlchemy URL such as ``sqlite:///autograder/gradebook.db``, or a file path),
    sorted by student, assignment, notebook and grade id."""
    from nbgrader.api import Grade, Gradebook

    if "://" not in db_url:
        if not os.path.isfile(db_url):
            return []
        db_url = "sqlite:///" + os.path.abspath(db_url)
    elif (path := sqlite_file(db_url)) is not None and not path.is_file():
        return []  # no gradebook yet: nothing awaits (and none is created)
    from nbgrader.api import Assignment, BaseCell, Notebook, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import select

    # one query (not four lazy loads per grade awaiting)
    q = (select(SubmittedAssignment.student_id, Assignment.name, Notebook.name, BaseCell.name)
         .select_from(Grade)
         .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
         .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
         .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
         .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
         .join(BaseCell, Grade.cell_id == BaseCell.id)
         .where(Grade.needs_manual_grade.is_(True)))
    with Gradebook(db_url) as gb:
        out = [Awaiting(*row) for row in gb.db.execute(q)]
    return sorted(out)


def awaiting_line(items: list[Awaiting]) -> str:
    """``written answers awaiting hand-grading: 3 — dave: 02, 04, 07`` (notebooks by number;
    the assignment is named when there are several, the grade id when a notebook has several)."""
    if not items:
        return "written answers awaiting hand-grading: 0"
    several = len({i.assignment for i in items}) > 1
    per: dict[str, list[str]] = {}
    for i in items:
        short = i.notebook.split("-", 1)[0] if i.notebook.split("-", 1)[0].isdigit() else i.notebook
        twice = sum((j.student, j.assignment, j.notebook) == (i.student, i.assignment, i.notebook) for j in items) > 1
        per.setdefault(i.student, []).append((f"{i.assignment} " if several else "") + short
                                             + (f" ({i.grade_id})" if twice else ""))
    return f"written answers awaiting hand-grading: {len(items)} — " + "; ".join(
        f"{s}: {', '.join(names)}" for s, names in per.items())


def loaded_submissions(gb: Any) -> list[Any]:
    """Every submission in the open gradebook ``gb`` (nbgrader's ``SubmittedAssignment``), with its
    assignment, student, scores, late penalty, notebooks and their grades and cells loaded in a fixed
    number of queries: walking nbgrader's objects asks one query per submission, notebook and grade
    (seconds for a class of 150, in every run: the penalties, the exports, the score changes)."""
    from nbgrader.api import Grade, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy.orm import joinedload, selectinload, undefer

    return (gb.db.query(SubmittedAssignment)
            .options(undefer(SubmittedAssignment.score), undefer(SubmittedAssignment.late_submission_penalty),
                     joinedload(SubmittedAssignment.assignment), joinedload(SubmittedAssignment.student),
                     selectinload(SubmittedAssignment.notebooks).options(
                         undefer(SubmittedNotebook.score), selectinload(SubmittedNotebook.notebook),
                         selectinload(SubmittedNotebook.grades).selectinload(Grade.cell)))
            .all())


def grades_digest(db_url: str, course: str, student: str, assignment: str) -> str | None:
    """Digest of everything the feedback of one submission shows (scores, comments, penalty)."""
    from nbgrader.api import Comment, Grade, Gradebook, MissingEntry, SubmittedNotebook
    from sqlalchemy.orm import selectinload

    with Gradebook(db_url, course) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        rows = [str(submission.timestamp), str(submission.late_submission_penalty)]
        # the notebooks with their grades, comments and grade ids in four queries, not a lazy load each
        notebooks = (gb.db.query(SubmittedNotebook).filter(SubmittedNotebook.assignment_id == submission.id)
                     .options(selectinload(SubmittedNotebook.notebook),
                              selectinload(SubmittedNotebook.grades).selectinload(Grade.cell),
                              selectinload(SubmittedNotebook.comments).selectinload(Comment.cell)).all())
        for nb in sorted(notebooks, key=lambda n: n.name):
            rows += [f"{nb.name}:{g.name}:{g.auto_score}:{g.manual_score}:{g.extra_credit}:{g.needs_manual_grade}"
                     for g in sorted(nb.grades, key=lambda g: g.name)]
            rows += [f"{nb.name}:{c.name}:{c.auto_comment}:{c.manual_comment}"
                     for c in sorted(nb.comments, key=lambda c: c.name)]
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def stale_feedback(db_url: str, course: str, ws: Workspace, assignment: str = "*", student: str = "*",
                   exclude: frozenset[str] = frozenset()) -> list[str]:
    """``student/assignment`` of every feedback page folder of ``ws`` (of the assignments and
    students matching the patterns, but not of ``exclude``) made for other grades than the gradebook
    holds now: a hand grade, a comment or a late penalty changed since, or no record of what it
    was made for (the run state's digests, written by every generate_feedback)."""
    from fnmatch import fnmatch

    made_for = load(ws).get("feedback", {})
    out = []
    students = sorted(ws.feedback.iterdir()) if ws.feedback.is_dir() else []
    for folder in (f for f in students if f.is_dir() and f.name not in exclude and fnmatch(f.name, student or "*")):
        for pages in sorted(p for p in folder.iterdir() if p.is_dir() and fnmatch(p.name, assignment or "*")):
            key = f"{folder.name}/{pages.name}"
            if any(pages.glob("*.html")) and made_for.get(key) != grades_digest(db_url, course, folder.name,
                                                                                pages.name):
                out.append(key)
    return out


def roster_report(db_url: str, course: str, students: list[str]) -> list[str]:
    """The students among those graded without a name in the gradebook (late work:
    :func:`autograder.late.penalties.late_lines`)."""
    from nbgrader.api import Gradebook, MissingEntry

    unknown = []
    with Gradebook(db_url, course) as gb:
        for student in students:
            try:
                s = gb.find_student(student)
            except MissingEntry:
                unknown.append(student)
                continue
            if not (s.first_name or s.last_name or s.email):
                unknown.append(student)
    return unknown


def autograded_is_current(student: str, assignment: str, notebooks: list[str],
                          answers: dict[str, dict[str, str]], ws: Workspace) -> bool:
    """Whether nbgrader's autograded folder holds exactly these notebooks, from this submission as
    staged now (same ``timestamp.txt``, same written answers and pasted images: ``answers`` are the
    staged ones, :func:`written_answers`), whether ``make grade`` or formgrader's button autograded it."""
    folder = ws.autograded / student / assignment
    return (folder.is_dir() and sorted(p.stem for p in folder.glob("*.ipynb")) == sorted(notebooks)
            and _read(folder / "timestamp.txt") == _read(ws.staged_root / student / assignment / "timestamp.txt")
            and autograded_answers(student, assignment, ws) == answers)
