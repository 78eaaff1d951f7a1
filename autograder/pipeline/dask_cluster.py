"""Decide notebooks on an existing Dask cluster: ``make grade GRADE_ARGS="--scheduler tls://HOST:PORT"``.

Each notebook is one Dask task. The submission travels to a worker as data (its bytes), the worker
stages it and runs the student's functions in its own sandbox, and the verdict and the staged
notebook come back as data; the instructor's machine writes them where a local run would, then
runs the nbgrader steps once. No shared filesystem is needed. Workers need the course's
environment (this repository and its ``.venv``) and bubblewrap.

Who may use the cluster: whoever can reach a Dask scheduler can run any code on its workers and
on the scheduler. So the cluster must speak TLS with mutual authentication (Dask's
``distributed.security.Security``, ``require_encryption=True``): the scheduler, each worker and
this client each show a certificate of the course's own authority (``make dask-certs``,
:mod:`autograder.pipeline.dask_tls`); the client's files come from ``--tls-ca/--tls-cert/--tls-key``,
by default ``autograder/.dask-tls/{ca,client,client-key}.pem``. :func:`scheduler_target` refuses,
in one line and before anything is contacted, a ``tcp://`` (or any other unencrypted) address,
except on the loopback address when the instructor passes ``--insecure-loopback-scheduler``.

Faults:

- the scheduler cannot be reached: :func:`connect` raises ``GradingError`` with one line, before
  anything in the work folder changes;
- a worker without a working bubblewrap sandbox gets no work (it is named in the log), unless the
  instructor passes ``--allow-fallback-sandbox``; a run where no worker qualifies stops before
  anything changes; a task that still lands on such a worker refuses to run;
- a worker dies mid-run: Dask runs its tasks again on another worker. A task is a pure function
  of its inputs and each result is written once, when its future completes, so nothing is lost or
  counted twice.

Nothing secret rests on a worker: the grading secret travels inside each task and stays in the
worker's memory (:func:`autograder.verdicts.decide.secret_given`), and the hidden checks are the worker's
own checkout. Every task of one worker process works in one private folder
(``$TMPDIR/autograder-worker-<pid>-*``, the work folder of the :class:`~autograder.workspace.Workspace`
each task grades in; the worker's environment is never changed): a task's files go when it ends,
everything in the folder goes whenever no task runs, the folder itself at the process's exit, and
the folders of worker processes that were killed are swept by the next one on the machine (and by
every grading run's probe). A worker serves one class at a time. Each task carries the run's
:class:`~autograder.settings.Settings` (limits, warm sandbox, sandbox mode, whether a worker without
bubblewrap may grade), so a worker grades with the instructor's settings.
"""

from __future__ import annotations

import atexit
import dataclasses
import ipaddress
import multiprocessing.util
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import sandbox
from autograder.errors import ClusterError, RefusedFile, RefusedInput, SetupMissing
from autograder.intake.stored_outputs import TooIntricate, without_outputs
from autograder.intake.untrusted import MAX_NOTEBOOK_BYTES, read_regular
from autograder.outputs import atomic, json_files
from autograder.pipeline import dask_tls
from autograder.sandbox import warm
from autograder.settings import Settings
from autograder.verdicts import history, record
from autograder.workspace import ROOT, Workspace

if TYPE_CHECKING:
    from distributed.security import Security

CONNECT_TIMEOUT = "10s"
#: the flag that lets a plain-TCP scheduler on the loopback address through, and says why it is risky
INSECURE_LOOPBACK_FLAG = "--insecure-loopback-scheduler"
_LOCK = threading.Lock()
_WORKDIR: Path | None = None
_ACTIVE = 0  # tasks running now in this worker process
#: A worker process's work folder is named ``autograder-worker-<pid of the process>-<random>``.
_PREFIX = "autograder-worker-"


class Sealed:
    """The grading secret on its way to a worker; its text never shows (Dask logs the arguments of a
    task that fails, and a worker's log may be a file on a shared disk)."""

    __slots__ = ("value",)

    def __init__(self, value: bytes):
        self.value = value

    def __repr__(self) -> str:
        return "<grading secret>"

    __str__ = __repr__


