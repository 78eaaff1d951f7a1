"""Which course's ``selfattn`` a student's Python imports on the course hub (run by Python at start).

Each course of a hub has its own students' package, ``STATE/packages/ID``. A student of two courses
of one hub needs the checks of the course whose notebook she works in. Her server's environment
(``autograder/hub/jupyterhub_config.py``) holds ``SELFATTN_COURSE_PACKAGES``, her courses as
``ID=FOLDER`` pairs separated by ``os.pathsep``, her first course first; its ``PYTHONPATH`` is this
module's folder, then her first course's package. A Python started in ``~/ID/...`` (a notebook's
kernel: nbgrader fetches course ID's assignments into ``~/ID/``; Validate's kernel; a terminal's
``python`` there) puts course ID's package just before the first course's on ``sys.path``; started
anywhere else, it changes nothing. ``make hub`` copies this file into ``STATE/packages/.site/``
(root's, read-only to students). Standard library only; it never raises (a Python must start).
"""

from __future__ import annotations

import os
import sys

TABLE = "SELFATTN_COURSE_PACKAGES"


def chosen(table: str, here: str, home: str) -> str | None:
    """The package folder ``table`` gives the course of folder ``here`` (``home/ID`` or below), or None."""
    pairs = [entry.split("=", 1) for entry in table.split(os.pathsep) if "=" in entry]
    home = home.rstrip(os.sep)
    if not home or not here.startswith(home + os.sep):
        return None
    course = here[len(home) + 1:].split(os.sep, 1)[0]
    return next((folder for name, folder in pairs if name == course), None)


def first(table: str) -> str | None:
    """The first course's package folder in ``table`` (the one ``PYTHONPATH`` holds), or None."""
    entry = next((e for e in table.split(os.pathsep) if "=" in e), None)
    return entry.split("=", 1)[1] if entry else None


def choose(path: list[str], table: str, here: str, home: str) -> None:
    """Put the package of ``here``'s course into ``path`` (``sys.path``) before the first course's."""
    folder, default = chosen(table, here, home), first(table)
    if folder is None or folder == default or folder in path:
        return
    path.insert(path.index(default) if default in path else 0, folder)


try:
    if os.environ.get(TABLE):
        choose(sys.path, os.environ[TABLE], os.path.realpath(os.getcwd()),
               os.path.realpath(os.path.expanduser("~")))
except Exception:
    pass
