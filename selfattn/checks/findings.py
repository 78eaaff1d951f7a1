"""What a failed check found, as data: a kind, the named mistake if any, and the text for people.

A check's result is ``None`` (passed) or a :class:`Finding`: a frozen value holding its
:class:`Kind`, for a named mistake its fixed wording and stable id, for a raised built-in exception
its name, and the message a person reads (``str(finding)``). Readers count kinds and ids; no reader
parses a message.

A hidden check's inputs are secret, and the student's code sees them while it runs: anything the
code can choose that came back in the text would carry them out (an exception class named after an
input, a returned shape, a count of NaNs, an exit status, a running time). So what a hidden check
reports is :meth:`Finding.hidden`: text chosen from a fixed vocabulary, the record's named
mistake or the kind's fixed wording, holding nothing the submission can influence.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["BUILTIN_EXCEPTIONS", "FAULTS", "Finding", "Kind", "hidden_exception_name"]


class Kind(str, Enum):
    """Why a check failed (the value is the fixed wording a hidden check reports).

    A ``str`` whose text is its value (``enum.StrEnum`` would need Python 3.11; the student package
    supports 3.10).
    """

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    MISTAKE = "a named mistake"
    WRONG_VALUES = "wrong values"
    WRONG_SHAPE = "the result has the wrong shape"
    WRONG_COUNT = "returned the wrong number of results"
    NAN = "NaN in the result"
    NOT_NUMBERS = "returned something that is not numbers"
    RAISED = "raised an exception"
    NOT_ANSWERED = "not answered"
    TIME_OUT = "ran out of time (an infinite loop or a very slow computation?)"
    MEMORY = "ran out of memory"
    PROCESSES = "started too many processes or threads"
    DISK = "filled its disk"
    CRASHED = "crashed before returning its results"
    REFUSED = "its results were refused (too large or malformed)"
    UNCHECKABLE = "its results could not be checked"
    #: the notebook's own state: a function it calls fails, and the student package cannot judge it
    #: with the course's (never a grader's finding)
    UNJUDGED = "cannot be judged until the functions it calls pass"


#: Kinds where the code gave no result to judge (the class report counts them as faults).
FAULTS = frozenset({Kind.TIME_OUT, Kind.MEMORY, Kind.PROCESSES, Kind.DISK, Kind.CRASHED, Kind.REFUSED})

#: Exception names a hidden check may report: Python's own, which no input can be spelled in.
BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException))


def hidden_exception_name(name: str) -> str | None:
    """``name`` if it is one of Python's built-in exceptions, else ``None`` (a class the student
    defined could be named after a hidden input)."""
    return name if name in BUILTIN_EXCEPTIONS else None


@dataclass(frozen=True)
class Finding:
    """A failed check, as data: its kind, the named mistake or exception if any, and the message for people.

    Two findings are equal only when all of these are (two findings of different kinds never are,
    whatever their text); ``str(finding)`` is the message.

    Parameters
    ----------
    text
        The message as shown for a public check (it may name the input and the values found).
    kind
        Why the check failed.
    name
        For :attr:`Kind.MISTAKE`, the record's fixed wording of the mistake; for
        :attr:`Kind.RAISED`, the exception's type name; for :attr:`Kind.REFUSED`, the grader's
        fixed line naming the cap the run broke (no word of it comes from the submission), which
        hidden checks show too.
    id
        For :attr:`Kind.MISTAKE`, the mistake's stable id (``<function>/<mistake>``, declared with
        the record): what the class report and the resubmission history count by, so rewording a
        mistake changes no count.
    """

    text: str
    kind: Kind
    name: str | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"a finding's text is a str, not {type(self.text).__name__}")
        object.__setattr__(self, "kind", Kind(self.kind))

    def __str__(self) -> str:
        return self.text

    @classmethod
    def mistake(cls, message: str, text: str | None = None, id: str | None = None) -> Finding:
        """A named mistake: ``message`` is the record's fixed wording, ``text`` the shown message,
        ``id`` its stable id (the record fills it in when the check that found it does not)."""
        return cls(text if text is not None else message, Kind.MISTAKE, message, id)

    def hidden(self) -> Finding:
        """The same finding in the fixed vocabulary of hidden checks."""
        if self.kind is Kind.MISTAKE and self.name:
            return Finding(self.name, Kind.MISTAKE, self.name, self.id)
        if self.kind is Kind.RAISED:
            name = hidden_exception_name(self.name or "")
            return Finding(f"raised {name}" if name else Kind.RAISED.value, Kind.RAISED, name)
        if self.kind is Kind.REFUSED and self.name:  # the grader's fixed line naming the cap a run broke
            return Finding(self.name, Kind.REFUSED, self.name)
        return Finding(self.kind.value, self.kind)

    def to_json(self) -> dict[str, Any]:
        """The finding as JSON data: ``{"kind", "name", "id", "text"}``."""
        return {"kind": self.kind.name, "name": self.name, "id": self.id, "text": self.text}

    @classmethod
    def from_json(cls, data: Any) -> Finding:
        """Back from :meth:`to_json`. A record without an id (written before mistakes had ids) reads
        with none; a bare string (as the oldest verdicts hold) reads as wrong values."""
        if isinstance(data, Finding):
            return data
        if isinstance(data, dict) and data.get("kind") in Kind.__members__:
            name, id_ = data.get("name"), data.get("id")
            return cls(str(data.get("text", "")), Kind[data["kind"]], name if isinstance(name, str) else None,
                       id_ if isinstance(id_, str) else None)
        return cls(str(data), Kind.WRONG_VALUES)
