"""Caps per student server on one machine, and the hub's own settings file: one student's runaway
kernel cannot take the others' memory or cores.

Each student's server and everything it starts (kernels, terminals, Validate's sandbox) runs in a
cgroup of its own, made by the hub (root) before the server starts and removed after it stops:
``selfattn-hub-HUB/LOGIN`` below the hub's own cgroup, in each hierarchy that offers the
controller (cgroup v2 where the controller is enabled there, else its v1 hierarchy, as the
sandbox's :mod:`autograder.sandbox.cgroups` finds them). Its caps: memory (JupyterHub's
``c.Spawner.mem_limit``; swap counts too), CPU (``c.Spawner.cpu_limit`` cores, a CFS quota) and
tasks (``c.CappedLocalProcessSpawner.tasks_limit``). A process that takes more memory than its
server's cap is killed by the kernel inside that cgroup; nobody else's server notices. The server's
first process joins its cgroup before it drops root (``autograder/hub/spawner.py``), and nothing in
it can leave: the cgroup files are root's.

The caps and the idle culler's timeout are the hub's settings: defaults here, changed in
``STATE/hub/settings.py`` (:func:`write_settings_once`: made once with the defaults as comments,
never replaced; a JupyterHub configuration file loaded last, so any JupyterHub option may be set
there). Where no cgroup can be made for a controller (not root, a cgroup v2 hierarchy whose
controllers are not delegated to the hub's cgroup), that cap is not enforced, and
:func:`describe` says so (``make hub`` prints it).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from autograder.outputs import atomic
from autograder.sandbox import cgroups
from autograder.sandbox.cgroups import Hierarchy

#: the controllers of a student server's cgroup
CONTROLLERS = ("memory", "cpu", "pids")
#: defaults: memory per student server with its kernels (a server and a kernel hold about 150 MiB;
#: Validate's sandbox and a student's arrays take the rest), cores, processes and threads
DEFAULT_MEMORY = 2 << 30
DEFAULT_CPUS = 1.0
DEFAULT_TASKS = 512
#: seconds a student's server may stay idle (no kernel busy, no browser traffic) before the idle
#: culler stops it
DEFAULT_IDLE_TIMEOUT = 3600
#: the CFS period of the CPU cap, microseconds (the kernel's default)
CPU_PERIOD_US = 100_000
PREFIX = "selfattn-hub-"


@dataclass(frozen=True)
class HubCaps:
    """What the hub's settings say: caps per student server (``None``: not capped) and the idle
    culler's timeout in seconds (0: no culling)."""

    memory: int | None = DEFAULT_MEMORY
    cpus: float | None = DEFAULT_CPUS
    tasks: int | None = DEFAULT_TASKS
    idle_timeout: int = DEFAULT_IDLE_TIMEOUT


SETTINGS_TEXT = f'''"""The hub's own settings: a JupyterHub configuration file, loaded after the hub's own
(autograder/hub/jupyterhub_config.py), so any JupyterHub option set here wins.

Made once by make hub and never replaced: edit it as root, then make hub-stop and make hub. Caps per
student server (her JupyterLab and every kernel it starts; enforced with cgroups, see
docs/instructors.md, "A class of 200"), and how long an idle server runs before the idle culler
stops it. The defaults, to change:

    c.Spawner.mem_limit = "{DEFAULT_MEMORY >> 30}G"          # memory (and swap) of one student's server and kernels
    c.Spawner.cpu_limit = {DEFAULT_CPUS:g}              # cores
    c.CappedLocalProcessSpawner.tasks_limit = {DEFAULT_TASKS}   # processes and threads
    c.IdleCuller.timeout = {DEFAULT_IDLE_TIMEOUT}            # seconds idle before a server is stopped (0: never)
"""
c = get_config()  # noqa: F821
'''


def settings_path(hub_folder: Path) -> Path:
    """The hub's settings file in the hub's private folder (``STATE/hub``)."""
    return hub_folder / "settings.py"


def write_settings_once(path: Path) -> bool:
    """Write the hub's settings file with the defaults as comments, unless it exists (an
    instructor's settings are never replaced); returns whether it was written."""
    if path.exists():
        return False
    atomic.create_once(path, SETTINGS_TEXT.encode())
    path.chmod(0o600)
    return True


def read_settings(path: Path) -> HubCaps:
    """The caps and idle timeout ``path`` sets (the defaults for what it leaves out, or when it is
    missing). A setting of the wrong kind fails in one line naming the file and the setting."""
    from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader

    try:
        config = PyFileConfigLoader(path.name, str(path.parent)).load_config()
    except ConfigFileNotFound:
        return HubCaps()
    spawner = {**config.get("Spawner", {}), **config.get("LocalProcessSpawner", {}),
               **config.get("CappedLocalProcessSpawner", {})}
    culler = config.get("IdleCuller", {})
    try:
        return HubCaps(memory=parse_bytes(spawner.get("mem_limit", DEFAULT_MEMORY)),
                       cpus=None if spawner.get("cpu_limit", DEFAULT_CPUS) is None
                       else float(spawner.get("cpu_limit", DEFAULT_CPUS)),
                       tasks=None if spawner.get("tasks_limit", DEFAULT_TASKS) is None
                       else int(spawner.get("tasks_limit", DEFAULT_TASKS)),
                       idle_timeout=int(culler.get("timeout", DEFAULT_IDLE_TIMEOUT)))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: a cap or the idle timeout is not a number ({exc})") from None


