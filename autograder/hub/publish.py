"""``make publish HUB=/srv/selfattn-hub``: a change of the course, made once in the repository, onto a hub.

The repository is the course's one source. Publishing validates the course where it is
(``scripts/validate_exercises.py``: a failure changes nothing), copies its tracked files (and the
vendored assets) into the hub's course copy, keeping everything of the term there (what the
repository does not track: the gradebook, ``submitted/``, ``autograded/``, ``feedback/``,
``due-dates.csv``, the roster, the exports; the term's settings live outside the copy), removes the
files an earlier publish put there that the repository no longer has, regenerates the copy's
assignments as its grader account (``make release`` there: the gradebook learns a new exercise's
cells; a failure puts the copy's files back and stops, the students' environment as it was), then
replaces the students' environment's ``selfattn`` by a wheel built from the same files. Students
restart nothing: each kernel started afterwards (a Validate, a Restart Kernel) imports the new checks.

A release is named by :func:`wheel_id`, the digest of the files the students' wheel is built from;
the course copy records what was published (``autograder/release.json``), the students' environment
the release of its wheel (``.selfattn-release``); :func:`release_problem` says in one line when the two
differ, which every command run on the hub (:mod:`autograder.hub.on_hub`) and ``make hub`` print.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.errors import GradingError, command_line
from autograder.hub import environments, on_hub, prepare
from autograder.hub.layout import HubLayout
from autograder.outputs.atomic import write_bytes, write_text
from autograder.workspace import ROOT

#: what the students' ``selfattn`` wheel is built from (``scripts/build_student.py``), under a course root
WHEEL_SOURCES = ("selfattn/**/*.py", "scripts/student_package.py", "scripts/build_student.py", "pyproject.toml")
#: in the course copy: what the last publish put there
RECORD = Path("autograder") / "release.json"
#: files of the term a course copy keeps even if a repository tracked one of that name
TERM_FILES = ("autograder/roster.csv", "autograder/due-dates.csv", "autograder/course_id", "autograder/gradebook.db",
              "autograder/grades.csv", str(RECORD))


def wheel_id(root: Path) -> str:
    """The release of the course files at ``root`` as the students see it: a digest of
    :data:`WHEEL_SOURCES` (their paths and bytes)."""
    h = hashlib.sha256()
    files = sorted({p for pattern in WHEEL_SOURCES for p in root.glob(pattern) if p.is_file()})
    for path in files:
        h.update(f"{path.relative_to(root).as_posix()}\0{path.stat().st_size}\0".encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def env_release(layout: HubLayout) -> str | None:
    """The release of the students' environment's ``selfattn`` wheel, or ``None`` when unrecorded."""
    try:
        return (layout.student_env / environments.RELEASE).read_text().strip() or None
    except OSError:
        return None


def release_problem(layout: HubLayout, course: str) -> str | None:
    """One line when ``course``'s copy and the students' environment are not the same release (the
    checks a student's Validate runs differ from those the grader runs), else ``None``."""
    copy = layout.course(course)
    if not (copy / "selfattn").is_dir() or not layout.student_env.is_dir():
        return None
    ours, theirs = wheel_id(copy), env_release(layout)
    if theirs == ours:
        return None
    said = f"release {theirs}" if theirs else "no recorded release"
    return (f"{course}: the course copy is release {ours}, the students' environment {layout.student_env} has "
            f"{said}: a student's Validate may not run the grader's checks; make publish HUB={layout.state} "
            f"COURSE={course} makes them one")


def stale_releases(layout: HubLayout, course: str) -> list[str]:
    """The assignments of ``course`` whose notebooks in the exchange (what students fetch) are not the
    course copy's release in ``notebooks/`` (released before the last publish or ``make release``)."""
    outbound, release = layout.course_exchange(course) / "outbound", layout.course(course) / "notebooks"
    stale = []
    for handed in sorted(p for p in outbound.glob("*") if p.is_dir()) if outbound.is_dir() else []:
        ours = {p.name: p.read_bytes() for p in (release / handed.name).glob("*.ipynb")}
        theirs = {p.name: p.read_bytes() for p in handed.glob("*.ipynb")}
        if ours and ours != theirs:
            stale.append(handed.name)
    return stale


def stale_release_line(layout: HubLayout, course: str) -> str | None:
    """One line naming :func:`stale_releases` and the command that hands out the current notebooks."""
    stale = stale_releases(layout, course)
    if not stale:
        return None
    return (f"{course}: students fetch notebooks of an earlier release for {', '.join(stale)}; "
            f"make nbgrader HUB={layout.state} COURSE={course} ARGS='release_assignment ASSIGNMENT --force' "
            "hands out the current ones")


def _tracked(root: Path) -> list[str]:
    done = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, text=True)
    if done.returncode:
        raise GradingError(f"{root}: not a git checkout, so its course files cannot be listed "
                           f"({done.stderr.strip()})")
    return sorted(name for name in done.stdout.split("\0") if name and (root / name).is_file())


def build_wheel(root: Path, out: Path) -> Path:
    """The students' ``selfattn`` wheel built from the course files at ``root`` (its own
    ``scripts/build_student.py``, importing its own ``selfattn``)."""
    code = ("import sys, pathlib; sys.path.insert(0, sys.argv[1] + '/scripts'); import build_student; "
            "print(build_student.build_wheel(pathlib.Path(sys.argv[2])))")
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", code, str(root), str(out)], cwd=root, env=env,
                          capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise GradingError(f"the students' selfattn wheel could not be built from {root}: {last}; "
                           "nothing was published")
    return Path(done.stdout.strip().splitlines()[-1])


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
    names = _tracked(root)
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


def _commit(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def record_release(copy: Path, root: Path) -> None:
    """Record in the course copy ``copy`` that it holds the course files of ``root`` (:data:`RECORD`:
    the release, the commit, the files, which the next publish removes when the repository drops them)."""
    write_text(copy / RECORD, json.dumps({"release": wheel_id(root), "commit": _commit(root), "from": str(root),
                                         "published": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                         "files": _tracked(root)}, indent=1) + "\n")


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
        log(f"{course}: {len(former)} course files changed in {copy} ({root}, {_commit(root)}; the term's "
            "gradebook, submissions, feedback, due dates and roster kept)")
        status = on_hub.run(layout, course, ["python", "scripts/release.py"], say=lambda line: None)
        if status:
            undo(copy, former)
            raise GradingError(f"{course}: make release failed in {copy} as {layout.grader_user(course)} (above); "
                               "its course files are put back as they were and the students' environment still "
                               f"has release {env_release(layout)}: nothing was published")
        environments.install_wheel(layout.student_env, wheel, release)
    record_release(copy, root)
    prepare.own_course_copy(copy, layout.grader_user(course), layout.graders_group(course))
    log(f"{course}: the notebooks generated as {layout.grader_user(course)} (the gradebook knows every exercise); "
        f"the students' selfattn wheel is release {release} in {layout.student_env}")
    if environments.build(layout.grader_env, "grader", log=log):
        log("the graders' environment was rebuilt (its requirements changed)")
    want = environments.requirements_digest("student")
    stamp = layout.student_env / environments.REQUIREMENTS_STAMP
    if stamp.exists() and stamp.read_text() != want:
        log("the students' packages changed too: make hub-stop, then make hub, rebuilds their environment")
    log("students: nothing to restart; each kernel started from now on (Validate, Kernel > Restart) runs "
        "these checks. Formgrader uses the grader's new code after make hub-stop, make hub")
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
