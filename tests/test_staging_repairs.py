"""Staging's repairs, one by one (autograder/intake/staging.py), without grading: an answer cell
changed, missing, duplicated, of another type or too long; a locked cell edited (its text or its
points), judged against the release the student received; cells the student added, kept as
code that never runs; the written answers made harmless; nbgrader's timestamp and feedback
secret copied only when sound. Each test holds its repair both ways (docs/mutation.md); the staged
notebooks graded in the sandbox are tests/test_malformed.py and tests/test_security.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from grading_support import RELEASE, SOLUTIONS
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.intake import staging
from autograder.notes import NoteKind
from autograder.workspace import Workspace
from selfattn.answer import graded_source

ASSIGNMENT = "attention"
NB = "02-queries-keys-values"
STUDENT = "sam"


@pytest.fixture
def ws(tmp_path) -> Workspace:
    """A work folder with a course of its own (a copy of the release)."""
    shutil.copytree(RELEASE.parent, tmp_path / "course" / "notebooks")
    (tmp_path / "course" / "solutions").symlink_to(SOLUTIONS.parent)
    return Workspace(tmp_path, tmp_path / "course")


def _release(ws: Workspace) -> nbformat.NotebookNode:
    return nbformat.read(ws.course / "notebooks" / ASSIGNMENT / f"{NB}.ipynb", as_version=4)


def _cell(nb: nbformat.NotebookNode, gid: str) -> nbformat.NotebookNode:
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid]
    return cell


def _submit(ws: Workspace, nb: nbformat.NotebookNode) -> Path:
    folder = ws.submission(STUDENT, ASSIGNMENT)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{NB}.ipynb")
    return folder


def _staged(ws: Workspace, nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str]]:
    _submit(ws, nb)
    staged = staging.staged_notebook(STUDENT, ASSIGNMENT, NB, ws)
    return staged, [str(n) for n in staging.notes_of(staged.metadata["selfattn"])]


def _sources(nb: nbformat.NotebookNode) -> list[str]:
    return [c.source for c in nb.cells]


def test_the_release_handed_back_unchanged_is_staged_as_it_is_with_no_note(ws):
    staged, notes = _staged(ws, _release(ws))
    release = _release(ws)
    assert notes == []
    assert len(staged.cells) == len(release.cells)
    assert _cell(staged, "project").source == graded_source(_cell(release, "project").source).python


def test_an_answer_is_taken_and_a_long_one_is_not(ws, monkeypatch):
    nb = _release(ws)
    _cell(nb, "project").source = "def project(X, W_Q, W_K, W_V):\n    return X, X, X\n"
    _cell(nb, "shape_answers").source = ""  # the other answer, short
    staged, notes = _staged(ws, nb)
    assert notes == [] and "return X, X, X" in _cell(staged, "project").source
    monkeypatch.setattr(staging, "MAX_ANSWER_CHARS", len(_cell(nb, "project").source))
    staged, notes = _staged(ws, nb)
    assert notes == [] and "return X, X, X" in _cell(staged, "project").source  # at the bound: taken
    monkeypatch.setattr(staging, "MAX_ANSWER_CHARS", len(_cell(nb, "project").source) - 1)
    staged, notes = _staged(ws, nb)
    assert notes == ["The answer cell `project` holds 50 characters, more than the 49 an answer may have; "
                     "it is graded as unanswered."]
    assert _cell(staged, "project").source == _cell(_release(ws), "project").source


def test_a_missing_answer_cell_is_noted_and_graded_as_unanswered(ws):
    nb = _release(ws)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "project"]
    staged, notes = _staged(ws, nb)
    assert notes == ["The answer cell `project` was missing (deleted?); it is graded as unanswered."]
    assert _cell(staged, "project").source == _cell(_release(ws), "project").source
    nb.cells = []  # a notebook with no cells at all: one note per answer would say nothing more
    _staged_nb, notes = _staged(ws, nb)
    assert notes == []


def test_a_duplicated_answer_cell_grades_the_first_copy(ws):
    nb = _release(ws)
    first = _cell(nb, "project")
    second = nbformat.from_dict(first)
    second["id"] = "copy-of-project"
    first.source = "def project(X, W_Q, W_K, W_V):\n    return 1\n"
    second.source = "def project(X, W_Q, W_K, W_V):\n    return 2\n"
    nb.cells.insert(nb.cells.index(first) + 1, second)
    staged, notes = _staged(ws, nb)
    assert notes == ["The answer cell `project` appears 2 times; the first one was graded."]
    assert "return 1" in _cell(staged, "project").source


def test_an_answer_cell_of_another_type_is_graded_as_unanswered(ws):
    nb = _release(ws)
    cell = _cell(nb, "project")
    nb.cells[nb.cells.index(cell)] = new_markdown_cell("def project(): pass", metadata=cell.metadata)
    staged, notes = _staged(ws, nb)
    assert notes == ["The answer cell `project` changed type; it is graded as unanswered."]
    assert _cell(staged, "project").source == _cell(_release(ws), "project").source


@pytest.mark.parametrize("checksum", [True, False])
def test_a_locked_cell_edited_or_its_points_changed_is_noted_and_the_original_kept(ws, checksum):
    def handed_in(edit) -> list[str]:
        nb = _release(ws)
        cell = _cell(nb, "project-public")
        if not checksum:
            del cell.metadata.nbgrader["checksum"]
        edit(cell)
        staged, notes = _staged(ws, nb)
        assert _cell(staged, "project-public").source == _cell(_release(ws), "project-public").source
        assert _cell(staged, "project-public").metadata.nbgrader.points == 1
        return notes

    assert handed_in(lambda c: None) == []
    assert handed_in(lambda c: setattr(c, "source", c.source + "\n# easier")) == [
        "The locked cell `project-public` was edited; the original was used."]
    assert handed_in(lambda c: c.metadata.nbgrader.update(points=100)) == [
        "The points of `project-public` were changed; the course's points were used."]


def test_a_locked_cell_is_judged_against_the_release_the_student_received(ws):
    """The instructor changed a test after the release: the student's untouched copy (its own checksum
    still matches) is no edit; without a checksum it would be."""
    nb = _release(ws)
    path = ws.course / "notebooks" / ASSIGNMENT / f"{NB}.ipynb"
    newer = _release(ws)
    _cell(newer, "project-public").source += "\n# a check added since"
    nbformat.write(newer, path)
    _staged_nb, notes = _staged(ws, nb)
    assert notes == []
    del _cell(nb, "project-public").metadata.nbgrader["checksum"]
    _staged_nb, notes = _staged(ws, nb)
    assert notes == ["The locked cell `project-public` was edited; the original was used."]


def test_added_cells_are_kept_after_the_cell_they_followed_as_code_that_never_runs(ws):
    nb = _release(ws)
    at = nb.cells.index(_cell(nb, "project"))
    nb.cells.insert(at + 1, new_code_cell("helper = 1"))
    nb.cells.insert(0, new_markdown_cell("my notes"))
    copy = nbformat.from_dict(nb.cells[1])
    copy["id"] = "copy-of-a-cell"
    nb.cells.insert(2, copy)  # a copy of a release cell: no addition
    nb.cells.append(new_code_cell("   \n"))  # blank: passed over
    staged, notes = _staged(ws, nb)
    assert notes == ["2 cell(s) you added are shown where you put them but were not run or graded: "
                     "each exercise is graded from its own answer cell alone."]
    release = _release(ws)
    assert len(staged.cells) == len(release.cells) + 4
    assert [c.source for c in staged.cells[:2]] == [staging.ADDED_CELL_NOTE, "my notes"]
    assert staged.cells[1].cell_type == "code" and staged.cells[1].metadata["selfattn_added"] == "cell"
    at = staged.cells.index(_cell(staged, "project"))
    assert [c.source for c in staged.cells[at + 1:at + 3]] == [staging.ADDED_CELL_NOTE, "helper = 1"]
    assert _sources(staged)[2:at + 1] == _sources(release)[:at - 1]


def test_added_cells_beyond_the_bounds_are_counted_not_shown(ws, monkeypatch):
    monkeypatch.setattr(staging, "MAX_ADDED_CELLS", 2)
    monkeypatch.setattr(staging, "MAX_EXTRA_CHARS", 10)
    monkeypatch.setattr(staging, "MAX_ADDED_TEXT", 40)
    nb = _release(ws)
    nb.cells += [new_code_cell("x" * 10), new_code_cell("y" * 11), new_code_cell("z = 3")]
    staged, notes = _staged(ws, nb)
    assert notes[0].startswith("2 cell(s) you added") and notes[1].startswith("1 more cell(s) you added")
    assert [c.source for c in staged.cells if c.metadata.get("selfattn_added") == "cell"] == [
        "x" * 10, "y" * 10 + "\n# ... (cut)"]
    monkeypatch.setattr(staging, "MAX_ADDED_CELLS", 5)
    monkeypatch.setattr(staging, "MAX_ADDED_TEXT", 15)  # "x"*10 and "z = 3" fill it exactly; the cut "y" (21) not
    staged, notes = _staged(ws, nb)
    assert [c.source for c in staged.cells if c.metadata.get("selfattn_added") == "cell"] == ["x" * 10, "z = 3"]
    assert notes[1].startswith("1 more cell(s)")


def test_a_written_answer_is_cut_and_shown_with_no_markup_or_outside_image(ws, monkeypatch):
    nb = _release(ws)
    _cell(nb, "why-separate-projections").source = "Because <b>Q</b> and K differ."
    staged, notes = _staged(ws, nb)
    assert notes == ["Markup in the written answer `why-separate-projections` is shown as text, not rendered."]
    assert "<b>" not in _cell(staged, "why-separate-projections").source
    _cell(nb, "why-separate-projections").source = "See ![plot](https://example.org/p.png)."
    staged, notes = _staged(ws, nb)
    assert len(notes) == 1 and notes[0].startswith("An image in the written answer `why-separate-projections` "
                                                   "that is not pasted into it")
    assert "![" not in _cell(staged, "why-separate-projections").source
    _cell(nb, "why-separate-projections").source = "See ![plot](attachment:p.png)."
    _staged_nb, notes = _staged(ws, nb)
    assert len(notes) == 1 and "names an attachment it does not hold" in notes[0]
    monkeypatch.setattr(staging, "MAX_WRITTEN_CHARS", 5)
    _cell(nb, "why-separate-projections").source = "Because"
    staged, notes = _staged(ws, nb)
    assert notes == ["The written answer `why-separate-projections` holds 7 characters; only the first 5 are shown."]
    assert _cell(staged, "why-separate-projections").source == "Becau"
    _cell(nb, "why-separate-projections").source = "Becau"
    staged, notes = _staged(ws, nb)
    assert notes == [] and _cell(staged, "why-separate-projections").source == "Becau"


def test_the_timestamp_and_the_secret_are_copied_only_when_sound(ws):
    folder = _submit(ws, _release(ws))
    target = ws.staged(STUDENT, ASSIGNMENT, NB).parent
    (folder / "timestamp.txt").write_text(" 2026-11-01 12:00:00.000000 UTC \n", encoding="utf-8")
    (folder / "submission_secret.txt").write_text("abc123\n", encoding="ascii")
    assert staging.stage(STUDENT, ASSIGNMENT, NB, ws) == []
    assert (target / "timestamp.txt").read_text() == "2026-11-01 12:00:00.000000 UTC\n"
    assert (target / "submission_secret.txt").read_text() == "abc123"
    (folder / "timestamp.txt").write_text("last tuesday", encoding="utf-8")
    (folder / "submission_secret.txt").write_text("not/a secret", encoding="ascii")
    (target / "submission_secret.txt").unlink()
    (note,) = staging.stage(STUDENT, ASSIGNMENT, NB, ws)
    assert str(note).startswith("timestamp.txt was not used (not a date and time: 'last tuesday')")
    assert not (target / "timestamp.txt").exists()
    made = (target / "submission_secret.txt").read_text()
    assert len(made) == 32 and made.isalnum()
    (folder / "submission_secret.txt").unlink()
    (target / "timestamp.txt").write_text("stale")
    (folder / "timestamp.txt").unlink()
    assert staging.stage(STUDENT, ASSIGNMENT, NB, ws) == []
    assert not (target / "timestamp.txt").exists()
    assert (target / "submission_secret.txt").read_text() == made  # kept across runs


def test_a_staged_notebook_whose_original_is_gone_is_dropped(ws):
    folder = _submit(ws, _release(ws))
    staging.stage_submission(STUDENT, ASSIGNMENT, ws)
    staged = ws.staged(STUDENT, ASSIGNMENT, NB)
    assert staged.is_file()
    (folder / f"{NB}.ipynb").unlink()
    staging.stage_submission(STUDENT, ASSIGNMENT, ws)
    assert not staged.exists()


def test_a_missing_linked_or_unreadable_notebook_is_graded_as_unanswered_with_its_kind(ws):
    folder = ws.submission(STUDENT, ASSIGNMENT)
    folder.mkdir(parents=True)
    cells, notes = staging.read_submission(STUDENT, ASSIGNMENT, NB, ws)
    assert cells == [] and [n.kind for n in notes] == [NoteKind.MISSING]
    (folder / f"{NB}.ipynb").symlink_to(ws.course / "notebooks" / ASSIGNMENT / f"{NB}.ipynb")
    cells, notes = staging.read_submission(STUDENT, ASSIGNMENT, NB, ws)
    assert cells == [] and [n.kind for n in notes] == [NoteKind.UNREADABLE]
    (folder / f"{NB}.ipynb").unlink()
    (folder / f"{NB}.ipynb").write_text("{ not json", encoding="utf-8")
    cells, notes = staging.read_submission(STUDENT, ASSIGNMENT, NB, ws)
    assert cells == [] and [n.kind for n in notes] == [NoteKind.UNREADABLE]
    assert "could not be read as a notebook" in str(notes[0])


def test_a_locked_cell_that_is_not_a_test_is_judged_too_and_a_checksum_not_of_nbgraders_form_is_compared(ws):
    nb = _release(ws)
    _cell(nb, "code-7").source += "\nimport os"
    _staged_nb, notes = _staged(ws, nb)
    assert notes == ["The locked cell `code-7` was edited; the original was used."]
    for checksum in ("", 5):  # unusable: the cell is compared with the release (unchanged: no note)
        nb = _release(ws)
        _cell(nb, "project-public").metadata.nbgrader["checksum"] = checksum
        _staged_nb, notes = _staged(ws, nb)
        assert notes == [], checksum


def test_a_written_answers_safe_attachment_is_kept(ws):
    nb = _release(ws)
    cell = _cell(nb, "why-separate-projections")
    cell.source = "See ![plot](attachment:p.png)."
    cell["attachments"] = {"p.png": {"image/png": "iVBORw0KGgo="}}
    staged, notes = _staged(ws, nb)
    assert notes == []
    assert _cell(staged, "why-separate-projections")["attachments"] == {"p.png": {"image/png": "iVBORw0KGgo="}}
    assert _cell(staged, "why-separate-projections").source == "See ![plot](attachment:p.png)."


def test_a_release_cell_copied_without_its_metadata_is_no_addition_and_places_what_follows(ws):
    nb = _release(ws)
    header = _cell(nb, "md-12")
    bare = new_markdown_cell(header.source)  # the same text, its nbgrader metadata lost
    at = nb.cells.index(header)
    nb.cells[at] = bare
    nb.cells.insert(at + 1, new_code_cell("scratch = 2"))
    staged, notes = _staged(ws, nb)
    assert notes == ["1 cell(s) you added are shown where you put them but were not run or graded: "
                     "each exercise is graded from its own answer cell alone."]
    at = staged.cells.index(_cell(staged, "md-12"))
    assert [c.source for c in staged.cells[at + 1:at + 3]] == [staging.ADDED_CELL_NOTE, "scratch = 2"]
    nb.cells.insert(at + 1, new_markdown_cell(header.source))  # a second copy: the release has one
    _staged_nb, notes = _staged(ws, nb)
    assert notes[0].startswith("2 cell(s) you added")


def test_a_source_list_with_items_that_are_not_text_keeps_its_text(ws):
    nb = _release(ws)
    _cell(nb, "project").source = "def project(X, W_Q, W_K, W_V):\n    return 7\n"
    nb.cells.append(new_code_cell("extra = 1\n"))
    data = json.loads(nbformat.writes(nb))
    changed = 0
    for cell in data["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if text in ("def project(X, W_Q, W_K, W_V):\n    return 7\n", "extra = 1\n"):
            cell["source"], changed = [text, 5, None], changed + 1
    assert changed == 2
    folder = ws.submission(STUDENT, ASSIGNMENT)
    folder.mkdir(parents=True)
    (folder / f"{NB}.ipynb").write_text(json.dumps(data), encoding="utf-8")
    staged = staging.staged_notebook(STUDENT, ASSIGNMENT, NB, ws)
    assert "return 7" in _cell(staged, "project").source
    assert [c.source for c in staged.cells if c.metadata.get("selfattn_added") == "cell"] == ["extra = 1\n"]
