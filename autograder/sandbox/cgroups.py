"""Caps for a grading run as a whole: its memory and its number of tasks, through one cgroup per run.

The sandbox's resource limits (:mod:`autograder.sandbox`) hold per process: a run that forks
holds the address-space cap once per child, and ``RLIMIT_NPROC`` counts per user across the
machine (and does not apply to root at all). A cgroup caps the run's whole process tree: every
process and thread the run starts lands in the cgroup its parent is in, and cannot leave it (the
sandbox mounts no cgroup file system and drops every capability).

Each fresh run gets its own cgroup in each hierarchy that offers a controller (``memory``,
``pids``): cgroup v2 where the controller is enabled there, else the controller's cgroup v1
hierarchy. It is made below the grader's own cgroup (so whatever caps the grader also caps its
runs), named ``selfattn-<pid of the grader>-<n>``; the process that starts bubblewrap joins it
before it runs anything (:func:`join`), and after the run every process left in it is killed and
the cgroup removed. A warm sandbox (:mod:`autograder.sandbox.warm`) gets one such group for its life
(``shared``): bubblewrap and the pre-warmed process join it as they start, each run is forked
inside it (moving a process into a cgroup waits for an RCU grace period, about 12 ms here, so
no run is moved), and before each run :meth:`Group.begin_run` sets its caps to the run's caps
above what the idle sandbox holds and takes the hit counters as a baseline. Groups of a grader
killed before it could remove them are swept by the next one.

Where no cgroup can be made (not root, a read-only or missing hierarchy, the controller absent),
:func:`hierarchies` leaves that controller out and the caps in force say so (see
:func:`describe`).
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CONTROLLERS = ("memory", "pids")
PREFIX = "selfattn-"
#: What a warm sandbox may hold while idle (the pre-warmed process, caches charged to it) before it
#: is started afresh; its runs' caps come on top of what it holds.
IDLE_MEMORY = 256 << 20
#: What a warm sandbox still starting up (bubblewrap, the pre-warmed process importing NumPy) is
#: allowed besides its first run's caps: measured idle, it holds 15 MiB and 2 tasks.
STARTING = {"memory": 64 << 20, "pids": 2}
_counter = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """Where the cgroups of one controller are made: ``base`` is the grader's own cgroup there."""

    controller: str
    version: int  # 1 or 2
    base: Path


def _own_paths(text: str) -> dict[str, str]:
    """Controller (``""`` for cgroup v2) -> this process's cgroup path, from ``/proc/self/cgroup``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                out[name] = parts[2]
    return out


def _mounts(text: str) -> list[tuple[str, str, str, set[str]]]:
    """(root inside the hierarchy, mount point, file system type, super options) of every cgroup
    mount, from ``/proc/self/mountinfo``."""
    out = []
    for line in text.splitlines():
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            out.append((fields[3], fields[4].replace("\\040", " "), rest[0], set(rest[2].split(","))))
    return out


def _below(mount: str, root: str, path: str) -> Path | None:
    """The folder of cgroup ``path`` under a hierarchy mounted at ``mount`` from ``root``."""
    root, path = root.rstrip("/"), path.rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None
    return Path(mount + path[len(root):])


def candidates_here(controllers: tuple[str, ...] = CONTROLLERS) -> dict[str, Hierarchy]:
    """:func:`candidates` for this process (its ``/proc/self`` files); empty where they cannot be read."""
    try:
        cgroup_text = Path("/proc/self/cgroup").read_text()
        mountinfo_text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return {}
    return candidates(cgroup_text, mountinfo_text, controllers)


def candidates(cgroup_text: str, mountinfo_text: str,
                controllers: tuple[str, ...] = CONTROLLERS) -> dict[str, Hierarchy]:
    """Controller -> the hierarchy to use for it, before any probe: cgroup v2 where its root folder
    lists the controller as available, else the controller's own v1 hierarchy (for each of
    ``controllers``; the hub's caps per student server ask for ``cpu`` too)."""
    own, mounts = _own_paths(cgroup_text), _mounts(mountinfo_text)
    found: dict[str, Hierarchy] = {}
    for root, point, kind, _options in mounts:
        if kind == "cgroup2" and "" in own:
            base = _below(point, root, own[""])
            try:
                available = (base / "cgroup.controllers").read_text().split() if base else []
            except OSError:
                available = []
            for name in controllers:
                if name in available:
                    found.setdefault(name, Hierarchy(name, 2, base))
    for root, point, kind, options in mounts:
        for name in controllers:
            if kind == "cgroup" and name in options and name in own and name not in found:
                base = _below(point, root, own[name])
                if base is not None:
                    found[name] = Hierarchy(name, 1, base)
    return found


