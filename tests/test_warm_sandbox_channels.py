"""Every kind of state a run can leave in the pre-warmed sandbox is gone for the next run.

One test per channel. Each has a *leak*, a run that stores its input (an array whose length is the
secret, 3 or 7) wherever that channel lets it, and a *reader*, a run that returns everything of
the channel it can see. The reader must see the same after a leak of 3, after a leak of 7, and in
a sandbox no run has touched: then nothing of the leak reached it, whether the sandbox wiped the
channel or, where it cannot, ended and started anew. Several channels are closed by the seccomp
filter (see ``test_sandbox_seccomp.py``); their leak also asserts that the call failed.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograder import sandbox
from autograder.sandbox import warm
from selfattn.checks.calling import Case

LIMITS = sandbox.Limits(cpu_seconds=20)
SECRETS = (3, 7)

#: A reader defines ``state()``; this turns its repr into the returned array.
READ = "\ndef f(x):\n    return np.frombuffer(repr(state()).encode(), dtype=np.uint8).astype(float)\n"


@pytest.fixture()
def session():
    if sandbox.mode() != "bubblewrap":
        pytest.fail("bubblewrap does not run here: the pre-warmed sandbox is shared under bubblewrap only")
    with warm.Session() as s:
        yield s


def _run(session, cell: str, n: int = 3) -> sandbox.RunResult:
    return sandbox.run([("f", cell)], "f", [Case((np.arange(float(n)),))], LIMITS, session=session)


def _read(session, reader: str) -> str:
    result = _run(session, reader + READ)
    assert result.outcomes is not None, result.failure
    assert result.outcomes[0].values is not None, result.outcomes[0].error
    return bytes(result.outcomes[0].value.astype(np.uint8)).decode()


def _leaks(session, leak: str, reader: str) -> tuple[str, list[str], list]:
    """The reader's view in an untouched sandbox and after a leak of each secret (and each leak's
    values, or its failure)."""
    untouched = _read(session, reader)
    views, leaked = [], []
    for secret in SECRETS:
        result = _run(session, leak, secret)
        leaked.append(result.outcomes[0].value.tolist() if result.outcomes and result.outcomes[0].values
                      else result.failure or result.outcomes[0].error)
        views.append(_read(session, reader))
    return untouched, views, leaked


def _assert_nothing_reached(session, leak: str, reader: str) -> list:
    untouched, views, leaked = _leaks(session, leak, reader)
    for view in views:
        assert view == untouched
    return leaked


# ------------------------------------------------------------------ kernel objects

def test_kernel_keyrings(session):
    leak = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
X86 = os.uname().machine == "x86_64"
ADD_KEY, KEYCTL, REQUEST_KEY = (248, 250, 249) if X86 else (217, 219, 218)
def f(x):
    out = []
    for keyring in (-4, -3, -5):  # user, session and user-session keyrings
        ctypes.set_errno(0)
        libc.syscall(ADD_KEY, b"user", b"hidden", repr(x.tolist()).encode(), len(x), keyring)
        out.append(ctypes.get_errno())
    ctypes.set_errno(0)
    libc.syscall(KEYCTL, 1, b"leak")  # KEYCTL_JOIN_SESSION_KEYRING
    out.append(ctypes.get_errno())
    ctypes.set_errno(0)
    libc.syscall(REQUEST_KEY, b"user", b"hidden", None, -3)
    out.append(ctypes.get_errno())
    return np.array(out, dtype=float)
'''
    reader = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL = 250 if os.uname().machine == "x86_64" else 219
def state():
    buf = ctypes.create_string_buffer(4096)
    ctypes.set_errno(0)
    n = libc.syscall(KEYCTL, 11, -4, buf, 4096)  # KEYCTL_READ of the user keyring
    return n, ctypes.get_errno(), open("/proc/keys").read(), open("/proc/key-users").read()
'''
    for errnos in _assert_nothing_reached(session, leak, reader):
        assert errnos == [1.0] * 5  # EPERM: refused by the seccomp filter


def test_system_v_ipc(session):
    leak = r'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    out = []
    for make in (lambda: libc.shmget(0, 4096 * len(x), 0o1600), lambda: libc.msgget(0, 0o1600),
                 lambda: libc.semget(0, len(x), 0o1600)):
        ctypes.set_errno(0)
        out.append(make())
        out.append(ctypes.get_errno())
    return np.array(out, dtype=float)
'''
    reader = r'''
def state():
    return [open(f"/proc/sysvipc/{kind}").read() for kind in ("shm", "msg", "sem")]
'''
    for values in _assert_nothing_reached(session, leak, reader):
        assert values == [-1.0, 1.0] * 3


def test_posix_ipc(session):
    leak = r'''
import ctypes, os
from multiprocessing import shared_memory
libc = ctypes.CDLL(None, use_errno=True)
MQ_OPEN = 240 if os.uname().machine == "x86_64" else 180
def f(x):
    ctypes.set_errno(0)
    q = libc.syscall(MQ_OPEN, b"left", 0o100 | 2, 0o600, None)
    queue = ctypes.get_errno()
    memory = shared_memory.SharedMemory(name=f"left{len(x)}", create=True, size=4096 * len(x))
    memory.buf[:len(x)] = bytes(range(len(x)))
    with open(f"/dev/shm/sem.left{len(x)}", "wb") as fh:  # where sem_open keeps a named semaphore
        fh.write(bytes(len(x)))
    return np.array([q, queue], dtype=float)
'''
    reader = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
MQ_OPEN = 240 if os.uname().machine == "x86_64" else 180
def state():
    ctypes.set_errno(0)
    q = libc.syscall(MQ_OPEN, b"left", 0, 0, None)
    return q, ctypes.get_errno(), sorted(os.listdir("/dev/shm")), sorted(os.listdir("/tmp"))
'''
    for values in _assert_nothing_reached(session, leak, reader):
        assert values == [-1.0, 1.0]  # mq_open: EPERM


def test_sockets_abstract_unix_and_network(session):
    """A listener left on an abstract address (killed with the run's processes), a socket file,
    and a loopback connection (refused: a port left in TIME_WAIT would be readable)."""
    leak = r'''
import os, socket, time
def f(x):
    name = b"\0selfattn-left-" + str(len(x)).encode()
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(name)
        server.listen()
        dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        dgram.bind(b"\0selfattn-dgram")
        filed = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        filed.bind(f"/tmp/left{len(x)}.sock")
        filed.listen()
        os.write(w, b"x")
        time.sleep(600)
        os._exit(0)
    os.read(r, 1)
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        inet = 0
    except OSError as e:
        inet = e.errno
    return np.array([float(inet)])
'''
    reader = r'''
import os, socket
def state():
    out = []
    for name in (b"\0selfattn-left-3", b"\0selfattn-left-7", b"\0selfattn-dgram", "/tmp/left3.sock"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(name)
            out.append("connected")
        except OSError as e:
            out.append(e.errno)
        s.close()
    unix = [line.split()[-1] for line in open("/proc/net/unix").read().splitlines()[1:] if len(line.split()) > 7]
    tcp = [len(open(f"/proc/net/{k}").read().splitlines()) for k in ("tcp", "tcp6", "udp", "udp6")]
    return out, unix, tcp, open("/proc/net/dev").read()  # the loopback's packet counters
'''
    for values in _assert_nothing_reached(session, leak, reader):
        assert values == [1.0]  # socket(AF_INET): EPERM


# ------------------------------------------------------------------ files

def test_files_in_every_writable_place(session):
    leak = r'''
import fcntl, os, struct
def f(x):
    for folder in ("/tmp", "/dev/shm"):
        with open(f"{folder}/input.txt", "w") as fh:
            fh.write(repr(x.tolist()))
        os.makedirs(f"{folder}/.hidden/deeper/{len(x)}", exist_ok=True)
        os.mkfifo(f"{folder}/fifo{len(x)}")
        os.symlink("/harness", f"{folder}/.hidden/link")
        os.link(f"{folder}/input.txt", f"{folder}/.hidden/hard")
        os.chmod(f"{folder}/.hidden", 0)
        for target in (folder, f"{folder}/input.txt"):
            try:
                os.setxattr(target, "user.secret", str(len(x)).encode())
            except OSError:
                pass
        os.chmod(folder, 0o700 + len(x))
        fd = os.open(folder, os.O_RDONLY)
        try:  # FS_IOC_SETFLAGS: no-dump, no-atime (what tmpfs lets an owner set)
            fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x40 | 0x80))
        except OSError:
            pass
        os.close(fd)
    os.utime("/tmp", (len(x), len(x)))  # times that are not a time
    os.utime("/dev/shm", ns=(len(x), 10**9 * len(x)))
    return x
'''
    reader = r'''
import fcntl, os, struct
def state():
    seen = []
    for folder in ("/tmp", "/dev/shm"):
        st = os.stat(folder)
        fd = os.open(folder, os.O_RDONLY)
        flags = fcntl.ioctl(fd, 0x80086601, bytes(8))  # FS_IOC_GETFLAGS
        os.close(fd)
        seen.append((folder, oct(st.st_mode), st.st_nlink, os.listxattr(folder), st.st_atime_ns, st.st_mtime_ns,
                     flags))
        for root, dirs, files in os.walk(folder):
            seen.append((root, sorted(dirs), sorted(files)))
    return seen
'''
    _assert_nothing_reached(session, leak, reader)


def test_the_next_inode_number_does_not_tell_how_many_files_a_run_made(session):
    leak = r'''
def f(x):
    for folder in ("/tmp", "/dev/shm"):
        for i in range(10 * len(x)):
            open(f"{folder}/f{i}", "w").close()
    return x
'''
    reader = r'''
import os
def state():
    numbers = []
    for folder in ("/tmp", "/dev/shm"):
        fd = os.open(f"{folder}/probe", os.O_CREAT | os.O_WRONLY)
        numbers.append(os.fstat(fd).st_ino)
        os.close(fd)
    return numbers
'''
    _assert_nothing_reached(session, leak, reader)


WRITABLE = r'''
import os
def state():
    """Every place outside /tmp and /dev/shm a run can create a file in or write to."""
    found = []
    for root, dirs, files in os.walk("/"):
        if root in ("/proc", "/tmp", "/dev/shm"):
            dirs[:] = []
            continue
        try:
            os.close(os.open(os.path.join(root, ".w"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            os.unlink(os.path.join(root, ".w"))
            found.append(root)
        except OSError:
            pass
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or os.access(path, os.W_OK) and not os.path.isfile(path):
                continue  # a device node (/dev/null, /dev/zero, ...) or a link
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                found.append(path)
            except OSError:
                pass
    for root, dirs, files in os.walk("/proc"):
        top = root.split("/")[2] if root.count("/") >= 2 else ""
        if top.isdigit() and top != "1" or top in ("self", "thread-self"):
            dirs[:] = []  # another process of the run (its own files): gone with it
            continue
        dirs[:] = [d for d in dirs if d not in ("task", "fd", "fdinfo", "map_files", "ns", "net")]
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as fh:
                    old = fh.read(4096)
                with open(path, "wb", buffering=0) as fh:
                    fh.write(old)  # the value it had
                found.append(path)
            except OSError:
                pass
    return found
'''


def test_nothing_but_tmp_and_dev_shm_is_writable(session):
    """Read-only everywhere else, including the kernel's settings (/proc/sys, writable to a
    sandbox started by root unless covered) and the pre-warmed process's /proc/1 (whose OOM
    score and core-dump filter a root-started run may write: the supervisor then ends the
    sandbox, see the next test)."""
    found = [p for p in _read(session, WRITABLE).strip("[]").replace("'", "").split(", ") if p]
    # a root-started run owns PID 1's files: its scheduler statistics (reset on write, never
    # inherited) and the two values the supervisor checks after each run
    allowed = {"/proc/1/sched", "/proc/1/oom_adj", "/proc/1/oom_score_adj", "/proc/1/coredump_filter"}
    assert not [p for p in found if p not in allowed]


def test_the_pre_warmed_process_keeps_its_own_settings(session):
    """What a root-started run can write of PID 1 (OOM score, core-dump filter) and what the
    seccomp filter refuses (its limits, nice value, CPUs, scheduling) never reaches the next run."""
    leak = r'''
import ctypes, os, resource
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    out = []
    for path, value in (("/proc/1/oom_score_adj", str(100 * len(x))), ("/proc/1/coredump_filter", str(len(x)))):
        try:
            open(path, "w").write(value)
            out.append(0)
        except OSError as e:
            out.append(e.errno)
    for call in (lambda: resource.prlimit(1, resource.RLIMIT_NOFILE, (len(x) + 20, len(x) + 20)),
                 lambda: resource.prlimit(os.getppid(), resource.RLIMIT_STACK, (1 << 20, 1 << 20)),
                 lambda: os.setpriority(os.PRIO_PROCESS, 1, len(x)),
                 lambda: os.setpriority(os.PRIO_USER, 0, len(x)),
                 lambda: os.sched_setaffinity(1, {0}),
                 lambda: os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0))):
        try:
            call()
            out.append(0)
        except OSError as e:
            out.append(e.errno)
    return np.array(out[2:], dtype=float)  # (the /proc writes depend on who started the sandbox)
'''
    reader = r'''
import os, resource
def state():
    limits = {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}
    return (limits, os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0),
            open("/proc/self/oom_score_adj").read(), open("/proc/self/coredump_filter").read())
'''
    for values in _assert_nothing_reached(session, leak, reader):
        assert values == [1.0] * 6  # EPERM


# ------------------------------------------------------------------ the process

def test_environment(session):
    leak = r'''
import ctypes, os
def f(x):
    os.environ["SECRET"] = repr(x.tolist())
    os.environ["PATH"] = "/tmp"
    del os.environ["HOME"]
    ctypes.CDLL(None).setenv(b"RAW", str(len(x)).encode(), 1)
    return x
'''
    environ = r'''
import os
def state():
    return sorted((k, v) for k, v in os.environ.items() if k != "RESULT_FD")
'''
    raw = "\ndef state():\n    return open('/proc/self/environ', 'rb').read()\n"  # as the process started
    _assert_nothing_reached(session, leak, environ + raw.replace("def state", "def raw") + "\nstate0 = state\n"
                            "def state():\n    return state0(), raw()\n")
    assert _read(session, environ) == _read(None, environ)  # and it is a fresh run's environment


def test_working_directory_and_umask(session):
    leak = r'''
import os
def f(x):
    os.umask(0o777 - len(x))
    os.makedirs(f"/tmp/d{len(x)}", exist_ok=True)
    os.chdir(f"/tmp/d{len(x)}")
    return x
'''
    reader = r'''
import os
def state():
    mask = os.umask(0o022)
    os.umask(mask)
    return os.getcwd(), oct(mask)
'''
    _assert_nothing_reached(session, leak, reader)
    assert _read(session, reader) == _read(None, reader)


def test_rlimits(session):
    leak = r'''
import resource
def f(x):
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            which = getattr(resource, name)
            soft, hard = resource.getrlimit(which)
            new = 64 * len(x) if hard == resource.RLIM_INFINITY else max(0, hard - len(x))
            try:
                resource.setrlimit(which, (min(new, soft) if soft != resource.RLIM_INFINITY else new, new))
            except (OSError, ValueError):
                pass
    return x
'''
    reader = r'''
import resource
def state():
    return {name: resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")}
'''
    _assert_nothing_reached(session, leak, reader)


def test_signal_dispositions_masks_and_signals_sent(session):
    leak = r'''
import os, signal
def f(x):
    for sig in range(1, signal.NSIG):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError, RuntimeError):
            pass
    signal.pthread_sigmask(signal.SIG_BLOCK, set(range(1, 32 + len(x))) - {9, 19})
    for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGTERM, signal.SIGCHLD):
        os.kill(1, sig)  # the pre-warmed process: signals it does not handle are dropped
    return x
'''
    reader = r'''
def state():
    return [line for line in open("/proc/self/status").read().splitlines()
            if line.startswith(("SigQ", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"))]
'''
    _assert_nothing_reached(session, leak, reader)


FDS = r'''
import fcntl, os
def state():
    seen = []
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(name)
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            continue  # the listing's own descriptor
        kind = target.split(":")[0] if ":" in target else target
        seen.append((fd if fd < 3 else "result" if fd == int(os.environ["RESULT_FD"]) else "other", kind, flags))
    return seen
'''


def test_inherited_descriptors(session):
    """A run's descriptors are stdin, stdout, stderr and its result pipe, as in a fresh sandbox;
    flags it sets on them (shared with whoever holds the same open file) reach no other run."""
    leak = r'''
import fcntl, os
def f(x):
    for fd in (0, 1, 2):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND | os.O_NONBLOCK)
    for i in range(len(x)):
        fd = os.open("/dev/null", os.O_RDONLY)
        os.set_inheritable(fd, True)
        os.dup2(fd, 100 + i)
    r, w = os.pipe2(0)
    os.write(w, repr(x.tolist()).encode())
    return x
'''
    _assert_nothing_reached(session, leak, FDS)
    assert _read(session, FDS) == _read(None, FDS)


def test_memfd(session):
    leak = r'''
import os, time
def f(x):
    fd = os.memfd_create(f"secret{len(x)}", 0)
    os.write(fd, repr(x.tolist()).encode())
    if os.fork() == 0:
        os.setsid()
        time.sleep(600)  # holds the memfd
        os._exit(0)
    return x
'''
    reader = r'''
import os
def state():
    found = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            found += [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            pass
    return [t for t in found if "memfd" in t]
'''
    _assert_nothing_reached(session, leak, reader)


def test_processes_and_threads_and_the_pid_counter(session):
    """Double-forked daemons, a session of their own, a stopped process, a zombie, threads: all
    gone; and the next run's PID does not tell how many processes or threads a run started."""
    leak = r'''
import os, signal, threading, time
def f(x):
    for _ in range(len(x)):
        if os.fork() == 0:  # a double-forked daemon, in a session of its own
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                time.sleep(600)
            os._exit(0)
    stopped = os.fork()
    if stopped == 0:
        time.sleep(600)
    os.kill(stopped, signal.SIGSTOP)
    if os.fork() == 0:
        os._exit(0)  # a zombie: never waited for
    if os.fork() == 0:
        for _ in range(len(x)):
            threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        time.sleep(600)
    time.sleep(0.2)
    return x
'''
    reader = r'''
import os
def state():
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
    threads = os.listdir("/proc/self/task")
    return others, len(threads), os.getpid(), open("/proc/loadavg").read().split()[-1]
'''
    _assert_nothing_reached(session, leak, reader)


