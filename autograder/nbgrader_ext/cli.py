"""Run nbgrader with the course's configuration from any folder: ``./nbgrader ARGS`` at the
repository root (or ``make nbgrader ARGS="..."``, or ``python -m autograder.nbgrader_ext.cli ARGS``).

nbgrader reads its course configuration from the working directory, and the course's is
``autograder/nbgrader_config.py``. This runs the environment's ``nbgrader`` (``.venv/bin``, put
first on ``PATH``: nbgrader shells out to ``alembic``) in ``autograder/``, with a configuration
file that fails to load made an error (nbgrader would otherwise go on with its defaults). File
names the instructor typed (an existing file such as ``roster.csv``, and the ``--to`` of
``nbgrader export``) are made absolute first, so they still mean what they meant where the
command was typed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder.errors import SetupMissing, command_line
from autograder.formgrader import environment
from autograder.workspace import AUTOGRADER

#: options whose value is a file to write, relative to where the command was typed
_OUTPUT_OPTIONS = ("--to", "--ExportPlugin.to", "--CsvExportPlugin.to", "--QuotedCsvExportPlugin.to",
                   "--GenerateConfigApp.filename")


def _absolute(value: str, cwd: Path) -> str:
    return str(cwd / value) if value and not os.path.isabs(value) else value


def resolve_paths(args: Sequence[str], cwd: Path) -> list[str]:
    """``args`` with file names made absolute against ``cwd``: the value of an output option
    (``--to FILE``, ``--to=FILE``, ``--CsvExportPlugin.to=FILE``) and any argument naming an
    existing file in ``cwd``. Folders are left alone: an assignment name (``attention``) is a name,
    not a path, even where a folder of that name exists."""
    out: list[str] = []
    expect_output = False
    for arg in args:
        if expect_output:
            out.append(_absolute(arg, cwd))
            expect_output = False
        elif arg in _OUTPUT_OPTIONS:
            out.append(arg)
            expect_output = True
        elif arg.split("=", 1)[0] in _OUTPUT_OPTIONS and "=" in arg:
            option, value = arg.split("=", 1)
            out.append(f"{option}={_absolute(value, cwd)}")
        elif not arg.startswith("-") and not os.path.isabs(arg) and (cwd / arg).is_file():
            out.append(str(cwd / arg))
        else:
            out.append(arg)
    return out


def command(args: Sequence[str], cwd: Path | None = None) -> list[str]:
    """The nbgrader command line to run in ``autograder/`` for ``args`` typed in ``cwd``."""
    return [str(Path(sys.executable).parent / "nbgrader"), *resolve_paths(args, cwd or Path.cwd())]


def run_environment() -> dict[str, str]:
    """This environment with the venv's ``bin/`` first on ``PATH`` (nbgrader runs ``alembic``) and
    formgrader's (templates, configuration errors are errors)."""
    env = environment()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


@command_line
def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = command(argv)
    if not Path(cmd[0]).exists():
        raise SetupMissing(f"{cmd[0]} is missing: run `make setup` first")
    os.chdir(AUTOGRADER)
    os.execve(cmd[0], cmd, run_environment())


if __name__ == "__main__":
    main()
