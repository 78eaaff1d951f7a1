"""A verdict as data: a frozen, versioned record, like :class:`~selfattn.checks.findings.Finding` and
:class:`~autograder.notes.Note`.

:mod:`autograder.verdicts.decide` makes a :class:`Verdict` for one notebook and writes it as
:meth:`Verdict.to_json` (``.grading/verdicts/<student>/<assignment>/<notebook>.json``, through
:mod:`autograder.outputs.json_files`, which keeps the file's format). Every reader (nbgrader's
autograde, the class report, the resubmission history, the run's summary) gets it back with
:meth:`Verdict.from_json` and reads attributes, never keys.

Stored verdicts of the earlier forms still read: a file without a format (format 0), findings and
notes stored as bare strings, cells without their count of failed checks (counted again from their
lines). A function's stored record of another shape is dropped (that function is decided again); a
file that holds no verdict at all raises :class:`UnreadableVerdict` naming the problem, and the
notebook is decided again (:func:`autograder.verdicts.decide.stored_verdict`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autograder.errors import GradingError
from autograder.notes import Note
from autograder.outputs import json_files
from autograder.outputs.json_files import FORMATS
from selfattn.checks.findings import Finding

__all__ = ["VERSION", "CellResult", "FunctionRecord", "UnreadableVerdict", "Verdict", "read", "write"]

#: The format of the verdict this grader writes (the file's ``"format"``).
VERSION = FORMATS["verdict"]

#: check id -> ``None`` (passed) or what it found
Checks = Mapping[str, Finding | None]


class UnreadableVerdict(GradingError):
    """A stored verdict of no form this grader reads; the message says what is wrong with it."""


def _checks_of(data: Any, where: str) -> dict[str, Finding | None]:
    if not isinstance(data, Mapping):
        raise UnreadableVerdict(f"its {where} are not a mapping of check ids")
    return {str(cid): None if f is None else Finding.from_json(f) for cid, f in data.items()}


def _notes_of(data: Any, where: str) -> tuple[Note, ...]:
    if not isinstance(data, list):
        raise UnreadableVerdict(f"its {where} are not a list")
    return tuple(Note.from_json(n) for n in data)


def _checks_json(checks: Checks) -> dict[str, Any]:
    return {cid: None if f is None else f.to_json() for cid, f in checks.items()}


@dataclass(frozen=True)
class CellResult:
    """What one test cell shows: whether every check it holds passed, how many failed, one line per
    check (✓ or ✗) and the cell's points."""

    passed: bool
    failed: int
    lines: tuple[str, ...]
    points: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "failed": self.failed, "lines": list(self.lines), "points": self.points}

    @classmethod
    def from_json(cls, data: Any) -> CellResult:
        """Back from :meth:`to_json`; a cell stored without ``failed`` counts its ✗ lines."""
        if not isinstance(data, Mapping) or not isinstance(data.get("lines", []), list):
            raise UnreadableVerdict("a test cell's result is not a record with lines")
        lines = tuple(str(ln) for ln in data.get("lines", []))
        failed = data.get("failed")
        if not isinstance(failed, int) or isinstance(failed, bool):
            failed = sum(ln.startswith("✗") for ln in lines)
        points = data.get("points")
        return cls(bool(data.get("passed", failed == 0)), failed, lines,
                   points if isinstance(points, int | float) and not isinstance(points, bool) else None)


@dataclass(frozen=True)
class FunctionRecord:
    """One graded function's part of a verdict: what decided it (``key``, see
    :func:`autograder.verdicts.decide.function_key`), the seconds its runs took, its notes and its
    checks. A later decision with the same key keeps it instead of running the function again."""

    key: str
    seconds: float
    notes: tuple[Note, ...]
    checks: Checks

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "seconds": self.seconds, "notes": [n.to_json() for n in self.notes],
                "checks": _checks_json(self.checks)}

    @classmethod
    def from_json(cls, data: Any) -> FunctionRecord:
        if not (isinstance(data, Mapping) and isinstance(data.get("key"), str)
                and isinstance(data.get("seconds"), int | float) and not isinstance(data.get("seconds"), bool)):
            raise UnreadableVerdict("a function's record has no key or seconds")
        return cls(data["key"], float(data["seconds"]), _notes_of(data.get("notes"), "function's notes"),
                   _checks_of(data.get("checks"), "function's checks"))