def test_timers(session):
    leak = r'''
import os, signal
def f(x):
    signal.setitimer(signal.ITIMER_REAL, 0.5 * len(x))
    signal.setitimer(signal.ITIMER_VIRTUAL, 0.1 * len(x))
    signal.setitimer(signal.ITIMER_PROF, 0.1 * len(x))
    return x
'''
    reader = r'''
import signal, time
def state():
    time.sleep(0.6)  # an alarm left by the leak would end this run
    timers = (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)
    return [signal.getitimer(t) for t in timers], signal.alarm(0)
'''
    _assert_nothing_reached(session, leak, reader)


def test_host_name_and_kernel_settings(session):
    leak = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    out = []
    for call in (lambda: libc.sethostname(b"leak%d" % len(x), 6), lambda: libc.setdomainname(b"leak%d" % len(x), 6)):
        ctypes.set_errno(0)
        call()
        out.append(ctypes.get_errno())
    for path in ("/proc/sys/kernel/hostname", "/proc/sys/net/ipv4/ip_default_ttl", "/proc/sys/kernel/core_pattern"):
        try:
            open(path, "w").write(str(len(x)))
            out.append(0)
        except OSError as e:
            out.append(e.errno)
    return np.array(out, dtype=float)
'''
    reader = r'''
import os
def state():
    return (os.uname().nodename, open("/proc/sys/kernel/domainname").read(),
            open("/proc/sys/net/ipv4/ip_default_ttl").read(), open("/proc/sys/kernel/core_pattern").read())
