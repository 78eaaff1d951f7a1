"""Grading settings: nbgrader's generate_config lists them, and a verdict decided under other
settings is stale (the chain itself: test_settings_chain.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from grading_support import ROOT, SOLUTIONS, grade, help_lines_shown, place, with_answers

LOOP = "def attention_flops(T, d):\n    while True:\n        pass\n"


def test_nbgrader_generate_config_lists_the_grading_settings_with_their_help(tmp_path):
    """nbgrader's own command, run the documented way (``./nbgrader``), writes c.GradingSettings too."""
    target, empty = tmp_path / "generated_config.py", tmp_path / "no-user-config"
    empty.mkdir()
    made = subprocess.run([sys.executable, "-m", "autograder.nbgrader_ext.cli", "generate_config",
                           f"--GenerateConfigApp.filename={target}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "JUPYTER_CONFIG_DIR": str(empty)})
    assert made.returncode == 0, made.stdout + made.stderr
    generated = target.read_text()
    assert "# c.CourseDirectory.root = " in generated  # nbgrader's own options are still all there
    help_lines_shown(generated)


def test_a_changed_limit_grades_again_what_it_affects(tmp_path):
    """A time-out under a 1 s CPU limit says nothing about a 2 s one: the next run grades that
    notebook again and says why; a run with unchanged settings grades nothing."""
    raw = (SOLUTIONS / "08-cost.ipynb").read_text()
    place(tmp_path, "looper", "08-cost", with_answers(raw, {"attention_flops": LOOP}))

    def run(*flags: str) -> str:
        result = grade(tmp_path, "--workers", "1", *flags)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        return (tmp_path / "grading-summary.txt").read_text()

    first = run("--cpu-seconds", "1")
    assert "notebooks graded now: 1," in first and "CPU 1 s" in first
    verdict = json.loads((tmp_path / ".grading" / "verdicts" / "looper" / "attention" / "08-cost.json").read_text())
    assert verdict["settings"]["limits"]["cpu_seconds"] == 1
    assert any("CPU time" in ln for ln in verdict["cells"]["attention_flops-public"]["lines"])
    again = run("--cpu-seconds", "1")
    assert "notebooks graded now: 0," in again and "made stale by a changed grading setting" not in again
    raised = run("--cpu-seconds", "2")
    assert "notebooks graded now: 1," in raised
    assert "verdicts made stale by a changed grading setting (graded again): 1" in raised
    verdict = json.loads((tmp_path / ".grading" / "verdicts" / "looper" / "attention" / "08-cost.json").read_text())
    assert verdict["settings"]["limits"]["cpu_seconds"] == 2
