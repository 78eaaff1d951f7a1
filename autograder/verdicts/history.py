"""What a student got wrong before they fixed it: the named mistakes of every verdict that a
resubmission replaced.

A verdict (``.grading/verdicts/<student>/<assignment>/<notebook>.json``) is rewritten when the
answers change. Just before that, :func:`remember_replaced` appends the named mistakes of the old
verdict (check id -> the mistake's stable id, so rewording a mistake changes no entry; its wording in
an entry written before mistakes had ids) to ``.grading/history/<student>/<assignment>/<notebook>.json``,
a list oldest first. Only the process that writes a notebook's verdict writes its history, so
parallel workers never share a file. A verdict decided again for the same answers (a changed
setting, changed checks or points, ``--force``) is no resubmission and leaves no entry: verdicts
carry a digest of their answers alone (``answers``), and only a change of it counts.
"""

from __future__ import annotations

import time
from pathlib import Path

from autograder.outputs import json_files
from autograder.verdicts import record
from autograder.verdicts.record import Verdict
from autograder.workspace import Workspace
from selfattn.checks.findings import Kind


def named_mistakes(verdict: Verdict) -> dict[str, str]:
    """check id -> the stable id of the mistake it found (its wording, for a verdict written before
    mistakes had ids), for every failed check that named one."""
    out = {}
    for cid, found in verdict.checks.items():
        if found is not None and found.kind is Kind.MISTAKE and (found.id or found.name):
            out[cid] = found.id or found.name or ""
    return out


def history_path(student: str, assignment: str, notebook: str, ws: Workspace) -> Path:
    return ws.history / student / assignment / f"{notebook}.json"


def read(student: str, assignment: str, notebook: str, ws: Workspace) -> list[dict]:
    """Earlier verdicts' mistakes of one notebook, oldest first: ``{"replaced": time, "mistakes": {...}}``."""
    try:
        entries = json_files.read(history_path(student, assignment, notebook, ws), "history")
    except (OSError, ValueError):
        return []
    return entries if isinstance(entries, list) else []


def remember_replaced(verdict_file: Path, new: Verdict, ws: Workspace) -> None:
    """Before ``verdict_file`` is overwritten by ``new``: keep the old verdict's named mistakes when
    it judged other answers (another digest of the answers; a verdict written before verdicts had
    one, another verdict key)."""
    try:
        old = record.read(verdict_file)
    except (OSError, ValueError, record.UnreadableVerdict):
        return
    if old.answers is not None and new.answers is not None:
        if old.answers == new.answers:
            return
    elif old.key == new.key:
        return
    mistakes = named_mistakes(old)
    if not mistakes:
        return
    rel = verdict_file.relative_to(ws.verdicts)
    student, assignment, notebook = rel.parts[0], rel.parts[1], rel.stem
    entries = read(student, assignment, notebook, ws)
    entries.append({"replaced": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "mistakes": mistakes})
    path = history_path(student, assignment, notebook, ws)
    json_files.write(path, "history", entries, indent=1)
