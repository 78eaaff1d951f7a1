"""Refuse a release whose exercises are incomplete or inconsistent: one line per problem.

``make release`` runs this first. An exercise is written in the source notebook (its
``## Exercise N:`` heading, its hints cell and its answer cell) and in its record (the records
module, with its hidden checks in ``autograder/hidden_checks.py``); ``scripts/sync_notebooks.py``
generates the rest. This names, in one line each, what is missing or does not fit:

- an answer cell without a record, or a record without an answer cell;
- an answer cell that does not define its function;
- an exercise without its ``## Exercise N:`` heading (with a paragraph saying what it asks, which
  the site's exercise list shows) or without its hints cell (``hints-<fn>``, two nested
  ``<details>``) between that heading and the answer cell;
- a record without a public check, or depending on a function the notebook does not ask before it;
- a reference that fails one of its own checks, or a named mistake that none of its checks names
  (on the inputs of seed 0: a mistake must give values different from the reference's);
- a notebook none of whose exercises has a ``compare()`` example (:data:`selfattn.compare.EXAMPLES`);
- a test cell calling a check that no record or hidden check declares (one removed since), or
  that the grader cannot read;
- a notebook whose generated cells are out of step (run ``scripts/sync_notebooks.py``).

Exit status 1 when anything is wrong (each problem on its own line on stderr), else 0.
"""

from __future__ import annotations

import inspect
import re
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat


def _not_loading(exc: BaseException) -> str:
    """One line for records or hidden checks that do not even import: the course's own line that failed."""
    import traceback

    root = str(Path(__file__).resolve().parent.parent)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(root)]
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{Path(exc.filename).resolve().relative_to(root)}:{exc.lineno}"
    else:
        where = f"{Path(frames[-1].filename).relative_to(root)}:{frames[-1].lineno}" if frames else "?"
    return f"the exercises do not load: {where}: {type(exc).__name__}: {exc}".splitlines()[0]


sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    from sync_notebooks import ROOT, answer_functions, compared, grade_id, sync

    from autograder.course.spec import check_calls
    from selfattn.checking import REGISTRY, run_check
    from selfattn.compare import EXAMPLES
    from selfattn.exercise_checks import EXERCISES
except Exception as exc:  # a record or a hidden check with an error: name its line, once
    if __name__ != "__main__":
        raise
    sys.exit(_not_loading(exc))

HEADING = re.compile(r"## Exercise \d+: \S")


def _source_file(obj: object) -> str:
    """The repository-relative file that defines ``obj`` (where a message sends the reader)."""
    module = inspect.getmodule(obj)
    path = Path(inspect.getfile(module)) if module else Path("?")
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def records_file() -> str:
    """Where the records are written: the module that declared their public checks."""
    first = next((c for e in EXERCISES.values() for c in e.checks if not c.hidden), None)
    return _source_file(first.cases) if first else "selfattn/exercise_checks.py"


def _heading_before(cells: list, at: int) -> int | None:
    """Index of the nearest ``## `` markdown heading before cell ``at``."""
    return next((i for i in range(at - 1, -1, -1)
                 if cells[i].cell_type == "markdown" and cells[i].source.startswith("## ")), None)


