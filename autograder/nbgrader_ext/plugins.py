"""How nbgrader's own commands (CLI, API and formgrader's buttons) work with this course.

Set in ``nbgrader_config.py``:

- :class:`CollectIntoSubmitted` (``ExchangeFactory.collect``): ``nbgrader collect`` and
  formgrader's *Collect* put submissions in ``submitted/`` (the folder ``make grade`` reads) and
  stage them into ``.grading/submitted/``, the copies nbgrader autogrades.
- :func:`compute_missing_verdicts` (``Autograde.pre_convert_hook``): before nbgrader autogrades a
  student, the staged copies are refreshed from ``submitted/`` and every notebook whose verdict is
  missing or was made for other answers or other checks is decided, through the same sandbox as
  ``make grade``: a new student or a resubmission gets a fresh result.
- :class:`ApplyVerdicts` replaces nbgrader's ``Execute``: nothing is run. Each test cell gets its
  verdict as output (a listing of the checks; an error output when one failed, which is how
  nbgrader scores a test cell). A verdict is applied only if it judged exactly this notebook (same
  answers, same checks); otherwise autograding this student fails, loudly, with the command to run.
- :func:`install` makes nbgrader's ``Autograde`` (``nbgrader autograde``, formgrader's *Autograde*,
  ``make grade``) first stage what ``submitted/`` holds for the students and assignments it was
  asked for (a submission put there by hand or by ``nbgrader zip_collect`` is graded there and
  then), and keep the hand grades of unchanged written answers around each autograde
  (:func:`autograder.nbgrader_ext.gradebook_state.settle_hand_grades`, the same step for every way in).
  ``nbgrader zip_collect`` lands in ``submitted/`` too, and stages what it collected.
- :class:`ReleaseFeedbackWarningPending` (``ExchangeFactory.release_feedback``): nbgrader's
  ``release_feedback`` (and formgrader's button), warning in one line while answers of the
  assignment await hand-grading.
- :func:`complete_feedback_folder` (``GenerateFeedback.post_convert_hook``) gives every feedback
  folder the ``timestamp.txt`` that ``release_feedback`` needs.
- :func:`final_scores_around_feedback`: nbgrader's ``generate_feedback`` started other than by
  ``make grade`` (formgrader's *Generate Feedback*) computes the late penalties from the current,
  hand-graded scores first and rewrites grades.csv, the LMS files and the report after, and
  :mod:`autograder.nbgrader_ext.formgrader_scores` makes formgrader's lists show final scores.
"""

from __future__ import annotations

import glob
import logging
import os
import secrets
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
from nbformat.v4 import new_markdown_cell, new_output
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default import ExchangeCollect, ExchangeReleaseFeedback
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Float, Int
from traitlets.config import Configurable

from autograder.errors import RefusedInput, StaleVerdict
from autograder.intake.untrusted import entry_problem, id_problem, note_markdown
from autograder.nbgrader_ext import formgrader_scores
from autograder.outputs import atomic
from autograder.workspace import Workspace

if TYPE_CHECKING:
    from autograder.settings import Settings


#: the settings of the autograde running in this thread (set by :func:`install`'s ``Autograde.start``)
_GRADING: ContextVar[Settings | None] = ContextVar("grading_settings", default=None)
#: the workspace of the autograde running in this thread (the one its CourseDirectory names)
_WORKSPACE: ContextVar[Workspace] = ContextVar("grading_workspace")


def _workspace() -> Workspace:
    """The workspace of the autograde or generate_feedback running in this thread (set by the
    steps :func:`install` wraps, or :func:`deciding_with`); one clear line when there is none."""
    try:
        return _WORKSPACE.get()
    except LookupError:
        raise RefusedInput("refused: this hook runs only within nbgrader's autograde or generate_feedback started "
                           "with the course's configuration (autograder/nbgrader_config.py), which names the "
                           "workspace; none is set") from None


