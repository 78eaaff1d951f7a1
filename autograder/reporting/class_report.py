"""The class report: ``python -m autograder.report`` (``make report``, also run by ``make grade``).

One self-contained HTML page, ``report/index.html`` in the work folder, from the verdicts (what
each check said), the gradebook (the trusted scores, the names, the hand-grading queue) and the
history of replaced verdicts (:mod:`autograder.verdicts.history`). Its first screen answers the
instructor's three questions: how did the class do (mean, median and completion per notebook),
what to reteach (the hardest exercises, each with its most common named mistake), and what needs
me now (answers awaiting hand-grading, faults, suspicious similarity). Then the detail: the
difficulty ranking of exercises, the hand-grading queue, mistakes made before a resubmission fixed
them, every student (name, scores, a link to each feedback page), score distributions, the pass
rate of every check, the named mistakes counted with who made them, unnamed failures, faults and
anomalies, and suspiciously similar answers (:mod:`autograder.reporting.similarity`) side by side. Every
table is also written as a CSV file next to the page (:data:`CSV_TABLES`).

The page loads nothing from anywhere (inline SVG, CSS and a few lines of JavaScript to sort
tables; a Content-Security-Policy forbids the rest), and every piece of student-derived text is
HTML-escaped (:mod:`autograder.reporting.report_html`): student ids, answers and messages are hostile
input. The page's body then passes the report's allow-list (:func:`autograder.outputs.sanitise.report_fragment`):
only the report's own elements, ids and classes survive, whatever an escape missed. On a narrow
screen (a phone) each table row becomes a block of labelled lines, so no column is clipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import quote

from autograder.course.spec import answer_cells, exercise_of, notebooks_of, release_path
from autograder.errors import RefusedInput, command_line
from autograder.late.policy import final_score, lateness
from autograder.nbgrader_ext.gradebook_state import Awaiting
from autograder.notes import Note, NoteKind, notes_of, records
from autograder.outputs import atomic, json_files
from autograder.outputs.csv_export import write_csv
from autograder.outputs.sanitise import report_fragment
from autograder.reporting import similarity
from autograder.reporting.report_html import CSP, SCRIPT, STYLE, Link, e, histogram, plain, table, text_cell
from autograder.verdicts import history
from autograder.workspace import Workspace, from_environment
from selfattn.checks.findings import FAULTS, Finding, Kind, hidden_exception_name

# --- what a check's message or a grading note means ------------------------------------------

#: The report's word for each kind of failure that got no answer to judge.
FAULT_WORDS = {Kind.TIME_OUT: "time-out", Kind.MEMORY: "memory cap", Kind.PROCESSES: "process cap",
               Kind.DISK: "disk cap", Kind.CRASHED: "crash", Kind.REFUSED: "crash", Kind.NOT_ANSWERED: "not answered"}


def classify(stored: object) -> tuple[str, str]:
    """(kind, key) of a failed check as its verdict stores it (:meth:`Finding.to_json`): kind is a
    fault, ``named`` (a named mistake: the key is its stable id, or its wording in a verdict written
    before mistakes had ids; :func:`mistake_label` shows it) or ``unnamed`` (the key is the fixed
    wording of what was wrong). Read from the finding's data, never from its message."""
    found = Finding.from_json(stored)
    if found.kind in FAULT_WORDS:
        return FAULT_WORDS[found.kind], found.kind.value
    if found.kind is Kind.MISTAKE and found.name:
        return "named", found.id or found.name
    if found.kind is Kind.RAISED:
        return "unnamed", f"raised {found.name}" if hidden_exception_name(found.name or "") else Kind.RAISED.value
    return "unnamed", found.kind.value


def mistake_label(key: str, short: bool = True) -> str:
    """How the report names a named mistake counted under ``key`` (:func:`classify`): the course's
    current wording of that id (a verdict's wording, for a key that is no id), ``short``: up to its
    first colon."""
    from selfattn.checks.exercises import EXERCISES

    record = EXERCISES.get(key.partition("/")[0])
    wording = (record.wording(key) if record is not None else None) or key
    return wording.split(":")[0] if short else wording


def note_kind(stored: object) -> str:
    """The report's word for a grading note as a verdict stores it (:meth:`Note.record`; a bare
    string, as older verdicts hold, is an "other note"): its kind's, never read from its text."""
    return Note.from_json(stored).kind.value


# --- the data -------------------------------------------------------------------------------------


@dataclass
class ClassData:
    """Everything the report shows, read from the work folder."""

    verdicts: dict[tuple[str, str, str], dict] = field(default_factory=dict)  # (student, assignment, nb)
    notebook_scores: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)
    cell_scores: dict[tuple[str, str, str, str], tuple[float, float]] = field(default_factory=dict)
    late: dict[tuple[str, str], float] = field(default_factory=dict)  # seconds late
    penalties: dict[tuple[str, str], float] = field(default_factory=dict)  # late penalty (points) per submission
    extensions: dict[tuple[str, str], str] = field(default_factory=dict)  # the due date an extension gives
    students: list[str] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # student id -> "First Last" (the roster's)
    awaiting: list[Awaiting] = field(default_factory=list)  # the hand-grading queue
    #: (student/assignment, old, new): final scores the last grading run changed (points, checks,
    #: hand grades, extensions), as it recorded them in the run state
    grade_changes: list[tuple[str, float, float]] = field(default_factory=list)
    ws: Workspace = field(kw_only=True)  # where it was read (the feedback pages and staged answers it links to)


