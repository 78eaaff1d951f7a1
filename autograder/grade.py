"""Grade a class: ``python -m autograder.grade`` (what ``make grade`` runs).

1. *Stage*: every ``submitted/<student>/<assignment>/<notebook>.ipynb`` is read as data, never
   run. Its answers are copied into a fresh copy of the released notebook, so deleted cells,
   edited test cells and changed points cannot matter; anything odd becomes a grading note.
   Unreadable files are graded as unanswered, with the reason.
2. *Verdicts* (parallel, one independent job per notebook): each graded function runs in the
   sandbox (:mod:`autograder.sandbox`) on inputs made here; only plain arrays come back, and the
   checks decide in this process, which never runs student code.
3. *nbgrader*: ``autograde`` (with :class:`~autograder.nbgrader_plugins.ApplyVerdicts` instead
   of execution), ``generate_feedback`` and ``export`` fill the gradebook, the feedback and
   ``grades.csv`` as usual, so formgrader and manual grading keep working.

Each step has its module: :mod:`autograder.staging`, :mod:`autograder.verdicts`,
:mod:`autograder.nbgrader_steps`; this one finds the submissions and runs the steps in order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from . import distributed, intake, report, run_lock, sandbox
from .nbgrader_steps import export, nbgrader_api, run_step
from .paths import GRADES_CSV, GRADING, STAGED, SUBMITTED
from .spec import notebooks_of
from .verdicts import _secret, grade_one, timed_job


def submissions() -> list[tuple[str, str]]:
    """(student, assignment) for every folder under submitted/ that may be graded."""
    return intake.scan().submissions


def _end(refused: list[str], failed: list[str], log) -> None:
    """Name every student who got no trustworthy row; a non-zero exit if there is any."""
    if refused or failed:
        lines = refused + [f"nbgrader failed for {f}" for f in failed]
        raise SystemExit(f"{len(lines)} problem(s); these students have no complete grade:\n  " + "\n  ".join(lines))


def finish(workers: int | None = None, log=print) -> None:
    """After hand-grading in formgrader: regenerate the feedback and grades.csv, re-running nothing."""
    workers = workers or os.cpu_count() or 1
    scan = intake.scan()
    subs = scan.submissions
    failed = []
    for assignment in sorted({a for _, a in subs}):
        students = sorted(s for s, a in subs if a == assignment)
        failed += [f"{s} ({assignment}, feedback)" for s in run_step("generate_feedback", assignment, students,
                                                                      workers, log)]
    export()
    report.write_quietly(log)
    log(f"feedback regenerated; grades in {GRADES_CSV}")
    _end(scan.refused, failed, log)


def grade_class(workers: int | None = None, limits: sandbox.Limits = sandbox.DEFAULT, log=print,
                scheduler: str | None = None, allow_fallback: bool = False) -> dict:
    """Grade every submission and produce the gradebook, feedback and grades.csv.

    With ``scheduler`` (a Dask address), the notebooks are decided on that cluster
    (:mod:`autograder.distributed`) and only the nbgrader steps run here.
    """
    t0 = time.perf_counter()
    scan = intake.scan()
    for line in scan.refused:
        log(f"refused: {line}")
    subs = scan.submissions
    if not subs:
        raise SystemExit(f"nothing to grade: put notebooks under {SUBMITTED}/<student>/<assignment>/")
    # the cluster is reached (or the run stops) before anything in the work folder changes
    cluster = distributed.connect(scheduler, allow_fallback, log) if scheduler else None
    if STAGED.exists():
        shutil.rmtree(STAGED)
    shutil.rmtree(GRADING / "verdicts", ignore_errors=True)
    if cluster is None:
        sandbox.self_test()
    assignments = sorted({a for _, a in subs})
    jobs = []
    for s, a in subs:
        handed_in = [nb for nb in notebooks_of(a) if os.path.lexists(SUBMITTED / s / a / f"{nb}.ipynb")]
        # a notebook not handed in scores zero in nbgrader without being staged; a student who
        # handed in nothing readable still gets every notebook staged, so the notes reach them
        jobs += [(s, a, nb, limits) for nb in (handed_in or notebooks_of(a))]
    workers = workers or os.cpu_count() or 1
    where = f"on the Dask cluster at {scheduler}" if cluster else f"with {workers} workers (sandbox: {sandbox.mode()})"
    log(f"grading {len(jobs)} notebooks of {len(subs)} submissions {where}")
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending = cluster.decide(jobs, _secret().decode(), log) if cluster else pool.map(timed_job, jobs)
        api = nbgrader_api()  # meanwhile, register the assignments in the gradebook
        for a in assignments:
            result = api.generate_assignment(a, force=True)
            if not result["success"]:
                raise SystemExit(f"nbgrader generate_assignment {a} failed:\n{result.get('error')}")
        per_nb = [secs for _s, _a, _nb, secs in pending]
    if cluster:
        cluster.close()
    t_verdicts = time.perf_counter() - t0
    steps = {"verdicts": t_verdicts, "autograde": 0.0, "feedback": 0.0}
    failed = []
    for a in assignments:
        students = sorted(s for s, a2 in subs if a2 == a)
        t1 = time.perf_counter()
        failed += [f"{s} ({a}, autograde)" for s in run_step("autograde", a, students, workers, log)]
        t2 = time.perf_counter()
        failed += [f"{s} ({a}, feedback)" for s in run_step("generate_feedback", a, students, workers, log)]
        steps["autograde"] += t2 - t1
        steps["feedback"] += time.perf_counter() - t2
        log(f"nbgrader {a}: autograde {t2 - t1:.1f} s, feedback {time.perf_counter() - t2:.1f} s")
    t3 = time.perf_counter()
    export(api)
    steps["export"] = time.perf_counter() - t3
    report.write_quietly(log)
    steps["report"] = time.perf_counter() - t3 - steps["export"]
    total = time.perf_counter() - t0
    log(f"verdicts in {t_verdicts:.1f} s (median {np.median(per_nb):.2f} s of sandboxed work per notebook); "
        f"whole run {total:.1f} s; grades in {GRADES_CSV}")
    out = {"notebooks": len(jobs), "seconds": total, "verdict_seconds": t_verdicts, "steps": steps}
    (GRADING / "timings.json").write_text(json.dumps(out))
    _end(scan.refused, failed, log)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=None, help="parallel grading jobs (default: all cores)")
    p.add_argument("--cpu-seconds", type=int, default=60, help="CPU limit per exercise")
    p.add_argument("--memory-mb", type=int, default=2048, help="address-space cap per exercise")
    p.add_argument("--one", nargs=3, metavar=("STUDENT", "ASSIGNMENT", "NOTEBOOK"),
                   help="only decide one notebook (a job for an external scheduler); no nbgrader step")
    p.add_argument("--finish", action="store_true",
                   help="after manual grading in formgrader: only regenerate feedback and grades.csv")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="decide the notebooks on this Dask cluster; the nbgrader steps still run here")
    p.add_argument("--allow-fallback-sandbox", action="store_true",
                   help="with --scheduler: let workers without bubblewrap grade (weaker isolation)")
    a = p.parse_args(argv)
    if a.finish:
        with run_lock.hold():
            finish(a.workers)
        return 0
    limits = sandbox.Limits(cpu_seconds=a.cpu_seconds, memory_bytes=a.memory_mb << 20)
    if a.one:
        student, assignment, _notebook = a.one
        if (student, assignment) not in submissions():
            raise SystemExit(f"not graded: {intake.shown(SUBMITTED / student / assignment)} is refused or missing "
                             "(run without --one to see why)")
        with run_lock.hold(shared=True):
            v = grade_one(*a.one, limits=limits)
        print(json.dumps({k: v.get(k) for k in ("cells", "notes")}, ensure_ascii=False, indent=1))
        return 0
    with run_lock.hold():
        grade_class(a.workers, limits, scheduler=a.scheduler, allow_fallback=a.allow_fallback_sandbox)
    return 0


if __name__ == "__main__":
    sys.exit(main())