'''
    for values in _assert_nothing_reached(session, leak, reader):
        assert values == [1.0, 1.0, 30.0, 30.0, 30.0]  # EPERM (seccomp), EROFS (read-only /proc/sys)


def test_prctl_settings(session):
    leak = r'''
import ctypes, os, signal
prctl = ctypes.CDLL(None).prctl
def f(x):
    prctl(15, b"leak%d" % len(x), 0, 0, 0)  # PR_SET_NAME
    prctl(29, 1000 * len(x), 0, 0, 0)  # PR_SET_TIMERSLACK
    prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE (inherited by fork)
    prctl(1, signal.SIGUSR1, 0, 0, 0)  # PR_SET_PDEATHSIG
    prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    prctl(33, 1, 0, 0, 0)  # PR_MCE_KILL
    return x
'''
    reader = r'''
import ctypes
prctl = ctypes.CDLL(None).prctl
def state():
    name = ctypes.create_string_buffer(16)
    prctl(16, name, 0, 0, 0)
    child_subreaper = ctypes.c_int()
    prctl(37, ctypes.byref(child_subreaper), 0, 0, 0)
    pdeath = ctypes.c_int()
    prctl(2, ctypes.byref(pdeath), 0, 0, 0)
    return (name.value, prctl(30, 0, 0, 0, 0), prctl(42, 0, 0, 0, 0), pdeath.value, child_subreaper.value,
            prctl(3, 0, 0, 0, 0), prctl(34, 0, 0, 0, 0), prctl(39, 0, 0, 0, 0))
