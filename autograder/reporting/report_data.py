"""The class report as data: one frozen value per section (:class:`ReportPage` holds them all),
built by :mod:`autograder.reporting.report_sections` and drawn by the template
``autograder/templates/class_report.html.j2`` (:mod:`autograder.reporting.report_html`).

Every string here is plain text exactly as it was read (a student id, a name, an answer, a
message): nothing is escaped or marked up in Python, and the template escapes all of it. A
Markdown code span in a message ("fix `softmax`") is kept as a :class:`Span` marked ``code``, so
that the template shows it as code. What the page only says in fixed words (section titles, the
sentences explaining them) is the template's; what is computed from the class is here: numbers,
tables (each also a CSV file, :data:`CSV_TABLES`), links, histograms and lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from autograder.reporting.histogram import Histogram

#: the CSV files written next to the page: file name -> the id of its table (:attr:`Table.id`)
CSV_TABLES = {"students.csv": "students", "exercises.csv": "difficulty", "hand-grading.csv": "queue",
              "fixed-mistakes.csv": "history", "checks.csv": "checks", "mistakes.csv": "mistakes",
              "faults.csv": "faults", "similarity.csv": "similarity", "notebooks.csv": "notebooks",
              "grade-changes.csv": "changes"}

# a Markdown code span in a message (grading notes are Markdown: "fix `softmax`")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class Span:
    """A piece of a message: plain ``text``, shown as code when ``code``."""

    text: str
    code: bool = False


def code_spans(text: str) -> tuple[Span, ...]:
    """``text`` cut at its Markdown code spans: the backticked parts as code (without the
    backticks), the rest as plain text; ``()`` for an empty text."""
    spans, at = [], 0
    for found in _CODE_SPAN.finditer(text):
        if found.start() > at:
            spans.append(Span(text[at:found.start()]))
        spans.append(Span(found.group(1), code=True))
        at = found.end()
    if at < len(text):
        spans.append(Span(text[at:]))
    return tuple(spans)


@dataclass(frozen=True)
class Link:
    """A link: its ``text`` and where it goes (``href``, already URL-quoted)."""

    text: str
    href: str


@dataclass(frozen=True)
class Cell:
    """One table cell: ``value`` is what it says (``str(value)``, its code spans shown as code) and
    what its CSV file holds; ``sort`` the key its column sorts it by when that is not its text
    (a number, say); ``href`` a page its text links to (shown as it is, no code spans)."""

    value: str | int | float
    sort: str | int | float | None = None
    href: str | None = None

    @property
    def spans(self) -> tuple[Span, ...]:
        """The shown text, cut at its code spans (:func:`code_spans`)."""
        return code_spans(str(self.value))


@dataclass(frozen=True)
class Table:
    """One sortable table: ``id`` names it (its CSV file's, :data:`CSV_TABLES`), ``headers`` its
    columns (each cell shows its column's name on a phone) and ``rows`` its cells, one tuple per row."""

    id: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]

    def csv(self) -> tuple[list[str], list[list[object]]]:
        """(header, rows of cell values): what its CSV file holds."""
        return list(self.headers), [[c.value for c in row] for row in self.rows]


@dataclass(frozen=True)
class Count:
    """How many of one kind (a kind of fault, say): ``what`` and ``count``."""

    what: str
    count: int


@dataclass(frozen=True)
class ReteachItem:
    """One of the hardest exercises: ``passed`` of ``answered`` students passed (``share``, "40%"),
    with its commonest named mistake (``mistake``, None when none has a name) and how many made it."""

    function: str
    notebook: str
    passed: int
    answered: int
    share: str
    mistake: tuple[Span, ...] | None
    mistake_students: int


@dataclass(frozen=True)
class Waiting:
    """A student with answers awaiting hand-grading, and their notebooks' numbers ("04")."""

    student: str
    notebooks: tuple[str, ...]


@dataclass(frozen=True)
class LateWork:
    """A late hand-in: who, how late ("2 h") and the penalty (points)."""

    student: str
    lateness: str
    penalty: float


@dataclass(frozen=True)
class Extension:
    """An extension: who, of which assignment, and the due date it gives ("2026-11-03 12:00 UTC")."""

    student: str
    assignment: str
    due: str


@dataclass(frozen=True)
class GradeChange:
    """A final score the last grading run changed: ``key`` ("student/assignment"), old and new points."""

    key: str
    old: float
    new: float


@dataclass(frozen=True)
class NeedsMeNow:
    """The first screen's third question: answers awaiting hand-grading (``awaiting``, by student
    in ``waiting``), faults (the urgent kinds counted in ``urgent``, ``faults`` their sum; the
    rest ``other_anomalies``), late work, extensions, changed grades and similar pairs."""

    awaiting: int
    waiting: tuple[Waiting, ...]
    faults: int
    urgent: tuple[Count, ...]
    other_anomalies: int
    late: tuple[LateWork, ...]
    extensions: tuple[Extension, ...]
    changes: tuple[GradeChange, ...]
    pairs: int


@dataclass(frozen=True)
class Glance:
    """The first screen: how did the class do (``students``, ``graded`` notebooks, the ``notebooks``
    table), what to reteach (the three hardest exercises someone failed) and what needs me now."""

    students: int
    graded: int
    notebooks: Table
    reteach: tuple[ReteachItem, ...]
    now: NeedsMeNow


@dataclass(frozen=True)
class Figure:
    """A histogram with its caption."""

    histogram: Histogram
    caption: str


@dataclass(frozen=True)
class ScoreGroup:
    """The score distributions of one notebook: the whole notebook's, then each exercise's."""

    assignment: str
    notebook: str
    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class MistakeCount:
    """A named mistake in the list of the commonest: its short wording, how many students made it,
    in which exercise."""

    label: tuple[Span, ...]
    students: int
    function: str


@dataclass(frozen=True)
class Mistakes:
    """The named mistakes (the ten commonest, then the ``named`` table) and the failures without a
    name (the ``unnamed`` table)."""

    commonest: tuple[MistakeCount, ...]
    named: Table
    unnamed: Table


@dataclass(frozen=True)
class Faults:
    """Faults and anomalies counted by kind, and their table (None when there are none; ``folded``:
    so many rows that the table starts closed)."""

    kinds: tuple[Count, ...]
    table: Table | None
    folded: bool


@dataclass(frozen=True)
class Cluster:
    """Students whose answers to one exercise are all pairwise similar."""

    notebook: str
    exercise: str
    students: tuple[str, ...]


@dataclass(frozen=True)
class SideBySide:
    """One suspicious pair's answers, to read side by side: students ``a`` and ``b``, their
    ``similarity`` ("87%") and their answers' sources."""

    notebook: str
    exercise: str
    a: str
    b: str
    similarity: str
    answer_a: str
    answer_b: str


@dataclass(frozen=True)
class Similarity:
    """Similar answers: the ``threshold`` a pair reaches ("70%"), what was ``not_compared`` (one
    line each), the pairs' table, their clusters and each pair side by side."""

    threshold: str
    not_compared: tuple[str, ...]
    table: Table
    clusters: tuple[Cluster, ...]
    pairs: tuple[SideBySide, ...]


@dataclass(frozen=True)
class ReportPage:
    """The whole class report: the first screen, then each detail section in the page's order.
    ``generated`` is when (UTC, "2026-11-03 12:00")."""

    assignments: tuple[str, ...]
    generated: str
    glance: Glance
    difficulty: Table
    queue: Table
    history: Table
    changes: Table
    students: Table
    scores: tuple[ScoreGroup, ...]
    checks: Table
    mistakes: Mistakes
    faults: Faults
    similarity: Similarity

    def tables(self) -> tuple[Table, ...]:
        """Every table of the page, in its order (the faults' only when there are faults)."""
        faults = (self.faults.table,) if self.faults.table is not None else ()
        return (self.glance.notebooks, self.difficulty, self.queue, self.history, self.changes, self.students,
                self.checks, self.mistakes.named, self.mistakes.unnamed, *faults, self.similarity.table)

    @property
    def csv_links(self) -> tuple[Link, ...]:
        """A link to each CSV file of :data:`CSV_TABLES` whose table the page has."""
        ids = {t.id for t in self.tables()}
        return tuple(Link(name, quote(name)) for name, table in CSV_TABLES.items() if table in ids)
