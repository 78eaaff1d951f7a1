"""nbgrader's ``CourseDirectory`` of a workspace, and the workspace a ``CourseDirectory`` names: how
nbgrader's apps, hooks and plugins (the export plugin, the feedback exporter) know which work folder
and course the run that started them works in."""

from __future__ import annotations

from pathlib import Path

from autograder.errors import RefusedInput
from autograder.workspace import Workspace


def course_directory(ws: Workspace) -> dict[str, str]:
    """nbgrader's ``CourseDirectory`` settings for the workspace ``ws`` (``nbgrader_config.py``
    sets these for the process's default one): the course root, the staged copies as nbgrader's
    submitted folder, the autograded and feedback folders and the gradebook of the work folder."""
    return {"root": str(ws.course), "source_directory": "solutions", "release_directory": "notebooks",
            "submitted_directory": str(ws.staged_root), "autograded_directory": str(ws.autograded),
            "feedback_directory": str(ws.feedback), "db_url": "sqlite:///" + str(ws.gradebook)}


def workspace_of(coursedir) -> Workspace:
    """The workspace whose folders an nbgrader ``CourseDirectory`` names (:func:`course_directory`
    inverted): how nbgrader's hooks and plugins know where the run that called them works.

    Raises
    ------
    autograder.errors.RefusedInput
        In one line naming the first folder that does not fit, when the course directory was
        configured otherwise (by hand): no workspace is guessed."""
    candidate = Workspace(work=Path(coursedir.submitted_directory).parent.parent, course=Path(coursedir.root))
    expected = course_directory(candidate)
    for k in ("submitted_directory", "autograded_directory", "feedback_directory", "db_url"):
        if str(getattr(coursedir, k)) != expected[k]:
            raise RefusedInput(f"refused: nbgrader's CourseDirectory.{k} is {getattr(coursedir, k)!s}, not "
                               f"{expected[k]} as the work folder {candidate.work} has it; set the course's "
                               "folders through AUTOGRADER_WORKDIR and AUTOGRADER_COURSE, not by hand")
    return candidate
