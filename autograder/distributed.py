"""Decide notebooks on an existing Dask cluster: ``make grade GRADE_ARGS="--scheduler tcp://HOST:PORT"``.

Each notebook is one Dask task. The submission travels to a worker as data (its bytes), the worker
stages it and runs the student's functions in its own sandbox, and the verdict and the staged
notebook come back as data; the instructor's machine writes them where a local run would, then
runs the nbgrader steps once. No shared filesystem is needed. Workers need the course's
environment (this repository and its ``.venv``) and bubblewrap.

Faults:

- the scheduler cannot be reached: :func:`connect` raises ``SystemExit`` with one line, before
  anything in the work folder changes;
- a worker without a working bubblewrap sandbox gets no work (it is named in the log), unless the
  instructor passes ``--allow-fallback-sandbox``; a run where no worker qualifies stops before
  anything changes; a task that still lands on such a worker refuses to run;
- a worker dies mid-run: Dask runs its tasks again on another worker. A task is a pure function
  of its inputs and each result is written once, when its future completes, so nothing is lost or
  counted twice.

On a worker, every task of the same worker process shares one private work folder (a temporary
directory set as ``$AUTOGRADER_WORKDIR`` before the grading modules are imported there); files of
a task are removed once its result is sent. A worker serves one class at a time.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import atomic, sandbox
from .untrusted import MAX_NOTEBOOK_BYTES, Refused, read_regular

CONNECT_TIMEOUT = "10s"
_LOCK = threading.Lock()
_WORKDIR: Path | None = None


class SandboxRefused(RuntimeError):
    """A worker without bubblewrap was asked to grade, and the instructor did not allow the fallback."""


# --- on the workers ---------------------------------------------------------------------------------


def _worker_workdir() -> Path:
    """This worker process's private work folder (created on first use)."""
    global _WORKDIR
    with _LOCK:
        if _WORKDIR is None:
            import sys

            if "autograder.paths" in sys.modules:
                from . import paths

                _WORKDIR = paths.WORK  # a worker started with $AUTOGRADER_WORKDIR set (or a local test)
            else:
                _WORKDIR = Path(tempfile.mkdtemp(prefix="autograder-worker-")).resolve()
                os.environ["AUTOGRADER_WORKDIR"] = str(_WORKDIR)
    return _WORKDIR


def probe() -> dict:
    """Run on every worker before grading: its sandbox mode, and whether the sandbox works."""
    try:
        sandbox.self_test()
        problem = None
    except Exception as exc:
        problem = str(exc).splitlines()[0][:300]
    return {"mode": sandbox.mode(), "problem": problem, "host": socket.gethostname()}


def decide_remote(student: str, assignment: str, notebook: str, submission: bytes | None,
                  timestamp: bytes | None, secret: str, limits: sandbox.Limits, allow_fallback: bool) -> dict:
    """One task on a worker: stage and decide one notebook; return its verdict and staged notebook."""
    work = _worker_workdir()
    if sandbox.mode() != "bubblewrap" and not allow_fallback:
        raise SandboxRefused(f"worker on {socket.gethostname()} has no working bubblewrap sandbox; install "
                             "bubblewrap there, or pass --allow-fallback-sandbox to grade with weaker isolation")
    from . import paths, verdicts

    assert paths.WORK == work, (paths.WORK, work)
    with _LOCK:
        secret_file = paths.GRADING / "secret"
        secret_file.parent.mkdir(parents=True, exist_ok=True)
        if not secret_file.exists() or secret_file.read_text() != secret:
            secret_file.write_text(secret)
    folder = paths.SUBMITTED / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    original = folder / f"{notebook}.ipynb"
    if submission is not None:
        original.write_bytes(submission)
    if timestamp is not None:
        (folder / "timestamp.txt").write_bytes(timestamp)
    t0 = time.perf_counter()
    try:
        verdicts.grade_one(student, assignment, notebook, limits)
        seconds = time.perf_counter() - t0
        staged = paths.STAGED / student / assignment / f"{notebook}.ipynb"
        verdict_file = paths.verdict_path(student, assignment, notebook)
        return {"verdict": verdict_file.read_text(encoding="utf-8"), "staged": staged.read_text(encoding="utf-8"),
                "seconds": seconds, "worker": socket.gethostname()}
    finally:
        for path in (original, paths.STAGED / student / assignment / f"{notebook}.ipynb",
                     paths.verdict_path(student, assignment, notebook)):
            path.unlink(missing_ok=True)


# --- on the instructor's machine ------------------------------------------------------------------


