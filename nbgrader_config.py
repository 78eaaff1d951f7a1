"""Not the course's nbgrader configuration: that is ``autograder/nbgrader_config.py``.

nbgrader reads the ``nbgrader_config.py`` of the folder it is started in. Started here (the
repository root), an instructor command would use nbgrader's defaults: a ``gradebook.db`` and
course folders at the root, and a crash. This file stops those commands with one line naming the
way that works from any folder (``./nbgrader ...``, which runs nbgrader in ``autograder/``).
Student commands (``validate``, ``fetch_assignment``, ``submit``, ``list``...), Jupyter servers and
every other program that reads this folder are left alone.
"""

import os
import sys

#: nbgrader commands that need the course configuration (they write the gradebook or course folders)
INSTRUCTOR_COMMANDS = {
    "generate_assignment", "assign", "release_assignment", "release", "collect", "zip_collect",
    "autograde", "generate_feedback", "feedback", "release_feedback", "formgrader", "db", "export",
    "generate_solution", "quickstart",
}


def _nbgrader_command(argv):
    """The nbgrader subcommand when this process is the ``nbgrader`` command line, else None."""
    program = os.path.basename(argv[0]) if argv else ""
    is_nbgrader = program == "nbgrader" or argv[0].endswith(os.path.join("nbgrader", "__main__.py"))
    return argv[1] if is_nbgrader and len(argv) > 1 else None


def _started_here():
    """Whether nbgrader was started in this folder (nbgrader also reads this file from elsewhere, as
    the course root's configuration, when it is started in autograder/: then it must do nothing)."""
    here = globals().get("__file__")
    return here is not None and os.path.realpath(os.getcwd()) == os.path.dirname(os.path.realpath(here))


if _nbgrader_command(sys.argv) in INSTRUCTOR_COMMANDS and _started_here():
    args = " ".join(sys.argv[1:])
    raise SystemExit(f"nbgrader {sys.argv[1]}: not from the repository root (its course configuration is in "
                     f"autograder/): run `./nbgrader {args}` here, or `make nbgrader ARGS=\"{args}\"`")
