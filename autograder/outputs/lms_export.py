"""Gradebook files an LMS imports, beside nbgrader's own ``grades.csv``.

``exports/canvas.csv`` follows Canvas's gradebook import layout: ``Student``, ``ID``, ``SIS User
ID``, ``SIS Login ID``, ``Section``, then one column per grade, a ``Points Possible`` row first.
``exports/moodle.csv`` follows Moodle's "Import grades from CSV" layout: one row per student with
``username`` (the nbgrader id, the student's login), ``ID number``, ``Email address`` and ``Full
name`` to map users by, then one column per grade item (Moodle's CSV import carries no maxima:
the grade items must exist, with their maxima, before the import).

The identifiers the gradebook does not hold come from the course roster, ``roster.csv`` in the
work folder (:attr:`autograder.workspace.Workspace.roster`): the file given to ``nbgrader db student import``
(which ignores columns it does not know), with the optional extra columns ``sis_user_id`` (Canvas's
*SIS User ID*, Moodle's *ID number*), ``sis_login_id`` and ``section``. What is not known is left
empty: an identifier is never guessed from another one (a login in nbgrader need not be the SIS
login, and a guessed identifier would post a grade to another student). Students with no identity
Canvas can match (no Canvas ID, SIS User ID or SIS Login ID) are named in one warning line, which
names the roster file when it is missing.

Both files hold, per assignment: the total after the late penalty, one column per notebook and one
per exercise (a graded function, its public and hidden checks together, or a written answer), a
late flag, and a status column that reads ``PENDING: n answers to hand-grade`` until manual
grading is done (the scores are then provisional). Both are written by the project's one CSV
writer, :func:`autograder.outputs.csv_export.write_csv` (quoted, formula-neutralised, atomic).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.course.spec import exercise_of
from autograder.late.policy import final_score
from autograder.nbgrader_ext.gradebook_state import loaded_submissions
from autograder.outputs.csv_export import write_csv

#: the roster's columns this module reads besides nbgrader's own (``id``, names, ``email``, ``lms_user_id``)
ROSTER_COLUMNS = ("sis_user_id", "sis_login_id", "section")
CANVAS_HEAD = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_HEAD = ["username", "ID number", "Email address", "Full name"]


@dataclass(frozen=True)
class RosterEntry:
    """What the course roster knows of one student beyond the gradebook (empty when unknown)."""

    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""


def read_roster(path: Path) -> dict[str, RosterEntry]:
    """nbgrader id -> :class:`RosterEntry`, from the roster CSV (none when the file does not exist).

    Raises
    ------
    ValueError
        One line naming the file and the problem (no ``id`` column, an id listed twice, unreadable).
    """
    if not path.exists():
        return {}
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            fields = [f.strip() for f in reader.fieldnames or []]
            if "id" not in fields:
                raise ValueError(f"{path}: the roster has no 'id' column (the nbgrader student id)")
            reader.fieldnames = fields
            out: dict[str, RosterEntry] = {}
            for line, row in enumerate(reader, start=2):
                sid = (row.get("id") or "").strip()
                if not sid:
                    continue
                if sid in out:
                    raise ValueError(f"{path}, line {line}: student {sid!r} is listed twice")
                out[sid] = RosterEntry(**{k: (row.get(k) or "").strip() for k in ROSTER_COLUMNS})
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: the roster could not be read ({exc})") from None
    return out


def _score(x: float) -> str:
    return f"{x:g}"


def class_table(db_url: str, course: str, course_root: Path) -> tuple[list[str], list[str], list[dict]]:
    """(grade columns, their points possible, one dict per student) from the gradebook of nbgrader's
    ``course`` id; the exercise of each test cell is read from the course at ``course_root``."""
    from nbgrader.api import Gradebook

    columns: list[str] = []
    possible: dict[str, float] = {}
    rows = []
    with Gradebook(db_url, course) as gb:
        assignments = sorted(gb.assignments, key=lambda a: (a.duedate is None, a.duedate, a.name))
        for a in assignments:
            total = f"{a.name} (total)"
            columns += [total]
            possible[total] = a.max_score
            for nb in sorted(a.notebooks, key=lambda n: n.name):
                columns.append(f"{a.name}: {nb.name}")
                possible[columns[-1]] = nb.max_score
                per_ex: dict[str, float] = {}
                names = exercise_of(a.name, nb.name, course_root)
                for g in sorted(nb.grade_cells, key=lambda g: g.name):
                    key = f"{a.name}: {nb.name}: {names.get(g.name, g.name)}"
                    per_ex[key] = per_ex.get(key, 0.0) + g.max_score
                for key, points in per_ex.items():
                    columns.append(key)
                    possible[key] = points
            columns += [f"{a.name} late", f"{a.name} status"]
        submissions = {(sub.student.id, sub.assignment.name): sub for sub in loaded_submissions(gb)}
        for student in sorted(gb.students, key=lambda s: s.id):
            row = {"id": student.id, "name": " ".join(x for x in (student.last_name, student.first_name) if x)
                   or student.id, "email": student.email or "", "lms_user_id": student.lms_user_id or ""}
            for a in assignments:
                sub = submissions.get((student.id, a.name))
                if sub is None:
                    row[f"{a.name} (total)"] = 0
                    row[f"{a.name} status"] = "not submitted"
                    continue
                row[f"{a.name} (total)"] = _score(final_score(sub.score, sub.late_submission_penalty))
                row[f"{a.name} late"] = "late" if sub.total_seconds_late > 0 else ""
                pending = 0
                for nb in sub.notebooks:
                    row[f"{a.name}: {nb.name}"] = _score(nb.score)
                    names = exercise_of(a.name, nb.name, course_root)
                    for g in nb.grades:
                        key = f"{a.name}: {nb.name}: {names.get(g.name, g.name)}"
                        row[key] = _score(float(row.get(key, 0)) + g.score)
                        pending += bool(g.needs_manual_grade)
                row[f"{a.name} status"] = f"PENDING: {pending} answers to hand-grade" if pending else "final"
            rows.append(row)
    return columns, [_score(possible[c]) if c in possible else "" for c in columns], rows


def _unmatched(lms_ids: dict[str, str], known: dict[str, RosterEntry]) -> list[str]:
    """The students (of ``lms_ids``: nbgrader id -> the gradebook's ``lms_user_id``) with no identity
    Canvas can match: no Canvas ID, and no SIS User ID or SIS Login ID in the roster; sorted."""
    empty = RosterEntry()
    return sorted(sid for sid, lms in lms_ids.items()
                  if not (lms or known.get(sid, empty).sis_user_id or known.get(sid, empty).sis_login_id))


def _where(roster: Path) -> str:
    return f"{roster} does not exist" if not roster.exists() else f"not in {roster} with an LMS id"


def students_without_identity(db_url: str, course: str, roster: Path) -> list[str]:
    """One line per student of the gradebook of nbgrader's ``course`` id whom Canvas cannot match
    in ``canvas.csv`` (``alice: roster.csv does not exist``), sorted by id; a roster that cannot be
    read counts as empty (the exports say so in their own warning)."""
    from nbgrader.api import Gradebook

    try:
        known = read_roster(roster)
    except ValueError:
        known = {}
    with Gradebook(db_url, course) as gb:
        lms_ids = {s.id: s.lms_user_id or "" for s in gb.students}
    return [f"{sid}: {_where(roster)}" for sid in _unmatched(lms_ids, known)]


def write_lms_exports(db_url: str, course: str, folder: Path, roster: Path, log=print, *,
                      course_root: Path) -> dict[str, Path]:
    """Write ``canvas.csv`` and ``moodle.csv`` into ``folder``; return their paths.

    A roster that cannot be read costs only its identifiers: one warning line, those columns empty."""
    columns, possible, rows = class_table(db_url, course, course_root)
    try:
        known = read_roster(roster)
    except ValueError as exc:
        log(f"warning: {exc}; the SIS columns of the LMS exports are left empty")
        known = {}
    folder.mkdir(parents=True, exist_ok=True)
    out = {"canvas": folder / "canvas.csv", "moodle": folder / "moodle.csv"}
    canvas = [["Points Possible", "", "", "", "", *possible]]
    moodle = []
    for r in rows:
        sis = known.get(r["id"], RosterEntry())
        grades = [r.get(c, "") for c in columns]
        canvas.append([r["name"], r["lms_user_id"], sis.sis_user_id, sis.sis_login_id, sis.section, *grades])
        moodle.append([r["id"], sis.sis_user_id, r["email"], r["name"], *grades])
    unknown = _unmatched({r["id"]: r["lms_user_id"] for r in rows}, known)
    if unknown:
        log(f"warning: no LMS identity for {len(unknown)} student{'s' if len(unknown) != 1 else ''} "
            f"({', '.join(unknown[:10])}{', ...' if len(unknown) > 10 else ''}): {_where(roster)}; Canvas cannot match "
            "their rows in exports/canvas.csv (Moodle matches by username)")
    write_csv(out["canvas"], CANVAS_HEAD + columns, canvas)
    write_csv(out["moodle"], MOODLE_HEAD + [re.sub(r"\s+", " ", c) for c in columns], moodle)
    return out
