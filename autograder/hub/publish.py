"""``make publish HUB=/srv/selfattn-hub``: a change of the course, made once in the repository, onto a hub.

The repository is the course's one source. Publishing validates the course where it is
(``scripts/validate_exercises.py``: a failure changes nothing), copies its tracked files (and the
vendored assets) into the hub's course copy, keeping everything of the term there (what the
repository does not track: the gradebook, ``submitted/``, ``autograded/``, ``feedback/``,
``due-dates.csv``, the roster, the exports; the term's settings live outside the copy), removes the
files an earlier publish put there that the repository no longer has, regenerates the copy's
assignments as its grader account (``make release`` there: the gradebook learns a new exercise's
cells; a failure puts the copy's files back and stops, the students' package as it was), then
installs a ``selfattn`` wheel built from the same files as this course's students' package
(``STATE/packages/ID``, first on the ``PYTHONPATH`` of its students' servers, so the hub's other
courses keep theirs; the students' environment itself is unchanged). Students
restart nothing: each kernel started afterwards (a Validate, a Restart Kernel) imports the new checks.
Last, the course's formgrader is restarted on the grader's new code, the hub left running
(:mod:`autograder.hub.formgrader_restart`).

What names a release, and what records it in the copy and in the course's students' package:
:mod:`autograder.hub.release`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.errors import GradingError, command_line
from autograder.hub import environments, formgrader_restart, on_hub, prepare
from autograder.hub.course_packages import build_wheel
from autograder.hub.layout import HubLayout
from autograder.hub.release import (
    RECORD,
    commit,
    env_release,
    record_release,
    release_problem,
    stale_release_line,
    tracked,
    wheel_id,
)
from autograder.outputs.atomic import write_bytes
from autograder.workspace import ROOT

#: files of the term a course copy keeps even if a repository tracked one of that name
TERM_FILES = ("autograder/roster.csv", "autograder/due-dates.csv", "autograder/course_id", "autograder/gradebook.db",
              "autograder/grades.csv", str(RECORD))


#: a file's bytes and mode (``None``: no such file)
Former = tuple[bytes, int] | None


def _read(path: Path) -> Former:
    return (path.read_bytes(), path.stat().st_mode & 0o777) if path.is_file() and not path.is_symlink() else None


def _replace(dest: Path, former: Former) -> None:
    """``dest`` replaced whole by those bytes with that mode (a reader meanwhile reads the old or the
    new file), or removed."""
    if former is None:
        dest.unlink(missing_ok=True)
        return
    write_bytes(dest, former[0])
    dest.chmod(former[1])


def copy_files(root: Path, copy: Path) -> dict[str, Former]:
    """Copy the tracked files of ``root`` (and :data:`prepare.GENERATED`) into the course copy ``copy``,
    each replaced whole and only when its bytes or mode changed; remove the files the last publish put
    there that ``root`` no longer tracks. :data:`TERM_FILES` and anything ``root`` does not track stay.
    Returns what it changed: each file as it was (``None``: it was not there), for :func:`undo`."""
    names = tracked(root)
    former: dict[str, Former] = {}
    for name in names:
        src, dest = root / name, copy / name
        if name in TERM_FILES and dest.exists():
            continue
        new, old = _read(src), _read(dest)
        if old is not None and new is not None and old[0] == new[0] and old[1] & 0o111 == new[1] & 0o111:
            continue
        former[name] = old
        _replace(dest, new)
    try:
        before = json.loads((copy / RECORD).read_text()).get("files", [])
    except (OSError, ValueError):
        before = []
    for name in sorted(set(before) - set(names) - set(TERM_FILES)):
        if (copy / name).is_file():
            former[name] = _read(copy / name)
            (copy / name).unlink()
    for name in prepare.GENERATED:
        if not (root / name).exists():
            raise GradingError(f"{root / name} is missing: run `make setup` first")
        shutil.copytree(root / name, copy / name, dirs_exist_ok=True)
    return former


def undo(copy: Path, former: dict[str, Former]) -> None:
    """Put back the files :func:`copy_files` changed in ``copy`` as they were."""
    for name, was in former.items():
        _replace(copy / name, was)


def validate(root: Path) -> None:
    """``scripts/validate_exercises.py`` of the course at ``root`` (every exercise complete, the
    notebooks in step with the checks), before anything is published; ``GradingError`` naming the
    first problem."""
    done = subprocess.run([sys.executable, "scripts/validate_exercises.py"], cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True)
    if done.returncode:
        said = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()] or ["no output"]
        raise GradingError(f"{root}: the course is not ready to publish ({said[0]}"
                           f"{f'; {len(said) - 1} more lines' if len(said) > 1 else ''}); nothing was published")


def publish(layout: HubLayout, course: str, root: Path = ROOT, log=print) -> str:
    """Publish the course at ``root`` to ``course`` on the hub ``layout`` (see the module docstring);
    returns the release. ``GradingError`` in one line when a step fails (nothing after it is done)."""
    copy = layout.course(course)
    release = wheel_id(root)
    validate(root)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(root, Path(tmp))
        former = copy_files(root, copy)
        prepare.own_course_copy(copy, layout.grader_user(course), layout.graders_group(course))
        log(f"{course}: {len(former)} course files changed in {copy} ({root}, {commit(root)}; the term's "
            "gradebook, submissions, feedback, due dates and roster kept)")
        status = on_hub.run(layout, course, ["python", "scripts/release.py"], say=lambda line: None)
        if status:
            undo(copy, former)
            raise GradingError(f"{course}: make release failed in {copy} as {layout.grader_user(course)} (above); "
                               "its course files are put back as they were and its students' package still "
                               f"has release {env_release(layout, course)}: nothing was published")
        environments.install_package(layout.student_env, layout.course_package(course), wheel, release)
    record_release(copy, root)
    prepare.own_course_copy(copy, layout.grader_user(course), layout.graders_group(course))
    log(f"{course}: the notebooks generated as {layout.grader_user(course)} (the gradebook knows every exercise); "
        f"the students' selfattn wheel is release {release} in {layout.course_package(course)}, for this course's "
        "students only (the hub's other courses keep theirs)")
    if environments.build(layout.grader_env, "grader", log=log):
        log("the graders' environment was rebuilt (its requirements changed)")
    want = environments.requirements_digest("student")
    stamp = layout.student_env / environments.REQUIREMENTS_STAMP
    if stamp.exists() and stamp.read_text() != want:
        log("the students' packages changed too: make hub-stop, then make hub, rebuilds their environment")
    log("students: nothing to restart; each kernel started from now on (Validate, Kernel > Restart) runs "
        "these checks")
    formgrader_restart.restart(layout, course, log=log)
    if line := stale_release_line(layout, course):
        log(line)
    for other in layout.courses():
        if other != course and (problem := release_problem(layout, other)):
            log(problem)
    return release


@command_line
def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="publish the repository's course to a hub's course copy and the "
                                            "students' environment")
    p.add_argument("--hub", required=True, help="the hub's state folder (make hub's SELFATTN_HUB_STATE)")
    p.add_argument("--course", default=None, help="the course id (default: this course when the hub serves it, "
                                                  "else its first)")
    p.add_argument("--source", type=Path, default=ROOT,
                   help="the course's repository to publish (default: this checkout)")
    a = p.parse_args(argv)
    if os.geteuid() != 0:
        raise GradingError("make publish must run as root (it writes the hub's course copy and environments)")
    layout, course = on_hub.hub_course(a.hub, a.course or None)
    publish(layout, course, root=a.source.resolve())


if __name__ == "__main__":
    main()
