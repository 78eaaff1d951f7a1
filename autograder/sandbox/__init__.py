"""Run student code in a sandbox and bring back plain arrays.

Each call starts a fresh Python (``-I -S``: no site-packages hooks, so no course package) under
bubblewrap: no network, no capabilities, a read-only view of the Python runtime and NumPy only,
nothing writable but an empty /tmp and /dev/shm (128 MiB together), a new PID namespace, a
CPU-time limit, an address-space cap and a file-size cap per process, and, for the run as a
whole, a memory cap and a cap on its processes and threads (its own cgroups, see
:mod:`autograder.sandbox.cgroups`). A run that runs into one of those caps fails with a fixed message
(:func:`cap_message`). Results come back on a dedicated pipe as JSON plus an ``.npz`` loaded with
``allow_pickle=False``.

Where bubblewrap cannot run, :data:`FALLBACK` mode keeps the resource limits, the clean
environment, ``-I -S`` and an empty working folder, but not the filesystem or network isolation.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder.sandbox import cgroups, seccomp
from selfattn.checks.calling import BAD_RETURN, FAILED_KINDS, NOT_ANSWERED, RAISED, TIME_LIMIT, Case, CellError, Outcome
from selfattn.checks.findings import Finding, Kind, hidden_exception_name

HERE = Path(__file__).resolve().parent
#: the scripts that run inside the sandbox
INSIDE = HERE / "inside"
#: the one course module the sandbox holds, beside harness.py (standard library and NumPy only)
CALLING = HERE.parents[1] / "selfattn" / "checks" / "calling.py"
MAX_RESULT_BYTES = 64 << 20


@dataclass(frozen=True)
class Limits:
    """Per-exercise limits (defaults: 60 s of CPU per process, 2 GiB of address space per process
    and of memory for the run's processes together, 64 processes and threads at once, files of
    16 MiB). The run-wide caps (memory, tasks) need a cgroup (:mod:`autograder.sandbox.cgroups`)."""

    cpu_seconds: int = 60
    memory_bytes: int = 2 << 30
    file_bytes: int = 16 << 20
    tasks: int = 64

    @property
    def wall_seconds(self) -> float:
        return 2 * self.cpu_seconds + 10


DEFAULT = Limits()


@dataclass(frozen=True)
class RunResult:
    """Outcomes per case, or ``failure`` saying why there are none (its kind: time-out, crash, ...)."""

    outcomes: list[Outcome] | None
    failure: Finding | None
    cell_errors: list[CellError]
    seconds: float


#: this process grades without bubblewrap whatever the machine has (:func:`choose_fallback`)
_FALLBACK_CHOSEN = False


def choose_fallback() -> None:
    """Grade without bubblewrap in this process from now on (``c.GradingSettings.sandbox =
    "fallback"``, applied by :meth:`autograder.settings.Settings.apply`)."""
    global _FALLBACK_CHOSEN
    _FALLBACK_CHOSEN = True
    mode.cache_clear()


def bubblewrap_available() -> bool:
    from autograder.environment import setting_overrides

    chosen = _FALLBACK_CHOSEN or setting_overrides().get("sandbox") == "fallback"
    if chosen or shutil.which("bwrap") is None:
        return False
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "/usr/bin/true"],
        capture_output=True,
    )
    return probe.returncode == 0


@functools.cache
def mode() -> str:
    """``"bubblewrap"``, or ``"fallback"`` where it cannot run (probed once per process)."""
    return "bubblewrap" if bubblewrap_available() else "fallback"


def _python_paths() -> tuple[str, str, list[Path]]:
    """(interpreter, its prefix, NumPy's folders: the package and its bundled libraries, if any)."""
    prefix = sys.base_prefix
    exe = str(Path(prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}")
    package = Path(np.__file__).resolve().parent
    libs = package.parent / "numpy.libs"  # wheels link their BLAS from here ($ORIGIN/../../numpy.libs)
    return exe, prefix, [package] + ([libs] if libs.is_dir() else [])


#: Where NumPy's folders appear inside the sandbox; nothing else of the environment is there.
SANDBOX_SITE = "/site"

#: The only folders of the sandbox a run can write to (everything else is mounted read-only).
WRITABLE = ("/tmp", "/dev/shm")

#: The size of each writable folder (a tmpfs of its own, otherwise offering half the machine's
#: memory). A run needs no file at all (its results travel on a pipe); 128 MiB together leaves room
#: for scratch files (16 MiB each at most, RLIMIT_FSIZE) and is also charged to the run's memory cap.
TMPFS_BYTES = {"/tmp": 96 << 20, "/dev/shm": 32 << 20}


def _package_folders(prefix: str) -> list[str]:
    """Every Python package folder of the runtime and the system (Debian's python3-* packages):
    each is covered by an empty folder in the sandbox, where NumPy appears under /site alone."""
    import glob

    found: set[str] = set()
    for root in {prefix, "/usr", "/usr/local"}:
        for kind in ("dist-packages", "site-packages"):
            found.update(glob.glob(f"{root}/lib/python3*/{kind}") + glob.glob(f"{root}/lib/python3/{kind}"))
    return sorted(found)


def _encode(value, store: dict[str, np.ndarray]):
    if isinstance(value, np.ndarray):
        key = f"a{len(store)}"
        store[key] = value
        return {"a": key}
    if isinstance(value, (np.integer, np.floating)):
        return {"v": value.item()}
    if isinstance(value, (list, tuple)):
        return {"v": [v.item() if isinstance(v, np.generic) else v for v in value]}
    return {"v": value}


def _frame(header: dict, arrays: dict[str, np.ndarray] | None = None) -> bytes:
    """Length-prefixed JSON, then (if ``arrays`` is given) a length-prefixed ``.npz``."""
    head = json.dumps(header).encode()
    out = struct.pack(">Q", len(head)) + head
    if arrays is not None:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        out += struct.pack(">Q", buf.tell()) + buf.getvalue()
    return out


def _limits(limits: Limits, cgroup_fds: list[int] | None = None):
    def apply() -> None:
        cgroups.join(cgroup_fds or [])  # before anything runs: the whole run is in its cgroups
        os.setsid()
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def sandbox_command(workdir: str, result_fd: int, script: str = "harness.py",
                    seccomp_fd: int | None = None) -> tuple[list[str], dict[str, str]]:
    """The command that runs the harness (or another ``script`` of ``workdir``: the pre-warmed
    sandbox's :mod:`autograder.sandbox.inside.zygote`), and the environment it gets (and nothing more).
    ``seccomp_fd`` (from :func:`autograder.sandbox.seccomp.program_fd`, passed to the command) holds the
    system call filter bubblewrap installs."""
    exe, prefix, numpy_folders = _python_paths()
    bwrap = mode() == "bubblewrap"
    site = SANDBOX_SITE if bwrap else str(Path(workdir) / "site")
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
           "HOME": "/tmp" if bwrap else workdir, "PATH": "/usr/bin", "SELFATTN_SITE": site,
           "RESULT_FD": str(result_fd)}
    harness = f"/harness/{script}" if bwrap else str(Path(workdir) / script)
    inner = [exe, "-I", "-S", "-B", harness]
    if not bwrap:
        # no isolation to lean on: the folder on sys.path at least holds NumPy alone
        Path(site).mkdir(exist_ok=True)
        for folder in numpy_folders:
            if not (Path(site) / folder.name).exists():
                (Path(site) / folder.name).symlink_to(folder)
        return inner, env
    # --cap-drop ALL: started by root (a container), the sandbox would otherwise keep its capabilities
    cmd = ["bwrap", "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
           "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib"]
    if Path("/lib64").exists():
        cmd += ["--symlink", "usr/lib64", "/lib64"]
    # /tmp first: the binds after it may live below /tmp (a checkout or venv there) and must win
    cmd += ["--size", str(TMPFS_BYTES["/tmp"]), "--tmpfs", "/tmp", "--ro-bind", prefix, prefix]
    for folder in _package_folders(prefix):
        # an empty, read-only folder over the system's own Python packages
        cmd += ["--tmpfs", folder, "--remount-ro", folder]
    for folder in numpy_folders:  # NumPy alone, never the environment's whole site-packages
        cmd += ["--ro-bind", str(folder), f"{site}/{folder.name}"]
    cmd += ["--ro-bind", workdir, "/harness", "--proc", "/proc", "--dev", "/dev",
            "--size", str(TMPFS_BYTES["/dev/shm"]), "--tmpfs", "/dev/shm"]
    # the kernel's settings read-only: bubblewrap covers /proc/sys only when its check says it is
    # writable, and started by root (a container) the sandbox's user is root, whom sysctls trust
    cmd += ["--ro-bind", "/proc/sys", "/proc/sys"]
    # the rest read-only: /tmp and /dev/shm are the only places a run can write (see WRITABLE)
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
    cmd += seccomp.bwrap_args(seccomp_fd) if seccomp_fd is not None else []
    for k, v in env.items():
        cmd += ["--setenv", k, v]
    return cmd + inner, {"PATH": "/usr/bin"}


def run(cells: list[tuple[str, str]], function: str, cases: list[Case], limits: Limits = DEFAULT,
        hidden: bool = False, session=None) -> RunResult:
    """Execute ``cells`` (label, source) in a sandbox, then call ``function`` on every case.

    The cases reach the sandbox only after the cells have run (the harness asks for them), so
    code at the top level of a cell never finds them in its process. With ``hidden``, nothing
    textual that came back from the sandbox survives: exceptions are reduced to their type.
    With ``session`` (an :class:`autograder.sandbox.warm.Session`), the run is a fresh child forked from
    that session's pre-warmed sandbox instead of a newly started sandbox.
    """
    store: dict[str, np.ndarray] = {}
    encoded = [{"args": [_encode(a, store) for a in c.args],
                "kwargs": {k: _encode(v, store) for k, v in c.kwargs.items()}} for c in cases]
    first = _frame({"cells": cells, "function": function})
    second = _frame({"cases": encoded}, store)
    t0 = time.perf_counter()
    # the cgroups that cap the run as a whole: its own, or (warm) its sandbox's, capped for it
    group = session.group_for(limits) if session is not None else cgroups.make(limits.memory_bytes, limits.tasks)
    try:
        if session is not None:
            data, timed_out, too_big, rc = session.execute(first, second, limits, group=group)
        else:
            data, timed_out, too_big, rc = _run_fresh(first, second, limits, group)
        capped = group.hit()
    finally:
        group.finish()
    seconds = time.perf_counter() - t0
    if capped is not None:
        return RunResult(None, cap_message(capped, limits), [], seconds)
    if timed_out:
        reason = f"stopped after {limits.wall_seconds:.0f} s: an infinite loop or a very slow computation?"
        return RunResult(None, Finding(reason, Kind.TIME_OUT), [], seconds)
    if too_big:
        return RunResult(None, Finding("the results were larger than the grader accepts", Kind.REFUSED), [], seconds)
    try:
        result, arrays = parse_frame(data[1:])
        if data[:1] not in (b"R", b"M"):
            raise ValueError("no greeting")
    except Exception:
        return RunResult(None, _death_reason(rc, limits, seconds), [], seconds)
    if _disk_full(result):
        return RunResult(None, cap_message(DISK, limits), [], seconds)
    labels = [label for label, _ in cells]
    cell_errors = _cell_errors(result.get("cell_errors"), labels, hidden)
    if "missing" in result:
        reason = str(result["missing"])[:1000]
        if hidden:
            reason = f"no function named {function} was defined"
            reason += f" ({'; '.join(cell_errors)})" if cell_errors else ""
        return RunResult(None, Finding(reason, Kind.NOT_ANSWERED), cell_errors, seconds)
    outcomes = []
    try:
        for enc in result["outcomes"]:
            outcomes.append(_outcome(enc, arrays, hidden))
    except (KeyError, TypeError, ValueError):
        return RunResult(None, Finding("the grader's channel was tampered with", Kind.REFUSED), [], seconds)
    if len(outcomes) != len(cases):
        return RunResult(None, Finding("the grader's channel was tampered with", Kind.REFUSED), [], seconds)
    return RunResult(outcomes, None, cell_errors, seconds)


def _run_fresh(first: bytes, second: bytes, limits: Limits, group: cgroups.Group | None = None
               ) -> tuple[bytes, bool, bool, int | None]:
    """One run in a newly started sandbox (in ``group``'s cgroups from its first instruction):
    (result bytes, timed out, too big, exit status)."""
    with tempfile.TemporaryDirectory(prefix="sandbox-") as workdir:
        shutil.copy(INSIDE / "harness.py", workdir)
        shutil.copy(CALLING, workdir)
        read_fd, write_fd = os.pipe()
        filter_fd = seccomp.program_fd() if mode() == "bubblewrap" else None
        command, env = sandbox_command(workdir, write_fd, seccomp_fd=filter_fd)
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(write_fd, *seccomp.passed(filter_fd)),
                preexec_fn=_limits(limits, group.procs_fds() if group else None), cwd=workdir, env=env,
            )
        finally:
            seccomp.close(filter_fd)
        os.close(write_fd)
        asked = threading.Event()
        feeder = threading.Thread(target=feed, args=(proc.stdin, first, second, asked), daemon=True)
        feeder.start()
        try:
            data, timed_out, too_big = collect(read_fd, proc, limits, on_first_byte=asked.set,
                                                stop=group.stop_if_capped if group else None)
        finally:
            asked.set()
        rc = proc.wait()
        feeder.join(timeout=5)
    return data, timed_out, too_big, rc


_EXCEPTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,60}")


def _error_type(name: str) -> str:
    """``name`` if it is one of Python's built-in exceptions; anything else, a class the student
    could have named after a hidden input, becomes ``"an exception"``."""
    return hidden_exception_name(name) or "an exception"


#: A hidden run's failed call, in fixed words by kind (a raised built-in keeps its name).
_HIDDEN_WORDS = {NOT_ANSWERED: "NotImplementedError", BAD_RETURN: "returned something that is not numbers",
                 TIME_LIMIT: "gave no result in time"}


def _outcome(enc: dict, arrays, hidden: bool) -> Outcome:
    """One call's outcome as the harness sent it (untrusted: its kind must be one we know, its
    exception a plain name; a hidden run's keeps only what no input can be spelled in)."""
    if "error" not in enc:
        return Outcome(values=tuple(np.asarray(arrays[k], dtype=np.float64) for k in enc["values"]))
    kind, exception = enc.get("kind", RAISED), enc.get("exception")
    if kind not in FAILED_KINDS or not (exception is None or (isinstance(exception, str)
                                                              and _EXCEPTION_NAME.fullmatch(exception))):
        raise ValueError("an outcome of no known kind")
    if not hidden:
        return Outcome(error=str(enc["error"])[:500], kind=kind, exception=exception)
    exception = hidden_exception_name(exception or "")
    return Outcome(error=_HIDDEN_WORDS.get(kind, exception or "an exception"), kind=kind, exception=exception)


