"""A submission taken out of ``submitted/`` leaves grading too (``make intake`` undoing a zip that
the login map says was not the student's): its gradebook entry (grades, comments, hand grades) and
the grader's copies of it (staged, autograded, feedback, the record of its written answers) go, so
no export, report, formgrader page or released feedback shows it as the student's. ``make grade``
grades only what ``submitted/`` holds, so it never brings it back."""

from __future__ import annotations

import shutil

from autograder.nbgrader_ext.gradebook_state import answers_folder
from autograder.workspace import Workspace


def withdraw(student: str, assignment: str, ws: Workspace) -> bool:
    """Remove ``student``'s submission of ``assignment`` from the gradebook of ``ws`` and the grader's
    copies of it; return whether the gradebook held it (idempotent: a second call finds nothing)."""
    for folder in (ws.staged_root, ws.autograded, ws.feedback, answers_folder(ws)):
        shutil.rmtree(folder / student / assignment, ignore_errors=True)
    if not ws.gradebook.is_file():
        return False
    from nbgrader.api import Gradebook, MissingEntry

    from autograder.nbgrader_ext.steps import nbgrader_api

    coursedir = nbgrader_api(ws=ws).coursedir
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            gb.remove_submission(assignment, student)
        except MissingEntry:
            return False
    return True