def _gradebook(data: ClassData) -> None:
    """Scores from nbgrader's gradebook (the trusted record), read in a few queries (not one per
    notebook and grade, as walking nbgrader's objects does), in the order that walk had."""
    from nbgrader.api import Gradebook

    from autograder.nbgrader_ext.gradebook_state import awaiting_hand_grading
    from autograder.nbgrader_ext.gradebook_state import load as load_state
    from autograder.nbgrader_ext.steps import nbgrader_api

    api = nbgrader_api(ws=data.ws)
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        for student in gb.students:
            name = " ".join(x for x in (student.first_name, student.last_name) if x)
            if name:
                data.names[student.id] = name
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                student = sub.student.id
                if sub.total_seconds_late and sub.total_seconds_late > 0:
                    data.late[(student, assignment.name)] = float(sub.total_seconds_late)
                    data.penalties[(student, assignment.name)] = float(sub.late_submission_penalty or 0.0)
                if sub.extension and assignment.duedate is not None:
                    data.extensions[(student, assignment.name)] = sub.duedate.strftime("%Y-%m-%d %H:%M UTC")
            for student, nb, score, penalty, most in _gradebook_notebooks(gb, assignment.id):
                # the final score: after the late penalty
                data.notebook_scores[(student, assignment.name, nb)] = (final_score(score, penalty), most)
            for student, nb, cell, score, most in _gradebook_grades(gb, assignment.id):
                data.cell_scores[(student, assignment.name, nb, cell)] = (score, most)
    data.awaiting = awaiting_hand_grading(api.coursedir.db_url)
    data.grade_changes = [(str(k), float(old), float(new))
                          for k, old, new in load_state(data.ws).get("grade_changes", [])]


def _gradebook_notebooks(gb, assignment_id: str) -> list[tuple]:
    """(student, notebook, score, late penalty, max score) of every submitted notebook of one
    assignment, in the order nbgrader's relationships list them (submission, then notebook, as
    stored), in one query."""
    from nbgrader.api import Notebook, Student, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import literal_column, select

    q = (select(Student.id, Notebook.name, SubmittedNotebook.score, SubmittedNotebook.late_submission_penalty,
                SubmittedNotebook.max_score)
         .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
         .join(Student, SubmittedAssignment.student_id == Student.id)
         .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
         .where(SubmittedAssignment.assignment_id == assignment_id)
         .order_by(literal_column("submitted_assignment.rowid"), literal_column("submitted_notebook.rowid")))
    return [tuple(row) for row in gb.db.execute(q)]


def _gradebook_grades(gb, assignment_id: str) -> list[tuple]:
    """(student, notebook, grade id, score, max score) of every grade of one assignment, in the
    order nbgrader's relationships list them (submission, notebook, grade, as stored), in one query."""
    from nbgrader.api import BaseCell, Grade, Notebook, Student, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import literal_column, select

    q = (select(Student.id, Notebook.name, BaseCell.name, Grade.score, Grade.max_score)
         .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
         .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
         .join(Student, SubmittedAssignment.student_id == Student.id)
         .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
         .join(BaseCell, Grade.cell_id == BaseCell.id)
         .where(SubmittedAssignment.assignment_id == assignment_id)
         .order_by(literal_column("submitted_assignment.rowid"), literal_column("submitted_notebook.rowid"),
                   literal_column("grade.rowid")))
    return [tuple(row) for row in gb.db.execute(q)]


def load(gradebook: bool = True, *, ws: Workspace) -> ClassData:
    """The verdicts of ``ws`` and (with ``gradebook``) the scores of its gradebook."""
    data = ClassData(ws=ws)
    for path in sorted(ws.verdicts.glob("*/*/*.json")) if ws.verdicts.exists() else []:
        key = (path.parent.parent.name, path.parent.name, path.stem)
        try:
            data.verdicts[key] = json_files.read(path, "verdict")
        except (ValueError, OSError):
            data.verdicts[key] = {"cells": {}, "notes": records([Note("The verdict file could not be read.")])}
    if gradebook:
        _gradebook(data)
    keys = set(data.verdicts) | set(data.notebook_scores)
    data.students = sorted({s for s, _, _ in keys})
    data.assignments = sorted({a for _, a, _ in keys})
    return data


# --- the sections ---------------------------------------------------------------------------------


def _who(students: set[str] | list[str]) -> str:
    return ", ".join(sorted(students))


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


#: the CSV files written next to the page: file name -> the table's id on the page
CSV_TABLES = {"students.csv": "students", "exercises.csv": "difficulty", "hand-grading.csv": "queue",
              "fixed-mistakes.csv": "history", "checks.csv": "checks", "mistakes.csv": "mistakes",
              "faults.csv": "faults", "similarity.csv": "similarity", "notebooks.csv": "notebooks",
              "grade-changes.csv": "changes"}


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


