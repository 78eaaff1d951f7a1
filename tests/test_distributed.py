"""Grading through a Dask cluster (``make grade GRADE_ARGS="--scheduler tls://HOST:PORT"``).

A scheduler and workers run on 127.0.0.1 as subprocesses, each in a folder of its own (no
shared work folder, a temp folder of its own), speaking TLS with the course's certificates
(``make dask-certs``). Nobody without the client certificate gets in: not as a client, not to
``run`` code on the workers or the scheduler, not to submit a task, not straight to a worker's
port. One worker is killed mid-run: its notebooks are decided again elsewhere, the grades equal a
local run's, row for row, and the killed worker's disk holds no trace of the grading secret. A
plain-TCP scheduler is refused unless it is on the loopback address and the instructor says so.
A worker without bubblewrap gets no work unless the instructor allows the fallback; an
unreachable scheduler stops the run before anything changes.
"""

from __future__ import annotations

import asyncio
import csv
import gc
import json
import os
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grading_support import RELEASE, ROOT, SOLUTIONS, entries, grade, place, submission_text

from autograder.errors import RefusedInput, SetupMissing
from autograder.pipeline import dask_cluster as dist
from autograder.pipeline import dask_tls

DASK = str(Path(sys.executable).parent / "dask")
NOTEBOOKS = ["03-softmax-attention", "07-masking"]


def _security(certs: Path, role: str = "client"):
    from distributed.security import Security

    return Security(tls_ca_file=str(certs / dask_tls.CA), require_encryption=True,
                    **{f"tls_{role}_cert": str(dask_tls.cert_file(certs, role)),
                       f"tls_{role}_key": str(dask_tls.key_file(certs, role))})


def _tls_args(certs: Path) -> list[str]:
    """What ``make grade`` is given to use the cluster with these certificates."""
    return ["--tls-ca", str(certs / dask_tls.CA), "--tls-cert", str(dask_tls.cert_file(certs, "client")),
            "--tls-key", str(dask_tls.key_file(certs, "client"))]


class LocalCluster:
    """A scheduler and named workers as subprocesses (own process groups, own temp folders), on
    loopback; TLS with the certificates in ``certs`` (plain TCP without)."""

    def __init__(self, folder: Path, certs: Path | None):
        self.folder, self.certs = folder, certs
        self.procs: dict[str, subprocess.Popen] = {}
        self.file = folder / "scheduler.json"
        folder.mkdir(parents=True, exist_ok=True)
        tls = ["--protocol", "tls", *dask_tls.tls_options(certs, "scheduler")] if certs else []
        self._start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(self.file), *tls])
        deadline = time.monotonic() + 60
        while not self.file.exists():
            assert time.monotonic() < deadline, (folder / "scheduler.log").read_text()
            time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]
        assert self.address.startswith("tls://" if certs else "tcp://"), self.address

    @property
    def security(self):
        return _security(self.certs) if self.certs else None

    def grade_args(self) -> list[str]:
        return ["--scheduler", self.address,
                *(_tls_args(self.certs) if self.certs else [dist.INSECURE_LOOPBACK_FLAG])]

    def _start(self, name: str, cmd: list[str], env: dict | None = None) -> None:
        home = self.folder / name
        home.mkdir(parents=True)
        with open(self.folder / f"{name}.log", "w") as log:  # the child keeps its own copy
            self.procs[name] = subprocess.Popen(cmd, cwd=home, stdout=log, stderr=subprocess.STDOUT,
                                                env=env or _clean_env(), start_new_session=True)

    def temp(self, name: str) -> Path:
        """The temp folder of worker ``name`` (its $TMPDIR)."""
        return self.folder / f"{name}-tmp"

    def add_worker(self, name: str, fallback: bool = False) -> None:
        env = _clean_env()
        if fallback:
            env["SELFATTN_SANDBOX"] = "fallback"
        self.temp(name).mkdir()
        env["TMPDIR"] = str(self.temp(name))
        tls = dask_tls.tls_options(self.certs, "worker") if self.certs else []
        self._start(name, [DASK, "worker", self.address, "--name", name, "--nthreads", "1", "--no-nanny",
                           "--no-dashboard", "--local-directory", str(self.folder / name), *tls], env)

    def client(self):
        from distributed import Client

        return Client(self.address, timeout="30s", security=self.security, set_as_default=False)

    def wait_for(self, n: int) -> None:
        with self.client() as client:
            client.wait_for_workers(n, timeout=60)

    def worker_addresses(self) -> list[str]:
        with self.client() as client:
            return sorted(client.scheduler_info()["workers"])

    def kill(self, name: str) -> None:
        os.killpg(self.procs[name].pid, signal.SIGKILL)
        self.procs[name].wait()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SELFATTN_SANDBOX", None)
    env.pop("AUTOGRADER_WORKDIR", None)
    return env


