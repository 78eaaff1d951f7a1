"""One notebook never stops the class: malformed Unicode and JSON, big outputs, many cells.

``tests/malformed/*`` is a catalogue of broken submissions in the format of ``tests/adversarial``
(``kind: notebook``; ``mutate`` may return bytes): lone surrogates in code, written answers,
metadata, outputs, cell ids and attachments; invalid UTF-8, overlong forms, a byte-order mark, NUL
and control characters; deep nesting, repeated keys, huge numbers, cells that are not cells,
missing keys, other nbformat versions, JSON that is no notebook; a 50 MB notebook that is nearly
all stored outputs, and one with 60,000 added cells. All of them are graded in one class, on a
two-notebook course, beside three honest students (the model answers, the untouched release, two
known mistakes), with two more students on whom the grader itself fails (faults injected into
staging, and into the verdict job in its worker). The honest students' grades and feedback must be
what they are when graded alone; each malformed notebook is graded by its expected outcome with a
note that names the problem; a fault of the grader is that notebook's note (a failed job is
decided again by nbgrader's autograde), and the run ends non-zero naming exactly those notebooks,
after writing everything else.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from grading_support import (
    RELEASE,
    ROOT,
    SOLUTIONS,
    TESTS,
    assert_outcome,
    entries,
    feedback_text,
    function_score,
    read_entry,
    submission_text,
)
from nbgrader.api import Gradebook

NOTEBOOKS = ("04-scaling", "08-cost")
MALFORMED = entries("malformed")
HONEST = {"alice": None, "bob": None, "carol": ("flops_no_factor_two", "score_stds_divided_by_dk")}
FAULTY = "m-grader-fault"  # staging fails on it
FAULTY_JOB = "m-worker-fault"  # its verdict job raises in its worker
GRADE_ARGS = ("--workers", "2", "--cpu-seconds", "10", "--memory-mb", "1024")

# the class run, with staging made to fail for one student (what a bug in the grader would do)
INJECTED = f"""
import sys
from autograder import grade
from autograder.intake import staging
from autograder.pipeline import grading_run

real = staging.staged_notebook
def staged_notebook(student, assignment, notebook, *workspace):
    if student == {FAULTY!r}:
        raise RuntimeError("a fault injected by the test")
    return real(student, assignment, notebook, *workspace)
staging.staged_notebook = staged_notebook

real_job = grading_run.public_job
def public_job(job, *args):
    if job[0] == {FAULTY_JOB!r}:
        raise RuntimeError("a worker fault injected by the test")
    return real_job(job, *args)