def _function(cid: str) -> str:
    from selfattn.checks.record import REGISTRY

    return REGISTRY[cid].function if cid in REGISTRY else cid.split("/")[0]


def _checks_by_function(verdict: dict) -> dict[str, list[object]]:
    """A verdict's stored check results grouped by the graded function they check.

    Parameters
    ----------
    verdict : dict
        One verdict as stored (its ``checks``: check id -> ``None`` if passed, else a finding record).

    Returns
    -------
    dict[str, list[object]]
        function name -> its checks' stored results, in the verdict's order.
    """
    by_fn: dict[str, list[object]] = defaultdict(list)
    for cid, msg in (verdict.get("checks") or {}).items():
        by_fn[_function(cid)].append(msg)
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


def _feedback_link(s: str, a: str, nb: str, text: str, base: Path, ws: Workspace) -> Link | str:
    page = ws.feedback / s / a / f"{nb}.html"
    if not page.exists():
        return text
    rel = os.path.relpath(page.parent, base)
    return Link(text, "/".join(quote(part) for part in Path(rel).parts) + f"/{quote(nb)}.html")


def _name(data: ClassData, s: str) -> str:
    return data.names.get(s, "")


#: A table recorder: ``tab(id, headers, rows)`` keeps the header and the rows' CSV values under
#: ``id`` and returns the table's HTML (:func:`_tab` bound to one ``tables`` dict).
_Tab = Callable[[str, list[str], list[list[object]]], str]


def _tab(tables: dict[str, tuple[list[str], list[list]]], name: str, headers: list[str],
         rows: list[list[object]]) -> str:
    """One table of the page: its header and rows' plain values go to ``tables[name]`` (a CSV file
    of :data:`CSV_TABLES`), its HTML is returned."""
    tables[name] = (headers, [[plain(c) for c in r] for r in rows])
    return table(headers, rows)


@dataclass
class _Tally:
    """What the verdicts' checks and notes add up to (check id keys; (function, key) -> who)."""

    passed: Counter = field(default_factory=Counter)  # check id -> notebooks it passed in
    failed: Counter = field(default_factory=Counter)  # check id -> answered, failed
    unanswered: Counter = field(default_factory=Counter)  # check id -> stub or function missing
    where: dict[str, str] = field(default_factory=dict)  # check id -> its notebook
    named: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    unnamed: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    faults: list[list[object]] = field(default_factory=list)  # [student, assignment, notebook, kind, detail]


