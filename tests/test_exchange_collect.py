"""Collect takes from the exchange only what a student cannot forge (autograder/intake/inbound.py).

A student may make anything in her own inbound folder. Each test makes throwaway system accounts
(random names of its own, removed afterwards) and an exchange laid out as the hub lays it out,
plants what a student could plant, owned by her, and runs nbgrader's own ``collect`` with the
course's configuration (``python -m autograder.nbgrader_ext.cli collect``, what ``make collect``
runs; formgrader's Collect calls the same class). Each kind of entry and each forgery is refused
with one line naming the student and the entry, nothing is copied through it, the victim's
collected work stays byte for byte, the honest students are collected, and ``make grade``'s
summary lists every refusal.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from grading_support import RELEASE, ROOT, SOLUTIONS

from autograder.course.ids import COURSE_ID
from autograder.intake.inbound import STAMP, stamp_text

ASSIGNMENT = "attention"
NB = "04-scaling"


#: the largest file a test's Collect may write (far over any hand-in the tests make)
MAX_FILE_BYTES = 256 << 20


def _bounded_files() -> None:
    """In the Collect a test starts: no file over :data:`MAX_FILE_BYTES` (the disk is shared)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))


@pytest.fixture(scope="module")
def logins() -> Iterator[dict[str, int]]:
    """Three throwaway student accounts: ``victim``, ``eve`` (the attacker) and ``honest``."""
    if os.geteuid() != 0:
        pytest.fail("this test must run as root (it makes system accounts, as the hub does)")
    names = {role: f"sx{role[:3]}{secrets.token_hex(3)}" for role in ("victim", "eve", "honest")}
    made: list[str] = []
    try:
        for name in names.values():
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--comment",
                            "selfattn exchange test", name], check=True, capture_output=True)
            made.append(name)
        yield dict(names)
    finally:
        for name in made:  # only the accounts made here (random names: no other run's)
            subprocess.run(["userdel", name], capture_output=True)


def _uid(login: str) -> int:
    import pwd

    return pwd.getpwnam(login).pw_uid


