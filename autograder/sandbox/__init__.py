"""Run student code in a sandbox and bring back plain arrays.

Each call starts a fresh Python (``-I -S``: no site-packages hooks, so no course package) under
bubblewrap: no network, no capabilities, a read-only view of the Python runtime and NumPy only,
nothing writable but an empty /tmp and /dev/shm (128 MiB together), a new PID namespace, a
CPU-time limit, an address-space cap and a file-size cap per process, and, for the run as a
whole, a memory cap and a cap on its processes and threads (its own cgroups, see
:mod:`autograder.sandbox.cgroups`). A run that runs into one of those caps fails with a fixed message
(:func:`cap_message`). Results come back on a dedicated pipe as JSON plus an ``.npz`` loaded with
``allow_pickle=False``.

The command that starts a sandbox is :mod:`autograder.sandbox.command`'s; the pipe to it, and the
checks on what comes back, are :mod:`autograder.sandbox.channel`'s.

Where bubblewrap cannot run, the fallback mode (:func:`mode` says ``"fallback"``) keeps the resource limits, the clean
environment, ``-I -S`` and an empty working folder, but not the filesystem or network isolation.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder.sandbox import cgroups, seccomp
from autograder.sandbox.channel import (
    MAX_RESULT_ARRAY_BYTES,
    MAX_RESULT_BYTES,
    collect,
    disk_full,
    feed,
    parse_frame,
    read_cell_errors,
    read_outcome,
    request_frames,
)
from autograder.sandbox.command import (
    SANDBOX_SITE,
    TMPFS_BYTES,
    WRITABLE,
    bubblewrap_available,
    choose_fallback,
    mode,
    preexec_limits,
    prepare_workdir,
    run_as,
    run_folder,
    sandbox_command,
)
from autograder.sandbox.oracle import Oracle, Relay, Replies
from selfattn.checks.calling import GRADED_CPU_SECONDS, Case, CellError, Outcome, graded_wall_seconds
from selfattn.checks.findings import Finding, Kind

__all__ = [
    "CALLING",
    "DEFAULT",
    "DISK",
    "HERE",
    "INSIDE",
    "MAX_RESULT_ARRAY_BYTES",
    "MAX_RESULT_BYTES",
    "SANDBOX_SITE",
    "TMPFS_BYTES",
    "WRITABLE",
    "Limits",
    "RunResult",
    "bubblewrap_available",
    "cap_message",
    "caps_in_force",
    "choose_fallback",
    "collect",
    "feed",
    "mode",
    "parse_frame",
    "run",
    "run_as",
    "sandbox_command",
    "self_test",
]

HERE = Path(__file__).resolve().parent
#: the scripts that run inside the sandbox
INSIDE = HERE / "inside"
#: the one course module the sandbox holds, beside harness.py (standard library and NumPy only)
CALLING = HERE.parents[1] / "selfattn" / "checks" / "calling.py"


@dataclass(frozen=True)
class Limits:
    """Per-exercise limits (defaults: 60 s of CPU per process, 2 GiB of address space per process
    and of memory for the run's processes together, 64 processes and threads at once, files of
    16 MiB). The run-wide caps (memory, tasks) need a cgroup (:mod:`autograder.sandbox.cgroups`)."""

    cpu_seconds: int = GRADED_CPU_SECONDS
    memory_bytes: int = 2 << 30
    file_bytes: int = 16 << 20
    tasks: int = 64

    @property
    def wall_seconds(self) -> float:
        return graded_wall_seconds(self.cpu_seconds)


DEFAULT = Limits()


@dataclass(frozen=True)
class RunResult:
    """Outcomes per case, or ``failure`` saying why there are none (its kind: time-out, crash, ...)."""

    outcomes: list[Outcome] | None
    failure: Finding | None
    cell_errors: list[CellError]
    seconds: float


def run(cells: list[tuple[str, str | None]], function: str, cases: list[Case], limits: Limits = DEFAULT,
        hidden: bool = False, session=None, oracle: Oracle | None = None) -> RunResult:
    """Execute ``cells`` (label, source) in a sandbox, then call ``function`` on every case.

    The cases reach the sandbox only after the cells have run (the harness asks for them), so
    code at the top level of a cell never finds them in its process. With ``hidden``, nothing
    textual that came back from the sandbox survives: exceptions are reduced to their type.
    With ``session`` (an :class:`autograder.sandbox.warm.Session`), the run is a fresh child forked from
    that session's pre-warmed sandbox instead of a newly started sandbox.

    With ``oracle`` (an :class:`autograder.sandbox.oracle.Oracle`), the cells of its functions are sent
    without source (``None``) and the run calls them through the grader.
    """
    names = oracle.names if oracle is not None else None
    first, second = request_frames(cells, function, cases, names)
    relay = None
    if oracle is not None:
        oracle.limit_to(limits.cpu_seconds)  # the course's functions' time counts against the run's
        relay = Relay(oracle, Replies())
    t0 = time.perf_counter()
    try:
        data, timed_out, too_big, rc, capped = _execute(first, second, limits, session, relay)
    finally:
        if oracle is not None:
            oracle.close()
    seconds = time.perf_counter() - t0
    if relay is not None and relay.refused:  # one fixed line naming the cap, kept in hidden runs' words too
        return RunResult(None, Finding(relay.refused, Kind.REFUSED, relay.refused), [], seconds)
    stopped = _stopped(capped, timed_out, too_big, limits)
    if stopped is not None:
        return RunResult(None, stopped, [], seconds)
    return _results(data, rc, cells, function, len(cases), limits, hidden, seconds)


def _execute(first: bytes, second: bytes, limits: Limits, session=None, relay: Relay | None = None
             ) -> tuple[bytes, bool, bool, int | None, str | None]:
    """Send the two frames to a sandbox (``session``'s pre-warmed one, else a newly started one) in
    cgroups capped for the run, and wait for it (answering ``relay``'s oracle requests): (result
    bytes, timed out, too big, exit status, the cap it ran into or ``None``). The run's cgroups are
    finished before this returns."""
    # the cgroups that cap the run as a whole: its own, or (warm) its sandbox's, capped for it
    group = session.group_for(limits) if session is not None else cgroups.make(limits.memory_bytes, limits.tasks)
    try:
        if session is not None:
            data, timed_out, too_big, rc = session.execute(first, second, limits, group=group, relay=relay)
        else:
            data, timed_out, too_big, rc = _run_fresh(first, second, limits, group, relay)
        capped = group.hit()
    finally:
        group.finish()
    return data, timed_out, too_big, rc, capped


def _stopped(capped: str | None, timed_out: bool, too_big: bool, limits: Limits) -> Finding | None:
    """Why a run was stopped before its results could be read (a cap of its cgroups, the wall-clock
    limit, results over the size cap), or ``None`` if it was not."""
    if capped is not None:
        return cap_message(capped, limits)
    if timed_out:
        reason = f"stopped after {limits.wall_seconds:.0f} s: an infinite loop or a very slow computation?"
        return Finding(reason, Kind.TIME_OUT)
    if too_big:
        return _too_large()
    return None


def _too_large() -> Finding:
    """Results over the size cap: the grader stopped reading them, or the harness refused them at once."""
    return Finding("the results were larger than the grader accepts", Kind.REFUSED)


def _results(data: bytes, rc: int | None, cells: list[tuple[str, str]], function: str, n_cases: int,
             limits: Limits, hidden: bool, seconds: float) -> RunResult:
    """The run's result from the bytes it sent (untrusted): ``data`` is a greeting byte (``R`` or
    ``M``) and a result frame holding one outcome per case (``n_cases``); a run that sent none dies
    of :func:`_death_reason`, a channel that does not add up is refused as tampered with."""
    try:
        result, arrays = parse_frame(data[1:])
        if data[:1] not in (b"R", b"M"):
            raise ValueError("no greeting")
    except Exception:
        return RunResult(None, _death_reason(rc, limits, seconds), [], seconds)
    if disk_full(result):
        return RunResult(None, cap_message(DISK, limits), [], seconds)
    if result.get("too_large") is True:
        return RunResult(None, _too_large(), [], seconds)
    labels = [label for label, _ in cells]
    cell_errors = read_cell_errors(result.get("cell_errors"), labels, hidden)
    if "missing" in result:
        reason = str(result["missing"])[:1000]
        if hidden:
            reason = f"no function named {function} was defined"
            reason += f" ({'; '.join(map(str, cell_errors))})" if cell_errors else ""
        return RunResult(None, Finding(reason, Kind.NOT_ANSWERED), cell_errors, seconds)
    outcomes = []
    try:
        for enc in result["outcomes"]:
            outcomes.append(read_outcome(enc, arrays, hidden))
    except (KeyError, TypeError, ValueError):
        return RunResult(None, Finding("the grader's channel was tampered with", Kind.REFUSED), [], seconds)
    if len(outcomes) != n_cases:
        return RunResult(None, Finding("the grader's channel was tampered with", Kind.REFUSED), [], seconds)
    return RunResult(outcomes, None, cell_errors, seconds)


def _run_fresh(first: bytes, second: bytes, limits: Limits, group: cgroups.Group | None = None,
               relay: Relay | None = None) -> tuple[bytes, bool, bool, int | None]:
    """One run in a newly started sandbox (in ``group``'s cgroups from its first instruction):
    (result bytes, timed out, too big, exit status). With ``relay``, the oracle's requests are
    answered (through its queue of replies, which the feeding thread writes)."""
    replies = relay.replies if relay is not None else None
    with tempfile.TemporaryDirectory(prefix="sandbox-", dir=run_folder()) as workdir:
        prepare_workdir(workdir, (INSIDE / "harness.py", CALLING))
        read_fd, write_fd = os.pipe()
        filter_fd = seccomp.program_fd() if mode() == "bubblewrap" else None
        command, env = sandbox_command(workdir, write_fd, seccomp_fd=filter_fd)
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(write_fd, *seccomp.passed(filter_fd)),
                preexec_fn=preexec_limits(limits, group.procs_fds() if group else None), cwd=workdir, env=env,
            )
        finally:
            seccomp.close(filter_fd)
        os.close(write_fd)
        asked = threading.Event()
        feeder = threading.Thread(target=feed, args=(proc.stdin, first, second, asked, replies), daemon=True)
        feeder.start()
        try:
            data, timed_out, too_big = collect(read_fd, proc, limits, on_first_byte=asked.set,
                                                stop=group.stop_if_capped if group else None, relay=relay)
        finally:
            asked.set()
            if replies is not None:
                replies.put(None)
        rc = proc.wait()
        feeder.join(timeout=5)
    return data, timed_out, too_big, rc


def self_test() -> None:
    """Raise ``RuntimeError`` unless a known-good answer comes back right from the sandbox.

    A broken sandbox (missing NumPy inside it, a bad mount) must stop the grading run, not
    quietly give every student zero.
    """
    cell = "def f(x):\n    return np.asarray(x) * 2\n"
    result = run([("f", cell)], "f", [Case((np.arange(3.0),))], Limits(cpu_seconds=20))
    ok = result.outcomes is not None and result.outcomes[0].values is not None
    if not ok or not np.array_equal(result.outcomes[0].value, [0.0, 2.0, 4.0]):
        raise RuntimeError(f"the grading sandbox ({mode()}) does not work: {result.failure or result.outcomes}; "
                           f"command: {' '.join(sandbox_command('/WORKDIR', 3)[0])}")


#: The cap a run ran into when it filled its writable folders or wrote too large a file.
DISK = "disk"


def cap_message(cap: str, limits: Limits) -> Finding:
    """The fixed text of a run that ran into a cap (nothing in it is chosen by the submission)."""
    if cap == cgroups.MEMORY:
        return Finding(f"ran out of memory (a run's processes together may hold {limits.memory_bytes >> 20} MiB)",
                       Kind.MEMORY)
    if cap == cgroups.TASKS:
        return Finding(f"started too many processes or threads (a run may have {limits.tasks} at once)",
                       Kind.PROCESSES)
    return Finding(f"filled its disk (a run may write {sum(TMPFS_BYTES.values()) >> 20} MiB in /tmp and /dev/shm "
                   f"together, {limits.file_bytes >> 20} MiB per file)", Kind.DISK)


def caps_in_force(limits: Limits) -> str:
    """The caps on each run here, for the grading summary."""
    memory, tasks = cgroups.describe(limits.memory_bytes, limits.tasks)
    disk = (f"/tmp+/dev/shm {sum(TMPFS_BYTES.values()) >> 20} MiB" if mode() == "bubblewrap"
            else "/tmp not capped (fallback sandbox: the machine's own)")
    return (f"CPU {limits.cpu_seconds} s per process, {memory}, {tasks}, {disk}, "
            f"files {limits.file_bytes >> 20} MiB")


def _death_reason(rc: int, limits: Limits, seconds: float = float("inf")) -> Finding:
    """Why a run that sent no results ended, from its exit status (and how long it ran)."""
    killed = rc in (-signal.SIGKILL, 128 + signal.SIGKILL)
    if killed and seconds * (os.cpu_count() or 1) < limits.cpu_seconds:
        # too soon for the CPU limit (whose SIGKILL follows an ignored SIGXCPU): it was killed
        return Finding(f"the process was killed (signal 9) after {seconds:.1f} s, long before its CPU limit "
                       f"(os.kill on its own process?)", Kind.CRASHED)
    if killed or rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return Finding(f"used more than {limits.cpu_seconds} s of CPU time (an infinite loop?)", Kind.TIME_OUT)
    if rc in (-signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS, 128 + signal.SIGSEGV, 128 + signal.SIGABRT):
        return Finding("crashed (possibly out of memory)", Kind.CRASHED)
    status = "unknown" if rc is None else rc
    return Finding(f"the process ended before returning results (exit status {status}; os._exit, a crash "
                   f"or memory above {limits.memory_bytes >> 20} MiB?)", Kind.CRASHED)
