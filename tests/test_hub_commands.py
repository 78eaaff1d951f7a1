"""The guide's commands on a hub's course (``make grade HUB=STATE``) and ``make publish`` of a change.

A hub's state folder is made as ``make hub`` makes it, without starting JupyterHub: a hub id, the
accounts of a roster (random names of this test's own: a student, a second student and an
instructor, removed afterwards with the grader account and groups, as the hub's record names them),
the course copy and its settings, the class in the gradebook. The graders' environment is the hub
tests' (``$SELFATTN_HUB_TEST_ENVS``, built when missing), and so is the students' (its requirements
only, which publishing never changes); the course's students' package is built from its course copy,
as ``make hub`` builds it.

The first test runs the guide's commands from the repository with ``HUB=`` and checks that the work
lands in the course copy, made by the grader account, and nowhere in the repository; the
instructor puts one student's notebook in the copy by hand with umask 022 (a folder of her own), and
the grader account's ``make intake`` of the other student's zip and ``make grade`` still work there.
A hub or course that is not there is named in one line. The second test publishes a course whose
checks changed (a public check added to ``softmax``): before, a student's fresh Python in the
students' environment (what a new kernel, and so Validate, imports) does not know the check; after,
it passes, the copy and the environment record the same release, and the term's files stay. A
hand edit of the copy's checks is then named by the next command on the hub.
"""

from __future__ import annotations

import fcntl
import grp
import io
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from grading_support import ROOT, SOLUTIONS

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts, control, course_packages, environments, prepare, release
from autograder.hub.acl import shared_gid
from autograder.hub.layout import HubLayout, hub_students_group

ENVS = Path(os.environ.get("SELFATTN_HUB_TEST_ENVS", "/var/tmp/selfattn-hub-envs"))
#: the lock the hub tests hold while they use or build the shared environments
HUB_TEST_LOCK = "/tmp/selfattn-hub-test.lock"
NB = "04-scaling"
PROBE = "published-probe"
#: a public check added to softmax in the published course (the records module's own names)
PROBE_RECORD = f'\nSOFTMAX.check("{PROBE}", "a check published to the hub", lambda rng: [Case((rand(rng, 2, 3),))])\n'
#: a student's fresh Python (what a new kernel, and so Validate, imports) checking a right softmax
STUDENT_CHECK = (
    "import numpy as np\n"
    "from selfattn.checks.notebook import check\n"
    "def softmax(x, axis=-1):\n"
    "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
    "    return e / e.sum(axis=axis, keepdims=True)\n"
    f"check(softmax, 'softmax/{PROBE}')\n")


