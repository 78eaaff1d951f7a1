"""The command that starts a sandbox: bubblewrap where it can run, else the fallback.

:func:`mode` says which (probed once per process); :func:`sandbox_command` builds the command and
the environment it gets (the runtime and NumPy read-only, nothing writable but :data:`WRITABLE`,
each a tmpfs of :data:`TMPFS_BYTES`); :func:`preexec_limits` is the per-process part of the caps (rlimits,
and the run's cgroups joined before anything runs), and the user the sandbox runs as
(:func:`run_as`: never root, whoever starts the grader).
"""

from __future__ import annotations

import functools
import os
import pwd
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np

from autograder.sandbox import cgroups, seccomp
from autograder.threads import ONE_BLAS_THREAD


class ProcessLimits(Protocol):
    """What :func:`preexec_limits` reads of a run's limits (an :class:`autograder.sandbox.Limits`)."""

    @property
    def cpu_seconds(self) -> int: ...

    @property
    def memory_bytes(self) -> int: ...

    @property
    def file_bytes(self) -> int: ...


#: this process grades without bubblewrap whatever the machine has (:func:`choose_fallback`)
_FALLBACK_CHOSEN = False


def choose_fallback() -> None:
    """Grade without bubblewrap in this process from now on (``c.GradingSettings.sandbox =
    "fallback"``, applied by :meth:`autograder.settings.Settings.apply`)."""
    global _FALLBACK_CHOSEN
    _FALLBACK_CHOSEN = True
    mode.cache_clear()


#: The host user student code runs as when the grader runs as root: a system user of its own, made
#: by ``scripts/install-system-deps.sh``, that owns no file and no process of the machine.
SANDBOX_USER = "selfattn-sandbox"
#: The user taken instead where :data:`SANDBOX_USER` does not exist.
SANDBOX_USER_ELSE = "nobody"


@functools.cache
def run_as() -> pwd.struct_passwd | None:
    """The host user every sandboxed process runs as, or ``None``: the grader's own user, when it is
    not root (it has no other user to become, and owns no root-only file).

    Started by root, bubblewrap's user namespace would map the sandbox's root to the machine's: the
    student's code would own the pre-warmed process's ``/proc`` files and read root-only tables such
    as ``/proc/kpageflags``. So a grader running as root starts every sandbox (bubblewrap, or the
    fallback's Python) as :data:`SANDBOX_USER`, else :data:`SANDBOX_USER_ELSE`, with no
    supplementary group; ``RuntimeError`` (one line) if neither exists."""
    if os.geteuid() != 0:
        return None
    for name in (SANDBOX_USER, SANDBOX_USER_ELSE):
        try:
            user = pwd.getpwnam(name)
        except KeyError:
            continue
        if user.pw_uid != 0 and user.pw_gid != 0:
            return user
    raise RuntimeError(f"the grader runs as root and neither the user {SANDBOX_USER} nor {SANDBOX_USER_ELSE} "
                       f"exists to run student code as: run scripts/install-system-deps.sh")


def _drop_privileges() -> None:
    """In a newly started sandbox's first process, last thing before it runs the command: become
    :func:`run_as`'s user (no supplementary groups), if the grader is root."""
    user = run_as()
    if user is not None:
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)


def _readable(path: Path, user: pwd.struct_passwd) -> bool:
    """Whether ``user`` (no supplementary groups) may read ``path`` and each folder on the way to
    it, by their mode bits."""
    path = path.absolute()
    for step in [*reversed(path.parents), path]:
        try:
            st = step.stat()
        except OSError:
            return False
        shift = 6 if st.st_uid == user.pw_uid else 3 if st.st_gid == user.pw_gid else 0
        need = 0o5 if step.is_dir() else 0o4
        if (st.st_mode >> shift) & need != need:
            return False
    return True


@functools.cache
def _check_readable() -> None:
    """``RuntimeError`` naming the first of the interpreter, its prefix and NumPy's folders that
    :func:`run_as`'s user cannot read (the sandbox would fail on every run)."""
    user = run_as()
    if user is None:
        return
    exe, prefix, numpy_folders = _python_paths()
    for path in (Path(exe), Path(prefix), *numpy_folders):
        if not _readable(path, user):
            raise RuntimeError(f"the sandbox's user {user.pw_name} (uid {user.pw_uid}) cannot read {path}: "
                               f"make it and the folders above it readable to others (chmod o+rX)")


def run_folder() -> str:
    """Where a sandbox's folder is made: the temporary folder, or, when :func:`run_as`'s user cannot
    reach it (a grader whose ``TMPDIR`` is private, as a test's or a Dask worker's may be), a folder
    of :data:`READABLE_COPIES` it can."""
    import tempfile

    base = tempfile.gettempdir()
    user = run_as()
    if user is None or _readable(Path(base), user):
        return base
    runs = READABLE_COPIES / "runs"
    runs.mkdir(mode=0o755, parents=True, exist_ok=True)
    for folder in (READABLE_COPIES, runs):
        os.chmod(folder, 0o755)
    return str(runs)


def prepare_workdir(workdir: str, sources: tuple[Path, ...]) -> None:
    """Copy ``sources`` (the scripts that run inside) into ``workdir``, readable (not writable) by
    the sandbox's user: the folder ``0o755``, each file ``0o644``."""
    os.chmod(workdir, 0o755)
    for source in sources:
        target = Path(workdir) / source.name
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)


