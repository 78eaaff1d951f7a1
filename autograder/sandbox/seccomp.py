"""The seccomp filter of the grading sandbox: system calls a grading run never needs fail.

bubblewrap installs a classic-BPF program given on a descriptor (``bwrap --seccomp FD``) just
before it starts the sandboxed Python; every process of the sandbox (a fresh run, the pre-warmed
interpreter of :mod:`autograder.sandbox.warm` and every run forked from it) keeps it. The program is
built here from a table of system call numbers (x86_64 and aarch64), with no library.

What it does, for a call made by anything in the sandbox:

- a call of another architecture (i386 ``int 0x80`` on x86_64, a big-endian or 32-bit ABI) or an
  x32 call kills the process: the table below would not describe it;
- the kernel's keyrings (``add_key``, ``keyctl``, ``request_key``: a keyring outlives every
  process), tracing and inspecting other processes (``ptrace``, ``process_vm_*``, ``kcmp``,
  ``pidfd_getfd``), ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring``, namespaces and
  mounts (``unshare``, ``setns``, ``mount`` and the new mount API, ``pivot_root``, ``chroot``),
  POSIX message queues and System V IPC objects (both outlive every process), ``personality``,
  kernel modules, ``kexec``, ``reboot``, swap, accounting, quotas, the clock, the host name, file
  handles, ``fanotify``, ``vmsplice`` and page migration fail with ``EPERM`` (Docker's default
  profile denies most of the same);
- ``clone`` that asks for a new namespace fails with ``EPERM``; ``clone3``, whose flags a filter
  cannot read, fails with ``ENOSYS`` (the C library then uses ``clone``, as under Docker);
- sockets other than Unix ones (``socket``, ``socketpair``) fail with ``EPERM``: the sandbox has
  no network, and a loopback connection would leave state behind (a port in TIME_WAIT);
- what tells whether a file's pages are in the page cache, which every process of the machine
  shares: ``mincore``, ``cachestat``, ``preadv2``/``pwritev2`` with ``RWF_NOWAIT`` (without it they
  pass) and Linux AIO (``io_setup``, ``io_submit``, whose requests may carry the same flag) fail with
  ``EPERM`` (``io_uring`` is refused above). What cannot be refused is timing: how long a first
  read or page fault takes, and which pages of a file mapping the kernel mapped around a fault
  (``/proc/self/pagemap``);
- calls that change another process's limits or scheduling (``prlimit64``, ``setpriority``,
  ``sched_set*``, ``ioprio_set`` naming any process but the caller) fail with ``EPERM``: in the
  pre-warmed sandbox the process every run is forked from has the runs' user id.

Everything else is allowed (NumPy, threads, ``fork``, files in /tmp and /dev/shm: what a run
leaves there is wiped, or ends the pre-warmed sandbox).
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# classic BPF (linux/filter.h, linux/bpf_common.h)
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

# linux/seccomp.h
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian)
_NR, _ARCH = 0, 4


def _arg_low(i: int) -> int:
    """Offset of the low 32 bits of argument ``i`` (what the kernel reads for an int or pid_t)."""
    return 16 + 8 * i


#: linux/audit.h: AUDIT_ARCH_* of the architectures the table covers
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000  # __X32_SYSCALL_BIT: x32 calls arrive with the x86_64 arch

#: System call numbers: (x86_64, aarch64); None where the architecture has no such call.
SYSCALLS: dict[str, tuple[int | None, int | None]] = {
    # keyrings: a key outlives the process that stored it
    "add_key": (248, 217), "keyctl": (250, 219), "request_key": (249, 218),
    # other processes' memory, descriptors and state
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "kcmp": (312, 272), "pidfd_getfd": (438, 438), "process_madvise": (440, 440),
    # kernel attack surface a run does not need
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "personality": (135, 92), "vmsplice": (278, 75), "move_pages": (279, 239), "migrate_pages": (256, 238),
    "lookup_dcookie": (212, 18), "fanotify_init": (300, 262),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264), "syslog": (103, 116),
    # namespaces and mounts
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "chroot": (161, 51), "open_tree": (428, 428), "move_mount": (429, 429),
    "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433),
    "mount_setattr": (442, 442),
    # whether a file's pages are in the page cache, which every process of the machine shares (a
    # hidden run could leave a mark there for a later run): mincore, cachestat; Linux AIO, whose
    # requests may ask not to wait for the disk (RWF_NOWAIT, in memory the filter cannot read)
    "mincore": (27, 232), "cachestat": (451, 451), "io_setup": (206, 0), "io_submit": (209, 2),
    # POSIX message queues and System V IPC: an object outlives every process, and the kernel's
    # counter of System V ids would tell the next run how many a run created
    "mq_open": (240, 180), "mq_unlink": (241, 181), "shmget": (29, 194), "semget": (64, 190),
    "msgget": (68, 186),
    # the machine: modules, kexec, reboot, swap, accounting, quotas, clock, host name
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "reboot": (169, 142),
    "swapon": (167, 224), "swapoff": (168, 225), "acct": (163, 89), "quotactl": (179, 60),
    "quotactl_fd": (443, 443), "settimeofday": (164, 170), "clock_settime": (227, 112),
    "clock_adjtime": (305, 266), "adjtimex": (159, 171), "sethostname": (170, 161),
    "setdomainname": (171, 162), "nfsservctl": (180, 42),
    # x86_64 only
    "iopl": (172, None), "ioperm": (173, None), "uselib": (134, None), "ustat": (136, None),
    "sysfs": (139, None), "_sysctl": (156, None), "create_module": (174, None),
    "get_kernel_syms": (177, None), "query_module": (178, None), "afs_syscall": (183, None),
}

#: Calls allowed only under a condition on their arguments (checked below).
_CONDITIONAL: dict[str, tuple[int, int]] = {
    "clone": (56, 220), "clone3": (435, 435), "socket": (41, 198), "socketpair": (53, 199),
    "prlimit64": (302, 261), "sched_setaffinity": (203, 122), "sched_setscheduler": (144, 119),
    "sched_setparam": (142, 118), "sched_setattr": (314, 274), "setpriority": (141, 140),
    "ioprio_set": (251, 30), "preadv2": (327, 286), "pwritev2": (328, 287),
}

#: The names :data:`SYSCALLS` denies outright (for tests and the README).
DENIED = tuple(SYSCALLS)

AF_UNIX = 1
#: linux/fs.h: a read or write that fails rather than wait for the disk (so it tells whether the
#: file's pages are in the page cache)
RWF_NOWAIT = 0x00000008
#: the argument of ``preadv2``/``pwritev2`` that holds their flags: (fd, iov, iovcnt, pos_l, pos_h, flags)
_RWF_ARG = 5
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME (linux/sched.h)
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80


def machine() -> str:
    """The running architecture as :data:`AUDIT_ARCH` names it (``arm64`` is ``aarch64``)."""
    name = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)


def _number(name: str, arch: str) -> int | None:
    pair = SYSCALLS.get(name) or _CONDITIONAL[name]
    return pair[0] if arch == "x86_64" else pair[1]


class _Assembler:
    """Instructions with symbolic jump targets, resolved to BPF's relative offsets at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def op(self, code: int, k: int, jt: str | int = 0, jf: str | int = 0) -> None:
        self.code.append((code, jt, jf, k))

    def assemble(self) -> bytes:
        out = b""
        for i, (code, jt, jf, k) in enumerate(self.code):
            offsets = []
            for target in (jt, jf):
                offset = target if isinstance(target, int) else self.labels[target] - i - 1
                if not 0 <= offset <= 255:
                    raise ValueError(f"seccomp: jump of {offset} at instruction {i}")
                offsets.append(offset)
            out += struct.pack("<HBBI", code, offsets[0], offsets[1], k)
        return out