def _staged_parts(filename: str | Path, ws: Workspace) -> tuple[str, str, str] | None:
    """(student, assignment, notebook) of a staged notebook of ``ws``, else None."""
    try:
        parts = Path(filename).resolve().relative_to(ws.staged_root.resolve()).parts
    except ValueError:
        return None
    return (parts[0], parts[1], Path(parts[2]).stem) if len(parts) == 3 and parts[2].endswith(".ipynb") else None


def _restage(student: str, assignment: str, ws: Workspace) -> None:
    """Stage one submission again from ``submitted/`` (if it is there and may be graded)."""
    from autograder.intake.staging import stage_submission

    folder = ws.submission(student, assignment)
    if (id_problem(student) is None and (ws.solutions / assignment).is_dir()
            and entry_problem(folder.parent, "dir") is None and entry_problem(folder, "dir") is None):
        stage_submission(student, assignment, ws)


class CollectIntoSubmitted(ExchangeCollect):
    """nbgrader's collect, landing in ``submitted/`` and staging what it collected, taking from the
    exchange only what a student cannot forge (:mod:`autograder.intake.inbound`): a hand-in folder
    made by another account than the student it names is refused; links, devices, FIFOs, sockets
    and files of others in it are refused, each with one line; bytes are capped while copying; the
    hand-in time is the one the grader side observed; the feedback secret is checked. A refused
    hand-in never replaces what was collected before."""

    max_file_bytes = Int(16 << 20, help=(
        "Most bytes one file of a hand-in may hold; a larger file is refused (one line) and not copied, counted "
        "while copying (this course's notebooks are about 10-20 KB; pasted images in written answers can make one "
        "a few MB)")).tag(config=True)
    max_handin_bytes = Int(64 << 20, help=(
        "Most bytes one hand-in may hold in all, counted while copying; a larger hand-in is refused whole (one "
        "line) and what was collected before stays")).tag(config=True)
    max_handin_entries = Int(500, help=(
        "Most files and folders one hand-in may hold; more is refused whole (one line)")).tag(config=True)
    clock_tolerance = Float(60.0, help=(
        "Seconds a claimed hand-in time (the folder's name, timestamp.txt) may lie before the time the grader "
        "side observed (the change times of the hand-in's files, which no student can set back) or after now; "
        "beyond that the observed time is used and Collect says so")).tag(config=True)

    def init_src(self):
        from autograder.intake import inbound

        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not os.access(self.inbound_path, os.R_OK | os.X_OK):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        assignment = self.coursedir.assignment_id
        wanted = self.coursedir.student_id or "*"
        self.refusals: dict[str, list[str]] = {}
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        records = []
        for name in sorted(os.listdir(self.inbound_path)):
            parsed = inbound.parse_folder_name(name, assignment)
            student = name.split("+")[0]
            if name.split("+")[1:2] != [assignment] or not fnmatch(student, wanted):
                continue
            student = student if id_problem(student) is None else inbound.shown(student)  # one printable line
            path = Path(self.inbound_path) / name
            why = parsed if isinstance(parsed, str) else inbound.folder_problem(path, student, os.geteuid())
            if why is not None:
                self.refuse(student, f"hand-in folder {inbound.shown(name)} refused, never collected: {why}")
                continue
            student, from_name = parsed
            owner = path.lstat().st_uid
            claimed = inbound.claimed_time(path, from_name, owner)
            observed = inbound.observed_time(path, self.max_handin_entries)
            when, why = inbound.handin_time(claimed, observed, now, self.clock_tolerance)
            records.append({"username": student, "filename": name, "timestamp": when, "owner": owner,
                            "time_note": why})
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(assignment).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for student in sorted({r["username"] for r in records}):
            mine = sorted((r for r in records if r["username"] == student), key=lambda r: r["timestamp"], reverse=True)
            on_time = [r for r in mine if self.duedate is not None and r["timestamp"] <= self.duedate]
            self.src_records.append(on_time[0] if self.before_duedate and on_time else mine[0])

    def refuse(self, student: str, line: str) -> None:
        """One line in Collect's log, kept for make grade's summary."""
        self.log.warning("%s: %s", student, line)
        self.refusals.setdefault(student, []).append(f"{student}: {line}")

    def copy_files(self):
        from autograder.intake import inbound
        from autograder.nbgrader_ext.course_folders import workspace_of

        ws = workspace_of(self.coursedir)
        assignment = self.coursedir.assignment_id
        if not self.src_records:
            self.log.warning("No submissions of '%s' for course '%s' to collect", assignment, self.coursedir.course_id)
        else:
            self.log.info("Processing %d submissions of '%s' for course '%s'", len(self.src_records), assignment,
                          self.coursedir.course_id)
        collected = []
        for rec in self.src_records:
            if self.collect_one(rec, ws, inbound):
                collected.append(rec["username"])
        inbound.record_refusals(ws, assignment, self.coursedir.student_id or "*", self.refusals)
        for student in collected:
            _restage(student, assignment, ws)

    def collect_one(self, rec: dict, ws: Workspace, inbound) -> bool:
        """Copy one hand-in into ``submitted/`` (whole, or not at all); True when it was."""
        import shutil

        student, assignment, name = rec["username"], self.coursedir.assignment_id, rec["filename"]
        dest = ws.submission(student, assignment)
        if dest.is_dir():
            existing = self.coursedir.get_existing_timestamp(str(dest))
            if not ((self.update and (existing is None or rec["timestamp"] > existing))
                    or (self.before_duedate and existing != rec["timestamp"])):
                self.log.info("%s %s %s: %s", "No newer submission to collect:" if self.update else
                              "Submission already exists, use --update to update:", student, assignment, name)
                return False
        src = Path(self.inbound_path) / name
        work = ws.grading / "collecting"
        work.mkdir(parents=True, exist_ok=True)
        fresh = work / f"{student}+{assignment}+{secrets.token_hex(8)}"
        try:
            refused = inbound.copy_handin(src, fresh, rec["owner"], inbound.Caps(
                self.max_file_bytes, self.max_handin_bytes, self.max_handin_entries), self.passed_over)
            secret, why_secret = inbound.feedback_secret(src, rec["owner"],
                                                         inbound.secrets_of_others(ws, assignment, student))
        except inbound.RefusedHandin as exc:
            shutil.rmtree(fresh, ignore_errors=True)
            self.refuse(student, f"hand-in folder {inbound.shown(name)} refused, never collected: {exc}"
                         + ("; what was collected before stays" if dest.is_dir() else ""))
            return False
        for line in refused:
            self.refuse(student, f"hand-in folder {inbound.shown(name)}: {line}")
        if rec["time_note"]:
            self.refuse(student, f"hand-in folder {inbound.shown(name)}: {rec['time_note']}; the time the grader "
                         f"side observed, {inbound.stamp_text(rec['timestamp'])}, is used")
        if why_secret:
            self.refuse(student, f"hand-in folder {inbound.shown(name)}: {why_secret}; the grader made one, so "
                         "the student's nbgrader cannot fetch this feedback "
                         f"(hand over feedback/{student}/{assignment}/)")
        atomic.write_text(fresh / inbound.STAMP, inbound.stamp_text(rec["timestamp"]))
        atomic.write_text(fresh / inbound.SECRET, secret)
        self.log.info("%s submission: %s %s", "Updating" if dest.is_dir() else "Collecting", student, assignment)
        dest.parent.mkdir(parents=True, exist_ok=True)
        aside = work / f"{fresh.name}.old"
        if atomic.place_folder(fresh, dest, aside) == "replaced":  # fresh (or aside) now holds the old one
            shutil.rmtree(fresh, ignore_errors=True)
            shutil.rmtree(aside, ignore_errors=True)
        return True

    def passed_over(self, name: str, is_dir: bool) -> bool:
        """nbgrader's ``CourseDirectory.ignore`` and ``include`` (what its copy passes over)."""
        if any(fnmatch(name, pattern) for pattern in self.coursedir.ignore):
            return True
        return not is_dir and not any(fnmatch(name, pattern) for pattern in self.coursedir.include)


