"""``python -m autograder.grade`` is one subcommand per thing a run does, one module each
(:mod:`autograder.grading_commands`), and every command line the Makefile, the scripts and the
guides give (the mode flags of earlier versions included) still reaches the same subcommand."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder import grade, grading_commands
from autograder.workspace import ROOT

#: options every grading subcommand takes, with a value each
RUN_OPTIONS = st.lists(st.sampled_from([("--workers", "2"), ("--cpu-seconds", "5"), ("--memory-mb", "512"),
                                        ("--allow-fallback-sandbox",), ("--work-folder", "/w")]), max_size=3).map(
    lambda options: [arg for option in options for arg in option])


def parsed(argv: list[str]):
    return grade._parser().parse_args(grade.subcommand_argv(argv))


def test_one_module_per_subcommand_and_each_is_listed():
    modules = {m.name for m in pkgutil.iter_modules(grading_commands.__path__)} - {"common"}
    assert {c.__name__.rpartition(".")[2] for c in grade.COMMANDS} == modules
    for command in grade.COMMANDS:
        assert command.NAME and command.HELP and callable(command.add_arguments) and callable(command.run)
        module = importlib.import_module(command.__name__)
        assert module.__doc__ and f"grade {command.NAME}" in module.__doc__.replace("[class]", "class")
    assert len({c.NAME for c in grade.COMMANDS}) == len(grade.COMMANDS)


@given(RUN_OPTIONS, RUN_OPTIONS, st.sampled_from(sorted(grade.MODE_FLAGS)))
def test_a_mode_flag_anywhere_names_its_subcommand(before, after, flag):
    name, count = grade.MODE_FLAGS[flag]
    values = ["ann", "attention", "nb"][:count] if count != 1 else ["1/3"]
    argv = [*before, flag, *values, *after]
    if name == "config":
        argv = [flag]  # it takes no option
    a = parsed(argv)
    assert a.command == name
    new = parsed([name, *values, *before, *after] if name != "config" else [name])
    assert vars(a) == vars(new)  # the old line and the new one are the same run


@given(RUN_OPTIONS)
def test_a_line_without_a_subcommand_grades_the_class(options):
    argv = [*options, "--student", "ann", "--force"]
    a = parsed(argv)
    assert (a.command, a.student, a.force) == ("class", "ann", True)
    assert vars(a) == vars(parsed(["class", *argv]))


def test_a_mode_flag_with_an_equals_sign():
    assert (parsed(["--array-task=2/5", "--workers", "1"]).task, parsed(["--array-task=2/5"]).command) == \
        ("2/5", "array-task")


def _make_lines(target: str, *variables: str) -> list[list[str]]:
    """The ``python -m autograder.grade`` argument lists ``make -n TARGET`` would run."""
    out = subprocess.run(["make", "-n", target, *variables], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "MAKEFLAGS": ""})
    assert out.returncode == 0, out.stderr
    return [ln.split("-m autograder.grade", 1)[1].split() for ln in out.stdout.splitlines()
            if "-m autograder.grade" in ln]


@pytest.mark.parametrize(("target", "variables", "command"), [
    ("grade", (), "class"), ("grade", ("STUDENT=ann",), "class"), ("grades-final", (), "finish"),
    ("grade", ('GRADE_ARGS=--one ann attention 03-softmax-attention',), "one"),
    ("grade", ("GRADE_ARGS=--after-array 3 --cpu-seconds 5",), "class"), ("grade", ("GRADE_ARGS=config",), "config")])
def test_every_make_target_and_documented_line_parses(target, variables, command):
    (argv,) = _make_lines(target, *variables)
    assert parsed(argv).command == command, argv
    script = (ROOT / "scripts" / "slurm-grade-array.sh").read_text()
    line = re.search(r"-m autograder\.grade (.*)", script)[1].replace('"${SLURM_ARRAY_TASK_ID:?', "").split()
    assert parsed([line[0], "0/10", "--cpu-seconds", "5"]).command == "array-task"


def test_config_and_help_config_print_the_same_settings():
    run = [subprocess.run([sys.executable, "-m", "autograder.grade", *a], cwd=ROOT, capture_output=True, text=True,
                          timeout=120) for a in (["config"], ["--help-config"])]
    assert run[0].returncode == run[1].returncode == 0, run[0].stderr + run[1].stderr
    assert run[0].stdout == run[1].stdout and "GradingSettings" in run[0].stdout


def test_an_unknown_option_of_a_subcommand_is_refused_by_argparse():
    with pytest.raises(SystemExit) as exit_:
        parsed(["finish", "--student", "ann"])
    assert exit_.value.code == 2
