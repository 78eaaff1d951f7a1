"""nbgrader's per-cell questions to the gradebook, answered from one look at a notebook's rows.

nbgrader's ``OverwriteCells``, ``SaveAutoGrades`` and ``GetGrades`` ask the gradebook one question
per cell (``find_source_cell``, ``find_graded_cell``, ``find_grade``, ``find_comment``: each a query
joining up to seven tables, and a grade's maximum one more), and ``SaveAutoGrades`` commits after
every cell: about sixty queries and a dozen commits a notebook, a third of what an autograde costs.
:class:`NotebookRows` loads the rows of one notebook (its source and graded cells, and a student's
grades and comments) in a few queries through nbgrader's own ORM, answers those four questions from
them (raising ``MissingEntry`` where nbgrader's would) and hands every other attribute to the real
``Gradebook``. The preprocessors below are nbgrader's, whose per-cell code runs unchanged against it;
``SaveAutoGrades``' changes are committed once, when the notebook is done (one transaction: a run
killed midway leaves the notebook's grades as they were, not half of them saved).

``c.PreloadedRows.preload = False`` makes them ask nbgrader's way, one query per cell
(``tests/test_grading_cost_identical.py`` grades a class both ways and compares).
"""

from __future__ import annotations

from typing import Any

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import OverwriteCells, SaveAutoGrades
from traitlets import Bool
from traitlets.config import Configurable


class PreloadedRows(Configurable):
    """Whether the course's preprocessors read a notebook's gradebook rows once (:class:`NotebookRows`)."""

    preload = Bool(True, help=(
        "Answer nbgrader's per-cell gradebook questions (source cell, graded cell, grade, comment) from "
        "the notebook's rows read once, and commit a notebook's autograded scores once. False asks nbgrader's "
        "way, one query and one commit per cell (the same grades, more slowly).")).tag(config=True)


class _Session:
    """A gradebook session whose ``commit`` only flushes: the preprocessor commits once, when its notebook is done."""

    def __init__(self, db: Any) -> None:
        self._db = db

    def commit(self) -> None:
        self._db.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


class NotebookRows:
    """The rows of one notebook of one assignment (and of one student's submission of it), answering
    nbgrader's per-cell ``find_*`` questions about that notebook; any other attribute is ``gb``'s.

    Parameters
    ----------
    gb : nbgrader.api.Gradebook
        An open gradebook.
    assignment, notebook : str
        The notebook's assignment and name.
    student : str, optional
        Whose submission's grades and comments to load (none without it).
    """

    def __init__(self, gb: Gradebook, assignment: str, notebook: str, student: str | None = None) -> None:
        self._gb, self._where = gb, (assignment, notebook, student)
        source = gb.find_notebook(notebook, assignment)
        self.source_cells = {c.name: c for c in source.source_cells}
        # find_graded_cell: a grade cell of that name, else a task cell
        self.graded_cells = {**{c.name: c for c in source.task_cells}, **{c.name: c for c in source.grade_cells}}
        self.grades: dict[str, Any] = {}
        self.comments: dict[str, Any] = {}
        if student is not None:
            from nbgrader.api import Comment, Grade
            from sqlalchemy.orm import undefer

            sub = gb.find_submission_notebook(notebook, assignment, student).id
            # find_grade: the grade of a grade cell of that name, else of a task cell; find_comment:
            # of a solution cell, else of a task cell
            self.grades = _by_name(gb, Grade, sub, "GradeCell", undefer(Grade.max_score))
            self.comments = _by_name(gb, Comment, sub, "SolutionCell")
        self.db = _Session(gb.db)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gb, name)

    def _found(self, rows: dict[str, Any], what: str, name: str, notebook: str, assignment: str,
               *student: str) -> Any:
        """The row ``name`` of ``rows``, or ``MissingEntry`` as nbgrader's ``find_<what>`` gives; a
        question about another notebook goes to nbgrader's ``find_<what>``."""
        if (assignment, notebook, student[0] if student else None) != self._where:
            return getattr(self._gb, f"find_{what}")(name, notebook, assignment, *student)
        if name not in rows:
            who = f" for {student[0]}" if student else ""
            raise MissingEntry(f"No such {what.replace('_', ' ')}: {assignment}/{notebook}/{name}{who}")
        return rows[name]

    def find_source_cell(self, name: str, notebook: str, assignment: str) -> Any:
        """nbgrader's ``Gradebook.find_source_cell``, from the rows."""
        return self._found(self.source_cells, "source_cell", name, notebook, assignment)

    def find_graded_cell(self, name: str, notebook: str, assignment: str) -> Any:
        """nbgrader's ``Gradebook.find_graded_cell``, from the rows."""
        return self._found(self.graded_cells, "graded_cell", name, notebook, assignment)

    def find_grade(self, grade_cell: str, notebook: str, assignment: str, student: str) -> Any:
        """nbgrader's ``Gradebook.find_grade``, from the rows."""
        return self._found(self.grades, "grade", grade_cell, notebook, assignment, student)

    def find_comment(self, solution_cell: str, notebook: str, assignment: str, student: str) -> Any:
        """nbgrader's ``Gradebook.find_comment``, from the rows."""
        return self._found(self.comments, "comment", solution_cell, notebook, assignment, student)


