"""What the class's verdicts add up to: each exercise's passes, failures and named mistakes
(:func:`exercises`), each check's counts, the mistakes with who made them and every fault or
anomaly (:func:`tally`), who handed in and completed each notebook (:func:`handed_and_complete`),
and the named mistakes that a resubmission replaced (:func:`history_rows`). Counted from the
verdicts' data (:mod:`autograder.reporting.failures`), never from their messages."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.spec import notebooks_of
from autograder.late.policy import lateness
from autograder.notes import NoteKind
from autograder.reporting.class_data import ClassData
from autograder.reporting.failures import classify, function_of, mistake_label
from autograder.verdicts import history
from autograder.verdicts.record import Verdict
from selfattn.checks.findings import Finding


@dataclass
class Exercise:
    """One exercise (a graded function of one notebook) across the class."""

    assignment: str
    notebook: str
    function: str
    passed: set[str] = field(default_factory=set)  # every check passed
    failed: set[str] = field(default_factory=set)  # answered, some check failed
    mistakes: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # named mistake -> who

    @property
    def answered(self) -> int:
        return len(self.passed) + len(self.failed)

    @property
    def rate(self) -> float:
        return len(self.passed) / self.answered if self.answered else 1.0

    def commonest(self) -> tuple[str, int] | None:
        """The named mistake most students made here, and how many."""
        if not self.mistakes:
            return None
        name, who = min(self.mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return name, len(who)


def _checks_by_function(verdict: Verdict) -> dict[str, list[object]]:
    """A verdict's stored check results grouped by the graded function they check.

    Parameters
    ----------
    verdict : Verdict
        One verdict (its ``checks``: check id -> ``None`` if passed, else a finding).

    Returns
    -------
    dict[str, list[object]]
        function name -> its checks' stored results, in the verdict's order.
    """
    by_fn: dict[str, list[object]] = defaultdict(list)
    for cid, msg in verdict.checks.items():
        by_fn[function_of(cid)].append(msg)
    return by_fn


def _judge(ex: Exercise, student: str, msgs: list[object]) -> None:
    """Count one student's answer to ``ex``: passed (every check passed), failed (answered, some
    check failed; its named mistakes noted with the student) or neither (only stubs found).

    Parameters
    ----------
    ex : Exercise
        The exercise, updated in place.
    student : str
        The student's id.
    msgs : list[object]
        The stored results of the exercise's checks in this student's verdict.
    """
    kinds = [classify(m) for m in msgs if m is not None]
    if not kinds:
        ex.passed.add(student)
    elif any(kind != "not answered" for kind, _ in kinds) or len(kinds) < len(msgs):
        ex.failed.add(student)
        for kind, key in kinds:
            if kind == "named":
                ex.mistakes[key].add(student)


def exercises(data: ClassData) -> list[Exercise]:
    """Every exercise that someone answered, hardest first (lowest share of students passing it)."""
    found: dict[tuple[str, str, str], Exercise] = {}
    for (s, a, nb), v in sorted(data.verdicts.items()):
        for fn, msgs in _checks_by_function(v).items():
            _judge(found.setdefault((a, nb, fn), Exercise(a, nb, fn)), s, msgs)
    return sorted(found.values(), key=lambda x: (x.rate, -x.answered, x.notebook, x.function))


@dataclass
class Tally:
    """What the verdicts' checks and notes add up to (check id keys; (function, key) -> who)."""

    passed: Counter = field(default_factory=Counter)  # check id -> notebooks it passed in
    failed: Counter = field(default_factory=Counter)  # check id -> answered, failed
    unanswered: Counter = field(default_factory=Counter)  # check id -> stub or function missing
    where: dict[str, str] = field(default_factory=dict)  # check id -> its notebook
    named: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    unnamed: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    faults: list[list[str]] = field(default_factory=list)  # [student, assignment, notebook, kind, detail]


def _count_checks(tally: Tally, s: str, a: str, nb: str, checks: dict) -> None:
    """Add one verdict's checks to ``tally``: passes, failures and stubs per check, named and
    unnamed mistakes with the student, and one fault row per (function, kind of fault).

    Parameters
    ----------
    tally : Tally
        Updated in place.
    s, a, nb : str
        Student, assignment and notebook of the verdict.
    checks : dict
        check id -> ``None`` (passed) or the stored finding.
    """
    fault_seen = set()
    for cid, msg in checks.items():
        tally.where[cid] = nb
        if msg is None:
            tally.passed[cid] += 1
            continue
        kind, key = classify(msg)
        fn = function_of(cid)
        if kind == "not answered":
            tally.unanswered[cid] += 1
        else:
            tally.failed[cid] += 1
        if kind == "named":
            tally.named[(fn, key)].add(s)
        elif kind == "unnamed":
            tally.unnamed[(fn, key)].add(s)
        elif kind != "not answered" and (fn, kind) not in fault_seen:
            fault_seen.add((fn, kind))
            tally.faults.append([s, a, nb, kind, f"{fn}: {Finding.from_json(msg)}"])


