"""Grade a class on this machine: the pipeline that ``python -m autograder.grade`` (``make grade``) runs.

1. *Stage*: every ``submitted/<student>/<assignment>/<notebook>.ipynb`` (where ``nbgrader
   collect`` puts them) is read as data, never run, and never modified. Its answers are copied into
   a fresh copy of the released notebook in ``.grading/submitted/``, so deleted cells, edited test
   cells and changed points cannot matter; anything odd becomes a grading note.
2. *Verdicts* (parallel, one independent job per notebook): each graded function runs in the
   sandbox (:mod:`autograder.sandbox`) on inputs made here; only plain arrays come back, and the
   checks decide in this process, which never runs student code. A verdict is keyed by what it
   judged (the staged answers and the version of the checks): an unchanged notebook is not redone.
3. *nbgrader*: ``autograde`` (with :class:`~autograder.nbgrader_ext.plugins.ApplyVerdicts` instead
   of execution) for the submissions that changed, ``generate_feedback`` for those whose grades
   changed (hand-grading included), then ``export``, the LMS exports and the class report.
   Formgrader and manual grading keep working; hand grades of unchanged written answers are kept.

Each step has its module: :mod:`autograder.intake.staging`, :mod:`autograder.verdicts.decide`,
:mod:`autograder.nbgrader_ext.steps`, :mod:`autograder.nbgrader_ext.gradebook_state`; this one finds
the submissions, runs the steps in order (a process pool here, or a Dask cluster) and reports
(:mod:`autograder.reporting.run_summary`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed, wait

import nbformat

from autograder import sandbox, settings
from autograder.course.spec import notebooks_of
from autograder.errors import GradingError, RefusedInput
from autograder.intake import inbound
from autograder.intake import scan as intake
from autograder.intake.ignored_notebooks import ignored_notebooks
from autograder.intake.staging import stage
from autograder.late import due_dates, penalties
from autograder.late import policy as late_policy
from autograder.late.policy import Policy
from autograder.nbgrader_ext import gradebook_state, registration_cache
from autograder.nbgrader_ext.steps import already_staged, load_config, nbgrader_api, run_step
from autograder.outputs import json_files
from autograder.outputs.lms_export import students_without_identity
from autograder.pipeline import dask_cluster as distributed
from autograder.pipeline import final_exports
from autograder.reporting.run_summary import Progress, Summary
from autograder.verdicts import regrade_reason
from autograder.verdicts.decide import forget_kept, freshness, grading_secret, hidden_job, public_job, stored_verdict
from autograder.workspace import Workspace


def submissions(student: str | None = None, *, ws: Workspace) -> list[tuple[str, str]]:
    """(student, assignment) for every folder under submitted/ that may be graded (of one student)."""
    return [(s, a) for s, a in intake.scan(ws=ws).submissions if student is None or s == student]


def _end(refused: list[str], failed: list[str], log) -> None:
    """Name every student who got no trustworthy row; a non-zero exit if there is any."""
    if refused or failed:
        lines = refused + [f"nbgrader failed for {f}" for f in failed]
        raise GradingError(f"{len(lines)} problem(s); these students have no complete grade:\n  " + "\n  ".join(lines))


def _feedback_and_export(subs, autograded: set[tuple[str, str]], state: dict, workers: int, api, log,
                         steps: dict | None = None, overrides=None, *, ws: Workspace,
                         pool: ProcessPoolExecutor | None = None) -> list[str]:
    """generate_feedback for every submission whose grades changed since its feedback (or that was
    autograded now, or lacks a page; in the run's ``pool``, if given), then nbgrader's export, the LMS exports and the
    class report. Returns failures; the seconds of each step go to ``steps``."""
    steps = steps if steps is not None else {}
    t0 = time.perf_counter()
    db, course = api.coursedir.db_url, api.coursedir.course_id
    digests = state.setdefault("feedback", {})
    todo: dict[str, list[str]] = {}
    for s, a in subs:
        if ((s, a) in autograded or gradebook_state.grades_digest(db, course, s, a) != digests.get(f"{s}/{a}")
                or _pages_missing(ws, s, a)):
            todo.setdefault(a, []).append(s)
    failed = []
    for a, students in sorted(todo.items()):
        t = time.perf_counter()
        bad = run_step("generate_feedback", a, students, workers, log, overrides, ws=ws, pool=pool)
        failed += [f"{s} ({a}, feedback)" for s in bad]
        log(f"nbgrader generate_feedback {a}: {len(students)} students, {time.perf_counter() - t:.1f} s")
        for s in students:
            if s not in bad:
                digests[f"{s}/{a}"] = gradebook_state.grades_digest(db, course, s, a)
    steps["feedback"] = time.perf_counter() - t0
    final_exports.write(db, course, api.config, log, ws=ws, state=state, steps=steps)
    return failed


def _pages_missing(ws: Workspace, student: str, assignment: str) -> bool:
    """Whether an autograded notebook of this submission has no feedback page (deleted or never
    written): its grades may not have changed, but the student would receive nothing for it."""
    pages = ws.feedback / student / assignment
    return any(not (pages / f"{nb.stem}.html").is_file()
               for nb in (ws.autograded / student / assignment).glob("*.ipynb"))


def _late_work(api, policy: Policy, log, ws: Workspace) -> tuple[list[str], list[str]]:
    """Write the due dates and extensions of ``due-dates.csv`` into the gradebook, then every late
    notebook's penalty from its final score (:mod:`autograder.late`); before the feedback and the
    exports. Returns (the due dates and extensions changed now, every late submission)."""
    db, course = api.coursedir.db_url, api.coursedir.course_id
    changes = due_dates.apply(db, course, ws.due_dates)
    for line in changes:
        log(f"due date set: {line}")
    penalties.apply(db, course, policy)
    return changes, penalties.late_lines(db, course, policy)


def _change_lines(state: dict) -> list[str]:
    """The changes :func:`autograder.pipeline.final_exports.write` recorded, one line each
    (``alice/attention: 7 -> 10``)."""
    return [penalties.change_line(*change) for change in state.get("grade_changes", [])]


def finish(workers: int | None = None, log=print, *, ws: Workspace) -> None:
    """After hand-grading in formgrader: regenerate the feedback (where grades changed), grades.csv
    and the exports, re-running nothing."""
    workers = workers or os.cpu_count() or 1
    scan = intake.scan(ws=ws)
    state = gradebook_state.load(ws)
    api = nbgrader_api(ws=ws)
    policy = late_policy.policy_of(api.config)
    gradebook_state.index_gradebook(api.coursedir.db_url)
    _, late = _late_work(api, policy, log, ws)
    failed = _feedback_and_export(scan.submissions, set(), state, workers, api, log, ws=ws)
    changes = _change_lines(state)
    log(f"feedback regenerated; grades in {ws.grades_csv}, LMS files in {ws.exports}")
    log(f"late submissions: {len(late)} (policy: {policy.describe()})")
    log(f"grades changed since the last export: {len(changes)}")
    for line in changes:
        log(f"  - {line}")
    waiting = gradebook_state.awaiting_hand_grading(api.coursedir.db_url)
    if waiting:  # a warning, not a refusal: the exports mark these submissions PENDING
        log(f"warning: {gradebook_state.awaiting_line(waiting)} (not final: grade them in formgrader's "
            "Manual Grading, then make grades-final again)")
    _end(scan.refused, failed, log)


def stage_all(subs, force: bool, limits, summary: Summary, ws: Workspace,
              on_job: Callable[[tuple, list], None] | None = None) -> tuple[list[tuple], dict]:
    """Stage every submission; return the jobs whose verdict is missing or stale, and the staged
    notebooks by (student, assignment, notebook). ``on_job(job, notes)`` is called for each job as
    soon as it is known, with what staging said of its notebook (so it can be decided meanwhile)."""
    jobs, staged = [], {}
    for s, a in subs:
        handed_in = [nb for nb in notebooks_of(a, ws.course) if os.path.lexists(ws.submission(s, a) / f"{nb}.ipynb")]
        summary.missing += [f"{s}/{a}/{nb}" for nb in notebooks_of(a, ws.course) if nb not in handed_in]
        summary.ignored_notebooks += [f"{s}/{a}/{line}" for line in
                                      ignored_notebooks(ws.submission(s, a), notebooks_of(a, ws.course))]
        # a notebook not handed in scores zero in nbgrader without being staged; a student who
        # handed in nothing readable still gets every notebook staged, so the notes reach them
        for nb in notebooks_of(a, ws.course):
            if nb not in (handed_in or notebooks_of(a, ws.course)):
                ws.staged(s, a, nb).unlink(missing_ok=True)
        for nb in handed_in or notebooks_of(a, ws.course):
            said = stage(s, a, nb, ws)
            for note in said:
                summary.add_note(f"{s}/{a}/{nb}", note)
            staged[s, a, nb] = nbformat.read(ws.staged(s, a, nb), as_version=4)
            if force:  # every function runs again, not only those whose code changed
                forget_kept(s, a, nb, ws)
            state = "stale" if force else freshness(s, a, nb, staged[s, a, nb], limits, ws=ws)
            if state != "fresh":
                jobs.append((s, a, nb, limits))
                summary.settings_stale += state == "settings"
                if on_job is not None:
                    on_job(jobs[-1], said)
    return jobs, staged


def _job_results(futures: dict, summary: Summary, log):
    """(student, assignment, notebook, seconds) of each job (``futures``: future -> job) as it
    finishes. A job that raised (its worker died, say) is named in the summary and the run's exit;
    its verdict is left missing, so nbgrader's autograde decides it again, and the other jobs go on."""
    for future in as_completed(futures):
        s, a, nb, _limits = futures[future]
        try:
            yield future.result()
        except Exception as exc:
            summary.sandbox_failures.append(f"{s}/{a}/{nb}")
            log(f"error: deciding {s}/{a}/{nb} failed ({type(exc).__name__}); nbgrader's autograde decides it again")
            yield s, a, nb, 0.0


def _submit_with_progress(pool: ProcessPoolExecutor, jobs: list, progress: Progress,
                          ws: Workspace, firsts: list[Future] | None = None) -> list[Future]:
    """Decide every job in two phases: every job's public runs (:func:`public_job`), then, once all
    of them are done, every job's hidden runs and fair blame (:func:`hidden_job`), so on this machine
    no run whose feedback is detailed comes after a hidden run of the batch. Returns the second
    phase's futures; each reports its progress line the moment it finishes (from the pool's thread),
    not when the results are collected, which waits for the gradebook to be prepared. A job whose
    first phase raised (its worker died, say) gets a future holding that exception. ``firsts``: the
    first phase's futures, when the jobs were submitted as they were staged (:class:`PublicPhase`)."""
    def report(future: Future) -> None:
        if not future.cancelled() and future.exception() is None:
            s, a, nb, secs = future.result()
            progress.step(f"{s}/{a}/{nb}", secs)

    if firsts is None:
        firsts = [pool.submit(public_job, job, ws) for job in jobs]
    wait(firsts)  # every public run of the batch before any hidden run
    futures = []
    for first in firsts:
        if first.exception() is None:
            future = pool.submit(hidden_job, first.result(), ws)
        else:
            future = Future()
            future.set_exception(first.exception())
        future.add_done_callback(report)
        futures.append(future)
    return futures


def _decided_since_autograde(student: str, assignment: str, notebooks: list[str], ws: Workspace) -> bool:
    """Whether a verdict of these notebooks was written after nbgrader's autograded copy of it (by
    ``grade one`` or a Slurm array task): nbgrader's autograde must apply it."""
    for nb in notebooks:
        verdict, done = ws.verdict(student, assignment, nb), ws.autograded / student / assignment / f"{nb}.ipynb"
        if verdict.exists() and done.exists() and verdict.stat().st_mtime_ns > done.stat().st_mtime_ns:
            return True
    return False


def _intake(student: str | None, summary: Summary, log, ws: Workspace) -> tuple[intake.Intake, list]:
    """Scan ``submitted/``: log each refused folder (and list it in the summary) and keep the
    submissions to grade (of one ``student``, if given).

    Returns
    -------
    scan : intake.Intake
        The whole scan (its ``refused`` lines go to the run's exit).
    subs : list of (str, str)
        (student, assignment) of every submission to grade, in the scan's order.

    Raises
    ------
    RefusedInput
        If there is nothing to grade (for that student).
    """
    scan = intake.scan(ws=ws)
    for line in scan.refused:
        log(f"refused: {line}")
    summary.ignored = list(scan.refused)
    summary.collect_refused = [line for line in inbound.recorded_refusals(ws)
                               if student is None or line.split(": ", 2)[1] == student]
    subs = [(s, a) for s, a in scan.submissions if student is None or s == student]
    if not subs:
        who = f" for student {student!r}" if student else ""
        raise RefusedInput(f"nothing to grade{who}: put notebooks under {ws.submitted}/<student>/<assignment>/")
    summary.students = len(subs)
    return scan, subs


def _connect_or_self_test(scheduler: str | distributed.Target | None, grading: settings.Settings,
                          summary: Summary, log):
    """Reach the Dask cluster at ``scheduler`` (or, without one, test the local sandbox) before
    anything in the work folder changes, and put where and how notebooks run in the summary.

    Returns
    -------
    The connected cluster (:func:`autograder.pipeline.dask_cluster.connect`), or None to decide here.
    """
    cluster = distributed.connect(scheduler, grading.allow_fallback_sandbox, log) if scheduler else None
    if cluster is None:
        sandbox.self_test()
    summary.sandbox_mode = f"Dask cluster at {scheduler}" if cluster else sandbox.mode()
    summary.settings = settings.describe(grading.limits)
    summary.caps = "those of each Dask worker's machine" if cluster else sandbox.caps_in_force(grading.limits)
    return cluster


def _previous_state(force: bool, ws: Workspace) -> tuple[dict, bool]:
    """The state of the last run (empty if the gradebook is new or was deleted), and whether every
    nbgrader step must run again (``force``, or no gradebook)."""
    state = gradebook_state.load(ws)
    force_nbgrader = force or not ws.gradebook.exists()  # a new (or deleted) gradebook: every nbgrader step
    if not ws.gradebook.exists():
        state = {}
    return state, force_nbgrader


class PublicPhase:
    """The first phase of a local batch, started while the batch is staged: each job goes to the
    ``pool`` the moment staging finds it must be decided, with what staging said (its notebook is
    not staged again). Every job's second phase still waits for all of them
    (:func:`_submit_with_progress`)."""

    def __init__(self, pool: ProcessPoolExecutor, ws: Workspace) -> None:
        self.pool, self.ws = pool, ws
        self.firsts: list[Future] = []

    def submit(self, job: tuple, notes: list) -> None:
        self.firsts.append(self.pool.submit(public_job, job, self.ws, notes))


def _stage_and_plan(subs: list, force: bool, limits: sandbox.Limits, where: str, summary: Summary, log,
                    ws: Workspace, public: PublicPhase | None) -> tuple[list[tuple], dict, float]:
    """Stage every submission (:func:`stage_all`; each job's ``public`` phase starts as soon as it is
    staged), count the verdicts that still hold and log the plan (``where``: where the notebooks
    will be decided).

    Returns
    -------
    jobs, staged
        As :func:`stage_all`.
    seconds : float
        The time staging took.
    """
    t_stage = time.perf_counter()
    decided_with = regrade_reason.current(sorted({a for _, a in subs}), ws.course)
    summary.decided_again_because = regrade_reason.reasons(regrade_reason.read(ws), decided_with)
    jobs, staged = stage_all(subs, force, limits, summary, ws, public.submit if public else None)
    t_stage = time.perf_counter() - t_stage
    summary.reused = len(staged) - len(jobs)
    log(f"{len(subs)} submissions, {len(staged)} notebooks: {len(jobs)} to grade {where}, "
        f"{summary.reused} unchanged since the last run")
    for line in summary.decided_again_because:
        log(f"decided again because {line}")
    regrade_reason.write(ws, decided_with)
    return jobs, staged, t_stage


def register_assignments(api, subs: list, state: dict, force_nbgrader: bool, ws: Workspace) -> None:
    """``generate_assignment`` in nbgrader's gradebook for every assignment of ``subs`` whose course
    files changed since it was registered (all with ``force_nbgrader``); the digests go to ``state``.
    A new gradebook starts as the course's kept registration of the same notebooks, when there is one
    (:mod:`autograder.nbgrader_ext.registration_cache`), and keeps its own for the next one otherwise."""
    digests = {a: gradebook_state.course_digest(a, ws) for a in sorted({a for _, a in subs})}
    new = not ws.gradebook.exists()
    if new and registration_cache.restore(api, digests, ws):
        state.setdefault("course", {}).update(digests)
    else:
        for a, digest in digests.items():
            if force_nbgrader or state.get("course", {}).get(a) != digest:
                result = api.generate_assignment(a, force=True)
                if not result["success"]:
                    raise GradingError(f"nbgrader generate_assignment {a} failed:\n{result.get('error')}")
                state.setdefault("course", {})[a] = digest
        if new:
            registration_cache.keep(api, digests, ws)
    gradebook_state.index_gradebook(api.coursedir.db_url)


def _decide_and_register(jobs: list[tuple], public: PublicPhase | None, subs: list, cluster,
                         grading: settings.Settings, overrides, state: dict, force_nbgrader: bool,
                         summary: Summary, log, ws: Workspace):
    """Decide every job (on ``cluster``, or locally, where their ``public`` phase is under way)
    while the changed assignments are registered in nbgrader's gradebook (its API configured with
    ``overrides``); count the decided notebooks and close the cluster.

    Returns
    -------
    The nbgrader API (:func:`autograder.nbgrader_ext.steps.nbgrader_api`) the later steps use.
    """
    progress = Progress(len(jobs), log)
    if cluster:
        pending = cluster.decide(jobs, grading_secret(ws).decode(), log, ws=ws, grading=grading)
    else:
        futures = _submit_with_progress(public.pool, jobs, progress, ws, public.firsts)
        pending = _job_results(dict(zip(futures, jobs, strict=True)), summary, log)
    api = nbgrader_api(overrides, ws=ws)  # meanwhile, register changed assignments in the gradebook
    register_assignments(api, subs, state, force_nbgrader, ws)
    for s, a, nb, secs in pending:
        summary.decided += 1
        if cluster:  # a local notebook was counted when it finished (_submit_with_progress)
            progress.step(f"{s}/{a}/{nb}", secs)
    if cluster:
        cluster.close()
    return api


def grading_pool(workers: int, grading: settings.Settings, context=None) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes that grade with ``grading``: each worker applies the settings
    itself when it starts (its initializer), so they hold whatever the start method (``context``:
    fork, spawn, forkserver; the platform's default when ``None``), not because a forked worker
    inherited this process's module globals."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=grading.apply)


def _count_sandbox_failures(jobs: list[tuple], summary: Summary, ws: Workspace) -> None:
    """List in the summary every job whose stored verdict says the grader could not process it."""
    for s, a, nb, _l in jobs:
        if (verdict := stored_verdict(s, a, nb, ws)) is not None and verdict.failed:
            summary.sandbox_failures.append(f"{s}/{a}/{nb}")


def _to_autograde(subs: list, jobs: list[tuple], staged: dict, force_nbgrader: bool,
                  ws: Workspace) -> set[tuple[str, str]]:
    """(student, assignment) that nbgrader's autograde must see: those whose verdicts changed (all
    with ``force_nbgrader``), or that nbgrader has not autograded as they are now (another timestamp
    or other notebooks: e.g. formgrader's button was used)."""
    changed = set(subs) if force_nbgrader else {(s, a) for s, a, _nb, _l in jobs}
    for s, a in subs:
        mine = {nb: n for (s2, a2, nb), n in staged.items() if (s2, a2) == (s, a)}
        if (not gradebook_state.autograded_is_current(s, a, list(mine), gradebook_state.written_answers(mine), ws)
                or _decided_since_autograde(s, a, list(mine), ws)):
            changed.add((s, a))
    return changed


def _autograde(changed: set[tuple[str, str]], workers: int, overrides, summary: Summary, log,
               ws: Workspace, pool: ProcessPoolExecutor) -> list[str]:
    """nbgrader's autograde (in the run's ``pool``), one assignment at a time, for the submissions in
    ``changed``; the students it autograded go to the summary. Returns the failures, one line per student."""
    failed = []
    for a in sorted({a for _, a in changed}):
        students = sorted(s for s, a2 in changed if a2 == a)
        t = time.perf_counter()
        # nbgrader's autograde keeps hand grading itself (nbgrader_plugins.install), as for the button
        # every submission of the run was staged by stage_all: autograde does not stage it again
        bad = run_step("autograde", a, students, workers, log, already_staged(overrides), ws=ws, pool=pool)
        failed += [f"{s} ({a}, autograde)" for s in bad]
        summary.autograded += [f"{s}/{a}" for s in students if s not in bad]
        log(f"nbgrader autograde {a}: {len(students)} students, {time.perf_counter() - t:.1f} s")
    return failed


def _settle_hand_grades(subs: list, api, log, ws: Workspace) -> None:
    """Settle again the hand grades put back in the queue by an earlier autograde (formgrader's
    button, say) whose answer is the one they were given for; changed answers keep waiting."""
    db, course = api.coursedir.db_url, api.coursedir.course_id
    kept = sum(gradebook_state.settle_hand_grades(db, course, s, a, gradebook_state.autograded_answers(s, a, ws), ws)[0]
               for s, a in subs)
    if kept:
        log(f"{kept} hand grades of unchanged written answers taken out of the hand-grading queue again")


def _summarise(subs: list, jobs: list[tuple], failed: list[str], api, summary: Summary, t0: float,
               t_verdicts: float, steps: dict, log, ws: Workspace) -> dict:
    """Complete the summary (nbgrader's problems, the roster, what awaits hand-grading), write it and
    ``timings.json``.

    Returns
    -------
    dict
        ``notebooks`` (jobs decided), ``seconds`` (the whole run since ``t0``), ``verdict_seconds``
        and ``steps`` (seconds by step), as written to ``timings.json``.
    """
    db, course = api.coursedir.db_url, api.coursedir.course_id
    summary.nbgrader_problems = failed
    summary.unknown_students = gradebook_state.roster_report(db, course, sorted({s for s, _ in subs}))
    summary.no_lms_identity = students_without_identity(db, course, ws.roster)
    summary.awaiting = [f"{w.student}/{w.assignment}/{w.notebook}: {w.grade_id}"
                        for w in gradebook_state.awaiting_hand_grading(db)]
    summary.seconds = time.perf_counter() - t0
    summary.write(ws.summary, log)
    log(f"verdicts in {t_verdicts:.1f} s; whole run {summary.seconds:.1f} s; grades in {ws.grades_csv}")
    out = {"notebooks": len(jobs), "seconds": summary.seconds, "verdict_seconds": t_verdicts, "steps": steps}
    json_files.write(ws.grading / "timings.json", "timings", out)
    return out


def grade_class(workers: int | None = None, limits: sandbox.Limits = sandbox.DEFAULT, log=print,
                scheduler: str | distributed.Target | None = None, allow_fallback: bool = False,
                student: str | None = None, force: bool = False,
                grading: settings.Settings | None = None, *, ws: Workspace) -> dict:
    """Grade what changed since the last run (everything with ``force``; one student with
    ``student``) and produce the gradebook, feedback, grades.csv, the exports and the summary.

    ``grading`` is the run's settings (:func:`autograder.settings.configured`); without it, those
    of ``workers``, ``limits`` and ``allow_fallback``. The nbgrader steps get them as their
    configuration's overrides, so their hook decides with the same settings. Everything is read
    and written in the work folder of ``ws``; the course itself (its notebooks and checks) is
    still read where :mod:`autograder.course.spec` finds it, the course root of the process's default
    workspace.

    With ``scheduler`` (a checked :class:`~autograder.pipeline.dask_cluster.Target`, or an address checked
    with the default credentials), the notebooks are decided on that cluster
    (:mod:`autograder.pipeline.dask_cluster`) and only the nbgrader steps run here.
    """
    t0 = time.perf_counter()
    policy = late_policy.policy_of(load_config())  # a setting it cannot take stops the run before any work
    grading = grading or settings.Settings(limits=limits, workers=workers or 0, allow_fallback_sandbox=allow_fallback)
    overrides, workers = grading.config(), grading.worker_count()
    summary = Summary()
    scan, subs = _intake(student, summary, log, ws)
    cluster = _connect_or_self_test(scheduler, grading, summary, log)
    state, force_nbgrader = _previous_state(force, ws)
    where = f"on the Dask cluster at {scheduler}" if cluster else f"with {workers} workers (sandbox: {sandbox.mode()})"
    # one pool for the run: its workers decide (each notebook as soon as it is staged), then run
    # nbgrader's steps (each keeping nbgrader's API)
    with grading_pool(workers, grading) as pool:
        public = None if cluster else PublicPhase(pool, ws)
        jobs, staged, t_stage = _stage_and_plan(subs, force, grading.limits, where, summary, log, ws, public)
        api = _decide_and_register(jobs, public, subs, cluster, grading, overrides, state, force_nbgrader,
                                   summary, log, ws)
        _count_sandbox_failures(jobs, summary, ws)
        t_verdicts = time.perf_counter() - t0
        # staging is timed on its own; "verdicts" is the rest up to here (the sandbox runs and checks)
        steps = {"staging": t_stage, "verdicts": t_verdicts - t_stage, "autograde": 0.0, "feedback": 0.0}

        changed = _to_autograde(subs, jobs, staged, force_nbgrader, ws)
        state.pop("answers", None)  # kept per submission now (gradebook_state.ANSWERS)
        t1 = time.perf_counter()
        failed = _autograde(changed, workers, overrides, summary, log, ws, pool)
        _settle_hand_grades(subs, api, log, ws)
        summary.due_dates_set, late = _late_work(api, policy, log, ws)
        summary.late = [line for line in late if line.split("/")[0] in {s for s, _ in subs}]
        summary.late_policy = policy.describe()
        steps["autograde"] = time.perf_counter() - t1
        gradebook_state.save(state, ws)

        failed += _feedback_and_export(subs, changed, state, workers, api, log, steps, overrides, ws=ws, pool=pool)
    summary.score_changes = _change_lines(state)
    out = _summarise(subs, jobs, failed, api, summary, t0, t_verdicts, steps, log, ws)
    _end(scan.refused + [f"{f.split(':')[0]}: the grader could not process it" for f in summary.sandbox_failures],
         failed, log)
    return out
