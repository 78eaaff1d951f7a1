"""Grade on Slurm through dask-jobqueue: ``make grade GRADE_ARGS="--slurm JOBS"``.

For the run, this process starts a Dask scheduler (dask-jobqueue's ``SLURMCluster``) and asks
Slurm for ``JOBS`` batch jobs, each one Dask worker; the notebooks are then decided on them
exactly as on any Dask cluster (:mod:`autograder.pipeline.dask_cluster`), and the jobs end with the run.
So the scheduler lives as long as ``make grade`` does, on the machine that runs it: the login
node (the compute nodes must reach it), or a long job of its own.

Every connection is TLS with mutual authentication, with the course's certificates
(``make dask-certs``, :mod:`autograder.pipeline.dask_tls`): the scheduler uses ``scheduler.pem``, the
jobs' workers ``worker.pem`` (their job scripts name the files, which the compute nodes read from
the shared checkout), this process's client ``client.pem``. The jobs run this checkout's Python
(``sys.executable``) in the repository's folder, without ``$AUTOGRADER_WORKDIR``: a worker works in
a private temporary folder of its own, never in the class's work folder.

The jobs' size and place come from Dask's configuration, key ``jobqueue.slurm``
(``~/.config/dask/jobqueue.yaml``, or ``DASK_JOBQUEUE__SLURM__CORES=8`` and the like): ``queue``,
``account``, ``cores``, ``memory``, ``walltime``, ``job-extra-directives``, ``job-script-prologue``,
``scheduler-options``... Without ``cores`` and ``memory`` a job asks for 1 core and 4 GB. A job
that ends early (cancelled, out of walltime, its node lost) has its notebooks decided again by
the other workers, and Slurm is asked for a new job in its place.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from autograder.errors import ClusterError, GradingError, RefusedInput, SetupMissing
from autograder.pipeline import dask_tls
from autograder.pipeline.dask_cluster import Target, client_security
from autograder.workspace import ROOT, Workspace

#: how long to wait for the first worker job to start (a busy queue can take long; Ctrl-C stops)
FIRST_WORKER_TIMEOUT = 4 * 3600
#: how long Slurm may take to accept the jobs (sbatch answers within seconds when Slurm is up)
SUBMIT_TIMEOUT = 180
#: how often the jobs are counted, and a job that ended early replaced
WATCH_SECONDS = 5.0


def _slurm(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=120)


def _check_slurm_answers() -> None:
    """``GradingError`` with one line unless Slurm's commands are here and its controller answers."""
    if not shutil.which("sbatch") or not shutil.which("squeue"):
        raise ClusterError("--slurm needs Slurm's commands (sbatch, squeue) on this machine: run it on the login node")
    try:
        answer = _slurm("squeue", "-h", "--me")
    except subprocess.TimeoutExpired:
        raise ClusterError("Slurm does not answer here: squeue --me took more than 2 minutes") from None
    if answer.returncode != 0:
        said = (answer.stderr.strip().splitlines() or ["no message"])[-1]
        raise ClusterError(f"Slurm does not answer here: squeue --me says: {said}")


def _wait_for_first_worker(cluster, client, log_directory: str) -> None:
    """Until a worker joins; ``GradingError`` with one line when no job was accepted, or every job
    ended without its worker joining."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < FIRST_WORKER_TIMEOUT:
        try:
            client.wait_for_workers(1, timeout=10)
            return
        except (TimeoutError, OSError):
            pass
        ids = [str(job.job_id) for job in list(cluster.workers.values()) if getattr(job, "job_id", None)]
        if not ids:
            if time.monotonic() - t0 > SUBMIT_TIMEOUT:
                raise ClusterError(f"Slurm accepted none of the worker jobs in {SUBMIT_TIMEOUT} s (sbatch failed?)")
            continue
        queued = _slurm("squeue", "-h", "-o", "%i", "-j", ",".join(ids))
        if not queued.stdout.strip():
            raise ClusterError(f"the Slurm job{'s' * (len(ids) > 1)} {', '.join(ids)} ended before a Dask worker "
                             f"joined; the job output is in {log_directory}")
    raise ClusterError(f"no Slurm worker job started within {FIRST_WORKER_TIMEOUT // 3600} hours")


def _options(folder: Path, ws: Workspace) -> dict:
    """``SLURMCluster``'s arguments: the configured ``jobqueue.slurm`` values, with this course's
    Python, folder and TLS; the job logs go to ``ws``'s grading folder unless configured."""
    import dask.config

    conf = dask.config.get("jobqueue.slurm", {})
    scheduler_options = {"dashboard_address": "127.0.0.1:0", **(conf.get("scheduler-options") or {})}
    return {
        "cores": conf.get("cores") or 1,
        "memory": conf.get("memory") or "4GB",
        "processes": conf.get("processes") or 1,
        "python": conf.get("python") or sys.executable,
        "job_script_prologue": [f"cd {ROOT}", "unset AUTOGRADER_WORKDIR", *(conf.get("job-script-prologue") or [])],
        "log_directory": conf.get("log-directory") or str(ws.grading / "slurm-logs"),
        "protocol": "tls://",
        "security": dask_tls.cluster_security(folder),
        "scheduler_options": scheduler_options,
    }


