"""The pre-warmed sandbox (one per grading worker, a forked child per run) keeps a fresh run's
guarantees: same answers, a new process per run with nothing carried over, no process or file of
an earlier run left, its own limits, and a student who attacks or kills the pre-warmed process
costs nothing to the next run, whoever's it is.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from autograder import sandbox
from autograder.paths import ROOT
from autograder.sandbox import warm
from selfattn.checks.calling import Case

PROBE = """
import os
seen = globals().get("seen", 0) + 1
def f(x):
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
    return np.array([os.getpid(), seen, len(others), float(np.sum(x))])
"""


@pytest.fixture()
def session():
    with warm.Session() as s:
        yield s


def _probe(session, extra: str = "") -> np.ndarray:
    result = sandbox.run([("f", extra + PROBE)], "f", [Case((np.arange(4.0),))], session=session)
    assert result.outcomes is not None, result.failure
    return result.outcomes[0].value


def test_same_answers_as_a_fresh_sandbox(session):
    cells = [("f", "def f(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
                   "    return e / e.sum(axis=axis, keepdims=True)\n")]
    cases = [Case((np.arange(6.0).reshape(2, 3),)), Case((np.ones((3, 2)),), {"axis": 0}), Case(("text",))]
    warm_run = sandbox.run(cells, "f", cases, session=session)
    fresh = sandbox.run(cells, "f", cases)
    assert warm_run.outcomes is not None and fresh.outcomes is not None
    for a, b in zip(warm_run.outcomes, fresh.outcomes, strict=True):
        assert (a.error is None) == (b.error is None)
        if a.error is None:
            np.testing.assert_array_equal(a.value, b.value)


def test_every_run_is_a_new_process_with_nothing_carried_over(session):
    first, second = _probe(session), _probe(session)
    assert first[0] != second[0]  # another process
    assert first[1] == second[1] == 1  # module state starts afresh
    assert first[3] == second[3] == 6.0


def test_processes_left_by_a_run_are_gone_before_the_next(session):
    if sandbox.mode() != "bubblewrap":
        pytest.skip("needs the sandbox's own PID namespace")  # the fallback only kills the run's session
    leave = ("import os, time\n"
             "for _ in range(3):\n"
             "    if os.fork() == 0:\n"
             "        os.setsid()\n"
             "        time.sleep(600)\n"
             "        os._exit(0)\n")
    _probe(session, leave)
    assert _probe(session)[2] == 0


def test_limits_apply_per_run_and_a_killed_warm_process_is_replaced(session):
    loop = sandbox.run([("f", "def f(x):\n    while True:\n        pass\n")], "f", [Case((1,))],
                       sandbox.Limits(cpu_seconds=1), session=session)
    assert loop.outcomes is None and loop.failure is not None and "CPU" in loop.failure.text, loop.failure
    assert _probe(session)[3] == 6.0  # the time-out ended that warm sandbox; a new one answers
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    _probe(session, killer)
    assert _probe(session)[3] == 6.0


HOSTILE = r'''
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    parent = os.getppid()
    # processes that outlive the run: one in the run's session, one in a session of its own
    for own_session in (False, True):
        if os.fork() == 0:
            if own_session:
                os.setsid()
            time.sleep(600)
            os._exit(0)
    # files for the next run, in every place it can write, some hard to remove
    for folder in ("/tmp", "/dev/shm"):
        with open(f"{folder}/hidden-input.txt", "w") as fh:
            fh.write(repr(x.tolist()))
        os.makedirs(f"{folder}/deep/er", exist_ok=True)
        os.symlink("/harness", f"{folder}/deep/link")
        os.chmod(f"{folder}/deep", 0)
        try:
            os.setxattr(folder, "user.secret", b"42")
        except OSError:
            pass
    os.chmod("/tmp", 0o700)
    wrote = []
    for path in ("/sandbox-root.txt", "/site/numpy-shadow.py", "/dev/evil"):
        try:
            open(path, "w").write("x")
            wrote.append(path)
        except OSError:
            pass
    # a System V shared memory segment outlives every process
    libc.shmget(0, 4096, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
    mq = libc.mq_open(b"/left", 0o100 | 2, 0o600, None)  # O_CREAT | O_RDWR
    # the pre-warmed process it was forked from: ptrace it, write its memory, kill it
    traced = libc.ptrace(16, parent, None, None)  # PTRACE_ATTACH
    try:
        with open(f"/proc/{parent}/mem", "r+b"):
            mem = 1.0
    except OSError:
        mem = 0.0
    for sig in (signal.SIGKILL, signal.SIGSTOP):  # (the parent is the run's supervisor: it may be gone)
        try:
            os.kill(parent, sig)
        except ProcessLookupError:
            pass
    return np.array([float(traced == 0), mem, float(len(wrote)), float(mq >= 0)])
'''

LOOK = r'''
import os
def f(x):
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
    left = os.listdir("/tmp") + os.listdir("/dev/shm") + os.listxattr("/tmp") + os.listxattr("/dev/shm")
    ipc = sum(len(open(f"/proc/sysvipc/{k}").read().splitlines()) - 1 for k in ("shm", "msg", "sem"))
    mode = os.stat("/tmp").st_mode & 0o777
    return np.array([len(others), len(left), ipc, mode, float(np.sum(x))])
'''


def test_a_hostile_run_leaves_nothing_for_the_next_student(session):
    """One worker's sandbox serves every student: a run that leaves processes, files, an IPC
    segment and a changed /tmp, and attacks the pre-warmed process, reaches nothing of the next run."""
    if sandbox.mode() != "bubblewrap":
        pytest.skip("the shared sandbox is used under bubblewrap only")
    clean = sandbox.run([("f", LOOK)], "f", [Case((np.arange(4.0),))], session=session)
    before = clean.outcomes[0].value
    hostile = sandbox.run([("f", HOSTILE)], "f", [Case((np.arange(3.0),))], sandbox.Limits(cpu_seconds=10),
                          session=session)
    assert hostile.outcomes is not None, hostile.failure
    ptraced, mem_opened, wrote, mq = hostile.outcomes[0].value
    assert (ptraced, mem_opened) == (0, 0), "a run could ptrace or open the memory of the pre-warmed process"
    assert wrote == 0, "a run could write outside /tmp and /dev/shm"
    assert mq == 0, "a run could create a POSIX message queue"
    after = sandbox.run([("f", LOOK)], "f", [Case((np.arange(4.0),))], session=session)
    assert after.outcomes is not None, after.failure
    np.testing.assert_array_equal(after.outcomes[0].value, before)
    assert before[:3].tolist() == [0, 0, 0] and before[4] == 6.0


def test_the_shared_sandbox_is_reused_while_runs_leave_nothing(session):
    if sandbox.mode() != "bubblewrap":
        pytest.skip("the shared sandbox is used under bubblewrap only")
    for _ in range(3):
        _probe(session, "import os\nos.environ['LEFT'] = 'x'\n")
    assert session.runs == 3  # one sandbox for the three runs: they left nothing
    warm_pid = session.proc.pid
    # a file is removed, but the next file's inode number would tell how many the run created
    _probe(session, "open('/tmp/scratch', 'w').write('x')\n")
    _probe(session)
    assert session.runs == 1 and session.proc.pid != warm_pid  # so the next run got a new sandbox


def test_one_worker_shares_one_sandbox_across_notebooks():
    if sandbox.mode() != "bubblewrap":
        pytest.skip("the shared sandbox is used under bubblewrap only")
    first, second = warm.sessions(), warm.sessions()
    assert first[False] is first[True] is second[False]
    warm.release(first)
    assert _probe(first[False])[3] == 6.0  # release keeps the shared sandbox open for the next notebook


def test_the_folder_of_a_killed_owner_is_removed_by_the_next_sandbox():
    """A grading process killed outright (SIGKILL, the out-of-memory killer) cannot remove its warm
    sandbox's folder; the next warm sandbox started on the machine does, and keeps a live one's."""
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import time
        import numpy as np
        from autograder import sandbox
        from autograder.sandbox import warm
        from selfattn.checks.calling import Case
        s = warm.Session()
        sandbox.run([("f", "def f(x):\\n    return x\\n")], "f", [Case((np.zeros(1),))], session=s)
        print(s.workdir, flush=True)
        time.sleep(300)
    """)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        killed = Path(owner.stdout.readline().strip())
        assert killed.is_dir() and f"-{owner.pid}-" in killed.name
    finally:
        owner.kill()
        owner.wait()
    assert killed.is_dir()  # the premise: nothing removed it
    with warm.Session() as live:
        _probe(live)
        assert not killed.exists()
        with warm.Session() as second:
            _probe(second)
            assert Path(live.workdir).is_dir()  # its owner (this process) is alive


