"""A new exercise is written in one place, and everything else follows from it.

In a copy of the course, a toy exercise ``row_sums`` is added through its three places only: the
answer cell (with its heading and hints) in a source notebook, its record in the records module,
its hidden check in ``autograder/hidden_checks.py``. Then ``scripts/sync_notebooks.py`` and
``make release`` give it its test cells, summary line and place on the site's exercise list; the
released notebook's ``check()`` ticks the answer and names the mistake; and the grader gives the
answer full points and the mistake none. Its reference, in a new module of the package, joins the
verdict key and is withheld from the student package without being listed anywhere. Each missing
piece stops ``make release`` with one line.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from grading_support import ROOT, scores

import autograder.hidden_checks
import selfattn.compare
from selfattn.book import notebook_exercises
from selfattn.exercise_checks import EXERCISES


def _file_of(check_) -> str:
    """The repository file that declared ``check_`` (where a new record, or hidden check, goes)."""
    return Path(inspect.getfile(check_.cases)).resolve().relative_to(ROOT).as_posix()


#: the records module and the hidden checks' file, wherever they live
RECORDS = _file_of(EXERCISES["embed"].public_checks[0])
HIDDEN_CHECKS = _file_of(next(c for c in EXERCISES["embed"].checks if c.hidden))
assert Path(HIDDEN_CHECKS) == Path(autograder.hidden_checks.__file__).resolve().relative_to(ROOT)
#: the module of the compare() examples (selfattn.compare.EXAMPLES)
EXAMPLES = Path(selfattn.compare.__file__).resolve().relative_to(ROOT).as_posix()

NOTEBOOK = "08-cost"
#: what the copy needs of the repository (tracked files only: no work folders, no build)
PARTS = ("selfattn", "autograder", "scripts", "solutions", "notebooks", "_config.yml", "nbgrader_config.py",
         "nbgrader", "Makefile", "requirements.txt", "pyproject.toml")
MISTAKE = "summed down the columns: sum each row, along axis 1"
ANSWER = 'def row_sums(X):\n    """The sum of each row of X (T, d) -> (T,)."""\n    ### BEGIN SOLUTION\n' \
         "    return X.sum(axis=1)\n    ### END SOLUTION"
WRONG = 'def row_sums(X):\n    """The sum of each row of X (T, d) -> (T,)."""\n    return X.sum(axis=0)'
#: the reference, in a module of its own (the package's one implementation of the formula)
REFERENCE = '''"""Sums along rows: the toy exercise's reference."""

import numpy as np


def row_sums(X):
    """The sum of each row: (T, d) -> (T,)."""
    return np.asarray(X).sum(axis=1)
'''
RECORD = f'''

from selfattn import rows  # noqa: E402

ROW_SUMS = Exercise("row_sums", rows.row_sums, mistakes=[
    Mistake(lambda X: np.asarray(X).sum(axis=0), "{MISTAKE}", id="columns"),
])
ROW_SUMS.check("small", "the sum of each row", lambda rng: [Case((rand(rng, 3, 4),))])
EXERCISES[ROW_SUMS.function] = ROW_SUMS
'''
NO_PUBLIC_CHECK = "\n".join(ln for ln in RECORD.splitlines() if not ln.startswith("ROW_SUMS.check("))
#: a "mistake" that gives the reference's values: no check can name it
INVISIBLE = RECORD.replace(
    "mistakes=[",
    'mistakes=[\n    Mistake(lambda X: np.asarray(X).sum(axis=1) * 1.0, "multiplied by one", id="times-one"),')
HIDDEN = '''

from selfattn.exercise_checks import EXERCISES  # noqa: E402

EXERCISES["row_sums"].hidden("random", "random shapes with more columns than rows",
    lambda rng: [Case((rand(rng, int(rng.integers(2, 5)), int(rng.integers(5, 9))),)) for _ in range(2)])
