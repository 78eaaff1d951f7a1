"""Runs *inside* the grading sandbox: a pre-warmed interpreter that forks one fresh child per run.

Starting a sandboxed Python and importing NumPy costs about a tenth of a second; a class needs
thousands of runs (one per graded function and per public/hidden group of each notebook). This
process pays it once per grading worker: it imports NumPy and the harness, then waits on its
control socket (the descriptor named by $RESULT_FD) for requests. A request carries the run's
limits and two descriptors, the run's stdin and its result pipe. For each one it forks a child
that applies the limits, starts its own session and runs :func:`harness.main` exactly as a fresh
sandbox would; the student's code only ever runs in that child, which sees only its own inputs.

When the child has exited, nothing of the run may reach the next one (of the same student or of
another). In the sandbox's own PID namespace, where this process is PID 1 (see $ZYGOTE_SCAN),
every other process left is killed; the folders a run can write ($ZYGOTE_WIPE: the sandbox's
/tmp and /dev/shm, everything else is read-only) are emptied, their extended attributes removed
and their modes restored; and a System V IPC object left behind (POSIX message queues are refused
by a zero RLIMIT_MSGQUEUE) counts as something that cannot be wiped. The child's exit code goes
back on the control socket as one JSON line, with ``"clean": false`` if anything could not be
removed: this process then exits, and the next run gets a new sandbox.

This process is not dumpable (``PR_SET_DUMPABLE`` 0): a run, in the same user namespace and
without capabilities, can neither ptrace it nor open its ``/proc/<pid>/mem``, so it cannot change
what later runs are forked from. It never reads a run's inputs and never runs student code. EOF
on the control socket ends it.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys

PR_SET_DUMPABLE = 4


def _set_dumpable(value: int) -> None:
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def _own_namespace() -> bool:
    """Whether this process is the init of the sandbox's own PID namespace (bubblewrap's
    ``--as-pid-1``): only then may it kill every other process and wipe the writable folders."""
    return os.environ.get("ZYGOTE_SCAN") == "1" and os.getpid() <= 3


def _kill_the_rest(child: int) -> bool:
    """Kill whatever the child left behind, so the next run starts alone; False if something stays."""
    try:
        os.killpg(child, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    # a process may have left the child's session: in the sandbox's own PID namespace (where this
    # process is one of the first PIDs), everything but its init and this process goes
    if not _own_namespace():
        return True
    me = os.getpid()
    for _ in range(1000):
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
        if not others:
            return True
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:  # as PID 1 this process inherits every orphan: reap them all (zombies count as left)
            while True:
                os.waitpid(-1, 0)
        except ChildProcessError:
            pass
    return False


def _empty(folder: str) -> None:
    """Remove everything inside ``folder`` (never following a symbolic link)."""
    with os.scandir(folder) as entries:
        for entry in list(entries):
            if entry.is_dir(follow_symlinks=False):
                os.chmod(entry.path, 0o700)  # a run may have taken the permissions away
                _empty(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)


def _wipe(modes: dict[str, int]) -> bool:
    """Return the writable folders to how the sandbox started (empty, same mode, no extended
    attributes) and check that no System V IPC object is left; False if anything stays."""
    try:
        for folder, mode in modes.items():
            os.chmod(folder, mode)
            for name in os.listxattr(folder):
                os.removexattr(folder, name)
            _empty(folder)
            if os.listdir(folder) or os.listxattr(folder):
                return False
        for kind in ("shm", "msg", "sem"):
            with open(f"/proc/sysvipc/{kind}") as table:
                if len(table.read().splitlines()) > 1:  # a header line, then one line per object
                    return False
    except Exception:  # too deep, unreadable, anything unexpected: the sandbox is not reused
        return False
    return True


def _child(stdin_fd: int, result_fd: int, limits: dict) -> None:
    """In the forked child: become a fresh run of the harness. Never returns."""
    code = 1
    try:
        os.dup2(stdin_fd, 0)
        os.close(stdin_fd)
        os.environ["RESULT_FD"] = str(result_fd)
        os.setsid()
        _set_dumpable(1)  # as a fresh run is; the pre-warmed process it was forked from stays not dumpable
        for name, value in (("RLIMIT_CPU", limits["cpu"]), ("RLIMIT_AS", limits["as"]),
                            ("RLIMIT_FSIZE", limits["fsize"]), ("RLIMIT_CORE", 0), ("RLIMIT_MSGQUEUE", 0)):
            hard = value + 1 if name == "RLIMIT_CPU" else value
            resource.setrlimit(getattr(resource, name), (value, hard))
        import harness

        code = harness.main()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def main() -> int:
    _set_dumpable(0)  # before anything else: no run may ptrace this process or write its memory
    own = _own_namespace()  # else (no PID namespace of its own): nothing is wiped, the folders are the machine's
    wipe = [f for f in os.environ.get("ZYGOTE_WIPE", "").split(":") if f] if own else []
    modes = {folder: os.stat(folder).st_mode & 0o7777 for folder in wipe}
    sys.path.append(os.environ["SELFATTN_SITE"])  # NumPy's folder only: python runs with -I -S
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import calling  # noqa: F401
    import harness  # noqa: F401
    import numpy  # noqa: F401 - the point: imported once, inherited by every child

    ctl = socket.socket(fileno=int(os.environ["RESULT_FD"]))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(ctl, 4096, 2)
        except OSError:
            return 0
        if not msg:
            return 0
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            return 1
        stdin_fd, result_fd = fds
        pid = os.fork()
        if pid == 0:
            ctl.close()
            _child(stdin_fd, result_fd, json.loads(msg))
        os.close(stdin_fd)
        os.close(result_fd)
        _pid, status = os.waitpid(pid, 0)
        clean = _kill_the_rest(pid) and (_wipe(modes) if own else True)
        ctl.sendall(json.dumps({"rc": os.waitstatus_to_exitcode(status), "clean": clean}).encode() + b"\n")
        if not clean:
            return 1


if __name__ == "__main__":
    sys.exit(main())
