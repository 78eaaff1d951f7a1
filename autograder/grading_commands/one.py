"""``python -m autograder.grade one STUDENT ASSIGNMENT NOTEBOOK``: decide one notebook (a job for an
external scheduler) and print its test cells and notes; no nbgrader step."""

from __future__ import annotations

import argparse
import json

from autograder.errors import RefusedInput
from autograder.grading_commands import common
from autograder.intake import scan as intake
from autograder.pipeline import run_lock
from autograder.pipeline.grading_run import submissions
from autograder.verdicts.decide import grade_one

NAME = "one"
HELP = "only decide one notebook (a job for an external scheduler); no nbgrader step"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("student", metavar="STUDENT")
    p.add_argument("assignment", metavar="ASSIGNMENT")
    p.add_argument("notebook", metavar="NOTEBOOK")
    common.add_run_options(p)


def run(a: argparse.Namespace) -> int:
    common.line_buffered()
    grading = common.run_settings(a)
    ws = common.workspace(a)
    if (a.student, a.assignment) not in submissions(ws=ws):
        where = intake.shown(ws.submission(a.student, a.assignment), ws)
        raise RefusedInput(f"not graded: {where} is refused or missing (run without --one to see why)")
    with run_lock.hold(shared=True, ws=ws):
        v = grade_one(a.student, a.assignment, a.notebook, limits=grading.limits, ws=ws)
    stored = v.to_json()
    print(json.dumps({k: stored[k] for k in ("cells", "notes")}, ensure_ascii=False, indent=1))
    return 0
