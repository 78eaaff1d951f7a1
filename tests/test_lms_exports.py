"""The Canvas and Moodle files, read with the csv module as the LMS reads them, from a gradebook
built with nbgrader's own API and a course roster carrying SIS identifiers for some students."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from autograder.nbgrader_ext import gradebook_schema
from autograder.outputs.lms_export import read_roster, students_without_identity, write_lms_exports
from autograder.workspace import ROOT

COURSE = "self-attention"
#: (grade id, points) of 01-embeddings, as the course registers them
CELLS = (("embed-public", 1.0), ("embed-hidden", 2.0))


def _gradebook(tmp: Path) -> str:
    gradebook_schema.install()  # as the course configuration does: no `alembic` command needed
    url = f"sqlite:///{tmp / 'gradebook.db'}"
    with Gradebook(url, COURSE) as gb:
        gb.add_assignment("attention")
        gb.add_notebook("01-embeddings", "attention")
        for name, points in CELLS:
            gb.add_grade_cell(name, "01-embeddings", "attention", max_score=points, cell_type="code")
        for sid, first, last, lms in (("alice", "Alice", "Ames", "1001"), ("bob", "Bob", "Brown", None),
                                      ("=cmd", "Eve", "Evil", None)):
            gb.add_student(sid, first_name=first, last_name=last, email=f"{first.lower()}@example.org",
                           lms_user_id=lms)
            with warnings.catch_warnings():  # nbgrader's own add_submission, under SQLAlchemy 2
                warnings.simplefilter("ignore", SAWarning)
                gb.add_submission("attention", sid)
            for name, points in CELLS:
                gb.find_grade(name, "01-embeddings", "attention", sid).auto_score = points if sid == "alice" else 0.0
        gb.db.commit()
    return url


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


@pytest.fixture()
def exported(tmp_path):
    url = _gradebook(tmp_path)
    roster = tmp_path / "roster.csv"
    # the file given to `nbgrader db student import`, with the roster's extra columns
    roster.write_text("id,first_name,last_name,email,sis_user_id,sis_login_id,section\n"
                      "alice,Alice,Ames,alice@example.org,S-0001,aames,Tue lab\n"
                      "bob,Bob,Brown,bob@example.org,,,\n")
    lines: list[str] = []
    out = write_lms_exports(url, COURSE, tmp_path / "exports", roster=roster, log=lines.append, course_root=ROOT)
    return {name: _read(path) for name, path in out.items()}, lines


def test_canvas_sis_columns_hold_the_rosters_ids_and_nothing_guessed(exported):
    files, lines = exported
    head, possible, *rows = files["canvas"]
    assert head[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert possible[0] == "Points Possible"
    assert possible[head.index("attention: 01-embeddings: embed")] == "3"
    by_name = {r[0]: dict(zip(head, r, strict=True)) for r in rows}
    alice, bob = by_name["Ames Alice"], by_name["Brown Bob"]
    assert (alice["ID"], alice["SIS User ID"], alice["SIS Login ID"], alice["Section"]) == \
        ("1001", "S-0001", "aames", "Tue lab")
    # nothing known of bob's SIS ids: empty, not his nbgrader id
    assert (bob["ID"], bob["SIS User ID"], bob["SIS Login ID"], bob["Section"]) == ("", "", "", "")
    assert alice["attention: 01-embeddings: embed"] == "3"
    # the students Canvas cannot match are named in one line, alice (who has ids) is not
    assert len(lines) == 1 and "no LMS identity for 2 students" in lines[0], lines
    assert "bob" in lines[0] and "alice" not in lines[0]


def test_without_a_roster_the_students_canvas_cannot_match_are_named(tmp_path):
    url = _gradebook(tmp_path)
    lines: list[str] = []
    write_lms_exports(url, COURSE, tmp_path / "exports", roster=tmp_path / "roster.csv", log=lines.append,
                      course_root=ROOT)
    assert len(lines) == 1 and f"{tmp_path / 'roster.csv'} does not exist" in lines[0], lines


def test_the_summarys_list_of_students_without_an_lms_identity(tmp_path):
    """What the grading summary lists: one line per student Canvas cannot match, saying why."""
    url = _gradebook(tmp_path)
    roster = tmp_path / "roster.csv"
    assert students_without_identity(url, COURSE, roster) == [
        f"=cmd: {roster} does not exist", f"bob: {roster} does not exist"]  # alice has a Canvas ID
    roster.write_text("id,sis_user_id,sis_login_id\nbob,,bbrown\n=cmd,,\n")
    assert students_without_identity(url, COURSE, roster) == [f"=cmd: not in {roster} with an LMS id"]
    roster.write_text("student\nbob\n")  # unreadable: as if empty (the exports' warning names the problem)
    assert [line.split(":")[0] for line in students_without_identity(url, COURSE, roster)] == ["=cmd", "bob"]


def test_moodle_columns_are_labelled_as_moodle_maps_them(exported):
    files, _ = exported
    head, *rows = files["moodle"]
    assert head[:4] == ["username", "ID number", "Email address", "Full name"]
    by_user = {r[0]: dict(zip(head, r, strict=True)) for r in rows}
    assert by_user["alice"]["ID number"] == "S-0001"  # the institution's number, not the login
    assert by_user["bob"]["ID number"] == ""
    assert by_user["bob"]["Email address"] == "bob@example.org"
    assert by_user["alice"]["attention (total)"] == "3"


def test_one_writer_numbers_stay_numbers_and_formulas_are_neutralised(exported):
    files, _ = exported
    _, *rows = files["moodle"]
    evil = next(r for r in rows if r[3] == "Evil Eve")
    assert evil[0] == "'=cmd"  # a login that a spreadsheet would run is text
    # every LMS file quotes every field, as grades.csv does (the same writer)
    for name in ("canvas", "moodle"):
        for row in files[name]:
            assert all(not cell.startswith(("=", "+", "@")) for cell in row), row


def test_a_broken_roster_costs_one_line_and_only_its_columns(tmp_path):
    url = _gradebook(tmp_path)
    roster = tmp_path / "roster.csv"
    roster.write_text("student,sis_user_id\nalice,S-1\n")
    lines: list[str] = []
    out = write_lms_exports(url, COURSE, tmp_path / "exports", roster=roster, log=lines.append, course_root=ROOT)
    assert len(lines) == 2 and "no 'id' column" in lines[0] and str(roster) in lines[0], lines
    assert "no LMS identity" in lines[1], lines
    head, _, *rows = _read(out["canvas"])
    assert {r[head.index("SIS User ID")] for r in rows} == {""}
    with pytest.raises(ValueError, match="listed twice"):
        roster.write_text("id,sis_user_id\nalice,S-1\nalice,S-2\n")
        read_roster(roster)
