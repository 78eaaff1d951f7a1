"""Every CSV the project writes: quoted, formula-neutralised, and replaced atomically.

nbgrader's own ``CsvExportPlugin`` joins fields with commas unquoted, so an id holding a comma
shifts its row, and a cell starting with ``=`` is a live spreadsheet formula. Here every field
is quoted (:data:`csv.QUOTE_ALL`), a text cell that a spreadsheet would evaluate gets a leading
``'``, and the file is written under a temporary name and renamed into place, so a run killed
while exporting leaves the previous file whole.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin
from traitlets import default

from autograder.errors import RefusedInput
from autograder.late.policy import final_score
from autograder.outputs import atomic

#: nbgrader's export columns, in nbgrader's order.
GRADE_COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
                 "raw_score", "late_submission_penalty", "score", "max_score")

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "|", "%")


def spreadsheet_cell(value: object) -> str:
    """``value`` as CSV text no spreadsheet evaluates: numbers stay numbers, a text cell that
    starts like a formula gets a leading ``'``."""
    if value is None:
        return ""
    text = str(value)
    if (isinstance(value, (int, float)) and not isinstance(value, bool)) or _NUMBER.fullmatch(text):
        return text
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Write a CSV with every field quoted and formula-neutralised, atomically."""
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([spreadsheet_cell(h) for h in header])
    for row in rows:
        writer.writerow([spreadsheet_cell(v) for v in row])
    atomic.write_bytes(path, buf.getvalue().encode("utf-8"))


def grade_rows(gradebook: Gradebook, assignments: Sequence[str] = (), students: Sequence[str] = ()
               ) -> Iterable[tuple[object, ...]]:
    """One row per (assignment, student) in the gradebook (all, or only those named), as nbgrader's
    export computes it, students in nbgrader's order (last, first name) with their id breaking ties, so
    the file is the same from run to run (the database's order of unnamed students is not)."""
    roster = sorted(gradebook.students, key=lambda s: (s.last_name or "", s.first_name or "", s.id))
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        for student in roster:
            if students and student.id not in students:
                continue
            try:
                sub = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                timestamp, raw, penalty, score = "", 0.0, 0.0, 0.0
            else:
                timestamp, raw, penalty = sub.timestamp, sub.score, sub.late_submission_penalty or 0.0
                score = final_score(raw, penalty)
            yield (assignment.name, assignment.duedate or "", timestamp or "", student.id, student.last_name or "",
                   student.first_name or "", student.email or "", raw, penalty, score, assignment.max_score)


class QuotedCsvExportPlugin(CsvExportPlugin):
    """nbgrader's ``CsvExportPlugin`` (same columns, same options), written with :func:`write_csv`.

    A subclass, so configuration addressed to nbgrader's documented classes reaches it:
    ``nbgrader export --to FILE`` (``ExportPlugin.to``) and ``c.CsvExportPlugin.to``. Without
    either, it writes the ``grades.csv`` of the work folder the running ``nbgrader export`` names
    (its ``CourseDirectory``, :func:`autograder.nbgrader_ext.course_folders.workspace_of`): a default, not a
    setting, so that it never outranks the instructor's.
    """

    @default("to")
    def _default_to(self) -> str:
        from autograder.nbgrader_ext.course_folders import workspace_of

        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None:
            raise RefusedInput("refused: the course's CSV export has no --to and no nbgrader app (its "
                               "CourseDirectory names the work folder whose grades.csv it writes)")
        return str(workspace_of(coursedir).grades_csv)

    def export(self, gradebook: Gradebook) -> None:
        dest = Path(self.to or self._default_to())
        self.log.info("Exporting grades to %s", dest)
        write_csv(dest, GRADE_COLUMNS, grade_rows(gradebook, [str(a) for a in self.assignment],
                                                  [str(s) for s in self.student]))
