"""The same final score everywhere, after hand grades given in formgrader and its Generate Feedback.

The hub's recipe (formgrader: Collect, Autograde, Manual Grading, Generate Feedback, Release
Feedback) never runs ``make grades-final``. Here a small class (``04-scaling``: a graded function,
3 points, and a written answer, 3 points) is graded once with ``make grade`` under a late policy
(10 % per started day, at most 50 %); amos handed in on time, cleo 2 days and 1 hour late. Then,
in formgrader (the local one, headless Chromium), the instructor types both hand grades into the
grading page and clicks the assignment's *Generate Feedback*. The test computes each final score
itself from the policy (``(auto + hand) * (1 - fraction)``) and reads it where a student or a
grader reads one: every formgrader list as displayed (assignments, notebooks, a notebook's
submissions, an assignment's submissions, students, a student's assignments and notebooks), the
feedback page, ``grades.csv``, the Canvas and Moodle files and the class report. Before the fix
cleo's feedback took 0.9 points (30 % of the autograded 3) where the exports took 1.5.
"""

from __future__ import annotations

import csv
import math
import re
from datetime import datetime

import pytest
from test_hand_grading_loop import NB, HandLoop, _enter_score, _formgrader_session
from test_instructor_loop import COURSE_ID, WRITTEN
from test_late_work import hand_in_late_class

DUE = datetime(2026, 1, 10, 12, 0, 0)
STAMPS = {"amos": "2026-01-10 11:00:00.000000 UTC", "cleo": "2026-01-12 13:00:00.000000 UTC"}
SECONDS_LATE = {"amos": 0.0, "cleo": 2 * 86400 + 3600.0}
AUTO = 3.0  # the model answer's public (1) and hidden (2) points
HAND = {"amos": 3.0, "cleo": 2.0}  # the written answer, out of 3, typed into formgrader
CHANGED = 1.0  # cleo's hand grade, changed after Generate Feedback (then set back)
POLICY = ("c.LateSubmissionPlugin.penalty_method = 'percent'\nc.LateSubmissionPlugin.percent = 10\n"
          "c.LateSubmissionPlugin.per = 'day'\nc.LateSubmissionPlugin.cap = 50\n")


def fraction(seconds: float) -> float:
    """The test's own reading of POLICY: the part of the score taken for this lateness."""
    return 0.0 if seconds <= 0 else min(50, 10 * math.ceil(seconds / 86400)) / 100


def expected(student: str, hand: float | None = None) -> float:
    """The final score of ``student`` with the hand grade ``hand`` (default: HAND's)."""
    return round((AUTO + (HAND[student] if hand is None else hand)) * (1 - fraction(SECONDS_LATE[student])), 6)


def _number(text: str) -> float:
    """The first number of a cell as formgrader shows it ("3.5 / 6")."""
    found = re.search(r"-?\d+(?:\.\d+)?", text)
    assert found, f"no number in {text!r}"
    return float(found.group())


def _shown(page, url: str, row: str, column: str) -> float:
    """The score formgrader's page at ``url`` shows in the row holding the text ``row`` (or, for
    ``a[...]``, that element), column ``td.<column>`` (the pages fill their tables from the API once
    loaded)."""
    page.goto(url, wait_until="networkidle")
    rows = (page.locator("tr", has=page.locator(row)) if row.startswith("a[") else page.locator("tr", has_text=row))
    cell = rows.first.locator(f"td.{column}")
    cell.wait_for(timeout=60_000)
    page.wait_for_function("el => el.textContent.trim().length > 0", arg=cell.element_handle(), timeout=60_000)
    return _number(cell.inner_text())


def _formgrader_lists(page, base: str, ids: dict[str, str]) -> dict[str, dict[str, float]]:
    """Every list of formgrader that shows a score: place -> student (or "class") -> score
    (``ids``: each student's submitted notebook, which the gradebook's list links to by id)."""
    fg = f"{base}/formgrader"
    out: dict[str, dict[str, float]] = {
        "gradebook: assignments (average)": {"class": _shown(page, f"{fg}/gradebook", "attention", "score")},
        "gradebook: notebooks (average)": {"class": _shown(page, f"{fg}/gradebook/attention", NB, "avg-score")},
    }
    for s in HAND:
        for place, url, row in (
                ("gradebook: notebook submissions", f"{fg}/gradebook/attention/{NB}",
                 f"a[href$='/formgrader/submissions/{ids[s]}']"),
                ("manage submissions", f"{fg}/manage_submissions/attention", s),
                ("manage students", f"{fg}/manage_students", s),
                ("student: assignments", f"{fg}/manage_students/{s}", "attention"),
                ("student: notebooks (the submission's total)", f"{fg}/manage_students/{s}/attention", NB)):
            out.setdefault(place, {})[s] = _shown(page, url, row, "score")
    return out


def _assignment_button(page, base: str, button: str) -> str:
    """Click the assignment's ``button`` ("generate-feedback", "release-feedback") in formgrader's
    Manage Assignments, as a grader does; return what the dialog says."""
    page.goto(f"{base}/formgrader/manage_assignments", wait_until="networkidle")
    page.locator("tr", has_text="attention").first.locator(f"td.{button} a").click(timeout=60_000)
    modal = page.locator("#success-modal, #error-modal").first
    modal.wait_for(timeout=300_000)
    return modal.inner_text()