'''
HEADING = "## Exercise 1: row sums\n\nWrite `row_sums(X)`: the sum of each row of `X`."
HINTS = ("<details><summary>Stuck? Hint 1 for <code>row_sums</code></summary>\n\nOne number per row.\n\n"
         "<details><summary>Still stuck? Hint 2</summary>\n\n`axis=1`.\n\n</details>\n</details>")


def _meta(grade_id: str, **more) -> dict:
    return {"nbgrader": {"grade": False, "grade_id": grade_id, "locked": True, "schema_version": 3,
                         "solution": False, "task": False, **more}}


def copy_course(dest: Path) -> Path:
    """The repository's tracked course files under ``dest`` (its environment linked, not copied)."""
    files = subprocess.run(["git", "ls-files", *PARTS], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for name in files:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest / name)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    return dest


def add_toy(course: Path, *, leave_out: str = "", answer: str = ANSWER, record: str = RECORD) -> None:
    """Write the toy exercise into ``course`` in its three places (``leave_out`` names one piece to omit)."""
    (course / "selfattn" / "rows.py").write_text(REFERENCE)
    if leave_out != "record":
        record = NO_PUBLIC_CHECK if leave_out == "public check" else record
        with open(course / RECORDS, "a") as fh:
            fh.write(record)
        with open(course / HIDDEN_CHECKS, "a") as fh:
            fh.write(HIDDEN)
    path = course / "solutions" / "attention" / f"{NOTEBOOK}.ipynb"
    nb = nbformat.read(path, as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if c.metadata["nbgrader"]["grade_id"] == "summary")
    cells = [nbformat.v4.new_markdown_cell(HEADING, metadata=_meta("md-row_sums")),
             nbformat.v4.new_markdown_cell(HINTS, metadata=_meta("hints-row_sums")),
             nbformat.v4.new_code_cell(answer, metadata=_meta("row_sums", locked=False, solution=True))]
    omit = {"heading": {0}, "hints cell": {1}, "answer cell": {0, 1, 2}}.get(leave_out, set())
    nb.cells[at:at] = [c for i, c in enumerate(cells) if i not in omit]
    nbformat.write(nb, path)


def run(args: list[str], course: Path, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(course), AUTOGRADER_COURSE=str(course), **env)
    return subprocess.run(args, cwd=course, env=environment, capture_output=True, text=True, timeout=1200)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, f"{result.args} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def cell(nb, grade_id: str):
    found = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    assert len(found) == 1, f"{len(found)} cells with grade_id {grade_id}"
    return found[0]


def execute(course: Path, nb) -> nbformat.NotebookNode:
    """``nb`` run top to bottom in a kernel that imports the course copy, errors kept as outputs."""
    from nbclient import NotebookClient

    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(course)  # the kernel inherits it: it imports the copy's records
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(course / "notebooks" / "attention")}}).execute()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    return nb


def output_text(c) -> str:
    return "\n".join(o.get("text", "") + o.get("evalue", "") for o in c.get("outputs", []))


def shown(c, mime: str) -> str:
    """What an executed cell displays as ``mime`` (its results and displays)."""
    return "\n".join(str(o.get("data", {}).get(mime, "")) for o in c.get("outputs", []))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return copy_course(tmp_path_factory.mktemp("pristine"))


@pytest.fixture(scope="module")
def released(pristine, tmp_path_factory) -> Path:
    """A course copy with the toy exercise added, generated and released."""
    course = tmp_path_factory.mktemp("course") / "c"
    shutil.copytree(pristine, course, symlinks=True)
    add_toy(course)
    ok(run([sys.executable, "scripts/sync_notebooks.py"], course))
    ok(run(["make", "-s", "-o", ".venv/.installed", "release"], course))
    return course


def test_sync_generates_the_test_cells_heading_and_summary(released):
    source = nbformat.read(released / "solutions" / "attention" / f"{NOTEBOOK}.ipynb", as_version=4)
    assert cell(source, "row_sums-public").source == (
        '# Public checks: run this cell after writing row_sums.\ncheck(row_sums, "row_sums/small")')
    hidden = cell(source, "row_sums-hidden")
    assert hidden.source.splitlines()[0] == (
        "# Hidden checks of row_sums, run when the notebook is graded: random shapes with more columns than rows.")
    assert 'check(row_sums, "row_sums/hidden/random")' in hidden.source
    assert (cell(source, "row_sums-public").metadata.nbgrader.points, hidden.metadata.nbgrader.points) == (1, 2)
    assert cell(source, "md-row_sums").source.startswith("## Exercise 3: row sums"), "headings are renumbered"
    assert "'row_sums': (3, ['row_sums/small'])" in cell(source, "summary").source
    ids = [c.metadata.nbgrader.grade_id for c in source.cells]
    assert ids.index("row_sums") < ids.index("row_sums-public") < ids.index("row_sums-hidden") < ids.index("summary")


def test_the_release_hides_the_answer_and_the_site_lists_the_exercise(released):
    path = released / "notebooks" / "attention" / f"{NOTEBOOK}.ipynb"
    text = path.read_text()
    assert "row_sums/hidden" not in text and "X.sum(axis=1)" not in text
    release = nbformat.read(path, as_version=4)
    assert "raise NotImplementedError" in cell(release, "row_sums").source
    listed = {e.title: e for e in notebook_exercises(path)}
    assert "Exercise 3: row sums" in listed, sorted(listed)
    assert listed["Exercise 3: row sums"].points == 3
    assert listed["Exercise 3: row sums"].asks == "Write `row_sums(X)`: the sum of each row of `X`."


@pytest.mark.parametrize("answer, shown", [(ANSWER, "✓ row_sums: the sum of each row"), (WRONG, MISTAKE)],
                         ids=["answer", "mistake"])
def test_check_in_the_released_notebook(released, answer, shown):
    release = nbformat.read(released / "notebooks" / "attention" / f"{NOTEBOOK}.ipynb", as_version=4)
    cell(release, "row_sums").source = answer
    done = execute(released, release)
    assert shown in output_text(cell(done, "row_sums-public")), output_text(cell(done, "row_sums-public"))
    line = next(ln for ln in output_text(cell(done, "summary")).splitlines() if "row_sums" in ln)
    assert line.startswith("✓") if answer is ANSWER else line.startswith("✗"), line


def grade_ada_and_ben(course: Path, source, work: Path) -> tuple[dict, dict]:
    """``make grade`` in ``course`` on two students who hand in ``source`` with the answer (ada)
    and the mistake (ben) in its ``row_sums`` cell; their scores by cell."""
    for student, answer in (("ada", ANSWER), ("ben", WRONG)):
        cell(source, "row_sums").source = answer
        folder = work / "submitted" / student / "attention"
        folder.mkdir(parents=True)
        nbformat.write(source, folder / f"{NOTEBOOK}.ipynb")
    ok(run([sys.executable, "-m", "autograder.grade", "--workers", "1", "--cpu-seconds", "10", "--memory-mb", "1024"],
           course, AUTOGRADER_WORKDIR=str(work)))
    return scores(work, "ada", NOTEBOOK), scores(work, "ben", NOTEBOOK)


def test_the_grader_gives_the_answer_its_points_and_the_mistake_none(released, tmp_path):
    source = nbformat.read(released / "solutions" / "attention" / f"{NOTEBOOK}.ipynb", as_version=4)
    work = tmp_path / "work"
    ada, ben = grade_ada_and_ben(released, source, work)
    assert ada["row_sums-public"] == (1, 1) and ada["row_sums-hidden"] == (2, 2), ada
    assert ben["row_sums-public"] == (0, 1) and ben["row_sums-hidden"] == (0, 2), ben
    assert {k: v for k, v in ben.items() if not k.startswith("row_sums")} == {
        k: v for k, v in ada.items() if not k.startswith("row_sums")}, "the mistake costs only its own points"
    feedback = (work / "feedback" / "ben" / "attention" / f"{NOTEBOOK}.html").read_text()
    assert "summed down the columns" in feedback


def test_the_new_reference_keys_the_verdicts_and_is_withheld_from_students(released, tmp_path):
    code = "from autograder.verdicts.decide import CHECK_MODULES; print(' '.join(CHECK_MODULES))"
    assert "rows" in ok(run([sys.executable, "-c", code], released)).stdout.split(), "a change to it re-grades"
    ok(run([sys.executable, "scripts/student_package.py", str(tmp_path)], released))
    student = tmp_path / "selfattn"
    assert "sum(axis=1)" not in (student / "rows.py").read_text()
    assert "'rows.row_sums'" in (student / "rows.py").read_text(), "row_sums looks its results up"
    records = (student / Path(RECORDS).relative_to("selfattn")).read_text()
    assert "ROW_SUMS" in records and "sum(axis=0)" not in records, "the named mistake is withheld too"


@pytest.mark.parametrize("leave_out, answer, line", [
    ("answer cell", ANSWER, f"exercise row_sums: a record in {RECORDS} but no answer cell (grade_id row_sums) in "
                            "solutions/"),
    ("record", ANSWER, f"exercise row_sums: no record in {RECORDS} (EXERCISES) for its answer cell in "
                       f"solutions/attention/{NOTEBOOK}.ipynb"),
    ("public check", ANSWER, "exercise row_sums: its record has no public check"),
    ("hints cell", ANSWER, f"exercise row_sums: no hints cell (grade_id hints-row_sums) in solutions/attention/"
                           f"{NOTEBOOK}.ipynb"),
    ("heading", ANSWER, "exercise row_sums: no `## Exercise N: <title>` heading before its answer cell in "
                        f"solutions/attention/{NOTEBOOK}.ipynb (the one before it belongs to crossover_length)"),
    ("", ANSWER.replace("def row_sums", "def rowsums"), "exercise row_sums: its answer cell (grade_id row_sums) in "
                                                         f"solutions/attention/{NOTEBOOK}.ipynb does not define"),
    ("sync", ANSWER, f"solutions/attention/{NOTEBOOK}.ipynb: its generated cells are out of step: run "
                     ".venv/bin/python scripts/sync_notebooks.py"),
    ("invisible mistake", ANSWER, "exercise row_sums: none of its checks names its mistake 'multiplied by one'"),
    ("broken record", ANSWER, f"the exercises do not load: {RECORDS}:"),
    ("hidden check, later", ANSWER, f"solutions/attention/{NOTEBOOK}.ipynb: test cell row_sums-hidden calls check "
                                    "'row_sums/hidden/random', which no record or hidden check of row_sums declares"),
], ids=["answer-cell", "record", "public-check", "hints", "heading", "definition", "sync", "invisible-mistake",
        "broken-record", "hidden-check-removed"])
def test_each_missing_piece_stops_the_release_with_one_line(pristine, tmp_path, leave_out, answer, line):
    course = tmp_path / "c"
    shutil.copytree(pristine, course, symlinks=True)
    record = {"invisible mistake": INVISIBLE, "broken record": RECORD + "ROW_SUM.check('x', 'y', list)\n"}.get(
        leave_out, RECORD)
    add_toy(course, leave_out=leave_out, answer=answer, record=record)
    if leave_out != "sync":
        run([sys.executable, "scripts/sync_notebooks.py"], course)
    if leave_out == "hidden check, later":  # generated with it, then it is taken out again
        (course / HIDDEN_CHECKS).write_text((pristine / HIDDEN_CHECKS).read_text())
    result = run(["make", "-s", "-o", ".venv/.installed", "release"], course)
    problems = [ln for ln in result.stderr.splitlines() if ln.startswith(("exercise ", "solutions/", "the exercises"))]
    assert result.returncode != 0 and len(problems) == 1 and problems[0].startswith(line), result.stderr[-3000:]
    released = Path("notebooks", "attention", f"{NOTEBOOK}.ipynb")
    assert (course / released).read_bytes() == (pristine / released).read_bytes(), "nothing was released"


def test_derived_bookkeeping_follows_the_records():
    """The verdict key's modules and the student package's withheld functions come from the records."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from student_package import FORMULAS, WITHHELD

    from autograder.verdicts.decide import CHECK_MODULES
    from selfattn.exercise_checks import EXERCISES

    for exercise in EXERCISES.values():
        ref = exercise.reference
        if ref is not None and ref.__name__ != "<lambda>":
            module = ref.__module__.removeprefix("selfattn.")
            assert module in CHECK_MODULES, module
            assert module in ("numerics", "cost", "experiments", "heads", "training") or \
                ref.__qualname__ in WITHHELD[module], (module, ref.__qualname__)
    assert "embed" in WITHHELD["text"] and "text" not in FORMULAS, "text.embed is withheld as a reference"


def _uncomment(path: Path, fn: str, **fill: str) -> None:
    """Uncomment the skeleton ``scripts/new_exercise.py`` wrote at the end of ``path``, filling its
    placeholders (``fill``: placeholder -> text), as a contributor would."""
    text = path.read_text()
    head, mark, block = text.rpartition(f"# New exercise {fn} (scripts/new_exercise.py)")
    assert mark, f"no skeleton of {fn} in {path}"
    lines = block.splitlines()[1:]
    body = "\n".join(ln[2:] if ln.startswith("# ") else ln.removeprefix("#") for ln in lines)  # one level, as an editor
    for placeholder, text_ in fill.items():
        assert placeholder in body, (placeholder, body)
        body = body.replace(placeholder, text_)
    path.write_text(head + body + "\n")


def test_the_scaffold_writes_an_exercise_that_releases_and_grades_once_filled_in(pristine, tmp_path):
    """``scripts/new_exercise.py`` writes the heading, hints and answer cells (with the metadata a
    hand-written exercise has) and the record, hidden-check and compare() example skeletons; until
    they are filled in, the release names the missing record; filled in, the exercise is released,
    its compare() cell (after its checks) shows the answer beside the reference, and it is graded."""
    course = tmp_path / "c"
    shutil.copytree(pristine, course, symlinks=True)
    ok(run([sys.executable, "scripts/new_exercise.py", NOTEBOOK, "row_sums", "row sums"], course))
    source = course / "solutions" / "attention" / f"{NOTEBOOK}.ipynb"
    nb = nbformat.read(source, as_version=4)
    ids = [c.metadata.nbgrader.grade_id for c in nb.cells]
    assert ids.index("md-row_sums") + 2 == ids.index("hints-row_sums") + 1 == ids.index("row_sums") < ids.index(
        "summary")
    assert cell(nb, "md-row_sums").metadata == _meta("md-row_sums")
    assert cell(nb, "hints-row_sums").metadata == _meta("hints-row_sums")
    assert cell(nb, "row_sums").metadata == _meta("row_sums", locked=False, solution=True)
    refused = run([sys.executable, "scripts/new_exercise.py", NOTEBOOK, "row_sums", "again"], course)
    assert refused.returncode == 1 and refused.stderr.strip() == (
        f"exercise row_sums exists already (solutions/attention/{NOTEBOOK}.ipynb or {RECORDS})"), refused.stderr
    unfilled = run([sys.executable, "scripts/validate_exercises.py"], course)
    assert unfilled.returncode == 1 and f"exercise row_sums: no record in {RECORDS}" in unfilled.stderr

    (course / "selfattn" / "rows.py").write_text(REFERENCE)
    _uncomment(course / RECORDS, "row_sums", MODULE="rows", WRONG="np.asarray(X).sum(axis=0)",
               **{"what is wrong: what to do instead": MISTAKE, "what the check tries": "the sum of each row"})
    _uncomment(course / HIDDEN_CHECKS, "row_sums", **{"what the hidden check tries": "random row counts"})
    _uncomment(course / EXAMPLES, "row_sums", MODULE="rows")
    cell(nb, "row_sums").source = ANSWER
    cell(nb, "md-row_sums").source = HEADING
    nbformat.write(nb, source)
    ok(run([sys.executable, "scripts/sync_notebooks.py"], course))
    ok(run(["make", "-s", "-o", ".venv/.installed", "release"], course))
    release = nbformat.read(course / "notebooks" / "attention" / f"{NOTEBOOK}.ipynb", as_version=4)
    assert "raise NotImplementedError" in cell(release, "row_sums").source
    assert "row_sums/hidden" not in json.dumps(release) and "X.sum(axis=1)" not in json.dumps(release)
    ids = [c.metadata.nbgrader.grade_id for c in release.cells]
    assert ids.index("compare-row_sums") == ids.index("row_sums-hidden") + 1, ids
    cell(release, "row_sums").source = ANSWER
    compared = cell(execute(course, release), "compare-row_sums")
    verdict = "✓ row_sums agrees with the reference on row_sums of the embeddings of 'the cat was hungry' (d = 4)"
    assert shown(compared, "text/plain") == verdict, compared.get("outputs")
    assert shown(compared, "text/html").count("✓</td>") == 4, "one row per token of 'the cat was hungry'"

    synced = nbformat.read(source, as_version=4)
    work = tmp_path / "work"
    ada, ben = grade_ada_and_ben(course, synced, work)
    assert ada["row_sums-public"] == (1, 1) and ada["row_sums-hidden"] == (2, 2), ada
    assert ben["row_sums-public"] == (0, 1) and ben["row_sums-hidden"] == (0, 2), ben
    assert "summed down the columns" in (work / "feedback" / "ben" / "attention" / f"{NOTEBOOK}.html").read_text()
