"""The class report: ``python -m autograder.report`` (``make report``, also run by ``make grade``).

One self-contained HTML page, ``report/index.html`` in the work folder, from the verdicts (what
each check said), the gradebook (the trusted scores, the names, the hand-grading queue) and the
history of replaced verdicts (:mod:`autograder.verdicts.history`). Its first screen answers the
instructor's three questions: how did the class do (mean, median and completion per notebook),
what to reteach (the hardest exercises, each with its most common named mistake), and what needs
me now (answers awaiting hand-grading, faults, suspicious similarity). Then the detail: the
difficulty ranking of exercises, the hand-grading queue, mistakes made before a resubmission fixed
them, every student (name, scores, a link to each feedback page), score distributions, the pass
rate of every check, the named mistakes counted with who made them, unnamed failures, faults and
anomalies, and suspiciously similar answers (:mod:`autograder.reporting.answer_pairs`) side by side.

This module reads the class (:func:`load`: a :class:`~autograder.reporting.class_data.ClassData`),
builds the page (:func:`build`) and writes it (:func:`write`). The page is data and a template:
:func:`autograder.reporting.report_sections.report_page` computes every section as a frozen value
(:mod:`autograder.reporting.report_data`), and :func:`autograder.reporting.report_html.render`
draws them with ``autograder/templates/class_report.html.j2``. Every table is also written as a
CSV file next to the page (:data:`~autograder.reporting.report_data.CSV_TABLES`), from the same
values.

The page loads nothing from anywhere (inline SVG, CSS and a few lines of JavaScript to sort
tables; a Content-Security-Policy forbids the rest), and every piece of student-derived text is
HTML-escaped by the template engine (autoescape): student ids, answers and messages are hostile
input. The page's body then passes the report's allow-list (:func:`autograder.outputs.sanitise.report_fragment`):
only the report's own elements, ids and classes survive, whatever an escape missed. On a narrow
screen (a phone) each table row becomes a block of labelled lines, so no column is clipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from autograder.errors import RefusedInput, command_line
from autograder.late.policy import final_score
from autograder.notes import Note
from autograder.outputs import atomic
from autograder.outputs.csv_export import write_csv
from autograder.reporting.class_data import ClassData
from autograder.reporting.report_data import CSV_TABLES
from autograder.reporting.report_html import render
from autograder.reporting.report_sections import report_page
from autograder.verdicts import record
from autograder.verdicts.record import Verdict
from autograder.workspace import Workspace, from_environment

#: A table's CSV content by its id: (header, rows of plain values).
Tables = dict[str, tuple[list[str], list[list[object]]]]


def _gradebook(data: ClassData) -> None:
    """Scores from nbgrader's gradebook (the trusted record), read in a few queries (not one per
    notebook and grade, as walking nbgrader's objects does), in the order that walk had."""
    from nbgrader.api import Gradebook

    from autograder.nbgrader_ext.gradebook_state import awaiting_hand_grading
    from autograder.nbgrader_ext.gradebook_state import load as load_state
    from autograder.nbgrader_ext.steps import nbgrader_api

    api = nbgrader_api(ws=data.ws)
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        for student in gb.students:
            name = " ".join(x for x in (student.first_name, student.last_name) if x)
            if name:
                data.names[student.id] = name
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                student = sub.student.id
                if sub.total_seconds_late and sub.total_seconds_late > 0:
                    data.late[(student, assignment.name)] = float(sub.total_seconds_late)
                    data.penalties[(student, assignment.name)] = float(sub.late_submission_penalty or 0.0)
                if sub.extension and assignment.duedate is not None:
                    data.extensions[(student, assignment.name)] = sub.duedate.strftime("%Y-%m-%d %H:%M UTC")
            for student, nb, score, penalty, most in _gradebook_notebooks(gb, assignment.id):
                # the final score: after the late penalty
                data.notebook_scores[(student, assignment.name, nb)] = (final_score(score, penalty), most)
            for student, nb, cell, score, most in _gradebook_grades(gb, assignment.id):
                data.cell_scores[(student, assignment.name, nb, cell)] = (score, most)
    data.awaiting = awaiting_hand_grading(api.coursedir.db_url)
    data.grade_changes = [(str(k), float(old), float(new))
                          for k, old, new in load_state(data.ws).get("grade_changes", [])]