class AutogradeStaging(Configurable):
    """Whether nbgrader's autograde stages what ``submitted/`` holds before it grades (:func:`install`)."""

    restage = Bool(True, help=(
        "Stage the submissions nbgrader's autograde was asked for from submitted/ first. make grade sets it "
        "to False for the autograde it runs: it staged every submission of the run moments before (and the "
        "verdict key refuses a staged copy that does not match its verdict).")).tag(config=True)


def _stage_requested(assignment_id: str, student_id: str, ws: Workspace, restage: bool = True) -> list[tuple[str, str]]:
    """Stage every submission in ``submitted/`` that nbgrader was asked to autograde (its
    ``--student`` and assignment may be patterns; with ``restage`` False, only find them: the
    caller staged them already); return (student, assignment) of each."""
    from autograder.intake.scan import scan

    if glob.has_magic(student_id) or glob.has_magic(assignment_id):
        wanted = [(s, a) for s, a in scan(ws=ws).submissions if fnmatch(s, student_id) and fnmatch(a, assignment_id)]
    else:
        wanted = [(student_id, assignment_id)] if ws.submission(student_id, assignment_id).is_dir() else []
    for s, a in wanted if restage else ():
        _restage(s, a, ws)
    return wanted


def autograde_settings(converter) -> Settings:
    """The grading settings of one nbgrader autograde: those of its own configuration (nbgrader's
    chain, the command line's ``--GradingSettings.*``, or the overrides of the ``make grade`` run
    that started it, :func:`autograder.nbgrader_ext.steps.nbgrader_api`), then the environment's."""
    from autograder.settings import GradingSettings

    return GradingSettings(parent=converter).resolve()


