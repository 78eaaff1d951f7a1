"""The class report's page is its sections, each once and in the order the navigation promises,
each table going to the CSV tables under its id; built from a fixed class without a gradebook
(verdicts, scores, a late hand-in, names, a hand-grading queue, one feedback page, one history)."""

from __future__ import annotations

import json
import re

import pytest

from autograder.nbgrader_ext.gradebook_state import Awaiting
from autograder.notes import Note, NoteKind, records
from autograder.reporting import class_report as report
from autograder.reporting.answer_pairs import find_pairs
from autograder.reporting.report_html import render_part
from autograder.reporting.report_sections import similar_answers
from autograder.verdicts import history
from autograder.verdicts.record import Verdict
from autograder.workspace import ROOT, Workspace
from selfattn.checks.findings import Finding, Kind

A, NB3, NB7 = "attention", "03-softmax-attention", "07-masking"
AXIS = "softmax taken over the queries (axis 0)"
SECTIONS = ["glance", "difficulty", "queue", "history", "changes", "students", "scores", "checks", "mistakes", "faults",
            "similarity"]


@pytest.fixture()
def data(tmp_path) -> report.ClassData:
    ws = Workspace(tmp_path / "work", ROOT)
    named = Finding.mistake(AXIS, "weights: axis 0").to_json()
    stub = Finding("not answered", Kind.NOT_ANSWERED).to_json()
    timeout = Finding("ran out of time", Kind.TIME_OUT).to_json()
    wrong = Finding("wrong values", Kind.WRONG_VALUES).to_json()
    sm, ax, at = "softmax/rows-sum-to-one", "softmax/axis", "attention/no-mask"
    d = report.ClassData(ws=ws, students=["ann", "bob", "cy<b>", "dee"], assignments=[A],
                         names={"ann": "Ann A", "cy<b>": "<i>Cy</i>"})
    stored = {("ann", A, NB3): {"checks": {sm: None, ax: None, at: None}},
              ("bob", A, NB3): {"checks": {sm: stub, ax: stub, at: stub}},
              ("cy<b>", A, NB3): {"checks": {sm: None, ax: named, at: timeout},
                                  "notes": records([Note("a cell raised", NoteKind.CELL_RAISED)])},
              ("dee", A, NB3): {"checks": {sm: None, ax: named, at: wrong}},
              ("dee", A, NB7): {"checks": {}, "notes": records([Note("missing", NoteKind.MISSING)])}}
    d.verdicts = {key: Verdict.from_json(v) for key, v in stored.items()}
    d.notebook_scores = {("ann", A, NB3): (6.0, 6.0), ("bob", A, NB3): (0.0, 6.0), ("cy<b>", A, NB3): (2.0, 6.0),
                         ("dee", A, NB3): (3.0, 6.0)}
    d.cell_scores = {(s, a, nb, "softmax-public"): (sc / 2, mx / 2)
                     for (s, a, nb), (sc, mx) in d.notebook_scores.items()}
    d.late = {("dee", A): 7200.0}
    d.penalties = {("dee", A): 1.5}
    d.extensions = {("ann", A): "2026-11-03 12:00 UTC"}
    d.awaiting = [Awaiting("ann", A, "04-scaling", "why-sqrt")]
    d.grade_changes = [("dee/attention", 4.5, 1.5)]
    page = ws.feedback / "ann" / A / f"{NB3}.html"
    page.parent.mkdir(parents=True)
    page.write_text("feedback")
    kept = history.history_path("ann", A, NB3, ws)
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps([{"replaced": "then", "mistakes": {ax: AXIS}}]))
    return d


