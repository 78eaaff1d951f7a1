"""``make due-date`` and ``make extension``: ``python -m autograder.extension due-date|extension
--assignment A [--student S] --until TIME`` writes a row of ``due-dates.csv``
(:mod:`autograder.late.due_dates`), then redoes what a due date changes, as ``make grades-final``
does (:func:`autograder.pipeline.grading_run.finish`: the late penalties, the feedback whose grades
changed, the exports; nothing in the sandbox), printing whose final grade changed, old -> new."""

from __future__ import annotations

import argparse
import sys

from autograder.course.ids import id_problem
from autograder.errors import RefusedInput, command_line
from autograder.late import due_dates
from autograder.late.clock import show
from autograder.pipeline.grading_run import finish
from autograder.workspace import from_environment


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Set a due date or an extension, then redo the late penalties "
                                            "(make due-date, make extension)")
    p.add_argument("what", choices=("due-date", "extension"))
    p.add_argument("--assignment", required=True)
    p.add_argument("--student", default="")
    p.add_argument("--until", required=True, help="the new due date, e.g. '2026-11-03 12:00 UTC'")
    return p


@command_line
def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    ws = from_environment()
    student = a.student.strip() if a.what == "extension" else ""
    if a.what == "extension" and not student:
        raise RefusedInput("make extension needs STUDENT=<id> (the student's nbgrader id)")
    for name in (a.assignment, student) if student else (a.assignment,):
        if id_problem(name):
            raise RefusedInput(f"{name!r} is not an id: {id_problem(name)}")
    if not (ws.solutions / a.assignment).is_dir():
        raise RefusedInput(f"no assignment {a.assignment!r} in {ws.solutions}")
    row = due_dates.DueDate(a.assignment, student, due_dates.parse_time(a.until))
    due_dates.set_row(ws.due_dates, row)
    print(f"{ws.due_dates}: {a.assignment}{'/' + student if student else ''} due {show(row.due)}")
    finish(ws=ws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
