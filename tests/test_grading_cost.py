"""What grading does not pay twice (issue 28, grading at its cost floor): nbconvert validates each
notebook once, make grade's autograde does not stage again what the run just staged, and a step of
one group of students runs in this process instead of a pool started for it. That none of this
changes a grade or a feedback page is ``tests/test_grading_cost_identical.py``."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config import Config

from autograder.nbgrader_ext import plugins, steps
from autograder.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]


def test_the_course_configuration_validates_a_converted_notebook_once(monkeypatch):
    from nbconvert.exporters import NotebookExporter

    config = steps.load_config()
    assert config.Exporter.optimistic_validation is True
    calls = []
    real = NotebookExporter._validate_preprocessor
    monkeypatch.setattr(NotebookExporter, "_validate_preprocessor",
                        lambda self, nb, pre: (calls.append(pre), real(self, nb, pre))[1])
    exporter = NotebookExporter(config=config)
    exporter.register_preprocessor("nbconvert.preprocessors.ClearOutputPreprocessor", enabled=True)
    exporter.register_preprocessor("nbconvert.preprocessors.ClearMetadataPreprocessor", enabled=True)
    exporter.from_notebook_node(new_notebook(cells=[new_code_cell("1 + 1")]))
    assert len(calls) == 1, f"validated {len(calls)} times"


def test_an_invalid_notebook_is_still_refused_after_the_last_preprocessor():
    from nbconvert.exporters import NotebookExporter

    exporter = NotebookExporter(config=steps.load_config())
    nb = new_notebook(cells=[new_code_cell("1 + 1")])
    nb.cells[0]["execution_count"] = "not a number"
    try:
        exporter.from_notebook_node(nb)
    except nbformat.ValidationError:
        return
    raise AssertionError("an invalid notebook was converted")


def _workspace_with(tmp_path: Path, students: list[str]) -> Workspace:
    for s in students:
        (tmp_path / "submitted" / s / "attention").mkdir(parents=True)
    return Workspace(work=tmp_path, course=ROOT)


def test_autograde_stages_what_it_was_asked_for_unless_make_grade_just_did(tmp_path, monkeypatch):
    ws = _workspace_with(tmp_path, ["ada", "ben"])
    staged = []
    monkeypatch.setattr(plugins, "_restage", lambda s, a, ws: staged.append((s, a)))
    assert plugins._stage_requested("attention", "*", ws) == [("ada", "attention"), ("ben", "attention")]
    assert staged == [("ada", "attention"), ("ben", "attention")]
    staged.clear()
    assert plugins._stage_requested("attention", "ada", ws, restage=False) == [("ada", "attention")]
    assert staged == []


def test_make_grade_s_autograde_is_configured_not_to_stage_again_and_keeps_the_run_s_settings():
    overrides = Config({"GradingSettings": {"cpu_seconds": 7}})
    config = steps.already_staged(overrides)
    assert plugins.AutogradeStaging(config=config).restage is False
    assert config.GradingSettings.cpu_seconds == 7
    assert "AutogradeStaging" not in overrides  # the run's own overrides are left as they were
    assert plugins.AutogradeStaging(config=steps.load_config()).restage is True  # nbgrader's CLI, formgrader


def test_a_step_of_one_group_runs_in_this_process_and_two_groups_in_a_pool(monkeypatch):
    ran = []

    def record(args):
        ran.append((os.getpid(), tuple(args[2])))
        return []

    monkeypatch.setattr(steps, "_run_step_group", record)
    ws = Workspace(work=Path("/nonexistent-work"), course=ROOT)
    assert steps.run_step("autograde", "attention", ["ada"], 2, print, ws=ws) == []
    assert ran == [(os.getpid(), ("ada",))]
    assert steps.run_step("autograde", "attention", ["ada", "ben"], 1, print, ws=ws) == []
    assert ran[-1] == (os.getpid(), ("ada", "ben"))


def test_the_grader_walks_its_import_graph_once_per_process():
    """Importing the decision (every make grade, pool worker and formgrader does) reads the
    grader's import graph once, though the check modules and the verdict key both need it."""
    import subprocess
    import sys

    code = ("import autograder.verdicts.decide as d; info = d.imported_modules.cache_info(); "
            "print(info.misses, info.hits)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    misses, hits = map(int, out.stdout.split())
    assert (misses, hits) == (1, 1), out.stdout