def program(arch: str | None = None) -> bytes:
    """The filter for ``arch`` (default: this machine's) as ``struct sock_filter[]`` bytes, which
    ``bwrap --seccomp`` and ``prctl(PR_SET_SECCOMP)`` take; ``ValueError`` on another architecture."""
    arch = arch or machine()
    if arch not in AUDIT_ARCH:
        raise ValueError(f"no seccomp table for the architecture {arch!r} (only {', '.join(AUDIT_ARCH)})")
    a = _Assembler()
    a.op(_LD_W_ABS, _ARCH)
    a.op(_JEQ, AUDIT_ARCH[arch], 0, "kill")
    a.op(_LD_W_ABS, _NR)
    if arch == "x86_64":
        a.op(_JGE, _X32_BIT, "x32", 0)
    for name in SYSCALLS:
        nr = _number(name, arch)
        if nr is not None:
            a.op(_JEQ, nr, "eperm", 0)
    a.op(_JEQ, _number("clone3", arch), "enosys", 0)
    a.op(_JEQ, _number("clone", arch), "clone", 0)
    for name in ("socket", "socketpair"):
        a.op(_JEQ, _number(name, arch), "unix_only", 0)
    for name in ("prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr"):
        a.op(_JEQ, _number(name, arch), "self_arg0", 0)  # (pid, ...): 0 is the caller
    a.op(_JEQ, _number("setpriority", arch), "setpriority", 0)
    a.op(_JEQ, _number("ioprio_set", arch), "ioprio_set", 0)
    for name in ("preadv2", "pwritev2"):
        a.op(_JEQ, _number(name, arch), "waits", 0)
    a.op(_RET, RET_ALLOW)

    a.label("clone")  # clone(flags, ...) on both architectures
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JSET, CLONE_NAMESPACES, "eperm", "allow")
    a.label("unix_only")  # socket(domain, ...)
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JEQ, AF_UNIX, "allow", "eperm")
    a.label("self_arg0")
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JEQ, 0, "allow", "eperm")
    a.label("setpriority")  # setpriority(PRIO_PROCESS = 0, 0, prio)
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JEQ, 0, "who_self", "eperm")
    a.label("ioprio_set")  # ioprio_set(IOPRIO_WHO_PROCESS = 1, 0, prio)
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JEQ, 1, "who_self", "eperm")
    a.label("waits")  # preadv2/pwritev2(..., flags): never RWF_NOWAIT
    a.op(_LD_W_ABS, _arg_low(_RWF_ARG))
    a.op(_JSET, RWF_NOWAIT, "eperm", "allow")
    a.label("who_self")
    a.op(_LD_W_ABS, _arg_low(1))
    a.op(_JEQ, 0, "allow", "eperm")

    a.label("x32")  # the x32 ABI, or -1 (no call at all: a tracer's skip, ENOSYS anyway)
    a.op(_JEQ, 0xFFFFFFFF, "enosys", "kill")

    a.label("allow")
    a.op(_RET, RET_ALLOW)
    a.label("eperm")
    a.op(_RET, RET_ERRNO | errno.EPERM)
    a.label("enosys")
    a.op(_RET, RET_ERRNO | errno.ENOSYS)
    a.label("kill")
    a.op(_RET, RET_KILL_PROCESS)
    return a.assemble()