class Hub:
    """A hub's state folder as ``make hub`` makes it (no JupyterHub), and its people."""

    def __init__(self, layout: HubLayout, student: str, second: str, instructor: str):
        self.layout, self.student, self.second, self.instructor = layout, student, second, instructor

    @property
    def copy(self) -> Path:
        return self.layout.course(COURSE_ID)

    @property
    def work(self) -> Path:
        return self.copy / "autograder"

    @property
    def grader_uid(self) -> int:
        return pwd.getpwnam(self.layout.grader_user(COURSE_ID)).pw_uid

    def make(self, target: str, *assignments: str) -> subprocess.CompletedProcess:
        """``make TARGET HUB=STATE ...`` in the repository, as the instructor (root) types it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SELFATTN_HUB_", "AUTOGRADER_"))}
        return subprocess.run(["make", "--no-print-directory", target, f"HUB={self.layout.state}", *assignments],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)

    def ok(self, target: str, *assignments: str) -> str:
        done = self.make(target, *assignments)
        assert done.returncode == 0, f"make {target}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done.stdout + done.stderr

    def as_user(self, login: str, script: str, *argv: str, umask: str = "022") -> subprocess.CompletedProcess:
        """``script`` (sh) run as ``login`` with ``umask``, in its home."""
        return subprocess.run(["runuser", "-u", login, "--", "sh", "-c", f"umask {umask} && {script}", "sh", *argv],
                              capture_output=True, text=True, cwd=pwd.getpwnam(login).pw_dir, timeout=600)


def _shared_environments() -> None:
    """The hub tests' two environments, built (under the hub tests' lock) when missing or stale."""
    stamps = [(ENVS / kind / environments.STAMP) for kind in ("student", "grader")]
    if all(p.exists() and p.read_text() == environments.digest(p.parent.name) for p in stamps):
        return
    with open(HUB_TEST_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            control.build_environments(HubLayout(state=ENVS, envs=ENVS), log=lambda line: None)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def hub() -> Iterator[Hub]:
    if os.geteuid() != 0:
        pytest.fail("this test must run as root (it makes system accounts, as make hub does)")
    _shared_environments()
    state = Path(tempfile.mkdtemp(prefix="selfattn-hubcmd-", dir="/var/tmp"))
    state.chmod(0o755)
    layout = HubLayout(state=state, envs=state / "envs")
    try:
        layout.envs.mkdir()
        layout.grader_env.symlink_to(ENVS / "grader")
        layout.student_env.symlink_to(ENVS / "student")
        layout.ensure_hub_id()
        tag = secrets.token_hex(3)
        student, second, instructor = f"sxa{tag}", f"sxb{tag}", f"sxi{tag}"
        layout.rosters.mkdir(parents=True)
        layout.roster(COURSE_ID).write_text(
            "id,first_name,last_name,email,role\n"
            f"{student},Ada,Sx,ada@example.edu,student\n{second},Ben,Sx,ben@example.edu,student\n"
            f"{instructor},Ivy,Sx,,instructor\n")
        members = accounts.read_roster(layout.roster(COURSE_ID))
        assert accounts.ensure_accounts(layout, COURSE_ID, members, log=pytest.fail) == []
        prepare.prepare(layout, log=lambda line: None)
        course_packages.ensure(layout, log=lambda line: None)
        prepare.import_class(layout, log=lambda line: None)
        yield Hub(layout, student, second, instructor)
    finally:
        if layout.records.exists():  # what this hub's record says it made, and nothing else
            accounts.remove_accounts(layout, log=lambda line: None)
        shutil.rmtree(state, ignore_errors=True)


def _owners(top: Path) -> set[str]:
    return {pwd.getpwuid(p.lstat().st_uid).pw_name for p in [top, *top.rglob("*")]}


def _repository_outputs() -> dict[str, float]:
    """The modification times of what the guide's commands write in the repository's work folder."""
    names = ("grades.csv", "gradebook.db", "due-dates.csv", "feedback", "exports", "report", "submitted")
    return {n: (ROOT / "autograder" / n).stat().st_mtime for n in names if (ROOT / "autograder" / n).exists()}


def _zip_of(login: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{login}/attention/{NB}.ipynb", (SOLUTIONS / f"{NB}.ipynb").read_text())
    return out.getvalue()


def test_the_guides_commands_work_on_the_hubs_course_as_its_grader_account(hub: Hub, tmp_path):
    before = _repository_outputs()
    grader = hub.layout.grader_user(COURSE_ID)
    hub.ok("release")
    assert hub.work.joinpath("gradebook.db").stat().st_uid == hub.grader_uid

    # the instructor hands one student's notebook in by hand, in a shell whose umask is 022: the
    # folders she makes are the graders' group's to write (setgid and the copy's default ACL)
    placed = hub.work / "submitted" / hub.student / "attention"
    made = hub.as_user(hub.instructor, 'mkdir -p "$1" && cat "$2" > "$1/$3"', str(placed),
                       str(SOLUTIONS / f"{NB}.ipynb"), f"{NB}.ipynb")
    assert made.returncode == 0, made.stderr
    assert _owners(hub.work / "submitted") == {hub.instructor}
    assert shared_gid(hub.work / "submitted") == grp.getgrnam(hub.layout.graders_group(COURSE_ID)).gr_gid

    # the other student's zip, from a folder the grader account cannot read (root's, 0700)
    zips = tmp_path / "downloads"
    zips.mkdir(mode=0o700)
    (zips / f"{hub.second}.zip").write_bytes(_zip_of(hub.second))
    said = hub.ok("intake", f"ZIPS={zips}")
    assert (hub.work / "submitted" / hub.second / "attention" / f"{NB}.ipynb").is_file(), said
    assert not list((hub.work / ".incoming").glob("*")), "the staged zips were left in the course copy"

    hub.ok("nbgrader", "ARGS=release_assignment attention")
    assert (hub.layout.course_exchange(COURSE_ID) / "outbound" / "attention" / f"{NB}.ipynb").is_file()
    hub.ok("collect")  # from the hub's exchange, as the grader account (no hand-in there: nothing to take)
    hub.ok("due-date", "ASSIGNMENT=attention", "UNTIL=2030-01-01 12:00 UTC")
    hub.ok("grade")
    grades = (hub.work / "grades.csv").read_text()
    assert hub.student in grades and hub.second in grades, grades
    hub.ok("extension", f"STUDENT={hub.second}", "ASSIGNMENT=attention", "UNTIL=2030-01-03 12:00 UTC")
    assert hub.second in (hub.work / "due-dates.csv").read_text()
    hub.ok("grades-final")
    hub.ok("report")
    assert (hub.work / "report" / "index.html").is_file() and (hub.work / "exports" / "canvas.csv").is_file()
    listed = hub.ok("nbgrader", "ARGS=db student list")
    assert hub.student in listed and "Ada" in listed, listed
    for made_here in ("feedback", "autograded", "exports", "report", ".grading"):
        assert _owners(hub.work / made_here) == {grader}, made_here
    assert _repository_outputs() == before, "a command with HUB= wrote in the repository's work folder"


def test_a_missing_hub_or_course_is_named_in_one_line(hub: Hub, tmp_path):
    nowhere = tmp_path / "no-hub"
    missing = subprocess.run(["make", "--no-print-directory", "grade", f"HUB={nowhere}"], cwd=ROOT,
                             capture_output=True, text=True)
    lines = [ln for ln in missing.stderr.splitlines() if not ln.startswith("make")]
    assert missing.returncode != 0 and lines == [f"HUB={nowhere}: no course hub there (no {nowhere}/hub/id; "
                                                 "make hub makes it at its first start)"], missing.stderr
    other = hub.make("grade", "COURSE=nope")
    lines = [ln for ln in other.stderr.splitlines() if not ln.startswith("make")]
    assert other.returncode != 0 and len(lines) == 1 and "COURSE=nope" in lines[0], other.stderr


def _source_course(dest: Path) -> Path:
    """A repository of the course (the checkout's tracked files as they are now, the vendored assets)."""
    for name in subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True,
                               check=True).stdout.split("\0"):
        if name and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "_assets" / "vendor", dest / "_assets" / "vendor")
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    return dest