def _count_checks(tally: _Tally, s: str, a: str, nb: str, checks: dict) -> None:
    """Add one verdict's checks to ``tally``: passes, failures and stubs per check, named and
    unnamed mistakes with the student, and one fault row per (function, kind of fault).

    Parameters
    ----------
    tally : _Tally
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
        fn = _function(cid)
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


def _verdict_anomalies(s: str, a: str, nb: str, v: dict) -> list[list[object]]:
    """Fault rows of one verdict beyond its checks: each grading note, and "blank notebook" when
    every exercise still holds the stub (some check failed, none passed, all of them stubs)."""
    rows: list[list[object]] = [[s, a, nb, note.kind.value, str(note)] for note in notes_of(v)]
    if v.get("checks") and all(classify(m)[0] == "not answered" for m in v["checks"].values()
                               if m is not None) and not any(m is None for m in v["checks"].values()):
        rows.append([s, a, nb, "blank notebook", "every exercise still holds the stub"])
    return rows


def _missing_and_late(data: ClassData) -> list[list[object]]:
    """Fault rows of hand-ins: the notebooks missing from an assignment someone handed in (one row
    per student and assignment), then the hand-ins past the due date (hours late)."""
    rows: list[list[object]] = []
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


def _tally(data: ClassData) -> _Tally:
    """Every verdict's checks and anomalies counted, in student order; the fault rows end with the
    missing and late hand-ins and are merged across notebooks (:func:`_merge_notebooks`)."""
    tally = _Tally()
    for (s, a, nb), v in sorted(data.verdicts.items()):
        _count_checks(tally, s, a, nb, v.get("checks") or {})
        tally.faults.extend(_verdict_anomalies(s, a, nb, v))
    tally.faults = _merge_notebooks(tally.faults + _missing_and_late(data), data.ws.course)
    return tally


def _handed_and_complete(data: ClassData) -> tuple[dict[tuple[str, str], set[str]], dict[tuple[str, str], set[str]]]:
    """Who handed in each (assignment, notebook) (a verdict without a "missing notebook" note) and
    who of them answered every exercise (no check reports "not answered")."""
    handed: dict[tuple[str, str], set[str]] = defaultdict(set)
    complete: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (s, a, nb), v in data.verdicts.items():
        if any(n.kind is NoteKind.MISSING for n in notes_of(v)):
            continue
        handed[(a, nb)].add(s)
        checks = v.get("checks") or {}
        if checks and all(m is None or classify(m)[0] != "not answered" for m in checks.values()):
            complete[(a, nb)].add(s)
    return handed, complete


def _notebook_rows(data: ClassData) -> list[list[object]]:
    """The "notebooks" table: per notebook someone handed in, mean and median score of the
    maximum, how many completed it (of the class) and how many handed it in."""
    handed, complete = _handed_and_complete(data)
    class_size = len(data.students)
    rows: list[list[object]] = []
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
            rows.append([nb, (f"{mean:.2f} / {top:g}", mean), (f"{median:g} / {top:g}", median),
                         (f"{done}/{class_size} ({_pct(done, class_size)})", done),
                         (len(handed[(a, nb)]), len(handed[(a, nb)]))])
    return rows


def _how_did_the_class_do(data: ClassData, tab: _Tab) -> str:
    """First screen, question one: class size, graded notebooks and the "notebooks" table."""
    return ("<div><h2 id=\"how\">How did the class do</h2>"
            f"<p>{len(data.students)} students, {len(data.verdicts)} graded notebooks.</p>"
            + tab("notebooks", ["notebook", "mean", "median", "completed", "handed in"], _notebook_rows(data))
            + '<p class="muted">Completed: every exercise answered.</p></div>')


def _what_to_reteach(ranked: list[Exercise]) -> str:
    """First screen, question two: the three hardest exercises someone failed, each with its
    commonest named mistake."""
    hardest = [ex for ex in ranked if ex.failed][:3]
    if hardest:
        items = []
        for ex in hardest:
            common = ex.commonest()
            because = (f"; most common mistake: {text_cell(mistake_label(common[0]))} ({common[1]} student"
                       f"{'s' * (common[1] != 1)})" if common else "; no named mistake (read the answers)")
            items.append(f"<li><b>{e(ex.function)}</b> ({e(ex.notebook)}): {len(ex.passed)} of {ex.answered} "
                         f"passed ({_pct(len(ex.passed), ex.answered)}){because}</li>")
        reteach = "<ul>" + "".join(items) + "</ul>"
    else:
        reteach = "<p>Every answered exercise passed.</p>"
    return ("<div><h2 id=\"reteach\">What to reteach</h2>" + reteach
            + '<p><a href="#difficulty">every exercise, hardest first</a></p></div>')


def _what_needs_me_now(data: ClassData, faults: list[list[object]], pairs: list) -> str:
    """First screen, question three: answers awaiting hand-grading (by student), faults (the
    urgent kinds counted apart from other anomalies) and suspicious pairs."""
    kinds = Counter(row[3] for row in faults)
    by_student: dict[str, list[str]] = defaultdict(list)
    for w in data.awaiting:
        by_student[w.student].append(w.notebook.split("-")[0])
    waiting = "; ".join(f"{e(st)}: {e(', '.join(sorted(set(nbs))))}" for st, nbs in sorted(by_student.items()))
    urgent = [k for k in (*dict.fromkeys(word for kind, word in FAULT_WORDS.items() if kind in FAULTS),
                          NoteKind.GRADER_ERROR.value, NoteKind.UNREADABLE.value) if kinds.get(k)]
    return ("<div><h2 id=\"now\">What needs me now</h2><ul>"
            f"<li><a href=\"#queue\">written answers awaiting hand-grading</a>: <span class=\"big\">"
            f"{len(data.awaiting)}</span>{' — ' + waiting if waiting else ''}</li>"
            f"<li><a href=\"#faults\">faults</a>: <span class=\"big\">{sum(kinds[k] for k in urgent)}</span>"
            + (" (" + ", ".join(f"{e(k)}: {kinds[k]}" for k in urgent) + ")" if urgent else "")
            + f"; other anomalies: {sum(kinds.values()) - sum(kinds[k] for k in urgent)}</li>"
            f"<li><a href=\"#faults\">late work</a>: <span class=\"big\">{len(data.late)}</span>"
            + (" — " + "; ".join(f"{e(s)}: {lateness(secs)}, &minus;{data.penalties.get((s, a), 0):g} points"
                                 for (s, a), secs in sorted(data.late.items())) if data.late else "")
            + f"; extensions: {len(data.extensions)}"
            + (" — " + "; ".join(f"{e(s)} ({e(a)}): due {e(d)}" for (s, a), d in sorted(data.extensions.items()))
               if data.extensions else "") + "</li>"
            f"<li><a href=\"#changes\">grades changed by the last run</a>: <span class=\"big\">"
            f"{len(data.grade_changes)}</span>"
            + (" — " + "; ".join(f"{e(k)}: {old:g} &rarr; {new:g}" for k, old, new in data.grade_changes)
               if data.grade_changes else "") + "</li>"
            f"<li><a href=\"#similarity\">suspiciously similar answers</a>: <span class=\"big\">{len(pairs)}</span>"
            f" pair{'s' * (len(pairs) != 1)}</li></ul></div>")


def _first_screen(data: ClassData, ranked: list[Exercise], faults: list[list[object]], pairs: list,
                  tab: _Tab) -> str:
    """The first screen: the instructor's three questions side by side."""
    how = _how_did_the_class_do(data, tab)
    return (f'<section id="glance" class="glance">{how}{_what_to_reteach(ranked)}'
            f'{_what_needs_me_now(data, faults, pairs)}</section>')


