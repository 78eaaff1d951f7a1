"""Grade a class: ``python -m autograder.grade`` (what ``make grade`` runs): the command line only.

It reads the flags and the settings (:mod:`autograder.settings`), builds the run's workspace
(:mod:`autograder.workspace`) and hands over to the pipeline: on this machine
(:mod:`autograder.pipeline.grading_run`, which stages, decides and runs nbgrader's steps), on a Dask
cluster (``--scheduler``, :mod:`autograder.pipeline.dask_cluster`) or through Slurm (``--slurm``,
``--array-task``). Errors of the grader (:mod:`autograder.errors`) become one line and an exit
status here and nowhere else.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from pathlib import Path

from autograder import settings
from autograder.errors import RefusedInput, command_line
from autograder.intake import scan as intake
from autograder.pipeline import dask_cluster as distributed
from autograder.pipeline import run_lock, slurm_array, slurm_cluster
from autograder.pipeline.grading_run import finish, grade_class, submissions
from autograder.verdicts.decide import grade_one
from autograder.workspace import Workspace, from_environment


def _scheduler_security_flags(p: argparse.ArgumentParser) -> None:
    """How the client proves itself to a Dask cluster (see :mod:`autograder.pipeline.dask_cluster`)."""
    for flag, default in (("--tls-ca", "ca.pem"), ("--tls-cert", "client.pem"), ("--tls-key", "client-key.pem")):
        p.add_argument(flag, metavar="FILE", default=None,
                       help=f"with --scheduler tls://...: default autograder/.dask-tls/{default} (make dask-certs)")
    p.add_argument(distributed.INSECURE_LOOPBACK_FLAG, action="store_true",
                   help="with --scheduler tcp://127.0.0.1:PORT: accept a plain-TCP scheduler on this machine, which "
                        "every user of it can use to run code on the workers and read the grading secret")


def _line_buffered() -> None:
    """Print each line as it is written, also into a pipe (``make grade | tee``, a CI log), where
    Python would otherwise hold the progress lines back until the run ends."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True)


def _settings(a: argparse.Namespace) -> settings.Settings:
    """The run's settings: nbgrader's configuration chain, the environment, then the flags."""
    from traitlets import TraitError

    try:
        return settings.configured(cpu_seconds=a.cpu_seconds, memory_mb=a.memory_mb, workers=a.workers,
                                   allow_fallback_sandbox=a.allow_fallback_sandbox)
    except TraitError as exc:
        raise RefusedInput(f"refused: {str(exc).splitlines()[0]}") from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=None,
                   help="parallel grading jobs (default: c.GradingSettings.workers, else all cores)")
    p.add_argument("--cpu-seconds", type=int, default=None,
                   help="CPU limit per exercise (default: c.GradingSettings.cpu_seconds, else 60)")
    p.add_argument("--memory-mb", type=int, default=None,
                   help="memory cap per exercise run, each process and all together where a cgroup can be made "
                        "(default: c.GradingSettings.memory_mb, else 2048)")
    p.add_argument("--student", default=None, help="grade only this student (make grade STUDENT=...)")
    p.add_argument("--force", action="store_true", help="grade everything again, even what did not change")
    p.add_argument("--one", nargs=3, metavar=("STUDENT", "ASSIGNMENT", "NOTEBOOK"),
                   help="only decide one notebook (a job for an external scheduler); no nbgrader step")
    p.add_argument("--finish", action="store_true",
                   help="after manual grading in formgrader: only regenerate feedback and the exports")
    p.add_argument("--scheduler", metavar="tls://HOST:PORT",
                   help="decide the notebooks on this Dask cluster (TLS, see make dask-certs); the nbgrader steps "
                        "still run here")
    p.add_argument("--allow-fallback-sandbox", action="store_true",
                   help="with --scheduler, --slurm or --array-task: let workers without bubblewrap grade (weaker "
                        "isolation; default: c.GradingSettings.allow_fallback_sandbox)")
    p.add_argument("--slurm", type=int, metavar="JOBS",
                   help="decide the notebooks on JOBS Slurm jobs (dask-jobqueue, TLS with every role's files in the "
                        "folder of --tls-ca, default autograder/.dask-tls/; job sizes: Dask config jobqueue.slurm)")
    p.add_argument("--array-task", metavar="I/N",
                   help="a Slurm array task (scripts/slurm-grade-array.sh): decide range I of N of the students; "
                        "no nbgrader step")
    p.add_argument("--work-folder", type=Path, metavar="DIR", default=None,
                   help="the work folder (default: $AUTOGRADER_WORKDIR, else autograder/); a Slurm array task is "
                        "given it by scripts/slurm-grade-array.sh")
    p.add_argument("--course-root", type=Path, metavar="DIR", default=None,
                   help="the course root holding solutions/ and notebooks/ (default: $AUTOGRADER_COURSE, else "
                        "the repository)")
    p.add_argument("--after-array", type=int, metavar="N",
                   help="after an array of N tasks: refuse, naming the ranges left, unless every notebook is decided")
    _scheduler_security_flags(p)
    p.add_argument("--help-config", action="store_true",
                   help="print every grading setting (c.GradingSettings.* in nbgrader_config.py) with its help and "
                        "default, as nbgrader generate_config writes them, and exit")
    return p