@contextmanager
def deciding_with(grading: Settings | None, ws: Workspace) -> Iterator[None]:
    """Within the block, :func:`compute_missing_verdicts` decides with ``grading`` (``None``:
    those of nbgrader's configuration chain) in ``ws``, and
    :class:`ApplyVerdicts` reads the verdicts of ``ws``."""
    tokens = _GRADING.set(grading), _WORKSPACE.set(ws)
    try:
        yield
    finally:
        _GRADING.reset(tokens[0])
        _WORKSPACE.reset(tokens[1])


class ExpectedOverwrites(logging.Filter):
    """Keeps out of an autograde's log the two warnings nbgrader's ``OverwriteCells`` gives for
    every notebook of this course, which an instructor reads as corruption, and counts them:

    - "Attribute 'checksum' for cell X has changed!" for a test cell ``X`` with hidden tests: the
      released notebook holds the cell without them (``ClearHiddenTests``), and putting back the
      source's cell, hidden tests included, is how nbgrader grades them;
    - "Cell 'compare-F' does not exist in the database": the ``compare()`` cells carry a grade id of
      their own (so the release keeps them in place) but are not graded.

    Any other change (a locked cell edited, points changed) is still logged. ``hidden_cells`` are
    the grade ids of the test cells that hold hidden tests."""

    def __init__(self, hidden_cells: set[str]) -> None:
        super().__init__()
        self.hidden_cells = hidden_cells
        self.restored = 0
        self.compare = 0

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if (isinstance(record.msg, str) and record.msg.startswith("Attribute '%s' for cell %s has changed!")
                and len(args) == 4 and args[0] == "checksum" and args[1] in self.hidden_cells):
            self.restored += 1
            return False
        text = record.getMessage()
        if text.startswith("Cell 'compare-") and text.endswith("' does not exist in the database"):
            self.compare += 1
            return False
        return True

    def summary(self) -> str | None:
        """One line for the log saying what was kept out, or ``None``."""
        if not (self.restored or self.compare):
            return None
        return (f"nbgrader put back the hidden tests of {self.restored} test cells and passed over {self.compare} "
                "compare() cells, as it does for every notebook of this course (the released notebooks hold no "
                "hidden tests; compare() is not graded)")


