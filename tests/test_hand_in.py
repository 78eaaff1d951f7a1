"""hand_in.py as a student meets it: a login grading would refuse is refused at once, with one
line; each failing notebook is named with one line saying why, and its verdict is the one
``nbgrader validate`` gives (which runs every cell, widgets included)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from student_support import hand_in_module, unpacked_course

import autograder.intake.scan
import autograder.intake.untrusted
from autograder.course import ids

ROOT = Path(__file__).resolve().parent.parent
NBGRADER = Path(sys.executable).parent / "nbgrader"
#: one line of hand_in.py's report: verdict, notebook, reason
VERDICT = re.compile(r"^(ok  |FAIL) notebooks/attention/(\S+)\.ipynb(?:: (.*))?$", re.M)


@pytest.fixture(scope="module")
def course(student_bundle, tmp_path_factory) -> Path:
    return unpacked_course(student_bundle, tmp_path_factory)


def _hand_in(course: Path, *args: str, kernels: bool = False) -> subprocess.CompletedProcess:
    env = os.environ | ({"HAND_IN_KERNELS": "1"} if kernels else {})
    return subprocess.run([sys.executable, "hand_in.py", *args], cwd=course, capture_output=True, text=True,
                          timeout=900, env=env)


@pytest.mark.parametrize("login", ["..", "../ada", "ada/../../x", "-ada", ".ada", "ada lovelace", "ädä",
                                   "a" * 65, "ada\\x", ""])
def test_a_login_grading_refuses_is_refused_with_one_line(course, login):
    before = set(course.parent.rglob("*.zip"))
    run = _hand_in(course, "--no-validate", login)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and repr(login) in lines[0] and "letters, digits" in lines[0], run.stderr
    assert set(course.parent.rglob("*.zip")) == before, "an archive was written for a refused login"


def test_an_accepted_login_gives_the_layout_grading_reads(course):
    run = _hand_in(course, "--no-validate", "ada.l-2")
    assert run.returncode == 0, run.stderr
    names = zipfile.ZipFile(course / "ada.l-2.zip").namelist()
    assert len(names) == 9 and all(re.fullmatch(r"ada\.l-2/attention/[0-9][^/]*\.ipynb", n) for n in names), names
    (course / "ada.l-2.zip").unlink()


def test_work_in_a_renamed_or_duplicated_notebook_is_named_and_only_the_courses_notebooks_are_packed(
        course, tmp_path):
    """JupyterLab's duplicate and a renamed notebook, which grading would not read, are each a FAIL line
    saying where the work is and what to do; the archive holds the course's notebooks only."""
    alone = tmp_path / "course"
    shutil.copytree(course, alone, ignore=shutil.ignore_patterns("*.zip", ".venv"))
    folder = alone / "notebooks" / "attention"
    shutil.copy(folder / "04-scaling.ipynb", folder / "04-scaling-Copy1.ipynb")
    (folder / "02-queries-keys-values.ipynb").rename(folder / "my answers.ipynb")
    run = _hand_in(alone, "--no-validate", "ada")
    assert run.returncode == 0, run.stderr
    assert ("FAIL notebooks/attention/02-queries-keys-values.ipynb: missing, so nothing of it is handed in; "
            "its cells are in notebooks/attention/my answers.ipynb: rename that file back") in run.stdout, run.stdout
    assert ("FAIL notebooks/attention/04-scaling-Copy1.ipynb: not a course notebook, so it is not handed in; it "
            "holds cells of notebooks/attention/04-scaling.ipynb") in run.stdout, run.stdout
    names = zipfile.ZipFile(alone / "ada.zip").namelist()
    assert len(names) == 8 and not any("Copy1" in n or "my answers" in n for n in names), names


def test_the_bundle_carries_the_graders_own_rule(course):
    assert (course / "ids.py").read_bytes() == (ROOT / "autograder" / "course" / "ids.py").read_bytes()
    assert autograder.intake.scan.id_problem is ids.id_problem is autograder.intake.untrusted.id_problem


HAND_IN = hand_in_module("student_hand_in")


@given(st.text(alphabet=st.sampled_from("aZ09._-/\\ .:é\n"), max_size=70) | st.text(max_size=70))
def test_hand_in_and_the_grader_accept_the_same_logins(login):
    assert (HAND_IN.ids.id_problem(login) is None) == (autograder.intake.untrusted.id_problem(login) is None)


def _answers(notebook: str) -> dict[str, str]:
    source = nbformat.read(ROOT / "solutions" / "attention" / f"{notebook}.ipynb", as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
            if c.metadata.get("nbgrader", {}).get("solution")}


