"""The one rule for student and assignment ids (folder names the grader reads, logins hand-in packs).

Standard library only: ``make student`` copies this file into the course folder, where the
student's ``hand_in.py`` refuses a login that grading would refuse.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The course id nbgrader, the exchange and the hub know this course by (the one record of it).
COURSE_ID = "self-attention"

#: In a copy of the course served under another id (a second course on the hub), the file in
#: ``autograder/`` that holds that id; ``autograder/nbgrader_config.py`` reads it.
COURSE_ID_FILE = "course_id"

#: Student and assignment ids: what nbgrader, a spreadsheet and an HTML page all take literally.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def id_problem(name: str) -> str | None:
    """Why ``name`` is not acceptable as a student or assignment id, or ``None`` when it is."""
    if ID_PATTERN.fullmatch(name):
        return None
    return ("it may only hold letters, digits, '.', '_' and '-' (at most 64, starting with a letter or "
            "digit), so that no gradebook, spreadsheet or web page can misread it")


def course_id_in(folder: Path) -> str:
    """The course id of the course whose ``autograder/`` folder is ``folder``: :data:`COURSE_ID`,
    or what its :data:`COURSE_ID_FILE` says; a bad id there raises ``ValueError`` naming the file."""
    path = folder / COURSE_ID_FILE
    if not path.exists():
        return COURSE_ID
    course = path.read_text(encoding="utf-8").strip()
    problem = id_problem(course)
    if problem:
        raise ValueError(f"{path}: course id {course!r}: {problem}")
    return course
