"""The edges nbgrader and Slurm start read the run's workspace, not the process's default one: a run
on a second workspace gets its own exercise labels on the feedback page, its own Slurm log folder,
its own ``grades.csv`` and its own course's site address."""

from __future__ import annotations

import shutil

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from traitlets import Instance
from traitlets.config import Configurable

from autograder.workspace import ROOT, Workspace

NB = "03-softmax-attention"


class App(Configurable):
    """What the edges read of the nbgrader app that starts them (their ``parent``)."""

    from nbgrader.coursedir import CourseDirectory

    coursedir = Instance(CourseDirectory)


def _app(ws: Workspace) -> App:
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_ext.course_folders import course_directory

    return App(coursedir=CourseDirectory(**course_directory(ws)))


@pytest.fixture()
def two(tmp_path) -> tuple[Workspace, Workspace]:
    """The repository's course, and a second course whose ``softmax-public`` cell checks nothing
    (its label is then its grade id) and whose site address is set."""
    other = tmp_path / "course"
    (other / "solutions" / "attention").mkdir(parents=True)
    nb = nbformat.read(ROOT / "solutions" / "attention" / f"{NB}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax-public"]
    cell.source = "pass"
    nbformat.write(nb, other / "solutions" / "attention" / f"{NB}.ipynb")
    shutil.copy(ROOT / "_config.yml", other / "_config.yml")
    text = (other / "_config.yml").read_text()
    (other / "_config.yml").write_text(text.replace("self-attention-course.example.invalid", "uni-course.edu"))
    return Workspace(tmp_path / "work-one", ROOT), Workspace(tmp_path / "work-two", other)


def test_the_feedback_page_labels_exercises_from_the_runs_course(two):
    from autograder.nbgrader_ext.feedback_html import OfflineFeedbackExporter, annotate

    for ws, label in zip(two, ("softmax: public checks", "softmax-public"), strict=True):
        exporter = OfflineFeedbackExporter(parent=_app(ws))
        assert exporter.course_of_run() == ws.course
        nb = new_notebook(cells=[new_code_cell("x", metadata={"nbgrader": {"grade_id": "softmax-public"}})])
        annotate(nb, {"nbgrader": {"assignment": "attention", "notebook": NB}}, course=exporter.course_of_run())
        assert nb.cells[0].metadata.nbgrader.get("exercise") == label, ws.course
    assert OfflineFeedbackExporter().course_of_run() is None  # outside nbgrader: no labels, no guess
    by_hand = _app(two[1])
    by_hand.coursedir.autograded_directory = "/elsewhere"  # not a course's work folder (nbgrader's own tests)
    assert OfflineFeedbackExporter(parent=by_hand).course_of_run() is None


def test_slurm_job_logs_go_to_the_runs_work_folder(two, tmp_path):
    import dask.config

    from autograder.pipeline.slurm_cluster import _options

    for ws in two:
        with dask.config.set({"jobqueue.slurm": {}}):
            assert _options(tmp_path, ws)["log_directory"] == str(ws.grading / "slurm-logs")
        with dask.config.set({"jobqueue.slurm": {"log-directory": "/configured"}}):
            assert _options(tmp_path, ws)["log_directory"] == "/configured"


def test_nbgrader_export_writes_the_runs_grades_csv(two):
    from autograder.errors import RefusedInput
    from autograder.outputs.csv_export import QuotedCsvExportPlugin

    for ws in two:
        assert QuotedCsvExportPlugin(parent=_app(ws)).to == str(ws.grades_csv)
    with pytest.raises(RefusedInput, match="no --to and no nbgrader app"):
        _ = QuotedCsvExportPlugin().to


def test_the_site_address_check_reads_the_course_of_the_run(two, monkeypatch, capsys):
    from autograder.course import site_address

    mine, theirs = two
    monkeypatch.setenv("AUTOGRADER_COURSE", str(theirs.course))
    assert site_address.main(["--strict"]) == 0  # the second course's address is set
    monkeypatch.setenv("AUTOGRADER_COURSE", str(mine.course))
    assert site_address.main(["--strict"]) == 1
    assert "example.invalid" in capsys.readouterr().err


def test_nothing_in_the_grader_reads_the_default_workspace_constants():
    """``autograder.paths`` (the process's default workspace at import) is for tests and interactive
    use: no module of the grader, nor a script of the repository, imports it."""
    import ast

    readers = []
    for path in sorted([*(ROOT / "autograder").rglob("*.py"), *(ROOT / "scripts").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "autograder.paths" or n.startswith("autograder.paths.") for n in names):
                readers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not readers, f"the default workspace read at import in {readers}"
