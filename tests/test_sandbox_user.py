"""Student code runs as an unprivileged host user, whoever starts the grader: started by root, the
sandbox's user namespace would map its root to the machine's, and a run would own the pre-warmed
process's ``/proc`` files and read the kernel's root-only tables (which pages are in memory, of
what, the slab and vmalloc tables).

In a freshly started, a pre-warmed and a fallback sandbox alike: the run's host user is not root
(as root, the grader starts every sandbox as :func:`autograder.sandbox.command.run_as`'s user), no
root-only table opens, and no file of PID 1 or of the grading process opens for writing.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from grading_support import ROOT

from autograder import sandbox
from autograder.sandbox import command, warm
from selfattn.checks.calling import Case

#: Root-only tables of /proc: which physical pages are in use and how (the page cache of every
#: process), the kernel's slab and vmalloc allocations.
ROOT_ONLY = ("/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup", "/proc/slabinfo", "/proc/vmallocinfo")
#: Files of another process that a write to would change for it (or reset its counters), whose
#: permission is checked when they are opened (0644 and 0200 files owned by the process's user).
OTHERS = ("autogroup", "clear_refs", "sched", "oom_score_adj", "oom_adj", "coredump_filter", "comm")

#: The run's uid and the owner of /usr as the run sees it (the host's root, or the kernel's overflow
#: uid where the host's root is not mapped into the run's user namespace), then per root-only table
#: and per file of PID 1 and of the run's parent (the grader, or the warm sandbox's supervisor), the
#: errno of opening it (0: it opened).
WHO_AND_WHAT = r'''
import os
def _errno(path, flags):
    try:
        os.close(os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY))
        return 0
    except OSError as e:
        return e.errno

def f(x):
    tables = [_errno(p, os.O_RDONLY) for p in ROOT_ONLY]
    pids = [1, os.getppid()]
    writes = [_errno(f"/proc/{pid}/{name}", os.O_WRONLY) for pid in pids for name in OTHERS]
    who = np.array([float(os.getuid()), float(os.stat("/usr").st_uid), float(len(pids))])
    return who, np.array(tables, dtype=float), np.array(writes, dtype=float)
'''


CELL = f"ROOT_ONLY = {ROOT_ONLY!r}\nOTHERS = {OTHERS!r}\n" + WHO_AND_WHAT


def expected_user() -> int:
    """The host uid student code must run as here."""
    user = command.run_as()
    return os.getuid() if user is None else user.pw_uid


def check(values: tuple[np.ndarray, ...], user: int | None, others: tuple[str, ...] = ("1", "parent")) -> None:
    """The run ran as host uid ``user`` (``None``: in a user namespace that does not map the host's
    root), no root-only table opened and no file of ``others`` (PID 1, the run's parent) opened
    for writing."""
    (uid, usr_owner, pids), tables, writes = values
    if user is None:
        overflow = int(Path("/proc/sys/kernel/overflowuid").read_text())
        assert usr_owner == overflow, f"the host's root is mapped into the run's user namespace (as {usr_owner:.0f})"
    else:
        assert uid != 0 and uid == user, f"student code ran as host uid {uid:.0f}"
    opened = [p for p, e in zip(ROOT_ONLY, tables, strict=True) if e == 0]
    assert not opened, f"a run read the root-only tables {opened}"
    present = [p for p in ROOT_ONLY if Path(p).exists()]
    assert present, "none of the root-only tables exists on this machine: nothing was tested"
    names = [f"{pid}/{n}" for pid in ("1", "parent")[: int(pids)] for n in OTHERS]
    checked = {n: int(e) for n, e in zip(names, writes, strict=True) if n.split("/")[0] in others}
    writable = [n for n, e in checked.items() if e == 0]
    assert not writable, f"a run could open for writing /proc/{writable}"
    assert set(checked.values()) <= {errno.EACCES, errno.EPERM, errno.ENOENT}, checked


def host_uids(pid: int) -> list[int]:
    """The real, effective, saved and file-system uids of ``pid`` and of all its descendants (a
    descendant that ends while they are read, a run's child exiting, has none left to check)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (FileNotFoundError, ProcessLookupError):
        return []
    uids = [int(u) for u in next(ln for ln in status.splitlines() if ln.startswith("Uid:")).split()[1:]]
    for child in children:
        uids += host_uids(int(child))
    return uids


def test_the_sandbox_user_is_never_root():
    user = command.run_as()
    if os.geteuid() == 0:
        assert user is not None and user.pw_uid != 0 and user.pw_gid != 0
        assert user.pw_name in (command.SANDBOX_USER, command.SANDBOX_USER_ELSE)
    else:
        assert user is None  # the grader's own user, who owns no root-only file


@pytest.mark.parametrize("kind", ["fresh", "warm"])
def test_bubblewrap_runs_student_code_as_an_unprivileged_user(kind):
    """In a fresh sandbox, PID 1 and the run's parent are bubblewrap's own init for this run alone
    (it ends with the run), so only the pre-warmed sandbox's are checked for writes."""
    if sandbox.mode() != "bubblewrap":
        pytest.fail("bubblewrap does not run here")
    with warm.Session() as session:
        result = sandbox.run([("f", CELL)], "f", [Case((np.zeros(1),))],
                             sandbox.Limits(cpu_seconds=20), session=session if kind == "warm" else None)
        if kind == "warm":  # seen from the host: bubblewrap and the pre-warmed process
            assert set(host_uids(session.proc.pid)) == {expected_user()}
    assert result.outcomes is not None, result.failure
    assert result.outcomes[0].error is None, result.outcomes[0].error
    check(result.outcomes[0].values, None, others=("1", "parent") if kind == "warm" else ())


FALLBACK = r'''
import json, os, sys
import numpy as np
from autograder import sandbox
from autograder.sandbox import warm
from selfattn.checks.calling import Case
assert sandbox.mode() == "fallback", sandbox.mode()
out = []
with warm.Session() as session:
    for s in (None, session):
        r = sandbox.run([("f", sys.argv[1])], "f", [Case((np.zeros(1),))], sandbox.Limits(cpu_seconds=20), session=s)
        if r.outcomes is None or r.outcomes[0].error is not None:
            raise SystemExit(f"the run failed: {r.failure or r.outcomes[0].error}")
        out.append([v.tolist() for v in r.outcomes[0].values])
print(json.dumps(out))
'''


def test_the_fallback_sandbox_runs_student_code_as_an_unprivileged_user():
    """Without bubblewrap there is no PID namespace: /proc/1 is the machine's init and the run's
    parent is the grader (fresh) or the pre-warmed sandbox's supervisor (warm). None of their files
    opens for writing, nor do the root-only tables; except that a grader that is not root runs the
    fallback's student code as itself (documented), and then owns the grader's own files."""
    env = dict(os.environ, SELFATTN_SANDBOX="fallback")
    done = subprocess.run([sys.executable, "-c", FALLBACK, CELL], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    runs = json.loads(done.stdout.splitlines()[-1])
    assert len(runs) == 2  # a fresh run and a pre-warmed one
    fresh, warm_run = (tuple(np.array(v) for v in values) for values in runs)
    check(fresh, expected_user(), others=("1", "parent") if os.geteuid() == 0 else ("1",))
    check(warm_run, expected_user())


def test_a_sandbox_user_who_cannot_read_numpy_is_named_in_one_line(tmp_path, monkeypatch):
    """Where the sandbox's user cannot read a folder the sandbox binds, every run would fail: the
    grader says which before the first one (as root; any other grader runs its sandbox as itself)."""
    private = tmp_path / "private"
    (private / "numpy").mkdir(parents=True)
    private.chmod(0o700)
    exe, prefix, _folders = command._python_paths()
    monkeypatch.setattr(command, "_python_paths", lambda: (exe, prefix, [private / "numpy"]))
    if command.run_as() is None:
        assert command._check_readable.__wrapped__() is None
        return
    with pytest.raises(RuntimeError) as raised:
        command._check_readable.__wrapped__()
    message = str(raised.value)
    assert "\n" not in message and f"cannot read {private / 'numpy'}" in message, message
    assert command.run_as().pw_name in message
    monkeypatch.undo()
    assert command._check_readable.__wrapped__() is None  # the real environment is readable


def test_numpy_below_a_folder_closed_to_others_is_bound_from_a_readable_copy(tmp_path, monkeypatch):
    """A checkout in root's home (``/root`` is 0700): the sandbox's user cannot read the
    environment's NumPy, so the sandbox binds a copy readable by all, made once per version."""
    user = command.run_as()
    assert user is not None, "this test runs as root (CI does)"
    closed = tmp_path / "home"
    (closed / "numpy" / "core").mkdir(parents=True)
    (closed / "numpy" / "__init__.py").write_text("x = 1\n")
    (closed / "numpy" / "core" / "lib.so").write_bytes(b"\x7fELF")
    os.chmod(closed / "numpy" / "core" / "lib.so", 0o700)
    os.chmod(closed, 0o700)
    import shutil
    import tempfile

    public = Path(tempfile.mkdtemp(prefix="selfattn-copies-", dir="/tmp"))  # pytest's own folder is 0700
    os.chmod(public, 0o755)
    monkeypatch.setattr(command, "READABLE_COPIES", public / "copies")
    command.readable_copy.cache_clear()
    assert not command._readable(closed / "numpy", user)
    [copy] = command.readable_copy((closed / "numpy",))
    assert copy != closed / "numpy" and copy.name == "numpy"
    assert command._readable(copy / "__init__.py", user) and command._readable(copy / "core" / "lib.so", user)
    assert (copy / "__init__.py").read_text() == "x = 1\n"
    assert not os.stat(copy / "__init__.py").st_mode & 0o022  # nobody else may write it
    command.readable_copy.cache_clear()
    assert command.readable_copy((closed / "numpy",)) == [copy]  # the same copy, not another
    readable = public / "open" / "numpy"
    readable.mkdir(parents=True)
    os.chmod(public / "open", 0o755)
    assert command.readable_copy((readable,)) == [readable]
    command.readable_copy.cache_clear()
    shutil.rmtree(public)
