"""Generate the parts of the instructor notebooks that follow from other records.

An exercise is written in two places: its answer cell (with its ``## Exercise N:`` heading and
hints cell) in ``solutions/``, and its record in ``selfattn/exercise_checks.py`` with its hidden
checks in ``autograder/hidden_checks.py``. Run this after editing either, or ``_config.yml``, then
``make release`` (which first runs ``scripts/validate_exercises.py``):

- the link to the chapter in the first cell points at the published site
  (``html: baseurl:`` of ``_config.yml`` + ``book/<chapter>.html``);
- each ``## Exercise N:`` heading is numbered in the order of the notebook's answer cells;
- after each answer cell, its two locked test cells: ``<fn>-public`` with one ``check()`` per
  public check of the record, and ``<fn>-hidden`` (when it has hidden checks) whose first line
  says what they try and whose hidden region calls each of them (an answer that is a value,
  ``shape_answers``, has its hidden checks in the public cell's hidden region instead, since its
  public check cannot judge the values); a missing one is created (1 and 2
  points, the course's default: change ``points`` in its metadata), an existing one keeps its
  points, its id and its first line;
- a ``compare()`` cell after the checks of each of the notebook's exercises that has an example in
  :data:`selfattn.compare.EXAMPLES`;
- the last cell prints the notebook's summary (:func:`selfattn.checks.notebook.summary`, imported
  from ``selfattn.checking``), with the
  points and public checks of each exercise read from the notebook itself.

``tests/test_release.py`` fails when a notebook is out of step.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import autograder.hidden_checks  # noqa: E402, F401 - registers the hidden checks
import selfattn.checks.exercises  # noqa: E402, F401 - registers the public checks
from autograder.course.spec import check_calls, hidden_part  # noqa: E402
from selfattn.checks.record import REGISTRY  # noqa: E402
from selfattn.compare import EXAMPLES  # noqa: E402
from selfattn.exercise_checks import EXERCISES  # noqa: E402

LINK = re.compile(r"\]\((?:\.\./\.\./_build/html/|https?://[^)\s]*?/)(book/[\w.-]+\.html)\)"
                  r"(?: \(build the site with `make book`\))?")
SUMMARY_ID = "summary"
HEADING = re.compile(r"## Exercise \d+:")
#: Points of a test cell this script creates (an existing cell keeps its own).
DEFAULT_POINTS = {"public": 1, "hidden": 2}
HIDDEN_IMPORT = "import autograder.hidden_checks  # instructor-only checks"


def grade_id(cell) -> str:
    return str(cell.metadata.get("nbgrader", {}).get("grade_id", ""))


def answer_functions(nb) -> list[str]:
    """Grade ids of the answer code cells (the graded functions), in notebook order."""
    return [grade_id(c) for c in nb.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]


def compared(nb) -> list[str]:
    """The exercises whose ``compare()`` cells this notebook shows: each that has an example."""
    return [fn for fn in answer_functions(nb) if fn in EXAMPLES]


def site_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return str(config["html"]["baseurl"]).rstrip("/") + "/"


def hidden_line(function: str, check_ids: list[str]) -> str:
    what = "; ".join(REGISTRY[cid].description for cid in check_ids)
    return f"# Hidden checks of {function}, run when the notebook is graded: {what}."


def public_source(function: str, first_line: str | None = None) -> str:
    """The ``<function>-public`` cell: a comment, then one ``check()`` per public check of its
    record; for an answer that is a value (``takes_no_input``: its public check cannot judge the
    values), also the hidden region of :func:`hidden_region`, so the cell's points need both."""
    exercise = EXERCISES[function]
    calls = [f'check({function}, "{c.id}")' for c in exercise.public_checks]
    hidden = hidden_region(function) if exercise.takes_no_input and any(c.hidden for c in exercise.checks) else []
    return "\n".join([first_line or f"# Public checks: run this cell after writing {function}.", *calls, *hidden])


def hidden_region(function: str) -> list[str]:
    """The lines of the hidden region calling each hidden check of ``function``."""
    ids = [c.id for c in EXERCISES[function].checks if c.hidden]
    return ["### BEGIN HIDDEN TESTS", HIDDEN_IMPORT, *(f'check({function}, "{cid}")' for cid in ids),
            "### END HIDDEN TESTS"]


def hidden_source(function: str) -> str:
    """The ``<function>-hidden`` cell: what its checks try, then the calls, in the hidden region."""
    ids = [c.id for c in EXERCISES[function].checks if c.hidden]
    return "\n".join([hidden_line(function, ids), *hidden_region(function)])


