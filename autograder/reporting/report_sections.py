"""The class report's content computed from a class (:func:`report_page`): each section of the
page as a value of :mod:`autograder.reporting.report_data`, its tables' cells, numbers, links and
histograms. Nothing here is HTML; the template draws it (:mod:`autograder.reporting.report_html`)."""

from __future__ import annotations

import os
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import quote

from autograder.course.spec import exercise_of, notebooks_of
from autograder.late.policy import lateness
from autograder.notes import NoteKind
from autograder.reporting import similarity
from autograder.reporting.answer_pairs import FoundPair, find_pairs
from autograder.reporting.class_data import ClassData
from autograder.reporting.class_tally import Exercise, Tally, exercises, handed_and_complete, history_rows, tally
from autograder.reporting.failures import FAULT_WORDS, mistake_label
from autograder.reporting.histogram import histogram
from autograder.reporting.report_data import (
    Cell,
    Cluster,
    Count,
    Extension,
    Faults,
    Figure,
    Glance,
    GradeChange,
    LateWork,
    MistakeCount,
    Mistakes,
    NeedsMeNow,
    ReportPage,
    ReteachItem,
    ScoreGroup,
    SideBySide,
    Similarity,
    Table,
    Waiting,
    code_spans,
)
from selfattn.checks.findings import FAULTS

#: the faults table starts folded when it has more rows than this
FOLD_FAULTS = 200


def _who(students: set[str]) -> str:
    return ", ".join(sorted(students))


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def _table(table_id: str, headers: list[str], rows: list[list[Cell]]) -> Table:
    return Table(table_id, tuple(headers), tuple(tuple(row) for row in rows))


def _plain_table(table_id: str, headers: list[str], rows: list[list[str]]) -> Table:
    """A table whose cells are plain values (no sort key, no link)."""
    return _table(table_id, headers, [[Cell(v) for v in row] for row in rows])


def _counted(n: int) -> Cell:
    """A count, sorted as a number."""
    return Cell(n, n)


def _feedback_cell(data: ClassData, base: Path, s: str, a: str, nb: str, text: str,
                   sort: float | None = None) -> Cell:
    """A cell saying ``text`` that links to the feedback page of (``s``, ``a``, ``nb``), relative to
    the folder ``base`` the report is written to; no link when that page does not exist."""
    page = data.ws.feedback / s / a / f"{nb}.html"
    if not page.exists():
        return Cell(text, sort)
    rel = os.path.relpath(page.parent, base)
    return Cell(text, sort, "/".join(quote(part) for part in Path(rel).parts) + f"/{quote(nb)}.html")


# --- the first screen -------------------------------------------------------------------------


def _notebook_table(data: ClassData) -> Table:
    """The "notebooks" table: per notebook someone handed in, mean and median score of the
    maximum, how many completed it (of the class) and how many handed it in."""
    handed, complete = handed_and_complete(data)
    class_size = len(data.students)
    rows: list[list[Cell]] = []
    for a in data.assignments:
        for nb in notebooks_of(a, data.ws.course):
            values = [sc for (s, a2, n), (sc, _) in data.notebook_scores.items() if a2 == a and n == nb]
            tops = [mx for (s, a2, n), (_, mx) in data.notebook_scores.items() if a2 == a and n == nb]
            if not handed[(a, nb)]:
                continue  # nobody handed it in (yet): nothing to say
            top = max(tops, default=0.0)
            mean = sum(values) / len(values) if values else 0.0
            median = statistics.median(values) if values else 0.0
            done = len(complete[(a, nb)])
            rows.append([Cell(nb), Cell(f"{mean:.2f} / {top:g}", mean), Cell(f"{median:g} / {top:g}", median),
                         Cell(f"{done}/{class_size} ({_pct(done, class_size)})", done),
                         _counted(len(handed[(a, nb)]))])
    return _table("notebooks", ["notebook", "mean", "median", "completed", "handed in"], rows)


