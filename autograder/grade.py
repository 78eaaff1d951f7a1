"""Grade a class: ``python -m autograder.grade [SUBCOMMAND] ...`` (what ``make grade`` runs): the
command line only.

One subcommand per thing a run does, one module each (:mod:`autograder.grading_commands`):

=================================  ==========================================================
``class`` (the default)            grade every submission (``make grade``), here, on a Dask
                                   cluster (``--scheduler``) or on Slurm jobs (``--slurm``)
``one STUDENT ASSIGNMENT NOTEBOOK``  decide one notebook; no nbgrader step
``array-task I/N``                 a Slurm array task (``scripts/slurm-grade-array.sh``)
``finish``                         feedback and exports again after hand-grading (``make grades-final``)
``config``                         print every grading setting with its help
=================================  ==========================================================

The mode flags of earlier versions still work, anywhere on the line: ``--one S A N``, ``--array-task
I/N``, ``--finish`` and ``--help-config`` are read as the subcommands above (:data:`MODE_FLAGS`).
Errors of the grader (:mod:`autograder.errors`) become one line and an exit status here and nowhere
else.
"""

from __future__ import annotations

import argparse
import sys

from autograder.errors import command_line
from autograder.grading_commands import array_task, config, finish, grade_class, one

#: The subcommands, the default first.
COMMANDS = (grade_class, one, array_task, finish, config)
#: Mode flags of the single-command line -> (the subcommand they are, how many values follow them).
MODE_FLAGS: dict[str, tuple[str, int]] = {"--one": (one.NAME, 3), "--array-task": (array_task.NAME, 1),
                                          "--finish": (finish.NAME, 0), "--help-config": (config.NAME, 0)}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder.grade", description="Grade a class (what make grade runs).",
                                epilog=f"Without a subcommand: {grade_class.NAME}. The mode flags --one, --array-task, "
                                       "--finish and --help-config still name the subcommands.")
    sub = p.add_subparsers(dest="command", metavar="SUBCOMMAND")
    for command in COMMANDS:
        command.add_arguments(sub.add_parser(command.NAME, help=command.HELP, description=command.HELP))
    return p


def subcommand_argv(argv: list[str]) -> list[str]:
    """``argv`` with its subcommand first: a mode flag (:data:`MODE_FLAGS`) and its values, wherever
    they are, become the subcommand; a line without either grades the class."""
    names = {c.NAME for c in COMMANDS}
    if argv and (argv[0] in names or argv[0] in ("-h", "--help")):
        return argv
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if flag in MODE_FLAGS:
            name, count = MODE_FLAGS[flag]
            values = [value] if eq else argv[i + 1:i + 1 + count]
            end = i + 1 + (0 if eq else count)
            return [name, *values, *argv[:i], *argv[end:]]
    return [grade_class.NAME, *argv]


@command_line
def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(subcommand_argv(list(sys.argv[1:] if argv is None else argv)))
    command = next(c for c in COMMANDS if c.NAME == a.command)
    return command.run(a)


if __name__ == "__main__":
    sys.exit(main())