class Exchange:
    """An exchange as the hub lays it out (exchange 1777, the course's folder 0750, inbound as
    nbgrader's release makes it), a work folder, and nbgrader's collect run against both."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        tmp.chmod(0o755)
        self.root, self.work = tmp / "exchange", tmp / "work"
        self.root.mkdir(mode=0o1777)
        self.root.chmod(0o1777)
        self.course = self.root / COURSE_ID
        self.course.mkdir(mode=0o750)
        self.inbound = self.course / "inbound"
        self.inbound.mkdir()
        self.inbound.chmod(0o2733)
        self.work.mkdir()

    def handin(self, owner: str, named: str, when: datetime, files: dict[str, bytes] | None = None,
               stamp: datetime | None = None, secret: str | None = None) -> Path:
        """A hand-in folder ``NAMED+attention+WHEN+RANDOM`` as nbgrader's submit makes it, owned by
        ``owner`` (what she could make herself: her files, her times)."""
        folder = self.inbound / f"{named}+{ASSIGNMENT}+{stamp_text(when)}+{secrets.token_hex(16)}"
        folder.mkdir()
        files = {f"{NB}.ipynb": (RELEASE / f"{NB}.ipynb").read_bytes()} if files is None else files
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        (folder / STAMP).write_text(stamp_text(stamp or when))
        (folder / "submission_secret.txt").write_text(secret or secrets.token_hex(64))
        subprocess.run(["chown", "-R", owner, str(folder)], check=True)
        folder.chmod(0o777)
        return folder

    def collect(self, *flags: str) -> str:
        """nbgrader's collect with the course's configuration, as ``make collect`` runs it (a Collect that
        followed a planted link to /dev/zero would write until the disk is full: here it stops at
        :data:`MAX_FILE_BYTES` and the test fails)."""
        env = dict(os.environ, AUTOGRADER_WORKDIR=str(self.work), PYDEVD_DISABLE_FILE_VALIDATION="1")
        env.pop("AUTOGRADER_COURSE", None)
        done = subprocess.run([sys.executable, "-m", "autograder.nbgrader_ext.cli", "collect", ASSIGNMENT,
                               f"--Exchange.root={self.root}", *flags], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600, preexec_fn=_bounded_files)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout + done.stderr

    def submitted(self, student: str) -> Path:
        return self.work / "submitted" / student / ASSIGNMENT

    def tree(self, student: str) -> dict[str, bytes]:
        """Every file collected for ``student``, by its path inside the hand-in."""
        top = self.submitted(student)
        return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}

    def refusals(self) -> list[str]:
        data = json.loads((self.work / ".grading" / "collect-refusals.json").read_text())
        return [line for by in data.get(ASSIGNMENT, {}).values() for line in by]


@pytest.fixture
def exchange(tmp_path) -> Exchange:
    return Exchange(tmp_path)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _lines_about(log: str, student: str, entry: str) -> list[str]:
    return [line for line in log.splitlines() if student in line and entry in line and "refused" in line]


def test_every_kind_of_planted_entry_is_refused_and_nothing_is_read_through_it(exchange, logins):
    eve, honest = logins["eve"], logins["honest"]
    solution = (SOLUTIONS / f"{NB}.ipynb").read_bytes()
    grader_copy = exchange.tmp / "course-copy.ipynb"  # a file of the grader side, on the exchange's disk
    grader_copy.write_bytes(solution)
    grader_copy.chmod(0o644)
    own = (RELEASE / f"{NB}.ipynb").read_bytes()
    folder = exchange.handin(eve, eve, _now(), {f"{NB}.ipynb": own})
    planted = {
        "01-embeddings.ipynb": lambda p: p.symlink_to(SOLUTIONS / "01-embeddings.ipynb"),
        "02-queries-keys-values.ipynb": lambda p: p.symlink_to("/dev/zero"),
        "03-softmax-attention.ipynb": lambda p: os.mkfifo(p),
        "05-saturation.ipynb": _socket,
        "06-equivariance.ipynb": lambda p: os.link(grader_copy, p),
        "07-masking.ipynb": lambda p: os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 5)),
        "extra/09-problem-20.ipynb": lambda p: p.symlink_to(SOLUTIONS / "09-problem-20.ipynb"),
    }
    for name, make in planted.items():
        (folder / name).parent.mkdir(exist_ok=True)
        make(folder / name)
        if name != "06-equivariance.ipynb":  # the hard link stays the grader side's file
            os.lchown(folder / name, _uid(eve), -1)
    os.lchown(folder / "extra", _uid(eve), -1)
    with open(folder / "08-cost.ipynb", "wb") as huge:  # over the 16 MiB cap per file (sparse: no disk used)
        huge.truncate(64 << 20)
    os.chown(folder / "08-cost.ipynb", _uid(eve), -1)
    exchange.handin(honest, honest, _now())

    log = exchange.collect()

    for entry in [*planted, "08-cost.ipynb"]:
        assert len(_lines_about(log, eve, entry)) == 1, (entry, log[-4000:])
    got = exchange.tree(eve)
    assert set(got) == {f"{NB}.ipynb", STAMP, "submission_secret.txt"}, sorted(got)
    assert got[f"{NB}.ipynb"] == own
    collected = b"".join(b for s in (eve, honest) for b in exchange.tree(s).values())
    assert solution not in collected and (SOLUTIONS / "01-embeddings.ipynb").read_bytes() not in collected
    assert exchange.tree(honest)[f"{NB}.ipynb"] == own
    assert not _lines_about(log, honest, "refused"), log[-3000:]
    assert len([line for line in exchange.refusals() if eve in line]) == len(planted) + 1, exchange.refusals()


def _socket(path: Path) -> None:
    """A socket file at ``path`` (bound under a short name in /tmp, the disk of pytest's folders, then moved)."""
    import tempfile

    short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(short))
    s.close()
    short.rename(path)
    short.parent.rmdir()


def test_a_folder_in_another_students_name_is_refused_and_the_victims_work_stays(exchange, logins):
    victim, eve, honest = logins["victim"], logins["eve"], logins["honest"]
    exchange.handin(victim, victim, _now() - timedelta(seconds=2))
    exchange.collect()
    before = exchange.tree(victim)
    forged = {f"{NB}.ipynb": b'{"forged": true}'}
    exchange.handin(eve, victim, datetime(2099, 1, 1), forged)  # later than anything: nbgrader would take it
    exchange.handin(eve, victim, _now(), forged)
    exchange.handin(honest, honest, _now())
    undated = exchange.inbound / f"{eve}+{ASSIGNMENT}+last tuesday"  # nbgrader's collect stopped for everyone
    undated.mkdir()
    os.chown(undated, _uid(eve), -1)

    log = exchange.collect("--update")

    assert exchange.tree(victim) == before
    refused = [line for line in log.splitlines() if f"made by {eve}, not by {victim}" in line]
    assert len(refused) == 2 and all("never collected" in line for line in refused), log[-3000:]
    assert exchange.tree(honest)
    assert len([line for line in log.splitlines() if eve in line and "is not a date and time" in line]) == 1, log
    assert sum(f"made by {eve}" in line for line in exchange.refusals()) == 2, exchange.refusals()