def _reteach(ranked: list[Exercise]) -> tuple[ReteachItem, ...]:
    """The three hardest exercises someone failed, each with its commonest named mistake."""
    items = []
    for ex in [ex for ex in ranked if ex.failed][:3]:
        common = ex.commonest()
        items.append(ReteachItem(ex.function, ex.notebook, len(ex.passed), ex.answered,
                                 _pct(len(ex.passed), ex.answered),
                                 code_spans(mistake_label(common[0])) if common else None,
                                 common[1] if common else 0))
    return tuple(items)


def _needs_me_now(data: ClassData, faults: list[list[str]], pairs: int) -> NeedsMeNow:
    """Answers awaiting hand-grading (by student), faults (the urgent kinds counted apart from
    other anomalies), late work, extensions, grades the last run changed and suspicious pairs."""
    kinds = Counter(row[3] for row in faults)
    by_student: dict[str, list[str]] = defaultdict(list)
    for w in data.awaiting:
        by_student[w.student].append(w.notebook.split("-")[0])
    urgent = [k for k in (*dict.fromkeys(word for kind, word in FAULT_WORDS.items() if kind in FAULTS),
                          NoteKind.GRADER_ERROR.value, NoteKind.UNREADABLE.value) if kinds.get(k)]
    return NeedsMeNow(
        awaiting=len(data.awaiting),
        waiting=tuple(Waiting(s, tuple(sorted(set(nbs)))) for s, nbs in sorted(by_student.items())),
        faults=sum(kinds[k] for k in urgent), urgent=tuple(Count(k, kinds[k]) for k in urgent),
        other_anomalies=sum(kinds.values()) - sum(kinds[k] for k in urgent),
        late=tuple(LateWork(s, lateness(secs), float(data.penalties.get((s, a), 0.0)))
                   for (s, a), secs in sorted(data.late.items())),
        extensions=tuple(Extension(s, a, due) for (s, a), due in sorted(data.extensions.items())),
        changes=tuple(GradeChange(key, old, new) for key, old, new in data.grade_changes),
        pairs=pairs)


def glance(data: ClassData, ranked: list[Exercise], faults: list[list[str]], pairs: int) -> Glance:
    """The first screen: how did the class do, what to reteach, what needs me now.

    Parameters
    ----------
    data : ClassData
        The class.
    ranked : list[Exercise]
        Every exercise, hardest first (:func:`~autograder.reporting.class_tally.exercises`).
    faults : list[list[str]]
        The fault rows (:attr:`Tally.faults`: student, assignment, notebook, kind, detail).
    pairs : int
        How many suspicious pairs were found.
    """
    return Glance(len(data.students), len(data.verdicts), _notebook_table(data), _reteach(ranked),
                  _needs_me_now(data, faults, pairs))


# --- the detail -------------------------------------------------------------------------------


def difficulty_table(ranked: list[Exercise]) -> Table:
    """The "difficulty" table: every exercise, hardest first, with its commonest named mistake."""
    rows = []
    for ex in ranked:
        common = ex.commonest()
        rows.append([Cell(ex.notebook), Cell(ex.function), Cell(_pct(len(ex.passed), ex.answered), ex.rate),
                     _counted(len(ex.passed)), _counted(len(ex.failed)),
                     Cell(mistake_label(common[0], short=False) if common else ""),
                     _counted(common[1] if common else 0)])
    return _table("difficulty", ["notebook", "exercise", "pass rate", "passed", "failed", "most common mistake",
                                 "students who made it"], rows)


def queue_table(data: ClassData, base: Path) -> Table:
    """The "queue" table: every answer awaiting hand-grading, its notebook linked to its feedback page."""
    rows = [[Cell(w.student), Cell(data.name(w.student)), Cell(w.assignment),
             _feedback_cell(data, base, w.student, w.assignment, w.notebook, w.notebook), Cell(w.grade_id)]
            for w in data.awaiting]
    return _table("queue", ["student", "name", "assignment", "notebook", "answer"], rows)


def history_table(data: ClassData) -> Table:
    """The "history" table: mistakes made before a resubmission replaced them (:func:`history_rows`)."""
    rows = [row for (s, a, nb), v in sorted(data.verdicts.items()) for row in history_rows(data, s, a, nb, v)]
    return _plain_table("history", ["student", "name", "notebook", "exercise", "mistake before", "now"], rows)


