"""grades.csv lists students in one order whatever order the database returns them in: nbgrader's
(last name, first name), with the student id breaking ties (unnamed students came out in the
order the grading workers first reached them, so two runs of one class gave two files)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from nbgrader.api import Gradebook

from autograder.nbgrader_ext import gradebook_schema
from autograder.outputs.csv_export import grade_rows

IDS = st.lists(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), min_size=1, max_size=12, unique=True)


@given(IDS, st.data())
def test_rows_follow_names_then_ids_whatever_the_insertion_order(ids, data):
    gradebook_schema.install()
    named = data.draw(st.sets(st.sampled_from(ids)))
    with tempfile.TemporaryDirectory() as tmp:
        with Gradebook(f"sqlite:///{Path(tmp) / 'gradebook.db'}", "course") as gb:
            gb.add_assignment("a1")
            for sid in ids:  # hypothesis draws the insertion order
                gb.add_student(sid, last_name="Zed" if sid in named else None)
            rows = list(grade_rows(gb))
    expected = sorted(ids, key=lambda s: ("Zed" if s in named else "", s))
    assert [r[3] for r in rows] == expected
