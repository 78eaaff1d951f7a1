"""The grader's JSON files, each with a format version: written through :mod:`autograder.outputs.atomic`
and read back here alone.

Every JSON file the grader writes for itself names the format it was written in (``"format": N`` at
its top): verdicts, the resubmission history, ``state.json``, the written answers' ``answers.json``,
``timings.json``, ``decided-with.json`` and ``.intake/taken.json``. A file of an older format (one without the key is
format 0, as every file written before formats were kept) reads as before; a file of a newer format
than this grader knows is refused with one line naming it (:class:`NewerFormat`), so an older grader
never misreads, nor overwrites, what a newer one wrote.

A file whose data is an object holds the key beside its own (readers get the object without it); a
file whose data is a list (the history) holds ``{"format": N, "items": [...]}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autograder.errors import GradingError
from autograder.outputs import atomic

__all__ = ["FORMATS", "KEY", "NewerFormat", "dumps", "loads", "loads_versioned", "read", "read_versioned", "write"]

#: The key that holds a file's format.
KEY = "format"

#: Each kind of file, and the format this grader writes (and the newest it reads).
FORMATS: dict[str, int] = {
    "verdict": 1,  # .grading/verdicts/<student>/<assignment>/<notebook>.json
    "history": 1,  # .grading/history/<student>/<assignment>/<notebook>.json (a list)
    "state": 1,  # .grading/state.json
    "answers": 1,  # .grading/answers/<student>/<assignment>/answers.json
    "timings": 1,  # .grading/timings.json
    "taken": 2,  # .intake/taken.json (2: an entry may be caught in a move, "incoming" or "undoing")
    "decided_with": 1,  # .grading/decided-with.json (what the last run's verdicts were decided with)
}

#: Kinds whose data is a list (stored under ``"items"``).
LISTS = frozenset({"history"})


class NewerFormat(GradingError):
    """A grader file was written in a newer format than this grader reads."""


def _current(kind: str) -> int:
    try:
        return FORMATS[kind]
    except KeyError:
        raise ValueError(f"no such kind of grader file: {kind!r} (one of {', '.join(sorted(FORMATS))})") from None


def dumps(kind: str, data: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``data`` (an object, or a list for :data:`LISTS`) as the text of a file of ``kind``, with its format."""
    version = _current(kind)
    if kind in LISTS:
        if not isinstance(data, list):
            raise TypeError(f"a {kind} file holds a list, not {type(data).__name__}")
        doc: dict[str, Any] = {KEY: version, "items": data}
    else:
        if not isinstance(data, dict):
            raise TypeError(f"a {kind} file holds an object, not {type(data).__name__}")
        doc = {KEY: version, **{k: v for k, v in data.items() if k != KEY}}
    return json.dumps(doc, indent=indent, sort_keys=sort_keys, ensure_ascii=False)


def loads(text: str | bytes, kind: str, name: str) -> Any:
    """The data of a file of ``kind`` whose text is ``text`` (``name`` says which file, for the error);
    :func:`loads_versioned` without the format."""
    return loads_versioned(text, kind, name)[0]


def loads_versioned(text: str | bytes, kind: str, name: str) -> tuple[Any, int]:
    """The data of a file of ``kind`` whose text is ``text``, and the format it was written in.

    Raises
    ------
    NewerFormat
        The file names a format newer than :data:`FORMATS` holds for ``kind``.
    ValueError
        The text is not JSON.
    """
    version = _current(kind)
    doc = json.loads(text)
    found = doc.get(KEY, 0) if isinstance(doc, dict) else 0
    if not isinstance(found, int) or isinstance(found, bool) or found < 0:
        raise ValueError(f"{name}: its format is {found!r}, not a version number")
    if found > version:
        raise NewerFormat(f"{name}: written in format {found} by a newer grader (this one reads {kind} files up to "
                          f"format {version}); grade with the newer grader, or move the file away")
    if not isinstance(doc, dict) or KEY not in doc:  # format 0: the data as it was stored
        return doc, 0
    if kind in LISTS:
        return doc.get("items", []), found
    return {k: v for k, v in doc.items() if k != KEY}, found


def read(path: Path, kind: str) -> Any:
    """The data of the file of ``kind`` at ``path`` (``OSError`` when it cannot be read, ``ValueError``
    when it is not JSON, :class:`NewerFormat` when it is newer than this grader)."""
    return loads(Path(path).read_text(encoding="utf-8"), kind, str(path))


def read_versioned(path: Path, kind: str) -> tuple[Any, int]:
    """:func:`read`, and the format the file was written in (0: none named)."""
    return loads_versioned(Path(path).read_text(encoding="utf-8"), kind, str(path))


def write(path: Path, kind: str, data: Any, *, indent: int | None = None, sort_keys: bool = False) -> None:
    """Replace the file of ``kind`` at ``path`` with ``data`` and its format, atomically."""
    atomic.write_text(Path(path), dumps(kind, data, indent=indent, sort_keys=sort_keys))