def _difficulty_section(ranked: list[Exercise], tab: _Tab) -> str:
    """The "difficulty" table: every exercise, hardest first, with its commonest named mistake."""
    rows = []
    for ex in ranked:
        common = ex.commonest()
        rows.append([ex.notebook, ex.function, (_pct(len(ex.passed), ex.answered), ex.rate),
                     (len(ex.passed), len(ex.passed)), (len(ex.failed), len(ex.failed)),
                     mistake_label(common[0], short=False) if common else "",
                     (common[1] if common else 0, common[1] if common else 0)])
    return ("<section id=\"difficulty\"><h2>Exercises, hardest first</h2><p class=\"muted\">Passed: every "
            "check of the exercise passed; among the students who answered it.</p>"
            + tab("difficulty", ["notebook", "exercise", "pass rate", "passed", "failed",
                                 "most common mistake", "students who made it"], rows) + "</section>")


def _queue_section(data: ClassData, base: Path, tab: _Tab) -> str:
    """The "queue" table: every answer awaiting hand-grading, its notebook linked to its feedback page."""
    rows = [[w.student, _name(data, w.student), w.assignment,
             _feedback_link(w.student, w.assignment, w.notebook, w.notebook, base, data.ws), w.grade_id]
            for w in data.awaiting]
    return ("<section id=\"queue\"><h2>Hand-grading queue</h2><p class=\"muted\">Grade them in formgrader, "
            "then run <code>make grades-final</code>.</p>"
            + _table_or(tab("queue", ["student", "name", "assignment", "notebook", "answer"], rows), rows,
                        "<p>Nothing awaits hand-grading.</p>") + "</section>")


def _table_or(html: str, rows: list, empty: str) -> str:
    """A table's HTML, or ``empty`` when it has no rows (its CSV file is written all the same, with
    its header: a promised file that is missing reads as a failed run)."""
    return html if rows else empty


def _history_rows_of(data: ClassData, s: str, a: str, nb: str, v: dict) -> list[list[object]]:
    """The "history" rows of one notebook: per exercise, the named mistakes of replaced verdicts
    and what the latest verdict ``v`` does ("fixed", its named mistakes, or "still failing")."""
    before: dict[str, set[str]] = defaultdict(set)
    for entry in history.read(s, a, nb, data.ws):
        for cid, name in (entry.get("mistakes") or {}).items():
            before[_function(cid)].add(mistake_label(str(name), short=False))
    if not before:
        return []
    now_named = defaultdict(set)
    for cid, name in history.named_mistakes(v).items():
        now_named[_function(cid)].add(mistake_label(name, short=False))
    checks = v.get("checks") or {}
    rows: list[list[object]] = []
    for fn, names in sorted(before.items()):
        ok = all(m is None for cid, m in checks.items() if _function(cid) == fn)
        still = "still: " + "; ".join(sorted(now_named[fn])) if now_named[fn] else "still failing"
        state = "fixed" if ok else still
        rows.append([s, _name(data, s), nb, fn, "; ".join(sorted(names)), state])
    return rows


def _history_section(data: ClassData, tab: _Tab) -> str:
    """The "history" table: mistakes made before a resubmission replaced them."""
    rows = [row for (s, a, nb), v in sorted(data.verdicts.items()) for row in _history_rows_of(data, s, a, nb, v)]
    return ("<section id=\"history\"><h2>Mistakes before a resubmission</h2><p class=\"muted\">The named "
            "mistakes of answers that a later submission replaced, and what the latest one does.</p>"
            + _table_or(tab("history", ["student", "name", "notebook", "exercise", "mistake before", "now"], rows),
                        rows, "<p>No resubmission replaced a named mistake.</p>") + "</section>")


def _changes_section(data: ClassData, tab: _Tab) -> str:
    """The "changes" table: every final score the last grading run changed, old and new."""
    rows = [[*key.split("/", 1), _name(data, key.split("/", 1)[0]), f"{old:g}", f"{new:g}", f"{new - old:+g}"]
            for key, old, new in data.grade_changes]
    html = tab("changes", ["student", "assignment", "name", "old", "new", "change"], rows)
    return ("<section id=\"changes\"><h2>Grades changed by the last run</h2><p class=\"muted\">Final "
            "scores (after the late penalty) that differ from those the run before exported: changed "
            "points or checks, hand grades, due dates and extensions.</p>"
            + _table_or(html, rows, "<p>No final score changed.</p>") + "</section>")


def _scores_of(data: ClassData, a: str, nb: str) -> dict[str, tuple[float, float]]:
    """student -> (score, maximum) of one notebook, from the gradebook."""
    return {s: v for (s, a2, n), v in data.notebook_scores.items() if a2 == a and n == nb}


