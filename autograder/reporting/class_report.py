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
anomalies, and suspiciously similar answers (:mod:`autograder.reporting.answer_pairs`) side by side. Every
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
from functools import partial
from pathlib import Path
from urllib.parse import quote

from autograder.course.spec import exercise_of, notebooks_of
from autograder.errors import RefusedInput, command_line
from autograder.late.policy import final_score, lateness
from autograder.notes import Note, NoteKind, records
from autograder.outputs import atomic, json_files
from autograder.outputs.csv_export import write_csv
from autograder.outputs.sanitise import report_fragment
from autograder.reporting import class_tally, similarity
from autograder.reporting.answer_pairs import FoundPair, find_pairs
from autograder.reporting.class_data import ClassData
from autograder.reporting.class_tally import Exercise, Tally, handed_and_complete, history_rows
from autograder.reporting.failures import FAULT_WORDS, mistake_label
from autograder.reporting.report_html import CSP, SCRIPT, STYLE, Link, e, histogram, plain, table, text_cell
from autograder.workspace import Workspace, from_environment
from selfattn.checks.findings import FAULTS

# --- reading the class -------------------------------------------------------------------------------


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


def _feedback_link(s: str, a: str, nb: str, text: str, base: Path, ws: Workspace) -> Link | str:
    page = ws.feedback / s / a / f"{nb}.html"
    if not page.exists():
        return text
    rel = os.path.relpath(page.parent, base)
    return Link(text, "/".join(quote(part) for part in Path(rel).parts) + f"/{quote(nb)}.html")


#: A table recorder: ``tab(id, headers, rows)`` keeps the header and the rows' CSV values under
#: ``id`` and returns the table's HTML (:func:`_tab` bound to one ``tables`` dict).
_Tab = Callable[[str, list[str], list[list[object]]], str]


def _tab(tables: dict[str, tuple[list[str], list[list]]], name: str, headers: list[str],
         rows: list[list[object]]) -> str:
    """One table of the page: its header and rows' plain values go to ``tables[name]`` (a CSV file
    of :data:`CSV_TABLES`), its HTML is returned."""
    tables[name] = (headers, [[plain(c) for c in r] for r in rows])
    return table(headers, rows)


def _notebook_rows(data: ClassData) -> list[list[object]]:
    """The "notebooks" table: per notebook someone handed in, mean and median score of the
    maximum, how many completed it (of the class) and how many handed it in."""
    handed, complete = handed_and_complete(data)
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
    rows = [[w.student, data.name(w.student), w.assignment,
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


def _history_section(data: ClassData, tab: _Tab) -> str:
    """The "history" table: mistakes made before a resubmission replaced them."""
    rows = [row for (s, a, nb), v in sorted(data.verdicts.items()) for row in history_rows(data, s, a, nb, v)]
    return ("<section id=\"history\"><h2>Mistakes before a resubmission</h2><p class=\"muted\">The named "
            "mistakes of answers that a later submission replaced, and what the latest one does.</p>"
            + _table_or(tab("history", ["student", "name", "notebook", "exercise", "mistake before", "now"], rows),
                        rows, "<p>No resubmission replaced a named mistake.</p>") + "</section>")


def _changes_section(data: ClassData, tab: _Tab) -> str:
    """The "changes" table: every final score the last grading run changed, old and new."""
    rows = [[*key.split("/", 1), data.name(key.split("/", 1)[0]), f"{old:g}", f"{new:g}", f"{new - old:+g}"]
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
        rows.append([s, data.name(s), *cells, (f"{total:g}", total)])
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


def _checks_section(tally: Tally, tab: _Tab) -> str:
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


def _mistakes_section(tally: Tally, tab: _Tab) -> str:
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
    ranked = class_tally.exercises(data)
    tally = class_tally.tally(data)
    not_compared: list[str] = []
    pairs = find_pairs(data, not_compared)
    glance = _first_screen(data, ranked, tally.faults, pairs, tab)
    detail = [_difficulty_section(ranked, tab), _queue_section(data, base, tab), _history_section(data, tab),
              _changes_section(data, tab), _students_section(data, base, tab), _scores_section(data),
              _checks_section(tally, tab), _mistakes_section(tally, tab), _faults_section(tally.faults, tab),
              _similarity_section(pairs, tab, not_compared)]
    return _page(data, glance, detail, tables)


def _similarity_section(found: list[FoundPair], tab: _Tab,
                        skipped: list[str] | None = None) -> str:
    parts = ["<section id=\"similarity\"><h2>Similar answers</h2><p class=\"muted\">Per exercise, token "
             "fingerprints after normalising names, comments and layout; the reference solution, the released "
             f"stub and idioms shared by many students are excluded. A pair shares at least "
             f"{similarity.THRESHOLD:.0%} of the smaller answer's fingerprints. Similar is not proof: read the "
             "answers.</p>"]
    if skipped:
        parts.append("<p>Not compared:</p><ul>" + "".join(f"<li>{e(line)}</li>" for line in skipped) + "</ul>")
    rows = [[f.assignment, f.notebook, f.pair.exercise, f.pair.a, f.pair.b, (f"{f.pair.score:.0%}", f.pair.score),
             f.pair.shared] for f in found]
    html = tab("similarity", ["assignment", "notebook", "exercise", "student", "student", "similarity",
                              "shared fingerprints"], rows)  # the CSV file has its header even when empty
    if not found:
        parts.append("<p>No suspicious pairs.</p></section>")
        return "".join(parts)
    parts.append(html)
    by_exercise: dict[tuple[str, str, str], list[similarity.Pair]] = defaultdict(list)
    for f in found:
        by_exercise[(f.assignment, f.notebook, f.pair.exercise)].append(f.pair)
    cl = [f"<li>{e(nb)} · {e(ex)}: {e(', '.join(g))}</li>" for (_a, nb, ex), ps in by_exercise.items()
          for g in similarity.clusters(ps)]
    parts.append("<h3>Clusters</h3><ul>" + "".join(cl) + "</ul><h3>Side by side</h3>")
    for f in found:
        p = f.pair
        parts.append(f"<details><summary>{e(f.notebook)} · {e(p.exercise)}: {e(p.a)} and {e(p.b)} ({p.score:.0%})"
                     f"</summary><div class=\"side\"><div><b>{e(p.a)}</b><pre>{e(f.answer_a)}</pre></div>"
                     f"<div><b>{e(p.b)}</b><pre>{e(f.answer_b)}</pre></div></div></details>")
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