# --- on the workers ---------------------------------------------------------------------------------


def _sweep_orphans() -> None:
    """Remove the work folders of worker processes killed before they could remove them."""
    warm.sweep_orphans(_PREFIX)


def _worker_workdir() -> Path:
    """This worker process's private work folder (created on first use)."""
    global _WORKDIR
    with _LOCK:
        if _WORKDIR is None:
            _sweep_orphans()
            _WORKDIR = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")).resolve()
            atexit.register(shutil.rmtree, _WORKDIR, True)
            # a worker under a nanny is a multiprocessing child, which ends without atexit
            multiprocessing.util.Finalize(None, shutil.rmtree, (_WORKDIR, True), exitpriority=0)
    return _WORKDIR


def _empty(folder: Path) -> None:
    """Remove everything inside ``folder`` (the folder stays)."""
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


@contextmanager
def _task(work: Path, files: list[Path]) -> Iterator[None]:
    """One task's stay in the work folder: when it ends (returns or raises), its ``files`` go, and
    everything in the folder goes if no other task of this process is running."""
    global _ACTIVE
    with _LOCK:
        _ACTIVE += 1
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE -= 1
            for path in files:
                path.unlink(missing_ok=True)
            if _ACTIVE == 0:
                _empty(work)


def probe() -> dict:
    """Run on every worker before grading: its sandbox mode, and whether the sandbox works."""
    _sweep_orphans()
    try:
        sandbox.self_test()
        problem = None
    except Exception as exc:
        problem = str(exc).splitlines()[0][:300]
    return {"mode": sandbox.mode(), "problem": problem, "host": socket.gethostname()}


def decide_remote(student: str, assignment: str, notebook: str, submission: bytes | None,
                  timestamp: bytes | None, secret: Sealed, grading: Settings, work: Path | None = None,
                  phase: str = "whole", pending=None, staged_text: str | None = None) -> dict:
    """One task on a worker: stage and decide one notebook with the run's settings ``grading``, in
    the work folder ``work`` (by default this worker process's private one); return its verdict and
    staged notebook.

    ``phase`` splits the decision as :func:`autograder.verdicts.decide.decide_in_phases` does:
    ``"public"`` stages the notebook and makes its public runs, returning what the second phase needs
    (``pending``, with the staged notebook; a notebook the grader cannot process returns its verdict
    instead); ``"hidden"`` takes that ``pending`` and ``staged_text`` back, makes the hidden runs and
    fair blame, and returns the verdict; ``"whole"`` does both at once.

    The secret stays in memory; the task's files are removed when it ends, whatever the outcome."""
    work = _worker_workdir() if work is None else work
    grading.apply()
    if sandbox.mode() != "bubblewrap" and not grading.allow_fallback_sandbox:
        raise ClusterError(f"worker on {socket.gethostname()} has no working bubblewrap sandbox; install "
                           "bubblewrap there, or pass --allow-fallback-sandbox to grade with weaker isolation")
    from autograder.verdicts import decide as verdicts

    ws = Workspace(work=work, course=ROOT)  # the course: this worker's own checkout
    folder = ws.submission(student, assignment)
    original = folder / f"{notebook}.ipynb"
    staged = ws.staged(student, assignment, notebook)
    verdict_file = ws.verdict(student, assignment, notebook)
    with _task(work, [original, staged, verdict_file]):
        folder.mkdir(parents=True, exist_ok=True)
        if submission is not None:
            original.write_bytes(submission)
        if timestamp is not None:
            (folder / "timestamp.txt").write_bytes(timestamp)
        t0 = time.perf_counter()
        out: dict = {"worker": socket.gethostname()}
        with verdicts.secret_given(secret.value):
            job = (student, assignment, notebook, grading.limits)
            if phase == "public":
                _job, out["pending"], _seconds = verdicts.public_job(job, ws)
            elif phase == "hidden":
                staged.parent.mkdir(parents=True, exist_ok=True)
                staged.write_text(staged_text or "", encoding="utf-8")
                verdicts.hidden_job((job, pending, 0.0), ws)
            else:
                verdicts.grade_one(student, assignment, notebook, grading.limits, ws=ws)
        out["seconds"] = time.perf_counter() - t0
        out["staged"] = staged.read_text(encoding="utf-8")
        if verdict_file.exists():
            out["verdict"] = verdict_file.read_text(encoding="utf-8")
        return out