def exercise_problems(nb, where: str) -> list[str]:
    """Problems of each answer cell of one notebook ``nb`` (at ``where``, for the messages)."""
    problems: list[str] = []
    cells = nb.cells
    records = records_file()
    asked: list[str] = []
    headings: dict[int, str] = {}
    for at, cell in enumerate(cells):
        fn = grade_id(cell)
        if not (cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution")):
            continue
        record = EXERCISES.get(fn)
        if record is None:
            problems.append(f"exercise {fn}: no record in {records} (EXERCISES) for its answer cell in {where}")
        elif not record.public_checks:
            problems.append(f"exercise {fn}: its record has no public check ({fn.upper()}.check(...) in {records})")
        if not re.search(rf"^def {re.escape(fn)}\(", cell.source, re.M):
            problems.append(f"exercise {fn}: its answer cell (grade_id {fn}) in {where} does not define `def {fn}(`")
        head = _heading_before(cells, at)
        if head is None or not HEADING.match(cells[head].source) or head in headings:
            shared = f" (the one before it belongs to {headings[head]})" if head in headings else ""
            problems.append(f"exercise {fn}: no `## Exercise N: <title>` heading before its answer cell in {where}"
                            + shared)
        else:
            headings[head] = fn
            if not cells[head].source.partition("\n")[2].strip():
                problems.append(f"exercise {fn}: its heading in {where} has no paragraph saying what it asks "
                                "(the site's exercise list shows it)")
        hints = [i for i, c in enumerate(cells) if grade_id(c) == f"hints-{fn}"]
        if not hints:
            problems.append(f"exercise {fn}: no hints cell (grade_id hints-{fn}) in {where}")
        elif not (head or 0) < hints[0] < at:
            problems.append(f"exercise {fn}: its hints cell (grade_id hints-{fn}) in {where} is not between its "
                            "heading and its answer cell")
        elif cells[hints[0]].source.count("<details>") < 2:
            problems.append(f"exercise {fn}: its hints cell (grade_id hints-{fn}) in {where} needs two nested "
                            "<details> (hint 1, then hint 2 inside it)")
        for dep in record.dependency_names if record else ():
            if dep not in asked:
                problems.append(f"exercise {fn}: its record depends on {dep}, which {where} does not ask before it")
        asked.append(fn)
    return problems


def record_problems(function: str) -> list[str]:
    """Problems of one record: its reference must pass its checks, each mistake must be named by one."""
    record = EXERCISES[function]
    problems = []
    if record.reference is not None:
        for check_ in record.checks:
            if (found := run_check(check_, record.reference)) is not None:
                problems.append(f"exercise {function}: its reference fails its own check {check_.id}: "
                                f"{str(found).splitlines()[0]}")
    for mistake in record.mistakes:
        if not any(getattr(run_check(c, mistake.wrong), "name", None) == mistake.message for c in record.checks):
            problems.append(f"exercise {function}: none of its checks names its mistake {mistake.message!r} "
                            "(give one an input on which the mistake's values differ from the reference's)")
    return problems


def notebook_problems(path: Path) -> list[str]:
    """Every problem of one source notebook."""
    where = path.relative_to(ROOT).as_posix()
    nb = nbformat.read(path, as_version=4)
    problems = exercise_problems(nb, where)
    functions = answer_functions(nb)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
            try:
                calls = check_calls(cell.source, f"{where}: test cell {grade_id(cell)}")
            except (SyntaxError, ValueError) as e:
                problems.append(str(e).splitlines()[0])
                continue
            for fn, cid in calls:
                if fn not in functions:
                    problems.append(f"{where}: test cell {grade_id(cell)} checks {fn}, which has no answer cell there")
                elif cid not in REGISTRY or REGISTRY[cid].function != fn:
                    problems.append(f"{where}: test cell {grade_id(cell)} calls check {cid!r}, which no record or "
                                    f"hidden check of {fn} declares")
    if functions and not compared(nb):
        problems.append(f"{where}: none of its exercises ({', '.join(functions)}) has a compare() example in "
                        f"{_source_file(EXAMPLES)} (EXAMPLES)")
    if not problems:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / path.name
            shutil.copy(path, copy)
            if sync(copy):
                problems.append(f"{where}: its generated cells are out of step: run "
                                ".venv/bin/python scripts/sync_notebooks.py")
    return problems


def course_problems(root: Path = ROOT) -> list[str]:
    """Every problem of the course's source notebooks and records."""
    paths = sorted((root / "solutions").glob("*/*.ipynb"))
    problems = [p for path in paths for p in notebook_problems(path)]
    answered = {fn for path in paths for fn in answer_functions(nbformat.read(path, as_version=4))}
    problems += [f"exercise {fn}: a record in {records_file()} but no answer cell (grade_id {fn}) in solutions/"
                 for fn in EXERCISES if fn not in answered]
    problems += [p for fn in EXERCISES for p in record_problems(fn)]
    return problems


def catalogue_gaps(root: Path = ROOT) -> list[str]:
    """A note (not a problem: the release goes ahead) per exercise the test suite's catalogue lacks a
    correct or a wrong answer to (``tests/catalogue/<folder>/*.py`` with ``# replace: <fn>``);
    nothing where there is no catalogue (a copy of the course without its tests)."""
    from exercise_tests import catalogue_entries

    catalogue = root / "tests" / "catalogue"
    if not catalogue.is_dir():
        return []
    return [f"note: exercise {fn}: no catalogue entry in tests/catalogue/{folder}/ (a file whose header says "
            f"`# replace: {fn}`; docs/contributing.md, Adding an exercise)"
            for fn in EXERCISES for folder in ("correct", "wrong") if not catalogue_entries(fn, catalogue / folder)]


def main() -> int:
    problems = course_problems()
    for line in problems + catalogue_gaps():
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
