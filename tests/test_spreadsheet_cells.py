"""Every CSV the project writes (autograder/outputs/csv_export.py) keeps numbers as numbers and makes
text a spreadsheet would evaluate plain text, for every character a formula can start with; and
grades.csv's rows are nbgrader's: only the assignments and students asked for, a missing submission
as zeros, the final score after the late penalty. Each test holds one of these at its edge, both
ways (docs/mutation.md)."""

from __future__ import annotations

import csv
import tempfile
import warnings
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from autograder.nbgrader_ext import gradebook_schema
from autograder.outputs.csv_export import grade_rows, spreadsheet_cell, write_csv

FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r", "\n", "|", "%"]


@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_text_that_starts_like_a_formula_is_made_text(start):
    assert spreadsheet_cell(f"{start}cmd|' /C calc'!A0") == f"'{start}cmd|' /C calc'!A0"
    assert spreadsheet_cell(start) == f"'{start}"


@pytest.mark.parametrize(("value", "cell"), [
    (3, "3"), (-2.5, "-2.5"), (0.0, "0.0"), ("-4", "-4"), ("+1.5e3", "+1.5e3"), (".5", ".5"), ("-1.", "-1."),
    (None, ""), (True, "True"), ("alice", "alice"), ("", ""), ("a=b", "a=b"), ("-1+2", "'-1+2"), ("1e", "1e"),
    ("-e5", "'-e5"), ("+", "'+"), (float("-inf"), "-inf"),
])
def test_numbers_stay_numbers_and_other_text_is_kept(value, cell):
    assert spreadsheet_cell(value) == cell


@given(st.text(max_size=12))
def test_a_cell_is_its_text_or_its_text_made_plain(text):
    cell = spreadsheet_cell(text)
    assert cell in (text, "'" + text)
    assert (cell != text) == (text.startswith(tuple(FORMULA_STARTS)) and not _is_number(text))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and text.lower().lstrip("+-") not in ("nan", "inf", "infinity") and "_" not in text


@given(st.lists(st.lists(st.one_of(st.text(max_size=6), st.integers(), st.floats(allow_nan=False)), min_size=2,
                         max_size=2), max_size=4))
def test_write_csv_quotes_every_field_and_reads_back_as_cells(rows):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.csv"
        write_csv(path, ["=a", "b"], rows)
        text = path.read_text(encoding="utf-8")
        with open(path, newline="", encoding="utf-8") as fh:
            back = list(csv.reader(fh))
    assert back == [["'=a", "b"], *([spreadsheet_cell(v) for v in row] for row in rows)]
    assert text.startswith('"\'=a","b"\n')


def _gradebook(tmp: Path) -> str:
    gradebook_schema.install()
    url = f"sqlite:///{tmp / 'gradebook.db'}"
    with Gradebook(url, "course") as gb:
        for name in ("a1", "a2"):
            gb.add_assignment(name, duedate=datetime(2026, 11, 1, 12))
        gb.add_notebook("nb", "a1")
        gb.add_grade_cell("c", "nb", "a1", max_score=5, cell_type="code")
        gb.add_student("bob", last_name="Brown", first_name="Bob", email="bob@example.org")
        gb.add_student("alice", last_name="Zed")
        with warnings.catch_warnings():  # nbgrader's own add_submission, under SQLAlchemy 2
            warnings.simplefilter("ignore", SAWarning)
            gb.add_submission("a1", "alice", timestamp=datetime(2026, 11, 2, 12))
            gb.add_submission("a1", "bob", timestamp=datetime(2026, 10, 30, 12))
        gb.find_grade("c", "nb", "a1", "alice").auto_score = 4.0
        gb.find_grade("c", "nb", "a1", "bob").auto_score = 3.0
        gb.find_submission_notebook("nb", "a1", "alice").late_submission_penalty = 1.5
        gb.db.commit()
    return url


def test_grade_rows_are_those_asked_for_with_zeros_for_a_missing_hand_in(tmp_path):
    url = _gradebook(tmp_path)
    with Gradebook(url, "course") as gb:
        every = list(grade_rows(gb))
        assert [(r[0], r[3]) for r in every] == [("a1", "bob"), ("a1", "alice"), ("a2", "bob"), ("a2", "alice")]
        assert [(r[0], r[3]) for r in grade_rows(gb, ["a2"])] == [("a2", "bob"), ("a2", "alice")]
        assert [(r[0], r[3]) for r in grade_rows(gb, [], ["alice"])] == [("a1", "alice"), ("a2", "alice")]
    due = datetime(2026, 11, 1, 12)
    assert every[0] == ("a1", due, datetime(2026, 10, 30, 12), "bob", "Brown", "Bob", "bob@example.org",
                        3.0, 0.0, 3.0, 5.0)  # no penalty recorded: 0
    assert every[1] == ("a1", due, datetime(2026, 11, 2, 12), "alice", "Zed", "", "", 4.0, 1.5, 2.5, 5.0)
    assert every[3] == ("a2", due, "", "alice", "Zed", "", "", 0.0, 0.0, 0.0, 0.0)  # not handed in


def test_students_sharing_a_last_name_are_ordered_by_first_name_then_id(tmp_path):
    gradebook_schema.install()
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}", "course") as gb:
        gb.add_assignment("a1")
        for sid, first in (("dan", "Dan"), ("cy", None), ("al", None), ("bo", "Bo")):
            gb.add_student(sid, last_name="Same", first_name=first)
        assert [r[3] for r in grade_rows(gb)] == ["al", "cy", "bo", "dan"]


def test_the_export_plugin_writes_where_it_is_told_and_else_grades_csv(tmp_path):
    from autograder.errors import RefusedInput
    from autograder.outputs.csv_export import QuotedCsvExportPlugin

    with pytest.raises(RefusedInput, match="no --to and no nbgrader app"):  # no course to take grades.csv from
        _ = QuotedCsvExportPlugin().to
    url = _gradebook(tmp_path)
    with Gradebook(url, "course") as gb:
        QuotedCsvExportPlugin(to=str(tmp_path / "out.csv"), student=["alice"]).export(gb)
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:4] == ["assignment", "duedate", "timestamp", "student_id"] and len(rows) == 3
    assert [r[3] for r in rows[1:]] == ["alice", "alice"]