@dataclass(frozen=True)
class Verdict:
    """The decision on one staged notebook.

    Parameters
    ----------
    student, assignment, notebook
        Whose notebook (empty in a verdict of a notebook the grader could not process).
    cells
        Test cell grade id -> its :class:`CellResult`.
    notes
        The notebook's grading notes.
    checks
        Check id -> ``None`` (passed) or its :class:`~selfattn.checks.findings.Finding`.
    functions
        Graded function -> its :class:`FunctionRecord`.
    seconds
        Graded function -> seconds its runs took.
    sandbox
        The sandbox's mode when it was decided (``"bubblewrap"`` or ``"fallback"``).
    key
        What it judged (:func:`autograder.verdicts.decide.verdict_key`); ``None`` if unknown.
    answers
        A digest of the answers alone (:func:`autograder.verdicts.decide.answers_digest`).
    settings
        The limits and sandbox mode it was decided with (:func:`autograder.verdicts.decide.settings`).
    failed
        The grader could not process the notebook (it scores zero; ``notes`` say why).
    version
        The format it was read from or will be written in.
    """

    student: str = ""
    assignment: str = ""
    notebook: str = ""
    cells: Mapping[str, CellResult] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    checks: Checks = field(default_factory=dict)
    functions: Mapping[str, FunctionRecord] = field(default_factory=dict)
    seconds: Mapping[str, float] = field(default_factory=dict)
    sandbox: str | None = None
    key: str | None = None
    answers: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    failed: bool = False
    version: int = VERSION

    def with_notes(self, notes: tuple[Note, ...] | list[Note]) -> Verdict:
        """The same verdict with ``notes`` instead of its own."""
        return replace(self, notes=tuple(notes))

    def to_json(self) -> dict[str, Any]:
        """The verdict as the file stores it (without its format, which :mod:`~autograder.outputs.json_files` adds)."""
        out: dict[str, Any] = {}
        if not self.failed:
            out.update(student=self.student, assignment=self.assignment, notebook=self.notebook)
        out["cells"] = {gid: c.to_json() for gid, c in self.cells.items()}
        out["notes"] = [n.to_json() for n in self.notes]
        if self.failed:
            out["failed"] = True
        else:
            out.update(sandbox=self.sandbox, seconds=dict(self.seconds), checks=_checks_json(self.checks),
                       functions={name: r.to_json() for name, r in self.functions.items()})
        for name in ("key", "answers"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out["settings"] = dict(self.settings)
        return out

    @classmethod
    def from_json(cls, data: Any, version: int = VERSION) -> Verdict:
        """Back from :meth:`to_json`, or from a verdict stored in an earlier form (see the module).

        Raises
        ------
        UnreadableVerdict
            ``data`` is no verdict of any form; the message says why, in one line.
        """
        if isinstance(data, Verdict):
            return data
        if not isinstance(data, Mapping):
            raise UnreadableVerdict(f"it holds {type(data).__name__}, not a verdict record")
        cells = {} if data.get("cells") is None else data["cells"]
        if not isinstance(cells, Mapping):
            raise UnreadableVerdict("its cells are not a mapping of grade ids")
        functions: dict[str, FunctionRecord] = {}
        stored = data.get("functions")
        for name, record in (stored.items() if isinstance(stored, Mapping) else ()):
            try:  # a record of another shape is not kept: that function is decided again
                functions[str(name)] = FunctionRecord.from_json(record)
            except UnreadableVerdict:
                continue
        seconds = data.get("seconds")
        settings = data.get("settings")
        text = {name: value if isinstance(value := data.get(name), str) else None
                for name in ("student", "assignment", "notebook", "sandbox", "key", "answers")}
        return cls(text["student"] or "", text["assignment"] or "", text["notebook"] or "",
                   {str(gid): CellResult.from_json(c) for gid, c in cells.items()},
                   _notes_of([] if data.get("notes") is None else data["notes"], "notes"),
                   _checks_of({} if data.get("checks") is None else data["checks"], "checks"),
                   functions,
                   {str(k): float(v) for k, v in seconds.items() if isinstance(v, int | float)}
                   if isinstance(seconds, Mapping) else {},
                   text["sandbox"], text["key"], text["answers"],
                   dict(settings) if isinstance(settings, Mapping) else {}, data.get("failed") is True, version)


def read(path: Path) -> Verdict:
    """The verdict stored at ``path``.

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        It is not JSON.
    UnreadableVerdict
        It holds no verdict of any form.
    autograder.outputs.json_files.NewerFormat
        A newer grader wrote it.
    """
    data, version = json_files.read_versioned(path, "verdict")
    return Verdict.from_json(data, version)


def write(path: Path, verdict: Verdict) -> None:
    """Replace the verdict at ``path`` with ``verdict``, atomically, in this grader's format."""
    json_files.write(path, "verdict", verdict.to_json(), indent=1)
