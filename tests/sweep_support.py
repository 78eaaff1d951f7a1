"""One tolerance per case for the in-process sweeps (the ``sweep`` lane).

A sweep runs every wrong answer of an exercise through the same checks on the same seeds, so the
same cases come back for every answer. :func:`selfattn.checks.record.tolerance` depends on the case
alone (the reference at the case's float32 neighbours), never on the answer, and it is most of what
judging an answer costs. :func:`remembered` wraps the one implementation of it: the first call on a
case computes it, every later call on a case with the same bytes returns that same pair. Nothing
else changes: the records decide as they do in grading, with the numbers grading computes.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from typing import Any

from selfattn.checks import record
from selfattn.checks.calling import Case

Tolerance = Callable[..., tuple[float, float]]


def case_digest(case: Case) -> bytes | None:
    """A digest of everything a case holds (its arrays' dtypes, shapes and bytes, its other
    arguments, its meta), or ``None`` for a case that cannot be pickled (never remembered)."""
    try:
        data = pickle.dumps((case.args, sorted(case.kwargs.items()), case.meta), protocol=5)
    except Exception:  # a lambda or an open handle in a case: computed every time
        return None
    return hashlib.blake2b(data, digest_size=32).digest()


def remembered(compute: Tolerance) -> tuple[Tolerance, dict[tuple[Any, ...], tuple[float, float]]]:
    """``compute`` (:func:`record.tolerance`'s signature) remembered per truth, case and ``exact``;
    returns the wrapper and its table (to read in a test)."""
    table: dict[tuple[Any, ...], tuple[float, float]] = {}

    def tolerance(truth, case: Case, want, *, exact: bool = False) -> tuple[float, float]:
        digest = case_digest(case)
        if digest is None:
            return compute(truth, case, want, exact=exact)
        key = (truth, digest, exact)
        if key not in table:
            table[key] = compute(truth, case, want, exact=exact)
        return table[key]

    return tolerance, table


def remember_tolerances(monkeypatch) -> dict[tuple[Any, ...], tuple[float, float]]:
    """Make the records' comparisons use a remembered :func:`record.tolerance` until the test's (or
    module's) ``monkeypatch`` is undone; returns the table."""
    tolerance, table = remembered(record.tolerance)
    monkeypatch.setattr(record, "tolerance", tolerance)
    return table