def _cell_errors(sent: Any, labels: list[str], hidden: bool) -> list[CellError]:
    """The harness's cell errors (untrusted data): each names a cell that was sent and an exception
    class; anything else is dropped. A hidden run's keeps only the cell and a built-in exception's
    name (its text could carry a hidden input), in fixed words."""
    out = []
    for e in sent if isinstance(sent, list) else []:
        if not isinstance(e, dict) or e.get("label") not in labels or not isinstance(e.get("exception"), str) \
                or not _EXCEPTION_NAME.fullmatch(e["exception"]):
            continue
        label, exception = e["label"], e["exception"]
        if hidden:
            exception = _error_type(exception)
            out.append(CellError(f"the cell of {label} raised {exception}", exception, label=label))
        else:
            out.append(CellError(str(e.get("text", ""))[:500], exception, label=label))
    return out


def feed(stdin, first: bytes, second: bytes, asked: threading.Event) -> None:
    """Send the cells, and the cases once the harness asks for them (a thread: the pipe may fill)."""
    try:
        stdin.write(first)
        stdin.flush()
        asked.wait()
        stdin.write(second)
        stdin.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            stdin.close()
        except (BrokenPipeError, OSError):
            pass


def collect(fd: int, proc, limits: Limits, on_first_byte=None, kill=None, stop=None) -> tuple[bytes, bool, bool]:
    """Read the result pipe until EOF, the wall-clock limit, the size cap, or ``stop()`` says the run
    was ended (it ran into a cap of its cgroup); call ``on_first_byte`` when the harness first
    writes (it is asking for the cases). Then ``kill`` (by default the process group of ``proc``:
    whatever the student started)."""
    import select

    chunks, size = [], 0
    deadline = time.monotonic() + limits.wall_seconds
    exited_at: float | None = None
    timed_out = too_big = False
    try:
        while True:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now > exited_at + 1.0:
                break  # the harness is gone; a process it forked may hold the pipe open
            if now >= deadline:
                timed_out = True
                break
            if stop is not None and stop():
                break
            ready, _, _ = select.select([fd], [], [], 0.1 if stop is not None else 0.2)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            if size == 0 and on_first_byte is not None:
                on_first_byte()
            size += len(chunk)
            if size > MAX_RESULT_BYTES:
                too_big = True
                break
    finally:
        os.close(fd)
        if not (timed_out or too_big):
            try:  # let it exit on its own, so its exit status means something
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        if kill is not None:
            kill()
        else:
            try:  # whatever the student started is stopped with it (its own process group)
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return b"".join(chunks), timed_out, too_big


