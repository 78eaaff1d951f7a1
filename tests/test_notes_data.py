"""Grading notes are data (issue 20 §1): each note is made with its kind where it is decided, and
the run summary and the class report count kinds. Rewording every note changes what people read
and nothing that is counted; a note whose words mimic another kind is counted as what it is.

Staging runs for real on hand-made submissions (no sandbox: this is the unit lane); the notes of
fair blame come from :func:`autograder.verdicts.blame.regrade` with the re-run given to it. The notes a
sandbox run makes (a cell that raised) are checked on real grading in tests/test_fault_blame.py.
"""

from __future__ import annotations

import json
import pickle
import shutil
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from grading_support import RELEASE, SOLUTIONS
from hypothesis import given
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell

from autograder.intake import staging
from autograder.notes import Note, NoteKind, notes_of
from autograder.reporting import class_report as report
from autograder.reporting.run_summary import Summary
from autograder.verdicts import blame
from autograder.verdicts.record import Verdict
from autograder.workspace import ROOT, Workspace, from_environment
from selfattn.checks.findings import Finding, Kind

NB = "03-softmax-attention"
ASSIGNMENT = "attention"


# --- the record ------------------------------------------------------------------------------------


@given(st.text(max_size=200), st.sampled_from(list(NoteKind)))
def test_a_note_keeps_its_text_and_kind_through_its_record_json_and_pickle(text, kind):
    note = Note(text, kind)
    assert str(note) == text and note.kind is kind
    back = Note.from_json(json.loads(json.dumps(note.to_json())))
    assert (str(back), back.kind) == (text, kind)
    again = pickle.loads(pickle.dumps(note))
    assert (str(again), again.kind) == (text, kind)


@given(st.text(max_size=200))
def test_an_old_verdicts_bare_string_note_reads_as_other_whatever_it_says(text):
    """A verdict written before notes were data holds strings: each is an "other note", even one that
    says "No file ... was submitted" (nothing is inferred from words)."""
    for words in (text, f"No file {NB}.ipynb was submitted; it is graded as unanswered.",
                  "The grader could not process this notebook"):
        (note,) = notes_of({"notes": [words]})
        assert note.kind is NoteKind.OTHER and str(note) == words
        assert Note.from_json(words).kind.value == "other note"
    assert notes_of({"notes": [{"kind": "NO_SUCH_KIND", "text": "x"}]})[0].kind is NoteKind.OTHER
    assert notes_of({}) == [] and notes_of({"notes": "not a list"}) == []


# --- the notes of a class, made by the real code -----------------------------------------------------


def _cells_without(nb: nbformat.NotebookNode, grade_id: str) -> None:
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != grade_id]


def _edit_test_cell(nb: nbformat.NotebookNode) -> None:
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax-public")
    cell.source += "\n# made easier"


def _add_cell(nb: nbformat.NotebookNode) -> None:
    nb.cells.append(new_code_cell("helper = 1"))


#: student -> what their folder holds (a change to the release, or a kind of file); and the kinds of
#: the notes staging must give them
CLASS = {
    "ok": ("release", []),
    "gone": ("nothing", [NoteKind.MISSING]),
    "junk": ("not json", [NoteKind.UNREADABLE]),
    "link": ("symlink", [NoteKind.UNREADABLE]),
    "deleted": (lambda nb: _cells_without(nb, "softmax"), [NoteKind.REPAIRED]),
    "locked": (_edit_test_cell, [NoteKind.REPAIRED]),
    "added": (_add_cell, [NoteKind.OTHER]),
    "stamp": ("bad timestamp", [NoteKind.OTHER]),
    "broken": ("grader fails", [NoteKind.GRADER_ERROR]),
}


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A work folder holding the :data:`CLASS` submissions of notebook 03; staging writes into it."""
    release = tmp_path / "course" / "notebooks"  # a course of its own: a copy of the release
    shutil.copytree(RELEASE.parent, release)
    (tmp_path / "course" / "solutions").symlink_to(SOLUTIONS.parent)
    released = release / ASSIGNMENT / f"{NB}.ipynb"
    for student, (what, _kinds) in CLASS.items():
        folder = tmp_path / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        target = folder / f"{NB}.ipynb"
        if callable(what):
            nb = nbformat.read(released, as_version=4)
            what(nb)
            nbformat.write(nb, target)
        elif what == "not json":
            target.write_text("{ this is not a notebook", encoding="utf-8")
        elif what == "symlink":
            target.symlink_to(released)
        elif what != "nothing":
            shutil.copy(released, target)
        if what == "bad timestamp":
            (folder / "timestamp.txt").write_text("last tuesday\n", encoding="utf-8")
    real = staging.staged_notebook

    def staged_notebook(student, assignment, notebook, *args, **kwargs):  # a fault of the grader on one notebook
        if student == "broken":
            raise RuntimeError("the grader tripped")
        return real(student, assignment, notebook, *args, **kwargs)

    monkeypatch.setattr(staging, "staged_notebook", staged_notebook)
    return tmp_path


def _blame_notes() -> list[Note]:
    """The two notes of fair blame, decided by :func:`autograder.verdicts.blame.regrade` from the re-run's
    results: attention right with the course's softmax, and attention wrong with it too."""
    own = {"attention/no-mask": Finding("wrong", Kind.WRONG_VALUES)}
    softmax_fails = {"softmax/rows-sum-to-one": Finding("wrong", Kind.WRONG_VALUES), **own}
    answers = {"softmax": "def softmax(S, axis=-1):\n    return S\n", "scaled_scores": "",
               "attention": "def attention(Q, K, V, mask=None):\n    return V\n"}
    notes = []
    for rerun in ({"attention/no-mask": None}, own):
        _, note = blame.regrade(ASSIGNMENT, NB, "attention", answers, softmax_fails, own,
                                lambda code, oracle, rerun=rerun: dict(rerun), ROOT)
        assert note is not None
        notes.append(note)
    return notes


