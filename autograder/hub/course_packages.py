"""Each course's students' ``selfattn`` package, built from its course copy when ``make hub`` starts.

The students' environment holds no course code: a course's students import ``selfattn`` from
``STATE/packages/ID`` (first on their servers' ``PYTHONPATH``). ``make publish`` installs it from the
repository; :func:`ensure` installs it from the course copy for every course whose package is missing
or is not the copy's release (:func:`autograder.hub.release.wheel_id`), so the students of a course
never published import their own course's checks from the first start on. A course whose wheel
cannot be built is named in one line and costs the other courses nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from autograder.errors import GradingError
from autograder.hub import environments
from autograder.hub.layout import HubLayout
from autograder.hub.release import env_release, wheel_id
from autograder.outputs import atomic


def build_wheel(root: Path, out: Path) -> Path:
    """The students' ``selfattn`` wheel built from the course files at ``root`` (its own
    ``scripts/build_student.py``, importing its own ``selfattn``)."""
    code = ("import sys, pathlib; sys.path.insert(0, sys.argv[1] + '/scripts'); import build_student; "
            "print(build_student.build_wheel(pathlib.Path(sys.argv[2])))")
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}  # nothing left in a course copy
    done = subprocess.run([sys.executable, "-c", code, str(root), str(out)], cwd=root, env=env,
                          capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise GradingError(f"the students' selfattn wheel could not be built from {root}: {last}; "
                           "nothing was published")
    return Path(done.stdout.strip().splitlines()[-1])


#: the students' sitecustomize (which course's package a Python started in ``~/ID/`` imports)
SITE = Path(__file__).with_name("students_site") / "sitecustomize.py"


def install_site(layout: HubLayout) -> None:
    """Copy the students' ``sitecustomize.py`` into :attr:`HubLayout.students_site` (root's, 0755 and
    0644: read by every student's Python, written by nobody else), when it is not there as it is here."""
    target = layout.students_site / SITE.name
    layout.students_site.mkdir(parents=True, exist_ok=True)
    layout.students_site.chmod(0o755)
    if not target.exists() or target.read_bytes() != SITE.read_bytes():
        atomic.write_bytes(target, SITE.read_bytes())
    target.chmod(0o644)


def ensure(layout: HubLayout, log: Callable[[str], object] = print) -> list[str]:
    """Install the students' ``sitecustomize`` (:func:`install_site`) and, for every course of ``layout``
    whose students' package is missing or not its copy's release, a ``selfattn`` wheel built from that
    course copy (one line each); returns those courses."""
    install_site(layout)
    installed = []
    for course in layout.courses():
        copy = layout.course(course)
        if not (copy / "selfattn").is_dir():
            continue
        release = wheel_id(copy)
        if env_release(layout, course) == release:
            continue
        try:
            with tempfile.TemporaryDirectory() as tmp:
                wheel = build_wheel(copy, Path(tmp))
                environments.install_package(layout.student_env, layout.course_package(course), wheel, release)
        except (GradingError, RuntimeError) as exc:
            log(f"warning: {course}: its students' package could not be built from {copy}: {exc}")
            continue
        log(f"{course}: its students' selfattn is release {release}, built from its course copy {copy}, "
            f"in {layout.course_package(course)}")
        installed.append(course)
    return installed
