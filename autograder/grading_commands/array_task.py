"""``python -m autograder.grade array-task I/N`` (``scripts/slurm-grade-array.sh``): decide range I of N
of the students in a Slurm array task; no nbgrader step. Exit status 1 when a notebook failed."""

from __future__ import annotations

import argparse

from autograder.grading_commands import common
from autograder.pipeline import run_lock, slurm_array

NAME = "array-task"
HELP = "a Slurm array task (scripts/slurm-grade-array.sh): decide range I of N of the students; no nbgrader step"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task", metavar="I/N")
    common.add_run_options(p)


def run(a: argparse.Namespace) -> int:
    common.line_buffered()
    grading = common.run_settings(a)
    ws = common.workspace(a)
    task = slurm_array.parse_task(a.task)
    with run_lock.hold(shared=True, ws=ws):
        failed = slurm_array.decide_task(*task, grading, ws)
    return 1 if failed else 0
