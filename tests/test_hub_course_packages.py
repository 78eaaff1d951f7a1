"""Each course of a hub has its own students' package; ``make publish`` of one course changes the
checks of that course's students only and rebuilds nothing every course shares.

A hub's state folder with two courses is made as ``make hub`` makes it, without starting JupyterHub
(this course and ``pkg-second``, a student each, random names, removed afterwards with the grader
accounts and groups, as the hub's record names them), in the hub tests' environments, each course
given its students' package from its course copy as ``make hub`` gives it. A course
whose checks changed (a public check added to ``softmax``) is published to this course: a fresh
Python of its student, with the ``PYTHONPATH`` the hub gives her server (and so her kernels and
Validate), passes the new check; the second course's student's does not know it, the second
course's copy and its students agree on their release as before, and the students' environment
every course shares is byte for byte what it was; ``make hub``'s build steps afterwards rebuild
neither that environment (its stamp and mtime unchanged) nor the second course's package. The
folder holding one course's students' package is measured (the disk one more course costs).
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from grading_support import ROOT
from test_hub_commands import ENVS, PROBE, PROBE_RECORD, STUDENT_CHECK, _shared_environments, _source_course

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts, control, course_packages, environments, prepare, release
from autograder.hub.layout import HubLayout, hub_students_group

SECOND = "pkg-second"
#: what one course's own students' package may take (the wheel of selfattn, byte-compiled)
PACKAGE_MIB_AT_MOST = 16


@pytest.fixture(scope="module")
def hub() -> Iterator[tuple[HubLayout, dict[str, str], list[str]]]:
    if os.geteuid() != 0:
        pytest.fail("this test must run as root (it makes system accounts, as make hub does)")
    _shared_environments()
    state = Path(tempfile.mkdtemp(prefix="selfattn-hubpkg-", dir="/var/tmp"))
    state.chmod(0o755)
    layout = HubLayout(state=state, envs=ENVS)
    tag = secrets.token_hex(3)
    students = {COURSE_ID: f"spa{tag}", SECOND: f"spb{tag}"}
    try:
        layout.ensure_hub_id()
        layout.rosters.mkdir(parents=True)
        for course, login in students.items():
            layout.roster(course).write_text(f"id,first_name,last_name,email,role\n{login},A,Pk,,student\n")
            members = accounts.read_roster(layout.roster(course))
            assert accounts.ensure_accounts(layout, course, members, log=pytest.fail) == []
        prepare.prepare(layout, log=lambda line: None)
        said: list[str] = []
        course_packages.ensure(layout, log=said.append)  # as make hub does after building the environments
        yield layout, students, said
    finally:
        if layout.records.exists():
            accounts.remove_accounts(layout, log=lambda line: None)
        shutil.rmtree(state, ignore_errors=True)


def _checks(layout: HubLayout, course: str, login: str) -> subprocess.CompletedProcess:
    """``login``'s fresh Python (a new kernel, as Validate starts) with the PYTHONPATH the hub gives the
    server of a student of ``course``, checking a right softmax with the published check."""
    path = layout.students_pythonpath({hub_students_group(course)})
    return subprocess.run(["runuser", "-u", login, "--", "env", f"PYTHONPATH={path}",
                           str(layout.student_env / "bin" / "python"), "-c", STUDENT_CHECK],
                          capture_output=True, text=True, cwd="/", timeout=600)


def test_a_student_of_two_courses_gets_the_package_of_the_course_folder_her_python_starts_in(hub):
    """A student in both courses' groups, with the environment the hub gives her server
    (``PYTHONPATH`` and ``SELFATTN_COURSE_PACKAGES`` as ``jupyterhub_config.py`` sets them): a Python started in
    ``~/SECOND/attention`` (a kernel of a notebook nbgrader fetched for that course, Validate's kernel)
    imports the second course's ``selfattn``; in ``~/COURSE/attention`` and in her home, her first course's."""
    layout, students, _ = hub
    login = students[COURSE_ID]
    groups = {hub_students_group(COURSE_ID), hub_students_group(SECOND)}
    home = Path(pwd.getpwnam(login).pw_dir)
    for course in (COURSE_ID, SECOND):
        subprocess.run(["runuser", "-u", login, "--", "mkdir", "-p", str(home / course / "attention")], check=True)
    env = [f"PYTHONPATH={layout.students_pythonpath(groups)}",
           f"SELFATTN_COURSE_PACKAGES={layout.students_courses(groups)}", f"HOME={home}"]
    for where, course in ((home / SECOND / "attention", SECOND), (home / COURSE_ID / "attention", COURSE_ID),
                          (home, COURSE_ID)):
        done = subprocess.run(["runuser", "-u", login, "--", "env", *env, str(layout.student_env / "bin" / "python"),
                               "-c", "import selfattn; print(selfattn.__file__)"],
                              capture_output=True, text=True, cwd=where, timeout=300)
        assert done.returncode == 0 and done.stdout.startswith(f"{layout.course_package(course)}/"), \
            (where, done.stdout, done.stderr[-2000:])


def _tree(top: Path) -> dict[str, bytes]:
    return {str(p.relative_to(top)): p.read_bytes() for p in top.rglob("*") if p.is_file()}


def test_make_hub_gives_each_course_its_own_package_from_its_copy(hub):
    layout, students, said = hub
    for course in students:
        copy, package = layout.course(course), layout.course_package(course)
        assert (package / release.ENV_RECORD).read_text().strip() == release.wheel_id(copy), course
        assert sum(f"{course}: its students' selfattn is release" in line for line in said) == 1, said
        assert list(package.glob("selfattn/**/*.py")), course
    assert not list(layout.student_env.glob("lib/python3*/site-packages/selfattn")), \
        "the students' environment every course shares holds course code"
    assert course_packages.ensure(layout, log=pytest.fail) == [], "a current package was built again"


def test_publishing_one_course_changes_no_other_courses_checks(hub, tmp_path):
    layout, students, _ = hub
    for course, login in students.items():
        unknown = _checks(layout, course, login)
        assert unknown.returncode != 0 and "unknown check" in unknown.stderr, (course, unknown.stderr[-2000:])
    assert release.release_problem(layout, SECOND) is None
    shared = layout.student_env / "lib"
    before = _tree(shared)
    stamp = layout.student_env / environments.STAMP
    stamped = (stamp.read_text(), stamp.stat().st_mtime_ns, layout.student_env.stat().st_mtime_ns)
    second_release = release.env_release(layout, SECOND)

    source = _source_course(tmp_path / "course")
    records = source / "selfattn" / "checks" / "exercises.py"
    records.write_text(records.read_text() + PROBE_RECORD)
    subprocess.run([sys.executable, "scripts/sync_notebooks.py"], cwd=source, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(source)})
    subprocess.run(["git", "-C", str(source), "add", "-A"], check=True)
    done = subprocess.run([sys.executable, "-m", "autograder.hub.publish", "--hub", str(layout.state),
                           "--course", COURSE_ID, "--source", str(source)], capture_output=True, text=True,
                          timeout=1800, cwd=ROOT, env={**os.environ, "SELFATTN_HUB_ENVS": str(layout.envs)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "for this course's students only" in done.stdout, done.stdout

    known = _checks(layout, COURSE_ID, students[COURSE_ID])
    assert known.returncode == 0 and "✓ softmax: a check published to the hub" in known.stdout, \
        known.stdout[-2000:] + known.stderr[-2000:]
    other = _checks(layout, SECOND, students[SECOND])
    assert other.returncode != 0 and "unknown check" in other.stderr, other.stdout[-2000:] + other.stderr[-2000:]
    assert PROBE not in (layout.course(SECOND) / "selfattn" / "checks" / "exercises.py").read_text()
    assert release.release_problem(layout, SECOND) is None and release.release_problem(layout, COURSE_ID) is None
    assert _tree(shared) == before, "publishing one course changed the students' environment all courses share"

    # make hub afterwards (its build steps): nothing is rebuilt, the second course keeps its release
    control.build_environments(layout, log=pytest.fail)
    assert course_packages.ensure(layout, log=pytest.fail) == []
    assert (stamp.read_text(), stamp.stat().st_mtime_ns, layout.student_env.stat().st_mtime_ns) == stamped, \
        "make hub rebuilt the students' environment after a publish"
    assert release.env_release(layout, SECOND) == second_release

    package = layout.course_package(COURSE_ID)
    size = sum(p.stat().st_size for p in package.rglob("*") if p.is_file())
    assert 0 < size < PACKAGE_MIB_AT_MOST << 20, size
    print(f"\none course's students' package: {size / 2**20:.1f} MiB in {package}")