grading_run.public_job = public_job
sys.exit(grade.main(sys.argv[1:]))
"""


def _course(root: Path) -> Path:
    for sub, source in (("solutions", SOLUTIONS), ("notebooks", RELEASE)):
        (root / sub / "attention").mkdir(parents=True)
        for nb in NOTEBOOKS:
            shutil.copy(source / f"{nb}.ipynb", root / sub / "attention")
    return root


def _honest(work: Path) -> None:
    for student, wrong in HONEST.items():
        folder = work / "submitted" / student / "attention"
        folder.mkdir(parents=True)
        for nb in NOTEBOOKS:
            shutil.copy((RELEASE if student == "bob" else SOLUTIONS) / f"{nb}.ipynb", folder)
        for name in wrong or ():
            entry = read_entry(TESTS / "catalogue" / "wrong" / f"{name}.py")
            (folder / f"{entry.notebook}.ipynb").write_text(submission_text(entry))


def _place(work: Path, student: str, notebook: str, data: str | bytes) -> None:
    path = work / "submitted" / student / "attention" / f"{notebook}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))


def _run(course: Path, work: Path, script: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, AUTOGRADER_COURSE=str(course), AUTOGRADER_WORKDIR=str(work))
    cmd = [sys.executable, "-c", script, *GRADE_ARGS] if script else [sys.executable, "-m", "autograder.grade",
                                                                         *GRADE_ARGS]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    """(work folder of the honest students alone, of the whole class, the class run)."""
    course = _course(tmp_path_factory.mktemp("course"))
    alone = tmp_path_factory.mktemp("alone")
    _honest(alone)
    first = _run(course, alone)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    work = tmp_path_factory.mktemp("malformed")
    _honest(work)
    for e in MALFORMED:
        _place(work, e.student, e.notebook, submission_text(e))
    for student in (FAULTY, FAULTY_JOB):
        _place(work, student, "08-cost", (SOLUTIONS / "08-cost.ipynb").read_text())
    return alone, work, _run(course, work, INJECTED)


def _rows(work: Path) -> dict[str, dict[str, str]]:
    with open(work / "grades.csv", newline="") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


def _scores(work: Path, student: str) -> dict[tuple[str, str], float]:
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        sub = gb.find_submission("attention", student)
        return {(nb.name, g.name): g.score for nb in sub.notebooks for g in nb.grades}


def test_the_run_grades_everyone_and_names_only_the_grader_faults(classes):
    _, work, run = classes
    assert run.returncode != 0, "a notebook the grader failed on must make the run fail"
    problems = run.stderr.strip().splitlines()
    named = [ln.strip() for ln in problems if ln.startswith("  ")]
    assert "2 problem(s)" in problems[0] and len(named) == 2, run.stderr[-3000:]
    assert any(FAULTY in ln for ln in named) and any(FAULTY_JOB in ln for ln in named), run.stderr[-3000:]
    assert set(_rows(work)) == set(HONEST) | {e.student for e in MALFORMED} | {FAULTY, FAULTY_JOB}
    summary = (work / "grading-summary.txt").read_text(encoding="utf-8")
    assert "notebooks the grader could not process (scored 0): 2" in summary, summary
    assert f"{FAULTY}/attention/08-cost" in summary and f"{FAULTY_JOB}/attention/08-cost" in summary
    assert (work / "report" / "index.html").is_file() and "report was not written" not in run.stdout


def test_a_failed_job_is_decided_again_by_autograde(classes):
    _, work, _ = classes
    for fn in ("attention_flops", "crossover_length"):
        score, most = function_score(work, FAULTY_JOB, "08-cost", fn)
        assert score == most, fn


def test_a_grader_fault_is_that_notebooks_note(classes):
    _, work, _ = classes
    text = feedback_text(work, FAULTY, "08-cost")
    assert "could not process this notebook while staging it" in text and "injected" in text, text[-2000:]
    assert float(_rows(work)[FAULTY]["score"]) == 0.0


def test_honest_students_are_graded_as_when_alone(classes):
    alone, work, _ = classes
    for student in HONEST:
        assert _rows(work)[student]["score"] == _rows(alone)[student]["score"], student
        assert _scores(work, student) == _scores(alone, student), student
        for nb in NOTEBOOKS:
            assert feedback_text(work, student, nb) == feedback_text(alone, student, nb), (student, nb)
    for nb, fn in (("04-scaling", "score_stds"), ("08-cost", "attention_flops"), ("08-cost", "crossover_length")):
        score, most = function_score(alone, "alice", nb, fn)
        assert score == most > 0, (nb, fn)


@pytest.mark.parametrize("entry", MALFORMED, ids=lambda e: e.path.stem)
def test_malformed_notebook_outcome(classes, entry):
    _, work, _ = classes
    assert_outcome(work, entry)
    page = work / "feedback" / entry.student / "attention" / f"{entry.notebook}.html"
    assert page.is_file() and "\ufffd" not in page.name


def test_big_stored_outputs_are_dropped_and_the_answers_graded(classes):
    _, work, _ = classes
    raw = work / "submitted" / "m-large_stored_outputs" / "attention" / "08-cost.ipynb"
    assert raw.stat().st_size > 50_000_000
    text = feedback_text(work, "m-large_stored_outputs", "08-cost")
    assert "was not read" not in text and "unanswered" not in text, text[-2000:]
    staged = work / ".grading" / "submitted" / "m-large_stored_outputs" / "attention" / "08-cost.ipynb"
    assert staged.stat().st_size < 1_000_000


def test_sixty_thousand_added_cells_cost_what_two_hundred_do(classes):
    """Bounded work, not a timing: the staged notebook keeps 200 added cells (each after its line of
    explanation), and the feedback page is the size of an ordinary one."""
    _, work, _ = classes
    release = nbformat.read(RELEASE / "08-cost.ipynb", as_version=4)
    staged = nbformat.read(work / ".grading" / "submitted" / "m-many_added_cells" / "attention" / "08-cost.ipynb",
                           as_version=4)
    added = [c for c in staged.cells if c.metadata.get("selfattn_added") == "cell"]
    assert len(added) == 200 and len(staged.cells) == len(release.cells) + 2 * 200
    page = work / "feedback" / "m-many_added_cells" / "attention" / "08-cost.html"
    ordinary = work / "feedback" / "alice" / "attention" / "08-cost.html"
    assert page.stat().st_size < ordinary.stat().st_size + 1_000_000, page.stat().st_size
    assert "59800 more cell(s) you added are not shown" in feedback_text(work, "m-many_added_cells", "08-cost")


def test_every_verdict_and_staged_notebook_is_valid_utf8_json(classes):
    _, work, _ = classes
    grading = work / ".grading"
    for path in [*(grading / "verdicts").rglob("*.json"), *(grading / "submitted").rglob("*.ipynb")]:
        json.loads(path.read_bytes().decode("utf-8"))


# ---------------------------------------------------------------------------------------------
# reading without the outputs, and the student's warning before hand-in


def test_outputs_are_cut_from_the_bytes_and_nothing_else():
    from autograder.intake.stored_outputs import without_outputs

    nb = json.loads((SOLUTIONS / "08-cost.ipynb").read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ['"outputs": [1] ]}\n'] * 50}]
    nb["cells"][0]["source"] = 'a source that says "outputs": [1, 2] and ["]'
    nb["cells"][0]["metadata"]["outputs"] = [1, 2]  # not a code cell's outputs: kept
    raw = json.dumps(nb, indent=1).encode()
    kept, dropped = without_outputs(raw)
    assert dropped > 0 and len(kept) == len(raw) - dropped
    back = json.loads(kept)
    assert [c.get("outputs") for c in back["cells"]] == [[] if "outputs" in c else None for c in nb["cells"]]
    assert [c["source"] for c in back["cells"]] == [c["source"] for c in nb["cells"]]
    assert back["cells"][0]["metadata"]["outputs"] == [1, 2]


def test_a_flood_of_brackets_is_refused_after_bounded_work():
    from autograder.intake.stored_outputs import MAX_TOKENS, TooIntricate, without_outputs

    flood = b'{"cells": [{"cell_type": "code", "outputs": [' + b"[]," * MAX_TOKENS + b"[]]}]}"
    with pytest.raises(TooIntricate, match="more than"):
        without_outputs(flood)


def test_hand_in_warns_in_one_line_about_a_notebook_grading_would_not_read(tmp_path):
    # the bundle's scripts beside each other, as make student lays them out
    from student_support import lay_out_scripts

    from autograder.intake.stored_outputs import MAX_KEPT_BYTES

    lay_out_scripts(tmp_path)
    folder = tmp_path / "notebooks" / "attention"
    folder.mkdir(parents=True)
    nb = json.loads((SOLUTIONS / "08-cost.ipynb").read_text())
    plots = dict(nb, cells=[dict(c, outputs=[{"output_type": "stream", "name": "stdout",
                                              "text": ["x" * 1000 + "\n"] * 5000}]) if c["cell_type"] == "code"
                            else c for c in nb["cells"]])
    (folder / "08-cost.ipynb").write_text(json.dumps(plots))  # big, nearly all outputs: no warning
    pasted = dict(nb, metadata=dict(nb["metadata"], pasted="A" * (MAX_KEPT_BYTES + 1)))
    (folder / "04-scaling.ipynb").write_text(json.dumps(pasted))
    run = subprocess.run([sys.executable, "hand_in.py", "--no-validate", "ada"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    warnings = [ln for ln in run.stdout.splitlines() if "WARNING" in ln]
    assert len(warnings) == 1 and "04-scaling.ipynb" in warnings[0] and "without its outputs" in warnings[0], run.stdout
    assert (folder / "08-cost.ipynb").stat().st_size > 30_000_000
