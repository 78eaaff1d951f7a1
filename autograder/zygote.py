"""Runs *inside* the grading sandbox: a pre-warmed interpreter that forks one fresh child per run.

Starting a sandboxed Python and importing NumPy costs about a tenth of a second; a notebook needs
several runs (one per graded function and per public/hidden group). This process pays it once per
notebook: it imports NumPy and the harness, then waits on its control socket (the descriptor named
by $RESULT_FD) for requests. A request carries the run's limits and two descriptors, the run's
stdin and its result pipe. For each one it forks a child that applies the limits, starts its own
session and runs :func:`harness.main` exactly as a fresh sandbox would; the student's code only
ever runs in that child, which sees only its own inputs. When the child has exited, every other
process left in the sandbox is killed (in a PID namespace of its own, where it is PID 1, see $ZYGOTE_SCAN), and the
child's exit code goes back on the control socket as one JSON line.

This process never reads a run's inputs and never runs student code. EOF on the control socket
ends it.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys


def _kill_the_rest(child: int) -> None:
    """Kill whatever the child left behind, so the next run starts alone."""
    try:
        os.killpg(child, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    # a process may have left the child's session: in the sandbox's own PID namespace (where this
    # process is one of the first PIDs), everything but its init and this process goes
    if os.environ.get("ZYGOTE_SCAN") != "1" or os.getpid() > 3:
        return
    me = os.getpid()
    for _ in range(1000):
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
        if not others:
            return
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


def _child(stdin_fd: int, result_fd: int, limits: dict) -> None:
    """In the forked child: become a fresh run of the harness. Never returns."""
    code = 1
    try:
        os.dup2(stdin_fd, 0)
        os.close(stdin_fd)
        os.environ["RESULT_FD"] = str(result_fd)
        os.setsid()
        for name, value in (("RLIMIT_CPU", limits["cpu"]), ("RLIMIT_AS", limits["as"]),
                            ("RLIMIT_FSIZE", limits["fsize"]), ("RLIMIT_CORE", 0)):
            hard = value + 1 if name == "RLIMIT_CPU" else value
            resource.setrlimit(getattr(resource, name), (value, hard))
        import harness

        code = harness.main()
    finally:
        os._exit(code if isinstance(code, int) else 1)


def main() -> int:
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
        _kill_the_rest(pid)
        ctl.sendall(json.dumps({"rc": os.waitstatus_to_exitcode(status)}).encode() + b"\n")


if __name__ == "__main__":
    sys.exit(main())
