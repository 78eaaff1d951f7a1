"""One settings chain, passed down: a ``c.GradingSettings`` option set in an ``nbgrader_config.py``
is what ``make grade``, nbgrader's pre-convert hook and a Dask worker's task grade with; a flag
overrides it for one run; the environment's overrides still work; every option has help and is
listed by ``nbgrader generate_config``; two workspaces in one process do not interfere."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from grading_support import ROOT, SOLUTIONS, help_lines_shown, place, with_answers
from traitlets.config import Config

from autograder import environment, grade, paths, settings
from autograder.errors import RefusedInput
from autograder.grading_commands import common
from autograder.nbgrader_ext import plugins as nbgrader_plugins
from autograder.nbgrader_ext.course_folders import workspace_of
from autograder.nbgrader_ext.steps import nbgrader_api
from autograder.pipeline import dask_cluster as distributed
from autograder.sandbox import Limits
from autograder.verdicts import decide as verdicts
from autograder.workspace import Workspace, from_environment

LOOP = "def attention_flops(T, d):\n    while True:\n        pass\n"
WRONG = "def attention_flops(T, d):\n    return 0\n"
COST = "08-cost"


@pytest.fixture()
def user_config(tmp_path, monkeypatch) -> Path:
    """A user-level nbgrader_config.py (the level of ``~/.jupyter``) setting three options."""
    folder = tmp_path / "jupyter"
    folder.mkdir()
    (folder / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.GradingSettings.cpu_seconds = 1\n"
        "c.GradingSettings.memory_mb = 1500\n"
        "c.GradingSettings.workers = 3\n")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(folder))
    for name in environment.SETTING_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return folder


def test_make_grade_reads_the_config_file_and_a_flag_overrides_it(user_config):
    chosen = common.settings_of(grade._parser().parse_args(grade.subcommand_argv([])))
    assert (chosen.limits.cpu_seconds, chosen.limits.memory_bytes, chosen.workers) == (1, 1500 << 20, 3)
    assert chosen.worker_count() == 3
    flagged = common.settings_of(grade._parser().parse_args(grade.subcommand_argv(
        ["--cpu-seconds", "9", "--workers", "1", "--allow-fallback-sandbox"])))
    assert (flagged.limits.cpu_seconds, flagged.limits.memory_bytes, flagged.workers) == (9, 1500 << 20, 1)
    assert flagged.allow_fallback_sandbox and not chosen.allow_fallback_sandbox
    with pytest.raises(RefusedInput, match=r"^refused: .*cpu_seconds.* less than 1"):
        common.settings_of(grade._parser().parse_args(grade.subcommand_argv(["--cpu-seconds", "0"])))


def test_the_pre_convert_hook_decides_with_its_autograde_s_settings(user_config, tmp_path, monkeypatch):
    """Formgrader's button (nbgrader's own configuration) and an nbgrader step of a make grade run
    (the run's settings handed down as configuration) each decide with their own settings."""
    from nbgrader.converters import Autograde

    ws = Workspace(tmp_path / "work", ROOT)
    button = nbgrader_api(ws=ws)
    assert button.coursedir.submitted_directory == str(ws.staged_root)
    assert button.coursedir.db_url == f"sqlite:///{ws.gradebook}"
    assert button.coursedir.release_directory == str(ws.grading / "release")
    configured = nbgrader_plugins.autograde_settings(Autograde(coursedir=button.coursedir, parent=button))
    assert (configured.limits.cpu_seconds, configured.workers) == (1, 3)

    run = settings.Settings(limits=Limits(cpu_seconds=11, memory_bytes=700 << 20), workers=2)
    step = nbgrader_api(run.config(), ws=ws)
    handed = nbgrader_plugins.autograde_settings(Autograde(coursedir=step.coursedir, parent=step))
    assert handed == run

    assert workspace_of(step.coursedir) == ws
    by_hand = nbgrader_api(ws=ws).coursedir
    by_hand.feedback_directory = str(tmp_path / "elsewhere")  # configured by hand: no workspace is guessed
    with pytest.raises(RefusedInput, match=r"^refused: nbgrader's CourseDirectory.feedback_directory is ") as refused:
        workspace_of(by_hand)
    assert "\n" not in str(refused.value)

    decided: list[tuple[str, Limits, Workspace]] = []
    monkeypatch.setattr(verdicts, "freshness", lambda *args, **kw: "stale")
    monkeypatch.setattr(verdicts, "decide_in_phases",
                        lambda jobs, ws: decided.extend((s, limits, ws) for s, _a, _nb, limits in jobs))
    with nbgrader_plugins.deciding_with(handed, ws):  # as within the autograde of that make grade step
        nbgrader_plugins.compute_missing_verdicts(assignment="attention", student="ann",
                                                  notebooks=[str(ws.staged("ann", "attention", COST))])
    with nbgrader_plugins.deciding_with(None, ws):  # the button: nbgrader's own configuration
        nbgrader_plugins.compute_missing_verdicts(assignment="attention", student="bo",
                                                  notebooks=[str(ws.staged("bo", "attention", COST))])
    with pytest.raises(RefusedInput, match=r"^refused: this hook runs only within nbgrader's autograde"):
        nbgrader_plugins.compute_missing_verdicts(assignment="attention", student="cy",  # outside any autograde
                                                  notebooks=[str(ws.staged("cy", "attention", COST))])
    assert decided == [("ann", run.limits, ws), ("bo", configured.limits, ws)]


def test_a_dask_task_grades_with_the_settings_it_carries_in_its_own_folder(user_config, tmp_path):
    grading = settings.configured()  # 1 CPU second, from the user's nbgrader_config.py
    raw = with_answers((SOLUTIONS / f"{COST}.ipynb").read_text(), {"attention_flops": LOOP})
    worker = tmp_path / "worker"
    worker.mkdir()
    out = distributed.decide_remote("dasklooper", "attention", COST, raw.encode(), None,
                                    distributed.Sealed(b"0123456789abcdef0123456789abcdef"), grading, worker)
    verdict = json.loads(out["verdict"])
    assert verdict["settings"]["limits"]["cpu_seconds"] == 1
    assert any("CPU time" in ln for ln in verdict["cells"]["attention_flops-public"]["lines"])
    assert list(worker.iterdir()) == []  # the task's files went when it ended
    assert not paths.DEFAULT.verdict("dasklooper", "attention", COST).exists()  # nor into the default folder
    assert "AUTOGRADER_WORKDIR" not in os.environ


def test_every_setting_has_help_and_help_config_prints_it(capsys):
    traits = settings.GradingSettings.class_traits(config=True)
    assert {"cpu_seconds", "memory_mb", "workers", "warm_sandbox", "sandbox", "allow_fallback_sandbox",
            "cgroups"} <= set(traits)
    assert all(len(t.help.split()) >= 5 for t in traits.values()), {n: t.help for n, t in traits.items()}
    assert grade.main(["--help-config"]) == 0
    help_lines_shown(capsys.readouterr().out)


def test_the_environment_overrides_the_configuration(tmp_path):
    config = Config({"GradingSettings": {"warm_sandbox": True, "cpu_seconds": 5}})
    plain = settings.configured(config, environ={})
    assert (plain.sandbox, plain.warm_sandbox, plain.limits.cpu_seconds) == ("auto", True, 5)
    overridden = settings.configured(config, environ={"SELFATTN_SANDBOX": "fallback", "SELFATTN_WARM_SANDBOX": "0",
                                                      "SELFATTN_CGROUPS": "0"})
    assert (overridden.sandbox, overridden.warm_sandbox, overridden.cgroups) == ("fallback", False, False)
    assert plain.cgroups
    assert settings.configured(Config({"GradingSettings": {"sandbox": "fallback"}}), environ={}).sandbox == "fallback"
    ws = from_environment({"AUTOGRADER_WORKDIR": str(tmp_path / "w"), "AUTOGRADER_COURSE": str(tmp_path / "c")})
    assert (ws.work, ws.solutions, ws.staged_root) == (tmp_path / "w", tmp_path / "c" / "solutions",
                                                       tmp_path / "w" / ".grading" / "submitted")
    assert from_environment({}) == Workspace(ROOT / "autograder", ROOT)
    code = ("from autograder import sandbox; from autograder.sandbox import cgroups, warm; "
            "print(sandbox.mode(), warm.enabled(), cgroups.hierarchies())")
    env = {**os.environ, "SELFATTN_SANDBOX": "fallback", "SELFATTN_WARM_SANDBOX": "0", "SELFATTN_CGROUPS": "0"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["fallback", "False", "{}"], out.stderr
    # and the same chosen in the configuration, applied to a process (what make grade and a Dask task do)
    code = ("from autograder import sandbox, settings\nfrom autograder.sandbox import cgroups, warm\n"
            "settings.Settings(sandbox='fallback', warm_sandbox=False, cgroups=False).apply()\n"
            "print(sandbox.mode(), warm.enabled(), cgroups.hierarchies())")
    env = {k: v for k, v in os.environ.items() if k not in environment.SETTING_VARIABLES}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["fallback", "False", "{}"], out.stderr


def test_the_environment_is_read_in_one_place():
    names = [environment.COURSE_VARIABLE, environment.WORK_VARIABLE, *environment.SETTING_VARIABLES]
    readers = sorted(p.name for p in (ROOT / "autograder").rglob("*.py")
                     if any(re.search(rf"[\"']{n}[\"']", p.read_text()) for n in names))
    assert readers == ["environment.py"], readers
    assert "SELFATTN_GRADING_OVERRIDES" not in "".join(p.read_text() for p in (ROOT / "autograder").rglob("*.py"))


def test_settings_travel_as_data_and_as_configuration():
    run = settings.Settings(limits=Limits(cpu_seconds=4, memory_bytes=512 << 20), workers=2, warm_sandbox=False,
                            sandbox="fallback", allow_fallback_sandbox=True, cgroups=False)
    assert settings.GradingSettings(config=run.config()).resolve(environ={}) == run
    from nbgrader.apps import AutogradeApp

    app = AutogradeApp()  # nbgrader autograde's own command line, as ./nbgrader passes it on
    app.parse_command_line(["attention", *run.command_line()])
    assert settings.GradingSettings(config=app.config).resolve(environ={}) == run
    assert dataclasses.replace(run, workers=0).worker_count() >= 1


def test_two_workspaces_in_one_process_do_not_interfere(tmp_path):
    a, b = Workspace(tmp_path / "a", ROOT), Workspace(tmp_path / "b", ROOT)
    raw = (SOLUTIONS / f"{COST}.ipynb").read_text()
    place(a.work, "wsprobe", COST, raw)
    place(b.work, "wsprobe", COST, with_answers(raw, {"attention_flops": WRONG}))
    limits = Limits(cpu_seconds=10, memory_bytes=1024 << 20)
    right = verdicts.grade_one("wsprobe", "attention", COST, limits, ws=a)
    wrong = verdicts.grade_one("wsprobe", "attention", COST, limits, ws=b)
    assert right.cells and all(c.passed for c in right.cells.values()), right
    assert not wrong.cells["attention_flops-public"].passed, wrong
    for ws, decided in ((a, right), (b, wrong)):
        assert json.loads(ws.verdict("wsprobe", "attention", COST).read_text())["key"] == decided.key
        assert verdicts.freshness("wsprobe", "attention", COST, limits=limits, ws=ws) == "fresh"
        assert (ws.grading / "secret").is_file()
    assert (a.grading / "secret").read_bytes() != (b.grading / "secret").read_bytes()
    assert "return 0" in b.staged("wsprobe", "attention", COST).read_text()
    assert "return 0" not in a.staged("wsprobe", "attention", COST).read_text()
    place(b.work, "wsprobe", COST, raw)  # b's submission changes: a's verdict stays fresh, b's does not
    assert verdicts.freshness("wsprobe", "attention", COST, limits=limits, ws=b) == "stale"
    assert verdicts.freshness("wsprobe", "attention", COST, limits=limits, ws=a) == "fresh"
    assert not paths.DEFAULT.verdict("wsprobe", "attention", COST).exists()
    assert not paths.DEFAULT.staged("wsprobe", "attention", COST).exists()
