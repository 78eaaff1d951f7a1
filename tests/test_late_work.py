"""Late work through the real pipeline: a small class (one notebook, ``04-scaling``: a graded
function and a written answer), handed in on time, 36 s late and two days late, against a due date
in ``due-dates.csv``; ``make grade`` once; hand grades given after grading; then ``make grades-final``
under each policy (none, zero, percent per day, percent per hour with a grace period) and an
extension granted after grading (``make extension``). The test computes the expected final scores
itself, from the policy, and grades.csv, the Moodle and Canvas files and the feedback hold them;
nothing after the first run decides a notebook again (the verdict files are untouched)."""

from __future__ import annotations

import csv
import math
import re
import sys
from datetime import datetime

import nbformat
import pytest
from grading_support import ROOT
from test_hand_grading_loop import NB, STDS, HandLoop
from test_instructor_loop import WRITTEN, _answer

DUE = datetime(2026, 1, 10, 12, 0, 0)
STAMPS = {"ann": "2026-01-10 11:00:00.000000 UTC", "ben": "2026-01-10 12:00:36.000000 UTC",
          "cat": "2026-01-12 13:00:00.000000 UTC"}
SECONDS_LATE = {"ann": 0.0, "ben": 36.0, "cat": 2 * 86400 + 3600.0}
AUTO = 3.0  # the model answer's public (1) and hidden (2) points
HAND = {"ann": 3.0, "ben": 3.0, "cat": 2.0}  # the written answer, graded after make grade
NEW_HIDDEN_POINTS = 4.0  # the hidden checks' points after the mid-term change (2 before)
EXTENDED_TO = "2026-01-13 00:00:00 UTC"  # cat's extension: she is then on time

#: each policy as the instructor writes it, and the test's own reading of it: fraction taken
POLICIES = {
    "none": ("c.LateSubmissionPlugin.penalty_method = 'none'\n", lambda s: 0.0),
    "zero": ("c.LateSubmissionPlugin.penalty_method = 'zero'\n", lambda s: 1.0 if s > 0 else 0.0),
    "ten-per-day": ("c.LateSubmissionPlugin.penalty_method = 'percent'\nc.LateSubmissionPlugin.percent = 10\n"
                    "c.LateSubmissionPlugin.per = 'day'\nc.LateSubmissionPlugin.cap = 30\n",
                    lambda s: 0.0 if s <= 0 else min(30, 10 * math.ceil(s / 86400)) / 100),
    "five-per-hour-grace": ("c.LateSubmissionPlugin.penalty_method = 'percent'\nc.LateSubmissionPlugin.percent = 5\n"
                            "c.LateSubmissionPlugin.per = 'hour'\nc.LateSubmissionPlugin.cap = 50\n"
                            "c.LateSubmissionPlugin.grace_minutes = 60\n",
                            lambda s: 0.0 if s <= 3600 else min(50, 5 * math.ceil(s / 3600)) / 100),
}


def _expected(policy: str, seconds: dict[str, float]) -> dict[str, float]:
    fraction = POLICIES[policy][1]
    return {s: round((AUTO + HAND[s]) * (1 - fraction(seconds[s])), 6) for s in HAND}


def _set_policy(lp: HandLoop, policy: str) -> None:
    (lp.instructor_cfg / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(lp.exchange)!r}\n" + POLICIES[policy][0])


