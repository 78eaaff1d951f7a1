"""A real one-node Slurm in a private folder, for the Slurm tests (and to try the README's commands).

``python scripts/one_node_slurm.py start FOLDER`` installs Debian's ``slurm-wlm`` and ``munge`` when
they are missing (``scripts/install-slurm.sh``, apt-get), then starts ``munged`` (as user munge),
``slurmctld`` and ``slurmd`` with everything in ``FOLDER``: the configuration, the munge key and
socket, state, spool, logs and pid files, and ports of its own, so it collides with no other
Slurm. It prints the ``export SLURM_CONF=...`` that points ``sbatch``, ``srun``, ``squeue`` and
``scancel`` at it. ``python scripts/one_node_slurm.py stop FOLDER`` stops the three daemons by their
pids. Needs root (slurmd runs each job as the user who submitted it), as CI has.

The configuration is the least a Debian 12 Slurm (22.05) needs on a machine without cgroups:
``SlurmUser=root``, ``ProctrackType=proctrack/linuxproc``, ``TaskPlugin=task/none``,
``SelectType=select/cons_tres`` (cores are consumable; memory is not), and no ``cgroup.conf``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from local_ports import port_block

SCRIPTS = Path(__file__).resolve().parent
DAEMONS = ("munged", "slurmctld", "slurmd")

CONF = """\
ClusterName=selfattn-test
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket={folder}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool/%n
SlurmctldPidFile={folder}/run/slurmctld.pid
SlurmdPidFile={folder}/run/slurmd.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=60
NodeName={host} CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


class SlurmUnavailable(RuntimeError):
    """This machine cannot run the one-node Slurm; the message says why."""