def test_publish_gives_the_students_and_the_grader_one_release(hub: Hub, tmp_path):
    hub.ok("release")  # the assignment handed out as the guide says (the first test did too)
    hub.ok("nbgrader", "ARGS=release_assignment attention --force")
    source = _source_course(tmp_path / "course")
    records = source / "selfattn" / "checks" / "exercises.py"
    records.write_text(records.read_text() + PROBE_RECORD)
    dropped = "reference/glossary.md"  # a file the repository no longer has leaves the copy too
    (source / dropped).unlink()
    subprocess.run(["git", "-C", str(source), "add", "-A"], check=True)
    assert (hub.copy / dropped).is_file()
    roster = (hub.work / "roster.csv").read_bytes()
    submitted = {p: p.read_bytes() for p in (hub.work / "submitted").rglob("*") if p.is_file()} \
        if (hub.work / "submitted").exists() else {}

    copied = hub.copy / "selfattn" / "checks" / "exercises.py"
    before = copied.read_bytes()

    def student_checks() -> subprocess.CompletedProcess:  # with the PYTHONPATH the hub gives her server
        path = hub.layout.students_pythonpath({hub_students_group(COURSE_ID)})
        return hub.as_user(hub.student, 'PYTHONPATH="$3" "$1" -c "$2"', str(hub.layout.student_env / "bin" / "python"),
                           STUDENT_CHECK, path)

    def published() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "autograder.hub.publish", "--hub", str(hub.layout.state),
                               "--source", str(source)], cwd=ROOT, capture_output=True, text=True, timeout=1800)

    unknown = student_checks()
    assert unknown.returncode != 0 and "unknown check" in unknown.stderr, unknown.stderr[-2000:]
    # the notebooks are not yet in step with the new check (sync_notebooks.py not run): nothing goes out
    refused = published()
    assert refused.returncode != 0 and "nothing was published" in refused.stderr, refused.stderr[-2000:]
    assert copied.read_bytes() == before and "unknown check" in student_checks().stderr

    subprocess.run([sys.executable, "scripts/sync_notebooks.py"], cwd=source, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(source)})
    done = published()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    published_id = release.wheel_id(source)
    assert f"release {published_id}" in done.stdout and "nothing to restart" in done.stdout, done.stdout

    # a student's fresh Python (a new kernel, as Validate starts) knows and passes the published check
    known = student_checks()
    assert known.returncode == 0 and "✓ softmax: a check published to the hub" in known.stdout, known.stderr[-2000:]
    assert PROBE in (hub.copy / "selfattn" / "checks" / "exercises.py").read_text()
    assert not (hub.copy / dropped).exists()
    assert json.loads((hub.copy / release.RECORD).read_text())["release"] == published_id
    assert (hub.layout.course_package(COURSE_ID) / release.ENV_RECORD).read_text().strip() == published_id
    # the term stays: the class roster and every submission, byte for byte; the gradebook's class
    assert (hub.work / "roster.csv").read_bytes() == roster
    assert {p: p.read_bytes() for p in submitted} == submitted
    assert _owners(hub.copy / "selfattn") == {hub.layout.grader_user(COURSE_ID)}
    # the exchange still hands out the notebooks released before (by the first test): said, then released
    assert "students fetch notebooks of an earlier release for attention" in done.stdout, done.stdout
    listed = hub.ok("nbgrader", "ARGS=release_assignment attention --force")
    assert "students fetch notebooks of an earlier release" in listed, listed
    listed = hub.ok("nbgrader", "ARGS=db student list")
    assert hub.student in listed and "warning" not in listed, listed

    # a check edited in the copy by hand is no longer the students' release: the next command says so
    text = copied.read_text()
    copied.write_text(text + "# edited in the copy\n")
    try:
        warned = hub.ok("nbgrader", "ARGS=db student list")
        assert f"its students' package {hub.layout.course_package(COURSE_ID)} has release {published_id}" \
            in warned, warned
    finally:
        copied.write_text(text)
