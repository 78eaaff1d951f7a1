"""Suspiciously similar answers of the class (:func:`find_pairs`): every exercise's staged answers
compared by :mod:`autograder.reporting.similarity`, the reference solution and the released stub
excluded, within a time budget per notebook; what was not compared is said, one line each."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from autograder.course.spec import answer_cells, notebooks_of, release_path
from autograder.reporting import similarity
from autograder.reporting.class_data import ClassData


@dataclass(frozen=True)
class FoundPair:
    """A suspicious pair of one exercise: where (assignment, notebook), the pair (its exercise,
    students ``pair.a`` and ``pair.b``, score) and the two answers' sources."""

    assignment: str
    notebook: str
    pair: similarity.Pair
    answer_a: str
    answer_b: str


def _answers(data: ClassData, a: str, nb: str, graded: list[str]) -> dict[str, dict[str, str]]:
    """grade id -> student -> answer source of one notebook's staged copies (unreadable ones left out)."""
    answers: dict[str, dict[str, str]] = defaultdict(dict)
    for s in graded:
        try:
            for gid, src in answer_cells(data.ws.staged(s, a, nb)).items():
                answers[gid][s] = src
        except (OSError, ValueError, KeyError):
            continue
    return answers


def _notebook_pairs(data: ClassData, a: str, nb: str, graded: list[str], skipped: list[str],
                    clock: Callable[[], float]) -> list[FoundPair]:
    """The suspicious pairs of one notebook's exercises, until its time is spent (see :func:`find_pairs`)."""
    started = clock()
    reference = answer_cells(data.ws.solutions / a / f"{nb}.ipynb")
    stubs = answer_cells(release_path(a, nb, data.ws.course))
    answers = _answers(data, a, nb, graded)
    out = []
    for i, gid in enumerate(reference):
        if clock() - started > similarity.NOTEBOOK_SECONDS:
            skipped.append(f"{nb}: {', '.join(list(reference)[i:])} not compared (the "
                           f"{similarity.NOTEBOOK_SECONDS:g} s for comparing this notebook were spent)")
            break
        if long := similarity.too_long(answers.get(gid, {})):
            skipped.append(f"{nb} · {gid}: the answers of {', '.join(long)} not compared (longer than "
                           f"{similarity.MAX_COMPARED_CHARS:,} characters)")
        short: list[str] = []
        for pair in similarity.similar_pairs(gid, answers.get(gid, {}), [reference[gid], stubs.get(gid, "")], short):
            out.append(FoundPair(a, nb, pair, answers[gid][pair.a], answers[gid][pair.b]))
        if short:
            skipped.append(f"{nb} · {gid}: {len(short)} answer{'s' if len(short) != 1 else ''} too short to "
                           f"tell apart, not compared (fewer than {similarity.MIN_FINGERPRINTS} "
                           "fingerprints beyond the reference, the stub and the class's idioms)")
    return out


def find_pairs(data: ClassData, skipped: list[str] | None = None, clock: Callable[[], float] = time.monotonic
               ) -> list[FoundPair]:
    """Every suspicious pair of every exercise that two or more students' verdicts hold.

    Each notebook's comparisons stop once :data:`similarity.NOTEBOOK_SECONDS` (by ``clock``) are
    spent; what was not compared (answers too long or too short, exercises left) goes to
    ``skipped``, one line each.

    Parameters
    ----------
    data : ClassData
        The class (its verdicts say who was graded; the staged notebooks hold the answers).
    skipped : list[str], optional
        Appended to, one line per thing not compared.
    clock : callable () -> float, optional
        Seconds, for the time budget.

    Returns
    -------
    list[FoundPair]
        By assignment, notebook and the reference's order of exercises.
    """
    skipped = skipped if skipped is not None else []
    out = []
    for a in data.assignments:
        for nb in notebooks_of(a, data.ws.course):
            graded = [s for (s, a2, n) in data.verdicts if a2 == a and n == nb]
            if len(graded) >= 2:
                out += _notebook_pairs(data, a, nb, graded, skipped, clock)
    return out