def parse_bytes(value: object) -> int | None:
    """Bytes from JupyterHub's byte specification (an integer, or ``"512M"``, ``"2G"``: K, M, G, T
    are powers of 1024); ``None`` stays ``None`` (no cap)."""
    if value is None or isinstance(value, int):
        return value  # type: ignore[return-value]
    text = str(value).strip().upper()
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(float(text))


@functools.cache
def hierarchies() -> dict[str, Hierarchy]:
    """Controller -> the hierarchy where this process (the hub) makes its servers' cgroups, for the
    controllers of :data:`CONTROLLERS` where a cgroup can be made here (one is made and removed)."""
    found = {}
    for name, h in cgroups.candidates_here(CONTROLLERS).items():
        if h.version == 2 and not cgroups.enable_v2(h.base, [name]):
            continue
        probe = h.base / f"{PREFIX}probe-{os.getpid()}"
        try:
            probe.mkdir(exist_ok=True)
            probe.rmdir()
        except OSError:
            continue
        found[name] = h
    return found


def hub_folders(hub_id: str) -> list[Path]:
    """The hub's own cgroup folders (one per hierarchy; cgroup v2 holds every controller in one)."""
    return sorted({h.base / f"{PREFIX}{hub_id}" for h in hierarchies().values()})


def server_folders(hub_id: str, login: str) -> dict[str, Path]:
    """Controller -> the cgroup folder of ``login``'s server on hub ``hub_id``."""
    return {name: h.base / f"{PREFIX}{hub_id}" / login for name, h in hierarchies().items()}


def _write_cpu(h: Hierarchy, folder: Path, cpus: float) -> None:
    quota = max(1000, int(cpus * CPU_PERIOD_US))
    if h.version == 2:
        (folder / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
    else:
        (folder / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        (folder / "cpu.cfs_quota_us").write_text(str(quota))


def make_server_group(hub_id: str, login: str, caps: HubCaps) -> dict[str, Path]:
    """Make (afresh: whatever an earlier server of ``login`` left there is killed) the cgroup of
    ``login``'s server with ``caps``; returns controller -> folder. Fails with one line naming the
    student and the folder when a cap cannot be set."""
    folders = server_folders(hub_id, login)
    hs = hierarchies()
    for name, folder in folders.items():
        h = hs[name]
        folder.parent.mkdir(exist_ok=True)
        if h.version == 2:
            cgroups.enable_v2(folder.parent, [n for n, g in hs.items() if g.version == 2])
        if folder.exists():
            cgroups.kill_and_remove(folder)
        try:
            folder.mkdir(exist_ok=True)
            if name == "memory" and caps.memory is not None:
                cgroups.write_cap(h, folder, caps.memory)
            elif name == "pids" and caps.tasks is not None:
                cgroups.write_cap(h, folder, caps.tasks)
            elif name == "cpu" and caps.cpus is not None:
                _write_cpu(h, folder, caps.cpus)
        except OSError as exc:
            raise RuntimeError(f"{login}: could not cap the server's cgroup {folder}: {exc}") from exc
    return folders


def join(folders: dict[str, Path]) -> None:
    """Move the calling process into ``folders`` (run in the server's first process, as root, before
    it becomes the student: what it starts stays there)."""
    for path in sorted(set(folders.values())):
        fd = os.open(path / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)


def remove_server_group(folders: dict[str, Path]) -> None:
    """Kill whatever is left of a stopped server in its cgroup, and remove it."""
    for path in sorted(set(folders.values())):
        if path.exists():
            cgroups.kill_and_remove(path)


def remove_hub_groups(hub_id: str) -> None:
    """Remove the hub's cgroups (after it stopped): each server's left, then the hub's own."""
    for hub in hub_folders(hub_id):
        if not hub.exists():
            continue
        for child in sorted(p for p in hub.iterdir() if p.is_dir()):
            cgroups.kill_and_remove(child)
        cgroups.kill_and_remove(hub)


def describe(caps: HubCaps, idle: bool = True) -> str:
    """The caps in force per student server here, and (``idle``) the idle timeout, in one line."""
    hs = hierarchies()

    def held(name: str, text: str) -> str:
        return f"{text} (cgroup v{hs[name].version})" if name in hs else f"{text} NOT enforced (no {name} cgroup here)"

    parts = [held("memory", f"memory {caps.memory >> 20} MiB") if caps.memory is not None else "memory not capped",
             held("cpu", f"CPU {caps.cpus:g} cores") if caps.cpus is not None else "CPU not capped",
             held("pids", f"{caps.tasks} tasks") if caps.tasks is not None else "tasks not capped"]
    culling = f"idle servers stopped after {caps.idle_timeout} s" if caps.idle_timeout else "idle servers never stopped"
    return f"each student's server: {', '.join(parts)}" + (f"; {culling}" if idle else "")
