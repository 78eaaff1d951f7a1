"""Caps on a grading run as a whole, not per process: the run's /tmp and /dev/shm together, its
memory (all its processes together) and its number of processes and threads.

A run that fills its folders, forks children that each stay under the per-process caps but
together hold more than the run's memory, or forks without end fails its own exercise with a
fixed message, in a freshly started and in a pre-warmed sandbox alike; the machine stays
responsive (a timer thread of this process keeps ticking) and the run ends long before its wall
limit. Graded as part of a class, each such submission changes nothing else of the class: every
other score and line equals a clean grade of the same class.

These tests need the machine's cgroups (see ``test_cgroups_work_on_this_machine``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from grading_support import SOLUTIONS, entries, grade, place, submission_text
from nbgrader.api import Gradebook

from autograder import sandbox
from autograder.sandbox import cgroups, warm
from selfattn.checks.calling import Case
from selfattn.checks.findings import Finding, Kind

LIMITS = sandbox.Limits(cpu_seconds=5, memory_bytes=512 << 20)
HOSTILE = {e.path.stem: e for e in entries("adversarial")
           if e.path.stem in ("fill_tmp", "fork_children_holding_memory", "fork_bomb")}
CAP_OF = {"fill_tmp": sandbox.DISK, "fork_children_holding_memory": cgroups.MEMORY, "fork_bomb": cgroups.TASKS}
HONEST = "def f(x):\n    return np.asarray(x) * 2\n"
FOLDER_SIZES = """
import os
def f(x):
    return np.array([os.statvfs(p).f_blocks * os.statvfs(p).f_frsize for p in ("/tmp", "/dev/shm")], dtype=float)
"""


class Ticker:
    """A thread that ticks every 20 ms while the ``with`` block runs; ``max_gap`` is the longest
    it waited between two ticks (seconds): how unresponsive the machine became."""

    def __init__(self) -> None:
        self.max_gap = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(0.02):
            now = time.monotonic()
            self.max_gap = max(self.max_gap, now - last)
            last = now

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(params=["fresh", "warm"])
def session(request):
    if request.param == "fresh":
        yield None
        return
    with warm.Session() as s:
        yield s


def left_cgroups(session: warm.Session | None = None) -> list[Path]:
    """The cgroups of this process still in place but those of ``session``'s sandbox (a fresh run
    removes its own; a warm sandbox's go when it ends)."""
    own = {folder for _h, folder in session.group.folders.values()} if session and session.group else set()
    return [p for h in cgroups.hierarchies().values() for p in h.base.glob(f"{cgroups.PREFIX}{os.getpid()}-*")
            if p not in own]


def test_cgroups_work_on_this_machine():
    found = cgroups.hierarchies()
    assert set(found) == {"memory", "pids"}, (
        f"no cgroup for {sorted({'memory', 'pids'} - set(found))}: grading runs as root here, with cgroup "
        f"hierarchies mounted read-write under /sys/fs/cgroup; found {found}")