def _small_class(work: Path) -> None:
    for nb in NOTEBOOKS:
        place(work, "alice", nb, (SOLUTIONS / f"{nb}.ipynb").read_text())
        place(work, "bob", nb, (RELEASE / f"{nb}.ipynb").read_text())
    wrong = [e for e in entries("catalogue/wrong") if e.notebook in NOTEBOOKS]
    for e in wrong[:6]:
        place(work, e.student, e.notebook, submission_text(e))
    for e in entries("adversarial"):
        if e.path.stem in ("notebook_invalid_json", "kill_the_supervisor"):
            place(work, e.student, e.notebook, submission_text(e))


def _rows(work: Path) -> list[dict]:
    with open(work / "grades.csv", newline="") as f:
        # nbgrader lists students in the order the gradebook met them, which parallel runs vary
        return sorted(csv.DictReader(f), key=lambda r: (r["assignment"], r["student_id"]))


def _decided(verdict: dict) -> tuple[dict, dict]:
    """What a verdict decided: per test cell its result and points, per check its finding's kind and name."""
    return ({gid: (c["passed"], c.get("failed"), c.get("points")) for gid, c in verdict.get("cells", {}).items()},
            {cid: f and (f["kind"], f["name"]) for cid, f in verdict.get("checks", {}).items()})


def _verdicts(work: Path) -> dict[str, dict]:
    return {str(p.relative_to(work)): json.loads(p.read_text()) for p in (work / ".grading/verdicts").rglob("*.json")}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, certs):
    """One TLS cluster for the module: w1 and w2 grade; nobwrap has no bubblewrap (w1 is killed last)."""
    c = LocalCluster(tmp_path_factory.mktemp("dask"), certs)
    try:
        for name in ("w1", "w2"):
            c.add_worker(name)
        c.add_worker("nobwrap", fallback=True)
        c.wait_for(3)
        yield c
    finally:
        c.stop()


# --- who gets in ------------------------------------------------------------------------------------


def _break_in(address: str, security, marker: Path) -> bool:
    """Act as an intruder with these credentials: connect a client, then run code on the workers,
    on the scheduler and as a task, each creating ``marker``-<how>. Returns whether it connected."""
    from distributed import Client

    def touch(how: str) -> int:
        Path(f"{marker}-{how}").write_text("in")
        return 1

    # A refused Client is left half made in a reference cycle. If the garbage collector finalises it while
    # the next Client starts its loop, its __del__ waits for the lock that start holds: a deadlock in
    # distributed (seen here as a run hung for good). So no collection runs inside the constructor, and a
    # refused attempt is collected at once, outside it.
    client = None
    gc.disable()
    try:
        client = Client(address, security=security, timeout="5s", set_as_default=False)
    except Exception:  # refused, in whatever words this way of failing has
        pass
    finally:
        gc.enable()
    if client is None:
        gc.collect()  # the exception is gone, so the half-made Client is garbage now: finalise it here
        return False
    with client:
        client.run(touch, "run")
        client.run_on_scheduler(touch, "run_on_scheduler")
        client.submit(touch, "submit", pure=False).result(timeout=60)
    return True


