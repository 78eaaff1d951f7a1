"""Where grading reads and writes: one :class:`Workspace`, built at the command line and passed down.

The course files (``solutions/``, ``notebooks/``) are in the *course root*: the repository, or
``$AUTOGRADER_COURSE``, a folder with the same two subfolders (the tests grade a small course this
way). The class's files live in the *work folder*: ``autograder/``, or ``$AUTOGRADER_WORKDIR``.
All of it is git-ignored.

The work folder holds one folder of submissions, ``submitted/<student>/<assignment>/``: nbgrader's
``collect`` (CLI or formgrader) lands there, and ``make grade`` reads it and never writes to it.
The grader's own scratch space is ``.grading/``: everything in it can be rebuilt. nbgrader itself
reads the *staged* copies in ``.grading/submitted/`` (its ``submitted_directory``), never the raw
files.

:func:`from_environment` builds it from the two environment variables (:mod:`autograder.environment`); it is called
at the edges (``python -m autograder.grade``, nbgrader's configuration file, a hook nbgrader
calls). Everything below takes a :class:`Workspace`, so two of them can be used in one process (a
Dask worker's private folder beside the instructor's, a test's temporary folders).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder import environment

#: the repository's ``autograder/`` folder (the default work folder, and nbgrader's working directory)
AUTOGRADER = Path(__file__).resolve().parent
#: the repository (the default course root; the course's code is always read from here)
ROOT = AUTOGRADER.parent


@dataclass(frozen=True)
class Workspace:
    """The course root and the work folder, and every path derived from them.

    Parameters
    ----------
    work : Path
        The work folder (``submitted/``, ``.grading/``, the gradebook and the outputs).
    course : Path
        The course root (``solutions/`` and ``notebooks/``), always given (:data:`ROOT` is the
        repository's).
    """

    work: Path
    course: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "work", Path(self.work).resolve())
        object.__setattr__(self, "course", Path(self.course).resolve())

    # --- the course ----------------------------------------------------------------------------
    @property
    def solutions(self) -> Path:
        return self.course / "solutions"

    @property
    def release(self) -> Path:
        return self.course / "notebooks"

    # --- the work folder -----------------------------------------------------------------------
    @property
    def submitted(self) -> Path:
        """What nbgrader collected: read, never written, by ``make grade``."""
        return self.work / "submitted"

    @property
    def grading(self) -> Path:
        """The grader's scratch space (``.grading/``): everything in it can be rebuilt."""
        return self.work / ".grading"

    @property
    def staged_root(self) -> Path:
        """nbgrader's ``submitted_directory``: the staged copies."""
        return self.grading / "submitted"

    @property
    def verdicts(self) -> Path:
        return self.grading / "verdicts"

    @property
    def history(self) -> Path:
        return self.grading / "history"

    @property
    def gradebook(self) -> Path:
        return self.work / "gradebook.db"

    @property
    def grades_csv(self) -> Path:
        return self.work / "grades.csv"

    @property
    def feedback(self) -> Path:
        return self.work / "feedback"

    @property
    def autograded(self) -> Path:
        return self.work / "autograded"

    @property
    def summary(self) -> Path:
        return self.work / "grading-summary.txt"

    @property
    def exports(self) -> Path:
        return self.work / "exports"

    @property
    def report(self) -> Path:
        """The class report (HTML) and its data."""
        return self.work / "report"

    @property
    def roster(self) -> Path:
        """The course roster (SIS ids, :mod:`autograder.outputs.lms_export`)."""
        return self.work / "roster.csv"

    @property
    def due_dates(self) -> Path:
        """Due dates and extensions (:mod:`autograder.late.due_dates`)."""
        return self.work / "due-dates.csv"

    def submission(self, student: str, assignment: str) -> Path:
        """``submitted/<student>/<assignment>/``."""
        return self.submitted / student / assignment

    def staged(self, student: str, assignment: str, notebook: str) -> Path:
        """The staged copy of one notebook (what nbgrader autogrades)."""
        return self.staged_root / student / assignment / f"{notebook}.ipynb"

    def verdict(self, student: str, assignment: str, notebook: str) -> Path:
        """The verdict file of one notebook."""
        return self.verdicts / student / assignment / f"{notebook}.json"


def from_environment(environ: Mapping[str, str] | None = None) -> Workspace:
    """The workspace ``$AUTOGRADER_WORKDIR`` and ``$AUTOGRADER_COURSE`` name (``autograder/`` and
    the repository where unset)."""
    work, course = environment.folders(environ)
    return Workspace(work=Path(work or AUTOGRADER), course=Path(course or ROOT))