def _scores(lp: HandLoop) -> dict[str, dict[str, float]]:
    """student -> the final score in grades.csv, moodle.csv and canvas.csv."""
    out: dict[str, dict[str, float]] = {s: {} for s in HAND}
    with open(lp.work / "grades.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out[row["student_id"]]["grades.csv"] = float(row["score"])
    with open(lp.work / "exports" / "moodle.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            out[row["username"]]["moodle"] = float(row["attention (total)"])
    with open(lp.work / "exports" / "canvas.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))[1:]  # after the Points Possible row
        for row in rows:
            out[row["Student"].split()[0].lower()]["canvas"] = float(row["attention (total)"])
    return out


def _verdict_times(lp: HandLoop) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in (lp.work / ".grading" / "verdicts").rglob("*.json")}


def hand_in_late_class(lp: HandLoop, due: datetime, stamps: dict[str, str]) -> None:
    """A class of ``stamps``' students (imported as a roster) hands in the instructor's answers to the
    scores and the written answer, each at its stamp, for ``attention`` due at ``due`` (due-dates.csv)."""
    roster = lp.tmp / "roster.csv"
    roster.write_text("id,first_name,last_name,email\n" + "".join(f"{s},Doe,{s.title()},{s}@example.org\n"
                                                                 for s in stamps))
    lp.nbgrader("db", "student", "import", str(roster))
    lp.nbgrader("generate_assignment", "attention", "--force")
    (lp.work / "due-dates.csv").write_text(f"assignment,student,due\nattention,,{due:%Y-%m-%d %H:%M:%S} UTC\n")
    for s, stamp in stamps.items():
        lp.hand_in(s, {STDS: _answer(NB, STDS), WRITTEN: _answer(NB, WRITTEN)})
        (lp.work / "submitted" / s / "attention" / "timestamp.txt").write_text(stamp + "\n")


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    lp = HandLoop(tmp_path_factory.mktemp("late"))
    seen: dict[str, object] = {}
    hand_in_late_class(lp, DUE, STAMPS)
    _set_policy(lp, "zero")
    seen["first_run"] = lp.make_grade().stdout
    seen["verdicts"] = _verdict_times(lp)
    with lp.db() as gb:  # hand grades, as formgrader's Manual Grading saves them
        for s, points in HAND.items():
            g = gb.find_grade(WRITTEN, NB, "attention", s)
            g.manual_score, g.needs_manual_grade = points, False
        gb.db.commit()
    for policy in POLICIES:
        _set_policy(lp, policy)
        result = lp.run(sys.executable, "-m", "autograder.grade", "--finish", cwd=ROOT)
        seen[policy] = (_scores(lp), result.stdout)
    feedback = lp.work / "feedback" / "ben" / "attention" / f"{NB}.html"
    seen["ben_feedback"] = feedback.read_text()
    seen["extension"] = lp.run(sys.executable, "-m", "autograder.extension", "extension", "--assignment",
                               "attention", "--student", "cat", "--until", EXTENDED_TO, cwd=ROOT).stdout
    seen["extended"] = _scores(lp)
    seen["after_extension_run"] = lp.make_grade().stdout
    seen["summary"] = (lp.work / "grading-summary.txt").read_text()
    seen["verdicts_at_end"] = _verdict_times(lp)

    # a change of points mid-term: the hidden checks are worth 4 instead of 2 (solutions/, then make grade)
    source = lp.course / "solutions" / "attention" / f"{NB}.ipynb"
    nb = nbformat.read(source, as_version=4)
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{STDS}-hidden"
         ).metadata.nbgrader["points"] = int(NEW_HIDDEN_POINTS)  # was 2
    nbformat.write(nb, source)
    seen["points_run"] = lp.make_grade().stdout
    seen["points_scores"] = _scores(lp)
    with open(lp.work / "report" / "grade-changes.csv", newline="") as fh:
        seen["points_report_rows"] = list(csv.DictReader(fh))
    seen["points_report_page"] = (lp.work / "report" / "index.html").read_text()
    seen["verdicts_after_points"] = _verdict_times(lp)
    return lp, seen


def test_first_run_says_how_late_in_minutes_and_names_the_option(term):
    _, seen = term
    out = seen["first_run"]
    assert "ben/attention: 1 min late (due 2026-01-10 12:00 UTC), penalty 3 points" in out, out[-3000:]
    assert "cat/attention: 2 h" not in out and "cat/attention: 2 d 1 h late" in out, out[-3000:]
    assert "c.LateSubmissionPlugin.penalty_method" in out and "AssignLatePenalties" not in out


@pytest.mark.parametrize("policy", list(POLICIES))
def test_the_penalty_applies_to_the_final_score_hand_grades_included(term, policy):
    _, seen = term
    scores, _ = seen[policy]
    expected = _expected(policy, SECONDS_LATE)
    for s in HAND:
        assert scores[s] == {"grades.csv": expected[s], "moodle": expected[s], "canvas": expected[s]}, (policy, s)


def test_grades_final_lists_whose_grade_changed_old_and_new(term):
    _, seen = term
    zero = _expected("zero", SECONDS_LATE)
    _, out = seen["ten-per-day"]
    new = _expected("ten-per-day", SECONDS_LATE)
    assert f"ben/attention: {zero['ben']:g} -> {new['ben']:g}" in out, out[-2000:]
    assert f"cat/attention: {zero['cat']:g} -> {new['cat']:g}" in out, out[-2000:]
    assert "ann/attention" not in out.split("grades changed since the last export")[1], out[-2000:]


def test_feedback_says_the_due_date_how_late_and_what_it_costs(term):
    _, seen = term
    page = seen["ben_feedback"]  # after the last policy: within its hour of grace
    due = re.search(r'<p class="due">(.*?)</p>', page, re.S)
    assert due, page[:3000]
    line = due.group(1).replace("\u00a0", " ")
    assert "Due: 2026-01-10 12:00 UTC; handed in 1 min late" in line, line
    assert "1 h of grace: 0 points taken from this notebook" in line, line
    # on a phone the line wraps: never between a number and its unit ("1" / "min late")
    assert not re.search(r"\d (?:d|h|min|UTC)\b", due.group(1)), due.group(1)


def test_an_extension_granted_after_grading_recomputes_only_the_penalty(term):
    _, seen = term
    last = "five-per-hour-grace"
    before = _expected(last, SECONDS_LATE)
    after = _expected(last, {**SECONDS_LATE, "cat": 0.0})
    assert seen["extended"]["cat"] == {"grades.csv": after["cat"], "moodle": after["cat"], "canvas": after["cat"]}
    assert f"cat/attention: {before['cat']:g} -> {after['cat']:g}" in seen["extension"], seen["extension"][-2000:]
    assert "notebooks graded now: 0" in seen["after_extension_run"], seen["after_extension_run"][-2000:]
    assert seen["verdicts_at_end"] == seen["verdicts"]  # the sandbox never ran again
    assert "final grades changed since the last export: 0" in seen["summary"]


def test_a_change_of_points_lists_every_student_whose_grade_changed(term):
    _, seen = term
    last, on_time = "five-per-hour-grace", {**SECONDS_LATE, "cat": 0.0}
    before = _expected(last, on_time)
    fraction = POLICIES[last][1]
    after = {s: round((AUTO + NEW_HIDDEN_POINTS - 2 + HAND[s]) * (1 - fraction(on_time[s])), 6) for s in HAND}
    out = seen["points_run"]
    for s in HAND:
        assert seen["points_scores"][s] == {"grades.csv": after[s], "moodle": after[s], "canvas": after[s]}, s
        assert f"{s}/attention: {before[s]:g} -> {after[s]:g}" in out, out[-3000:]
    assert f"final grades changed since the last export: {len(HAND)}" in out
    # the class report lists the same changes: its table (grade-changes.csv) and its first screen
    rows = {r["student"]: (float(r["old"]), float(r["new"])) for r in seen["points_report_rows"]}
    assert rows == {s: (before[s], after[s]) for s in HAND}, seen["points_report_rows"]
    glance = seen["points_report_page"].split('<section id="glance"')[1].split("</section>")[0]
    for s in HAND:
        assert f"{s}/attention: {before[s]:g} \u2192 {after[s]:g}" in glance, glance[-2000:]
    changed = [p for p, t in seen["verdicts_after_points"].items() if seen["verdicts_at_end"].get(p) != t]
    assert len(changed) == len(HAND)  # the verdicts were decided again: the test cells changed
