"""The grader's errors: one hierarchy, turned into an exit status at the command line only.

Library code raises a :class:`GradingError` whose message is the one line a person reads (what was
refused or is missing, and what to do). Only a command's ``main`` (wrapped in :func:`command_line`)
turns it into that line on standard error and the class's exit status, as nbgrader's apps do;
callers in between can tell the failures apart by class.

===============================  ======  ===================================================
class                            status  meaning
===============================  ======  ===================================================
:class:`GradingError`            1       a run could not finish (e.g. students left without a grade)
:class:`StaleVerdict`            1       no verdict judged this notebook: applying one would grade wrongly
:class:`RefusedInput`            2       an argument, address, file or folder refused before any work
:class:`RefusedFile`             2       one file or folder of a student the grader will not read
:class:`RefusedHandin`           2       a whole hand-in folder refused (never collected)
:class:`RefusedZip`              2       an LMS zip not taken (its name, members, or where it would go)
:class:`RefusedRequest`          2       a submission's call of the course's functions broke a cap
:class:`ForeignAccount`          2       a system account or group of that name is not the hub's own
:class:`SetupMissing`            3       part of the set-up is missing (``make setup``, ``make dask-certs``)
:class:`ClusterError`            4       the Dask or Slurm cluster cannot grade (any longer)
:class:`RunBusy`                 75      another grading run holds the work folder (try again later)
===============================  ======  ===================================================

The ``Refused*`` kinds met while grading one student (a file, a hand-in, a zip, a request) are caught
where they arise and become that student's note; their status matters only if one ever escapes.
Two kinds of :class:`GradingError` live beside the one reader of their files:
:class:`autograder.outputs.json_files.NewerFormat` and :class:`autograder.verdicts.record.UnreadableVerdict`.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["ClusterError", "ForeignAccount", "GradingError", "RefusedFile", "RefusedHandin", "RefusedInput",
           "RefusedRequest", "RefusedZip", "RunBusy", "SetupMissing", "StaleVerdict", "command_line"]


class GradingError(Exception):
    """A grading command cannot go on; the message is one line for a person."""

    exit_status = 1


class RefusedInput(GradingError):
    """An argument, address, file or folder was refused before any work was done."""

    exit_status = 2


class RefusedFile(RefusedInput):
    """A student's file or folder the grader will not read (a link, not a regular file, too large);
    the message says why, in one line."""


class RefusedHandin(RefusedInput):
    """A whole hand-in folder is refused (the message is the problem, without the student's name)."""


class RefusedZip(RefusedInput):
    """An LMS zip that is not taken; the message is its one line."""


class RefusedRequest(RefusedInput):
    """A submission's request to the course's functions broke one of the oracle's caps or its format:
    the run is refused; the message is one fixed line naming the cap (nothing in it is chosen by the
    submission)."""


class ForeignAccount(RefusedInput):
    """A system account or group of that name exists and the hub did not make it (it is left as it is)."""


class StaleVerdict(GradingError):
    """No verdict judged this notebook: autograding it would apply a wrong grade."""


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
