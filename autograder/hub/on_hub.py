"""A command of the instructors' guide, run on a hub's course: ``make grade HUB=/srv/selfattn-hub``.

``python -m autograder.hub.on_hub --hub STATE [--course ID] [--input PATH] -- COMMAND ...`` runs
``COMMAND`` in the course copy ``STATE/courses/ID`` as the course's grader account ``HUB-gr-ID``
(``runuser``), with the graders' environment and the term's settings chain
(:meth:`~autograder.hub.layout.HubLayout.grader_environment`) and umask 007, so that what it makes is
the graders' group's too. ``python`` and ``nbgrader`` mean the graders' environment's. The copy is a
checkout of the course, so ``python -m autograder.grade`` there grades the copy's
``autograder/submitted/`` into its gradebook, exactly as ``make grade`` does in the repository.
The Makefile's targets route through here when ``HUB`` is set; ``COURSE`` picks a course of a hub
that serves several (default: this course when the hub serves it, else its first).

``--input PATH`` (a folder or file of the instructor's, such as ``make intake``'s ``ZIPS``, which the
grader account may not read where it is) is copied into the copy first, for the grader account, and
every argument naming it names the copy; removed afterwards. A hub or course that is not there, or a
release that differs between the course copy and its students' package, is said in one line.
"""

from __future__ import annotations

import argparse
import os
import pwd
import secrets
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder.errors import RefusedInput, command_line
from autograder.hub.layout import HubLayout, from_environment
from autograder.hub.records import Records

#: commands that mean the graders' environment's own
ENV_COMMANDS = ("python", "nbgrader", "jupyter")
#: the umask of every command run here: what it makes is the graders' group's (read and write)
UMASK = 0o007
#: where ``--input`` copies land in the course copy (one random folder per run)
INCOMING = "autograder/.incoming"


def hub_course(hub: str | Path, course: str | None = None,
               env: dict[str, str] | None = None) -> tuple[HubLayout, str]:
    """The layout of the hub whose state folder is ``hub`` and the course of it to work on (``None``:
    this course when the hub serves it, else the first); ``RefusedInput`` in one line naming what is
    not there."""
    environ = dict(os.environ if env is None else env)
    layout = from_environment({**environ, "SELFATTN_HUB_STATE": str(hub)})
    if not layout.id_file.exists():
        raise RefusedInput(f"HUB={hub}: no course hub there (no {layout.id_file}; make hub makes it at its "
                           "first start)")
    served = layout.courses()
    if not served:
        raise RefusedInput(f"HUB={hub}: the hub serves no course (no roster in {layout.rosters})")
    chosen = course or served[0]
    if chosen not in served:
        raise RefusedInput(f"COURSE={chosen}: not a course of the hub at {hub} (it serves {', '.join(served)})")
    grader = layout.grader_user(chosen)
    if Records.load(layout.records).user(grader) is None or not layout.course(chosen).is_dir():
        raise RefusedInput(f"COURSE={chosen}: the hub at {hub} has no grader account {grader} or course copy "
                           f"{layout.course(chosen)} (make hub makes them)")
    return layout, chosen


def grader_env(layout: HubLayout, course: str) -> dict[str, str]:
    """The whole environment of a command run as ``course``'s grader account (nothing of the caller's)."""
    grader = layout.grader_user(course)
    return {**layout.grader_environment(course), "HOME": pwd.getpwnam(grader).pw_dir, "USER": grader,
            "LOGNAME": grader, "LANG": "C.UTF-8", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def grader_command(layout: HubLayout, course: str, argv: Sequence[str]) -> list[str]:
    """The ``runuser`` command line that runs ``argv`` in ``course``'s copy as its grader account
    (:data:`ENV_COMMANDS` from the graders' environment, umask :data:`UMASK`)."""
    if not argv:
        raise RefusedInput("on_hub: give the command to run after --")
    first = str(layout.grader_env / "bin" / argv[0]) if argv[0] in ENV_COMMANDS else argv[0]
    env = [f"{k}={v}" for k, v in grader_env(layout, course).items()]
    return ["runuser", "-u", layout.grader_user(course), "--", "env", "-i", *env,
            "sh", "-c", f'umask {UMASK:03o} && exec "$@"', "sh", first, *argv[1:]]


def stage_inputs(layout: HubLayout, course: str, inputs: Sequence[str], argv: Sequence[str],
                 cwd: Path) -> tuple[list[str], Path | None]:
    """Copy each of ``inputs`` (named as typed in ``cwd``) into the course copy for its grader account;
    returns ``argv`` with each argument naming one naming its copy, and the folder to remove after."""
    if not inputs:
        return list(argv), None
    folder = layout.course(course) / INCOMING / secrets.token_hex(6)
    folder.mkdir(parents=True)
    renamed: dict[str, str] = {}
    for i, given in enumerate(inputs):
        src = (cwd / given).resolve()
        if not src.exists():
            raise RefusedInput(f"{given}: no such file or folder")
        dest = folder / str(i) / src.name
        dest.parent.mkdir()
        if src.is_dir():
            shutil.copytree(src, dest, symlinks=True)
        else:
            shutil.copy2(src, dest)
        renamed[given] = str(dest)
    subprocess.run(["chown", "-R", f"{layout.grader_user(course)}:{layout.graders_group(course)}",
                    str(folder.parent)], check=True)
    return [renamed.get(arg, arg) for arg in argv], folder


def run(layout: HubLayout, course: str, argv: Sequence[str], inputs: Sequence[str] = (),
        cwd: Path | None = None, say=print) -> int:
    """Run ``argv`` on ``course``'s copy as its grader account (see the module docstring); returns its
    exit status (a failed step's status stops ``make`` before the next step)."""
    if os.geteuid() != 0:
        raise RefusedInput(f"HUB={layout.state}: run as root (the command runs as {layout.grader_user(course)} "
                           "through runuser)")
    from autograder.hub.release import release_problem, stale_release_line

    for problem in (release_problem(layout, course), stale_release_line(layout, course)):
        if problem:
            say(f"warning: {problem}")
    args, staged = stage_inputs(layout, course, inputs, argv, cwd or Path.cwd())
    try:
        return subprocess.run(grader_command(layout, course, args), cwd=layout.course(course),
                              stdin=subprocess.DEVNULL).returncode
    finally:
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)


@command_line
def main(argv: Sequence[str] | None = None) -> None:
    given = list(sys.argv[1:] if argv is None else argv)
    ours, command = (given[:given.index("--")], given[given.index("--") + 1:]) if "--" in given else (given, [])
    p = argparse.ArgumentParser(description="run a command of the instructors' guide on a hub's course copy, "
                                            "as its grader account")
    p.add_argument("--hub", required=True, help="the hub's state folder (make hub's SELFATTN_HUB_STATE)")
    p.add_argument("--course", default=None, help="the course id, for a hub that serves several (default: "
                                                  "this course when served, else the hub's first)")
    p.add_argument("--input", action="append", default=[], metavar="PATH",
                   help="a file or folder of yours the command reads: copied into the course copy first")
    a = p.parse_args(ours)
    layout, course = hub_course(a.hub, a.course or None)
    sys.exit(run(layout, course, command, a.input, say=lambda line: print(line, file=sys.stderr)))


if __name__ == "__main__":
    main()
