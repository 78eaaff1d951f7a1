"""The sandbox's seccomp filter: every call a grading run never needs fails inside the sandbox
(fresh and pre-warmed), a call of another ABI kills the run, and NumPy still works.

The program itself is also run, for both architectures it covers, by a small classic-BPF
interpreter below, so the aarch64 table is checked on an x86_64 machine too.
"""

from __future__ import annotations

import errno
import struct

import numpy as np
import pytest

from autograder import sandbox
from autograder.sandbox import seccomp, warm
from selfattn.checks.calling import Case

# ---------------------------------------------------------------- the program, interpreted


def _evaluate(program: bytes, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """What the filter returns for one call (a classic-BPF interpreter for the opcodes it uses)."""
    args = tuple(args) + (0,) * (6 - len(args))
    data = struct.pack("<iIQ6Q", nr & 0xFFFFFFFF if nr >= 0 else nr, arch, 0, *(a & (2**64 - 1) for a in args))
    code = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        if op == 0x20:
            (acc,) = struct.unpack_from("<I", data, k)
        elif op in (0x15, 0x35, 0x45):
            hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += jt if hit else jf
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")


EPERM = seccomp.RET_ERRNO | errno.EPERM
ENOSYS = seccomp.RET_ERRNO | errno.ENOSYS


@pytest.mark.parametrize("arch", sorted(seccomp.AUDIT_ARCH))
def test_the_program_denies_its_table_on_both_architectures(arch):
    program = seccomp.program(arch)
    own = seccomp.AUDIT_ARCH[arch]
    index = 0 if arch == "x86_64" else 1

    def nr(name: str) -> int:
        return (seccomp.SYSCALLS.get(name) or seccomp._CONDITIONAL[name])[index]

    for name, numbers in seccomp.SYSCALLS.items():
        if numbers[index] is not None:
            assert _evaluate(program, own, numbers[index]) == EPERM, name
    getpid = 39 if arch == "x86_64" else 172
    assert _evaluate(program, own, getpid) == seccomp.RET_ALLOW
    # clone: a thread or a fork passes, a new namespace does not; clone3 says "no such call"
    assert _evaluate(program, own, nr("clone"), (0x3D0F00,)) == seccomp.RET_ALLOW  # pthread_create's flags
    for flag in (0x10000000, 0x20000000, 0x40000000, 0x00020000, 0x08000000, 0x04000000, 0x02000000, 0x80):
        assert _evaluate(program, own, nr("clone"), (flag | 17,)) == EPERM, hex(flag)
    assert _evaluate(program, own, nr("clone3")) == ENOSYS
    # sockets: Unix only
    for name in ("socket", "socketpair"):
        assert _evaluate(program, own, nr(name), (1, 1)) == seccomp.RET_ALLOW
        for family in (2, 10, 16, 17, 40):
            assert _evaluate(program, own, nr(name), (family, 1)) == EPERM
    # another process's limits and scheduling: only the caller's own (0)
    for name in ("prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr"):
        assert _evaluate(program, own, nr(name), (0,)) == seccomp.RET_ALLOW, name
        assert _evaluate(program, own, nr(name), (1,)) == EPERM, name
    assert _evaluate(program, own, nr("setpriority"), (0, 0, 5)) == seccomp.RET_ALLOW
    assert _evaluate(program, own, nr("setpriority"), (0, 1, 5)) == EPERM
    assert _evaluate(program, own, nr("setpriority"), (2, 0, 5)) == EPERM  # PRIO_USER: every process of the user
    assert _evaluate(program, own, nr("ioprio_set"), (1, 0, 0)) == seccomp.RET_ALLOW
    assert _evaluate(program, own, nr("ioprio_set"), (1, 1, 0)) == EPERM
    # reads and writes that must not wait for the disk tell what is in the page cache: refused
    for name in ("preadv2", "pwritev2"):
        for flags in (0, 1, 2, 4, 0x10, 0x20, 1 << 40):  # none, HIPRI, DSYNC, SYNC, APPEND, NOAPPEND, high bits
            assert _evaluate(program, own, nr(name), (3, 0, 1, 0, 0, flags)) == seccomp.RET_ALLOW, (name, flags)
        for flags in (seccomp.RWF_NOWAIT, seccomp.RWF_NOWAIT | 1, seccomp.RWF_NOWAIT | (1 << 40), 0xFFFFFFFF):
            assert _evaluate(program, own, nr(name), (3, 0, 1, 0, 0, flags)) == EPERM, (name, flags)
        assert _evaluate(program, own, nr(name), (seccomp.RWF_NOWAIT,) * 5) == seccomp.RET_ALLOW  # flags only
    for name in ("mincore", "cachestat", "io_setup", "io_submit", "preadv2"):
        for other in {0x40000003, 0xC000003E, 0xC00000B7} - {own}:  # the same numbers through another ABI
            assert _evaluate(program, other, nr(name), (0, 0, 0, 0, 0, seccomp.RWF_NOWAIT)) == seccomp.RET_KILL_PROCESS
    # another architecture, and x86_64's x32 ABI, end the process
    for other in {0x40000003, 0xC000003E, 0xC00000B7, 0x800000B7} - {own}:  # i386, x86_64, aarch64, aarch64 BE
        assert _evaluate(program, other, getpid) == seccomp.RET_KILL_PROCESS
    if arch == "x86_64":
        assert _evaluate(program, own, 0x40000000 | getpid) == seccomp.RET_KILL_PROCESS
        assert _evaluate(program, own, -1) == ENOSYS


def test_an_architecture_without_a_table_is_refused_in_one_line():
    with pytest.raises(ValueError, match="no seccomp table for the architecture 'riscv64'"):
        seccomp.program("riscv64")


# ---------------------------------------------------------------- inside the sandbox


@pytest.fixture(params=["fresh", "warm"])
def run(request):
    """Run one cell's ``f`` in a freshly started sandbox, or in a pre-warmed one."""
    if sandbox.mode() != "bubblewrap":
        pytest.fail("bubblewrap does not run here: the seccomp filter is installed by bubblewrap")
    session = warm.Session() if request.param == "warm" else None

    def go(cell: str) -> sandbox.RunResult:
        return sandbox.run([("f", cell)], "f", [Case((np.arange(3.0),))], sandbox.Limits(cpu_seconds=20),
                           session=session)

    yield go
    if session is not None:
        session.close()


#: each call with harmless arguments; the errno it gives (0: it succeeded)
DENIED_CALLS = r'''
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
X86 = os.uname().machine == "x86_64"
NR = {name: pair[0 if X86 else 1] for name, pair in TABLE.items() if pair[0 if X86 else 1] is not None}

def call(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r >= 0 and nr == NR_CLONE and r == 0:
        os._exit(0)  # the child of a clone the filter let through
    return 0 if r >= 0 else ctypes.get_errno()

def f(x):
    out = {name: call(nr, 0, 0, 0, 0, 0, 0) for name, nr in NR.items()}
    # calls that succeed without the filter, with arguments that make them succeed
    out["add_key(user)"] = call(NR["add_key"], ctypes.addressof(ctypes.create_string_buffer(b"user")),
                                ctypes.addressof(ctypes.create_string_buffer(b"k")),
                                ctypes.addressof(ctypes.create_string_buffer(b"v")), 1, -3)  # user keyring
    out["keyctl(get id)"] = call(NR["keyctl"], 0, -3, 0)
    out["ptrace(traceme)"] = call(NR["ptrace"], 0, 0, 0, 0)
    out["personality(query)"] = call(NR["personality"], 0xFFFFFFFF)
    out["unshare(user)"] = call(NR["unshare"], 0x10000000)
    out["clone(new user ns)"] = call(NR_CLONE, 0x10000000 | 17, 0, 0, 0, 0)
    out["socket(inet)"] = call(NR_SOCKET, 2, 1, 0)
    out["socket(netlink)"] = call(NR_SOCKET, 16, 3, 0)
    out["prlimit64(pid 1)"] = call(NR_PRLIMIT, 1, 7, 0, ctypes.addressof(ctypes.create_string_buffer(16)))
    out["setpriority(pid 1)"] = call(NR_SETPRIORITY, 0, 1, 19)
    out["clone3"] = call(NR_CLONE3, 0, 0)
    return np.array([float(v) for v in out.values()]), np.array([float(len(out))])
'''


def _denied_cell() -> tuple[str, list[str]]:
    import platform

    x86 = platform.machine() == "x86_64"
    pick = 0 if x86 else 1
    cond = {name: pair[pick] for name, pair in seccomp._CONDITIONAL.items()}
    names = [n for n, pair in seccomp.SYSCALLS.items() if pair[pick] is not None]
    names += ["add_key(user)", "keyctl(get id)", "ptrace(traceme)", "personality(query)", "unshare(user)",
              "clone(new user ns)", "socket(inet)", "socket(netlink)", "prlimit64(pid 1)", "setpriority(pid 1)",
              "clone3"]
    head = (f"TABLE = {seccomp.SYSCALLS!r}\nNR_CLONE = {cond['clone']}\nNR_CLONE3 = {cond['clone3']}\n"
            f"NR_SOCKET = {cond['socket']}\nNR_PRLIMIT = {cond['prlimit64']}\nNR_SETPRIORITY = {cond['setpriority']}\n")
    return head + DENIED_CALLS, names


def test_every_denied_call_fails_inside_the_sandbox(run):
    cell, names = _denied_cell()
    result = run(cell)
    assert result.outcomes is not None, result.failure
    errnos, count = result.outcomes[0].values
    assert int(count[0]) == len(names)
    got = dict(zip(names, errnos.astype(int).tolist(), strict=True))
    expected = {name: errno.EPERM for name in names}
    expected["clone3"] = errno.ENOSYS
    assert got == expected


NUMPY_STILL_WORKS = r'''
import threading, os, socket
def f(x):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(200, 200))
    spd = a @ a.T + 200 * np.eye(200)
    ok = [np.allclose(np.linalg.solve(spd, spd[:, 0]), np.eye(200)[:, 0]),
          np.allclose(np.linalg.inv(a) @ a, np.eye(200), atol=1e-8),
          np.allclose(np.linalg.eigh(spd)[0].sum(), np.trace(spd)),
          np.allclose(np.linalg.svd(a, compute_uv=False).prod(), abs(np.linalg.det(a))),
          np.allclose(np.fft.ifft(np.fft.fft(x)).real, x),
          np.einsum("ij,jk->ik", a, a).shape == (200, 200)]
    box = []
    t = threading.Thread(target=lambda: box.append(float(np.sum(x))))  # glibc's clone3, then clone
    t.start()
    t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    ok.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7)
    left, right = socket.socketpair()
    left.sendall(b"u")
    ok.append(right.recv(1) == b"u")
    return np.array([float(all(ok)), box[0]])
'''


def test_numpy_threads_fork_and_unix_sockets_still_work(run):
    result = run(NUMPY_STILL_WORKS)
    assert result.outcomes is not None, result.failure
    np.testing.assert_array_equal(result.outcomes[0].value, [1.0, 3.0])


def test_a_call_of_another_abi_kills_the_run(run):
    """An x32 call (x86_64) or an unknown number path must not slip past the table: the run dies."""
    import platform

    if platform.machine() != "x86_64":
        pytest.fail("this test drives the x32 ABI, which exists on x86_64 only")
    cell = ("import ctypes\n"
            "def f(x):\n"
            "    ctypes.CDLL(None).syscall(0x40000000 | 39)  # x32 getpid\n"
            "    return x\n")
    result = run(cell)
    # killed by SIGSYS (31): bubblewrap reports it as 128 + 31
    said = result.failure.text if result.failure is not None else ""
    assert result.outcomes is None and ("exit status -31" in said or "exit status 159" in said)
    assert run("def f(x):\n    return x\n").outcomes is not None  # the next run is unharmed


def test_the_filter_is_installed_in_fresh_and_warm_runs(run):
    cell = ("def f(x):\n"
            "    status = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
            "    return np.array([float(status['Seccomp']), float(status['NoNewPrivs'])])\n")
    result = run(cell)
    assert result.outcomes is not None, result.failure
    np.testing.assert_array_equal(result.outcomes[0].value, [2.0, 1.0])  # SECCOMP_MODE_FILTER, no_new_privs


#: Every way a run could ask whether a file's pages are in the page cache, each with arguments that
#: answer without the filter: through the C library (ctypes) and as a raw system call; then the
#: same reads and writes without RWF_NOWAIT, which must still work. Each entry: the errno (0: done).
CACHE_PROBES = r"""
import ctypes, mmap, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
RWF_NOWAIT = 8
SCRATCH = f"/dev/shm/scratch-{os.getpid()}"

def errno_of(r):
    return 0 if r >= 0 else ctypes.get_errno()

def raw(nr, *args):
    ctypes.set_errno(0)
    return errno_of(libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args]))

def f(x):
    path = os.path.realpath(np.__file__)  # a file every run reads: its pages are in the cache
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    buf = ctypes.create_string_buffer(4096)
    iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 4096)  # struct iovec {base, len}
    vec = ctypes.create_string_buffer(size // 4096 + 1)
    probe = mmap.mmap(-1, 4096)  # an anonymous page: mincore answers for it without the filter
    page = ctypes.addressof(ctypes.c_char.from_buffer(probe))
    out = {}
    ctypes.set_errno(0)
    out["mincore (libc)"] = errno_of(libc.mincore(ctypes.c_void_p(page), ctypes.c_size_t(4096), vec))
    out["mincore (raw)"] = raw(NR["mincore"], page, 4096, ctypes.addressof(vec))
    scratch = os.open(SCRATCH, os.O_RDWR | os.O_CREAT, 0o600)
    os.write(scratch, b"x" * 8192)
    cstat = ctypes.create_string_buffer(40)
    rng = (ctypes.c_uint64 * 2)(0, 0)  # struct cachestat_range {off, len}: the whole file
    # (of a file the run may write: newer kernels refuse cachestat on others' files to anyone but root)
    out["cachestat (raw)"] = raw(NR["cachestat"], scratch, ctypes.addressof(rng), ctypes.addressof(cstat), 0)
    try:
        os.preadv(fd, [bytearray(4096)], 0, RWF_NOWAIT)
        out["preadv2 NOWAIT (os)"] = 0
    except OSError as e:
        out["preadv2 NOWAIT (os)"] = e.errno
    ctypes.set_errno(0)
    out["preadv2 NOWAIT (libc)"] = errno_of(libc.preadv2(fd, iov, 1, ctypes.c_long(0), RWF_NOWAIT))
    out["preadv2 NOWAIT (raw)"] = raw(NR["preadv2"], fd, ctypes.addressof(iov), 1, 0, 0, RWF_NOWAIT)
    ctypes.set_errno(0)
    out["pwritev2 NOWAIT (libc)"] = errno_of(libc.pwritev2(scratch, iov, 1, ctypes.c_long(0), RWF_NOWAIT))
    out["pwritev2 NOWAIT (raw)"] = raw(NR["pwritev2"], scratch, ctypes.addressof(iov), 1, 0, 0, RWF_NOWAIT)
    context = ctypes.c_ulong(0)
    out["io_setup (raw)"] = raw(NR["io_setup"], 1, ctypes.addressof(context))
    out["io_submit (raw)"] = raw(NR["io_submit"], 0, 0, 0)
    # the same calls without RWF_NOWAIT: a run still reads and writes
    ctypes.set_errno(0)
    out["preadv2 (libc)"] = errno_of(libc.preadv2(fd, iov, 1, ctypes.c_long(0), 0))
    out["preadv2 (raw)"] = raw(NR["preadv2"], fd, ctypes.addressof(iov), 1, 0, 0, 0)
    out["pwritev2 (raw)"] = raw(NR["pwritev2"], scratch, ctypes.addressof(iov), 1, 0, 0, 0)
    os.close(scratch)
    os.unlink(SCRATCH)
    return np.array([float(v) for v in out.values()]), np.array([float(len(out))])
"""
CACHE_PROBE_NAMES = ["mincore (libc)", "mincore (raw)", "cachestat (raw)", "preadv2 NOWAIT (os)",
                     "preadv2 NOWAIT (libc)", "preadv2 NOWAIT (raw)", "pwritev2 NOWAIT (libc)",
                     "pwritev2 NOWAIT (raw)", "io_setup (raw)", "io_submit (raw)", "preadv2 (libc)",
                     "preadv2 (raw)", "pwritev2 (raw)"]


def _cache_probe_cell() -> str:
    import platform

    pick = 0 if platform.machine() == "x86_64" else 1
    table = {**seccomp.SYSCALLS, **seccomp._CONDITIONAL}
    numbers = {name: table[name][pick] for name in ("mincore", "cachestat", "preadv2", "pwritev2",
                                                      "io_setup", "io_submit")}
    return f"NR = {numbers!r}\n" + CACHE_PROBES


def test_no_call_tells_what_is_in_the_page_cache(run):
    """What a run leaves in the page cache outlives it and is the machine's; the calls that read
    it back directly fail (through the C library and raw), and plain reads and writes still work."""
    result = run(_cache_probe_cell())
    assert result.outcomes is not None, result.failure
    assert result.outcomes[0].error is None, result.outcomes[0].error
    errnos, count = result.outcomes[0].values
    assert int(count[0]) == len(CACHE_PROBE_NAMES)
    got = dict(zip(CACHE_PROBE_NAMES, errnos.astype(int).tolist(), strict=True))
    expected = {name: errno.EPERM for name in CACHE_PROBE_NAMES}
    expected.update({"preadv2 (libc)": 0, "preadv2 (raw)": 0, "pwritev2 (raw)": 0})
    assert got == expected


def test_the_page_cache_probes_answer_without_the_filter():
    """The premise of the test above: the same cell, run here without a filter, gets answers (so
    an EPERM inside the sandbox is the filter's)."""
    namespace = {"np": np}
    exec(compile(_cache_probe_cell(), "probes", "exec"), namespace)
    errnos, _count = namespace["f"](np.zeros(1))
    got = dict(zip(CACHE_PROBE_NAMES, errnos.astype(int).tolist(), strict=True))
    assert got.pop("io_submit (raw)") == errno.EINVAL  # no AIO context 0: but the call was made
    for name in ("pwritev2 NOWAIT (libc)", "pwritev2 NOWAIT (raw)"):  # tmpfs writes never skip a wait
        assert got.pop(name) in (0, errno.EOPNOTSUPP), name
    for name in ("preadv2 NOWAIT (os)", "preadv2 NOWAIT (libc)", "preadv2 NOWAIT (raw)"):
        # EAGAIN is an answer too: the page was not in the cache (the machine's memory decides which)
        assert got.pop(name) in (0, errno.EAGAIN), name
    assert got == {name: 0 for name in got}, got
