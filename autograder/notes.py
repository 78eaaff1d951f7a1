"""Grading notes as data: a kind from a fixed list, and the text for people.

A grading note says something about a whole notebook (it could not be read, a cell was repaired,
a cell raised while it was graded, a function was judged with the course's functions, ...). Each
note is made as a :class:`Note` where it is decided (:mod:`autograder.intake.staging`,
:mod:`autograder.verdicts.decide`, :mod:`autograder.verdicts.blame`), with its :class:`NoteKind`: a
frozen value of a kind and a text (``str(note)``, what the feedback shows). The staged notebook's
metadata and the verdict file store each note as :meth:`Note.to_json`; readers (the run
summary, the class report) count kinds, and no reader parses a note's text: rewording a note
changes nothing but what people read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["Note", "NoteKind", "notes_of", "records"]


class NoteKind(str, Enum):
    """What a note is about; the value is the class report's word for it.

    A ``str`` whose text is its value, as :class:`selfattn.checks.findings.Kind`.
    """

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    UNREADABLE = "unreadable notebook"  # not a notebook, or a file refused (a link, too large)
    MISSING = "missing notebook"  # no file was handed in
    GRADER_ERROR = "grader error"  # the grader failed on this notebook (staging or deciding)
    REPAIRED = "repaired notebook"  # an answer cell missing, repeated or retyped; a locked cell or points edited
    CELL_RAISED = "cell raised"  # another answer cell raised while a function was graded
    WEAKER_SANDBOX = "weaker sandbox"  # graded without bubblewrap
    DEPENDENCY_BLAMED = "dependency blamed"  # right with the course's functions: the note names what to fix
    JUDGED_WITH_COURSE = "judged with the course's functions"  # still wrong with them: its own mistake
    OTHER = "other note"  # everything else (a file repaired while read, added cells, a timestamp not used, ...)


@dataclass(frozen=True)
class Note:
    """One grading note, as data: its text for people, and its kind.

    Two notes are equal only when text and kind are; ``str(note)`` is the text.

    Parameters
    ----------
    text
        The note as the feedback shows it (Markdown: code spans in backquotes).
    kind
        What it is about.
    """

    text: str
    kind: NoteKind = NoteKind.OTHER

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"a note's text is a str, not {type(self.text).__name__}")
        object.__setattr__(self, "kind", NoteKind(self.kind))

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, str]:
        """The note as JSON data: ``{"kind", "text"}``."""
        return {"kind": self.kind.name, "text": self.text}

    @classmethod
    def from_json(cls, data: Any) -> Note:
        """Back from :meth:`to_json`. A bare string (a verdict or staged notebook written before
        notes were data) reads as :attr:`NoteKind.OTHER`, as does a record of an unknown kind."""
        if isinstance(data, Note):
            return data
        if isinstance(data, Mapping):
            kind = data.get("kind")
            return cls(str(data.get("text", "")), NoteKind[kind] if kind in NoteKind.__members__ else NoteKind.OTHER)
        return cls(str(data), NoteKind.OTHER)


def notes_of(holder: Mapping[str, Any] | None) -> list[Note]:
    """The notes of a verdict (or of a staged notebook's ``metadata.selfattn``), as :class:`Note`."""
    stored = (holder or {}).get("notes") or []
    return [Note.from_json(n) for n in stored] if isinstance(stored, list) else []


def records(notes: Iterable[Any]) -> list[dict[str, str]]:
    """Notes (or their records, or bare strings) as the JSON records a file stores."""
    return [Note.from_json(n).to_json() for n in notes]
