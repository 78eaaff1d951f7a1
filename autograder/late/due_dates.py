"""Due dates and extensions: one file, ``due-dates.csv`` in the work folder, and two commands.

::

    assignment,student,due
    attention,,2026-11-01 12:00:00 UTC
    attention,carol,2026-11-03 12:00:00 UTC

(a row without a student: the assignment's due date; with one: that student's extension, their own
due date).

``make due-date ASSIGNMENT=attention UNTIL="2026-11-01 12:00 UTC"`` and
``make extension STUDENT=carol ASSIGNMENT=attention UNTIL="2026-11-03 12:00 UTC"``
(:mod:`autograder.extension`) write a row
(replacing that assignment's or that student's row), then redo only what a due date changes: the
late penalties, the feedback whose grades changed and the exports (:func:`autograder.pipeline.grading_run.finish`);
nothing runs in the sandbox. Every ``make grade`` and ``make grades-final`` writes the file into
nbgrader's gradebook first (:func:`apply`): the assignment's ``duedate`` and each submission's
``extension``, which is how nbgrader itself counts lateness (``total_seconds_late``), so
formgrader and ``./nbgrader`` see the same. Times are read as nbgrader reads ``--duedate``
(``nbgrader.utils.parse_utc``; without a zone, UTC).

Student rows never leave the work folder; the student bundle carries only the assignment's due
date (``scripts/build_student.py``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from autograder.course.ids import id_problem
from autograder.errors import RefusedInput
from autograder.late.clock import show
from autograder.outputs import atomic

HEADER = ("assignment", "student", "due")


@dataclass(frozen=True)
class DueDate:
    """One row: the due date of ``assignment`` for everyone (``student`` empty) or for one student."""

    assignment: str
    student: str
    due: datetime  # naive, UTC (as nbgrader stores it)


def parse_time(text: str, where: str = "UNTIL") -> datetime:
    """``text`` as a naive UTC time, as nbgrader reads ``--duedate``.

    Raises
    ------
    RefusedInput
        One line naming ``where`` and the text.
    """
    from nbgrader.utils import parse_utc

    try:
        return parse_utc(text.strip())
    except (ValueError, OverflowError, TypeError) as exc:
        raise RefusedInput(f"{where}: {text!r} is not a time (e.g. 2026-11-03 12:00 UTC): {exc}") from None


def read(path: Path) -> list[DueDate]:
    """The rows of ``path`` (none when it does not exist).

    Raises
    ------
    RefusedInput
        One line naming the file, the line and the problem.
    """
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RefusedInput(f"{path}: could not be read ({exc})") from None
    reader = csv.DictReader(io.StringIO(text))
    if [f.strip() for f in reader.fieldnames or []] != list(HEADER):
        raise RefusedInput(f"{path}: the first line must be {','.join(HEADER)}")
    rows: dict[tuple[str, str], DueDate] = {}
    for line, row in enumerate(reader, start=2):
        a, s = (row.get("assignment") or "").strip(), (row.get("student") or "").strip()
        for name in (a, s) if s else (a,):
            if id_problem(name):
                raise RefusedInput(f"{path}, line {line}: {name!r} is not an id: {id_problem(name)}")
        if (a, s) in rows:
            raise RefusedInput(f"{path}, line {line}: {a}{'/' + s if s else ''} is listed twice")
        rows[(a, s)] = DueDate(a, s, parse_time(row.get("due") or "", f"{path}, line {line}"))
    return list(rows.values())


def write(path: Path, rows: list[DueDate]) -> None:
    """Write ``rows`` (the due dates first, then the extensions, sorted), atomically."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    for r in sorted(rows, key=lambda r: (r.assignment, r.student != "", r.student)):
        w.writerow([r.assignment, r.student, r.due.strftime("%Y-%m-%d %H:%M:%S UTC")])
    atomic.write_text(path, buf.getvalue())


def set_row(path: Path, row: DueDate) -> None:
    """Add ``row`` to the file, replacing the row of the same assignment and student."""
    rows = [r for r in read(path) if (r.assignment, r.student) != (row.assignment, row.student)]
    write(path, [*rows, row])


def apply(db_url: str, course: str, path: Path) -> list[str]:
    """Write the file's due dates and extensions into nbgrader's gradebook; one line per change.

    An extension of a student who has not handed in yet waits for their submission (the next run
    applies it). Raises :class:`RefusedInput` for an extension of an assignment with no due date."""
    from nbgrader.api import Gradebook, MissingEntry

    rows = read(path)
    changes: list[str] = []
    with Gradebook(db_url, course) as gb:
        for r in rows:
            if not r.student:
                try:
                    current = gb.find_assignment(r.assignment).duedate
                except MissingEntry:
                    current = None
                if current != r.due:
                    gb.update_or_create_assignment(r.assignment, duedate=r.due)
                    changes.append(f"{r.assignment}: due {show(r.due)}")
        for r in rows:
            if not r.student:
                continue
            try:
                sub = gb.find_submission(r.assignment, r.student)
            except MissingEntry:
                continue
            due = sub.assignment.duedate
            if due is None:
                raise RefusedInput(f"{path}: an extension for {r.student}/{r.assignment}, which has no due date; "
                                   f"set it first: make due-date ASSIGNMENT={r.assignment} UNTIL=...")
            extension = max(r.due - due, timedelta(0))
            if (sub.extension or timedelta(0)) != extension:
                sub.extension = extension
                changes.append(f"{r.student}/{r.assignment}: extension to {show(r.due)}")
        gb.db.commit()
    return changes


def bundle_data(path: Path) -> dict[str, str]:
    """assignment -> its due date (ISO, UTC) from the file at ``path``: what the student bundle may
    carry (no student's row, so no extension, ever leaves the work folder)."""
    return {r.assignment: r.due.isoformat() for r in read(path) if not r.student}