def _session(lp: HandLoop) -> dict:
    """In formgrader: the submissions list before hand-grading, both hand grades typed in, the list
    again, Generate Feedback (the assignment's button, as a grader clicks it), then every list."""

    def actions(page, base: str, out: dict) -> None:
        listed = f"{base}/formgrader/manage_submissions/attention"
        out["before_hand_grades"] = {s: _shown(page, listed, s, "score") for s in HAND}
        with lp.db() as gb:
            ids = {s: gb.find_submission_notebook(NB, "attention", s).id for s in HAND}
        for s, points in HAND.items():
            page.goto(f"{base}/formgrader/submissions/{ids[s]}/?index=0", wait_until="networkidle")
            _enter_score(page, WRITTEN, points)
        out["after_hand_grades"] = {s: _shown(page, listed, s, "score") for s in HAND}
        out["generate_modal"] = _assignment_button(page, base, "generate-feedback")
        out["lists"] = _formgrader_lists(page, base, ids)
        # cleo's hand grade changed after Generate Feedback: Release Feedback refuses her page
        page.goto(f"{base}/formgrader/submissions/{ids['cleo']}/?index=0", wait_until="networkidle")
        _enter_score(page, WRITTEN, CHANGED)
        out["changed_again"] = _shown(page, listed, "cleo", "score")
        out["stale_release_modal"] = _assignment_button(page, base, "release-feedback")
        # back to the grade her page was made for: released
        page.goto(f"{base}/formgrader/submissions/{ids['cleo']}/?index=0", wait_until="networkidle")
        _enter_score(page, WRITTEN, HAND["cleo"])
        out["release_modal"] = _assignment_button(page, base, "release-feedback")

    return _formgrader_session(lp, actions)


def _exports(lp: HandLoop) -> dict[str, dict[str, float]]:
    """place -> student -> the final score in grades.csv, the LMS files and the class report."""
    out: dict[str, dict[str, float]] = {"grades.csv": {}, "moodle.csv": {}, "canvas.csv": {}, "report": {}}
    with open(lp.work / "grades.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out["grades.csv"][row["student_id"]] = float(row["score"])
    with open(lp.work / "exports" / "moodle.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out["moodle.csv"][row["username"]] = float(row["attention (total)"])
    with open(lp.work / "exports" / "canvas.csv", newline="") as fh:
        for row in list(csv.DictReader(fh))[1:]:  # after the Points Possible row
            out["canvas.csv"][row["Student"].split()[0].lower()] = float(row["attention (total)"])
    with open(lp.work / "report" / "students.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out["report"][row["student"]] = float(row["total"])
    return out


def _score_line(page: str) -> float:
    """The score a feedback page's header shows."""
    found = re.search(r"\(Score: ([\d.]+) / ([\d.]+)", page)
    assert found, page[:3000]
    return float(found.group(1))


def _feedback(lp: HandLoop, student: str) -> tuple[float, str]:
    """(the score the feedback page's header shows, the page)."""
    page = (lp.work / "feedback" / student / "attention" / f"{NB}.html").read_text()
    return _score_line(page), page


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    lp = HandLoop(tmp_path_factory.mktemp("same-score"))
    hand_in_late_class(lp, DUE, {s: STAMPS[s] for s in HAND})
    (lp.instructor_cfg / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(lp.exchange)!r}\n" + POLICY)
    seen: dict[str, object] = {"first_run": lp.make_grade().stdout}
    seen["exports_before"] = _exports(lp)
    seen.update(_session(lp))
    seen["exports"] = _exports(lp)
    seen["feedback"] = {s: _feedback(lp, s) for s in HAND}
    seen["released"] = sorted(_score_line(p.read_text()) for p in (lp.exchange / COURSE_ID / "feedback").glob("*.html"))
    return lp, seen


def test_formgrader_lists_show_the_final_score_as_soon_as_a_hand_grade_is_saved(graded):
    _, seen = graded
    # before hand-grading: the autograded points, less the late penalty on them
    assert seen["before_hand_grades"] == {s: expected(s, hand=0.0) for s in HAND}, seen["before_hand_grades"]
    assert seen["after_hand_grades"] == {s: expected(s) for s in HAND}, seen["after_hand_grades"]


def test_generate_feedback_from_formgrader_succeeds(graded):
    _, seen = graded
    assert "Successfully generated feedback of 'attention'" in seen["generate_modal"], seen["generate_modal"]


def test_every_place_a_score_appears_shows_the_final_score_under_the_policy(graded):
    _, seen = graded
    want = {s: expected(s) for s in HAND}
    average = round(sum(want.values()) / len(want), 6)
    for place, scores in seen["lists"].items():
        assert scores == ({"class": round(average, 2)} if "average" in place else want), (place, scores)
    for place, scores in seen["exports"].items():
        assert scores == want, (place, scores)
    for s in HAND:
        shown, _ = seen["feedback"][s]
        assert shown == round(want[s], 2), (s, shown)


def test_the_late_penalty_is_taken_from_the_hand_graded_total(graded):
    _, seen = graded
    taken = round((AUTO + HAND["cleo"]) * fraction(SECONDS_LATE["cleo"]), 6)  # 1.5, not 0.9
    _, page = seen["feedback"]["cleo"]
    header = page.split('<header class="panel-heading">')[-1].split("</header>")[0]
    assert f"{taken:g} points taken from this notebook" in header, header
    assert f"Late submission penalty (Score: -{taken:g})" in header, header
    # the exports make grade wrote before the hand grades held the autograded points only
    assert seen["exports_before"]["grades.csv"] == {s: expected(s, hand=0.0) for s in HAND}


def test_release_feedback_refuses_a_page_older_than_its_grades(graded):
    _, seen = graded
    assert seen["changed_again"] == expected("cleo", hand=CHANGED)  # the list moved at once
    modal = seen["stale_release_modal"]
    assert "nothing released: the feedback of cleo/attention was made before its grades last changed" in modal, modal
    assert "Successfully released feedback of 'attention'" in seen["release_modal"], seen["release_modal"]
    # what students fetch: the final scores the exports hold
    assert seen["released"] == sorted(round(expected(s), 2) for s in HAND), seen["released"]
