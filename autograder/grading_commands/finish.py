"""``python -m autograder.grade finish`` (``make grades-final``): after hand-grading in formgrader,
feedback and the exports again; nothing is decided or run again."""

from __future__ import annotations

import argparse

from autograder.grading_commands import common
from autograder.pipeline import run_lock
from autograder.pipeline.grading_run import finish

NAME = "finish"
HELP = "after manual grading in formgrader: only regenerate feedback and the exports"


def add_arguments(p: argparse.ArgumentParser) -> None:
    common.add_run_options(p)


def run(a: argparse.Namespace) -> int:
    common.line_buffered()
    grading = common.run_settings(a)
    ws = common.workspace(a)
    with run_lock.hold(ws=ws):
        finish(grading.worker_count(), ws=ws)
    return 0
