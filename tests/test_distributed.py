"""Grading through a Dask cluster (``make grade GRADE_ARGS="--scheduler tcp://HOST:PORT"``).

A scheduler and workers run on 127.0.0.1 as subprocesses, each in a folder of its own (no
shared work folder). One worker is killed mid-run: its notebooks are decided again elsewhere and
the grades equal a local run's, row for row. A worker without bubblewrap gets no work unless the
instructor allows the fallback; an unreachable scheduler stops the run before anything changes.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grading_support import RELEASE, ROOT, SOLUTIONS, entries, grade, place, submission_text

DASK = str(Path(sys.executable).parent / "dask")
NOTEBOOKS = ["03-softmax-attention", "07-masking"]


class LocalCluster:
    """A scheduler and named workers as subprocesses (own process groups), on loopback."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.procs: dict[str, subprocess.Popen] = {}
        self.file = folder / "scheduler.json"
        folder.mkdir(parents=True, exist_ok=True)
        self._start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(self.file)])
        deadline = time.monotonic() + 60
        while not self.file.exists():
            assert time.monotonic() < deadline, (folder / "scheduler.log").read_text()
            time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]

    def _start(self, name: str, cmd: list[str], env: dict | None = None) -> None:
        home = self.folder / name
        home.mkdir(parents=True)
        with open(self.folder / f"{name}.log", "w") as log:  # the child keeps its own copy
            self.procs[name] = subprocess.Popen(cmd, cwd=home, stdout=log, stderr=subprocess.STDOUT,
                                                env=env or _clean_env(), start_new_session=True)

    def add_worker(self, name: str, fallback: bool = False) -> None:
        env = _clean_env()
        if fallback:
            env["SELFATTN_SANDBOX"] = "fallback"
        self._start(name, [DASK, "worker", self.address, "--name", name, "--nthreads", "1", "--no-nanny",
                           "--no-dashboard", "--local-directory", str(self.folder / name)], env)

    def wait_for(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout="30s") as client:
            client.wait_for_workers(n, timeout=60)

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


def _verdicts(work: Path) -> dict[str, dict]:
    return {str(p.relative_to(work)): json.loads(p.read_text()) for p in (work / ".grading/verdicts").rglob("*.json")}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = LocalCluster(tmp_path_factory.mktemp("dask"))
    try:
        for name in ("w1", "w2"):
            c.add_worker(name)
        c.add_worker("nobwrap", fallback=True)
        c.wait_for(3)
        yield c
    finally:
        c.stop()


def test_killed_worker_loses_nothing_and_grades_equal_a_local_run(cluster, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "remote"
    _small_class(local)
    shutil.copytree(local / "submitted", remote / "submitted")
    result = grade(local, "--workers", "2", "--cpu-seconds", "5")
    assert result.returncode == 0, result.stdout + result.stderr
    total = len(_verdicts(local))
    # the same secret seeds the same hidden inputs: the remote run sends it to the workers
    (remote / ".grading").mkdir()
    shutil.copy(local / ".grading" / "secret", remote / ".grading" / "secret")

    env = dict(os.environ, AUTOGRADER_WORKDIR=str(remote))
    proc = subprocess.Popen([sys.executable, "-m", "autograder.grade", "--scheduler", cluster.address,
                             "--cpu-seconds", "5"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # kill w1 once the cluster has decided two notebooks (asked of the scheduler: the grader may
    # write the verdicts it received later, in a burst)
    from distributed import Client

    def decided(dask_scheduler) -> int:
        return sum(ts.state == "memory" for key, ts in dask_scheduler.tasks.items() if str(key).startswith("grade-"))

    deadline = time.monotonic() + 300
    with Client(cluster.address, timeout="30s") as watcher:
        while (done_at_kill := watcher.run_on_scheduler(decided)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
    cluster.kill("w1")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err
    assert done_at_kill < total  # the kill came while work was left
    assert "nobwrap" in out or "gets no work" in out, out
    assert _rows(remote) == _rows(local)  # nothing lost, nothing counted twice
    local_v, remote_v = _verdicts(local), _verdicts(remote)
    assert remote_v.keys() == local_v.keys()
    for key, v in remote_v.items():
        assert v.get("sandbox", "bubblewrap") == "bubblewrap", key  # the worker without bubblewrap got nothing
        assert v["cells"] == local_v[key]["cells"], key
        assert v.get("notes") == local_v[key].get("notes"), key
    assert (remote / "report" / "index.html").exists()


def test_unreachable_scheduler_is_one_line_and_changes_nothing(tmp_path):
    _small_class(tmp_path)
    (tmp_path / "grades.csv").write_text("earlier grades\n")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens there
    result = grade(tmp_path, "--scheduler", f"tcp://127.0.0.1:{port}")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Dask scheduler" in lines[0], result.stderr
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "grades.csv").read_text() == "earlier grades\n"


def test_workers_without_bubblewrap_refuse_unless_allowed(tmp_path):
    c = LocalCluster(tmp_path / "cluster")
    try:
        c.add_worker("nobwrap", fallback=True)
        c.wait_for(1)
        work = tmp_path / "class"
        place(work, "alice", NOTEBOOKS[1], (SOLUTIONS / f"{NOTEBOOKS[1]}.ipynb").read_text())
        before = sorted(str(p) for p in work.rglob("*"))
        refused = grade(work, "--scheduler", c.address)
        assert refused.returncode != 0
        assert "no worker of the Dask cluster" in refused.stderr and "bubblewrap" in refused.stderr, refused.stderr
        assert sorted(str(p) for p in work.rglob("*")) == before
        allowed = grade(work, "--scheduler", c.address, "--allow-fallback-sandbox")
        assert allowed.returncode == 0, allowed.stdout + allowed.stderr
        (verdict,) = _verdicts(work).values()
        assert verdict["sandbox"] == "fallback"
        assert all(cell["passed"] for cell in verdict["cells"].values())
    finally:
        c.stop()