def _write(course: Path, notebook: str, answers: dict[str, str], edit=None) -> Path:
    path = course / "notebooks" / "attention" / f"{notebook}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and gid in answers:
            cell.source = answers[gid]
        if edit is not None:
            edit(cell)
    nbformat.write(nb, path)
    return path


def test_each_failing_notebook_is_named_with_its_reason_as_nbgrader_validate_judges(course):
    _write(course, "03-softmax-attention", _answers("03-softmax-attention"))  # all correct
    nan_mask = "def causal_mask(T):\n    return np.triu(np.ones((T, T)), k=1) * -np.inf\n"
    _write(course, "07-masking", _answers("07-masking") | {"causal_mask": nan_mask})

    def fewer_trials(cell):  # an edit of the read-only widget cell, which validating does not run
        if cell.source.strip() == "demos.saturation()":
            cell.source = "demos.saturation(trials=10)"

    _write(course, "05-saturation", _answers("05-saturation"), fewer_trials)
    # a cell that ends the process: that notebook fails, the others are still validated
    _write(course, "04-scaling", _answers("04-scaling") | {"score_stds": "import os\nos._exit(3)\n"})
    # the right function in a cell added below the stub: graded as unanswered, so it fails here too
    added = _answers("06-equivariance")["permutation_matrix"]
    path = course / "notebooks" / "attention" / "06-equivariance.ipynb"
    nb = nbformat.read(path, as_version=4)
    at = next(i for i, c in enumerate(nb.cells)
              if c.metadata.get("nbgrader", {}).get("grade_id") == "permutation_matrix")
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(added))
    nbformat.write(nb, path)
    verdicts = {}
    for kernels in (False, True):  # forked from hand_in.py (Linux), and in Jupyter kernels (elsewhere)
        run = _hand_in(course, "ada", kernels=kernels)
        assert run.returncode == 0, run.stderr[-3000:]
        verdicts[kernels] = {m.group(2): (m.group(1), m.group(3)) for m in VERDICT.finditer(run.stdout)}
        assert len(verdicts[kernels]) == 9, run.stdout
        assert all(len(line) < 400 for line in run.stdout.splitlines())
    assert verdicts[True]["04-scaling"][0] == verdicts[False]["04-scaling"][0] == "FAIL", verdicts
    del verdicts[True]["04-scaling"], verdicts[False]["04-scaling"]  # the same verdict, told differently
    assert verdicts[False] == verdicts[True]
    verdicts = verdicts[False]
    assert verdicts["03-softmax-attention"] == ("ok  ", None), verdicts
    status, why = verdicts["07-masking"]
    assert status == "FAIL" and "np.where(condition, -np.inf, 0.0)" in why, verdicts
    assert verdicts["05-saturation"] == ("FAIL", "a read-only cell was edited: get a fresh copy of the notebook "
                                                 "and paste your answers in"), verdicts
    status, why = verdicts["01-embeddings"]
    assert status == "FAIL" and why.startswith("embed is not written yet"), verdicts
    status, why = verdicts["06-equivariance"]
    assert status == "FAIL" and "YOUR CODE HERE" in why, verdicts
    # the same verdicts as nbgrader validate, which runs every cell (widgets too) in its own process
    for notebook in ("03-softmax-attention", "07-masking", "05-saturation", "01-embeddings", "06-equivariance"):
        path = course / "notebooks" / "attention" / f"{notebook}.ipynb"
        plain = subprocess.run([str(NBGRADER), "validate", str(path)], capture_output=True, text=True, cwd=course,
                               timeout=600)
        assert ("Success!" in plain.stdout) == (verdicts[notebook][0] == "ok  "), (notebook, plain.stdout[-2000:])
        if notebook == "05-saturation":
            assert "HAVE CHANGED" in plain.stdout, plain.stdout[-2000:]
        if notebook == "07-masking":
            assert "np.where(condition, -np.inf, 0.0)" in " ".join(plain.stdout.split()), plain.stdout[-2000:]