def _students_section(data: ClassData, base: Path, tab: _Tab) -> str:
    """The "students" table: every student's score per notebook (linked to its feedback page) and total."""
    student_rows: dict[str, dict[str, float]] = defaultdict(dict)
    student_nb: dict[tuple[str, str], str] = {}
    for a in data.assignments:
        for nb in notebooks_of(a, data.ws.course):
            for s, (sc, _) in _scores_of(data, a, nb).items():
                student_rows[s][nb] = sc
                student_nb[(s, nb)] = a
    nbs = sorted({n for _, _, n in data.notebook_scores})
    rows = []
    for s in sorted(student_rows):
        cells = []
        for n in nbs:
            sc = student_rows[s].get(n)
            text = f"{sc or 0:g}"
            link = _feedback_link(s, student_nb[(s, n)], n, text, base, data.ws) if sc is not None else text
            cells.append((link, sc or 0))
        total = sum(student_rows[s].values())
        rows.append([s, _name(data, s), *cells, (f"{total:g}", total)])
    return ("<section id=\"students\"><h2>Every student</h2><p class=\"muted\">Each score links to that "
            "notebook's feedback page.</p>" + tab("students", ["student", "name", *nbs, "total"], rows)
            + "</section>")


def _exercise_figures(data: ClassData, a: str, nb: str) -> list[str]:
    """One histogram figure per exercise of a notebook: its students' summed cell scores."""
    ex_of = exercise_of(a, nb, data.ws.course)
    per_ex: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    for (s, a2, n, gid), (sc, mx) in data.cell_scores.items():
        if a2 == a and n == nb:
            acc = per_ex[ex_of.get(gid, gid)][s]
            acc[0] += sc or 0.0
            acc[1] += mx or 0.0
    figs = []
    for ex, by_st in per_ex.items():
        vals = [v[0] for v in by_st.values()]
        ex_top = max(v[1] for v in by_st.values())
        figs.append(f'<figure>{histogram(vals, ex_top, f"scores of {ex} in {nb}")}'
                    f'<figcaption>{e(nb)} · {e(ex)}</figcaption></figure>')
    return figs


def _scores_section(data: ClassData) -> str:
    """The score distributions: per graded notebook, the whole notebook's histogram, then each exercise's."""
    parts = []
    for a in data.assignments:
        for nb in notebooks_of(a, data.ws.course):
            entries = _scores_of(data, a, nb)
            if not entries:
                continue
            top = max(m for _, m in entries.values())
            values = [sc for sc, _ in entries.values()]
            mean = sum(values) / len(values)
            figs = [f'<figure>{histogram(values, top, f"scores in {nb}")}'
                    f'<figcaption>{e(nb)}: whole notebook (mean {mean:.2f} of {top:g})</figcaption></figure>',
                    *_exercise_figures(data, a, nb)]
            parts.append(f"<h3>{e(a)} / {e(nb)}</h3><div class=\"grid\">{''.join(figs)}</div>")
    return "<section id=\"scores\"><h2>Score distribution</h2>" + "".join(parts) + "</section>"


def _checks_section(tally: _Tally, tab: _Tab) -> str:
    """The "checks" table: every check's passes, failures, stubs and pass rate, by notebook."""
    from selfattn.checks.record import REGISTRY

    passed, failed, unanswered, where = tally.passed, tally.failed, tally.unanswered, tally.where
    rows = []
    for cid in sorted(set(passed) | set(failed) | set(unanswered), key=lambda c: (where.get(c, ""), c)):
        answered = passed[cid] + failed[cid]
        rate = passed[cid] / answered if answered else 0.0
        desc = REGISTRY[cid].description if cid in REGISTRY else ""
        rows.append([where.get(cid, ""), cid, desc, (passed[cid], passed[cid]), (failed[cid], failed[cid]),
                     (unanswered[cid], unanswered[cid]),
                     (f"{100 * rate:.0f}%" if answered else "–", rate if answered else -1)])
    return ("<section id=\"checks\"><h2>Pass rate of every check</h2><p class=\"muted\">Among the "
            "notebooks that answered the exercise; “not answered” counts stubs and missing functions."
            "</p>" + tab("checks", ["notebook", "check", "what it checks", "passed", "failed", "not answered",
                                    "pass rate"], rows) + "</section>")


