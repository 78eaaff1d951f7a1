"""Where grading reads and writes.

The course files (``solutions/``, ``notebooks/``) are in the repository; the class's files live in
the *work folder*, ``autograder/`` unless ``$AUTOGRADER_WORKDIR`` names another one (the tests grade
their sample classes in a temporary folder this way). All of it is git-ignored.
"""

from __future__ import annotations

import os
from pathlib import Path

AUTOGRADER = Path(__file__).resolve().parent
ROOT = AUTOGRADER.parent
SOLUTIONS = ROOT / "solutions"
RELEASE = ROOT / "notebooks"
WORK = Path(os.environ.get("AUTOGRADER_WORKDIR", AUTOGRADER)).resolve()
SUBMITTED = WORK / "submitted"
GRADING = WORK / ".grading"
STAGED = GRADING / "submitted"
VERDICTS = GRADING / "verdicts"
GRADEBOOK = WORK / "gradebook.db"
GRADES_CSV = WORK / "grades.csv"
FEEDBACK = WORK / "feedback"
AUTOGRADED = WORK / "autograded"


def verdict_path(student: str, assignment: str, notebook: str) -> Path:
    return VERDICTS / student / assignment / f"{notebook}.json"