def _hidden_test_cells(assignment: str, ws: Workspace) -> set[str]:
    """The grade ids of the test cells with hidden tests, in every notebook of ``assignment``
    (every assignment for ``*`` or none)."""
    from autograder.course.spec import load_spec, notebooks_of

    folders = [p.name for p in ws.solutions.iterdir() if p.is_dir()] if ws.solutions.is_dir() else []
    out: set[str] = set()
    for a in (f for f in folders if fnmatch(f, assignment or "*")):
        for nb in notebooks_of(a, ws.course):
            try:
                out |= {t.grade_id for t in load_spec(a, nb, ws.course).tests if t.hidden}
            except Exception:  # a notebook the spec cannot read: its warnings stay in the log
                continue
    return out


def _penalties_of(app, wanted: list[tuple[str, str]]) -> None:
    """The late penalty of each (student, assignment) of ``wanted`` from its score after autograde,
    hand grades kept (nbgrader's own, computed inside autograde, left the hand grades out)."""
    from autograder.late import penalties
    from autograder.late.policy import policy_of

    policy = policy_of(app.config)
    for s, a in wanted:
        penalties.apply(app.coursedir.db_url, app.coursedir.course_id, policy, a, s)


def install() -> None:
    """Make nbgrader's ``Autograde`` (every way it is started) stage the submissions it was asked
    for before it looks for notebooks (nbgrader reads the staged copies and would skip, exit 0,
    a submission not staged yet), and keep hand grades around each autograde, then compute the late
    penalties from the scores they make; settle the final scores around ``generate_feedback``; and
    make formgrader show final scores (:mod:`autograder.nbgrader_ext.formgrader_scores`). Idempotent."""
    from nbgrader.converters import Autograde

    from autograder.nbgrader_ext import gradebook_state as gs

    formgrader_scores.install()  # first: each load of the configuration in a formgrader checks its handlers
    if getattr(Autograde.start, "selfattn", False):
        return
    start = Autograde.start

    def start_staged(self) -> None:
        from autograder.nbgrader_ext.course_folders import workspace_of

        grading, ws = autograde_settings(self), workspace_of(self.coursedir)
        grading.apply()
        wanted = _stage_requested(self.coursedir.assignment_id, self.coursedir.student_id, ws,
                                  restage=AutogradeStaging(parent=self).restage)
        db, course = self.coursedir.db_url, self.coursedir.course_id
        for s, a in wanted:  # hand grades of what nbgrader holds now, before it resets them
            gs.settle_hand_grades(db, course, s, a, gs.autograded_answers(s, a, ws), ws)
        expected = ExpectedOverwrites(_hidden_test_cells(self.coursedir.assignment_id, ws))
        self.log.addFilter(expected)
        try:
            with deciding_with(grading, ws):
                start(self)
        finally:
            self.log.removeFilter(expected)
            if (line := expected.summary()) is not None:
                self.log.info(line)
            for s, a in wanted:
                gs.note_autograded(s, a, ws)
                gs.settle_hand_grades(db, course, s, a, gs.autograded_answers(s, a, ws), ws)
            _penalties_of(self, wanted)

    start_staged.selfattn = True  # type: ignore[attr-defined]
    start_staged.__wrapped__ = start  # type: ignore[attr-defined]  # nbgrader's (tests/test_nbgrader_contract.py)
    Autograde.start = start_staged
    _feedback_in_its_workspace()
    _zip_collect_into_submitted()


class FinalScoresAroundFeedback(Configurable):
    """Whether nbgrader's ``generate_feedback`` settles the final scores around the feedback it makes
    (:func:`final_scores_around_feedback`)."""

    refresh = Bool(True, help=(
        "Before nbgrader's generate_feedback (formgrader's Generate Feedback, ./nbgrader generate_feedback): "
        "write due-dates.csv into the gradebook and compute the late penalty of each submission it makes "
        "feedback for from its current score, hand grades included; after it, write grades.csv, the LMS files "
        "and the class report again, so released feedback never shows a score the exports contradict. make "
        "grade and make grades-final set it to False for the generate_feedback they run: they do both "
        "themselves around it.")).tag(config=True)