def test_writable_folders_hold_128_mib_together(session):
    result = sandbox.run([("f", FOLDER_SIZES)], "f", [Case((0,))], LIMITS, session=session)
    assert result.outcomes is not None, result.failure
    tmp, shm = result.outcomes[0].value
    assert 0 < tmp and 0 < shm and tmp + shm <= 128 << 20, f"/tmp {tmp / 2**20:.0f} MiB, /dev/shm {shm / 2**20:.0f} MiB"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_run_that_hits_a_cap_fails_with_a_fixed_message_and_the_next_run_is_clean(session, name):
    code = HOSTILE[name].path.read_text()
    expected = sandbox.cap_message(CAP_OF[name], LIMITS)
    before = sandbox.run([("f", HONEST)], "f", [Case((np.arange(3.0),))], LIMITS, session=session)
    assert before.outcomes is not None, before.failure
    started_sandbox = session.proc.pid if session is not None and session.proc is not None else None
    with Ticker() as ticker:
        public = sandbox.run([("causal_mask", code)], "causal_mask", [Case((4,))], LIMITS, session=session)
        hidden = sandbox.run([("causal_mask", code)], "causal_mask", [Case((5,))], LIMITS, hidden=True,
                             session=session)
    assert public.failure == hidden.failure == expected, (public.failure, hidden.failure)
    assert max(public.seconds, hidden.seconds) < LIMITS.wall_seconds / 4, (public.seconds, hidden.seconds)
    assert ticker.max_gap < 1.0, f"the machine stalled for {ticker.max_gap:.2f} s"
    after = sandbox.run([("f", HONEST)], "f", [Case((np.arange(3.0),))], LIMITS, session=session)
    assert after.outcomes is not None and after.outcomes[0].value.tolist() == [0.0, 2.0, 4.0], after.failure
    if started_sandbox is not None and sandbox.mode() == "bubblewrap":
        # these runs made processes or files, whose counters the next run could read: the sandbox
        # was replaced (tests/test_warm_sandbox_channels.py), and the replacement works
        assert session.proc is not None and session.proc.pid != started_sandbox
    assert left_cgroups(session) == []
    if session is not None:
        session.close()
        assert left_cgroups() == []


#: results over the grader's size cap that take no memory until written (pages of zeros never touched)
UNTOUCHED_RESULTS = """
def f(n):
    return np.zeros(n)
"""


