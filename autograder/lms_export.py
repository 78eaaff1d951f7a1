"""Gradebook files an LMS imports, beside nbgrader's own ``grades.csv``.

``exports/canvas.csv`` follows Canvas's gradebook import layout (``Student``, ``ID``,
``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per grade, a ``Points Possible``
row first); ``exports/moodle.csv`` follows Moodle's "Import grades from CSV" layout (one row per
student with ``ID number`` and ``Email address`` to match users, then one column per grade item).
Both hold, per assignment: the total after the late penalty, one column per notebook and one per
exercise (a graded function, its public and hidden checks together, or a written answer), a late
flag, and a status column that reads ``PENDING: n answers to hand-grade`` until manual grading is
done (the scores are then provisional).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .spec import load_spec


def _cell(value: object) -> str:
    """A CSV field no spreadsheet will run as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _exercise(assignment: str, notebook: str, grade_id: str) -> str:
    """The exercise a grade cell belongs to: the function its checks call, or the written answer."""
    try:
        spec = load_spec(assignment, notebook)
    except (OSError, ValueError):
        return grade_id
    for t in spec.tests:
        if t.grade_id == grade_id and t.checks:
            return t.checks[0][0]
    return grade_id


def _score(x: float) -> str:
    return f"{x:g}"


def class_table(db_url: str, course: str) -> tuple[list[str], list[str], list[dict]]:
    """(grade columns, their points possible, one dict per student) from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

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
                for g in sorted(nb.grade_cells, key=lambda g: g.name):
                    key = f"{a.name}: {nb.name}: {_exercise(a.name, nb.name, g.name)}"
                    per_ex[key] = per_ex.get(key, 0.0) + g.max_score
                for key, points in per_ex.items():
                    columns.append(key)
                    possible[key] = points
            columns += [f"{a.name} late", f"{a.name} status"]
        for student in sorted(gb.students, key=lambda s: s.id):
            row = {"id": student.id, "name": " ".join(x for x in (student.last_name, student.first_name) if x)
                   or student.id, "email": student.email or "", "lms_user_id": student.lms_user_id or ""}
            for a in assignments:
                try:
                    sub = gb.find_submission(a.name, student.id)
                except MissingEntry:
                    row[f"{a.name} (total)"] = 0
                    row[f"{a.name} status"] = "not submitted"
                    continue
                penalty = sub.late_submission_penalty or 0.0
                row[f"{a.name} (total)"] = _score(max(sub.score - penalty, 0.0))
                row[f"{a.name} late"] = "late" if sub.total_seconds_late > 0 else ""
                pending = 0
                for nb in sub.notebooks:
                    row[f"{a.name}: {nb.name}"] = _score(nb.score)
                    for g in nb.grades:
                        key = f"{a.name}: {nb.name}: {_exercise(a.name, nb.name, g.name)}"
                        row[key] = _score(float(row.get(key, 0)) + g.score)
                        pending += bool(g.needs_manual_grade)
                row[f"{a.name} status"] = f"PENDING: {pending} answers to hand-grade" if pending else "final"
            rows.append(row)
    return columns, [_score(possible[c]) if c in possible else "" for c in columns], rows


def write_lms_exports(db_url: str, course: str, folder: Path) -> dict[str, Path]:
    """Write ``canvas.csv`` and ``moodle.csv`` into ``folder``; return their paths."""
    columns, possible, rows = class_table(db_url, course)
    folder.mkdir(parents=True, exist_ok=True)
    out = {"canvas": folder / "canvas.csv", "moodle": folder / "moodle.csv"}
    canvas_head = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    with open(out["canvas"].with_suffix(".tmp"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(canvas_head + columns)
        w.writerow(["Points Possible", "", "", "", "", *possible])
        for r in rows:
            w.writerow([_cell(r["name"]), _cell(r["lms_user_id"]), _cell(r["id"]), _cell(r["id"]), ""]
                       + [_cell(r.get(c, "")) for c in columns])
    with open(out["moodle"].with_suffix(".tmp"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["ID number", "Email address", "Full name"] + [re.sub(r"\s+", " ", c) for c in columns])
        for r in rows:
            w.writerow([_cell(r["id"]), _cell(r["email"]), _cell(r["name"])] + [_cell(r.get(c, "")) for c in columns])
    for path in out.values():
        path.with_suffix(".tmp").replace(path)
    return out