def _sections(html: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', html)


def test_every_section_appears_once_in_the_order_of_the_navigation(data):
    tables: dict = {}
    html = report.build(data, data.ws.report, tables)
    assert _sections(html) == SECTIONS, _sections(html)
    nav = re.search(r"<nav>(.*?)</nav>", html).group(1)
    targets = re.findall(r'href="#([^"]+)"', nav)
    assert targets == [s for s in SECTIONS if s != "glance"], targets  # the menu lists the detail in page order
    first = html.index('<section id="glance"')
    assert html.index("<h1>Class report</h1>") < first < html.index("<nav>"), "the first screen comes first"
    for question in ("how", "reteach", "now"):
        assert html.count(f'<h2 id="{question}">') == 1, question
    assert list(tables) == ["notebooks", "difficulty", "queue", "history", "changes", "students", "checks", "mistakes",
                            "unnamed-failures", "faults", "similarity"], list(tables)
    assert tables["similarity"] == (["assignment", "notebook", "exercise", "student", "student", "similarity",
                                     "shared fingerprints"], [])  # an empty table still has its CSV file
    links = re.findall(r'<a href="([^"#]+\.csv)">', html)
    assert links == [f for f, t in report.CSV_TABLES.items() if t in tables], links


def test_each_section_shows_the_class_it_was_built_from(data):
    tables: dict = {}
    html = report.build(data, data.ws.report, tables)
    body = dict(zip(SECTIONS, re.split(r'<section id="[^"]+"', html)[1:], strict=True))
    assert "4 students, 5 graded notebooks." in body["glance"]
    assert "<b>attention</b>" in body["glance"] and f"most common mistake: {AXIS} (2 students)" in body["glance"]
    assert tables["queue"][1] == [["ann", "Ann A", A, "04-scaling", "why-sqrt"]]
    assert tables["history"][1] == [["ann", "Ann A", NB3, "softmax", AXIS, "fixed"]]
    assert '<a href="../feedback/ann/attention/03-softmax-attention.html">6</a>' in body["students"]
    assert "&lt;i&gt;Cy&lt;/i&gt;" in body["students"] and "<i>Cy</i>" not in html  # names are text, not markup
    assert {r[0] for r in tables["mistakes"][1]} == {"softmax"} and tables["mistakes"][1][0][2] == 2
    kinds = {r[3] for r in tables["faults"][1]}
    assert {"time-out", "cell raised", "blank notebook", "missing notebook", "late"} <= kinds, kinds
    assert "<p>No suspicious pairs.</p>" in body["similarity"]
    # late work and extensions, on the first screen
    assert "dee: 2 h, \u22121.5 points" in body["glance"] and "extensions: 1" in body["glance"], body["glance"]
    assert "ann (attention): due 2026-11-03 12:00 UTC" in body["glance"]
    assert ["dee", A, "", "late", "2 h late, penalty 1.5 points"] in tables["faults"][1], tables["faults"][1]
    # whose grade the last run changed, old -> new: on the first screen and in its own table
    assert "dee/attention: 4.5 \u2192 1.5" in body["glance"], body["glance"]
    assert tables["changes"][1] == [["dee", A, "", "4.5", "1.5", "-3"]], tables["changes"]
    (row,) = [r for r in tables["notebooks"][1] if r[0] == NB3]
    assert row[-1] == 4, row  # handed in by four; dee's 07 is missing, so no row for it


def test_similarity_stops_when_a_notebooks_time_is_spent_and_says_so(data):
    from itertools import count

    from autograder.reporting import similarity

    ticks = count(0.0, similarity.NOTEBOOK_SECONDS + 1)  # every look at the clock finds the time spent
    skipped: list[str] = []
    assert find_pairs(data, skipped, clock=lambda: next(ticks)) == []
    assert skipped and all(line.startswith(NB3) and "were spent" in line for line in skipped), skipped
    section = render_part("similarity", similar_answers([], skipped))
    assert "Not compared:" in section and f"{NB3}: softmax" in section, section


def test_answers_too_short_to_tell_apart_are_not_compared_and_are_counted():
    """A one-line idiom or a short literal answer is written alike by honest students: two such
    answers are no pair, and the students left out are named for the report's count; two copies of
    a long answer still are a pair."""
    from autograder.reporting.similarity import similar_pairs

    one_liner = "def crossover_length(d):\n    return 6 * d\n"
    long_answer = ("def attention(Q, K, V, mask=None):\n    d_k = Q.shape[1]\n    s = np.dot(Q, K.T) / d_k ** 0.5\n"
                   "    if mask is not None:\n        s = s + mask\n    m = np.amax(s, axis=1)[:, None]\n"
                   "    w = np.exp(s - m)\n    t = np.sum(w, axis=1)[:, None]\n    return np.dot(w / t, V)\n")
    short: list[str] = []
    assert similar_pairs("crossover_length", {"a": one_liner, "b": one_liner + "\n"}, ["pass"], short) == []
    assert short == ["a", "b"]
    pairs = similar_pairs("attention", {"a": long_answer, "b": long_answer.replace("w", "u")}, ["pass"])
    assert [(p.a, p.b) for p in pairs] == [("a", "b")]


def test_empty_tables_of_resubmissions_and_mistakes_still_have_their_csv_header(data):
    """A class with no resubmission and no mistake: fixed-mistakes.csv and mistakes.csv are still
    written, with their header (as hand-grading.csv and similarity.csv)."""
    history.history_path("ann", A, NB3, data.ws).unlink()
    data.verdicts = {key: v for key, v in data.verdicts.items() if key[0] == "ann"}
    tables: dict = {}
    html = report.build(data, data.ws.report, tables)
    assert tables["history"] == (["student", "name", "notebook", "exercise", "mistake before", "now"], []), tables
    assert tables["mistakes"] == (["exercise", "mistake", "students", "who"], []), tables
    assert "No resubmission replaced a named mistake." in html
    links = re.findall(r'<a href="([^"#]+\.csv)">', html)
    assert "fixed-mistakes.csv" in links and "mistakes.csv" in links, links
