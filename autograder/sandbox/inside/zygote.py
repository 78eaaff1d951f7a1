"""Runs *inside* the grading sandbox: a pre-warmed interpreter that forks one fresh child per run.

Starting a sandboxed Python and importing NumPy costs about a tenth of a second; a class needs
thousands of runs (one per graded function and per public/hidden group of each notebook). This
process pays it once per grading worker: it imports NumPy and the harness, then waits on its
control socket (the descriptor named by $RESULT_FD) for requests. A request carries the run's
limits and two descriptors, the run's stdin and its result pipe. For each one it forks a
*supervisor*, which forks the run: a child that applies the limits, starts its own session, holds
no descriptor but its stdin, a new /dev/null as stdout and stderr and its result pipe, and runs
:func:`harness.main` exactly as a fresh sandbox would; the student's code only ever runs in that
child, which sees only its own inputs.

When the run has exited, nothing of it may reach the next one (of the same student or of
another). The supervisor, not this process, looks at what the run left, so nothing a run chose
(its exit status, the names of its files) is ever in the memory that later runs are forked from.
In the sandbox's own PID namespace, where this process is PID 1 (see $ZYGOTE_SCAN), the supervisor
(the subreaper of the run's orphans) kills every other process; empties the folders a run can
write ($ZYGOTE_WIPE: the sandbox's /tmp and /dev/shm, everything else is read-only), removes their
extended attributes and restores their modes and times (a run can set a time to any number); checks
that their inode flags (no-dump, no-atime) are unchanged; and checks that the run used no kernel counter the
next run could read: no process or thread beyond the run itself (the next run's PID would tell how
many) and no file created in those folders (their next inode number would), and no System V IPC
object (the seccomp filter refuses them; POSIX message queues are refused too). Anything else
counts as something that cannot be wiped. It sends the run's exit code on the control socket as
one JSON line, with ``"clean": false`` if anything could not be removed: this process then exits,
and the next run gets a new sandbox.

This process is not dumpable (``PR_SET_DUMPABLE`` 0): a run, in the same user namespace and
without capabilities, can neither ptrace it nor open its ``/proc/<pid>/mem``, so it cannot change
what later runs are forked from; and its ``/proc`` files belong to the machine's root (the
sandbox's user is never root, :func:`autograder.sandbox.command.run_as`), so a run can write none
of them (``autogroup``, ``sched``, ``clear_refs``, ``oom_score_adj``, ...; nor the supervisor's,
not dumpable either); the seccomp filter refuses changing its limits or scheduling.
It never reads a run's inputs and never runs student code. EOF on the control socket ends it.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
#: The supervisor's exit status: it reported a clean run, an unclean one, or (anything else) none.
_CLEAN, _UNCLEAN = 0, 1


def _prctl(option: int, value: int) -> None:
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value}) failed")


def _set_dumpable(value: int) -> None:
    _prctl(PR_SET_DUMPABLE, value)


def _own_namespace() -> bool:
    """Whether this process is the init of the sandbox's own PID namespace (bubblewrap's
    ``--as-pid-1``): only then may it kill every other process and wipe the writable folders."""
    return os.environ.get("ZYGOTE_SCAN") == "1" and os.getpid() <= 3


def _kill_the_rest(child: int, own: bool) -> bool:
    """Kill whatever the child left behind, so the next run starts alone; False if something stays."""
    try:
        os.killpg(child, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    # a process may have left the child's session: in the sandbox's own PID namespace, everything
    # but its init (the pre-warmed process) and this process (the run's supervisor) goes
    if not own:
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
        try:  # as the subreaper, this process inherits every orphan: reap them all (zombies count as left)
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


def _wipe(modes: dict[str, tuple]) -> bool:
    """Return the writable folders to how the sandbox started (empty, same mode, no extended
    attributes) and check that no System V IPC object is left; False if anything stays."""
    try:
        for folder, (mode, *_rest) in modes.items():
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


def _inode_probe(folder: str) -> int:
    """The inode number a new file in ``folder`` gets (the file is removed again)."""
    path = os.path.join(folder, ".zygote-probe")
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)
        os.unlink(path)


def _last_pid() -> int:
    """The last PID handed out in this PID namespace (``/proc/loadavg``, fifth field)."""
    with open("/proc/loadavg") as f:
        return int(f.read().split()[4])


def _counters_untouched(run: int, inodes: dict[str, int]) -> bool:
    """Whether the run created no process or thread but itself (``run`` is still the last PID) and
    no file in the writable folders (their next inode number is the one ``inodes`` expects)."""
    try:
        if _last_pid() != run:
            return False
        return all(_inode_probe(folder) == expected for folder, expected in inodes.items())
    except Exception:
        return False


def _zygote_state() -> tuple[str, ...]:
    """What later runs inherit from the pre-warmed process (PID 1) and another process might change:
    its limits, OOM score, core-dump filter, nice value and scheduling. (The seccomp filter refuses
    changing limits and scheduling of another process, and a run owns none of this process's /proc
    files; checked all the same. Its CPUs are the seccomp filter's alone to keep.)"""
    def read(name: str) -> str:
        with open(f"/proc/1/{name}") as f:
            return f.read()

    try:
        stat = read("stat").rsplit(")", 1)[1].split()  # from the 3rd field: nice, rt_priority, policy
        return read("limits"), read("oom_score_adj"), read("coredump_filter"), stat[16], stat[37], stat[38]
    except (OSError, IndexError):
        return ()


def _marks(folder: str) -> tuple[int, int, int, bytes]:
    """A writable folder's mode, access and modification times, and inode flags (FS_IOC_GETFLAGS)."""
    import fcntl

    st = os.stat(folder)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        flags = fcntl.ioctl(fd, 0x80086601, bytes(8))
    except OSError:
        flags = b""
    finally:
        os.close(fd)
    return st.st_mode & 0o7777, st.st_atime_ns, st.st_mtime_ns, flags


def _restore_marks(marks: dict[str, tuple[int, int, int, bytes]]) -> bool:
    """Put back the folders' times as they were when the sandbox started (removing files and the
    probe changed them; a run may have set them to anything); False if their marks still differ."""
    try:
        for folder, (_mode, atime, mtime, _flags) in marks.items():
            os.utime(folder, ns=(atime, mtime))
        return all(_marks(folder) == mark for folder, mark in marks.items())
    except Exception:
        return False


def _child(stdin_fd: int, result_fd: int, limits: dict) -> None:
    """In the forked child: become a fresh run of the harness. Never returns."""
    code = 1
    try:
        os.dup2(stdin_fd, 0)
        os.close(stdin_fd)
        null = os.open(os.devnull, os.O_RDWR)  # stdout and stderr of its own: flags set on an
        os.dup2(null, 1)  # inherited one would be shared with the pre-warmed process and later runs
        os.dup2(null, 2)
        os.close(null)
        os.closerange(3, result_fd)  # nothing but stdin, stdout, stderr and the result pipe
        os.closerange(result_fd + 1, 1 << 20)
        os.environ["RESULT_FD"] = str(result_fd)
        for name in ("ZYGOTE_SCAN", "ZYGOTE_WIPE"):  # the environment of a fresh run
            os.environ.pop(name, None)
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


def _supervise(ctl: socket.socket, stdin_fd: int, result_fd: int, limits: dict, marks: dict[str, tuple],
               own: bool, inodes: dict[str, int]) -> None:
    """In a process forked for one run: fork the run, wait for it, remove what it left, report on
    ``ctl``, and exit with :data:`_CLEAN` or :data:`_UNCLEAN` (anything else: nothing was reported)."""
    code = 2
    try:
        if own:
            _prctl(PR_SET_CHILD_SUBREAPER, 1)  # the run's orphans come to this process, not to PID 1
            zygote = _zygote_state()
        run = os.fork()
        if run == 0:
            ctl.close()
            _child(stdin_fd, result_fd, limits)
        os.close(stdin_fd)
        os.close(result_fd)
        _pid, status = os.waitpid(run, 0)
        clean = _kill_the_rest(run, own)
        if own:
            # counters first: a run that made a file ends the sandbox, whose folders need no emptying
            clean = (clean and _counters_untouched(run, inodes) and _wipe(marks) and _restore_marks(marks)
                     and _zygote_state() == zygote)
        ctl.sendall(json.dumps({"rc": os.waitstatus_to_exitcode(status), "clean": clean}).encode() + b"\n")
        code = _CLEAN if clean else _UNCLEAN
    finally:
        os._exit(code)


def _orphaned_run(supervisor: int) -> int:
    """The exit code of the run whose supervisor was killed (by the run, most likely): the run is
    this process's child now, and the PID after its supervisor's (the supervisor forks it first,
    and nothing else in the namespace forks). Its results are still read; the sandbox ends after."""
    try:
        _pid, status = os.waitpid(supervisor + 1, 0)
        return os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        return -signal.SIGKILL


def main() -> int:
    _set_dumpable(0)  # before anything else: no run may ptrace this process or write its memory
    own = _own_namespace()  # else (no PID namespace of its own): nothing is wiped, the folders are the machine's
    wipe = [f for f in os.environ.get("ZYGOTE_WIPE", "").split(":") if f] if own else []
    sys.path.append(os.environ["SELFATTN_SITE"])  # NumPy's folder only: python runs with -I -S
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    # imported once, inherited by every child: NumPy, the harness, and what every run imports on its
    # way (np.load and np.savez: zipfile, and its code page for member names; an exception's message:
    # traceback), which took about as long as the rest of a run
    import encodings.cp437  # noqa: F401
    import traceback  # noqa: F401
    import zipfile  # noqa: F401

    import calling  # noqa: F401
    import harness  # noqa: F401
    import numpy  # noqa: F401

    ctl = socket.socket(fileno=int(os.environ["RESULT_FD"]))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    # each run's supervisor checks that the run's probe file gets the next inode number
    inodes = {folder: _inode_probe(folder) for folder in wipe}
    for folder in wipe:  # times that tell nothing, not even when this sandbox started
        os.utime(folder, ns=(0, 0))
    marks = {folder: _marks(folder) for folder in wipe}
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
        inodes = {folder: number + 1 for folder, number in inodes.items()}
        supervisor = os.fork()
        if supervisor == 0:
            _supervise(ctl, stdin_fd, result_fd, json.loads(msg), marks, own, inodes)
        os.close(stdin_fd)
        os.close(result_fd)
        _pid, status = os.waitpid(supervisor, 0)
        if os.waitstatus_to_exitcode(status) == _CLEAN:
            continue
        if os.waitstatus_to_exitcode(status) != _UNCLEAN:  # the supervisor was killed before reporting
            ctl.sendall(json.dumps({"rc": _orphaned_run(supervisor), "clean": False}).encode() + b"\n")
        return 1  # the namespace ends with this process: whatever is left is killed


if __name__ == "__main__":
    sys.exit(main())
