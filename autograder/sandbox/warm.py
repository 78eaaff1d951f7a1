"""A pre-warmed sandbox per grading worker (the instructor's side of :mod:`autograder.sandbox.inside.zygote`).

:func:`autograder.sandbox.run` starts a fresh sandboxed Python for every run, and most of a run's
cost is that start (bubblewrap, the interpreter, NumPy). A :class:`Session` starts one sandbox
holding a pre-warmed interpreter; each run is a child forked from it, so the guarantees stay those
of a fresh run: the student's code runs in a new process per run (public and hidden inputs never
meet in one process), with the run's own CPU, memory and file-size limits, in its own session.
The sandbox lives in cgroups of its own (:mod:`autograder.sandbox.cgroups`), in which every run is born
(forked, never moved there: moving a process waits for the kernel, about 12 ms); before each run
their caps are set to the run's caps above what the idle sandbox holds, so they cap the run as a
whole.

Under bubblewrap, one session serves every notebook a worker (process or thread) grades
(:func:`sessions`): after each run a supervisor forked for it kills every leftover process,
returns the only writable folders (/tmp, /dev/shm) to empty with fixed times, and ends the
sandbox if the run made another process or a file (the next PID or inode number would tell how
many), so nothing of a run, hidden or public, of one student or another, reaches the next (see
tests/test_warm_sandbox_channels.py); the pre-warmed process is PID 1 of the sandbox (signals
cannot kill it), not dumpable (a run can neither ptrace it nor write its memory) and never reads
what a run left. The seccomp filter (:mod:`autograder.sandbox.seccomp`) holds for it and every run. Without bubblewrap
(fallback mode) there is no private /tmp to wipe: each notebook gets its own sessions, one for its
public and one for its hidden runs, as before.

Whatever goes wrong with the warm sandbox (a time-out, an oversized result, the pre-warmed process
killed, something a run left that could not be removed) ends it; the next run starts a new one.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing.util
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from autograder import sandbox
from autograder.sandbox import cgroups, seccomp
from autograder.sandbox import command as command_

#: A warm sandbox's folder is named ``sandbox-warm-<pid of its owner>-<random>`` in the temp folder.
_PREFIX = "sandbox-warm-"


def sweep_orphans(prefix: str = _PREFIX) -> None:
    """Remove the folders ``<temp>/<prefix><pid>-*`` whose owner process was killed before it could
    (SIGKILL, the out-of-memory killer: a killed formgrader server or Dask worker; bubblewrap died
    with it). A live owner's folder, another user's and a symbolic link are left alone."""
    bases = {tempfile.gettempdir(), command_.run_folder()}
    for path in {p for base in bases for p in Path(base).glob(f"{prefix}*-*")}:
        pid = path.name[len(prefix):].split("-", 1)[0]
        try:
            if not pid.isdigit() or path.is_symlink() or path.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:  # the owner is gone
            shutil.rmtree(path, ignore_errors=True)
        except OSError:  # alive under another user, or the folder went away meanwhile
            pass


class _Child:
    """What :func:`sandbox.collect` needs of a process, for a run forked inside the session."""

    def __init__(self, ctl: socket.socket):
        self.ctl = ctl
        self.returncode: int | None = None
        self.clean = False  # the sandbox removed everything the run left behind
        self.gone = False  # the session itself ended (no exit status will come)
        self._buf = b""

    def _read(self, timeout: float) -> None:
        if self.returncode is not None or self.gone:
            return
        ready, _, _ = select.select([self.ctl], [], [], timeout)
        if not ready:
            return
        try:
            chunk = self.ctl.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:
            self.gone = True
            return
        self._buf += chunk
        if b"\n" in self._buf:
            line = self._buf.split(b"\n", 1)[0]
            try:
                report = json.loads(line)
                self.returncode = int(report["rc"])
                self.clean = report.get("clean") is True
            except (ValueError, KeyError, TypeError, AttributeError):
                self.gone = True

    def poll(self) -> int | None:
        self._read(0)
        return self.returncode if not self.gone else -9

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.returncode is None and not self.gone and time.monotonic() < deadline:
            self._read(max(0.0, deadline - time.monotonic()))
        if self.returncode is None and not self.gone:
            raise subprocess.TimeoutExpired("sandboxed run", timeout or 0)
        return self.returncode


_local = threading.local()
#: whether this process's runs fork from warm sessions (:func:`enable`); None: as the environment says
_ENABLED: bool | None = None


def enable(on: bool) -> None:
    """Turn warm sessions on or off in this process (``c.GradingSettings.warm_sandbox``, applied by
    :meth:`autograder.settings.Settings.apply`)."""
    global _ENABLED
    _ENABLED = on


def enabled() -> bool:
    """Whether runs fork from warm sessions here: as chosen, else unless ``$SELFATTN_WARM_SANDBOX=0``."""
    from autograder.environment import setting_overrides

    return _ENABLED if _ENABLED is not None else setting_overrides().get("warm_sandbox", True) is not False


def sessions() -> dict[bool, Session | None]:
    """The sessions for one notebook's public (``False``) and hidden (``True``) runs; give them
    back with :func:`release`.

    Under bubblewrap both are this worker's shared session (one per process and thread, started on
    its first run, kept for the next notebooks): the sandbox wipes what each run leaves. In
    fallback mode, two new sessions (nothing is wiped there); with warm sessions turned off
    (``c.GradingSettings.warm_sandbox = False`` or ``$SELFATTN_WARM_SANDBOX=0``), none (a freshly
    started sandbox per run).
    """
    if not enabled():
        return {False: None, True: None}
    if sandbox.mode() != "bubblewrap":
        return {False: Session(), True: Session()}
    shared = getattr(_local, "session", None)
    if shared is None or shared.owner != os.getpid():  # none yet, or inherited through a fork
        shared = _local.session = Session()
        atexit.register(shared.close)
        # multiprocessing's workers end without atexit; bubblewrap's --die-with-parent is the backstop
        multiprocessing.util.Finalize(None, shared.close, exitpriority=0)
    return {False: shared, True: shared}


def release(sessions_: dict[bool, Session | None]) -> None:
    """Close what :func:`sessions` opened for one notebook alone (the shared session stays)."""
    for s in {id(s): s for s in sessions_.values() if s is not None}.values():
        if s is not getattr(_local, "session", None):
            s.close()


class Session:
    """One warm sandbox, started on the first run and ended by :meth:`close` (or a failed run)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.ctl: socket.socket | None = None
        self.workdir: str | None = None
        self.owner = os.getpid()  # a forked process must not close (kill) its parent's sandbox
        self.runs = 0  # runs since the sandbox started (for tests and benchmarks)
        self.group: cgroups.Group | None = None  # the sandbox's cgroups, where each run is born

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # a run that raised never reached close()
        try:
            self.close()
        except Exception:
            pass

    def _start(self, limits: sandbox.Limits = sandbox.DEFAULT) -> None:
        sweep_orphans()
        if cgroups.hierarchies():  # bubblewrap and the pre-warmed process join before they start
            self.group = cgroups.make(limits.memory_bytes + cgroups.IDLE_MEMORY, limits.tasks + 8)
            self.group.shared, self.group.protect = True, self._own_processes
        fds = self.group.procs_fds() if self.group is not None else []
        self.workdir = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=command_.run_folder())
        command_.prepare_workdir(self.workdir, (sandbox.INSIDE / "harness.py", sandbox.CALLING,
                                                sandbox.INSIDE / "zygote.py"))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        filter_fd = seccomp.program_fd() if sandbox.mode() == "bubblewrap" else None
        command, env = sandbox.sandbox_command(self.workdir, theirs.fileno(), script="zygote.py", seccomp_fd=filter_fd)
        if sandbox.mode() == "bubblewrap":
            # the pre-warmed process is PID 1 of the sandbox's namespace: signals from the
            # student's code cannot kill it, and orphans of a run are its children to reap
            command.insert(command.index("--unshare-all") + 1, "--as-pid-1")
            i = command.index("--clearenv")
            command[i + 1 : i + 1] = ["--setenv", "ZYGOTE_SCAN", "1",
                                      "--setenv", "ZYGOTE_WIPE", ":".join(sandbox.WRITABLE)]
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL,
                                         pass_fds=(theirs.fileno(), *seccomp.passed(filter_fd)),
                                         preexec_fn=command_.preexec_limits(None, fds), cwd=self.workdir,
                                         env=env)
        finally:
            seccomp.close(filter_fd)
        theirs.close()
        self.ctl = ours
        self.runs = 0

    def close(self) -> None:
        if self.ctl is not None:
            self.ctl.close()
            self.ctl = None
        if self.owner != os.getpid():  # a copy inherited through fork: the sandbox is the parent's
            self.proc = self.workdir = self.group = None
            return
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self.proc = None
        if self.group is not None:
            self.group.hit()  # remembered: the run that ended the sandbox may have hit a cap
            self.group.remove()
            self.group = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def _own_processes(self) -> set[int]:
        """bubblewrap and the pre-warmed process (its child; without bubblewrap, the pre-warmed
        process alone, whose children are the runs): what a run's cap never kills."""
        if self.proc is None:
            return set()
        own = {self.proc.pid}
        if sandbox.mode() != "bubblewrap":
            return own
        for pid in cgroups.members(self.group) if self.group is not None else []:
            try:
                if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    own.add(pid)
            except (OSError, ValueError, IndexError):
                pass
        return own

    def group_for(self, limits: sandbox.Limits) -> cgroups.Group:
        """The cgroups of the next run (the sandbox's own, capped for it; the sandbox is started or,
        if it holds too much while idle, started again), or new empty ones where there are none."""
        starting = self.proc is None or self.proc.poll() is not None
        if starting:
            self.close()
            self._start(limits)
        if self.group is not None and not self.group.begin_run(limits.memory_bytes, limits.tasks, starting):
            self.close()  # it holds too much while idle: a new one
            self._start(limits)
            if not self.group.begin_run(limits.memory_bytes, limits.tasks, starting=True):
                raise RuntimeError(f"a new warm sandbox already holds more than {cgroups.IDLE_MEMORY >> 20} MiB")
        return self.group if self.group is not None else cgroups.make(limits.memory_bytes, limits.tasks)

    def execute(self, first: bytes, second: bytes, limits: sandbox.Limits, retried: bool = False,
                group: cgroups.Group | None = None, relay=None) -> tuple[bytes, bool, bool, int | None]:
        """One run in a fresh child: (result bytes, timed out, too big, exit status or None).

        ``first`` (the cells) and ``second`` (the cases, sent only once the harness asks) are the
        frames :func:`autograder.sandbox.run` would send to a newly started sandbox; ``group`` is
        what :meth:`group_for` gave for this run (the run is stopped once it hits one of its caps);
        ``relay`` (an :class:`autograder.sandbox.oracle.Relay` writing to a queue of replies) answers
        the requests of a run judged with the course's functions.
        """
        if self.proc is None or self.proc.poll() is not None:  # it ended since group_for
            self.group_for(limits)
        assert self.ctl is not None
        stdin_r, stdin_w = os.pipe()
        result_r, result_w = os.pipe()
        request = {"cpu": limits.cpu_seconds, "as": limits.memory_bytes, "fsize": limits.file_bytes}
        try:
            socket.send_fds(self.ctl, [json.dumps(request).encode()], [stdin_r, result_w])
            sent = True
        except OSError:
            sent = False
        os.close(stdin_r)
        os.close(result_w)
        if not sent:  # the warm sandbox is gone: start another one, once
            os.close(stdin_w)
            os.close(result_r)
            self.close()
            if retried:
                return b"", False, False, None
            return self.execute(first, second, limits, retried=True, group=group, relay=relay)
        asked = threading.Event()
        stdin = os.fdopen(stdin_w, "wb")
        replies = relay.replies if relay is not None else None
        feeder = threading.Thread(target=sandbox.feed, args=(stdin, first, second, asked, replies), daemon=True)
        feeder.start()
        child = _Child(self.ctl)
        try:
            data, timed_out, too_big = sandbox.collect(result_r, child, limits, on_first_byte=asked.set,
                                                        kill=lambda: None,
                                                        stop=group.stop_if_capped if group else None, relay=relay)
        except BaseException:
            self.close()  # interrupted mid-run: the run's exit status would reach the next run
            raise
        finally:
            asked.set()
            if replies is not None:
                replies.put(None)
        rc = child.returncode
        self.runs += 1
        if timed_out or too_big or rc is None or not child.clean or (relay is not None and relay.refused):
            self.close()  # whatever is still running in there goes with it
        feeder.join(timeout=5)
        return data, timed_out, too_big, rc