def test_a_handin_over_the_cap_is_refused_whole_and_the_earlier_one_stays(exchange, logins):
    eve = logins["eve"]
    exchange.handin(eve, eve, _now() - timedelta(seconds=3))
    exchange.collect()
    before = exchange.tree(eve)
    exchange.handin(eve, eve, _now(), {f"{n}.ipynb": secrets.token_bytes(60_000) for n in ("a", "b", "c")})

    log = exchange.collect("--update", "--CollectIntoSubmitted.max_handin_bytes=100000")

    assert exchange.tree(eve) == before
    assert len([line for line in log.splitlines() if eve in line and "100000 bytes per hand-in" in line]) == 1, log


def test_the_handin_time_is_the_one_the_grader_side_observed(exchange, logins):
    victim, eve, honest = logins["victim"], logins["eve"], logins["honest"]
    start = _now()
    back = _now() - timedelta(hours=2)
    folder = exchange.handin(eve, eve, back)  # a late hand-in back-dated by two hours: name, timestamp.txt, mtimes
    for path in [folder, *folder.iterdir()]:
        os.utime(path, (back.replace(tzinfo=timezone.utc).timestamp(),) * 2, follow_symlinks=False)
    exchange.handin(victim, victim, datetime(2099, 1, 1))  # a time in the future
    claimed = _now() - timedelta(seconds=5)
    exchange.handin(honest, honest, claimed)

    log = exchange.collect()

    from nbgrader.utils import parse_utc

    for student in (eve, victim):
        when = parse_utc((exchange.submitted(student) / STAMP).read_text())
        assert start - timedelta(seconds=1) <= when <= _now(), (student, when)
        staged = exchange.work / ".grading" / "submitted" / student / ASSIGNMENT / STAMP  # what the gradebook reads
        assert parse_utc(staged.read_text()) == when
    assert parse_utc((exchange.submitted(honest) / STAMP).read_text()) == claimed
    assert len([line for line in log.splitlines() if eve in line and "2 h 0 min before" in line]) == 1, log[-3000:]
    assert len([line for line in log.splitlines() if victim in line and "in the future" in line]) == 1, log[-3000:]
    assert not [line for line in log.splitlines() if honest in line and "refused" in line]


def test_the_feedback_secret_is_not_the_students_choice(exchange, logins):
    victim, eve, honest = logins["victim"], logins["eve"], logins["honest"]
    kept = secrets.token_hex(64)
    exchange.handin(victim, victim, _now(), secret=kept)
    exchange.collect()
    exchange.handin(eve, eve, _now(), secret=kept)  # another student's secret: her feedback would be his page
    exchange.handin(honest, honest, _now(), secret="chosen")

    log = exchange.collect()

    assert (exchange.submitted(victim) / "submission_secret.txt").read_text() == kept
    for student, why in ((eve, "another student's"), (honest, "not one nbgrader's submit writes")):
        made = (exchange.submitted(student) / "submission_secret.txt").read_text()
        assert made not in (kept, "chosen") and len(made) == 128, (student, made)
        assert len([line for line in log.splitlines() if student in line and why in line]) == 1, log[-3000:]


def test_make_grades_summary_lists_every_refusal_of_the_last_collect(exchange, logins):
    from autograder.pipeline.grading_run import _intake
    from autograder.reporting.run_summary import Summary
    from autograder.workspace import Workspace

    victim, eve = logins["victim"], logins["eve"]
    exchange.handin(victim, victim, _now())
    exchange.handin(eve, victim, _now() + timedelta(seconds=1), {f"{NB}.ipynb": b"{}"})
    (exchange.handin(eve, eve, _now()) / "link.ipynb").symlink_to(SOLUTIONS / f"{NB}.ipynb")
    exchange.collect()

    summary = Summary()
    _intake(None, summary, lambda line: None, Workspace(work=exchange.work, course=ROOT))
    text = "\n".join(summary.lines())
    assert len(summary.collect_refused) == 2, summary.collect_refused
    assert f"made by {eve}, not by {victim}" in text and "'link.ipynb': refused, it is a symbolic link" in text
