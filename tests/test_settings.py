"""Grading settings: one chain (nbgrader's configuration, then make grade's flags), and a verdict
decided under other settings is stale."""

from __future__ import annotations

import json

from grading_support import SOLUTIONS, grade, place, with_answers
from traitlets.config import Config

from autograder import settings

LOOP = "def attention_flops(T, d):\n    while True:\n        pass\n"


def test_the_configuration_chain_sets_the_limits_and_flags_win(monkeypatch):
    monkeypatch.setenv(settings.OVERRIDES, "")  # hand_down below writes it; the test ends with it unset
    config = Config({"GradingSettings": {"cpu_seconds": 7, "memory_mb": 512}})
    assert settings.configured_limits(config).cpu_seconds == 7
    assert settings.configured_limits(config).memory_bytes == 512 << 20
    assert settings.configured_limits(config, cpu_seconds=9).cpu_seconds == 9
    settings.hand_down(settings.configured_limits(config, cpu_seconds=11))
    inherited = settings.configured_limits(Config())  # a step started by that run: its limits, not the defaults
    assert (inherited.cpu_seconds, inherited.memory_bytes) == (11, 512 << 20)


def test_every_setting_has_help():
    traits = settings.GradingSettings.class_traits(config=True)
    assert traits and all(t.help for t in traits.values())


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
