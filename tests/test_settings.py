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
    notebook again, because only a setting changed; a run with unchanged settings grades nothing.
    Read from the data: the verdict file, the run's timings.json and the verdict's freshness."""
    from autograder.sandbox import Limits
    from autograder.verdicts.decide import freshness
    from autograder.workspace import Workspace

    raw = (SOLUTIONS / "08-cost.ipynb").read_text()
    place(tmp_path, "looper", "08-cost", with_answers(raw, {"attention_flops": LOOP}))
    verdict_file = tmp_path / ".grading" / "verdicts" / "looper" / "attention" / "08-cost.json"

    def run(*flags: str) -> int:
        """Grade the class; the number of notebooks this run decided."""
        result = grade(tmp_path, "--workers", "1", *flags)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        return json.loads((tmp_path / ".grading" / "timings.json").read_text())["notebooks"]

    def state(cpu_seconds: int) -> str:
        limits = Limits(**{**json.loads(verdict_file.read_text())["settings"]["limits"], "cpu_seconds": cpu_seconds})
        return freshness("looper", "attention", "08-cost", limits=limits, ws=Workspace(work=tmp_path, course=ROOT))

    assert run("--cpu-seconds", "1") == 1
    verdict = json.loads(verdict_file.read_text())
    assert verdict["settings"]["limits"]["cpu_seconds"] == 1
    timed_out = {cid: f["kind"] for cid, f in verdict["checks"].items() if cid.startswith("attention_flops/")}
    assert timed_out and set(timed_out.values()) <= {"TIME_OUT", "NOT_ANSWERED"} and "TIME_OUT" in timed_out.values()
    decided = verdict_file.read_bytes()
    assert (state(1), state(2)) == ("fresh", "settings")
    assert run("--cpu-seconds", "1") == 0 and verdict_file.read_bytes() == decided
    assert run("--cpu-seconds", "2") == 1
    verdict = json.loads(verdict_file.read_text())
    assert verdict["settings"]["limits"]["cpu_seconds"] == 2 and state(2) == "fresh"
