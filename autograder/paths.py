"""Where grading reads and writes.

The course files (``solutions/``, ``notebooks/``) are in the repository (or in
``$AUTOGRADER_COURSE``, a folder with the same two subfolders: the tests grade a small course this
way); the class's files live in the *work folder*, ``autograder/`` unless ``$AUTOGRADER_WORKDIR``
names another one. All of it is git-ignored.

The work folder holds one folder of submissions, ``submitted/<student>/<assignment>/``: nbgrader's
``collect`` (CLI or formgrader) lands there, and ``make grade`` reads it and never writes to it.
The grader's own scratch space is ``.grading/``: everything in it can be rebuilt. nbgrader itself
reads the *staged* copies in ``.grading/submitted/`` (its ``submitted_directory``), never the raw
files.
"""

from __future__ import annotations

import os
from pathlib import Path

AUTOGRADER = Path(__file__).resolve().parent
ROOT = AUTOGRADER.parent
COURSE = Path(os.environ.get("AUTOGRADER_COURSE", ROOT)).resolve()
SOLUTIONS = COURSE / "solutions"
RELEASE = COURSE / "notebooks"
WORK = Path(os.environ.get("AUTOGRADER_WORKDIR", AUTOGRADER)).resolve()
SUBMITTED = WORK / "submitted"
GRADING = WORK / ".grading"
STAGED = GRADING / "submitted"
VERDICTS = GRADING / "verdicts"
GRADEBOOK = WORK / "gradebook.db"
GRADES_CSV = WORK / "grades.csv"
FEEDBACK = WORK / "feedback"
AUTOGRADED = WORK / "autograded"
SUMMARY = WORK / "grading-summary.txt"
EXPORTS = WORK / "exports"
ROSTER = WORK / "roster.csv"  # the course roster (lms_export: SIS ids)


def verdict_path(student: str, assignment: str, notebook: str) -> Path:
    return VERDICTS / student / assignment / f"{notebook}.json"


def staged_path(student: str, assignment: str, notebook: str) -> Path:
    return STAGED / student / assignment / f"{notebook}.ipynb"
