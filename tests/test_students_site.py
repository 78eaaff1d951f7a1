"""The students' ``sitecustomize`` on the hub: a student of two courses imports, in a Python started in
``~/ID/...``, course ID's ``selfattn`` (and anywhere else her first course's), and no table, path or
folder it meets stops a Python from starting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from autograder.hub import course_packages
from autograder.hub.students_site import sitecustomize as site

COURSE = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
HOME = "/home/ana"


def _table(courses: list[str]) -> str:
    return os.pathsep.join(f"{c}=/state/packages/{c}" for c in courses)


@given(st.lists(COURSE, min_size=1, max_size=4, unique=True), st.data())
def test_a_python_started_in_a_course_folder_imports_that_courses_package_first(courses, data):
    course = data.draw(st.sampled_from(courses))
    below = data.draw(st.lists(st.from_regex(r"[A-Za-z0-9_.-]{1,8}", fullmatch=True), max_size=3))
    here = "/".join([HOME, course, *below])
    path = ["", "/srv/site", "/state/packages/" + courses[0], "/usr/lib/python3.11", "/env/site-packages"]
    site.choose(path, _table(courses), here, HOME)
    package = f"/state/packages/{course}"
    assert path.count(package) == 1, path
    assert path.index(package) <= path.index(f"/state/packages/{courses[0]}"), path
    assert path[:2] == ["", "/srv/site"], "what comes before the course's package stays where it was"


@given(st.lists(COURSE, min_size=1, max_size=4, unique=True),
       st.sampled_from(["/home/ana", "/home/ana/notes", "/home/anabel/c", "/tmp/c", "/", "/home"]))
def test_anywhere_else_the_path_is_left_as_it_is(courses, here):
    """Outside ``~/ID/`` of a course in the table (the home itself, another folder, another user's home
    whose name begins the same) nothing changes: her first course's package, on PYTHONPATH, stays."""
    path = ["", "/srv/site", "/state/packages/" + courses[0], "/env/site-packages"]
    before = list(path)
    site.choose(path, _table(courses), here.replace("/c", f"/{courses[-1]}"), HOME)
    assert path == before


@given(st.text(max_size=60), st.text(max_size=40), st.text(max_size=20))
def test_any_table_or_folder_leaves_a_python_able_to_start(table, here, home):
    path = ["", "/env/site-packages"]
    site.choose(path, table, here, home)
    assert all(isinstance(p, str) for p in path) and path[-1] == "/env/site-packages"


def test_a_real_python_of_two_courses_imports_the_package_of_the_folder_it_starts_in(tmp_path):
    """The file ``make hub`` installs, run by Python itself at start (``PYTHONPATH`` and the table as the
    hub gives a student's server): in ``~/second/attention`` ``selfattn`` is the second course's, in
    ``~`` and ``~/first/attention`` the first's. A broken table starts Python all the same."""
    from autograder.hub.layout import HubLayout

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs", port=1)
    course_packages.install_site(layout)
    installed = layout.students_site / "sitecustomize.py"
    assert installed.read_bytes() == course_packages.SITE.read_bytes() and installed.stat().st_mode & 0o777 == 0o644
    home = tmp_path / "home"
    for course in ("first", "second"):
        (layout.course_package(course) / "selfattn").mkdir(parents=True)
        (layout.course_package(course) / "selfattn" / "__init__.py").write_text(f"COURSE = {course!r}\n")
        (home / course / "attention").mkdir(parents=True)
    table = f"first={layout.course_package('first')}{os.pathsep}second={layout.course_package('second')}"

    def course_of(where: Path, table: str = table) -> subprocess.CompletedProcess:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "SELFATTN_COURSE_PACKAGES": table,
               "PYTHONPATH": f"{layout.students_site}{os.pathsep}{layout.course_package('first')}"}
        return subprocess.run([sys.executable, "-c", "import selfattn; print(selfattn.COURSE)"], cwd=where,
                              env=env, capture_output=True, text=True, timeout=60)

    assert course_of(home / "second" / "attention").stdout.strip() == "second"
    assert course_of(home).stdout.strip() == "first"
    assert course_of(home / "first" / "attention").stdout.strip() == "first"
    broken = course_of(home / "second", table="=:==::second=:first")
    assert broken.returncode == 0 and broken.stdout.strip() == "first", broken.stderr