def _watch(cluster, jobs: int, stop: threading.Event, log) -> None:
    """Until ``stop``: keep ``jobs`` jobs asked for; a worker whose job ended early is named, and
    its job submitted again."""
    before: set[str] = set()
    while not stop.wait(WATCH_SECONDS):
        try:
            now = {w["name"] for w in cluster.scheduler_info.get("workers", {}).values()}
            for name in sorted(before - now):
                log(f"worker {name} left (its Slurm job ended); its notebooks go to the other workers, "
                    "and Slurm is asked for another job")
            before = now
            cluster.scale(jobs=jobs)  # submits again the job of every worker that is gone
        except Exception as exc:  # the run itself reports what matters; keep watching
            log(f"watching the Slurm jobs: {type(exc).__name__}: {exc}")


@contextmanager
def started(jobs: int, ca: str | Path | None = None, cert: str | Path | None = None,
            key: str | Path | None = None, log=print, *, ws: Workspace) -> Iterator[Target]:
    """A Slurm-backed Dask cluster grading ``ws`` for the duration of the block: yields its
    :class:`Target` once the first worker has joined; every job is cancelled when the block ends.
    The job scripts' output goes to ``ws.grading / "slurm-logs"`` (or ``jobqueue.slurm.log-directory``).

    The scheduler and workers use every role's files in the folder of ``ca`` (by default
    ``autograder/.dask-tls/``); this process connects with ``ca``, ``cert`` and ``key``.
    Raises ``GradingError`` with one line when dask-jobqueue or the certificates are missing, or
    Slurm refuses the jobs.
    """
    if jobs < 1:
        raise RefusedInput(f"refused: --slurm needs at least one job, not {jobs}")
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise SetupMissing("--slurm needs dask-jobqueue in the course environment: run make setup") from None
    folder = Path(ca).parent if ca else dask_tls.DEFAULT_DIR
    security = client_security(ca, cert, key)  # one line if the client's files are missing or open
    missing = [p.name for r in ("scheduler", "worker") for p in (dask_tls.cert_file(folder, r),
                                                                   dask_tls.key_file(folder, r)) if not p.is_file()]
    if missing:
        raise SetupMissing(f"no {', '.join(missing)} in {folder} for the Slurm jobs' cluster; run make dask-certs")
    _check_slurm_answers()
    options = _options(folder, ws)
    Path(options["log_directory"]).mkdir(parents=True, exist_ok=True)
    try:
        cluster = SLURMCluster(**options)
    except Exception as exc:
        raise ClusterError(f"cannot start the Dask scheduler for Slurm: {type(exc).__name__}: {exc}") from None
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(cluster, jobs, stop, log), daemon=True)
    try:
        try:
            cluster.scale(jobs=jobs)
            log(f"asked Slurm for {jobs} worker job{'s' * (jobs > 1)} ({options['cores']} cores, "
                f"{options['memory']} each; job logs in {options['log_directory']}); waiting for the first to start")
            t0 = time.monotonic()
            from distributed import Client

            with Client(cluster.scheduler_address, security=security, timeout="30s", set_as_default=False) as c:
                _wait_for_first_worker(cluster, c, options["log_directory"])
        except GradingError:
            raise
        except Exception as exc:
            raise ClusterError(f"no Slurm worker job started: {type(exc).__name__}: {str(exc)[:300]}") from None
        host = str(options["scheduler_options"].get("dashboard_address") or "127.0.0.1:").rsplit(":", 1)[0]
        port = urlsplit(cluster.dashboard_link).port  # the link names the scheduler's host, not where it listens
        log(f"first Slurm worker joined after {time.monotonic() - t0:.0f} s; scheduler {cluster.scheduler_address}"
            f" (dashboard: http://{host or '127.0.0.1'}:{port}/status)")
        watcher.start()
        yield Target(cluster.scheduler_address, security)
    finally:
        stop.set()
        if watcher.is_alive():
            watcher.join()
        cluster.close()
