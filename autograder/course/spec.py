"""What the instructor's source notebook says is graded, read once and trusted.

Test cells are declarative: each is a list of ``check(<function>, "<check id>")`` calls (plus
imports). The grader reads those calls with :mod:`ast` and never executes the cell.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import nbformat


@dataclass(frozen=True)
class TestCell:
    grade_id: str
    points: float
    checks: tuple[tuple[str, str], ...]  # (function, check id)
    hidden: frozenset[str] = field(default_factory=frozenset)  # check ids inside the hidden region

    @property
    def label(self) -> str:
        """What a student reads for this cell: its exercise and which of its checks it holds
        ("softmax: hidden checks")."""
        ids = {cid for _, cid in self.checks}
        which = "hidden checks" if ids and ids <= self.hidden else "checks" if ids & self.hidden else "public checks"
        return f"{self.checks[0][0]}: {which}" if self.checks else self.grade_id


@dataclass(frozen=True)
class NotebookSpec:
    assignment: str
    notebook: str
    functions: tuple[str, ...]  # grade ids of solution code cells, in notebook order
    tests: tuple[TestCell, ...]

    def tests_of(self, function: str) -> list[TestCell]:
        return [t for t in self.tests if any(f == function for f, _ in t.checks)]


def check_calls(source: str, where: str) -> list[tuple[str, str]]:
    """Every ``check(<function>, "<check id>")`` call in a test cell's ``source``, in order.

    Returns
    -------
    list of (function, check id)
    Raises ``ValueError`` naming ``where`` for a call of any other form.
    """
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check":
            args = node.args
            if len(args) != 2 or not isinstance(args[0], ast.Name) or not isinstance(args[1], ast.Constant):
                raise ValueError(f"{where}: test cells must call check(<function>, \"<check id>\")")
            calls.append((args[0].id, str(args[1].value)))
    return calls


def hidden_part(source: str) -> str:
    """The lines of ``source`` between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``."""
    inside, keep = False, []
    for line in source.splitlines():
        if "BEGIN HIDDEN TESTS" in line:
            inside = True
        elif "END HIDDEN TESTS" in line:
            inside = False
        elif inside:
            keep.append(line)
    return "\n".join(keep)


def read_trusted(path: Path) -> nbformat.NotebookNode:
    """A notebook the course or the grader wrote (a source notebook, a release, a staged copy, never
    a student's file as handed in), parsed without nbformat's schema validation, which is most of
    the cost of ``nbformat.read`` and was done when it was written (the class report reads every
    staged notebook of the class)."""
    from nbformat import reader

    return nbformat.convert(reader.reads(Path(path).read_text(encoding="utf-8")), 4)  # nbformat.read, less validate()


def answer_cells(nb: Path | nbformat.NotebookNode) -> dict[str, str]:
    """grade_id -> source of each answer code cell (nbgrader ``solution``) of a notebook: a source
    notebook, a release or a staged copy (the one reader of answer cells)."""
    nb = read_trusted(nb) if isinstance(nb, Path) else nb
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}


@cache
def load_spec(assignment: str, notebook: str, course: Path) -> NotebookSpec:
    """What the instructor's source notebook of the course at ``course`` says is graded."""
    path = Path(course) / "solutions" / assignment / f"{notebook}.ipynb"
    nb = nbformat.read(path, as_version=4)
    functions, tests = [], []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        if meta.get("solution") and cell.cell_type == "code":
            functions.append(gid)
        elif meta.get("grade") and cell.cell_type == "code":
            where = f"{path.name}:{gid}"
            checks = check_calls(cell.source, where)
            hidden = frozenset(cid for _, cid in check_calls(hidden_part(cell.source), where))
            tests.append(TestCell(gid, float(meta.get("points", 0)), tuple(checks), hidden))
    for t in tests:
        for fn, _ in t.checks:
            if fn not in functions:
                raise ValueError(f"{path.name}: test cell {t.grade_id} checks {fn}, which has no solution cell")
    return NotebookSpec(assignment, notebook, tuple(functions), tuple(tests))


def exercise_of(assignment: str, notebook: str, course: Path) -> dict[str, str]:
    """grade_id of every test cell -> the exercise it grades (the function its checks call); empty
    when the course has no such notebook."""
    try:
        spec = load_spec(assignment, notebook, course)
    except (OSError, ValueError):
        return {}
    return {t.grade_id: t.checks[0][0] for t in spec.tests if t.checks}


def notebooks_of(assignment: str, course: Path) -> list[str]:
    """The notebooks of ``assignment``, by name, as the course's source notebooks have them."""
    return sorted(p.stem for p in (Path(course) / "solutions" / assignment).glob("*.ipynb"))


def release_path(assignment: str, notebook: str, course: Path) -> Path:
    """The released notebook students received."""
    return Path(course) / "notebooks" / assignment / f"{notebook}.ipynb"
