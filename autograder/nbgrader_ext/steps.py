"""nbgrader's own steps (autograde with precomputed verdicts, feedback, CSV export) through its
Python API, run over disjoint groups of students in parallel processes.

The configuration is nbgrader's own chain, read exactly as ``nbgrader`` and formgrader read it
when started in ``autograder/``: every Jupyter config folder's ``nbgrader_config.py`` (user and
system level), then the course's ``autograder/nbgrader_config.py``. A setting made for formgrader
(a late penalty, say) is therefore honoured by ``make grade`` too.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path

from traitlets.config import Config

from autograder.errors import GradingError, RefusedInput
from autograder.nbgrader_ext.course_folders import course_directory
from autograder.workspace import AUTOGRADER, Workspace


def load_config():
    """nbgrader's configuration chain as its CLI and formgrader load it from ``autograder/``.

    Raises
    ------
    autograder.errors.RefusedInput
        Naming the file, when a configuration file fails to load. (nbgrader itself logs the error
        and goes on with its defaults, under which autograde would run student code in this process.)
    """
    from nbgrader.apps.baseapp import NbGrader

    app = NbGrader(raise_config_file_errors=True)
    try:
        with _chdir(AUTOGRADER):
            app.load_config_file()
    except Exception as exc:
        files = [f.filename for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith("_config.py")]
        where = files[-1] if files else "nbgrader's configuration"
        raise RefusedInput(f"{where} failed to load ({type(exc).__name__}: {exc}); "
                         "stopped before nbgrader changed anything") from exc
    return app.config


@contextlib.contextmanager
def _chdir(path: Path):  # contextlib.chdir needs Python 3.11
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def nbgrader_api(overrides: Config | None = None, *, ws: Workspace):
    """nbgrader's Python API with nbgrader's configuration chain (one import per process), the
    folders of ``ws``, and ``overrides`` above it (a ``make grade`` run's
    :meth:`~autograder.settings.Settings.config`: the hook its autograde runs decides with the
    run's settings)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = load_config()  # also makes a new gradebook read its schema revision in-process
    config.merge(Config({"CourseDirectory": course_directory(ws)}))
    # its generate_feedback runs between the run's own late penalties and exports (grading_run)
    config.merge(Config({"FinalScoresAroundFeedback": {"refresh": False}}))
    if overrides:
        config.merge(overrides)
    # the release that grading needs goes to the work folder, leaving notebooks/ alone
    config.CourseDirectory.release_directory = str(ws.grading / "release")
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


#: nbgrader's API of this worker process, by workspace and configuration (:func:`_worker_api`)
_WORKER_APIS: dict[tuple[int, Workspace, str], object] = {}


def _worker_api(overrides: Config | None, ws: Workspace):
    """:func:`nbgrader_api`, made once per pool worker, workspace and configuration: a worker of a
    run's pool autogrades, then makes feedback, for many groups (the pool ends with the run, and so
    does what it kept)."""
    key = (os.getpid(), ws, repr(overrides))
    if key not in _WORKER_APIS:
        _WORKER_APIS[key] = nbgrader_api(overrides, ws=ws)
    return _WORKER_APIS[key]


def _run_step_group(args: tuple[str, str, list[str], Config | None, Workspace],
                    in_worker: bool = False) -> list[tuple[str, str]]:
    """Run one nbgrader step for a group of students in this process; return (student, problem).
    ``in_worker``: this is a pool's worker, which keeps its nbgrader API for the next group."""
    import warnings

    from sqlalchemy.exc import SAWarning

    # nbgrader's own ORM use warns on notebooks that were not handed in; the grades are right
    warnings.filterwarnings("ignore", category=SAWarning)
    step, assignment, students, overrides, ws = args
    api = _worker_api(overrides, ws) if in_worker else nbgrader_api(overrides, ws=ws)
    problems = []
    for student in students:
        result = (api.autograde(assignment, student, force=True, create=True) if step == "autograde"
                  else api.generate_feedback(assignment, student, force=True))
        if not result["success"]:
            problems.append((student, _last_error(result)))
    return problems


def _run_in_worker(args: tuple[str, str, list[str], Config | None, Workspace]) -> list[tuple[str, str]]:
    return _run_step_group(args, in_worker=True)


def _last_error(result: dict) -> str:
    """The line of nbgrader's report that says what went wrong (e.g. a refused stale verdict)."""
    text = (result.get("error") or "") + "\n" + (result.get("log") or "")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "StaleVerdict" in ln:
            return ln[-600:]
    return (result.get("error") or "")[-1500:]


def run_step(step: str, assignment: str, students: list[str], workers: int, log,
             overrides: Config | None = None, *, ws: Workspace, pool: Executor | None = None) -> list[str]:
    """Run an nbgrader step over disjoint groups of students at once (in ``pool``, the run's pool of
    ``workers`` processes, else in a pool of its own), then redo any student that reported a problem
    on its own (e.g. a busy SQLite gradebook), so the result never depends on the parallelism.
    Return the students it still failed for (each also logged). ``overrides`` go above nbgrader's
    configuration chain, and the folders are those of ``ws`` (:func:`nbgrader_api`)."""
    if not students:
        return []
    groups = [students[i::workers] for i in range(min(workers, len(students)))]
    jobs = [(step, assignment, g, overrides, ws) for g in groups]
    if len(groups) == 1:  # one group (one student, or one worker): here, as the retry below, no pool to start
        problems = _run_step_group(jobs[0])
    elif pool is not None:
        problems = [p for ps in pool.map(_run_in_worker, jobs) for p in ps]
    else:
        with ProcessPoolExecutor(max_workers=len(groups)) as own:
            problems = [p for ps in own.map(_run_in_worker, jobs) for p in ps]
    retry = [student for student, _ in problems]
    failed = _run_step_group((step, assignment, retry, overrides, ws)) if retry else []
    for student, message in failed:
        log(f"error: nbgrader {step} failed for {student} ({assignment}): {message}")
    return [student for student, _ in failed]


def already_staged(overrides: Config | None) -> Config:
    """``overrides`` (a copy) for an autograde of submissions this process staged just before
    (``make grade``'s): nbgrader's autograde does not stage them again
    (:class:`~autograder.nbgrader_ext.plugins.AutogradeStaging`)."""
    config = Config()
    if overrides:
        config.merge(overrides)
    config.merge(Config({"AutogradeStaging": {"restage": False}}))
    return config


def export(api=None, *, ws: Workspace) -> None:
    """Write grades.csv from the gradebook (nbgrader's export columns, quoted, replaced atomically),
    always to the work folder's grades.csv: an instructor's ``c.CsvExportPlugin.to`` is for their own
    ``nbgrader export``."""
    from nbgrader.api import Gradebook

    from autograder.outputs.csv_export import QuotedCsvExportPlugin

    api = api or nbgrader_api(ws=ws)
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        QuotedCsvExportPlugin(config=api.config, to=str(ws.grades_csv)).export(gb)
    if not ws.grades_csv.exists():
        raise GradingError("nbgrader export wrote no grades.csv")
