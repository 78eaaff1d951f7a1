# notebook: 03-softmax-attention
# replace: softmax
# full: softmax, scaled_scores
# Every run of this softmax (public and hidden) tries to leave a mark on what outlives it, and to
# read what tells another run's marks: the /proc files of the sandbox's PID 1 and of its parent
# (the pre-warmed process and the run's supervisor; bubblewrap's init, in a fresh sandbox, ends with the run),
# the kernel's root-only page tables, and the page cache (mincore, cachestat, RWF_NOWAIT reads),
# through the C library and raw system calls. Each try must fail: any success raises, costing
# the points this header says it keeps.
import ctypes, mmap, os, platform

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_NR = {"mincore": 27, "cachestat": 451, "preadv2": 327} if platform.machine() == "x86_64" else \
      {"mincore": 232, "cachestat": 451, "preadv2": 286}


def _outlives_the_run(pid):
    """Not bubblewrap's own init of a freshly started sandbox, which ends with this run."""
    try:
        return open(f"/proc/{pid}/comm").read().strip() != "bwrap"
    except OSError:
        return True


def _succeeded():
    found = []
    for pid in [p for p in (1, os.getppid()) if _outlives_the_run(p)]:
        for name, value in (("autogroup", b"0"), ("clear_refs", b"1"), ("sched", b"0"), ("oom_score_adj", b"0"),
                            ("coredump_filter", b"0x33"), ("comm", b"probe")):
            try:
                fd = os.open(f"/proc/{pid}/{name}", os.O_WRONLY | os.O_NONBLOCK)
                try:
                    if os.write(fd, value) > 0:
                        found.append(f"wrote /proc/{pid}/{name}")
                finally:
                    os.close(fd)
            except OSError:
                pass
    for table in ("kpageflags", "kpagecount", "kpagecgroup", "slabinfo", "vmallocinfo"):
        try:
            with open(f"/proc/{table}", "rb") as fh:
                fh.read(8)
            found.append(f"read /proc/{table}")
        except OSError:
            pass
    fd = os.open(os.path.realpath(np.__file__), os.O_RDONLY)
    own = os.open(f"/tmp/probe-{os.getpid()}", os.O_RDWR | os.O_CREAT, 0o600)
    os.write(own, b"x" * 8192)
    try:
        page = mmap.mmap(-1, 4096)
        vec = ctypes.create_string_buffer(1)
        if _libc.mincore(ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(page))), 4096, vec) == 0:
            found.append("mincore")
        stat, span = ctypes.create_string_buffer(40), (ctypes.c_uint64 * 2)(0, 0)
        for target in (fd, own):  # (newer kernels answer only for a file the caller may write)
            if _libc.syscall(ctypes.c_long(_NR["cachestat"]), target, ctypes.addressof(span),
                             ctypes.addressof(stat), 0) == 0:
                found.append("cachestat")
        buf = ctypes.create_string_buffer(4096)
        iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 4096)
        if _libc.preadv2(fd, iov, 1, ctypes.c_long(0), 8) >= 0:
            found.append("preadv2 RWF_NOWAIT")
        if _libc.syscall(ctypes.c_long(_NR["preadv2"]), fd, ctypes.addressof(iov), 1, 0, 0, 8) >= 0:
            found.append("raw preadv2 RWF_NOWAIT")
    finally:
        os.close(fd)
        os.close(own)
        os.unlink(f"/tmp/probe-{os.getpid()}")
    return found


if _succeeded():
    raise ValueError("PROBE SUCCEEDED: " + ", ".join(_succeeded()))


def softmax(S, axis=-1):
    found = _succeeded()
    if found:
        raise ValueError("PROBE SUCCEEDED: " + ", ".join(found))
    S = np.asarray(S, dtype=float)
    m = np.max(S, axis=axis, keepdims=True)
    e = np.exp(S - np.where(np.isfinite(m), m, 0.0))
    return e / e.sum(axis=axis, keepdims=True)