def _identity(address: str, ssl_context: ssl.SSLContext | None) -> dict:
    """Ask one listening port of the cluster (scheduler or worker) who it is, below the client."""
    from distributed.comm import connect

    async def ask() -> dict:
        extra = {"ssl_context": ssl_context, "require_encryption": True} if ssl_context else {}
        comm = await connect(address, timeout=5, **extra)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    return asyncio.run(ask())


def test_nobody_without_the_client_certificate_gets_in(cluster, certs, tmp_path):
    from distributed.security import Security

    marker = tmp_path / "marker"
    intruders = {"plain TCP": (cluster.address.replace("tls://", "tcp://"), None),
                 "TLS without credentials": (cluster.address, None),
                 "a certificate of another authority": (cluster.address, Security.temporary())}
    for who, (address, security) in intruders.items():
        assert not _break_in(address, security, marker), who
    assert not list(tmp_path.iterdir()), "an intruder ran code"
    assert _break_in(cluster.address, cluster.security, marker)  # the same attempts with the certificate
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marker-run", "marker-run_on_scheduler", "marker-submit"]

    # every listening port (scheduler and each worker) asks for a certificate of the course's authority
    no_cert = ssl.create_default_context(cafile=str(certs / dask_tls.CA))
    no_cert.check_hostname = False
    stranger = Security.temporary().get_connection_args("client")["ssl_context"]
    ours = cluster.security.get_connection_args("client")["ssl_context"]
    ports = [cluster.address, *cluster.worker_addresses()]
    assert len(ports) == 4
    for address in ports:
        for who, ctx in (("plain TCP", None), ("TLS without a client certificate", no_cert),
                         ("a certificate of another authority", stranger)):
            target = address.replace("tls://", "tcp://") if ctx is None else address
            with pytest.raises(Exception):  # noqa: B017 - refused, whatever the words
                print(who, _identity(target, ctx))
        assert _identity(address, ours)["type"] in ("Scheduler", "Worker")


@pytest.mark.parametrize("address, reason", [
    ("tcp://10.20.30.40:8786", "anyone who can reach it"),
    ("tcp://scheduler.example.edu:8786", "anyone who can reach it"),
    ("tcp://127.0.0.1:8786", dist.INSECURE_LOOPBACK_FLAG),
    ("tcp://[::1]:8786", dist.INSECURE_LOOPBACK_FLAG),
    ("ws://127.0.0.1:8786", "not authenticated"),
    ("10.20.30.40:8786", "not a Dask scheduler address"),
])
def test_an_unauthenticated_scheduler_is_refused_before_anything_is_contacted(address, reason):
    with pytest.raises(RefusedInput) as refused:
        dist.scheduler_target(address)
    assert reason in str(refused.value) and "\n" not in str(refused.value)


def test_a_plain_tcp_scheduler_is_refused_in_one_line_and_changes_nothing(tmp_path):
    _small_class(tmp_path)
    (tmp_path / "grades.csv").write_text("earlier grades\n")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    # off the loopback address, not even the flag lets plain TCP through (the other cases: above)
    result = grade(tmp_path, "--scheduler", "tcp://10.20.30.40:8786", dist.INSECURE_LOOPBACK_FLAG)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("refused:") and "anyone who can reach" in lines[0], result.stderr
    assert "plain TCP" in lines[0] and "grading secret" in lines[0], lines[0]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "grades.csv").read_text() == "earlier grades\n"