def _mistakes_table(name: str, found: dict[tuple[str, str], set[str]], tab: _Tab) -> str:
    """A table of mistakes, (exercise, mistake) -> who made it, commonest first; "None." if empty."""
    rows = [[fn, mistake_label(key, short=False) if name == "mistakes" else key, (len(who), len(who)), _who(who)]
            for (fn, key), who in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    return _table_or(tab(name, ["exercise", "mistake", "students", "who"], rows), rows, "<p>None.</p>")


def _mistakes_section(tally: _Tally, tab: _Tab) -> str:
    """The named mistakes (the ten commonest listed, then the "mistakes" table) and the failures
    without a name (the "unnamed-failures" table)."""
    summary = "".join(f"<li>{text_cell(mistake_label(key))}: {len(who)} student{'s' * (len(who) != 1)} ({e(fn)})</li>"
                      for (fn, key), who in sorted(tally.named.items(), key=lambda kv: -len(kv[1]))[:10])
    return ("<section id=\"mistakes\"><h2>Named mistakes</h2>"
            + (f"<ul>{summary}</ul>" if summary else "")
            + _mistakes_table("mistakes", tally.named, tab)
            + "<h3>Failures without a name</h3><p class=\"muted\">Wrong values, shapes or exceptions "
              "that match no known mistake: worth reading by hand.</p>"
            + _mistakes_table("unnamed-failures", tally.unnamed, tab) + "</section>")


def _faults_section(faults: list[list[object]], tab: _Tab) -> str:
    """Faults and anomalies: counted by kind, then the "faults" table (folded when over 200 rows)."""
    kinds = Counter(row[3] for row in faults)
    per_kind = "".join(f"<li>{e(str(k))}: {n}</li>" for k, n in sorted(kinds.items()))
    return ("<section id=\"faults\"><h2>Faults and anomalies</h2>"
            + (f"<ul>{per_kind}</ul>" if per_kind else "<p>None.</p>")
            + (f"<details{' open' if len(faults) <= 200 else ''}><summary>all {len(faults)} rows</summary>"
               + tab("faults", ["student", "assignment", "notebook", "kind", "detail"], faults) + "</details>"
               if faults else "")
            + "</section>")


def _page(data: ClassData, glance: str, detail: list[str], tables: dict[str, tuple[list[str], list[list]]]) -> str:
    """The HTML document: the first screen, the line naming the data and its CSV files (those of
    ``tables``), the navigation, then the detail sections."""
    csvs = " ".join(f'<a href="{quote(f)}">{e(f)}</a>' for f, t in CSV_TABLES.items() if t in tables)
    head = (f"<p class=\"muted\">Assignments {e(', '.join(data.assignments))}. Generated "
            f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC from the gradebook and the grader's verdicts. "
            f"Tables as CSV: {csvs}</p>")
    nav = ('<nav><a href="#difficulty">Exercises</a><a href="#queue">Hand-grading</a><a href="#history">'
           'Resubmissions</a><a href="#changes">Changes</a><a href="#students">Students</a><a href="#scores">Scores</a>'
           '<a href="#checks">Checks</a>'
           '<a href="#mistakes">Mistakes</a><a href="#faults">Faults</a><a href="#similarity">Similarity</a></nav>')
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Class report</title><style>{STYLE}</style></head><body>"
            + report_fragment(f"<h1>Class report</h1>{glance}{head}{nav}" + "".join(detail))
            + f"<script>{SCRIPT}</script></body></html>")


def build(data: ClassData, base: Path | None = None, tables: dict[str, tuple[list[str], list[list]]] | None = None
          ) -> str:
    """The whole page as a string. ``base`` is the folder the page is written to (its links to the
    feedback pages are relative to it); each table's header and rows go to ``tables`` by its id."""
    import autograder.hidden_checks  # noqa: F401 - registers the hidden checks' descriptions

    base = base or data.ws.report
    tables = tables if tables is not None else {}
    tab: _Tab = partial(_tab, tables)
    ranked = exercises(data)
    tally = _tally(data)
    not_compared: list[str] = []
    pairs = find_pairs(data, not_compared)
    glance = _first_screen(data, ranked, tally.faults, pairs, tab)
    detail = [_difficulty_section(ranked, tab), _queue_section(data, base, tab), _history_section(data, tab),
              _changes_section(data, tab), _students_section(data, base, tab), _scores_section(data),
              _checks_section(tally, tab), _mistakes_section(tally, tab), _faults_section(tally.faults, tab),
              _similarity_section(pairs, tab, not_compared)]
    return _page(data, glance, detail, tables)


def _merge_notebooks(rows: list[list[object]], course: Path) -> list[list[object]]:
    """One row per (student, assignment, kind, detail): the same anomaly in several notebooks (a
    blank hand-in, a note repeated) lists them in one cell, "all 9" when it is every notebook of the
    course at ``course``."""
    merged: dict[tuple, list[str]] = {}
    for s, a, nb, kind, detail in rows:
        merged.setdefault((s, a, kind, detail), []).append(str(nb))
    out: list[list[object]] = []
    for (s, a, kind, detail), nbs in merged.items():
        everything = len(nbs) > 1 and set(nbs) == set(notebooks_of(str(a), course))
        out.append([s, a, f"all {len(nbs)}" if everything else ", ".join(nbs), kind, detail])
    return out