def program_fd() -> int:
    """A new descriptor (close it after use) holding :func:`program`, read from its start: what
    ``bwrap --seccomp FD`` reads (it must be inherited by bubblewrap: pass it in ``pass_fds``)."""
    fd = os.memfd_create("selfattn-seccomp", os.MFD_CLOEXEC)
    try:
        data = program()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def passed(fd: int | None) -> tuple[int, ...]:
    """``fd`` for ``pass_fds``, if there is one (there is none without bubblewrap)."""
    return () if fd is None else (fd,)


def close(fd: int | None) -> None:
    """Close what :func:`program_fd` opened, if anything."""
    if fd is not None:
        os.close(fd)


def bwrap_args(fd: int) -> list[str]:
    """The bubblewrap options that install the program read from ``fd``."""
    return ["--seccomp", str(fd)]


def install() -> None:
    """Install :func:`program` on the calling thread (and so on everything it starts), as bubblewrap
    does: ``no_new_privs``, then ``PR_SET_SECCOMP``. ``OSError`` if the kernel refuses."""
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    data = program()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    prog = SockFprog(len(data) // 8, data)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if (libc.prctl(pr_set_no_new_privs, 1, None, 0, 0) != 0
            or libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.addressof(prog), 0, 0) != 0):
        raise OSError(ctypes.get_errno(), "could not install the seccomp filter")
