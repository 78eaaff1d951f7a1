"""Stage a submission: read it as data, never run it, and copy its answers into a fresh copy of
the released notebook, so deleted cells, edited test cells and changed points cannot matter; every
repair becomes a grading note. Unreadable files are graded as unanswered, with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from .paths import STAGED, SUBMITTED
from .spec import release_path
from .untrusted import (
    MAX_NOTEBOOK_BYTES,
    MAX_TIMESTAMP_BYTES,
    Refused,
    neutralise_markup,
    one_line,
    read_regular,
    safe_attachments,
)


def _source_text(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def stage(student: str, assignment: str, notebook: str) -> list[str]:
    """Write the repaired copy of one submission under ``.grading/submitted``; return notes."""
    original = SUBMITTED / student / assignment / f"{notebook}.ipynb"
    release = nbformat.read(release_path(assignment, notebook), as_version=4)
    notes: list[str] = []
    student_cells: list[dict] = []
    if not original.exists() and not original.is_symlink():
        notes.append(f"No file {notebook}.ipynb was submitted; it is graded as unanswered.")
    else:
        try:
            data = json.loads(read_regular(original, MAX_NOTEBOOK_BYTES).decode("utf-8"))
            cells = data.get("cells") if isinstance(data, dict) else None
            if not isinstance(cells, list):
                raise ValueError("it has no list of cells")
            student_cells = [c for c in cells if isinstance(c, dict)]
        except Refused as exc:
            notes.append(f"{notebook}.ipynb was not read: {exc}; it is graded as unanswered.")
        except (ValueError, UnicodeDecodeError) as exc:
            notes.append(f"{notebook}.ipynb could not be read as a notebook ({type(exc).__name__}: "
                         f"{one_line(exc, 120)}); it is graded as unanswered.")
    by_id: dict[str, list[dict]] = {}
    for c in student_cells:
        meta = c.get("metadata")
        nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
        gid = nbg.get("grade_id") if isinstance(nbg, dict) else None
        if isinstance(gid, str):
            by_id.setdefault(gid, []).append(c)
    for cell in release.cells:
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        found = by_id.get(gid, [])
        if meta.get("solution"):
            if not found and student_cells:
                notes.append(f"The answer cell `{gid}` was missing (deleted?); it is graded as unanswered.")
            elif found:
                if len(found) > 1:
                    notes.append(f"The answer cell `{gid}` appears {len(found)} times; the first one was graded.")
                if found[0].get("cell_type") != cell.cell_type:
                    notes.append(f"The answer cell `{gid}` changed type; it is graded as unanswered.")
                elif cell.cell_type == "markdown":
                    # a written answer is shown by HTML renderers (formgrader, feedback): no tag survives;
                    # the original stays in submitted/ for the record
                    source = _source_text(found[0])
                    cell.source = neutralise_markup(source)
                    if cell.source != source:
                        notes.append(f"Markup in the written answer `{gid}` is shown as text, not rendered.")
                    attachments, dropped = safe_attachments(found[0].get("attachments"))
                    if attachments:
                        cell["attachments"] = attachments
                    notes += [f"In `{gid}`: {d}." for d in dropped]
                else:
                    cell.source = _source_text(found[0])
        elif meta.get("grade") or meta.get("locked"):
            if found and _source_text(found[0]) != cell.source:
                notes.append(f"The locked cell `{gid}` was edited; the original was used.")
            if found and meta.get("points") is not None:
                theirs = found[0].get("metadata", {}).get("nbgrader", {}).get("points")
                if theirs != meta.get("points"):
                    notes.append(f"The points of `{gid}` were changed; the course's points were used.")
    target = STAGED / student / assignment / f"{notebook}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(release, target)
    note = stage_timestamp(SUBMITTED / student / assignment, target.parent)
    return notes + ([note] if note else [])


def stage_timestamp(folder: Path, target: Path) -> str | None:
    """Copy ``folder/timestamp.txt`` into ``target`` if it is a regular file holding a date; else a note."""
    stamp = folder / "timestamp.txt"
    if not (stamp.exists() or stamp.is_symlink()):
        return None
    try:
        text = read_regular(stamp, MAX_TIMESTAMP_BYTES).decode("utf-8").strip()
        _parse_timestamp(text)
    except (Refused, ValueError, UnicodeDecodeError) as exc:
        return f"timestamp.txt was not used ({one_line(exc, 120)}); graded as handed in on time."
    (target / "timestamp.txt").write_text(text + "\n", encoding="utf-8")
    return None


def _parse_timestamp(text: str) -> None:
    """Raise ``ValueError`` unless nbgrader can read ``text`` as a submission time."""
    from nbgrader.utils import parse_utc

    try:
        parse_utc(text)
    except Exception as exc:
        raise ValueError(f"not a date and time: {text[:40]!r}") from exc