def test_the_client_credentials_default_to_the_course_folder_and_must_be_private(tmp_path, monkeypatch, certs):
    monkeypatch.setattr(dask_tls, "DEFAULT_DIR", tmp_path / "none")
    with pytest.raises(SetupMissing, match="is missing; run make dask-certs"):
        dist.scheduler_target("tls://127.0.0.1:8786")
    folder = tmp_path / "tls"
    shutil.copytree(certs, folder)
    monkeypatch.setattr(dask_tls, "DEFAULT_DIR", folder)
    target = dist.scheduler_target("tls://127.0.0.1:8786")
    assert target.security.require_encryption
    assert target.security.tls_client_cert == str(folder / "client.pem")
    assert target.security.tls_client_key == str(folder / "client-key.pem")
    os.chmod(folder / "client-key.pem", 0o640)
    with pytest.raises(RefusedInput, match="can be read by other users; chmod 600"):
        dist.scheduler_target("tls://127.0.0.1:8786")
    os.chmod(folder / "client-key.pem", 0o600)
    (folder / "client.pem").write_text("not a certificate\n")
    with pytest.raises(RefusedInput, match="cannot use the Dask client certificate"):
        dist.scheduler_target("tls://127.0.0.1:8786")


def test_dask_certs_writes_private_keys_and_no_authority_key(tmp_path, capsys):
    from cryptography import x509

    folder = tmp_path / "tls"
    assert dask_tls.main(["--dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == {"ca.pem": 0o644, **{f"{r}.pem": 0o644 for r in dask_tls.ROLES},
                     **{f"{r}-key.pem": 0o600 for r in dask_tls.ROLES}}
    ca = x509.load_pem_x509_certificate((folder / "ca.pem").read_bytes())
    for role in dask_tls.ROLES:
        x509.load_pem_x509_certificate((folder / f"{role}.pem").read_bytes()).verify_directly_issued_by(ca)
    for role in ("scheduler", "worker"):  # how to start each, with its own files
        line = next(ln for ln in out.splitlines() if f"dask {role}" in ln)
        assert " ".join(dask_tls.tls_options(folder, role)) in line, out
    assert "--scheduler tls://" in out
    whole = dask_tls.cluster_security(folder)  # what the README's Slurm script gives SLURMCluster
    assert whole.require_encryption and whole.tls_ca_file == str(folder / "ca.pem")
    for role in dask_tls.ROLES:
        assert whole.get_tls_config_for_role(role)["key"] == str(folder / f"{role}-key.pem")
        assert whole.get_connection_args(role)["ssl_context"].verify_mode == ssl.CERT_REQUIRED
    first = (folder / "ca.pem").read_bytes()
    with pytest.raises(SystemExit) as refused:  # the command: one line and the status of a refusal
        dask_tls.main(["--dir", str(folder)])
    assert refused.value.code == RefusedInput.exit_status
    assert "already holds the cluster's certificates" in capsys.readouterr().err
    assert (folder / "ca.pem").read_bytes() == first
    assert dask_tls.main(["--dir", str(folder), "--force"]) == 0
    assert (folder / "ca.pem").read_bytes() != first


# --- the secret on the workers ----------------------------------------------------------------------


def test_the_secret_given_in_memory_seeds_the_inputs_and_never_touches_the_disk(tmp_path):
    import hashlib
    import pickle

    from autograder.verdicts import decide as verdicts
    from autograder.workspace import Workspace

    ws = Workspace(tmp_path, ROOT)
    secret = b"0123456789abcdef0123456789abcdef"
    with verdicts.secret_given(secret):
        seed = verdicts._seed("alice", "07-masking", ws=ws)
    assert seed == int.from_bytes(hashlib.sha256(secret + b"alice\x0007-masking").digest()[:8], "big")
    assert not (tmp_path / ".grading").exists()
    assert verdicts._seed("alice", "07-masking", ws=ws) != seed  # outside the block: the work folder's own secret
    assert (tmp_path / ".grading" / "secret").is_file()
    sealed = dist.Sealed(secret)  # what a task carries: its text never shows in a log of the task
    assert secret.decode() not in repr((sealed,)) + str(sealed)
    assert pickle.loads(pickle.dumps(sealed)).value == secret


def test_a_task_leaves_nothing_in_the_worker_folder_even_when_it_fails(tmp_path):
    work = tmp_path / "work"
    (work / "submitted" / "alice").mkdir(parents=True)
    mine = work / "submitted" / "alice" / "nb.ipynb"
    with pytest.raises(RuntimeError), dist._task(work, [mine]):
        mine.write_text("{}")
        (work / ".grading").mkdir()
        (work / ".grading" / "staged.ipynb").write_text("{}")
        raise RuntimeError("the grader failed")
    assert work.is_dir() and not list(work.iterdir())


def test_folders_of_killed_worker_processes_are_swept(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = tmp_path / f"autograder-worker-{dead.pid}-abc"
    alive = tmp_path / f"autograder-worker-{os.getpid()}-abc"
    for folder in (gone, alive):
        (folder / "submitted").mkdir(parents=True)
    dist._sweep_orphans()
    assert not gone.exists() and alive.exists()


def _files_holding(folders: list[Path], needle: bytes) -> list[str]:
    return [str(p) for folder in folders for p in folder.rglob("*")
            if p.is_file() and not p.is_symlink() and needle in p.read_bytes()]


def test_killed_worker_loses_nothing_leaves_no_secret_and_grades_equal_a_local_run(cluster, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "remote"
    _small_class(local)
    shutil.copytree(local / "submitted", remote / "submitted")
    result = grade(local, "--workers", "2", "--cpu-seconds", "5")
    assert result.returncode == 0, result.stdout + result.stderr
    total = len(_verdicts(local))
    # the same secret seeds the same hidden inputs: the remote run sends it to the workers
    (remote / ".grading").mkdir()
    shutil.copy(local / ".grading" / "secret", remote / ".grading" / "secret")
    secret = (local / ".grading" / "secret").read_bytes()

    env = dict(os.environ, AUTOGRADER_WORKDIR=str(remote))
    proc = subprocess.Popen([sys.executable, "-m", "autograder.grade", *cluster.grade_args(), "--cpu-seconds", "5"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # kill w1 once the cluster has decided two notebooks (asked of the scheduler: the grader may
    # write the verdicts it received later, in a burst)

    def decided(dask_scheduler) -> int:
        return sum(ts.state == "memory" for key, ts in dask_scheduler.tasks.items() if str(key).startswith("grade-"))

    deadline = time.monotonic() + 300
    with cluster.client() as watcher:
        while (done_at_kill := watcher.run_on_scheduler(decided)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
    cluster.kill("w1")
    # no trace of the secret in what the killed worker left (a notebook takes milliseconds now, so the
    # kill may land between two notebooks: whether a work folder was left behind is not asserted)
    w1 = [cluster.folder / "w1", cluster.temp("w1"), cluster.folder / "w1.log"]
    assert _files_holding(w1[:2], secret) == [] and secret not in w1[2].read_bytes()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err
    assert done_at_kill < total  # the kill came while work was left
    assert "nobwrap" in out or "gets no work" in out, out
    assert _rows(remote) == _rows(local)  # nothing lost, nothing counted twice
    local_v, remote_v = _verdicts(local), _verdicts(remote)
    assert remote_v.keys() == local_v.keys()
    for key, v in remote_v.items():
        assert v.get("sandbox", "bubblewrap") == "bubblewrap", key  # the worker without bubblewrap got nothing
        # inputs are drawn anew for every decision: the same results, not necessarily the same words
        assert _decided(v) == _decided(local_v[key]), key
        assert v.get("notes") == local_v[key].get("notes"), key
    assert (remote / "report" / "index.html").exists()
    # the worker that finished the run: no secret anywhere, and its work folder emptied once idle
    assert all(not list(work.iterdir()) for work in cluster.temp("w2").glob("autograder-worker-*"))
    assert _files_holding([cluster.folder / "w2", cluster.temp("w2")], secret) == []
    assert secret not in (cluster.folder / "w2.log").read_bytes()


def test_unreachable_scheduler_is_one_line_and_changes_nothing(tmp_path, certs):
    _small_class(tmp_path)
    (tmp_path / "grades.csv").write_text("earlier grades\n")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens there
    result = grade(tmp_path, "--scheduler", f"tls://127.0.0.1:{port}", *_tls_args(certs))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Dask scheduler" in lines[0], result.stderr
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "grades.csv").read_text() == "earlier grades\n"


def test_workers_without_bubblewrap_refuse_unless_allowed(tmp_path):
    """On a plain-TCP loopback cluster, which the instructor allows explicitly."""
    c = LocalCluster(tmp_path / "cluster", None)
    try:
        c.add_worker("nobwrap", fallback=True)
        c.wait_for(1)
        work = tmp_path / "class"
        place(work, "alice", NOTEBOOKS[1], (SOLUTIONS / f"{NOTEBOOKS[1]}.ipynb").read_text())
        before = sorted(str(p) for p in work.rglob("*"))
        refused = grade(work, *c.grade_args())
        assert refused.returncode != 0
        assert "no worker of the Dask cluster" in refused.stderr and "bubblewrap" in refused.stderr, refused.stderr
        assert sorted(str(p) for p in work.rglob("*")) == before
        allowed = grade(work, *c.grade_args(), "--allow-fallback-sandbox")
        assert allowed.returncode == 0, allowed.stdout + allowed.stderr
        assert "WARNING: the Dask scheduler" in allowed.stdout and "plain TCP" in allowed.stdout
        (verdict,) = _verdicts(work).values()
        assert verdict["sandbox"] == "fallback"
        assert all(cell["passed"] for cell in verdict["cells"].values())
    finally:
        c.stop()


def test_every_public_run_of_a_dask_run_ends_before_any_hidden_run_starts(cluster, tmp_path):
    """Within one grading run on the cluster, no task of the second phase (hidden runs, fair
    blame) exists at the scheduler before every task of the first (public runs) has ended: read
    from the scheduler's own transition log, not from the grader's code."""
    work = tmp_path / "work"
    for nb in NOTEBOOKS:
        place(work, "alice", nb, (SOLUTIONS / f"{nb}.ipynb").read_text())
        place(work, "bob", nb, (RELEASE / f"{nb}.ipynb").read_text())
    for e in [e for e in entries("catalogue/wrong") if e.notebook in NOTEBOOKS][:4]:
        place(work, e.student, e.notebook, submission_text(e))

    def log(dask_scheduler) -> list[tuple[str, str, str, float]]:
        return [(str(t.key), t.start, t.finish, t.timestamp) for t in dask_scheduler.transition_log
                if str(t.key).startswith("grade-")]

    with cluster.client() as watcher:
        before = {key.rsplit("-", 1)[0] for key, *_ in watcher.run_on_scheduler(log)}
        result = grade(work, *cluster.grade_args())
        assert result.returncode == 0, result.stdout + result.stderr
        after = [t for t in watcher.run_on_scheduler(log) if t[0].rsplit("-", 1)[0] not in before]
    decided = json.loads((work / ".grading" / "timings.json").read_text())["notebooks"]
    assert {t[0].rsplit("-", 1)[0] for t in after} and len({t[0].rsplit("-", 1)[0] for t in after}) == 1, after
    # the grader numbers each run's tasks: its first phase 0 .. decided-1, its second from decided
    public = [t for t in after if int(t[0].rsplit("-", 1)[1]) < decided]
    hidden = [t for t in after if int(t[0].rsplit("-", 1)[1]) >= decided]
    assert len({t[0] for t in public}) == decided and hidden, after
    last_public_end = max(t[3] for t in public if t[2] in ("memory", "erred"))
    first_hidden_seen = min(t[3] for t in hidden)
    assert last_public_end <= first_hidden_seen, (
        f"a hidden task reached the scheduler {last_public_end - first_hidden_seen:.3f} s "
        "before the last public one ended")