def final_scores_around_feedback(app, ws: Workspace, feedback) -> None:
    """Run ``feedback()`` (nbgrader's ``GenerateFeedback.start`` of ``app``) between the late
    penalties of its submissions, computed from their current, hand-graded scores under the term's
    policy (and the due dates of ``due-dates.csv``), and the exports
    (:func:`autograder.pipeline.final_exports.write`), holding the work folder's run lock: the
    score on each feedback page is the one grades.csv, the LMS files and the report hold.

    Raises
    ------
    autograder.errors.RefusedInput
        One line, for a late policy or a due-date file that cannot be read.
    autograder.errors.RunBusy
        While ``make grade`` (or another run) works in the same work folder.
    """
    from autograder.late import due_dates, penalties
    from autograder.late.policy import policy_of
    from autograder.nbgrader_ext import gradebook_state
    from autograder.pipeline import final_exports, run_lock

    db, course = app.coursedir.db_url, app.coursedir.course_id
    policy = policy_of(app.config)
    with run_lock.hold(ws=ws):
        for line in due_dates.apply(db, course, ws.due_dates):
            app.log.info("due date set: %s", line)
        penalties.apply(db, course, policy, app.coursedir.assignment_id, app.coursedir.student_id or "*")
        app.force = True  # every page again (as formgrader asks): a page kept would be older than its grades
        feedback()
        state = gradebook_state.load(ws)  # what each page was made for: release_feedback compares
        made_for = state.setdefault("feedback", {})
        for s, a in _with_feedback(ws, app.coursedir.assignment_id, app.coursedir.student_id or "*"):
            made_for[f"{s}/{a}"] = gradebook_state.grades_digest(db, course, s, a)
        final_exports.write(db, course, app.config, lambda line: app.log.info("%s", line), ws=ws, state=state)
        app.log.info("final scores (late policy: %s) written to %s, %s and %s", policy.describe(), ws.grades_csv,
                     ws.exports, ws.work / "report")


def _with_feedback(ws: Workspace, assignment: str, student: str) -> list[tuple[str, str]]:
    """(student, assignment) of every feedback page folder of ``ws`` matching the patterns."""
    return [(f.parent.name, f.name) for f in sorted(ws.feedback.glob(f"{student or '*'}/{assignment or '*'}"))
            if f.is_dir() and any(f.glob("*.html"))]


def _feedback_in_its_workspace() -> None:
    """nbgrader's ``generate_feedback`` (every way it is started) runs with the workspace its
    ``CourseDirectory`` names, which its post-convert hook (:func:`complete_feedback_folder`) reads,
    and, unless ``make grade`` runs it, settles the final scores around it
    (:func:`final_scores_around_feedback`)."""
    from nbgrader.converters import GenerateFeedback

    start = GenerateFeedback.start

    def start_in_workspace(self) -> None:
        from autograder.nbgrader_ext.course_folders import workspace_of

        ws = workspace_of(self.coursedir)
        token = _WORKSPACE.set(ws)
        try:
            if FinalScoresAroundFeedback(parent=self).refresh:
                final_scores_around_feedback(self, ws, lambda: start(self))
            else:
                start(self)
        finally:
            _WORKSPACE.reset(token)

    start_in_workspace.__wrapped__ = start  # type: ignore[attr-defined]  # nbgrader's
    GenerateFeedback.start = start_in_workspace


