"""The late penalty on the final score, in nbgrader's gradebook, and what changed since the last run.

nbgrader computes a notebook's late penalty once, at autograde, from its score *then*: hand grades
given afterwards were never penalised (a late student kept them). :func:`apply` computes every
late notebook's penalty again from its current score (hand grades included) and the submission's
lateness (its due date with its extension, :mod:`autograder.late.due_dates`), and writes it where
nbgrader keeps it (``SubmittedNotebook.late_submission_penalty``), so grades.csv, the LMS files,
the feedback, formgrader and the report all read the same final score
(:func:`autograder.late.policy.final_score`). ``make grade`` and ``make grades-final`` run it after
nbgrader's steps and before the feedback and the exports; nbgrader's autograde (every way in) after
it keeps the hand grades, and ``generate_feedback`` (formgrader's *Generate Feedback*) before it
makes the pages (:mod:`autograder.nbgrader_ext.plugins`). A score saved in formgrader's grading page
runs :func:`settle` for its submission (:mod:`autograder.nbgrader_ext.formgrader_scores`). The
penalty of a notebook is :meth:`autograder.late.policy.Policy.notebook_penalty` of its score.

:func:`final_scores` and :func:`score_changes` say whose final score changed since the scores the
last run exported (kept in the run state), old -> new: after hand grades, an extension, changed
points or a fixed check.
"""

from __future__ import annotations

import glob
from fnmatch import fnmatch
from typing import Any

from autograder.late.policy import Policy, final_score, lateness
from autograder.nbgrader_ext.gradebook_state import loaded_submissions


def apply(db_url: str, course: str, policy: Policy, assignment: str = "*", student: str = "*") -> int:
    """Set the late penalty of every submitted notebook (of the submissions whose assignment and
    student match the patterns ``assignment`` and ``student``) from its current score; return how
    many changed."""
    from nbgrader.api import Gradebook, MissingEntry

    assignment, student = assignment or "*", student or "*"
    with Gradebook(db_url, course) as gb:
        if glob.has_magic(assignment) or glob.has_magic(student):
            subs = [sub for sub in loaded_submissions(gb)
                    if fnmatch(sub.assignment.name, assignment) and fnmatch(sub.student.id, student)]
        else:  # one submission (formgrader's buttons for one student): no need to load the class
            try:
                subs = [gb.find_submission(assignment, student)]
            except MissingEntry:
                subs = []
        changed = sum(settle(sub, policy) for sub in subs)
        gb.db.commit()
    return changed


def settle(sub: Any, policy: Policy) -> int:
    """Set the late penalty of each notebook of ``sub`` (nbgrader's ``SubmittedAssignment``, in an
    open gradebook; the caller commits) from its current score under ``policy``; return how many
    changed. What formgrader's grade box calls after it saves a hand grade."""
    changed = 0
    seconds = sub.total_seconds_late
    for nb in sub.notebooks:
        new = policy.notebook_penalty(nb.score, seconds)
        if nb.late_submission_penalty != new:
            nb.late_submission_penalty = new
            changed += 1
    return changed


def final_scores(db_url: str, course: str) -> dict[str, float]:
    """``student/assignment`` -> the final score (after the late penalty) of every submission."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course) as gb:
        return {f"{sub.student.id}/{sub.assignment.name}": round(final_score(sub.score, sub.late_submission_penalty), 6)
                for sub in loaded_submissions(gb)}


def score_changes(before: dict[str, float], after: dict[str, float]) -> list[tuple[str, float, float]]:
    """``(student/assignment, old, new)`` for every submission whose final score changed from
    ``before`` to ``after``; a submission new since ``before`` is not a change (the first grade)."""
    return [(key, before[key], after[key])
            for key in sorted(after) if key in before and abs(before[key] - after[key]) > 1e-9]


def change_line(key: str, old: float, new: float) -> str:
    """One change as people read it: ``alice/attention: 7 -> 10``."""
    return f"{key}: {old:g} -> {new:g}"


def late_lines(db_url: str, course: str, policy: Policy, students: list[str] | None = None) -> list[str]:
    """One line per late submission (of ``students``, or all): how late, against which due date
    (with an extension, said so), and what it costs under ``policy``."""
    from nbgrader.api import Gradebook

    out = []
    with Gradebook(db_url, course) as gb:
        for sub in sorted(loaded_submissions(gb), key=lambda s: (s.student.id, s.assignment.name)):
            if (students is not None and sub.student.id not in students) or not sub.total_seconds_late > 0:
                continue
            due = sub.duedate.strftime("%Y-%m-%d %H:%M UTC")
            ext = " with an extension" if sub.extension else ""
            out.append(f"{sub.student.id}/{sub.assignment.name}: {lateness(sub.total_seconds_late)} late "
                       f"(due {due}{ext}), penalty {sub.late_submission_penalty or 0:g} points")
    return out

