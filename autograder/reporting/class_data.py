"""What the class report is computed from: :class:`ClassData`, the verdicts and the gradebook's
scores, names, due dates and hand-grading queue of one work folder, as
:func:`autograder.reporting.class_report.load` reads them."""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder.nbgrader_ext.gradebook_state import Awaiting
from autograder.verdicts.record import Verdict
from autograder.workspace import Workspace


@dataclass
class ClassData:
    """Everything the report shows, read from the work folder."""

    verdicts: dict[tuple[str, str, str], Verdict] = field(default_factory=dict)  # (student, assignment, nb)
    notebook_scores: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)
    cell_scores: dict[tuple[str, str, str, str], tuple[float, float]] = field(default_factory=dict)
    late: dict[tuple[str, str], float] = field(default_factory=dict)  # seconds late
    penalties: dict[tuple[str, str], float] = field(default_factory=dict)  # late penalty (points) per submission
    extensions: dict[tuple[str, str], str] = field(default_factory=dict)  # the due date an extension gives
    students: list[str] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # student id -> "First Last" (the roster's)
    awaiting: list[Awaiting] = field(default_factory=list)  # the hand-grading queue
    #: (student/assignment, old, new): final scores the last grading run changed (points, checks,
    #: hand grades, extensions), as it recorded them in the run state
    grade_changes: list[tuple[str, float, float]] = field(default_factory=list)
    ws: Workspace = field(kw_only=True)  # where it was read (the feedback pages and staged answers it links to)

    def name(self, student: str) -> str:
        """The roster's name of ``student`` ("First Last"), or "" when the roster has none."""
        return self.names.get(student, "")