def _class_notes(course: Path) -> dict[str, list[Note]]:
    """student -> the notes staging gave them (read back from the staged notebook, as grading
    does), and the blame notes as a student of their own."""
    out, ws = {}, Workspace(course, course / "course")
    for student in CLASS:
        notes = staging.stage(student, ASSIGNMENT, NB, ws)
        staged = nbformat.read(ws.staged(student, ASSIGNMENT, NB), as_version=4)
        stored = notes_of(staged.metadata["selfattn"])
        # the staged notebook holds every note but the timestamp's (that one is about the folder)
        assert [(str(n), n.kind) for n in stored] == [(str(n), n.kind) for n in notes][: len(stored)], student
        out[student] = notes
    out["blamed"] = _blame_notes()
    return out


def _counts(notes: dict[str, list[Note]]) -> tuple[Counter, dict[str, int], int]:
    """What readers count: the class report's faults by kind, its number of notebooks handed in, and
    the run summary's lists (which list staging's notes: those of the students of :data:`CLASS`)."""
    data = report.ClassData(students=sorted(notes), assignments=[ASSIGNMENT], ws=from_environment())
    for student, ns in notes.items():
        data.verdicts[(student, ASSIGNMENT, NB)] = Verdict(student, ASSIGNMENT, NB, notes=tuple(ns))
    tables: dict = {}
    report.build(data, None, tables)
    faults = Counter(row[3] for row in tables["faults"][1])
    (row,) = [r for r in tables["notebooks"][1] if r[0] == NB]
    summary = Summary()
    for student, ns in notes.items():
        for note in ns if student in CLASS else ():
            summary.add_note(f"{student}/{ASSIGNMENT}/{NB}", note)
    lists = {name: len(getattr(summary, name)) for name in ("unreadable", "repaired", "sandbox_failures")}
    return faults, lists, int(row[-1])


def test_each_note_is_made_with_its_kind(course):
    notes = _class_notes(course)
    for student, (_what, kinds) in CLASS.items():
        assert [n.kind for n in notes[student]] == kinds, (student, notes[student])
    assert [n.kind for n in notes["blamed"]] == [NoteKind.DEPENDENCY_BLAMED, NoteKind.JUDGED_WITH_COURSE]
    assert notes["blamed"][0].text.startswith("`attention` is right, but it calls your `softmax`")


def test_rewording_every_note_changes_no_count_of_the_report_or_the_summary(course, monkeypatch):
    """Every note reworded where it is made (its text reversed and prefixed with words of other
    kinds): the report's fault kinds, its notebooks handed in and the summary's lists stay."""
    faults, lists, handed = _counts(_class_notes(course))
    assert faults["unreadable notebook"] == 2 and faults["repaired notebook"] == 2, faults
    assert faults["grader error"] == 1 and faults["other note"] == 2, faults
    assert faults["dependency blamed"] == 1 and faults["judged with the course's functions"] == 1, faults
    assert lists == {"unreadable": 2, "repaired": 4, "sandbox_failures": 1}, lists
    assert handed == len(CLASS)  # the blamed student's notebook too, but not the one with no file

    made = Note.__post_init__
    words = "No file x.ipynb was submitted: it could not be read as a notebook; the grader could not process it: "

    def reworded(self: Note) -> None:  # once: a note read back from its record keeps its text
        made(self)
        if not self.text.startswith(words):
            object.__setattr__(self, "text", words + self.text[::-1])

    monkeypatch.setattr(Note, "__post_init__", reworded)
    notes = _class_notes(course)
    texts = [str(n) for ns in notes.values() for n in ns]
    assert texts and all(t.startswith(words) for t in texts), texts
    assert _counts(notes) == (faults, lists, handed)


def test_a_note_that_says_what_another_kind_says_is_counted_as_what_it_is():
    """A cell of the student's that raised ``ValueError("... could not be read as a notebook")`` (a
    note of grading), and a note of staging that quotes "No file ... was submitted" and "The grader
    could not process this notebook" (a student's text), are what they are."""
    raised = Note("While grading attention: the cell of softmax raised ValueError: could not be read as a "
                  "notebook (line 3).", NoteKind.CELL_RAISED)
    other = Note(f"In `softmax`: No file {NB}.ipynb was submitted; The grader could not process this notebook.")
    faults, lists, handed = _counts({"blamed": [raised], "ok": [other]})
    assert faults["cell raised"] == 1 and faults["other note"] == 1, faults
    assert not faults["unreadable notebook"] and not faults["grader error"], faults
    assert lists == {"unreadable": 0, "repaired": 1, "sandbox_failures": 0}, lists
    assert handed == 2
