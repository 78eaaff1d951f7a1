"""What make grade leaves out to reach its cost floor changes no grade and no feedback page.

A small class (a right answer, a named mistake, a blank notebook, in two notebooks) is graded by
``make grade``, which uses every saving of :mod:`tests.test_grading_cost` (nbconvert validating once,
no second staging, a step of one group in-process, nbgrader's tables made only when missing). A copy
of the graded work folder is then autograded and given feedback again by nbgrader the way it runs
without them (every notebook validated after each preprocessor, every submission staged again, a
table check per table on every Gradebook, a query per cell and a commit per score), and exported:
every autograded notebook and feedback page is the same bytes and grades.csv holds the same rows
(nbgrader orders them as its workers first met each student)."""

from __future__ import annotations

import shutil
from pathlib import Path

from grading_support import RELEASE, ROOT, SOLUTIONS, entries, grade, place, submission_text
from traitlets.config import Config

NOTEBOOKS = ("03-softmax-attention", "07-masking")


def _class(work: Path) -> None:
    for nb in NOTEBOOKS:
        place(work, "ada", nb, (SOLUTIONS / f"{nb}.ipynb").read_text())
        wrong = next(e for e in entries("catalogue/wrong") if e.notebook == nb and e.kind == "cell")
        place(work, "ben", nb, submission_text(wrong))
        place(work, "cy", nb, (RELEASE / f"{nb}.ipynb").read_text())


def _pages(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted((work / "feedback").rglob("*.html"))}


def _autograded(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted((work / "autograded").rglob("*.ipynb"))}


def _rows(work: Path) -> list[str]:
    lines = (work / "grades.csv").read_text(encoding="utf-8").splitlines()
    return [lines[0], *sorted(lines[1:])]


def _regrade_without_savings(work: Path, monkeypatch) -> None:
    """nbgrader's autograde and generate_feedback of every student of ``work`` in this process,
    without the savings, then nbgrader's export."""
    from nbgrader.api import Base
    from sqlalchemy import MetaData

    from autograder.nbgrader_ext import gradebook_engine, steps
    from autograder.workspace import Workspace

    # nbgrader's own create_all (a check per table), whenever nbgrader_config.py installs ours
    monkeypatch.setattr(gradebook_engine, "create_missing_tables",
                        lambda bind, tables=None, checkfirst=True: MetaData.create_all(
                            Base.metadata, bind=bind, tables=tables, checkfirst=checkfirst))
    monkeypatch.setenv("AUTOGRADER_WORKDIR", str(work))
    ws = Workspace(work=work, course=ROOT)
    plain = Config({"Exporter": {"optimistic_validation": False}, "AutogradeStaging": {"restage": True},
                    "PreloadedRows": {"preload": False}})
    students = sorted(p.name for p in (work / "submitted").iterdir())
    for step in ("autograde", "generate_feedback"):
        assert steps._run_step_group((step, "attention", students, plain, ws)) == []
    steps.export(ws=ws)


def test_the_savings_change_no_grade_and_no_feedback_byte(tmp_path, monkeypatch):
    work = tmp_path / "work"
    _class(work)
    run = grade(work, "--workers", "2")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    pages, rows, autograded = _pages(work), _rows(work), _autograded(work)
    assert len(pages) == 3 * len(NOTEBOOKS)
    assert len({r.split(",")[7] for r in rows[1:]}) == 3, rows  # three different raw scores: a real class

    again = tmp_path / "again"
    shutil.copytree(work, again, symlinks=True)
    for folder in ("autograded", "feedback"):
        shutil.rmtree(again / folder)
    (again / "grades.csv").unlink()
    _regrade_without_savings(again, monkeypatch)
    assert len(autograded) == len(pages)
    assert _autograded(again) == autograded, sorted(k for k in autograded if _autograded(again).get(k) != autograded[k])
    assert _pages(again) == pages, sorted(k for k in pages if _pages(again).get(k) != pages[k])
    assert _rows(again) == rows
