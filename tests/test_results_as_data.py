"""Results as data (issue 28 §5): every JSON file the grader writes carries its format, older files
read as before, a newer one is refused in one line naming it."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.nbgrader_ext import gradebook_state
from autograder.notes import Note, NoteKind
from autograder.outputs import json_files
from autograder.reporting import class_report, class_tally
from autograder.reporting.failures import mistake_label
from autograder.verdicts import decide, history
from autograder.verdicts.record import Verdict
from autograder.workspace import Workspace
from selfattn import numerics
from selfattn.checks.calling import call_cases
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.findings import Finding, Kind
from selfattn.checks.judging import run_check, safe_verify
from selfattn.checks.record import REGISTRY

#: JSON values as a grader file holds them (no NaN: the files are plain JSON).
_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20)
                       | st.floats(allow_nan=False, allow_infinity=False),
                       lambda inner: (st.lists(inner, max_size=4)
                                      | st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                       max_leaves=12)


def _ws(tmp_path: Path) -> Workspace:
    return Workspace(work=tmp_path / "work", course=tmp_path / "course")


# --- format versions --------------------------------------------------------------------------------


@given(st.sampled_from(sorted(set(json_files.FORMATS) - json_files.LISTS)),
       st.dictionaries(st.text(max_size=8), _VALUES, max_size=5))
def test_an_object_file_round_trips_with_its_format(kind, data):
    text = json_files.dumps(kind, data)
    assert json.loads(text)[json_files.KEY] == json_files.FORMATS[kind]
    assert json_files.loads(text, kind, "f.json") == {k: v for k, v in data.items() if k != json_files.KEY}


@given(st.lists(_VALUES, max_size=5))
def test_a_list_file_round_trips_with_its_format(data):
    text = json_files.dumps("history", data)
    assert json.loads(text) == {json_files.KEY: json_files.FORMATS["history"], "items": data}
    assert json_files.loads(text, "history", "h.json") == data


def test_a_file_written_before_formats_reads_as_format_0():
    assert json_files.loads('{"cells": {}, "key": "k"}', "verdict", "v.json") == {"cells": {}, "key": "k"}
    assert json_files.loads('[{"replaced": "t", "mistakes": {}}]', "history", "h.json") == [
        {"replaced": "t", "mistakes": {}}]


@pytest.mark.parametrize("kind", sorted(json_files.FORMATS))
def test_a_newer_format_is_refused_in_one_line_naming_the_file(kind, tmp_path):
    path = tmp_path / "some" / "file.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({json_files.KEY: json_files.FORMATS[kind] + 1, "items": []}))
    with pytest.raises(json_files.NewerFormat) as caught:
        json_files.read(path, kind)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and "newer" in message


def test_a_newer_verdict_is_neither_read_nor_replaced(tmp_path):
    """The grader refuses it where it reads it, and so never writes over it."""
    ws = _ws(tmp_path)
    path = ws.verdict("ada", "attention", "nb")
    path.parent.mkdir(parents=True)
    newer = json.dumps({json_files.KEY: 99, "cells": {}})
    path.write_text(newer)
    with pytest.raises(json_files.NewerFormat, match=r"nb\.json"):
        decide.stored_verdict("ada", "attention", "nb", ws)
    with pytest.raises(json_files.NewerFormat, match=r"nb\.json"):
        history.remember_replaced(path, Verdict(answers="x"), ws)
    assert path.read_text() == newer


def test_every_file_the_grader_writes_names_its_format(tmp_path):
    ws = _ws(tmp_path)
    gradebook_state.save({"course": "d"}, ws)
    assert json.loads(gradebook_state.state_file(ws).read_text())[json_files.KEY] == json_files.FORMATS["state"]
    assert gradebook_state.load(ws) == {"course": "d"}
    verdict = ws.verdict("ada", "attention", "nb")
    json_files.write(verdict, "verdict", {"cells": {}, "answers": "a", "checks": {"f/c": {
        "kind": "MISTAKE", "name": "m", "text": "m"}}})
    history.remember_replaced(verdict, Verdict(answers="b"), ws)
    stored = json.loads(history.history_path("ada", "attention", "nb", ws).read_text())
    assert stored[json_files.KEY] == json_files.FORMATS["history"]
    assert [e["mistakes"] for e in history.read("ada", "attention", "nb", ws)] == [{"f/c": "m"}]


# --- findings and notes as values -------------------------------------------------------------------

_KINDS = st.sampled_from(list(Kind))
_NAMES = st.one_of(st.none(), st.text(max_size=30))


@given(st.text(max_size=60), _KINDS, _KINDS, _NAMES)
def test_two_findings_of_different_kinds_never_compare_equal(text, one, other, name):
    if one is not other:
        assert Finding(text, one, name) != Finding(text, other, name)
    assert Finding(text, one, name) != text  # a finding is no string: no string operation loses its kind


@given(st.text(max_size=60), _KINDS, _NAMES, _NAMES)
def test_a_finding_round_trips_through_json_and_pickle(text, kind, name, id_):
    found = Finding(text, kind, name, id_)
    assert Finding.from_json(json.loads(json.dumps(found.to_json()))) == found
    assert pickle.loads(pickle.dumps(found)) == found
    assert str(found) == text


@given(st.text(max_size=60), st.sampled_from(list(NoteKind)))
def test_a_note_round_trips_through_json_and_pickle(text, kind):
    note = Note(text, kind)
    assert Note.from_json(json.loads(json.dumps(note.to_json()))) == note
    assert pickle.loads(pickle.dumps(note)) == note
    if kind is not NoteKind.OTHER:
        assert note != Note(text, NoteKind.OTHER)


def test_findings_and_notes_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Finding("x", Kind.NAN).kind = Kind.MISTAKE  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Note("x").kind = NoteKind.MISSING  # type: ignore[misc]


def test_a_verifier_that_returns_a_bare_str_is_refused_in_one_line():
    check_ = REGISTRY["softmax/rows-sum-to-one"]
    cases = check_.cases(np.random.default_rng(0))
    outcomes = call_cases(numerics.softmax, cases)
    assert safe_verify(check_, cases, outcomes) is None
    bare = dataclasses.replace(check_, verify=lambda cases, outcomes: "wrong values somewhere")
    with pytest.raises(TypeError) as caught:
        safe_verify(bare, cases, outcomes)
    assert "\n" not in str(caught.value) and check_.id in str(caught.value) and "str" in str(caught.value)


# --- a named mistake's stable id ------------------------------------------------------------------

FN = "softmax"


def _mistake_found(reworded: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict]:
    """(check id, its finding's record) of the real check that names the first mistake of softmax,
    with the mistake's message as the record has it or reworded."""
    exercise = EXERCISES[FN]
    mistake = exercise.mistakes[0]
    if reworded:
        mistake = dataclasses.replace(mistake, message="Reworded: " + mistake.message[::-1])
        monkeypatch.setattr(exercise, "mistakes", [mistake, *exercise.mistakes[1:]])
    for check_ in exercise.public_checks:
        found = run_check(check_, mistake.wrong)
        if found is not None and found.name == mistake.message:
            assert found.id == f"{FN}/{mistake.id}" and found.hidden().id == found.id
            return check_.id, found.to_json()
    raise AssertionError(f"no public check of {FN} names {mistake.message!r}")


def test_rewording_a_mistake_keeps_the_reports_and_the_historys_counts(tmp_path, monkeypatch):
    """Ann's verdict was decided before the mistake was reworded, Bob's after, and Ann resubmitted
    (still the same mistake, in the new words): one mistake, two students, one history entry that
    the latest verdict still makes."""
    cid, before = _mistake_found(False, monkeypatch)
    cid_after, after = _mistake_found(True, monkeypatch)
    assert cid == cid_after and before["text"] != after["text"] and before["id"] == after["id"]
    ws = _ws(tmp_path)
    for student, found, answers in (("ann", before, "a"), ("bob", after, "b")):
        json_files.write(ws.verdict(student, "attention", "nb"), "verdict",
                         {"cells": {}, "answers": answers, "checks": {cid: found}})
    newer = Verdict.from_json({"cells": {}, "answers": "a2", "checks": {cid: after}})
    history.remember_replaced(ws.verdict("ann", "attention", "nb"), newer, ws)
    json_files.write(ws.verdict("ann", "attention", "nb"), "verdict", newer.to_json())
    assert [e["mistakes"] for e in history.read("ann", "attention", "nb", ws)] == [{cid: before["id"]}]
    assert history.named_mistakes(newer) == {cid: after["id"]}

    data = class_report.load(gradebook=False, ws=ws)
    data.verdicts[("cy", "attention", "nb")] = Verdict.from_json({"checks": {cid: before}})  # not resubmitted
    (only,) = class_tally.exercises(data)
    assert {k: sorted(v) for k, v in only.mistakes.items()} == {before["id"]: ["ann", "bob", "cy"]}
    assert mistake_label(before["id"], short=False) == after["name"]  # the current wording
    rows = class_tally.history_rows(data, "ann", "attention", "nb", data.verdicts[("ann", "attention", "nb")])
    assert [(r[3], r[4], r[5]) for r in rows] == [(FN, after["name"], f"still: {after['name']}")]


def test_every_named_mistake_and_diagnosis_has_one_stable_id():
    for exercise in EXERCISES.values():
        declared = [m.message for m in exercise.mistakes] + list(exercise.diagnoses.values())
        ids = [exercise.mistake_id(w) for w in declared]
        assert all(ids) and len(set(ids)) == len(ids), exercise.function
        assert all(exercise.wording(i) == w for i, w in zip(ids, declared, strict=True)), exercise.function
