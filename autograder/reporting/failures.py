"""What a failed check counts as in the class report: a fault, a named mistake or an unnamed failure
(:func:`classify`), how a named mistake is worded (:func:`mistake_label`) and the graded function a
check belongs to (:func:`function_of`). Each is read from the stored data of a verdict (a finding's
kind, name and id; a note is counted by its kind, :class:`~autograder.notes.NoteKind`), never from a
message's words."""

from __future__ import annotations

from selfattn.checks.findings import Finding, Kind, hidden_exception_name

#: The report's word for each kind of failure that got no answer to judge.
FAULT_WORDS = {Kind.TIME_OUT: "time-out", Kind.MEMORY: "memory cap", Kind.PROCESSES: "process cap",
               Kind.DISK: "disk cap", Kind.CRASHED: "crash", Kind.REFUSED: "crash", Kind.NOT_ANSWERED: "not answered"}


def classify(stored: object) -> tuple[str, str]:
    """(kind, key) of a failed check as its verdict stores it (:meth:`Finding.to_json`): kind is a
    fault, ``named`` (a named mistake: the key is its stable id, or its wording in a verdict written
    before mistakes had ids; :func:`mistake_label` shows it) or ``unnamed`` (the key is the fixed
    wording of what was wrong). Read from the finding's data, never from its message."""
    found = Finding.from_json(stored)
    if found.kind in FAULT_WORDS:
        return FAULT_WORDS[found.kind], found.kind.value
    if found.kind is Kind.MISTAKE and found.name:
        return "named", found.id or found.name
    if found.kind is Kind.RAISED:
        return "unnamed", f"raised {found.name}" if hidden_exception_name(found.name or "") else Kind.RAISED.value
    return "unnamed", found.kind.value


def mistake_label(key: str, short: bool = True) -> str:
    """How the report names a named mistake counted under ``key`` (:func:`classify`): the course's
    current wording of that id (a verdict's wording, for a key that is no id), ``short``: up to its
    first colon."""
    from selfattn.checks.exercises import EXERCISES

    record = EXERCISES.get(key.partition("/")[0])
    wording = (record.wording(key) if record is not None else None) or key
    return wording.split(":")[0] if short else wording


def function_of(check_id: str) -> str:
    """The graded function the check ``check_id`` checks (its record's; for a check no longer
    registered, the part of the id before its first ``/``)."""
    from selfattn.checks.record import REGISTRY

    return REGISTRY[check_id].function if check_id in REGISTRY else check_id.split("/")[0]