@command_line
def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    if a.help_config:
        print(settings.help_config())
        return 0
    _line_buffered()
    if a.slurm is not None and a.scheduler:
        raise RefusedInput("refused: --slurm starts its own cluster; give it or --scheduler, not both")
    if a.scheduler:  # refused (one line) before anything is locked, read or contacted
        a.scheduler = distributed.scheduler_target(a.scheduler, a.insecure_loopback_scheduler,
                                                   a.tls_ca, a.tls_cert, a.tls_key)
    grading = _settings(a)
    grading.apply()  # this process and the workers it forks grade in the chosen sandbox
    ws = from_environment()  # the one workspace of this run, passed down
    if a.work_folder is not None or a.course_root is not None:
        ws = Workspace(work=a.work_folder or ws.work, course=a.course_root or ws.course)
    if a.finish:
        with run_lock.hold(ws=ws):
            finish(grading.worker_count(), ws=ws)
        return 0
    limits = grading.limits
    if a.one:
        student, assignment, _notebook = a.one
        if (student, assignment) not in submissions(ws=ws):
            where = intake.shown(ws.submission(student, assignment), ws)
            raise RefusedInput(f"not graded: {where} is refused or missing (run without --one to see why)")
        with run_lock.hold(shared=True, ws=ws):
            v = grade_one(*a.one, limits=limits, ws=ws)
        print(json.dumps({k: v.to_json()[k] for k in ("cells", "notes")}, ensure_ascii=False, indent=1))
        return 0
    if a.array_task:
        task = slurm_array.parse_task(a.array_task)
        with run_lock.hold(shared=True, ws=ws):
            failed = slurm_array.decide_task(*task, grading, ws)
        return 1 if failed else 0
    with run_lock.hold(ws=ws):
        if a.after_array:
            options = [f"--{k.replace('_', '-')} {v}" for k, v in (("cpu_seconds", a.cpu_seconds),
                                                                    ("memory_mb", a.memory_mb)) if v is not None]
            options += [f"--work-folder {ws.work}", f"--course-root {ws.course}"]  # the array is told, not inherits
            slurm_array.check_merged(a.after_array, limits, ws, " ".join(options))
        with (slurm_cluster.started(a.slurm, a.tls_ca, a.tls_cert, a.tls_key, ws=ws) if a.slurm is not None
              else nullcontext(a.scheduler)) as scheduler:
            grade_class(scheduler=scheduler, student=a.student, force=a.force, grading=grading, ws=ws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
