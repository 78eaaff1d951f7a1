"""Deciding one check from the outcomes of its calls, the same way in a notebook and when grading.

A call that raised, timed out, returned no numbers or is still the stub decides the check by
itself (:func:`first_error`); otherwise the check's verifier decides (:func:`safe_verify`). The
notebook (:mod:`selfattn.checks.notebook`) and the grader (``autograder/verdicts/decide.py``) both decide
through these two functions; they differ only in where the calls are made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .calling import (
    BAD_RETURN,
    GRADED_CPU_SECONDS,
    NOT_ANSWERED,
    RAISED,
    TIME_LIMIT,
    Case,
    Outcome,
    call_cases,
    graded_wall_seconds,
)
from .findings import Finding, Kind
from .record import Check

__all__ = ["first_error", "run_check", "safe_verify"]


def first_error(check_: Check, cases: Sequence[Case], outcomes: Sequence[Outcome]) -> Finding | None:
    """The finding for the first call that raised or returned something that is not numbers, if any.

    ``cases`` and ``outcomes`` have the same length (one outcome per call)."""
    for case, outcome in zip(cases, outcomes, strict=True):
        if outcome.kind == NOT_ANSWERED:
            return Finding(f"{check_.function} is not written yet: replace `raise NotImplementedError` with your "
                           f"code", Kind.NOT_ANSWERED, "NotImplementedError")
        if outcome.kind == TIME_LIMIT:
            return Finding(f"{check_.function}{case.describe()} {outcome.error}; grading stops a run of its "
                           f"checks after {GRADED_CPU_SECONDS} s of CPU time or {graded_wall_seconds():g} s in all, "
                           f"and its checks then score 0", Kind.TIME_OUT)
        if outcome.kind == BAD_RETURN:
            what = outcome.error or "returned something that is not numbers"
            return Finding(f"{check_.function}{case.describe()} {what}", Kind.NOT_NUMBERS)
        if outcome.kind == RAISED:
            return Finding(f"calling {check_.function}{case.describe()} raised {outcome.error}", Kind.RAISED,
                           outcome.exception)
    return None


def safe_verify(check_: Check, cases: Sequence[Case], outcomes: Sequence[Outcome]) -> Finding | None:
    """``check_.verify`` as a :class:`Finding` whose named mistake carries its stable id, with a
    failure of the verifier itself reported as one.

    Raises
    ------
    TypeError
        The verifier returned something else than a :class:`Finding` or ``None`` (a bare message
        has no kind: the course's code must say what it found).
    """
    try:
        found = check_.verify(list(cases), list(outcomes))
    except Exception as exc:
        return Finding(f"the returned values could not be checked ({type(exc).__name__})", Kind.UNCHECKABLE)
    if found is not None and not isinstance(found, Finding):
        raise TypeError(f"check {check_.id}: its verifier returned a {type(found).__name__}, not a Finding or None "
                        f"(return Finding(text, Kind...))")
    return check_.exercise.identify(found) if check_.exercise is not None else found


def run_check(check_: Check, fn: Callable[..., Any], seed: int = 0) -> Finding | None:
    """Run one check in this process; ``None`` when it passes, else the finding."""
    cases = check_.cases(np.random.default_rng(seed))
    outcomes = call_cases(fn, cases)
    return first_error(check_, cases, outcomes) or safe_verify(check_, cases, outcomes)