@dataclass
class Cluster:
    """A connected Dask client and the workers allowed to grade."""

    client: object
    workers: list[str] | None  # None: every worker
    allow_fallback: bool

    def decide(self, jobs: list[tuple], secret: str, log=print) -> Iterator[tuple[str, str, str, float]]:
        """Submit every (student, assignment, notebook, limits) job now; yield each as its result
        is written locally (verdict and staged notebook), in completion order."""
        from distributed import as_completed

        from .paths import STAGED, SUBMITTED, verdict_path
        from .staging import stage_timestamp

        futures = {}
        refused: dict[tuple[str, str, str], str] = {}
        run = uuid.uuid4().hex[:8]
        for student, assignment, notebook, limits in jobs:
            folder = SUBMITTED / student / assignment
            original = folder / f"{notebook}.ipynb"
            try:  # a regular file only: never through a link, never blocking on a FIFO
                submission = read_regular(original, MAX_NOTEBOOK_BYTES) if os.path.lexists(original) else None
            except Refused as exc:
                submission, refused[student, assignment, notebook] = None, str(exc)
            future = self.client.submit(
                decide_remote, student, assignment, notebook, submission, None,
                secret, limits, self.allow_fallback,
                key=f"grade-{run}-{student}-{assignment}-{notebook}",
                workers=self.workers, allow_other_workers=False, retries=0,
            )
            futures[future] = (student, assignment, notebook)

        def results() -> Iterator[tuple[str, str, str, float]]:
            for future in as_completed(futures, loop=self.client.loop):  # type: ignore[attr-defined]
                student, assignment, notebook = futures[future]
                try:
                    out = future.result()
                except SandboxRefused as exc:
                    raise SystemExit(f"grading stopped: {exc}") from None
                except Exception as exc:  # the task itself failed (e.g. its workers kept dying)
                    raise SystemExit(f"grading stopped: the cluster could not decide {student}/{assignment}/"
                                     f"{notebook} ({type(exc).__name__}: {str(exc)[:200]})") from None
                staged = STAGED / student / assignment / f"{notebook}.ipynb"
                staged.parent.mkdir(parents=True, exist_ok=True)
                staged.write_text(out["staged"], encoding="utf-8")
                verdict = json.loads(out["verdict"])  # a verdict that is not JSON never reaches nbgrader
                notes = [n for n in verdict.get("notes", []) if not n.startswith(f"No file {notebook}.ipynb")
                         or (student, assignment, notebook) not in refused]
                if (student, assignment, notebook) in refused:
                    notes.insert(0, f"{notebook}.ipynb was not read: {refused[student, assignment, notebook]}; "
                                    "it is graded as unanswered.")
                notes += [n for n in [stage_timestamp(SUBMITTED / student / assignment, staged.parent)] if n]
                verdict["notes"] = notes
                path = verdict_path(student, assignment, notebook)
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic.write_text(path, json.dumps(verdict, indent=1, ensure_ascii=False))
                yield student, assignment, notebook, float(out["seconds"])

        return results()

    def close(self) -> None:
        self.client.close()  # type: ignore[attr-defined]


def connect(address: str, allow_fallback: bool = False, log=print) -> Cluster:
    """Connect to the scheduler at ``address`` and choose the workers that may grade.

    Raises ``SystemExit`` with one line when the scheduler cannot be reached, has no worker, or
    has no worker with a working sandbox (unless ``allow_fallback``).
    """
    import logging

    from distributed import Client

    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # our one-line errors say it all
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SystemExit(f"cannot reach the Dask scheduler at {address}: {str(exc).splitlines()[0][:200]}") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError):
        client.close()
        raise SystemExit(f"the Dask scheduler at {address} has no workers") from None
    report = client.run(probe)
    good = [w for w, r in report.items() if r["mode"] == "bubblewrap" and r["problem"] is None]
    usable = [w for w, r in report.items() if r["problem"] is None and (allow_fallback or r["mode"] == "bubblewrap")]
    for w, r in sorted(report.items()):
        if w not in usable:
            why = r["problem"] or "no working bubblewrap (pass --allow-fallback-sandbox to use it anyway)"
            log(f"worker {w} ({r['host']}) gets no work: {why}")
    if not usable:
        client.close()
        raise SystemExit(f"no worker of the Dask cluster at {address} can grade safely: none has a working "
                         "bubblewrap sandbox (install bubblewrap on the workers, or pass --allow-fallback-sandbox)")
    log(f"Dask cluster at {address}: {len(usable)} of {len(report)} workers grade"
        + ("" if len(good) == len(usable) else " (some without bubblewrap: weaker isolation)"))
    return Cluster(client, None if len(usable) == len(report) else usable, allow_fallback)
