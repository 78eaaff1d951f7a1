"""The late policy where it decides grades: in nbgrader's gradebook (autograder/late/due_dates.py's
``apply``, autograder/late/penalties.py). A gradebook of three students, one late, one on time, one
who has not handed in: due dates and extensions are written once and only where they change, an
extension waits for its student's hand-in and never moves a due date earlier, and the penalty, the
final scores and the late lines follow the policy for exactly the submissions named. Each test holds
one of these both ways (docs/mutation.md); the whole loop with make grade is tests/test_late_work.py."""

from __future__ import annotations

import warnings
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning
from traitlets.config import Config

from autograder.errors import RefusedInput
from autograder.late import due_dates, penalties
from autograder.late.policy import LatePenalty, Policy
from autograder.nbgrader_ext import gradebook_schema

DUE = datetime(2026, 11, 1, 12)
COURSE = "course"
TEN_PER_DAY = Policy("percent", 10, "day", 50)


@pytest.fixture
def url(tmp_path) -> str:
    gradebook_schema.install()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url, COURSE) as gb:
        gb.add_assignment("a1", duedate=DUE)
        gb.add_assignment("a2")
        gb.add_notebook("nb", "a1")
        gb.add_grade_cell("c", "nb", "a1", max_score=10, cell_type="code")
        for student, handed_in in (("alice", DUE + timedelta(days=1, seconds=1)), ("bob", DUE - timedelta(hours=1)),
                                   ("carol", None)):
            gb.add_student(student)
            if handed_in is not None:
                with warnings.catch_warnings():  # nbgrader's own add_submission, under SQLAlchemy 2
                    warnings.simplefilter("ignore", SAWarning)
                    gb.add_submission("a1", student, timestamp=handed_in)
                gb.find_grade("c", "nb", "a1", student).auto_score = 8.0
        gb.db.commit()
    return url


