"""Lay out the hub's state folder (:mod:`autograder.hub.layout`): the course copy the grader
account owns, nbgrader's exchange, and the students' and graders' nbgrader settings.

Nothing that exists is replaced: the course copy (with its gradebook, hand grades, submissions) and
the exchange survive every ``make hub``; a changed course is copied in by removing
``STATE/course`` first (after saving what it holds).
"""

from __future__ import annotations

import grp
import pwd
import shutil
import subprocess
from pathlib import Path

from autograder.course.ids import COURSE_ID
from autograder.hub.layout import GRADER_USER, GRADERS_GROUP, HubLayout
from autograder.outputs.atomic import write_text
from autograder.workspace import ROOT

#: copied beside the tracked files: the vendored MathJax formgrader serves (made by make setup)
GENERATED = ("_assets/vendor",)


def _tracked_files(root: Path) -> list[str]:
    done = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{root}: not a git checkout, so the course files cannot be listed ({done.stderr.strip()})")
    return [name for name in done.stdout.split("\0") if name]


def copy_course(dest: Path, root: Path = ROOT) -> bool:
    """Copy the course (tracked files and :data:`GENERATED`) to ``dest`` unless it exists."""
    if dest.exists():
        return False
    aside = dest.with_name(dest.name + ".copying")
    shutil.rmtree(aside, ignore_errors=True)
    for name in _tracked_files(root):
        src = root / name
        if src.is_file():
            (aside / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, aside / name)
    for name in GENERATED:
        if not (root / name).exists():
            raise RuntimeError(f"{root / name} is missing: run `make setup` first")
        shutil.copytree(root / name, aside / name, dirs_exist_ok=True)
    aside.rename(dest)
    return True


def _own(path: Path, user: str, group: str, mode: str) -> None:
    subprocess.run(["chown", "-R", f"{user}:{group}", str(path)], check=True)
    subprocess.run(["chmod", "-R", mode, str(path)], check=True)


def student_settings(layout: HubLayout) -> str:
    """The students' ``nbgrader_config.py``: the exchange, this course only, whole check messages."""
    return (f'"""nbgrader settings of the students\' servers on the course hub (autograder/hub/prepare.py)."""\n'
            "c = get_config()  # noqa: F821\n"
            f"c.Exchange.root = {str(layout.exchange)!r}\n"
            f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
            "c.Validator.width = 120\n")


def grader_settings(layout: HubLayout) -> str:
    """The formgrader service's user-level ``nbgrader_config.py``: the exchange."""
    return (f'"""nbgrader settings of the formgrader service (autograder/hub/prepare.py)."""\n'
            "c = get_config()  # noqa: F821\n"
            f"c.Exchange.root = {str(layout.exchange)!r}\n")


def prepare(layout: HubLayout, roster: Path, log=print) -> None:
    """Make the state folder as :mod:`autograder.hub.layout` describes (accounts must exist)."""
    layout.state.mkdir(parents=True, exist_ok=True)
    layout.state.chmod(0o755)
    layout.hub.mkdir(exist_ok=True)
    layout.hub.chmod(0o700)
    shutil.copy(roster, layout.roster)
    # nbgrader's documented exchange: everyone may create their folders in it
    layout.exchange.mkdir(exist_ok=True)
    layout.exchange.chmod(0o777)
    if copy_course(layout.course):
        log(f"copied the course into {layout.course}")
    _own(layout.course, GRADER_USER, GRADERS_GROUP, "u+rwX,g+rwX,o-rwx")
    layout.course.chmod(0o2770)
    for folder, text in ((layout.student_config, student_settings(layout)),
                         (layout.grader_config, grader_settings(layout))):
        folder.mkdir(parents=True, exist_ok=True)
        write_text(folder / "nbgrader_config.py", text)
    layout.state.joinpath("config").chmod(0o755)
    subprocess.run(["chmod", "-R", "a+rX", str(layout.student_config)], check=True)
    _own(layout.grader_config, GRADER_USER, GRADERS_GROUP, "u+rwX,g+rX,o-rwx")
    home = Path(pwd.getpwnam(GRADER_USER).pw_dir)
    home.chmod(0o700)
    grp.getgrnam(GRADERS_GROUP)  # raises KeyError when the accounts were not made first