def find_pairs(data: ClassData, skipped: list[str] | None = None, clock: Callable[[], float] = time.monotonic
               ) -> list[tuple[str, str, similarity.Pair, dict[str, str]]]:
    """(assignment, notebook, pair, answers) for every suspicious pair of every exercise.

    Each notebook's comparisons stop once :data:`similarity.NOTEBOOK_SECONDS` (by ``clock``) are
    spent; what was not compared (answers too long, exercises left) goes to ``skipped``, one line each.
    """
    skipped = skipped if skipped is not None else []
    out = []
    for a in data.assignments:
        for nb in notebooks_of(a, data.ws.course):
            graded = [s for (s, a2, n) in data.verdicts if a2 == a and n == nb]
            if len(graded) < 2:
                continue
            started = clock()
            reference = answer_cells(data.ws.solutions / a / f"{nb}.ipynb")
            stubs = answer_cells(release_path(a, nb, data.ws.course))
            answers: dict[str, dict[str, str]] = defaultdict(dict)
            for s in graded:
                path = data.ws.staged(s, a, nb)
                try:
                    for gid, src in answer_cells(path).items():
                        answers[gid][s] = src
                except (OSError, ValueError, KeyError):
                    continue
            for i, gid in enumerate(reference):
                if clock() - started > similarity.NOTEBOOK_SECONDS:
                    skipped.append(f"{nb}: {', '.join(list(reference)[i:])} not compared (the "
                                   f"{similarity.NOTEBOOK_SECONDS:g} s for comparing this notebook were spent)")
                    break
                if long := similarity.too_long(answers.get(gid, {})):
                    skipped.append(f"{nb} · {gid}: the answers of {', '.join(long)} not compared (longer than "
                                   f"{similarity.MAX_COMPARED_CHARS:,} characters)")
                excluded = [reference[gid], stubs.get(gid, "")]
                short: list[str] = []
                for pair in similarity.similar_pairs(gid, answers.get(gid, {}), excluded, short):
                    out.append((a, nb, pair, answers[gid]))
                if short:
                    skipped.append(f"{nb} · {gid}: {len(short)} answer{'s' if len(short) != 1 else ''} too short to "
                                   f"tell apart, not compared (fewer than {similarity.MIN_FINGERPRINTS} "
                                   "fingerprints beyond the reference, the stub and the class's idioms)")
    return out


def _similarity_section(found: list[tuple[str, str, similarity.Pair, dict[str, str]]], tab,
                        skipped: list[str] | None = None) -> str:
    parts = ["<section id=\"similarity\"><h2>Similar answers</h2><p class=\"muted\">Per exercise, token "
             "fingerprints after normalising names, comments and layout; the reference solution, the released "
             f"stub and idioms shared by many students are excluded. A pair shares at least "
             f"{similarity.THRESHOLD:.0%} of the smaller answer's fingerprints. Similar is not proof: read the "
             "answers.</p>"]
    if skipped:
        parts.append("<p>Not compared:</p><ul>" + "".join(f"<li>{e(line)}</li>" for line in skipped) + "</ul>")
    rows = [[a, nb, p.exercise, p.a, p.b, (f"{p.score:.0%}", p.score), p.shared] for a, nb, p, _ in found]
    html = tab("similarity", ["assignment", "notebook", "exercise", "student", "student", "similarity",
                              "shared fingerprints"], rows)  # the CSV file has its header even when empty
    if not found:
        parts.append("<p>No suspicious pairs.</p></section>")
        return "".join(parts)
    parts.append(html)
    by_exercise: dict[tuple[str, str, str], list[similarity.Pair]] = defaultdict(list)
    for a, nb, p, _ in found:
        by_exercise[(a, nb, p.exercise)].append(p)
    cl = [f"<li>{e(nb)} · {e(ex)}: {e(', '.join(g))}</li>" for (_a, nb, ex), ps in by_exercise.items()
          for g in similarity.clusters(ps)]
    parts.append("<h3>Clusters</h3><ul>" + "".join(cl) + "</ul><h3>Side by side</h3>")
    for _a, nb, p, answers in found:
        parts.append(f"<details><summary>{e(nb)} · {e(p.exercise)}: {e(p.a)} and {e(p.b)} ({p.score:.0%})"
                     f"</summary><div class=\"side\"><div><b>{e(p.a)}</b><pre>{e(answers[p.a])}</pre></div>"
                     f"<div><b>{e(p.b)}</b><pre>{e(answers[p.b])}</pre></div></div></details>")
    parts.append("</section>")
    return "".join(parts)


def write(path: Path | None = None, log=print, *, ws: Workspace) -> Path:
    """Build the report from the work folder of ``ws`` and write it (by default to its
    ``report/index.html``), and its tables as CSV files beside it (:data:`CSV_TABLES`), atomically;
    return its path."""
    path = path or ws.report / "index.html"
    data = load(ws=ws)
    if not data.verdicts:
        raise RefusedInput(f"nothing to report: no verdicts under {ws.verdicts} (run `make grade` first)")
    tables: dict[str, tuple[list[str], list[list]]] = {}
    text = build(data, path.parent, tables)
    path.parent.mkdir(parents=True, exist_ok=True)
    for name, table_id in CSV_TABLES.items():
        if table_id in tables:
            write_csv(path.parent / name, *tables[table_id])
        else:
            (path.parent / name).unlink(missing_ok=True)
    atomic.write_text(path, text)
    log(f"class report in {path}")
    return path


def write_quietly(log=print, *, ws: Workspace) -> None:
    """:func:`write` at the end of a grading run: the grades are final already, so a failure to
    draw the report is one warning line, never a failed run."""
    try:
        write(log=log, ws=ws)
    except Exception as exc:  # the report must not cost anyone a grade
        log(f"warning: the class report was not written ({type(exc).__name__}: {exc}); retry with `make report`")


@command_line
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None, help="where to write the page (default: the work folder's "
                                                          "report/index.html)")
    a = p.parse_args(argv)
    ws = from_environment()
    if not ws.grading.exists():
        print(f"nothing to report: {ws.grading} does not exist (run `make grade` first)", file=sys.stderr)
        return 1
    write(a.out, ws=ws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