def test_run_by_another_python_the_courses_environment_validates(course, tmp_path):
    """``python3 hand_in.py`` (not .venv's python, which has nbgrader) still validates."""
    system = "/usr/bin/python3"
    assert Path(system).exists(), "needs the system's python3"
    probe = subprocess.run([system, "-c", "import nbgrader"], capture_output=True)
    assert probe.returncode != 0, "the system's python3 has nbgrader: this test needs one without"
    alone = tmp_path / "course"
    shutil.copytree(course, alone, ignore=shutil.ignore_patterns("*.zip", ".venv"))
    for path in (alone / "notebooks" / "attention").glob("*.ipynb"):
        if not path.name.startswith("01-"):
            path.unlink()
    (alone / ".venv").symlink_to(Path(sys.executable).parent.parent)  # this test's environment as the course's
    run = subprocess.run([system, "hand_in.py", "ada"], cwd=alone, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "FAIL notebooks/attention/01-embeddings.ipynb: embed is not written yet" in run.stdout, run.stdout


def test_hand_in_names_the_unanswered_question_every_failing_cell_and_a_name_grading_lacks(course, tmp_path):
    """The unanswered written question and each further failing cell are named; and an answer
    using a name only a kernel has (help, input, ...) or reading stdin fails at hand-in, at once,
    with the line the notebook's check and the feedback give (tests/agreement/softmax_calls_*.py)."""
    from selfattn.checks.calling import PERSON_NAMES

    alone = tmp_path / "course"
    shutil.copytree(course, alone, ignore=shutil.ignore_patterns("*.zip", ".venv"))
    # every notebook found is validated here, the course's or not (the bundle's list would pack only
    # the course's: tests/test_hand_in_list.py)
    (alone / "notebooks.json").unlink()
    for path in (alone / "notebooks" / "attention").glob("*.ipynb"):
        if not path.name.startswith(("02-", "04-")):
            path.unlink()
    # the written answer as released (the module's course may hold an answer an earlier test wrote)
    released = nbformat.read(ROOT / "notebooks" / "attention" / "04-scaling.ipynb", as_version=4)
    stub = next(c.source for c in released.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "variance-derivation")
    _write(alone, "04-scaling", _answers("04-scaling") | {"variance-derivation": stub})
    answers = _answers("03-softmax-attention")
    stems = [f"softmax_calls_{name}" for name in PERSON_NAMES] + ["softmax_reads_stdin"]
    released = course / "notebooks" / "attention" / "03-softmax-attention.ipynb"  # every answer cell is set below
    for stem in stems:
        entry = (ROOT / "tests" / "agreement" / f"{stem}.py").read_text()
        answer = "".join(ln + "\n" for ln in entry.splitlines() if not ln.startswith("# "))
        (alone / "notebooks" / stem).mkdir()
        shutil.copy(released, alone / "notebooks" / stem / released.name)
        path = alone / "notebooks" / stem / released.name
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.metadata.get("nbgrader", {}).get("solution") and gid in answers:
                cell.source = answer if gid == "softmax" else answers[gid]
        nbformat.write(nb, path)
    run = subprocess.run([sys.executable, "hand_in.py", "ada"], cwd=alone, capture_output=True, text=True,
                         timeout=900, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = {m.group(1): m.group(2) for m in re.finditer(r"^FAIL notebooks/(\S+)\.ipynb: (.*)$", run.stdout, re.M)}
    assert "attention/04-scaling" in lines, run.stdout
    assert lines["attention/04-scaling"] == ("You did not provide a response to variance-derivation "
                                             "(Question: derive the variance)."), run.stdout
    assert lines["attention/02-queries-keys-values"].startswith("project is not written yet"), run.stdout
    assert lines["attention/02-queries-keys-values"].endswith(
        "(also failing: shape_answers-public, why-separate-projections (Question: why separate "
        "$\\mathbf{W}_Q$ and $\\mathbf{W}_K$?))"), \
        run.stdout
    for stem in stems:
        message = next(ln for ln in (ROOT / "tests" / "agreement" / f"{stem}.py").read_text().splitlines()
                       if ln.startswith("# message:")).removeprefix("# message:").strip()
        assert message in lines.get(f"{stem}/03-softmax-attention", ""), (stem, run.stdout)
    assert "took over" not in run.stdout and "ended without an answer" not in run.stdout, run.stdout


def test_an_answer_cell_with_a_syntax_error_is_named_with_its_line_not_the_checks_name_error(course, tmp_path):
    """As the grader's feedback does: the answer cell and its line, then what failed after it."""
    alone = tmp_path / "course"
    shutil.copytree(course, alone, ignore=shutil.ignore_patterns("*.zip", ".venv"))
    for path in (alone / "notebooks" / "attention").glob("*.ipynb"):
        if not path.name.startswith("03-"):
            path.unlink()
    answers = _answers("03-softmax-attention")
    _write(alone, "03-softmax-attention", answers | {"softmax": "def softmax(S, axis=-1):\n    e = np.exp(S\n"
                                                                "    return e / e.sum(axis=axis, keepdims=True)\n"})
    run = _hand_in(alone, "ada")
    assert run.returncode == 0, run.stderr[-3000:]
    line = next((m for m in VERDICT.finditer(run.stdout) if m.group(2) == "03-softmax-attention"), None)
    assert line is not None and line.group(1) == "FAIL", run.stdout
    assert line.group(3).startswith("the cell of softmax raised SyntaxError: "), line.group(3)
    assert "(line 2)" in line.group(3) and "(then: " in line.group(3), line.group(3)