def graded_cell(function: str, kind: str, source: str):
    """A new locked graded cell ``<function>-<kind>`` with the default points."""
    gid = f"{function}-{kind}"
    cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade": True, "grade_id": gid, "locked": True, "points": DEFAULT_POINTS[kind], "schema_version": 3,
        "solution": False, "task": False}})
    cell["id"] = gid  # a fixed id: running this again changes nothing
    return cell


def sync_test_cells(nb) -> None:
    """Give each answer cell with a record its test cells, right after it, in step with the record."""
    for function in answer_functions(nb):
        if function not in EXERCISES:
            continue  # scripts/validate_exercises.py names it
        # an answer that is a value has its hidden checks in its public cell (public_source)
        has_hidden = any(c.hidden for c in EXERCISES[function].checks) and not EXERCISES[function].takes_no_input
        for kind in ("public", "hidden"):
            cells = [c for c in nb.cells if grade_id(c) == f"{function}-{kind}"]
            if kind == "hidden" and not has_hidden:
                continue
            if cells:
                first = cells[0].source.split("\n", 1)[0]
                cells[0].source = (public_source(function, first if first.startswith("# Public check") else None)
                                   if kind == "public" else hidden_source(function))
                continue
            after = max(i for i, c in enumerate(nb.cells) if grade_id(c) in (function, f"{function}-public"))
            source = public_source(function) if kind == "public" else hidden_source(function)
            nb.cells.insert(after + 1, graded_cell(function, kind, source))


def number_headings(nb) -> None:
    """Number the ``## Exercise N:`` headings 1, 2, ... in notebook order."""
    n = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown" and HEADING.match(cell.source):
            n += 1
            cell.source = HEADING.sub(f"## Exercise {n}:", cell.source, count=1)


def summary_source(nb) -> str:
    exercises: dict[str, list] = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            hidden = {cid for _, cid in check_calls(hidden_part(cell.source), "")}
            for fn, cid in check_calls(cell.source, ""):
                entry = exercises.setdefault(fn, [0.0, []])
                if cid not in hidden:
                    entry[1].append(cid)
            fns = {fn for fn, _ in check_calls(cell.source, "")}
            for fn in fns:
                exercises[fn][0] += float(meta.get("points", 0)) / len(fns)
    body = ",\n".join(f"    {fn!r}: ({pts:g}, {ids!r})" for fn, (pts, ids) in exercises.items())
    return ("# Summary: where each exercise stands (run this cell any time; it never stops on an unwritten one).\n"
            "from selfattn.checking import summary\n\n"
            f"summary(globals(), {{\n{body},\n}})")


def compare_cell(function: str):
    """An unlocked, ungraded cell showing the student's ``function`` beside the package's own."""
    # an answer shown only through what it does (Problem 20) has no "course's own" to show
    # nor an answer that is a value (the package does not hold it): there the student's stands alone
    example = EXAMPLES[function]
    what = (f"Your {function} beside the lookup the exercise asks for, through attention" if example.view is not None
            else f"Your {function} on the lecture's example (its values are checked when graded)"
            if example.reference is None else f"Your {function} beside the course's own on the lecture's example")
    cell = nbformat.v4.new_code_cell(
        f"# {what} (never stops on a mistake).\n"
        f"from selfattn.compare import compare\n\ncompare({function})",
        metadata={"nbgrader": {"grade": False, "grade_id": f"compare-{function}", "locked": False,
                               "schema_version": 3, "solution": False, "task": False}})
    cell["id"] = f"compare-{function}"  # a fixed id: running this again changes nothing
    return cell


def insert_compare(nb, functions: list[str]) -> None:
    """Put a comparison cell right after the last graded cell of each of ``functions``' checks."""
    nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("compare-")]
    for function in functions:
        last = max(i for i, c in enumerate(nb.cells)
                   if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith(f"{function}-"))
        nb.cells.insert(last + 1, compare_cell(function))


def sync(path: Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    base = site_url()
    nb.cells[0].source = LINK.sub(lambda m: f"]({base}{m.group(1)})", nb.cells[0].source)
    number_headings(nb)
    sync_test_cells(nb)
    insert_compare(nb, compared(nb))
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != SUMMARY_ID]
    nb.cells.append(nbformat.v4.new_code_cell(summary_source(nb), metadata={"nbgrader": {
        "grade": False, "grade_id": SUMMARY_ID, "locked": True, "schema_version": 3, "solution": False,
        "task": False}}))
    nb.cells[-1]["id"] = SUMMARY_ID  # a fixed id: running this again changes nothing
    after = nbformat.writes(nb)
    if after != before:
        nbformat.write(nb, path)
    return after != before


def main() -> int:
    changed = [p.name for p in sorted((ROOT / "solutions").glob("*/*.ipynb")) if sync(p)]
    print(f"updated {len(changed)} notebooks" + (f": {', '.join(changed)}; now run `make release`" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
