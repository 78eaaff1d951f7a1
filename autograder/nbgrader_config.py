"""nbgrader configuration of the course: the *course* level of nbgrader's configuration chain.

nbgrader (CLI, formgrader, and ``make grade``, which loads the same chain) reads, later ones
winning: the ``nbgrader_config.py`` of each Jupyter config folder (``jupyter --paths``, e.g.
``~/.jupyter/``: the *user* level, for personal and term settings such as the exchange or a
late-submission penalty, ``c.LateSubmissionPlugin.penalty_method``), then this file (run nbgrader
with ``autograder/`` as the working directory). The settings below are what the course needs to
grade safely; do not override them.

The repository root (or ``$AUTOGRADER_COURSE``) is the course root: instructors write
``solutions/<assignment>/``, students get ``notebooks/<assignment>/`` (``make release``).
Submissions live in ``submitted/`` of the work folder (``autograder/``, or
``$AUTOGRADER_WORKDIR``), where ``nbgrader collect`` puts them; they are read, never modified.
nbgrader autogrades the staged copies in ``.grading/submitted/`` (answers copied into the
release, notes attached; see autograder/intake/staging.py).
"""

import os
import sys
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.converters import GenerateAssignment  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    LimitOutput,
    OverwriteKernelspec,
)

from autograder.course.ids import course_id_in  # noqa: E402
from autograder.late.policy import LatePenalty  # noqa: E402
from autograder.nbgrader_ext import gradebook_engine, gradebook_schema  # noqa: E402
from autograder.nbgrader_ext.cell_metadata import CheckCellMetadataCompiled  # noqa: E402
from autograder.nbgrader_ext.course_folders import course_directory  # noqa: E402
from autograder.nbgrader_ext.feedback_html import GetGradesWithQueue, OfflineFeedbackExporter  # noqa: E402
from autograder.nbgrader_ext.plugins import (  # noqa: E402
    ApplyVerdicts,
    CollectIntoSubmitted,
    ReleaseFeedbackWarningPending,
    complete_feedback_folder,
    compute_missing_verdicts,
    install,
    list_settings_in_generate_config,
)
from autograder.nbgrader_ext.preloaded import OverwriteCellsPreloaded, SaveAutoGradesPreloaded  # noqa: E402
from autograder.workspace import from_environment  # noqa: E402

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader loads this file

# a new gradebook learns nbgrader's schema revision in this process, not from a second Python
gradebook_schema.install()
# every Gradebook nbgrader opens in this process shares one engine (pool, compiled SQL)
gradebook_engine.install()
# nbgrader's autograde (CLI, formgrader, make grade) stages what submitted/ holds first, and keeps
# the hand grades of unchanged written answers
install()
# `nbgrader generate_config` lists c.GradingSettings (the grader's settings) beside nbgrader's own
list_settings_in_generate_config()

# this course's id, or a hub's second course's (autograder/course_id in that copy)
c.CourseDirectory.course_id = course_id_in(Path(ROOT) / "autograder")
# the course root, solutions/ -> notebooks/, the staged copies as nbgrader's submitted folder, and
# the work folder's autograded/, feedback/ and gradebook.db (the workspace $AUTOGRADER_WORKDIR and
# $AUTOGRADER_COURSE name: autograder.workspace)
for name, value in course_directory(from_environment()).items():
    setattr(c.CourseDirectory, name, value)

# nbconvert validates the notebook against nbformat's schema after every preprocessor (about ten
# times per notebook nbgrader converts); once, after the last one, is the same check of what is written
c.Exporter.optimistic_validation = True

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Autograding never executes a notebook: the verdicts were computed beforehand by
# autograder.grade (student code sandboxed, checks in a process that never ran it).
c.Autograde.create_student = True
c.Autograde.pre_convert_hook = compute_missing_verdicts
# nbgrader collect (CLI and formgrader) lands in submitted/ and stages what it collected
c.ExchangeFactory.collect = CollectIntoSubmitted
# nbgrader release_feedback (CLI and formgrader) warns in one line while answers await hand-grading
c.ExchangeFactory.release_feedback = ReleaseFeedbackWarningPending
# nbgrader's own lists, with its CheckCellMetadata compiling its JSON schema once (same checks), and
# its OverwriteCells and SaveAutoGrades reading a notebook's gradebook rows once instead of once a
# cell (c.PreloadedRows.preload = False: nbgrader's way; autograder/nbgrader_ext/preloaded.py)
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCellsPreloaded,
    CheckCellMetadataCompiled,
]
# the late penalty: nbgrader's LateSubmissionPlugin with the course's policies ('none', 'zero',
# 'percent' per day or hour, a cap, a grace period), still set as c.LateSubmissionPlugin.* in the
# user's nbgrader_config.py; make grade and make grades-final apply it again to the final score
c.AssignLatePenalties.plugin_class = LatePenalty
c.Autograde.autograde_preprocessors = [
    ApplyVerdicts,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGradesPreloaded,
    AssignLatePenalties,
    CheckCellMetadataCompiled,
]
# generate_assignment (make release, formgrader's Generate): nbgrader's own list, the same swap
c.GenerateAssignment.preprocessors = [
    CheckCellMetadataCompiled if p is CheckCellMetadata else p
    for p in GenerateAssignment.class_traits()["preprocessors"].default()
]
c.ClearMetadataPreprocessor.enabled = True
c.ClearMetadataPreprocessor.clear_cell_metadata = False
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = [("language_info", "name"), ("kernelspec",)]

# `nbgrader export` too: every field quoted and formula-neutralised, the file replaced atomically.
# A subclass of nbgrader's CsvExportPlugin whose default destination is the work folder's grades.csv:
# no `.to` is set here, so `--to FILE` and `c.CsvExportPlugin.to` (nbgrader's options) still win.
c.ExportApp.plugin_class = "autograder.outputs.csv_export.QuotedCsvExportPlugin"

# Feedback never shows hidden test code. Written answers were neutralised at staging (no tag
# survives) and grading notes where they are written. (nbconvert's SanitizeHTML is not in this list:
# nbgrader registers preprocessors without enabling them, so it never ran, and enabled it would
# escape the MathML the feedback carries.)
# nbgrader's GetGrades, also marking the grades still in the hand-grading queue ("awaiting hand-grading")
c.GenerateFeedback.preprocessors = [GetGradesWithQueue, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
# Feedback pages load nothing from outside: math is rendered to MathML at export.
c.GenerateFeedback.exporter_class = OfflineFeedbackExporter
# release_feedback needs a timestamp.txt beside each student's feedback, also for hand-delivered work
c.GenerateFeedback.post_convert_hook = complete_feedback_folder