@pytest.mark.parametrize("hidden", [False, True], ids=["public", "hidden"])
def test_results_over_the_size_cap_are_refused_before_they_are_written(session, hidden):
    """Results over :data:`sandbox.MAX_RESULT_BYTES` are refused by the harness before it writes
    them: 80 and 200 MiB of untouched zeros fail alike, as refused, never by the run's 512 MiB memory
    cap or its time limit, which writing them would reach (the first under load, the second always):
    which of those ended a refused run would otherwise depend on the size the answer chose."""
    small, large = ((mib << 20) // 8 for mib in (80, 200))
    runs = [sandbox.run([("f", UNTOUCHED_RESULTS)], "f", [Case((n,))], LIMITS, hidden=hidden, session=session)
            for n in (small, large)]
    assert [r.failure for r in runs] == [Finding("the results were larger than the grader accepts",
                                                 Kind.REFUSED)] * 2, [r.failure for r in runs]
    kept = sandbox.run([("f", UNTOUCHED_RESULTS)], "f", [Case((1000,))], LIMITS, hidden=hidden, session=session)
    assert kept.outcomes is not None and kept.outcomes[0].value.shape == (1000,), kept.failure


def test_memory_cap_holds_for_the_run_not_per_process(session):
    """Two children of 200 MiB each fit a 512 MiB run; eight do not (each alone would)."""
    code = HOSTILE["fork_children_holding_memory"].path.read_text()
    two_briefly = code.replace("range(8)", "range(2)").replace("time.sleep(60)", "time.sleep(0.2)")
    for _ in range(3):  # each run has the whole cap (a warm sandbox's runs do not add up)
        two = sandbox.run([("causal_mask", two_briefly)], "causal_mask", [Case((3,))], LIMITS, session=session)
        assert two.outcomes is not None and two.outcomes[0].error is None, two.failure
    eight = sandbox.run([("causal_mask", code)], "causal_mask", [Case((3,))], LIMITS, session=session)
    assert eight.failure == sandbox.cap_message(cgroups.MEMORY, LIMITS)


def test_a_warm_sandbox_holding_too_much_while_idle_is_started_afresh(monkeypatch):
    with warm.Session() as session:
        first = sandbox.run([("f", HONEST)], "f", [Case((np.arange(3.0),))], LIMITS, session=session)
        started = session.proc.pid
        monkeypatch.setattr(cgroups, "IDLE_MEMORY", 4 << 20)  # idle, it holds about 15 MiB
        second = sandbox.run([("f", HONEST)], "f", [Case((np.arange(3.0),))], LIMITS, session=session)
        assert first.outcomes is not None and second.outcomes is not None, (first.failure, second.failure)
        assert session.proc.pid != started
    assert left_cgroups() == []


def test_caps_in_force_are_named():
    text = sandbox.caps_in_force(LIMITS)
    assert text.startswith("CPU 5 s per process, memory 512 MiB per run (cgroup v"), text
    assert "64 processes and threads per run (cgroup v" in text and "/tmp+/dev/shm 128 MiB" in text, text


def test_without_cgroups_the_caps_in_force_say_so(monkeypatch):
    monkeypatch.setenv("SELFATTN_CGROUPS", "0")
    cgroups.hierarchies.cache_clear()
    try:
        text = sandbox.caps_in_force(LIMITS)
        result = sandbox.run([("f", HONEST)], "f", [Case((np.arange(3.0),))], LIMITS)
    finally:
        monkeypatch.delenv("SELFATTN_CGROUPS")
        cgroups.hierarchies.cache_clear()
    assert "memory 512 MiB per process only" in text and "processes not capped (no pids cgroup here)" in text, text
    assert result.outcomes is not None, result.failure  # still graded, with the caps that remain


# ---------------------------------------------------------------------------------------------
# finding the hierarchies (synthetic /proc/self/cgroup and /proc/self/mountinfo)


def _mountinfo(*mounts: tuple[str, str, str, str]) -> str:
    return "".join(f"{30 + i} 23 0:{30 + i} {root} {point} rw,relatime - {kind} {kind} rw,{opts}\n"
                   for i, (root, point, kind, opts) in enumerate(mounts))


def test_hybrid_machine_uses_v1_for_controllers_v2_lacks(tmp_path):
    (tmp_path / "unified").mkdir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    cgroup = "8:pids:/\n4:memory:/jobs/42\n0::/\n"
    mounts = _mountinfo(("/", str(tmp_path / "memory"), "cgroup", "memory"),
                        ("/", str(tmp_path / "pids"), "cgroup", "pids"),
                        ("/", str(tmp_path / "unified"), "cgroup2", "nsdelegate"))
    found = cgroups.candidates(cgroup, mounts)
    assert found["memory"] == cgroups.Hierarchy("memory", 1, tmp_path / "memory" / "jobs" / "42")
    assert found["pids"] == cgroups.Hierarchy("pids", 1, tmp_path / "pids")


def test_v2_is_preferred_where_it_offers_the_controller(tmp_path):
    base = tmp_path / "cg" / "grader.service"
    base.mkdir(parents=True)
    (base / "cgroup.controllers").write_text("cpu memory pids\n")
    found = cgroups.candidates("0::/grader.service\n", _mountinfo(("/", str(tmp_path / "cg"), "cgroup2", "")))
    assert found == {"memory": cgroups.Hierarchy("memory", 2, base), "pids": cgroups.Hierarchy("pids", 2, base)}


def test_a_hierarchy_mounted_from_below_its_root_is_followed(tmp_path):
    # a container sees /sys/fs/cgroup/memory mounted from /docker/abc, and is in /docker/abc/job
    found = cgroups.candidates("4:memory:/docker/abc/job\n",
                                _mountinfo(("/docker/abc", str(tmp_path / "m"), "cgroup", "memory")))
    assert found["memory"].base == tmp_path / "m" / "job"
    assert cgroups.candidates("4:memory:/elsewhere\n",
                               _mountinfo(("/docker/abc", str(tmp_path / "m"), "cgroup", "memory"))) == {}


def test_a_hierarchy_where_no_cgroup_can_be_made_is_left_out(tmp_path):
    assert not cgroups._probe(cgroups.Hierarchy("memory", 1, tmp_path / "not-mounted"))
    assert not cgroups._probe(cgroups.Hierarchy("pids", 2, tmp_path))  # no cgroup.subtree_control to enable


# ---------------------------------------------------------------------------------------------
# one class, graded with and without the hostile submissions


CLEAN_NOTEBOOKS = ("07-masking", "08-cost")


def _class(work: Path, hostile: bool) -> None:
    for student in ("alice", *(f"h-{name}" for name in HOSTILE)):
        for nb in CLEAN_NOTEBOOKS:
            place(work, student, nb, (SOLUTIONS / f"{nb}.ipynb").read_text())
    if hostile:
        for name, entry in HOSTILE.items():
            place(work, f"h-{name}", entry.notebook, submission_text(entry))


def _grade(work: Path) -> None:
    result = grade(work, "--workers", "2", "--cpu-seconds", str(LIMITS.cpu_seconds),
                   "--memory-mb", str(LIMITS.memory_bytes >> 20))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    clean, hostile = tmp_path_factory.mktemp("clean"), tmp_path_factory.mktemp("hostile")
    _class(clean, hostile=False)
    _class(hostile, hostile=True)
    _grade(clean)
    with Ticker() as ticker:
        t0 = time.monotonic()
        _grade(hostile)
        seconds = time.monotonic() - t0
    return clean, hostile, ticker.max_gap, seconds


def _cells(work: Path) -> dict[tuple[str, str, str], tuple[float, str]]:
    """(student, notebook, grade id) -> (score in the gradebook, the verdict's lines)."""
    out = {}
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        for student in ("alice", *(f"h-{name}" for name in HOSTILE)):
            for nb in CLEAN_NOTEBOOKS:
                path = work / ".grading" / "verdicts" / student / "attention" / f"{nb}.json"
                verdict = json.loads(path.read_text())
                found = gb.find_submission_notebook(nb, "attention", student)
                for g in found.grades:
                    if g.cell_type == "code":
                        lines = "\n".join(verdict["cells"].get(g.name, {}).get("lines", []))
                        out[student, nb, g.name] = (g.score, lines)
    return out


def test_each_hostile_submission_fails_its_own_exercise_with_its_message(graded):
    _clean, hostile, _gap, _seconds = graded
    cells = _cells(hostile)
    for name, entry in HOSTILE.items():
        for gid in ("causal_mask-public", "causal_mask-hidden"):
            score, _lines = cells[f"h-{name}", entry.notebook, gid]
            assert score == 0, f"{name}: {gid} scored {score}"
        public = cells[f"h-{name}", entry.notebook, "causal_mask-public"][1]
        assert sandbox.cap_message(CAP_OF[name], LIMITS).text in public, f"{name}:\n{public}"


def test_nothing_else_of_the_class_changes(graded):
    clean, hostile, _gap, _seconds = graded
    before, after = _cells(clean), _cells(hostile)
    assert set(before) == set(after)
    changed = {k for k in before if before[k] != after[k]}
    expected = {(f"h-{name}", e.notebook, gid) for name, e in HOSTILE.items()
                for gid in ("causal_mask-public", "causal_mask-hidden")}
    assert changed == expected, sorted(changed ^ expected)


def test_the_machine_stays_responsive_and_the_runs_end_early(graded):
    _clean, hostile, max_gap, _seconds = graded
    assert max_gap < 2.0, f"the grading machine stalled for {max_gap:.1f} s"
    for name, entry in HOSTILE.items():
        verdict = json.loads((hostile / ".grading" / "verdicts" / f"h-{name}" / "attention"
                              / f"{entry.notebook}.json").read_text())
        assert verdict["seconds"]["causal_mask"] < LIMITS.wall_seconds / 2, (name, verdict["seconds"])


def test_the_summary_names_the_caps_in_force(graded):
    _clean, hostile, _gap, _seconds = graded
    summary = (hostile / "grading-summary.txt").read_text()
    assert f"caps in force: {sandbox.caps_in_force(LIMITS)}" in summary, summary
