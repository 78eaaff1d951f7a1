"""Formgrader shows final scores: the late penalty taken, as in grades.csv, the LMS files, the
feedback and the class report.

nbgrader's formgrader lists (assignments, notebooks, submissions, students, a student's
assignments and notebooks) show the sum of the grades, the *raw* score, which never agrees with
the exports for a late student. :func:`install` makes the lists of nbgrader's API (which formgrader's
pages fetch) carry the final score as ``score`` (and ``average_score``), through the same
subtraction as every export (:func:`autograder.late.policy.final_score`) of the penalties the
gradebook holds, with the raw one beside it (``raw_score``, ``late_penalty``); the code, written
and task columns stay the raw parts, headed "(raw)" beside the "(final)" score
(:mod:`autograder.nbgrader_ext.formgrader_labels`). And a grade saved in formgrader's grading page (nbgrader's
``GradeHandler.put``) settles the penalty of its submission from the new score at once
(:func:`autograder.late.penalties.settle`), so the lists, the next feedback and the exports move
with the hand grade.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from autograder.late.policy import final_score
from autograder.nbgrader_ext import formgrader_labels


@dataclass
class Penalties:
    """The late penalties a gradebook holds, summed per place a formgrader list shows a score."""

    notebook_submission: dict[str, float] = field(default_factory=dict)  # SubmittedNotebook.id -> points
    submission: dict[tuple[str, str], float] = field(default_factory=dict)  # (assignment, student)
    student: dict[str, float] = field(default_factory=dict)
    assignment: dict[str, float] = field(default_factory=dict)  # summed over the class
    notebook: dict[tuple[str, str], float] = field(default_factory=dict)  # (assignment, notebook), summed


def penalties_of(gb: Any) -> Penalties:
    """Every late penalty of the open gradebook ``gb`` (one query)."""
    from nbgrader.api import Assignment, Notebook, Student, SubmittedAssignment, SubmittedNotebook

    rows = (gb.db.query(SubmittedNotebook.id, Assignment.name, Student.id, Notebook.name,
                        SubmittedNotebook.late_submission_penalty)
            .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
            .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
            .join(Student, SubmittedAssignment.student_id == Student.id)
            .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
            .filter(SubmittedNotebook.late_submission_penalty > 0)
            .all())
    out = Penalties()
    for nb_id, assignment, student, notebook, points in rows:
        out.notebook_submission[nb_id] = float(points)
        for table, key in ((out.submission, (assignment, student)), (out.student, student),
                           (out.assignment, assignment), (out.notebook, (assignment, notebook))):
            table[key] = table.get(key, 0.0) + float(points)
    return out


def finalise(row: dict | None, penalty: float) -> dict | None:
    """``row`` (a dict of nbgrader's API with a ``score``) with the final score as ``score`` and the
    raw one beside it: ``raw_score`` and ``late_penalty``."""
    if row is None or "score" not in row:
        return row
    raw = float(row.get("score") or 0.0)
    row.update(raw_score=raw, late_penalty=penalty, score=final_score(raw, penalty))
    return row


def finalise_average(row: dict | None, penalty_sum: float, count: int) -> dict | None:
    """``row`` with ``average_score`` over ``count`` submissions less their penalties (``penalty_sum``):
    the average of the final scores; the raw one beside it as ``raw_average_score``."""
    if row is None or "average_score" not in row:
        return row
    raw = float(row.get("average_score") or 0.0)
    row.update(raw_average_score=raw, average_score=raw - penalty_sum / count if count else raw)
    return row


def _with_penalties(method: Callable) -> Callable:
    """nbgrader's API method ``method``, its result passed with the gradebook's penalties to the
    function the decorated one is."""
    def decorate(adjust: Callable) -> Callable:
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            result = method(self, *args, **kwargs)
            with self.gradebook as gb:
                return adjust(gb, penalties_of(gb), result, *args, **kwargs)

        wrapper.__wrapped__ = method  # type: ignore[attr-defined]  # nbgrader's
        wrapper.selfattn = True  # type: ignore[attr-defined]
        return wrapper
    return decorate


def _counts(gb: Any, assignment: str) -> tuple[int, dict[str, int]]:
    """(submissions of ``assignment``, notebook name -> its submitted notebooks)."""
    from nbgrader.api import MissingEntry

    try:
        a = gb.find_assignment(assignment)
    except MissingEntry:
        return 0, {}
    return a.num_submissions, {nb.name: nb.num_submissions for nb in a.notebooks}


def install() -> None:
    """Make nbgrader's API lists show final scores and formgrader's grade box settle the late
    penalty (idempotent)."""
    from nbgrader.apps.api import NbGraderAPI

    # formgrader's handlers, when this process is a formgrader (it imports them before it loads the
    # configuration); never imported here, which would cost every nbgrader command a web server's imports
    handlers = sys.modules.get("nbgrader.server_extensions.formgrader.apihandlers")
    if handlers is not None and not getattr(handlers.GradeHandler.put, "selfattn", False):
        handlers.GradeHandler.put = _settling(handlers.GradeHandler.put)
    # and its pages label the raw parts (code, written, task) beside the final score
    formgrader_labels.install(sys.modules.get("nbgrader.server_extensions.formgrader.base"))
    if getattr(NbGraderAPI.get_submission, "selfattn", False):
        return

    @_with_penalties(NbGraderAPI.get_assignment)
    def get_assignment(gb, pen, row, assignment_id, *_, **__):
        return finalise_average(row, pen.assignment.get(assignment_id, 0.0), _counts(gb, assignment_id)[0])

    @_with_penalties(NbGraderAPI.get_notebooks)
    def get_notebooks(gb, pen, rows, assignment_id, *_, **__):
        counts = _counts(gb, assignment_id)[1]
        for row in rows:
            finalise_average(row, pen.notebook.get((assignment_id, row["name"]), 0.0), counts.get(row["name"], 0))
        return rows

    @_with_penalties(NbGraderAPI.get_submission)
    def get_submission(gb, pen, row, assignment_id, student_id, *_, **__):
        return finalise(row, pen.submission.get((assignment_id, student_id), 0.0))

    @_with_penalties(NbGraderAPI.get_submissions)
    def get_submissions(gb, pen, rows, assignment_id, *_, **__):
        for row in rows:  # rows of the not yet autograded, made by get_submission above, have no penalty
            if "raw_score" not in row:
                finalise(row, pen.submission.get((assignment_id, row["student"]), 0.0))
        return rows

    @_with_penalties(NbGraderAPI.get_notebook_submissions)
    def get_notebook_submissions(gb, pen, rows, *_, **__):
        for row in rows:
            finalise(row, pen.notebook_submission.get(row.get("id"), 0.0))
        return rows

    @_with_penalties(NbGraderAPI.get_student_notebook_submissions)
    def get_student_notebook_submissions(gb, pen, rows, *_, **__):
        for row in rows:
            finalise(row, pen.notebook_submission.get(row.get("id"), 0.0))
        return rows

    @_with_penalties(NbGraderAPI.get_student)
    def get_student(gb, pen, row, student_id, *_, **__):
        return finalise(row, pen.student.get(student_id, 0.0))

    @_with_penalties(NbGraderAPI.get_students)
    def get_students(gb, pen, rows, *_, **__):
        for row in rows:
            finalise(row, pen.student.get(row["id"], 0.0))
        return rows

    for name, wrapper in (("get_assignment", get_assignment), ("get_notebooks", get_notebooks),
                          ("get_submission", get_submission), ("get_submissions", get_submissions),
                          ("get_notebook_submissions", get_notebook_submissions),
                          ("get_student_notebook_submissions", get_student_notebook_submissions),
                          ("get_student", get_student), ("get_students", get_students)):
        setattr(NbGraderAPI, name, wrapper)


def _settling(put: Callable) -> Callable:
    """nbgrader's ``GradeHandler.put`` (formgrader saving a score), then the late penalty of the
    grade's submission from its new score, under the term's policy as formgrader's configuration
    holds it now."""
    @functools.wraps(put)
    def put_and_settle(self, grade_id):
        from nbgrader.api import MissingEntry
        from tornado import web

        from autograder.errors import RefusedInput
        from autograder.late.penalties import settle
        from autograder.late.policy import policy_of

        put(self, grade_id)
        try:
            submission = self.gradebook.find_grade_by_id(grade_id).notebook.assignment
        except MissingEntry:
            return
        try:
            self.coursedir.parent.load_config_file()  # as nbgrader's API does before every step
            policy = policy_of(self.coursedir.parent.config)
        except RefusedInput as exc:
            raise web.HTTPError(500, reason=f"grade saved; late penalty not updated: {exc}") from None
        if settle(submission, policy):
            self.gradebook.db.commit()

    put_and_settle.__wrapped__ = put  # type: ignore[attr-defined]
    put_and_settle.selfattn = True  # type: ignore[attr-defined]
    return put_and_settle