def list_settings_in_generate_config() -> None:
    """Make ``nbgrader generate_config`` (started in ``autograder/``, so it loads the course's
    ``nbgrader_config.py``, which calls this) write the course's ``c.GradingSettings`` options too.

    nbgrader's ``GenerateConfigApp`` lists a fixed set of classes, nbgrader's own, taken from its
    modules (``NbGrader.all_configurable_classes``); it loads the configuration files before it
    writes, so the course's class is added to that list here."""
    from nbgrader.apps.generateconfigapp import GenerateConfigApp

    from autograder.settings import GradingSettings

    app = getattr(GenerateConfigApp, "_instance", None)  # the running app, if this is generate_config
    if isinstance(app, GenerateConfigApp) and GradingSettings not in app.classes:
        app.classes.append(GradingSettings)


def _zip_collect_into_submitted() -> None:
    """``nbgrader zip_collect`` writes to nbgrader's submitted folder, here the staged copies:
    make it land in ``submitted/`` (the folder ``make grade`` reads) and stage what it collected,
    as :class:`CollectIntoSubmitted` does for ``nbgrader collect``."""
    from nbgrader.apps.zipcollectapp import ZipCollectApp

    process, transfer = ZipCollectApp.process_extracted_files, ZipCollectApp._transfer_files

    def process_into_submitted(self) -> None:
        from autograder.nbgrader_ext.course_folders import workspace_of

        self.selfattn_workspace = ws = workspace_of(self.coursedir)  # before its folder is swapped
        staged_dir = self.coursedir.submitted_directory
        self.coursedir.submitted_directory = str(ws.submitted)
        try:
            process(self)
        finally:
            self.coursedir.submitted_directory = staged_dir

    def transfer_and_stage(self, collected_data) -> None:
        from autograder.nbgrader_ext.course_folders import workspace_of

        transfer(self, collected_data)
        ws = getattr(self, "selfattn_workspace", None) or workspace_of(self.coursedir)
        for student in sorted(collected_data):
            _restage(student, self.coursedir.assignment_id, ws)

    process_into_submitted.__wrapped__ = process  # type: ignore[attr-defined]  # nbgrader's originals
    transfer_and_stage.__wrapped__ = transfer  # type: ignore[attr-defined]
    ZipCollectApp.process_extracted_files = process_into_submitted
    ZipCollectApp._transfer_files = transfer_and_stage