def changes_table(data: ClassData) -> Table:
    """The "changes" table: every final score the last grading run changed, old and new."""
    rows = [[*key.split("/", 1), data.name(key.split("/", 1)[0]), f"{old:g}", f"{new:g}", f"{new - old:+g}"]
            for key, old, new in data.grade_changes]
    return _plain_table("changes", ["student", "assignment", "name", "old", "new", "change"], rows)


def _scores_of(data: ClassData, a: str, nb: str) -> dict[str, tuple[float, float]]:
    """student -> (score, maximum) of one notebook, from the gradebook."""
    return {s: v for (s, a2, n), v in data.notebook_scores.items() if a2 == a and n == nb}


def students_table(data: ClassData, base: Path) -> Table:
    """The "students" table: every student's score per notebook (linked to its feedback page) and total."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    assignment_of: dict[tuple[str, str], str] = {}
    for a in data.assignments:
        for nb in notebooks_of(a, data.ws.course):
            for s, (sc, _) in _scores_of(data, a, nb).items():
                scores[s][nb] = sc
                assignment_of[(s, nb)] = a
    nbs = sorted({n for _, _, n in data.notebook_scores})
    rows = []
    for s in sorted(scores):
        cells = []
        for n in nbs:
            sc = scores[s].get(n)
            text = f"{sc or 0:g}"
            cells.append(_feedback_cell(data, base, s, assignment_of[(s, n)], n, text, sc or 0) if sc is not None
                         else Cell(text, sc or 0))
        total = sum(scores[s].values())
        rows.append([Cell(s), Cell(data.name(s)), *cells, Cell(f"{total:g}", total)])
    return _table("students", ["student", "name", *nbs, "total"], rows)


def _exercise_figures(data: ClassData, a: str, nb: str) -> list[Figure]:
    """One histogram per exercise of a notebook: its students' summed cell scores."""
    ex_of = exercise_of(a, nb, data.ws.course)
    per_ex: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    for (s, a2, n, gid), (sc, mx) in data.cell_scores.items():
        if a2 == a and n == nb:
            acc = per_ex[ex_of.get(gid, gid)][s]
            acc[0] += sc or 0.0
            acc[1] += mx or 0.0
    figures = []
    for ex, by_student in per_ex.items():
        values = [v[0] for v in by_student.values()]
        top = max(v[1] for v in by_student.values())
        figures.append(Figure(histogram(values, top, f"scores of {ex} in {nb}"), f"{nb} · {ex}"))
    return figures


def score_groups(data: ClassData) -> tuple[ScoreGroup, ...]:
    """The score distributions: per graded notebook, the whole notebook's histogram, then each exercise's."""
    groups = []
    for a in data.assignments:
        for nb in notebooks_of(a, data.ws.course):
            entries = _scores_of(data, a, nb)
            if not entries:
                continue
            top = max(m for _, m in entries.values())
            values = [sc for sc, _ in entries.values()]
            mean = sum(values) / len(values)
            whole = Figure(histogram(values, top, f"scores in {nb}"),
                           f"{nb}: whole notebook (mean {mean:.2f} of {top:g})")
            groups.append(ScoreGroup(a, nb, (whole, *_exercise_figures(data, a, nb))))
    return tuple(groups)


def checks_table(counted: Tally) -> Table:
    """The "checks" table: every check's passes, failures, stubs and pass rate, by notebook."""
    from selfattn.checks.record import REGISTRY

    passed, failed, unanswered, where = counted.passed, counted.failed, counted.unanswered, counted.where
    rows = []
    for cid in sorted(set(passed) | set(failed) | set(unanswered), key=lambda c: (where.get(c, ""), c)):
        answered = passed[cid] + failed[cid]
        rate = passed[cid] / answered if answered else 0.0
        desc = REGISTRY[cid].description if cid in REGISTRY else ""
        rows.append([Cell(where.get(cid, "")), Cell(cid), Cell(desc), _counted(passed[cid]), _counted(failed[cid]),
                     _counted(unanswered[cid]),
                     Cell(f"{100 * rate:.0f}%" if answered else "–", rate if answered else -1)])
    return _table("checks", ["notebook", "check", "what it checks", "passed", "failed", "not answered", "pass rate"],
                  rows)