'''
    _assert_nothing_reached(session, leak, reader)


def test_python_state_of_the_pre_warmed_process(session):
    """Module state a run changes (NumPy's functions, error and print settings, random state,
    sys and builtins) is its copy's: every run is forked from the untouched pre-warmed process."""
    leak = r'''
import builtins, gc, sys, warnings
def f(x):
    np.dot = lambda *a: len(x)
    np.seterr(all="raise")
    np.set_printoptions(precision=len(x))
    np.random.seed(len(x))
    sys.setrecursionlimit(50 + len(x))
    builtins.LEFT = len(x)
    sys.modules["left"] = sys
    warnings.simplefilter("error")
    gc.disable()
    return x
'''
    reader = r'''
import builtins, gc, sys, warnings
def state():
    return (np.dot(np.ones(2), np.ones(2)), np.geterr(), np.get_printoptions()["precision"],
            sys.getrecursionlimit(), hasattr(builtins, "LEFT"), "left" in sys.modules, len(warnings.filters),
            gc.isenabled())
'''
    _assert_nothing_reached(session, leak, reader)


def test_no_data_of_a_run_is_in_the_memory_later_runs_are_forked_from(session):
    """What a run leaves (file names, attribute names, its exit) is looked at by a supervisor that
    exits, never by the pre-warmed process whose memory every later run gets a copy of."""
    leak = r'''
import os
def f(x):
    word = "LEFTOVER" + "Q" * len(x)
    for i in range(200):
        open(f"/tmp/{word}{i:03d}", "w").close()
        os.mkdir(f"/dev/shm/{word}{i:03d}")
    try:
        os.setxattr("/tmp", f"user.{word}", b"1")
    except OSError:
        pass
    os._exit(40 + len(x))
'''
    reader = r'''
def state():
    """How often each leak's word occurs in this process's memory."""
    needles = [("LEFTOVER" + "Q" * n).encode() for n in (3, 7)]
    counts = [0, 0]
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb") as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("r") or line.rstrip().endswith(("[vvar]", "[vsyscall]", "[vvar_vclock]")):
                continue
            lo, hi = (int(v, 16) for v in span.split("-"))
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except OSError:
                continue
            counts = [c + data.count(n) for c, n in zip(counts, needles)]
    return counts
'''
    _assert_nothing_reached(session, leak, reader)