def _gradebook_notebooks(gb, assignment_id: str) -> list[tuple]:
    """(student, notebook, score, late penalty, max score) of every submitted notebook of one
    assignment, in the order nbgrader's relationships list them (submission, then notebook, as
    stored), in one query."""
    from nbgrader.api import Notebook, Student, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import literal_column, select

    q = (select(Student.id, Notebook.name, SubmittedNotebook.score, SubmittedNotebook.late_submission_penalty,
                SubmittedNotebook.max_score)
         .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
         .join(Student, SubmittedAssignment.student_id == Student.id)
         .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
         .where(SubmittedAssignment.assignment_id == assignment_id)
         .order_by(literal_column("submitted_assignment.rowid"), literal_column("submitted_notebook.rowid")))
    return [tuple(row) for row in gb.db.execute(q)]


def _gradebook_grades(gb, assignment_id: str) -> list[tuple]:
    """(student, notebook, grade id, score, max score) of every grade of one assignment, in the
    order nbgrader's relationships list them (submission, notebook, grade, as stored), in one query."""
    from nbgrader.api import BaseCell, Grade, Notebook, Student, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import literal_column, select

    q = (select(Student.id, Notebook.name, BaseCell.name, Grade.score, Grade.max_score)
         .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
         .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
         .join(Student, SubmittedAssignment.student_id == Student.id)
         .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
         .join(BaseCell, Grade.cell_id == BaseCell.id)
         .where(SubmittedAssignment.assignment_id == assignment_id)
         .order_by(literal_column("submitted_assignment.rowid"), literal_column("submitted_notebook.rowid"),
                   literal_column("grade.rowid")))
    return [tuple(row) for row in gb.db.execute(q)]


def load(gradebook: bool = True, *, ws: Workspace) -> ClassData:
    """The verdicts of ``ws`` and (with ``gradebook``) the scores of its gradebook."""
    data = ClassData(ws=ws)
    for path in sorted(ws.verdicts.glob("*/*/*.json")) if ws.verdicts.exists() else []:
        key = (path.parent.parent.name, path.parent.name, path.stem)
        try:
            data.verdicts[key] = record.read(path)
        except (ValueError, OSError, record.UnreadableVerdict):
            data.verdicts[key] = Verdict(*key, notes=(Note("The verdict file could not be read."),))
    if gradebook:
        _gradebook(data)
    keys = set(data.verdicts) | set(data.notebook_scores)
    data.students = sorted({s for s, _, _ in keys})
    data.assignments = sorted({a for _, a, _ in keys})
    return data


def build(data: ClassData, base: Path | None = None, tables: Tables | None = None) -> str:
    """The whole page as a string.

    Parameters
    ----------
    data : ClassData
        The class.
    base : Path, optional
        The folder the page is written to (its links to the feedback pages are relative to it);
        by default the work folder's ``report/``.
    tables : dict, optional
        Filled with each table's CSV content (header, rows of plain values) by its id, in the
        page's order (:meth:`~autograder.reporting.report_data.ReportPage.tables`).
    """
    page = report_page(data, base or data.ws.report, time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
    if tables is not None:
        tables.update({t.id: t.csv() for t in page.tables()})
    return render(page)


def write(path: Path | None = None, log=print, *, ws: Workspace) -> Path:
    """Build the report from the work folder of ``ws`` and write it (by default to its
    ``report/index.html``), and its tables as CSV files beside it (:data:`CSV_TABLES`), atomically;
    return its path."""
    path = path or ws.report / "index.html"
    data = load(ws=ws)
    if not data.verdicts:
        raise RefusedInput(f"nothing to report: no verdicts under {ws.verdicts} (run `make grade` first)")
    tables: Tables = {}
    text = build(data, path.parent, tables)
    path.parent.mkdir(parents=True, exist_ok=True)
    for name, table_id in CSV_TABLES.items():
        if table_id in tables:
            write_csv(path.parent / name, *tables[table_id])
        else:
            (path.parent / name).unlink(missing_ok=True)
    atomic.write_text(path, text)
    log(f"class report in {path}")
    return path


def write_quietly(log=print, *, ws: Workspace) -> None:
    """:func:`write` at the end of a grading run: the grades are final already, so a failure to
    draw the report is one warning line, never a failed run."""
    try:
        write(log=log, ws=ws)
    except Exception as exc:  # the report must not cost anyone a grade
        log(f"warning: the class report was not written ({type(exc).__name__}: {exc}); retry with `make report`")


@command_line
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None, help="where to write the page (default: the work folder's "
                                                          "report/index.html)")
    a = p.parse_args(argv)
    ws = from_environment()
    if not ws.grading.exists():
        print(f"nothing to report: {ws.grading} does not exist (run `make grade` first)", file=sys.stderr)
        return 1
    write(a.out, ws=ws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
