"""Run student code in a sandbox and bring back plain arrays.

Each call starts a fresh Python (``-I -S``: no site-packages hooks, so no course package) under
bubblewrap: no network, a read-only view of the Python runtime and NumPy only, an empty /tmp,
a new PID namespace, a CPU-time limit, an address-space cap and a file-size cap. Results come
back on a dedicated pipe as JSON plus an ``.npz`` loaded with ``allow_pickle=False``.

Where bubblewrap cannot run, :data:`FALLBACK` mode keeps the resource limits, the clean
environment, ``-I -S`` and an empty working folder, but not the filesystem or network isolation.
"""

from __future__ import annotations

import functools
import io
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from selfattn.checking import Case, Outcome

HERE = Path(__file__).resolve().parent
CHECKING = HERE.parent / "selfattn" / "checking.py"
MAX_RESULT_BYTES = 64 << 20


@dataclass(frozen=True)
class Limits:
    """Per-exercise limits (defaults: 60 s of CPU, 2 GiB of address space)."""

    cpu_seconds: int = 60
    memory_bytes: int = 2 << 30
    file_bytes: int = 16 << 20

    @property
    def wall_seconds(self) -> float:
        return 2 * self.cpu_seconds + 10


DEFAULT = Limits()


@dataclass(frozen=True)
class RunResult:
    """Outcomes per case, or ``failure`` saying why there are none."""

    outcomes: list[Outcome] | None
    failure: str | None
    cell_errors: list[str]
    seconds: float


def bubblewrap_available() -> bool:
    if os.environ.get("SELFATTN_SANDBOX", "") == "fallback" or shutil.which("bwrap") is None:
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


def _python_paths() -> tuple[str, str, str]:
    """(interpreter, its prefix, the site-packages folder holding NumPy)."""
    prefix = sys.base_prefix
    exe = str(Path(prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}")
    return exe, prefix, str(Path(np.__file__).resolve().parent.parent)


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


def _frame(header: dict, arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    head = json.dumps(header).encode()
    return struct.pack(">Q", len(head)) + head + buf.getvalue()


def _limits(limits: Limits):
    def apply() -> None:
        os.setsid()
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _command(workdir: str, result_fd: int) -> tuple[list[str], dict[str, str]]:
    """The command that runs the harness, and the environment it gets (and nothing more)."""
    exe, prefix, site = _python_paths()
    bwrap = mode() == "bubblewrap"
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
           "HOME": "/tmp" if bwrap else workdir, "PATH": "/usr/bin", "SELFATTN_SITE": site,
           "RESULT_FD": str(result_fd)}
    harness = "/harness/harness.py" if bwrap else str(Path(workdir) / "harness.py")
    inner = [exe, "-I", "-S", "-B", harness]
    if not bwrap:
        return inner, env
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
           "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib"]
    if Path("/lib64").exists():
        cmd += ["--symlink", "usr/lib64", "/lib64"]
    # /tmp first: the binds after it may live below /tmp (a checkout or venv there) and must win
    cmd += ["--tmpfs", "/tmp", "--ro-bind", prefix, prefix, "--ro-bind", site, site, "--ro-bind", workdir,
            "/harness", "--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp", "--clearenv"]
    for k, v in env.items():
        cmd += ["--setenv", k, v]
    return cmd + inner, {"PATH": "/usr/bin"}


def run(cells: list[tuple[str, str]], function: str, cases: list[Case], limits: Limits = DEFAULT) -> RunResult:
    """Execute ``cells`` (label, source) in a sandbox, then call ``function`` on every case."""
    store: dict[str, np.ndarray] = {}
    header = {
        "cells": cells,
        "function": function,
        "cases": [{"args": [_encode(a, store) for a in c.args],
                   "kwargs": {k: _encode(v, store) for k, v in c.kwargs.items()}} for c in cases],
    }
    payload = _frame(header, store)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sandbox-") as workdir:
        shutil.copy(HERE / "harness.py", workdir)
        shutil.copy(CHECKING, workdir)
        read_fd, write_fd = os.pipe()
        command, env = _command(workdir, write_fd)
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(write_fd,), preexec_fn=_limits(limits), cwd=workdir, env=env,
        )
        os.close(write_fd)
        try:
            proc.stdin.write(payload)  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except BrokenPipeError:
            pass
        data, timed_out, too_big = _collect(read_fd, proc, limits)
        rc = proc.wait()
    seconds = time.perf_counter() - t0
    if timed_out:
        reason = f"stopped after {limits.wall_seconds:.0f} s: an infinite loop or a very slow computation?"
        return RunResult(None, reason, [], seconds)
    if too_big:
        return RunResult(None, "the results were larger than the grader accepts", [], seconds)
    try:
        result, arrays = _parse(data)
    except Exception:
        return RunResult(None, _death_reason(rc, limits), [], seconds)
    if "missing" in result:
        return RunResult(None, result["missing"], result.get("cell_errors", []), seconds)
    outcomes = []
    for enc in result["outcomes"]:
        if "error" in enc:
            outcomes.append(Outcome(error=str(enc["error"])[:500]))
        else:
            outcomes.append(Outcome(values=tuple(np.asarray(arrays[k], dtype=np.float64) for k in enc["values"])))
    if len(outcomes) != len(cases):
        return RunResult(None, "the grader's channel was tampered with", [], seconds)
    return RunResult(outcomes, None, [str(e)[:500] for e in result.get("cell_errors", [])], seconds)


def _collect(fd: int, proc: subprocess.Popen, limits: Limits) -> tuple[bytes, bool, bool]:
    """Read the result pipe until EOF, the wall-clock limit, or the size cap."""
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
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
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
                           f"command: {' '.join(_command('/WORKDIR', 3)[0])}")


def _parse(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    (n,) = struct.unpack(">Q", data[:8])
    result = json.loads(data[8 : 8 + n].decode())
    with np.load(io.BytesIO(data[8 + n :]), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    if not isinstance(result, dict):
        raise ValueError("not a dict")
    return result, arrays


def _death_reason(rc: int, limits: Limits) -> str:
    if rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGKILL):
        return f"used more than {limits.cpu_seconds} s of CPU time (an infinite loop?)"
    if rc in (-signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS, 128 + signal.SIGSEGV, 128 + signal.SIGABRT):
        return "crashed (possibly out of memory)"
    return (f"the process ended before returning results (exit status {rc}; os._exit, a crash "
            f"or memory above {limits.memory_bytes >> 20} MiB?)")
