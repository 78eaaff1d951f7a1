"""Which release of the course a hub's course copy, its students' package and its exchange hold.

A release is named by :func:`wheel_id`, the digest of the files the students' ``selfattn`` wheel is
built from. The course copy records what was published (:data:`RECORD`, ``autograder/release.json``:
the release, the commit, the files), the course's students' package the release of its wheel
(:data:`ENV_RECORD`);
:func:`release_problem` says in one line when the two differ, and :func:`stale_release_line` when
the exchange hands out notebooks the copy no longer releases. Every command run on the hub
(:mod:`autograder.hub.on_hub`), ``make hub`` and ``make publish`` (:mod:`autograder.hub.publish`) print them.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from pathlib import Path

from autograder.errors import GradingError
from autograder.hub.layout import HubLayout
from autograder.outputs.atomic import write_text

#: in a course's students' package: the release of its ``selfattn`` wheel
ENV_RECORD = ".selfattn-release"
#: what the students' ``selfattn`` wheel is built from (``scripts/build_student.py``), under a course root
WHEEL_SOURCES = ("selfattn/**/*.py", "scripts/student_package.py", "scripts/build_student.py", "pyproject.toml")
#: in the course copy: what the last publish put there
RECORD = Path("autograder") / "release.json"


def wheel_id(root: Path) -> str:
    """The release of the course files at ``root`` as the students see it: a digest of
    :data:`WHEEL_SOURCES` (their paths and bytes)."""
    h = hashlib.sha256()
    files = sorted({p for pattern in WHEEL_SOURCES for p in root.glob(pattern) if p.is_file()})
    for path in files:
        h.update(f"{path.relative_to(root).as_posix()}\0{path.stat().st_size}\0".encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def students_package(layout: HubLayout, course: str) -> Path:
    """Where ``course``'s students import ``selfattn`` from: its own package (``make hub`` builds it
    from the course copy when missing or not the copy's release, ``make publish`` from the repository);
    the students' environment holds no course code."""
    return layout.course_package(course)


def env_release(layout: HubLayout, course: str) -> str | None:
    """The release of the ``selfattn`` wheel ``course``'s students import (:func:`students_package`),
    or ``None`` when it has none (not installed yet)."""
    try:
        return (students_package(layout, course) / ENV_RECORD).read_text().strip() or None
    except OSError:
        return None


def release_problem(layout: HubLayout, course: str) -> str | None:
    """One line when ``course``'s copy and its students' package are not the same release (the
    checks a student's Validate runs differ from those the grader runs, or there are none), else ``None``."""
    copy, theirs_at = layout.course(course), students_package(layout, course)
    if not (copy / "selfattn").is_dir():
        return None
    ours, theirs = wheel_id(copy), env_release(layout, course)
    if theirs == ours:
        return None
    said = f"release {theirs}" if theirs else "no recorded release"
    return (f"{course}: the course copy is release {ours}, its students' package {theirs_at} has "
            f"{said}: a student's Validate may not run the grader's checks; make hub (from the copy) or "
            f"make publish HUB={layout.state} COURSE={course} (from the repository) makes them one")


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


def tracked(root: Path) -> list[str]:
    """The files git tracks in the checkout ``root`` (its course files), sorted."""
    done = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, text=True)
    if done.returncode:
        raise GradingError(f"{root}: not a git checkout, so its course files cannot be listed "
                           f"({done.stderr.strip()})")
    return sorted(name for name in done.stdout.split("\0") if name and (root / name).is_file())


def commit(root: Path) -> str:
    """The checkout's commit as ``git describe --always --dirty`` says it (``unknown`` without one)."""
    done = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def record_release(copy: Path, root: Path) -> None:
    """Record in the course copy ``copy`` that it holds the course files of ``root`` (:data:`RECORD`:
    the release, the commit, the files, which the next publish removes when the repository drops them)."""
    write_text(copy / RECORD, json.dumps({"release": wheel_id(root), "commit": commit(root), "from": str(root),
                                         "published": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                         "files": tracked(root)}, indent=1) + "\n")
