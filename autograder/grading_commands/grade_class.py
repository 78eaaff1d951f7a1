"""``python -m autograder.grade [class]`` (``make grade``): grade the class, on this machine
(:mod:`autograder.pipeline.grading_run`: stage, decide, nbgrader's steps, the exports), on a Dask
cluster (``--scheduler``) or on Slurm jobs (``--slurm``); ``--after-array N`` merges a Slurm array."""

from __future__ import annotations

import argparse
from contextlib import nullcontext

from autograder.errors import RefusedInput
from autograder.grading_commands import common
from autograder.pipeline import dask_cluster as distributed
from autograder.pipeline import run_lock, slurm_array, slurm_cluster
from autograder.pipeline.grading_run import grade_class

NAME = "class"
HELP = "grade every submission (the default: what make grade runs)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--student", default=None, help="grade only this student (make grade STUDENT=...)")
    p.add_argument("--force", action="store_true", help="grade everything again, even what did not change")
    p.add_argument("--scheduler", metavar="tls://HOST:PORT",
                   help="decide the notebooks on this Dask cluster (TLS, see make dask-certs); the nbgrader steps "
                        "still run here")
    p.add_argument("--slurm", type=int, metavar="JOBS",
                   help="decide the notebooks on JOBS Slurm jobs (dask-jobqueue, TLS with every role's files in the "
                        "folder of --tls-ca, default autograder/.dask-tls/; job sizes: Dask config jobqueue.slurm)")
    p.add_argument("--after-array", type=int, metavar="N",
                   help="after an array of N tasks: refuse, naming the ranges left, unless every notebook is decided")
    for flag, default in (("--tls-ca", "ca.pem"), ("--tls-cert", "client.pem"), ("--tls-key", "client-key.pem")):
        p.add_argument(flag, metavar="FILE", default=None,
                       help=f"with --scheduler tls://...: default autograder/.dask-tls/{default} (make dask-certs)")
    p.add_argument(distributed.INSECURE_LOOPBACK_FLAG, action="store_true",
                   help="with --scheduler tcp://127.0.0.1:PORT: accept a plain-TCP scheduler on this machine, which "
                        "every user of it can use to run code on the workers and read the grading secret")
    common.add_run_options(p)


def run(a: argparse.Namespace) -> int:
    common.line_buffered()
    if a.slurm is not None and a.scheduler:
        raise RefusedInput("refused: --slurm starts its own cluster; give it or --scheduler, not both")
    if a.scheduler:  # refused (one line) before anything is locked, read or contacted
        a.scheduler = distributed.scheduler_target(a.scheduler, a.insecure_loopback_scheduler,
                                                   a.tls_ca, a.tls_cert, a.tls_key)
    grading = common.run_settings(a)
    ws = common.workspace(a)
    with run_lock.hold(ws=ws):
        if a.after_array:
            options = [f"--{k.replace('_', '-')} {v}" for k, v in (("cpu_seconds", a.cpu_seconds),
                                                                    ("memory_mb", a.memory_mb)) if v is not None]
            options += [f"--work-folder {ws.work}", f"--course-root {ws.course}"]  # the array is told, not inherits
            slurm_array.check_merged(a.after_array, grading.limits, ws, " ".join(options))
        with (slurm_cluster.started(a.slurm, a.tls_ca, a.tls_cert, a.tls_key, ws=ws) if a.slurm is not None
              else nullcontext(a.scheduler)) as scheduler:
            grade_class(scheduler=scheduler, student=a.student, force=a.force, grading=grading, ws=ws)
    return 0