def _by_name(gb: Gradebook, table: Any, submitted: str, preferred: str, *options: Any) -> dict[str, Any]:
    """The rows of ``table`` (``Grade`` or ``Comment``) of the submitted notebook ``submitted``, by
    their cell's name: a row of a ``preferred`` cell over one of a task cell, as nbgrader looks them up."""
    from nbgrader.api import BaseCell

    found = (gb.db.query(table, BaseCell.name, BaseCell.type).options(*options)
             .join(BaseCell, BaseCell.id == table.cell_id).filter(table.notebook_id == submitted).all())
    out = {name: row for row, name, kind in found if kind == "TaskCell"}
    out.update({name: row for row, name, kind in found if kind == preferred})
    return out


def rows_or_gradebook(config_owner: Configurable, gb: Gradebook, assignment: str, notebook: str,
                      student: str | None = None) -> Gradebook | NotebookRows:
    """:class:`NotebookRows` of the notebook when ``c.PreloadedRows.preload`` (the default), else ``gb``."""
    if PreloadedRows(parent=config_owner).preload:
        return NotebookRows(gb, assignment, notebook, student)
    return gb


class OverwriteCellsPreloaded(OverwriteCells):
    """nbgrader's ``OverwriteCells`` (the source's locked cells, points and checksums put back), asking
    :class:`NotebookRows` instead of the gradebook cell by cell."""

    def preprocess(self, nb, resources):
        """nbgrader's ``OverwriteCells.preprocess``, with the notebook's rows read once."""
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id, self.db_url = info["notebook"], info["assignment"], info["db_url"]
        with Gradebook(self.db_url) as gb:
            self.gradebook = rows_or_gradebook(self, gb, self.assignment_id, self.notebook_id)
            nb, resources = super(OverwriteCells, self).preprocess(nb, resources)  # cell by cell
            if self.add_missing_cells:
                nb, resources = self.add_missing_grade_cells(nb, resources)
                nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources


class SaveAutoGradesPreloaded(SaveAutoGrades):
    """nbgrader's ``SaveAutoGrades`` (each test cell's score and each answer's comment into the
    gradebook), asking :class:`NotebookRows` cell by cell and committing once per notebook."""

    def preprocess(self, nb, resources):
        """nbgrader's ``SaveAutoGrades.preprocess``, with the notebook's rows read once."""
        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        with Gradebook(self.db_url) as gb:
            self.gradebook = rows_or_gradebook(self, gb, self.assignment_id, self.notebook_id, self.student_id)
            nb, resources = super(SaveAutoGrades, self).preprocess(nb, resources)  # cell by cell
            gb.db.commit()
        return nb, resources