#: Tries to write every file of the pre-warmed process (PID 1 of the sandbox) and of the run's
#: supervisor (its parent), their threads included, with values the kernel accepts where a write is
#: allowed at all (the file's own content, 0, 1); raises naming every file a write succeeded on.
WRITE_PROC = r'''
import os

def _writes(path):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return False
    try:
        try:
            with open(path, "rb") as fh:
                own = fh.read(4096)
        except OSError:
            own = b""
        for value in (own, b"0\n", b"1\n"):
            try:
                if value and os.write(fd, value) > 0:
                    return True
            except OSError:
                pass
        return False
    finally:
        os.close(fd)

def _files(root):
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = f"{folder}/{name}"
            if os.path.isdir(path) and not os.path.islink(path):
                stack.append(path)
            else:
                yield path

def f(x):
    roots = ["/proc/1", f"/proc/{os.getppid()}"]
    tried = [p for root in roots for p in _files(root)]
    wrote = sorted(p.replace(roots[1], "/proc/SUPERVISOR") for p in tried if _writes(p))
    if wrote:
        raise ValueError("WROTE " + " ".join(wrote))
    return np.array([float(len(tried)), float("/proc/1/autogroup" in tried), float("/proc/1/clear_refs" in tried)])
'''


def test_no_file_of_the_pre_warmed_process_or_the_supervisor_can_be_written(session):
    """The pre-warmed process's /proc files (autogroup, sched, clear_refs, oom_score_adj, comm, its
    descriptors, ...) are what every later run inherits or shares: a run may write none of them,
    whoever started the grader (as root, the sandbox's root would own them)."""
    if sandbox.mode() != "bubblewrap":
        pytest.fail("the pre-warmed process is PID 1 of its own namespace under bubblewrap only")
    result = sandbox.run([("f", WRITE_PROC)], "f", [Case((np.arange(2.0),))], sandbox.Limits(cpu_seconds=20),
                         session=session)
    assert result.outcomes is not None, result.failure
    outcome = result.outcomes[0]
    assert outcome.error is None, outcome.error
    tried, autogroup, clear_refs = outcome.value
    assert tried > 100 and autogroup == clear_refs == 1  # the walk reached the files it is about
    assert session.runs == 1 and _probe(session)[3] == 6.0  # the sandbox went on serving runs