def bubblewrap_available() -> bool:
    from autograder.environment import setting_overrides

    chosen = _FALLBACK_CHOSEN or setting_overrides().get("sandbox") == "fallback"
    if chosen or shutil.which("bwrap") is None:
        return False
    run_as()  # looked up here, not in the forked child
    probe = subprocess.run(  # as the user the sandbox will run as (its user namespace must work for it)
        ["bwrap", "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "/usr/bin/true"],
        capture_output=True, preexec_fn=_drop_privileges, cwd="/",
    )
    return probe.returncode == 0


@functools.cache
def mode() -> str:
    """``"bubblewrap"``, or ``"fallback"`` where it cannot run (probed once per process)."""
    return "bubblewrap" if bubblewrap_available() else "fallback"


def _python_paths() -> tuple[str, str, list[Path]]:
    """(interpreter, its prefix, NumPy's folders: the package and its bundled libraries, if any).

    NumPy's folders are those the sandbox's user can read: where the environment lives below a
    folder closed to others (a checkout in root's home), a copy of them readable by all
    (:func:`readable_copy`)."""
    prefix = sys.base_prefix
    exe = str(Path(prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}")
    package = Path(np.__file__).resolve().parent
    libs = package.parent / "numpy.libs"  # wheels link their BLAS from here ($ORIGIN/../../numpy.libs)
    return exe, prefix, readable_copy(tuple([package] + ([libs] if libs.is_dir() else [])))


#: Where :func:`readable_copy` keeps copies of NumPy's folders that the sandbox's user can read
READABLE_COPIES = Path("/var/lib/selfattn-sandbox")


@functools.cache
def readable_copy(folders: tuple[Path, ...]) -> list[Path]:
    """``folders`` themselves when :func:`run_as`'s user can read them (or the grader is not root),
    else copies of them in :data:`READABLE_COPIES`, one per version of their contents (named by a
    digest of their paths and times), readable but not writable by others, made once under a
    temporary name and renamed into place (parallel workers race safely)."""
    user = run_as()
    if user is None or all(_readable(f, user) for f in folders):
        return list(folders)
    import hashlib
    import tempfile

    stamp = hashlib.sha256(repr([(str(f), f.stat().st_mtime_ns) for f in folders]).encode()).hexdigest()[:16]
    home = READABLE_COPIES / stamp
    if not home.is_dir():
        READABLE_COPIES.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.chmod(READABLE_COPIES, 0o755)
        scratch = Path(tempfile.mkdtemp(prefix=f".{stamp}-", dir=READABLE_COPIES))
        for folder in folders:
            shutil.copytree(folder, scratch / folder.name, symlinks=True)
        for path in [scratch, *scratch.rglob("*")]:
            if not path.is_symlink():
                os.chmod(path, 0o755 if path.is_dir() or path.stat().st_mode & 0o100 else 0o644)
        try:
            os.rename(scratch, home)
        except OSError:  # another worker was first: its copy is the same
            shutil.rmtree(scratch, ignore_errors=True)
    return [home / f.name for f in folders]


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


def preexec_limits(limits: ProcessLimits | None, cgroup_fds: list[int] | None = None) -> Callable[[], None]:
    """The ``preexec_fn`` of a newly started sandbox: in the child, before the command runs, join the
    run's cgroups (``cgroup_fds``, their ``cgroup.procs``), start a session of its own (so the whole
    run can be killed as a process group), set its rlimits (CPU, address space, file size, no core;
    none for ``None``: a pre-warmed sandbox, whose runs set their own) and, last, become the
    sandbox's user (:func:`run_as`)."""

    def apply() -> None:
        cgroups.join(cgroup_fds or [])  # before anything runs: the whole run is in its cgroups
        os.setsid()
        if limits is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        _drop_privileges()

    return apply


def sandbox_command(workdir: str, result_fd: int, script: str = "harness.py",
                    seccomp_fd: int | None = None) -> tuple[list[str], dict[str, str]]:
    """The command that runs the harness (or another ``script`` of ``workdir``: the pre-warmed
    sandbox's :mod:`autograder.sandbox.inside.zygote`), and the environment it gets (and nothing more).
    ``seccomp_fd`` (from :func:`autograder.sandbox.seccomp.program_fd`, passed to the command) holds the
    system call filter bubblewrap installs."""
    _check_readable()
    exe, prefix, numpy_folders = _python_paths()
    bwrap = mode() == "bubblewrap"
    site = SANDBOX_SITE if bwrap else str(Path(workdir) / "site")
    # NumPy asks for huge pages for large arrays (madvise): on a host whose memory is fragmented each
    # fault then waits for compaction, and the same code takes many times the CPU (a verdict would
    # depend on how long the machine has been up)
    env = {**ONE_BLAS_THREAD, "PYTHONHASHSEED": "0", "NUMPY_MADVISE_HUGEPAGE": "0",
           "HOME": "/tmp" if bwrap else workdir, "PATH": "/usr/bin", "SELFATTN_SITE": site,
           "RESULT_FD": str(result_fd)}
    harness = f"/harness/{script}" if bwrap else str(Path(workdir) / script)
    inner = [exe, "-I", "-S", "-B", harness]
    if not bwrap:
        # no isolation to lean on: the folder on sys.path at least holds NumPy alone
        Path(site).mkdir(exist_ok=True)
        os.chmod(site, 0o755)
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
