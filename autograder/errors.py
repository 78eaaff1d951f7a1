"""The grader's errors: one hierarchy, turned into an exit status at the command line only.

Library code raises a :class:`GradingError` whose message is the one line a person reads (what was
refused or is missing, and what to do). Only a command's ``main`` (wrapped in :func:`command_line`)
turns it into that line on standard error and the class's exit status, as nbgrader's apps do;
callers in between can tell the failures apart by class.

===============================  ======  ===================================================
class                            status  meaning
===============================  ======  ===================================================
:class:`GradingError`            1       a run could not finish (e.g. students left without a grade)
:class:`RefusedInput`                 2       an argument, address, file or folder refused before any work
:class:`SetupMissing`            3       part of the set-up is missing (``make setup``, ``make dask-certs``)
:class:`ClusterError`            4       the Dask or Slurm cluster cannot grade (any longer)
:class:`RunBusy`                 75      another grading run holds the work folder (try again later)
===============================  ======  ===================================================
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["ClusterError", "GradingError", "RefusedInput", "RunBusy", "SetupMissing", "command_line"]


class GradingError(Exception):
    """A grading command cannot go on; the message is one line for a person."""

    exit_status = 1


class RefusedInput(GradingError):
    """An argument, address, file or folder was refused before any work was done."""

    exit_status = 2


class SetupMissing(GradingError):
    """A part of the set-up is missing (the message names the make target that provides it)."""

    exit_status = 3


class ClusterError(GradingError):
    """The Dask scheduler or the Slurm cluster cannot grade, or stopped grading."""

    exit_status = 4


class RunBusy(GradingError):
    """Another grading run holds the work folder's lock (``EX_TEMPFAIL``: try again later)."""

    exit_status = 75


def command_line(main: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command's ``main``: a :class:`GradingError` becomes its message on standard error and
    a ``SystemExit`` with its class's exit status (the only place the grader turns errors into exit
    statuses)."""

    @functools.wraps(main)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return main(*args, **kwargs)
        except GradingError as exc:
            print(str(exc), file=sys.stderr)
            raise SystemExit(exc.exit_status) from None

    return wrapped