# --- on the instructor's machine ------------------------------------------------------------------


def _submission_bytes(original: Path) -> tuple[bytes | None, str | None]:
    """What crosses the network for one notebook: its bytes without stored outputs (``None`` when
    there is no file), and why it was refused unread, if it was (a link, a FIFO, too large)."""
    try:  # a regular file only: never through a link, never blocking on a FIFO
        submission = read_regular(original, MAX_NOTEBOOK_BYTES) if os.path.lexists(original) else None
        if submission is not None:  # outputs are never graded: they need not cross the network
            submission = without_outputs(submission)[0]
    except TooIntricate:  # the worker's own reading refuses it the same way, with its note
        pass
    except RefusedFile as exc:
        return None, str(exc)
    return submission, None


def _store(ws: Workspace, job: tuple[str, str, str], out: dict, refused: str | None) -> None:
    """Write one task's result into ``ws``: the staged notebook, then the verdict, whose notes say
    why the file was refused (the worker saw none) and what the folder's timestamp was."""
    from autograder.intake.staging import refused_note, stage_timestamp
    from autograder.notes import NoteKind
    from autograder.verdicts.record import UnreadableVerdict, Verdict

    student, assignment, notebook = job
    staged = ws.staged(student, assignment, notebook)
    staged.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(staged, out["staged"])
    name = f"the verdict of {student}/{assignment}/{notebook} from {out.get('worker', 'a worker')}"
    try:  # a verdict that is no verdict never reaches nbgrader
        verdict = Verdict.from_json(*json_files.loads_versioned(out["verdict"], "verdict", name))
    except UnreadableVerdict as exc:
        raise ClusterError(f"grading stopped: {name} is no verdict ({exc})") from None
    notes = list(verdict.notes)
    if refused is not None:  # the worker saw no file: say why there was none
        notes = [refused_note(notebook, refused), *(n for n in notes if n.kind is not NoteKind.MISSING)]
    notes += [n for n in [stage_timestamp(ws.submission(student, assignment), staged.parent)] if n]
    verdict = verdict.with_notes(notes)
    path = ws.verdict(student, assignment, notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    history.remember_replaced(path, verdict, ws)
    record.write(path, verdict)


@dataclass
class Cluster:
    """A connected Dask client and the workers allowed to grade."""

    client: object
    workers: list[str] | None  # None: every worker
    allow_fallback: bool

    def decide(self, jobs: list[tuple], secret: str | bytes, log=print, *, ws: Workspace,
               grading: Settings | None = None) -> Iterator[tuple[str, str, str, float]]:
        """Submit every (student, assignment, notebook, limits) job now, in two phases (every job's
        public runs, then, once all have ended, every job's hidden runs and fair blame, as
        :func:`autograder.verdicts.decide.decide_in_phases`); yield each as its result is written
        into ``ws`` (verdict and staged notebook), in completion order. The grading
        ``secret`` goes with every task (over the cluster's TLS), sealed against logging, and so do
        the run's settings ``grading`` (each job's limits)."""
        from distributed import as_completed

        grading = grading or Settings(allow_fallback_sandbox=self.allow_fallback)

        refused: dict[tuple[str, str, str], str] = {}
        run = uuid.uuid4().hex[:8]
        sealed = Sealed(secret.encode() if isinstance(secret, str) else secret)
        submissions: dict[tuple[str, str, str], bytes | None] = {}
        settings_of: dict[tuple[str, str, str], Settings] = {}

        def submit(job: tuple[str, str, str], n: int, **phase) -> object:
            return self.client.submit(  # type: ignore[attr-defined]
                decide_remote, *job, submissions[job], None, sealed, settings_of[job], **phase,
                key=f"grade-{run}-{n}",  # no student's name in the cluster's pages and logs
                workers=self.workers, allow_other_workers=False, retries=0,
            )

        firsts = {}
        for student, assignment, notebook, limits in jobs:
            job = (student, assignment, notebook)
            submissions[job], why = _submission_bytes(ws.submission(student, assignment) / f"{notebook}.ipynb")
            if why is not None:
                refused[job] = why
            settings_of[job] = dataclasses.replace(grading, limits=limits, allow_fallback_sandbox=self.allow_fallback)
            firsts[submit(job, len(firsts), phase="public")] = job

        def outcome(future, job: tuple[str, str, str]) -> dict:
            try:
                return future.result()
            except ClusterError as exc:  # a worker without bubblewrap (and no fallback allowed)
                raise ClusterError(f"grading stopped: {exc}") from None
            except Exception as exc:  # the task itself failed (e.g. its workers kept dying)
                raise ClusterError(f"grading stopped: the cluster could not decide {'/'.join(job)} "
                                 f"({type(exc).__name__}: {str(exc)[:200]})") from None

        def results() -> Iterator[tuple[str, str, str, float]]:
            # every public run of the batch before any hidden run: the second phase starts once the
            # first has ended everywhere (a worker's hidden runs meet no public run after them)
            seconds: dict[tuple[str, str, str], float] = {}
            second: dict[tuple[str, str, str], dict] = {}
            for future in as_completed(firsts, loop=self.client.loop):  # type: ignore[attr-defined]
                job = firsts[future]
                out = outcome(future, job)
                seconds[job] = float(out["seconds"])
                if out.get("pending") is None:  # the grader could not process it: its verdict says so
                    _store(ws, job, out, refused.get(job))
                    yield (*job, seconds[job])
                else:
                    second[job] = out
            hidden = {submit(job, len(firsts) + n, phase="hidden", pending=out["pending"],
                             staged_text=out["staged"]): job for n, (job, out) in enumerate(second.items())}
            for future in as_completed(hidden, loop=self.client.loop):  # type: ignore[attr-defined]
                job = hidden[future]
                out = outcome(future, job)
                _store(ws, job, out, refused.get(job))
                yield (*job, seconds[job] + float(out["seconds"]))

        return results()

    def close(self) -> None:
        self.client.close()  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Target:
    """A scheduler the grader may use: its address, and the client's TLS credentials (``None``:
    plain TCP on the loopback address, allowed by the instructor)."""

    address: str
    security: Security | None

    def __str__(self) -> str:
        return self.address


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def client_security(ca: str | Path | None = None, cert: str | Path | None = None,
                    key: str | Path | None = None) -> Security:
    """The client's ``Security`` (mutual TLS, encryption required) from these files, each by default
    in ``autograder/.dask-tls/``. Raises ``GradingError`` (one line) if a file is missing, unusable,
    or the key is readable by others."""
    import ssl

    from distributed.security import Security

    folder = dask_tls.DEFAULT_DIR
    files = {"CA certificate": Path(ca or folder / dask_tls.CA),
             "client certificate": Path(cert or dask_tls.cert_file(folder, "client")),
             "client key": Path(key or dask_tls.key_file(folder, "client"))}
    for what, path in files.items():
        if not path.is_file():
            raise SetupMissing(f"no {what} for the Dask cluster: {path} is missing; run make dask-certs (and start "
                             "the scheduler and workers with its files), or pass --tls-ca/--tls-cert/--tls-key")
    key_path = files["client key"]
    if key_path.stat().st_mode & 0o077:
        raise RefusedInput(f"refused: the client key {key_path} can be read by other users; chmod 600 {key_path}")
    security = Security(tls_ca_file=str(files["CA certificate"]), tls_client_cert=str(files["client certificate"]),
                        tls_client_key=str(key_path), require_encryption=True)
    try:
        security.get_connection_args("client")  # reads the files now: a broken one is named here
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise RefusedInput(f"cannot use the Dask client certificate {files['client certificate']} (key {key_path}, "
                         f"CA {files['CA certificate']}): {str(exc).splitlines()[0][:200]}") from None
    return security


def scheduler_target(address: str, insecure_loopback: bool = False, ca: str | Path | None = None,
                     cert: str | Path | None = None, key: str | Path | None = None) -> Target:
    """Check ``address`` before anything is contacted: ``tls://`` with the client's credentials,
    or ``tcp://`` on the loopback address with ``insecure_loopback``. Anything else raises
    ``GradingError`` with one line saying why."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address, strict=True)
        host = str(parse_host_port(location)[0]).strip("[]")
    except (ValueError, TypeError) as exc:
        raise RefusedInput(f"refused: {address!r} is not a Dask scheduler address like tls://HOST:PORT "
                           f"({exc})") from None
    if scheme == "tls":
        return Target(address, client_security(ca, cert, key))
    if scheme != "tcp":
        raise RefusedInput(f"refused: the Dask scheduler {address} would be reached over {scheme}://, which is not "
                         "authenticated here; start the cluster with TLS (make dask-certs) and pass tls://HOST:PORT")
    if not _is_loopback(host):
        raise RefusedInput(f"refused: the Dask scheduler {address} is plain TCP, so anyone who can reach it can run "
                         "code on its workers and read the grading secret; start the cluster with TLS (make "
                         "dask-certs prints how) and pass --scheduler tls://HOST:PORT")
    if not insecure_loopback:
        raise RefusedInput(f"refused: the Dask scheduler {address} is plain TCP, so every user of this machine can run "
                         "code on its workers and read the grading secret; use tls:// (make dask-certs), or pass "
                         f"{INSECURE_LOOPBACK_FLAG} if you alone can log in here")
    return Target(address, None)


def connect(scheduler: str | Target, allow_fallback: bool = False, log=print) -> Cluster:
    """Connect to the scheduler and choose the workers that may grade.

    ``scheduler`` is a :class:`Target` (or an address, checked by :func:`scheduler_target` with
    the default credentials). Raises ``GradingError`` with one line when the address is refused, the
    scheduler cannot be reached, has no worker, or has no worker with a working sandbox (unless
    ``allow_fallback``).
    """
    import logging

    from distributed import Client

    target = scheduler if isinstance(scheduler, Target) else scheduler_target(scheduler)
    address = target.address
    if target.security is None:
        log(f"WARNING: the Dask scheduler {address} is plain TCP ({INSECURE_LOOPBACK_FLAG}): every user of this "
            "machine can run code on its workers and read the grading secret")
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # our one-line errors say it all
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False, security=target.security)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {str(exc).splitlines()[0][:200]}") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError):
        client.close()
        raise ClusterError(f"the Dask scheduler at {address} has no workers") from None
    report = client.run(probe)
    good = [w for w, r in report.items() if r["mode"] == "bubblewrap" and r["problem"] is None]
    usable = [w for w, r in report.items() if r["problem"] is None and (allow_fallback or r["mode"] == "bubblewrap")]
    for w, r in sorted(report.items()):
        if w not in usable:
            why = r["problem"] or "no working bubblewrap (pass --allow-fallback-sandbox to use it anyway)"
            log(f"worker {w} ({r['host']}) gets no work: {why}")
    if not usable:
        client.close()
        raise ClusterError(f"no worker of the Dask cluster at {address} can grade safely: none has a working "
                         "bubblewrap sandbox (install bubblewrap on the workers, or pass --allow-fallback-sandbox)")
    log(f"Dask cluster at {address}: {len(usable)} of {len(report)} workers grade"
        + ("" if len(good) == len(usable) else " (some without bubblewrap: weaker isolation)"))
    return Cluster(client, None if len(usable) == len(report) else usable, allow_fallback)