def enable_v2(base: Path, names: list[str]) -> bool:
    """Make ``names`` available to the children of v2 cgroup ``base`` (its ``subtree_control``)."""
    control = base / "cgroup.subtree_control"
    try:
        missing = [n for n in names if n not in control.read_text().split()]
        if missing:
            control.write_text(" ".join(f"+{n}" for n in missing))
        return True
    except OSError:  # not ours to change, or this cgroup holds processes (v2's no-internal-process rule)
        return False


def _sweep(base: Path) -> None:
    """Remove the cgroups a grader killed outright left in ``base`` (its pid is in the name)."""
    for folder in base.glob(f"{PREFIX}*-*"):
        pid = folder.name[len(PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its grader is alive
        except ProcessLookupError:
            pass
        except OSError:
            continue
        kill_and_remove(folder)


def _probe(h: Hierarchy) -> bool:
    """Whether a cgroup can be made, capped and removed in ``h`` (it is made and removed)."""
    if h.version == 2 and not enable_v2(h.base, [h.controller]):
        return False
    folder = h.base / f"{PREFIX}{os.getpid()}-probe"
    try:
        folder.mkdir(exist_ok=True)
        try:
            write_cap(h, folder, 1 << 30 if h.controller == "memory" else 64)
            with open(folder / "cgroup.procs", "wb"):
                pass
        finally:
            folder.rmdir()
        return True
    except OSError:
        return False


#: cgroups turned off in this process (:func:`turn_off`)
_OFF = False


def turn_off() -> None:
    """Make no cgroup in this process from now on (``c.GradingSettings.cgroups = False``, applied by
    :meth:`autograder.settings.Settings.apply`)."""
    global _OFF
    _OFF = True
    hierarchies.cache_clear()


@functools.cache
def hierarchies() -> dict[str, Hierarchy]:
    """Controller -> the hierarchy where each run gets its cgroup, for the controllers that work
    here (probed once per process: a cgroup is made, capped and removed). Empty where cgroups
    cannot be made; ``c.GradingSettings.cgroups = False`` or ``$SELFATTN_CGROUPS=0`` turns them off
    (to compare, or to test the fallback)."""
    from autograder.environment import setting_overrides

    if _OFF or setting_overrides().get("cgroups") is False:
        return {}
    found = {}
    for name, h in candidates_here().items():
        if _probe(h):
            found[name] = h
            _sweep(h.base)
    return found


def write_cap(h: Hierarchy, folder: Path, value: int) -> None:
    """Cap cgroup ``folder`` of ``h`` at ``value``: tasks for ``pids``, else bytes of memory (swap
    counts too)."""
    if h.controller == "pids":
        (folder / "pids.max").write_text(str(value))
    elif h.version == 2:
        (folder / "memory.max").write_text(str(value))
        if (folder / "memory.swap.max").exists():
            (folder / "memory.swap.max").write_text("0")
    else:
        files = [folder / "memory.limit_in_bytes", folder / "memory.memsw.limit_in_bytes"]  # (swap counts too)
        files = [f for f in files if f.exists()]
        try:  # memory+swap may never be below memory alone: lower memory first, raise it last
            for f in files:
                f.write_text(str(value))
        except OSError:
            for f in reversed(files):
                f.write_text(str(value))


def members(group: Group) -> list[int]:
    """The processes in ``group`` (pids as this process sees them)."""
    return sorted({pid for _h, folder in group.folders.values() for pid in _members(folder)})


def _members(folder: Path) -> list[int]:
    try:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill_and_remove(folder: Path, attempts: int = 200) -> bool:
    """Kill every process in cgroup ``folder`` (again and again: a fork bomb refills it), then
    remove it; False if it would not go."""
    for _ in range(attempts):
        if (folder / "cgroup.kill").exists():
            try:
                (folder / "cgroup.kill").write_text("1")
            except OSError:
                pass
        for pid in _members(folder):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.005)  # killed processes take a moment to leave
    return False


#: What :meth:`Group.hit` returns for each cap a run ran into.
MEMORY, TASKS = "memory", "tasks"


@dataclass
class Group:
    """One run's cgroups (one per available controller), or a warm sandbox's (``shared``: its runs
    come and go, it stays); empty where there are none.

    Made by :func:`make`; a fresh run's first process joins with :func:`join` (through
    :meth:`procs_fds`); a warm sandbox's runs are born in it, capped by :meth:`begin_run`.
    :meth:`hit` says which cap the run ran into; :meth:`finish` ends a run's group.
    """

    folders: dict[str, tuple[Hierarchy, Path]] = field(default_factory=dict)
    shared: bool = False
    protect: Callable[[], set[int]] | None = None  # processes a cap never kills (a sandbox's own)
    _fds: list[int] = field(default_factory=list)
    _base: dict[str, int] = field(default_factory=dict)  # the counters when the current run began
    _hit: str | None = None
    _checked: float = 0.0

    def procs_fds(self) -> list[int]:
        """Descriptors of the group's ``cgroup.procs`` files (one per folder), opened here: a
        process that writes ``0`` to each joins the group. Closed by :meth:`remove`."""
        if not self._fds:
            folders = {str(p): p for _h, p in self.folders.values()}
            self._fds = [os.open(p / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC) for p in folders.values()]
        return list(self._fds)

    def begin_run(self, memory_bytes: int, tasks: int, starting: bool = False) -> bool:
        """Before each run in a shared group: cap it at ``memory_bytes`` and ``tasks`` above what
        the group holds now (the idle sandbox; at least :data:`STARTING` if it is ``starting``),
        and count hits from now on. False (nothing changed) if the idle sandbox holds more than
        :data:`IDLE_MEMORY`."""
        counts = {}
        for name, (h, folder) in self.folders.items():
            usage = folder / ("pids.current" if name == "pids" else
                              "memory.current" if h.version == 2 else "memory.usage_in_bytes")
            counts[name] = int(usage.read_text())
        if counts.get("memory", 0) > IDLE_MEMORY:
            return False
        if starting:
            counts = {name: max(n, STARTING[name]) for name, n in counts.items()}
        for name, (h, folder) in self.folders.items():
            write_cap(h, folder, counts[name] + (memory_bytes if name == "memory" else tasks))
        self._base, self._hit = self._counters(), None
        return True

    def _counters(self) -> dict[str, int]:
        """Per controller, how often a cap was hit so far (processes killed for memory, tasks refused)."""
        out = {}
        for name, (h, folder) in self.folders.items():
            try:
                if name == "memory":
                    text = (folder / ("memory.events" if h.version == 2 else "memory.oom_control")).read_text()
                    out[name] = counter_of(text, "oom_kill")
                else:
                    out[name] = counter_of((folder / "pids.events").read_text(), "max")
            except OSError:
                pass
        return out

    def hit(self) -> str | None:
        """:data:`MEMORY` if the kernel killed a process of the run for memory, :data:`TASKS` if
        the run was refused a new process or thread, else ``None`` (once seen, remembered)."""
        if self._hit is None:
            counters = self._counters()
            for name, cap in (("memory", MEMORY), ("pids", TASKS)):
                if counters.get(name, 0) > self._base.get(name, 0):
                    self._hit = cap
                    break
        return self._hit

    def stop_if_capped(self) -> bool:
        """While the run goes on (called often): if it ran into a cap, kill all of it and say so.
        Reads the counters at most every 50 ms."""
        now = time.monotonic()
        if not self.folders or now - self._checked < 0.05:
            return False
        self._checked = now
        if self.hit() is None:
            return False
        self.kill()
        return True

    def kill(self) -> None:
        """SIGKILL every process in the group but the protected ones (several rounds: a fork bomb
        refills it)."""
        spare = self.protect() if self.protect is not None else set()
        for _ in range(50):
            targets = [pid for pid in members(self) if pid not in spare]
            if not targets:
                return
            for pid in targets:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def finish(self) -> None:
        """After a run: remove the group, unless it is a warm sandbox's (which outlives its runs)."""
        if not self.shared:
            self.remove()

    def remove(self) -> None:
        """Close the descriptors, kill whatever is left in the group and remove its cgroups."""
        for fd in self._fds:
            os.close(fd)
        self._fds = []
        for _h, folder in self.folders.values():
            kill_and_remove(folder)
        self.folders = {}


def counter_of(text: str, key: str) -> int:
    """The number after ``key`` in a cgroup's ``KEY VALUE`` lines (``memory.events``, ``pids.events``,
    ``memory.oom_control``), 0 where there is none."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def make(memory_bytes: int, tasks: int) -> Group:
    """A new group capped at ``memory_bytes`` for all its processes together and ``tasks``
    processes and threads at once; an empty group where no hierarchy works (nothing capped)."""
    group = Group()
    name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
    for controller, h in hierarchies().items():
        folder = h.base / name
        try:
            if folder not in [f for _h, f in group.folders.values()]:  # v2: one folder holds both
                folder.mkdir()
            group.folders[controller] = (h, folder)
            write_cap(h, folder, memory_bytes if controller == "memory" else tasks)
        except OSError as e:
            group.remove()
            raise RuntimeError(f"could not make the run's cgroup {folder}: {e}") from e
    return group


def join(fds: list[int]) -> None:
    """Move the calling process into the groups whose ``cgroup.procs`` descriptors are ``fds``."""
    for fd in fds:
        os.write(fd, b"0")


def describe(memory_bytes: int, tasks: int) -> tuple[str, str]:
    """How the run as a whole is capped here: (memory, processes), each a few words."""
    h = hierarchies()
    memory = (f"memory {memory_bytes >> 20} MiB per run (cgroup v{h['memory'].version})" if "memory" in h
              else f"memory {memory_bytes >> 20} MiB per process only (address space; no memory cgroup here)")
    pids = (f"{tasks} processes and threads per run (cgroup v{h['pids'].version})" if "pids" in h
            else "processes not capped (no pids cgroup here)")
    return memory, pids