def _file(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "due-dates.csv"
    path.write_text("assignment,student,due\n" + "".join(f"{r}\n" for r in rows), encoding="utf-8")
    return path


def _extension(url: str, student: str) -> timedelta | None:
    with Gradebook(url, COURSE) as gb:
        return gb.find_submission("a1", student).extension


def test_a_due_date_is_written_once_and_only_when_it_changes(url, tmp_path):
    same = _file(tmp_path, "a1,,2026-11-01 12:00 UTC")
    assert due_dates.apply(url, COURSE, same) == []
    moved = _file(tmp_path, "a1,,2026-11-02 12:00 UTC", "a3,,2026-12-01 12:00 UTC")
    assert due_dates.apply(url, COURSE, moved) == ["a1: due 2026-11-02 12:00 UTC", "a3: due 2026-12-01 12:00 UTC"]
    assert due_dates.apply(url, COURSE, moved) == []
    with Gradebook(url, COURSE) as gb:
        assert gb.find_assignment("a1").duedate == DUE + timedelta(days=1)


def test_an_extension_is_written_once_waits_for_a_hand_in_and_never_moves_a_due_date_earlier(url, tmp_path):
    path = _file(tmp_path, "a1,alice,2026-11-03 12:00 UTC", "a1,carol,2026-11-03 12:00 UTC",
                 "a1,bob,2026-10-30 12:00 UTC")
    assert due_dates.apply(url, COURSE, path) == ["alice/a1: extension to 2026-11-03 12:00 UTC"]
    assert _extension(url, "alice") == timedelta(days=2) and not _extension(url, "bob")
    assert due_dates.apply(url, COURSE, path) == []
    with Gradebook(url, COURSE) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        gb.add_submission("a2", "alice")
    with pytest.raises(RefusedInput, match="an extension for alice/a2, which has no due date"):
        due_dates.apply(url, COURSE, _file(tmp_path, "a2,alice,2026-11-03 12:00 UTC"))


def test_the_penalty_follows_the_policy_for_exactly_the_submissions_named(url):
    assert penalties.apply(url, COURSE, TEN_PER_DAY, "a1", "bob") == 0  # one on time: nothing recorded
    assert penalties.apply(url, COURSE, TEN_PER_DAY, "a1", "nobody") == 0
    assert penalties.apply(url, COURSE, TEN_PER_DAY, "a*", "b*") == 0
    assert penalties.final_scores(url, COURSE) == {"alice/a1": 8.0, "bob/a1": 8.0}
    assert penalties.apply(url, COURSE, TEN_PER_DAY, "a1", "alice") == 1  # two started days: 20 % of 8
    assert penalties.final_scores(url, COURSE) == {"alice/a1": 6.4, "bob/a1": 8.0}
    assert penalties.apply(url, COURSE, TEN_PER_DAY) == 0  # nothing changed since
    assert penalties.apply(url, COURSE, Policy("zero")) == 1
    assert penalties.final_scores(url, COURSE) == {"alice/a1": 0.0, "bob/a1": 8.0}
    assert penalties.apply(url, COURSE, Policy("none"), "*", "*") == 1
    assert penalties.final_scores(url, COURSE) == {"alice/a1": 8.0, "bob/a1": 8.0}
    assert penalties.late_lines(url, COURSE, Policy("none")) == [
        "alice/a1: 24 h 1 min late (due 2026-11-01 12:00 UTC), penalty 0 points"]
    assert penalties.apply(url, COURSE, Policy("zero"), "a2", "*") == 0  # a2: no hand-in
    assert penalties.apply(url, COURSE, Policy("zero"), "a1", "*") == 1


def test_the_late_lines_name_only_late_submissions_with_their_due_date_and_cost(url, tmp_path):
    penalties.apply(url, COURSE, TEN_PER_DAY)
    line = "alice/a1: 24 h 1 min late (due 2026-11-01 12:00 UTC), penalty 1.6 points"
    assert penalties.late_lines(url, COURSE, TEN_PER_DAY) == [line]
    assert penalties.late_lines(url, COURSE, TEN_PER_DAY, ["bob", "carol"]) == []
    assert penalties.late_lines(url, COURSE, TEN_PER_DAY, ["alice"]) == [line]
    due_dates.apply(url, COURSE, _file(tmp_path, "a1,alice,2026-11-02 10:00 UTC"))
    penalties.apply(url, COURSE, TEN_PER_DAY)
    assert penalties.late_lines(url, COURSE, TEN_PER_DAY) == [
        "alice/a1: 2 h 1 min late (due 2026-11-02 10:00 UTC with an extension), penalty 0.8 points"]


def test_a_due_dates_file_that_cannot_be_read_or_lists_an_extension_twice_is_one_line(tmp_path):
    path = tmp_path / "due-dates.csv"
    path.write_bytes(b"assignment,student,due\na1,,2026-11-01 \xff\n")
    with pytest.raises(RefusedInput, match="could not be read"):
        due_dates.read(path)
    twice = _file(tmp_path, "a1,alice,2026-11-03 12:00 UTC", "a1,alice,2026-11-04 12:00 UTC")
    with pytest.raises(RefusedInput, match="line 3: a1/alice is listed twice"):
        due_dates.read(twice)


def test_a_hand_in_exactly_at_its_due_date_records_no_penalty():
    for policy in (Policy("zero"), TEN_PER_DAY):
        assert policy.notebook_penalty(8.0, 0.0) is None
        assert policy.notebook_penalty(8.0, 1.0) == (8.0 if policy.method == "zero" else 0.8)
    config = Config()  # nbgrader's hook at autograde: the same formula
    config.LateSubmissionPlugin.penalty_method = "zero"
    assert LatePenalty(config=config).late_submission_penalty("alice", 8.0, 1.0) == 8.0


def test_every_policy_describes_itself_in_a_few_words():
    assert Policy("none", grace_seconds=300).describe() == "no penalty for late work"
    assert Policy("zero").describe() == "late work scores 0"
    assert Policy("zero", grace_seconds=300).describe() == "late work scores 0, 5 min of grace"
    assert TEN_PER_DAY.describe() == "10% of the score per started day late, at most 50%"


def test_a_hand_in_less_than_a_second_late_is_in_the_late_lines(url):
    with Gradebook(url, COURSE) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        gb.add_submission("a1", "carol", timestamp=DUE + timedelta(milliseconds=500))
    penalties.apply(url, COURSE, TEN_PER_DAY, "a1", "carol")
    lines = penalties.late_lines(url, COURSE, TEN_PER_DAY, ["carol"])
    assert len(lines) == 1 and lines[0].startswith("carol/a1: ") and "penalty 0" in lines[0]