def self_test() -> None:
    """Raise ``RuntimeError`` unless a known-good answer comes back right from the sandbox.

    A broken sandbox (missing NumPy inside it, a bad mount) must stop the grading run, not
    quietly give every student zero.
    """
    cell = "def f(x):\n    return np.asarray(x) * 2\n"
    result = run([("f", cell)], "f", [Case((np.arange(3.0),))], Limits(cpu_seconds=20))
    ok = result.outcomes is not None and result.outcomes[0].values is not None
    if not ok or not np.array_equal(result.outcomes[0].value, [0.0, 2.0, 4.0]):
        raise RuntimeError(f"the grading sandbox ({mode()}) does not work: {result.failure or result.outcomes}; "
                           f"command: {' '.join(sandbox_command('/WORKDIR', 3)[0])}")


#: Decompressed bytes the results of one run may declare (a real run sends a few kilobytes).
MAX_RESULT_ARRAY_BYTES = 256 << 20


def parse_frame(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON header and the arrays of a result frame, checked before anything is inflated.

    Every member of the ``.npz`` must be one the header names, hold float64 in a plain ``.npy``,
    and declare (in its zip entry and in its array header) a size that adds up to at most
    :data:`MAX_RESULT_ARRAY_BYTES`: a deflated bomb is refused without being decompressed.
    """
    (n,) = struct.unpack(">Q", data[:8])
    result = json.loads(data[8 : 8 + n].decode())
    if not isinstance(result, dict):
        raise ValueError("not a dict")
    (m,) = struct.unpack(">Q", data[8 + n : 16 + n])
    blob = data[16 + n : 16 + n + m]
    if len(blob) != m or len(data) != 16 + n + m:
        raise ValueError("the frame's lengths do not add up")
    announced = {k for o in result.get("outcomes", []) if isinstance(o, dict) for k in o.get("values", [])}
    arrays: dict[str, np.ndarray] = {}
    budget = MAX_RESULT_ARRAY_BYTES
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names) or not {f"{k}.npy" for k in announced} >= set(names):
            raise ValueError("the archive holds arrays the header did not announce")
        for info in infos:
            budget -= info.file_size
            if budget < 0:
                raise ValueError("the arrays are larger than the grader accepts")
            with z.open(info) as member:
                version = np.lib.format.read_magic(member)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(member)
                size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                if dtype != np.dtype("<f8") or member.tell() + size != info.file_size:
                    raise ValueError("an array is not what its header says")
                raw = member.read(size)
            if len(raw) != size:
                raise ValueError("an array is shorter than its header says")
            arr = np.frombuffer(raw, dtype=dtype)
            arrays[info.filename[: -len(".npy")]] = arr.reshape(shape, order="F" if fortran else "C").copy()
    return result, arrays


#: The cap a run ran into when it filled its writable folders or wrote too large a file.
DISK = "disk"
_DISK_ERRORS = re.compile(r"\[Errno (?:27|28)\]")  # EFBIG (RLIMIT_FSIZE), ENOSPC (the tmpfs is full)


def _disk_full(result: dict) -> bool:
    """Whether the run's cells or calls failed writing a file: its folders were full or the file
    too large (the text is the run's own: a submission could only claim this against itself)."""
    errors = [str(e) for e in result.get("cell_errors", [])] + [str(result.get("missing", ""))]
    errors += [str(o.get("error", "")) for o in result.get("outcomes", []) if isinstance(o, dict)]
    return any(_DISK_ERRORS.search(e) for e in errors)


def cap_message(cap: str, limits: Limits) -> Finding:
    """The fixed text of a run that ran into a cap (nothing in it is chosen by the submission)."""
    if cap == cgroups.MEMORY:
        return Finding(f"ran out of memory (a run's processes together may hold {limits.memory_bytes >> 20} MiB)",
                       Kind.MEMORY)
    if cap == cgroups.TASKS:
        return Finding(f"started too many processes or threads (a run may have {limits.tasks} at once)",
                       Kind.PROCESSES)
    return Finding(f"filled its disk (a run may write {sum(TMPFS_BYTES.values()) >> 20} MiB in /tmp and /dev/shm "
                   f"together, {limits.file_bytes >> 20} MiB per file)", Kind.DISK)


def caps_in_force(limits: Limits) -> str:
    """The caps on each run here, for the grading summary."""
    memory, tasks = cgroups.describe(limits.memory_bytes, limits.tasks)
    disk = (f"/tmp+/dev/shm {sum(TMPFS_BYTES.values()) >> 20} MiB" if mode() == "bubblewrap"
            else "/tmp not capped (fallback sandbox: the machine's own)")
    return (f"CPU {limits.cpu_seconds} s per process, {memory}, {tasks}, {disk}, "
            f"files {limits.file_bytes >> 20} MiB")


def _death_reason(rc: int, limits: Limits, seconds: float = float("inf")) -> Finding:
    """Why a run that sent no results ended, from its exit status (and how long it ran)."""
    killed = rc in (-signal.SIGKILL, 128 + signal.SIGKILL)
    if killed and seconds * (os.cpu_count() or 1) < limits.cpu_seconds:
        # too soon for the CPU limit (whose SIGKILL follows an ignored SIGXCPU): it was killed
        return Finding(f"the process was killed (signal 9) after {seconds:.1f} s, long before its CPU limit "
                       f"(os.kill on its own process?)", Kind.CRASHED)
    if killed or rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return Finding(f"used more than {limits.cpu_seconds} s of CPU time (an infinite loop?)", Kind.TIME_OUT)
    if rc in (-signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS, 128 + signal.SIGSEGV, 128 + signal.SIGABRT):
        return Finding("crashed (possibly out of memory)", Kind.CRASHED)
    status = "unknown" if rc is None else rc
    return Finding(f"the process ended before returning results (exit status {status}; os._exit, a crash "
                   f"or memory above {limits.memory_bytes >> 20} MiB?)", Kind.CRASHED)