def _mistakes_table(table_id: str, found: dict[tuple[str, str], set[str]]) -> Table:
    """A table of mistakes, (exercise, mistake) -> who made it, commonest first; the "mistakes"
    table words each named mistake as the course does now."""
    rows = [[Cell(fn), Cell(mistake_label(key, short=False) if table_id == "mistakes" else key),
             _counted(len(who)), Cell(_who(who))]
            for (fn, key), who in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    return _table(table_id, ["exercise", "mistake", "students", "who"], rows)


def mistakes(counted: Tally) -> Mistakes:
    """The named mistakes (the ten commonest, then the "mistakes" table) and the failures without
    a name (the "unnamed-failures" table)."""
    commonest = tuple(MistakeCount(code_spans(mistake_label(key)), len(who), fn)
                      for (fn, key), who in sorted(counted.named.items(), key=lambda kv: -len(kv[1]))[:10])
    return Mistakes(commonest, _mistakes_table("mistakes", counted.named),
                    _mistakes_table("unnamed-failures", counted.unnamed))


def faults(rows: list[list[str]]) -> Faults:
    """Faults and anomalies (:attr:`Tally.faults`): counted by kind, then the "faults" table."""
    kinds = Counter(row[3] for row in rows)
    table = _plain_table("faults", ["student", "assignment", "notebook", "kind", "detail"], rows) if rows else None
    return Faults(tuple(Count(k, n) for k, n in sorted(kinds.items())), table, len(rows) > FOLD_FAULTS)


def similar_answers(found: list[FoundPair], not_compared: list[str]) -> Similarity:
    """The suspicious pairs (:func:`~autograder.reporting.answer_pairs.find_pairs`): the "similarity"
    table, the clusters of each exercise and every pair's answers side by side."""
    rows = [[Cell(f.assignment), Cell(f.notebook), Cell(f.pair.exercise), Cell(f.pair.a), Cell(f.pair.b),
             Cell(f"{f.pair.score:.0%}", f.pair.score), Cell(f.pair.shared)] for f in found]
    table = _table("similarity", ["assignment", "notebook", "exercise", "student", "student", "similarity",
                                  "shared fingerprints"], rows)
    by_exercise: dict[tuple[str, str, str], list[similarity.Pair]] = defaultdict(list)
    for f in found:
        by_exercise[(f.assignment, f.notebook, f.pair.exercise)].append(f.pair)
    clusters = tuple(Cluster(nb, ex, tuple(group)) for (_a, nb, ex), ps in by_exercise.items()
                     for group in similarity.clusters(ps))
    pairs = tuple(SideBySide(f.notebook, f.pair.exercise, f.pair.a, f.pair.b, f"{f.pair.score:.0%}", f.answer_a,
                             f.answer_b) for f in found)
    return Similarity(f"{similarity.THRESHOLD:.0%}", tuple(not_compared), table, clusters, pairs)


def report_page(data: ClassData, base: Path, generated: str) -> ReportPage:
    """The whole report of ``data``.

    Parameters
    ----------
    data : ClassData
        The class.
    base : Path
        The folder the page is written to: its links to the feedback pages are relative to it.
    generated : str
        When the report is made (UTC, "2026-11-03 12:00").
    """
    import autograder.hidden_checks  # noqa: F401 - registers the hidden checks' descriptions

    ranked = exercises(data)
    counted = tally(data)
    not_compared: list[str] = []
    found = find_pairs(data, not_compared)
    return ReportPage(
        assignments=tuple(data.assignments), generated=generated,
        glance=glance(data, ranked, counted.faults, len(found)),
        difficulty=difficulty_table(ranked), queue=queue_table(data, base), history=history_table(data),
        changes=changes_table(data), students=students_table(data, base), scores=score_groups(data),
        checks=checks_table(counted), mistakes=mistakes(counted), faults=faults(counted.faults),
        similarity=similar_answers(found, not_compared))
