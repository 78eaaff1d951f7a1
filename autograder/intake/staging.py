"""Stage a submission: read it as data, never run it, and copy its answers into a fresh copy of
the released notebook, so deleted cells, edited test cells and changed points cannot matter; every
repair becomes a grading note. Unreadable files are graded as unanswered, with the reason.

The raw submission stays in ``submitted/`` (where ``nbgrader collect`` puts it) and is never
written; nbgrader reads the staged copy in ``.grading/submitted/`` (its ``submitted_directory``),
with nbgrader's ``timestamp.txt`` and ``submission_secret.txt`` beside it when they are sound, so
late penalties and ``release_feedback`` work.

Tampering is judged against the release the student received, not the current one: nbgrader
stores a checksum of every locked and test cell in the release, so a cell whose text and points
still match its own checksum was not touched, even if the instructor has since changed that test.

Cells the student added (a helper, a scratch cell) are kept where they were, as code that is shown
but never run or graded, each after a line saying so: the grader in formgrader and the student
reading the feedback can then see what an error was about.

The staged notebook carries its notes in ``metadata.selfattn.notes``, each as data (its kind and
its text: :mod:`autograder.notes`).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell
from nbgrader import utils

from autograder.course.spec import notebooks_of, release_path
from autograder.errors import RefusedFile
from autograder.intake.untrusted import (
    MAX_TIMESTAMP_BYTES,
    NotANotebook,
    disarm_markup,
    link_missing_attachments,
    link_outside_images,
    one_line,
    read_notebook,
    read_regular,
    safe_attachments,
    storable,
)
from autograder.notes import Note, NoteKind, notes_of, records
from autograder.outputs import atomic
from autograder.workspace import Workspace
from selfattn.answer import graded_source

#: longest text of an added cell shown in the feedback
MAX_EXTRA_CHARS = 20_000
#: added cells kept (shown, never run): the first ones, up to this many and this much text in all;
#: the rest are counted in one note, so no submission makes staging or its feedback page large
MAX_ADDED_CELLS = 200
MAX_ADDED_TEXT = 200_000
#: an answer longer than this is not graded (a real one is a few hundred characters); a written
#: answer is cut there instead (it may inline an image)
MAX_ANSWER_CHARS = 100_000
MAX_WRITTEN_CHARS = 1_000_000
MAX_SECRET_BYTES = 200

ADDED_CELL_NOTE = ("*The cell below was added to the notebook (or is a changed copy of one of its "
                   "cells). It is shown as you handed it in but was not run and earns no points: "
                   "each exercise is graded from its own answer cell alone, so a helper it needs "
                   "must be defined inside that cell.*")


def _source_text(cell) -> str:
    src = cell.get("source", "")
    return "".join(s for s in src if isinstance(s, str)) if isinstance(src, list) else str(src)


def _grade_id(cell: dict) -> str | None:
    meta = cell.get("metadata")
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    gid = nbg.get("grade_id") if isinstance(nbg, dict) else None
    return gid if isinstance(gid, str) else None


def _change_since_release(theirs: dict, ours) -> str | None:
    """How a locked or test cell differs from what the student received: None, "points" or "text".

    nbgrader's release stores a checksum of each such cell (text, type, points); a cell that still
    matches its own checksum was not edited, whatever the course's current version says. Without
    a usable checksum, the cell is compared with the current release.
    """
    meta = theirs.get("metadata")
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    points = nbg.get("points") if isinstance(nbg, dict) else None
    course_points = ours.metadata.get("nbgrader", {}).get("points")
    try:
        cell = nbformat.from_dict(theirs)
        cell.source = _source_text(theirs)
        stored = cell.metadata.nbgrader.get("checksum")
        if isinstance(stored, str) and stored:
            if utils.compute_checksum(cell) == stored:
                return None
            if course_points is not None:
                cell.metadata.nbgrader["points"] = course_points
                if utils.compute_checksum(cell) == stored:
                    return "points"
            return "text"
    except Exception:  # hostile metadata (points that are not numbers, ...): compare instead
        pass
    if _source_text(theirs) != ours.source:
        return "text"
    return "points" if course_points is not None and points != course_points else None


def read_submission(student: str, assignment: str, notebook: str,
                    ws: Workspace) -> tuple[list[dict], list[Note]]:
    """The cells of a handed-in notebook as plain data (none if absent or unreadable), and notes.

    Its stored outputs are dropped while it is read, every string is made storable, and any other
    repair is noted (:func:`autograder.intake.untrusted.read_notebook`)."""
    original = ws.submission(student, assignment) / f"{notebook}.ipynb"
    if not original.exists() and not original.is_symlink():
        return [], [missing_note(notebook)]
    try:
        cells, notes = read_notebook(original)
    except RefusedFile as exc:
        return [], [refused_note(notebook, str(exc))]
    except NotANotebook as exc:
        return [], [Note(f"{notebook}.ipynb could not be read as a notebook ({one_line(exc, 160)}); "
                         "it is graded as unanswered.", NoteKind.UNREADABLE)]
    return cells, [Note(n, NoteKind.OTHER) for n in notes]  # repairs made while reading the file


def missing_note(notebook: str) -> Note:
    """The note of a notebook that was not handed in."""
    return Note(f"No file {notebook}.ipynb was submitted; it is graded as unanswered.", NoteKind.MISSING)


def refused_note(notebook: str, why: str) -> Note:
    """The note of a file refused unread (a link, a special file, too large): ``why`` says which."""
    return Note(f"{notebook}.ipynb was not read: {why}; it is graded as unanswered.", NoteKind.UNREADABLE)


def staged_notebook(student: str, assignment: str, notebook: str, ws: Workspace) -> nbformat.NotebookNode:
    """The repaired copy of one submission (the release with the student's answers), with its notes
    in ``metadata.selfattn.notes``. Reads ``submitted/``, writes nothing."""
    release = nbformat.read(release_path(assignment, notebook, ws.course), as_version=4)
    student_cells, notes = read_submission(student, assignment, notebook, ws)
    by_id = _cells_by_grade_id(student_cells)
    for cell in release.cells:
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        found = by_id.get(gid, [])
        if meta.get("solution"):
            notes += _stage_answer_cell(cell, gid, found, submitted=bool(student_cells))
        elif (meta.get("grade") or meta.get("locked")) and found:
            notes += _locked_cell_notes(cell, gid, found[0])
    notes += _added_cells_notes(*_keep_added_cells(release, student_cells))
    release.metadata["selfattn"] = {"notes": records(notes)}
    return release


def _cells_by_grade_id(student_cells: list[dict]) -> dict[str, list[dict]]:
    """The student's cells that carry an nbgrader grade id, by that id, in notebook order.

    Parameters
    ----------
    student_cells : list of dict
        The submission's cells as plain data (:func:`read_submission`).

    Returns
    -------
    dict of str to list of dict
        Grade id -> every cell with that id (more than one when the student copied a cell).
    """
    by_id: dict[str, list[dict]] = {}
    for c in student_cells:
        gid = _grade_id(c)
        if gid is not None:
            by_id.setdefault(gid, []).append(c)
    return by_id


def _stage_answer_cell(cell: nbformat.NotebookNode, gid: str, found: list[dict], submitted: bool) -> list[Note]:
    """Put the student's answer for the release's answer cell ``cell`` into it; return the notes.

    Parameters
    ----------
    cell : NotebookNode
        The release's answer cell (grade id ``gid``); its source is replaced by the student's
        answer when that answer can be graded, else it keeps the stub (graded as unanswered).
    found : list of dict
        The student's cells with this grade id (the first one is graded).
    submitted : bool
        Whether the submission had any cells at all (a notebook not read has no missing cells).
    """
    notes = _missing_or_duplicated_notes(gid, found, submitted)
    if not found:
        return notes
    if found[0].get("cell_type") != cell.cell_type:
        return [*notes, Note(f"The answer cell `{gid}` changed type; it is graded as unanswered.", NoteKind.REPAIRED)]
    if cell.cell_type == "markdown":
        return notes + _stage_written_answer(cell, gid, found[0])
    return notes + _stage_code_answer(cell, gid, found[0])


def _missing_or_duplicated_notes(gid: str, found: list[dict], submitted: bool) -> list[Note]:
    """The note of an answer cell the submission lacks (when it has cells at all) or holds more than once."""
    if not found:
        return [Note(f"The answer cell `{gid}` was missing (deleted?); it is graded as unanswered.",
                     NoteKind.REPAIRED)] if submitted else []
    if len(found) > 1:
        return [Note(f"The answer cell `{gid}` appears {len(found)} times; the first one was graded.",
                     NoteKind.REPAIRED)]
    return []


def _stage_code_answer(cell: nbformat.NotebookNode, gid: str, theirs: dict) -> list[Note]:
    """Put the Python the grader runs (the same text a notebook check judges) from the student's cell
    ``theirs`` into the release's code answer cell ``cell``; return the notes. An answer longer than
    :data:`MAX_ANSWER_CHARS` is not taken (the cell keeps its stub: graded as unanswered)."""
    answer = _source_text(theirs)
    if len(answer) > MAX_ANSWER_CHARS:
        return [Note(f"The answer cell `{gid}` holds {len(answer):,} characters, more than the "
                     f"{MAX_ANSWER_CHARS:,} an answer may have; it is graded as unanswered.")]
    graded = graded_source(answer)
    cell.source = graded.python
    return [Note(f"In `{gid}`: {graded.note}.")] if graded.note else []


def _stage_written_answer(cell: nbformat.NotebookNode, gid: str, theirs: dict) -> list[Note]:
    """Put the student's written (markdown) answer ``theirs`` into the release's cell ``cell`` so that
    HTML renderers (formgrader, feedback) show it with no tag surviving; return the notes.

    The answer is cut at :data:`MAX_WRITTEN_CHARS`, markup is disarmed, images from elsewhere and
    images naming attachments it does not hold become links, and only safe attachments are kept.
    The original stays in ``submitted/`` for the record."""
    notes: list[Note] = []
    source = _source_text(theirs)
    if len(source) > MAX_WRITTEN_CHARS:
        notes.append(Note(f"The written answer `{gid}` holds {len(source):,} characters; only the "
                          f"first {MAX_WRITTEN_CHARS:,} are shown."))
        source = source[:MAX_WRITTEN_CHARS]
    linked = link_outside_images(source)
    cell.source = disarm_markup(linked)
    if cell.source != linked:
        notes.append(Note(f"Markup in the written answer `{gid}` is shown as text, not rendered."))
    if linked != source:
        notes.append(Note(f"An image in the written answer `{gid}` that is not pasted into it is "
                          "shown as a link to where it points (nothing is fetched from elsewhere)."))
    attachments, dropped = safe_attachments(theirs.get("attachments"))
    if attachments:
        cell["attachments"] = attachments
    notes += [Note(f"In `{gid}`: {d}.") for d in dropped]
    shown = link_missing_attachments(cell.source, set(attachments))
    if shown != cell.source:
        cell.source = shown
        notes.append(Note(f"An image in the written answer `{gid}` names an attachment it does not "
                          "hold (or by a name that cannot be shown); it is shown as a link."))
    return notes


def _locked_cell_notes(cell: nbformat.NotebookNode, gid: str, theirs: dict) -> list[Note]:
    """The note of a locked or test cell ``cell`` whose copy ``theirs`` the student edited (its text
    or its points): the release's cell is kept either way (:func:`_change_since_release`)."""
    change = _change_since_release(theirs, cell)
    if change == "text":
        return [Note(f"The locked cell `{gid}` was edited; the original was used.", NoteKind.REPAIRED)]
    if change == "points":
        return [Note(f"The points of `{gid}` were changed; the course's points were used.", NoteKind.REPAIRED)]
    return []


def _added_cells_notes(added: int, left_out: int) -> list[Note]:
    """The notes on the cells the student added: ``added`` kept (shown, never run), ``left_out`` more not shown."""
    notes = []
    if added:
        notes.append(Note(f"{added} cell(s) you added are shown where you put them but were not run or graded: "
                          "each exercise is graded from its own answer cell alone."))
    if left_out:
        notes.append(Note(f"{left_out} more cell(s) you added are not shown (only the first {MAX_ADDED_CELLS} "
                          f"added cells, {MAX_ADDED_TEXT:,} characters in all, are kept); added cells are never "
                          "graded."))
    return notes


def _keep_added_cells(release: nbformat.NotebookNode, student_cells: list[dict]) -> tuple[int, int]:
    """Insert the student's own cells (as code, never run) after the release cell they followed;
    return how many, and how many more were left out (beyond :data:`MAX_ADDED_CELLS` cells or
    :data:`MAX_ADDED_TEXT` characters). Markdown the student added is shown as text, never rendered."""
    position: dict[str, int] = {}
    by_source: dict[str, list[int]] = {}
    for i, c in enumerate(release.cells):
        by_source.setdefault(c.source, []).append(i)
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if isinstance(gid, str):
            position.setdefault(gid, i)
    anchor = -1  # index into release.cells of the last cell matched so far
    extras: dict[int, list[str]] = {}
    kept = left_out = budget = 0
    for c in student_cells:
        gid = _grade_id(c)
        if gid in position:
            anchor = position[gid]
            continue
        text = _source_text(c)
        same = [i for i in by_source.get(text, ()) if i > anchor]
        if same:
            anchor = same[0]
        elif text.strip():
            if len(text) > MAX_EXTRA_CHARS:
                text = text[:MAX_EXTRA_CHARS] + "\n# ... (cut)"
            if kept >= MAX_ADDED_CELLS or budget + len(text) > MAX_ADDED_TEXT:
                left_out += 1
                continue
            kept, budget = kept + 1, budget + len(text)
            extras.setdefault(anchor, []).append(text)
    if not extras:
        return 0, left_out
    cells = []
    for i in range(-1, len(release.cells)):
        if i >= 0:
            cells.append(release.cells[i])
        for text in extras.get(i, []):
            cells.append(new_markdown_cell(ADDED_CELL_NOTE, metadata={"selfattn_added": "note"}))
            cells.append(new_code_cell(text, metadata={"selfattn_added": "cell"}))
    release.cells = cells
    return kept, left_out


#: what the note of a notebook that staging failed on says (a fault of the grader, not of the student)
STAGING_FAILED = "The grader could not process this notebook while staging it"


def notebook_text(nb: nbformat.NotebookNode) -> str:
    """The file text of ``nb``, as ``nbformat.write`` would write it (written atomically by the callers)."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def stage(student: str, assignment: str, notebook: str, ws: Workspace) -> list[Note]:
    """Write the repaired copy of one submission under ``.grading/submitted``; return notes.

    Whatever goes wrong with one notebook stays with it: the release is staged in its place (graded
    as unanswered) with a note of kind :attr:`NoteKind.GRADER_ERROR` beginning with
    :data:`STAGING_FAILED`, and the class goes on."""
    target = ws.staged(student, assignment, notebook)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        nb = staged_notebook(student, assignment, notebook, ws)
        atomic.write_text(target, notebook_text(nb))
    except Exception as exc:  # a fault of the grader on this input: the note says so, nobody else is touched
        nb = nbformat.read(release_path(assignment, notebook, ws.course), as_version=4)
        why = f"{type(exc).__name__}: {one_line(storable(str(exc)), 160)}"
        failed = Note(f"{STAGING_FAILED} ({why}); it is graded as unanswered, and the instructor is told.",
                      NoteKind.GRADER_ERROR)
        nb.metadata["selfattn"] = {"notes": records([failed])}
        atomic.write_text(target, notebook_text(nb))
    notes = notes_of(nb.metadata["selfattn"])
    note = stage_timestamp(ws.submission(student, assignment), target.parent)
    stage_secret(ws.submission(student, assignment), target.parent)
    return notes + ([note] if note else [])


def stage_submission(student: str, assignment: str, ws: Workspace) -> None:
    """Stage every notebook handed in for one assignment, and drop staged notebooks whose original
    is gone (what ``nbgrader collect`` calls after copying a submission, so formgrader sees it)."""
    folder = ws.submission(student, assignment)
    for notebook in notebooks_of(assignment, ws.course):
        raw = folder / f"{notebook}.ipynb"
        if raw.exists() or raw.is_symlink():
            stage(student, assignment, notebook, ws)
        else:
            ws.staged(student, assignment, notebook).unlink(missing_ok=True)


def stage_timestamp(folder: Path, target: Path) -> Note | None:
    """Copy ``folder/timestamp.txt`` into ``target`` if it is a regular file holding a date; else a note."""
    stamp = folder / "timestamp.txt"
    if not (stamp.exists() or stamp.is_symlink()):
        (target / "timestamp.txt").unlink(missing_ok=True)
        return None
    try:
        text = read_regular(stamp, MAX_TIMESTAMP_BYTES).decode("utf-8").strip()
        _parse_timestamp(text)
    except (RefusedFile, ValueError, UnicodeDecodeError) as exc:
        (target / "timestamp.txt").unlink(missing_ok=True)
        return Note(f"timestamp.txt was not used ({one_line(exc, 120)}); graded as handed in on time.")
    atomic.write_text(target / "timestamp.txt", text + "\n")
    return None


def stage_secret(folder: Path, target: Path) -> None:
    """Copy nbgrader's ``submission_secret.txt`` (how released feedback finds its student) if sound.

    A submission that did not come through the exchange has none; it gets a random one (kept
    across runs), so ``nbgrader release_feedback`` never stops on it. Such a student receives the
    feedback page by other means (it is in ``feedback/``)."""
    secret = target / "submission_secret.txt"
    try:
        text = read_regular(folder / "submission_secret.txt", MAX_SECRET_BYTES).decode("ascii").strip()
    except (RefusedFile, ValueError, UnicodeDecodeError):
        text = ""
    if text.isalnum():
        atomic.write_text(secret, text)
    elif not secret.is_file():
        atomic.write_text(secret, secrets.token_hex(16))


def _parse_timestamp(text: str) -> None:
    """Raise ``ValueError`` unless nbgrader can read ``text`` as a submission time."""
    from nbgrader.utils import parse_utc

    try:
        parse_utc(text)
    except Exception as exc:
        raise ValueError(f"not a date and time: {text[:40]!r}") from exc