def _verdict_anomalies(s: str, a: str, nb: str, v: Verdict) -> list[list[str]]:
    """Fault rows of one verdict beyond its checks: each grading note, and "blank notebook" when
    every exercise still holds the stub (some check failed, none passed, all of them stubs)."""
    rows = [[s, a, nb, note.kind.value, str(note)] for note in v.notes]
    if v.checks and all(classify(m)[0] == "not answered" for m in v.checks.values()
                        if m is not None) and not any(m is None for m in v.checks.values()):
        rows.append([s, a, nb, "blank notebook", "every exercise still holds the stub"])
    return rows


def _missing_and_late(data: ClassData) -> list[list[str]]:
    """Fault rows of hand-ins: the notebooks missing from an assignment someone handed in (one row
    per student and assignment), then the hand-ins past the due date (hours late)."""
    rows: list[list[str]] = []
    for s in data.students:
        for a in data.assignments:
            handed_in = {n for (s2, a2, n) in data.verdicts if s2 == s and a2 == a}
            missing = sorted(set(notebooks_of(a, data.ws.course)) - handed_in)
            if handed_in and missing:
                rows.append([s, a, f"{len(missing)} of {len(notebooks_of(a, data.ws.course))}", NoteKind.MISSING.value,
                             "not handed in: " + ", ".join(missing)])
    for (s, a), secs in sorted(data.late.items()):
        ext = f", with an extension to {data.extensions[(s, a)]}" if (s, a) in data.extensions else ""
        rows.append([s, a, "", "late", f"{lateness(secs)} late{ext}, penalty {data.penalties.get((s, a), 0):g} points"])
    return rows


def _merge_notebooks(rows: list[list[str]], course: Path) -> list[list[str]]:
    """One row per (student, assignment, kind, detail): the same anomaly in several notebooks (a
    blank hand-in, a note repeated) lists them in one cell, "all 9" when it is every notebook of the
    course at ``course``."""
    merged: dict[tuple[str, str, str, str], list[str]] = {}
    for s, a, nb, kind, detail in rows:
        merged.setdefault((s, a, kind, detail), []).append(nb)
    out: list[list[str]] = []
    for (s, a, kind, detail), nbs in merged.items():
        everything = len(nbs) > 1 and set(nbs) == set(notebooks_of(a, course))
        out.append([s, a, f"all {len(nbs)}" if everything else ", ".join(nbs), kind, detail])
    return out


def tally(data: ClassData) -> Tally:
    """Every verdict's checks and anomalies counted, in student order; the fault rows end with the
    missing and late hand-ins and are merged across notebooks (:func:`_merge_notebooks`)."""
    counted = Tally()
    for (s, a, nb), v in sorted(data.verdicts.items()):
        _count_checks(counted, s, a, nb, v.checks)
        counted.faults.extend(_verdict_anomalies(s, a, nb, v))
    counted.faults = _merge_notebooks(counted.faults + _missing_and_late(data), data.ws.course)
    return counted


def handed_and_complete(data: ClassData) -> tuple[dict[tuple[str, str], set[str]], dict[tuple[str, str], set[str]]]:
    """Who handed in each (assignment, notebook) (a verdict without a "missing notebook" note) and
    who of them answered every exercise (no check reports "not answered")."""
    handed: dict[tuple[str, str], set[str]] = defaultdict(set)
    complete: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (s, a, nb), v in data.verdicts.items():
        if any(n.kind is NoteKind.MISSING for n in v.notes):
            continue
        handed[(a, nb)].add(s)
        checks = v.checks
        if checks and all(m is None or classify(m)[0] != "not answered" for m in checks.values()):
            complete[(a, nb)].add(s)
    return handed, complete


def history_rows(data: ClassData, s: str, a: str, nb: str, v: Verdict) -> list[list[str]]:
    """The "history" rows of one notebook: per exercise, the named mistakes of replaced verdicts
    and what the latest verdict does ("fixed", its named mistakes, or "still failing").

    Parameters
    ----------
    data : ClassData
        The class (its work folder holds the replaced verdicts' history; its roster the names).
    s, a, nb : str
        Student, assignment and notebook.
    v : Verdict
        The notebook's latest verdict.

    Returns
    -------
    list[list[str]]
        [student, name, notebook, exercise, mistakes before, now] per exercise, by exercise;
        ``[]`` when no replaced verdict named a mistake.
    """
    before: dict[str, set[str]] = defaultdict(set)
    for entry in history.read(s, a, nb, data.ws):
        for cid, name in (entry.get("mistakes") or {}).items():
            before[function_of(cid)].add(mistake_label(str(name), short=False))
    if not before:
        return []
    now_named = defaultdict(set)
    for cid, name in history.named_mistakes(v).items():
        now_named[function_of(cid)].add(mistake_label(name, short=False))
    checks = v.checks
    rows = []
    for fn, names in sorted(before.items()):
        ok = all(m is None for cid, m in checks.items() if function_of(cid) == fn)
        still = "still: " + "; ".join(sorted(now_named[fn])) if now_named[fn] else "still failing"
        rows.append([s, data.name(s), nb, fn, "; ".join(sorted(names)), "fixed" if ok else still])
    return rows
