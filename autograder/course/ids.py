"""The one rule for student and assignment ids (folder names the grader reads, logins hand-in packs).

Standard library only: ``make student`` copies this file into the course folder, where the
student's ``hand_in.py`` refuses a login that grading would refuse.
"""

from __future__ import annotations

import re

#: The course id nbgrader, the exchange and the hub know this course by (the one record of it).
COURSE_ID = "self-attention"

#: Student and assignment ids: what nbgrader, a spreadsheet and an HTML page all take literally.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def id_problem(name: str) -> str | None:
    """Why ``name`` is not acceptable as a student or assignment id, or ``None`` when it is."""
    if ID_PATTERN.fullmatch(name):
        return None
    return ("it may only hold letters, digits, '.', '_' and '-' (at most 64, starting with a letter or "
            "digit), so that no gradebook, spreadsheet or web page can misread it")
