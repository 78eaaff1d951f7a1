"""Grading on a real one-node Slurm (Debian's slurm-wlm and munge, started by scripts/one_node_slurm.py).

Two routes, each checked against a local run of the same class (same secret, so the same hidden
inputs), row for row in ``grades.csv`` and cell for cell in the verdicts:

- ``make grade GRADE_ARGS="--slurm 2 ..."``: dask-jobqueue's ``SLURMCluster`` with the course's TLS;
  the Slurm job of a worker that is deciding a notebook is cancelled (``scancel``) mid-run;
- the job array: ``sbatch --array=0-2%2 scripts/slurm-grade-array.sh 3``, one task cancelled before
  it runs; ``make grade GRADE_ARGS="--after-array 3"`` names its range and the ``sbatch`` that
  decides it, changing nothing; that command, run as printed, completes the class.

If this machine cannot run Slurm (not root, the packages cannot be installed, a daemon does not
start), the tests fail with the reason.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from grading_support import RELEASE, ROOT, SOLUTIONS, entries, grade, place, submission_text
from hypothesis import given
from hypothesis import strategies as st
from test_distributed import _rows, _verdicts

sys.path.insert(0, str(ROOT / "scripts"))
from one_node_slurm import OneNodeSlurm, SlurmUnavailable

NOTEBOOKS = ["03-softmax-attention", "07-masking"]
LIMITS = ["--cpu-seconds", "3"]


@pytest.fixture(scope="module")
def slurm():
    # munged (user munge) must reach its folder: not under pytest's private (mode 700) temp folder
    folder = Path(tempfile.mkdtemp(prefix="selfattn-slurm-"))
    node = OneNodeSlurm(folder)
    try:
        try:
            node.start()
        except SlurmUnavailable as exc:
            pytest.fail(f"this machine cannot run the one-node Slurm the Slurm tests need: {exc}")
        yield node
    finally:
        node.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> Path:
    """Four students (one of them with an answer that loops until its CPU limit), graded here."""
    work = tmp_path_factory.mktemp("local")
    for nb in NOTEBOOKS:
        place(work, "alice", nb, (SOLUTIONS / f"{nb}.ipynb").read_text())
        place(work, "bob", nb, (RELEASE / f"{nb}.ipynb").read_text())
    wrong = next(e for e in entries("catalogue/wrong") if e.notebook in NOTEBOOKS)
    place(work, wrong.student, wrong.notebook, submission_text(wrong))
    (loop,) = [e for e in entries("adversarial") if e.path.stem == "infinite_loop"]
    place(work, loop.student, loop.notebook, submission_text(loop))
    result = grade(work, "--workers", "2", *LIMITS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(_rows(work)) == 4
    return work


def _class_like(local: Path, work: Path) -> None:
    """The same submissions and grading secret as the local run, in a fresh work folder."""
    shutil.copytree(local / "submitted", work / "submitted")
    (work / ".grading").mkdir()
    shutil.copy(local / ".grading" / "secret", work / ".grading" / "secret")


def _same_grades(work: Path, local: Path) -> None:
    assert _rows(work) == _rows(local)
    mine, theirs = _verdicts(work), _verdicts(local)
    assert mine.keys() == theirs.keys()
    for key, v in mine.items():
        assert v["cells"] == theirs[key]["cells"], key
        assert v.get("notes") == theirs[key].get("notes"), key
        assert v.get("sandbox", "bubblewrap") == "bubblewrap", key


def _make_grade(work: Path, slurm: OneNodeSlurm, grade_args: str, **env: str) -> subprocess.Popen:
    """``make grade GRADE_ARGS=...`` on this work folder, with this Slurm."""
    return subprocess.Popen(["make", "--no-print-directory", "grade", f"GRADE_ARGS={grade_args}"], cwd=ROOT,
                            env=dict(slurm.env, AUTOGRADER_WORKDIR=str(work), **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


@contextmanager
def _ended(proc: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """``proc``, killed with its process group if the test leaves it running (a failed assertion)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_until_done(slurm: OneNodeSlurm, job: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while slurm.run("squeue", "-h", "-j", job, check=False).stdout.strip():
        assert time.monotonic() < deadline, slurm.run("squeue").stdout
        time.sleep(0.5)


def test_a_compute_node_is_checked_with_one_command(slurm, certs):
    ok = slurm.run("srun", sys.executable, "-m", "autograder.pipeline.node_check", "--tls", str(certs), check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "ok: sandbox: bubblewrap" in ok.stdout and ok.stdout.rstrip().endswith("ready to grade"), ok.stdout
    (certs / "worker-key.pem").chmod(0o644)
    try:
        bad = slurm.run("srun", sys.executable, "-m", "autograder.pipeline.node_check", "--tls", str(certs),
                        check=False)
    finally:
        (certs / "worker-key.pem").chmod(0o600)
    assert bad.returncode != 0
    assert "NOT READY" in bad.stderr and "chmod 600" in bad.stderr, bad.stderr


def test_make_grade_on_slurm_jobs_equals_a_local_run_though_a_job_is_cancelled(slurm, certs, local, tmp_path):
    work = tmp_path / "class"
    _class_like(local, work)
    tls = f"--tls-ca {certs / 'ca.pem'} --tls-cert {certs / 'client.pem'} --tls-key {certs / 'client-key.pem'}"
    # the jobs' size, as Dask's configuration gives it (jobqueue.slurm.cores, .memory)
    with _ended(_make_grade(work, slurm, f"--slurm 2 {tls} {' '.join(LIMITS)}",
                            DASK_JOBQUEUE__SLURM__CORES="1", DASK_JOBQUEUE__SLURM__MEMORY="1GB")) as proc:
        decided, text, stderr = _cancel_a_busy_job_midway(proc, slurm, certs)
    assert proc.returncode == 0, text + stderr
    assert decided < len(_verdicts(local)), "the cancel came after the work was done"
    # grading starts when the first job's worker joins: the second may join before or after that
    assert "asked Slurm for 2 worker jobs" in text and re.search(r"\b([12]) of \1 workers grade", text), text
    _same_grades(work, local)  # the cancelled job's notebook was decided again, nothing counted twice
    deadline = time.monotonic() + 60  # the run cancelled its jobs when it ended
    while slurm.run("squeue", "-h", "-t", "PD,R", check=False).stdout.strip():
        assert time.monotonic() < deadline, "Slurm jobs outlived the run: " + slurm.run("squeue").stdout
        time.sleep(0.5)


def _cancel_a_busy_job_midway(proc: subprocess.Popen, slurm: OneNodeSlurm, certs: Path) -> tuple[int, str, str]:
    """Once both workers have joined and a notebook came back, ``scancel`` the Slurm job of a worker
    that is deciding one; then wait for the run. Returns (notebooks decided at the cancel, stdout, stderr)."""
    from distributed import Client

    from autograder.pipeline.dask_cluster import client_security

    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + 300
    while not (address := next((m[1] for line in list(out) if (m := re.search(r"Dask cluster at (tls://\S+):", line))),
                               None)):
        assert proc.poll() is None and time.monotonic() < deadline, "".join(out) + proc.stderr.read()
        time.sleep(0.05)

    def busy(dask_scheduler) -> tuple[int, dict[str, int]]:
        decided = sum(ts.state == "memory" for key, ts in dask_scheduler.tasks.items() if str(key).startswith("grade-"))
        return decided, {w: len(ws.processing) for w, ws in dask_scheduler.workers.items()}

    with Client(address, security=client_security(certs / "ca.pem", certs / "client.pem", certs / "client-key.pem"),
                timeout="30s", set_as_default=False) as watcher:
        while True:  # a worker in the middle of a notebook, after the first notebook came back
            decided, processing = watcher.run_on_scheduler(busy)
            working = sorted(w for w, n in processing.items() if n)
            if decided >= 1 and working and len(processing) == 2:
                break
            assert proc.poll() is None and time.monotonic() < deadline, "".join(out) + proc.stderr.read()
            time.sleep(0.02)

        def job_id() -> str | None:  # run on the worker (a nested function travels by value)
            import os

            return os.environ.get("SLURM_JOB_ID")

        job = watcher.run(job_id, workers=[working[0]])[working[0]]
        assert job, "the worker is not in a Slurm job"
    slurm.run("scancel", job)
    stdout, stderr = proc.communicate(timeout=600)
    reader.join()
    return decided, "".join(out) + stdout, stderr


def test_a_job_array_merged_by_make_grade_equals_a_local_run_and_names_a_cancelled_task(slurm, local, tmp_path):
    work = tmp_path / "class"
    _class_like(local, work)
    logs = tmp_path / "logs"
    logs.mkdir()
    # the array is told its work folder (an argument), not given it through the environment
    told = f"--work-folder {work.resolve()} --course-root {ROOT.resolve()}"
    env = {k: v for k, v in slurm.env.items() if k not in ("AUTOGRADER_WORKDIR", "AUTOGRADER_COURSE")}

    def sbatch(command: str) -> str:
        words = shlex.split(command)
        assert words[0] == "sbatch"
        result = subprocess.run([words[0], "--parsable", f"--output={logs}/%A_%a.out", *words[1:]], cwd=ROOT,
                                env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip().split(";")[0]

    # the README's command, two tasks at a time: the third is still pending when it is cancelled
    job = sbatch(f"sbatch --array=0-2%2 scripts/slurm-grade-array.sh 3 {' '.join(LIMITS)} {told}")
    slurm.run("scancel", f"{job}_2")
    _wait_until_done(slurm, job)
    logged = "".join(p.read_text() for p in sorted(logs.iterdir()))
    assert "array task 0/3" in logged and "array task 1/3" in logged and "array task 2/3" not in logged, logged

    before = sorted(str(p) for p in work.rglob("*") if ".grading" not in p.parts)
    with _ended(_make_grade(work, slurm, f"--after-array 3 {' '.join(LIMITS)}")) as merge:
        stdout, stderr = merge.communicate(timeout=600)
    assert merge.returncode != 0, stdout
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("make")]
    assert len(lines) == 1 and lines[0].startswith("not merged:"), stderr
    last = sorted(p.name for p in (work / "submitted").iterdir())[2 * 4 // 3:]  # task 2's range of the 4 students
    assert f"task 2: {', '.join(last)}" in lines[0] and "task 0" not in lines[0], lines[0]
    assert not (work / "grades.csv").exists()
    assert sorted(str(p) for p in work.rglob("*") if ".grading" not in p.parts) == before

    (command,) = re.findall(r"`(sbatch [^`]+)`", lines[0])
    assert command == f"sbatch --array=2 scripts/slurm-grade-array.sh 3 {' '.join(LIMITS)} {told}", command
    _wait_until_done(slurm, sbatch(command))
    with _ended(_make_grade(work, slurm, f"--after-array 3 {' '.join(LIMITS)}")) as merge:
        stdout, stderr = merge.communicate(timeout=600)
    assert merge.returncode == 0, stdout + stderr
    assert "0 to grade" in stdout, stdout  # the array decided every notebook; the merge only ran nbgrader
    _same_grades(work, local)


def test_a_verdict_decided_outside_make_grade_reaches_the_gradebook(local, tmp_path):
    """What an array task (or ``--one``) decides after nbgrader autograded a submission is applied
    by the next ``make grade``, which decides nothing itself."""
    work = tmp_path / "class"
    shutil.copytree(local, work)
    before = {r["student_id"]: float(r["score"]) for r in _rows(work)}
    place(work, "bob", NOTEBOOKS[1], (SOLUTIONS / f"{NOTEBOOKS[1]}.ipynb").read_text())  # a resubmission
    one = grade(work, "--one", "bob", "attention", NOTEBOOKS[1], *LIMITS)
    assert one.returncode == 0, one.stdout + one.stderr
    again = grade(work, *LIMITS)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 to grade" in again.stdout and "nbgrader autograde attention: 1 students" in again.stdout, again.stdout
    after = {r["student_id"]: float(r["score"]) for r in _rows(work)}
    assert after["bob"] > before["bob"] and {k: v for k, v in after.items() if k != "bob"} == \
        {k: v for k, v in before.items() if k != "bob"}, (before, after)


@given(st.lists(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), max_size=40), st.integers(1, 12))
def test_the_array_ranges_cover_the_class_once_in_order_and_evenly(students, parts):
    from autograder.pipeline.slurm_array import ranges

    cut = ranges(students, parts)
    assert len(cut) == parts
    assert [s for r in cut for s in r] == sorted(set(students))  # each student once, ranges in order
    assert max(map(len, cut)) - min(map(len, cut)) <= 1


@pytest.mark.parametrize("text", ["3/3", "-1/3", "1", "a/b", "2/0", ""])
def test_a_bad_array_task_is_refused_in_one_line(text):
    from autograder.errors import RefusedInput
    from autograder.pipeline.slurm_array import parse_task

    with pytest.raises(RefusedInput) as refused:
        parse_task(text)
    assert "I/N" in str(refused.value) and "\n" not in str(refused.value)


def test_slurm_and_scheduler_together_are_refused_before_anything(tmp_path):
    result = grade(tmp_path, "--slurm", "2", "--scheduler", "tls://127.0.0.1:8786")
    assert result.returncode != 0 and result.stderr.strip() == \
        "refused: --slurm starts its own cluster; give it or --scheduler, not both", result.stderr
    assert not list(tmp_path.iterdir())
