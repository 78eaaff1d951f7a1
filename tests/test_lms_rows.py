"""The rows and columns the LMS files are made of (autograder/outputs/lms_export.py's ``class_table``
and roster): a student who did not hand in scores 0 and says so, a late one is marked late, answers
waiting for hand-grading make the status PENDING, a student without names is shown by id, each
notebook has its own column and points, and a roster row without an id is passed over while one
listed twice, or an unreadable roster, is one line. Each test holds one of these both ways
(docs/mutation.md); the files themselves are tests/test_lms_exports.py."""

from __future__ import annotations

import warnings
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from autograder.nbgrader_ext import gradebook_schema
from autograder.outputs.lms_export import class_table, read_roster, write_lms_exports
from autograder.workspace import ROOT

COURSE = "course"
DUE = datetime(2026, 11, 1, 12)


@pytest.fixture
def url(tmp_path) -> str:
    gradebook_schema.install()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url, COURSE) as gb:
        gb.add_assignment("later")
        gb.add_assignment("first", duedate=DUE)
        gb.add_notebook("nb", "first")
        gb.add_grade_cell("auto", "nb", "first", max_score=2, cell_type="code")
        gb.add_grade_cell("hand", "nb", "first", max_score=3, cell_type="markdown")
        gb.add_solution_cell("hand", "nb", "first")
        for sid, last, handed_in in (("alice", "Ames", DUE + timedelta(hours=1)), ("bob", None, DUE),
                                     ("carol", "Cole", None)):
            gb.add_student(sid, last_name=last)
            if handed_in is None:
                continue
            with warnings.catch_warnings():  # nbgrader's own add_submission, under SQLAlchemy 2
                warnings.simplefilter("ignore", SAWarning)
                gb.add_submission("first", sid, timestamp=handed_in)
            auto = gb.find_grade("auto", "nb", "first", sid)
            auto.auto_score, auto.needs_manual_grade = 2.0, False
            hand = gb.find_grade("hand", "nb", "first", sid)
            hand.manual_score = None if sid == "alice" else 1.0
            hand.needs_manual_grade = sid == "alice"
        gb.db.commit()
    return url


def test_the_class_table_says_who_handed_in_late_pending_or_not_at_all(url):
    columns, possible, rows = class_table(url, COURSE, ROOT)
    assert columns == ["first (total)", "first: nb", "first: nb: auto", "first: nb: hand", "first late",
                       "first status", "later (total)", "later late", "later status"]
    assert possible == ["5", "5", "2", "3", "", "", "0", "", ""]
    by_id = {r["id"]: r for r in rows}
    assert by_id["alice"]["first late"] == "late" and by_id["bob"]["first late"] == ""
    assert by_id["alice"]["first status"] == "PENDING: 1 answers to hand-grade"
    assert by_id["bob"]["first status"] == "final" and by_id["bob"]["first (total)"] == "3"
    assert by_id["bob"]["first: nb: auto"] == "2" and by_id["bob"]["first: nb: hand"] == "1"
    assert by_id["carol"]["first (total)"] == 0 and by_id["carol"]["first status"] == "not submitted"
    assert by_id["bob"]["name"] == "bob" and by_id["alice"]["name"] == "Ames"


def test_the_exports_go_into_a_new_or_an_existing_folder(url, tmp_path):
    folder = tmp_path / "a" / "b"
    for _ in range(2):
        out = write_lms_exports(url, COURSE, folder, roster=tmp_path / "none.csv", log=lambda _line: None,
                                course_root=ROOT)
        assert sorted(p.name for p in out.values()) == ["canvas.csv", "moodle.csv"]


def test_a_roster_row_without_an_id_is_passed_over_and_a_bad_roster_is_one_line(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,sis_user_id\n,S-1\n,S-2\nalice,S-3\n", encoding="utf-8")
    assert {k: v.sis_user_id for k, v in read_roster(roster).items()} == {"alice": "S-3"}
    roster.write_text("id,sis_user_id\nalice,S-1\nbob,S-2\nalice,S-3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"roster\.csv, line 4: student 'alice' is listed twice"):
        read_roster(roster)
    roster.write_bytes(b"id,sis_user_id\nalice,S-\xff\n")
    with pytest.raises(ValueError, match="the roster could not be read"):
        read_roster(roster)
    assert read_roster(Path(tmp_path / "none.csv")) == {}


def test_a_hand_in_less_than_a_second_late_is_marked_late(url):
    with Gradebook(url, COURSE) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        gb.add_submission("first", "carol", timestamp=DUE + timedelta(milliseconds=500))
    rows = {r["id"]: r for r in class_table(url, COURSE, ROOT)[2]}
    assert rows["carol"]["first late"] == "late" and rows["bob"]["first late"] == ""
