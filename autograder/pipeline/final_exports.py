"""The files that hold final scores, written from the gradebook: one step for every way in.

``grades.csv`` (nbgrader's export columns), the Canvas and Moodle files, the record of whose final
score changed since the last export (old -> new, in the run state) and the class report, in that
order. ``make grade`` and ``make grades-final`` run it after the late penalties and the feedback
(:mod:`autograder.pipeline.grading_run`), and so does nbgrader's ``generate_feedback`` started any
other way (formgrader's *Generate Feedback*, ``./nbgrader generate_feedback``;
:func:`autograder.nbgrader_ext.plugins.final_scores_around_feedback`), so a released feedback page
never shows a score the exports contradict. Every file reads the final score through
:func:`autograder.late.policy.final_score` from the penalties the gradebook holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from autograder.errors import GradingError
from autograder.late import penalties
from autograder.nbgrader_ext import gradebook_state
from autograder.workspace import Workspace


def write(db_url: str, course: str, config, log: Callable[[str], object], *, ws: Workspace,
          state: dict | None = None, steps: dict[str, float] | None = None) -> dict:
    """Write grades.csv, the LMS files and the class report of ``ws`` from the gradebook at
    ``db_url``; record in ``state`` (default: the work folder's run state) whose final score
    changed since the last export, and save it. ``config``: nbgrader's configuration (the export
    plugin's options). The seconds of the exports and of the report go to ``steps``. Returns the state.

    Raises
    ------
    autograder.errors.GradingError
        When nbgrader's export wrote no grades.csv.
    """
    from nbgrader.api import Gradebook

    from autograder.outputs.csv_export import QuotedCsvExportPlugin
    from autograder.outputs.lms_export import write_lms_exports
    from autograder.reporting import class_report

    t0 = time.perf_counter()
    state = gradebook_state.load(ws) if state is None else state
    with Gradebook(db_url, course) as gb:
        QuotedCsvExportPlugin(config=config, to=str(ws.grades_csv)).export(gb)
    if not ws.grades_csv.exists():
        raise GradingError("nbgrader export wrote no grades.csv")
    write_lms_exports(db_url, course, ws.exports, ws.roster, log=log, course_root=ws.course)
    now = penalties.final_scores(db_url, course)  # before the report, which lists the changes
    state["grade_changes"] = [list(change) for change in penalties.score_changes(state.get("finals", {}), now)]
    state["finals"] = now
    gradebook_state.save(state, ws)
    t1 = time.perf_counter()
    class_report.write_quietly(log, ws=ws)
    if steps is not None:
        steps.update(export=t1 - t0, report=time.perf_counter() - t1)
    return state
