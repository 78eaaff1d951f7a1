"""Which submissions a run grades, and which folders it refuses (each named, with the reason).

A student folder is graded only if its name is a plain id (:func:`autograder.intake.untrusted.id_problem`)
and it and its assignment folders are real directories, not symbolic links: a link could hand in
the instructor's solutions or another student's work. Nothing is dropped silently: every refused
folder is reported, and the run then ends with a non-zero exit status.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from autograder.intake.untrusted import entry_problem, id_problem
from autograder.workspace import Workspace


@dataclass
class Intake:
    """(student, assignment) pairs to grade, and one line per refused folder."""

    submissions: list[tuple[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def shown(path: Path, ws: Workspace) -> str:
    """A folder name as safe to print: control characters, odd bytes and quotes made visible."""
    return ascii(os.fsdecode(path.relative_to(ws.work)))


def scan(submitted: Path | None = None, *, ws: Workspace) -> Intake:
    """Every ``submitted/<student>/<assignment>/`` folder (of ``ws``, or the folder ``submitted``),
    graded or refused."""
    submitted = ws.submitted if submitted is None else submitted
    out = Intake()
    if not submitted.is_dir():
        return out
    for student in sorted(submitted.iterdir()):
        why = entry_problem(student, "dir") or id_problem(student.name)
        if why:
            out.refused.append(f"{shown(student, ws)} is not graded: {why}")
            continue
        for assignment in sorted(student.iterdir()):
            if not (ws.solutions / assignment.name).is_dir():
                out.refused.append(f"{shown(assignment, ws)} is not graded: there is no assignment of that name")
            elif why := entry_problem(assignment, "dir"):
                out.refused.append(f"{shown(assignment, ws)} is not graded: {why}")
            else:
                out.submissions.append((student.name, assignment.name))
    return out