class ReleaseFeedbackWarningPending(ExchangeReleaseFeedback):
    """nbgrader's release_feedback, first warning in one line if answers await hand-grading, and
    refusing (one line, nothing released) while a feedback page it would release was made for other
    grades than the gradebook holds (a hand grade, comment or late penalty changed since): such a
    page would show a score that grades.csv and the LMS files, rewritten at the next Generate
    Feedback or make grades-final, contradict."""

    def copy_files(self):
        from autograder.nbgrader_ext.course_folders import workspace_of
        from autograder.nbgrader_ext.gradebook_state import awaiting_hand_grading, awaiting_line, stale_feedback

        exclude = frozenset(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
        stale = stale_feedback(self.coursedir.db_url, self.coursedir.course_id, workspace_of(self.coursedir),
                               self.coursedir.assignment_id, self.coursedir.student_id or "*", exclude)
        if stale:
            shown = ", ".join(stale[:10]) + (f" and {len(stale) - 10} more" if len(stale) > 10 else "")
            self.fail(f"nothing released: the feedback of {shown} was made before its grades last changed "
                      "(a hand grade, comment or late penalty); Generate Feedback (or make grades-final) first")
        waiting = [w for w in awaiting_hand_grading(self.coursedir.db_url)
                   if fnmatch(w.assignment, self.coursedir.assignment_id)
                   and fnmatch(w.student, self.coursedir.student_id or "*")]
        if waiting:
            self.log.warning("releasing feedback while %s (their feedback shows no grade for them yet)",
                             awaiting_line(waiting))
        super().copy_files()


def compute_missing_verdicts(assignment=None, student=None, notebooks=(), **_) -> None:
    """nbgrader's pre-convert hook: decide in the sandbox every notebook of this submission (staged
    just before, :func:`install`) whose stored verdict is missing or stale. After ``make grade``
    this finds nothing to do. It decides with the settings of the autograde that calls it
    (:func:`install`), else with those of nbgrader's configuration chain."""
    from autograder.settings import configured
    from autograder.verdicts.decide import decide_in_phases, freshness

    ws = _workspace()
    parts = [p for p in (_staged_parts(n, ws) for n in notebooks) if p is not None]
    grading = _GRADING.get() or (configured() if parts else None)
    limits = grading.limits if grading else None
    jobs = []
    for s, a, nb in parts:
        staged = ws.staged(s, a, nb)  # just staged: judged as staged, not staged again
        current = nbformat.read(staged, as_version=4) if staged.is_file() else None
        # a verdict make grade just had decided on a Dask worker keeps the worker's sandbox mode
        if freshness(s, a, nb, current, limits, any_sandbox=True, ws=ws) != "fresh":
            jobs.append((s, a, nb, limits))
    decide_in_phases(jobs, ws)  # every public run of the submission before any hidden one


def complete_feedback_folder(assignment=None, student=None, notebooks=(), **_) -> None:
    """nbgrader's post-convert hook of ``generate_feedback``: ``release_feedback`` reads a
    ``timestamp.txt`` beside every feedback page and stops for the whole class if one is missing.
    A submission handed in without the exchange has none: write the time its feedback was made."""
    ws = _workspace()  # the one its generate_feedback (or make grade's autograde) names
    for path in notebooks:
        try:
            s, a = Path(path).resolve().relative_to(ws.autograded.resolve()).parts[:2]
        except ValueError:
            continue
        stamp = ws.feedback / s / a / "timestamp.txt"
        if stamp.parent.is_dir() and not stamp.exists():
            atomic.write_text(stamp, time.strftime("%Y-%m-%d %H:%M:%S.000000 UTC", time.gmtime()))


class ApplyVerdicts(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        from autograder.verdicts.decide import stored_verdict, verdict_key

        info = resources["nbgrader"]
        student, assignment, notebook = info["student"], info["assignment"], info["notebook"]
        ws = _workspace()
        self.verdict = stored_verdict(student, assignment, notebook, ws)
        course = ws.course
        if self.verdict is None or self.verdict.key != verdict_key(nb, assignment, notebook, course):
            why = ("no verdict was computed" if self.verdict is None
                   else "its verdict was made for other answers or checks")
            raise StaleVerdict(
                f"{student}/{assignment}/{notebook}: {why}; nothing was applied. "
                f"Run `make grade STUDENT={student}` (or `python -m autograder.grade --student {student}`).")
        nb, resources = super().preprocess(nb, resources)
        notes = self.verdict.notes
        if notes:
            # notes quote student text (exception messages): rendered as text, never as HTML
            text = "**Grading notes.**\n\n" + "\n".join(note_markdown(n) for n in notes)
            # a fixed cell id (nbformat would draw a random one): the same verdict, the same notebook
            nb.cells.insert(0, new_markdown_cell(text, metadata={"grading_notes": True}, id="grading-notes"))
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        cell.outputs = []
        cell.execution_count = None
        if not (utils.is_grade(cell) and not utils.is_solution(cell)):
            return cell, resources
        gid = cell.metadata.nbgrader["grade_id"]
        result = self.verdict.cells.get(gid)
        if result is None:
            cell.outputs = [new_output("error", ename="NotGraded", evalue="this test cell was not graded",
                                       traceback=["NotGraded: this test cell was not graded"])]
            return cell, resources
        lines = result.lines
        if lines:
            wrapped = [textwrap.fill(ln, width=96, subsequent_indent="    ") for ln in lines]
            cell.outputs.append(new_output("stream", name="stdout", text="\n".join(wrapped) + "\n"))
        if not result.passed:
            failed = result.failed  # counted when the verdict was decided
            cell.outputs.append(new_output(
                "error", ename="CheckFailed", evalue=f"{failed} check(s) failed",
                traceback=[f"CheckFailed: {failed} check(s) failed (see above)"]))
        return cell, resources