def _memory_mb() -> int:
    """This machine's memory, as the node's ``RealMemory`` (jobs that ask for memory fit in it)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20 * 9 // 10


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


class OneNodeSlurm:
    """The daemons of one private Slurm, their folder and the environment that reaches them."""

    def __init__(self, folder: Path):
        self.folder = Path(folder).resolve()
        self.conf = self.folder / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """This process's environment with ``SLURM_CONF`` naming this Slurm's configuration."""
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run a Slurm command (``sbatch``, ``squeue``, ...) against this Slurm."""
        result = _run(list(cmd), env=self.env)
        if check and result.returncode != 0:
            raise SlurmUnavailable(f"{' '.join(cmd)} failed ({result.returncode}): "
                                   f"{(result.stderr or result.stdout).strip()[:500]}")
        return result

    def log(self) -> str:
        """The tail of every daemon's log (for a failure's message)."""
        parts = []
        for name, path in (("munged", self.folder / "munge" / "munged.log"),
                           ("slurmctld", self.folder / "log" / "slurmctld.log"),
                           ("slurmd", self.folder / "log" / "slurmd.log")):
            if path.exists():
                parts.append(f"--- {name}.log\n" + "\n".join(path.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(parts)

    def start(self, timeout: float = 90) -> OneNodeSlurm:
        """Install the packages if missing, write the configuration, start the daemons, and wait
        until the node takes jobs. Raises :class:`SlurmUnavailable` with the reason."""
        if os.geteuid() != 0:
            raise SlurmUnavailable("a one-node Slurm needs root (slurmd runs each job as its user); run as root")
        install = _run(["bash", str(SCRIPTS / "install-slurm.sh")])
        if install.returncode != 0:
            raise SlurmUnavailable(f"cannot install slurm-wlm and munge: {(install.stderr or install.stdout).strip()}")
        host = socket.gethostname().split(".")[0]
        for sub in ("state", "spool", "run", "log", "munge"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o711)  # munged (user munge) passes through to its own folder
        munge = self.folder / "munge"
        key = munge / "munge.key"
        if not key.exists():
            made = _run(["mungekey", "--create", f"--keyfile={key}"])
            if made.returncode != 0:
                raise SlurmUnavailable(f"mungekey --create failed: {made.stderr.strip()}")
        shutil.chown(munge, "munge", "munge")
        shutil.chown(key, "munge", "munge")
        os.chmod(munge, 0o711)  # every user's sbatch reaches the socket; the key stays 0600
        os.chmod(key, 0o600)
        ports = port_block(2)  # slurmctld's and slurmd's, which bind them only when started
        self.conf.write_text(CONF.format(host=host, folder=self.folder, ctld_port=ports,
                                         slurmd_port=ports + 1, cpus=os.cpu_count() or 1,
                                         memory_mb=_memory_mb()))
        self._spawn("munged", ["setpriv", "--reuid=munge", "--regid=munge", "--clear-groups",
                               "munged", "--foreground", "--force",
                               f"--socket={munge}/munge.socket", f"--key-file={key}",
                               f"--pid-file={munge}/munged.pid", f"--seed-file={munge}/munged.seed",
                               f"--log-file={munge}/munged.log"])
        self._wait(lambda: (munge / "munge.socket").exists(), timeout, "munged did not open its socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        self._spawn("slurmd", ["slurmd", "-D", "-f", str(self.conf)])

        def idle() -> bool:
            state = _run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env)
            return state.returncode == 0 and state.stdout.strip() in ("idle", "mixed", "allocated")

        self._wait(idle, timeout, "the Slurm node did not become idle")
        return self

    def _spawn(self, name: str, cmd: list[str]) -> None:
        with open(self.folder / "log" / f"{name}.out", "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=self.env, start_new_session=True)
        (self.folder / "run" / f"{name}.daemon").write_text(str(proc.pid))

    def _pids(self) -> dict[str, int]:
        out = {}
        for name in DAEMONS:
            path = self.folder / "run" / f"{name}.daemon"
            if path.exists():
                out[name] = int(path.read_text())
        return out

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [n for n, pid in self._pids().items() if not _alive(pid)]
            if dead or time.monotonic() > deadline:
                self.stop()
                why = f"{', '.join(dead)} exited" if dead else f"not within {timeout:.0f} s"
                out = "\n".join((self.folder / "log" / f"{n}.out").read_text(errors="replace")[-500:] for n in dead)
                raise SlurmUnavailable(f"{what} ({why})\n{out}\n{self.log()}")
            time.sleep(0.3)

    def stop(self) -> None:
        """Stop the daemons this folder started (by their pids, each with its process group), and
        every job they still run."""
        pids = self._pids()
        if _alive(pids.get("slurmctld")):
            _run(["scancel", "--full", "--quiet", "-u", "root"], env=self.env)
            deadline = time.monotonic() + 20
            while _run(["squeue", "-h"], env=self.env).stdout.strip() and time.monotonic() < deadline:
                time.sleep(0.3)
        for name in reversed(DAEMONS):
            pid = pids.get(name)
            if _alive(pid):
                os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for name in reversed(DAEMONS):
            pid = pids.get(name)
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)
            (self.folder / "run" / f"{name}.daemon").unlink(missing_ok=True)
        for pid in self._job_processes():  # a job step that outlived slurmd (slurmstepd and its job)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _job_processes(self) -> list[int]:
        """The ``slurmstepd`` processes of this Slurm's slurmd (their environment names its
        configuration) and every process under them, deepest first."""
        parent: dict[int, int] = {}
        steps = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
                if stat.split("(", 1)[1].rsplit(")", 1)[0] == "slurmstepd" and \
                        f"SLURM_CONF={self.conf}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                    steps.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
        out, todo = [], list(steps)
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo += [child for child, ppid in parent.items() if ppid == pid]
        return out[::-1]


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)  # our own child: reap it if it has ended
        if waited:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of another parent counts as ended
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["start", "stop"])
    p.add_argument("folder", type=Path, nargs="?", help="its private folder (start: default a new one in $TMPDIR)")
    a = p.parse_args(argv)
    if a.action == "stop":
        if a.folder is None:
            p.error("stop needs the FOLDER that start printed")
        OneNodeSlurm(a.folder).stop()
        return 0
    folder = a.folder or Path(tempfile.mkdtemp(prefix="slurm-"))
    try:
        slurm = OneNodeSlurm(folder).start()
    except SlurmUnavailable as exc:
        print(f"cannot start Slurm: {exc}", file=sys.stderr)
        return 1
    print(f"export SLURM_CONF={slurm.conf}")
    print(f"# stop it with: python {__file__} stop {slurm.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
