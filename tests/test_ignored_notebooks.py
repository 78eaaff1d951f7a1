"""A notebook handed in that grading does not read (renamed, JupyterLab's ``…-Copy1``, extra) is named
in the run's summary, one line each (issue 53): work handed in under another name is never lost
without a word to the instructor.

Staging (:func:`autograder.pipeline.grading_run.stage_all`) runs on a course of one notebook and one
student whose folder holds the course's notebook, a duplicate of it, a renamed one and a scratch
notebook; the summary it fills is read as ``grading-summary.txt`` writes it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grading_support import RELEASE, SOLUTIONS

from autograder import settings
from autograder.intake.ignored_notebooks import ignored_notebooks
from autograder.pipeline.grading_run import stage_all
from autograder.reporting.run_summary import Summary
from autograder.workspace import Workspace

NOTEBOOK = "08-cost"


def _course(root: Path) -> Path:
    for sub, source in (("solutions", SOLUTIONS), ("notebooks", RELEASE)):
        (root / sub / "attention").mkdir(parents=True)
        shutil.copy(source / f"{NOTEBOOK}.ipynb", root / sub / "attention")
    return root


def test_the_summary_names_each_notebook_grading_ignored(tmp_path):
    ws = Workspace(tmp_path / "work", _course(tmp_path / "course"))
    folder = ws.submission("ada", "attention")
    folder.mkdir(parents=True)
    for name in (f"{NOTEBOOK}.ipynb", f"{NOTEBOOK}-Copy1.ipynb", "08-Cost.ipynb", "scratch.ipynb"):
        shutil.copy(SOLUTIONS / f"{NOTEBOOK}.ipynb", folder / name)
    (folder / "notes.txt").write_text("not a notebook")
    (folder / ".ipynb_checkpoints").mkdir()
    summary = Summary()
    jobs, _ = stage_all([("ada", "attention")], False, settings.Settings().limits, summary, ws)
    assert [job[:3] for job in jobs] == [("ada", "attention", NOTEBOOK)]
    lines = summary.lines()
    head = next(i for i, ln in enumerate(lines) if "notebooks handed in that are not the course's" in ln)
    assert lines[head].split("(")[1].startswith("renamed, a copy, extra: not graded): 3"), lines[head]
    assert lines[head + 1:head + 4] == [
        f"    - ada/attention/08-Cost.ipynb: not a notebook of the course (renamed from {NOTEBOOK}.ipynb?): only "
        f"{NOTEBOOK}.ipynb is graded",
        f"    - ada/attention/{NOTEBOOK}-Copy1.ipynb: a copy of {NOTEBOOK}.ipynb (JupyterLab's Duplicate) is not "
        f"graded: only {NOTEBOOK}.ipynb is",
        "    - ada/attention/scratch.ipynb: not a notebook of the course, so it is not graded"], lines[head:head + 4]


def test_a_name_is_shown_safely_and_a_folder_that_cannot_be_listed_names_nothing(tmp_path):
    (tmp_path / "x\x1b[31m\u202e.ipynb").write_text("{}")
    assert ignored_notebooks(tmp_path, ["08-cost"]) == [
        "x\\x1b[31m\\u202e.ipynb: not a notebook of the course, so it is not graded"]
    assert ignored_notebooks(tmp_path / "absent", ["08-cost"]) == []
