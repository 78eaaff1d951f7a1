"""The verdict is a frozen, versioned record (:mod:`autograder.verdicts.record`): what is written reads
back equal, and verdicts stored in the earlier forms still read (or are decided again)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.notes import Note, NoteKind
from autograder.outputs import json_files
from autograder.verdicts import decide, record
from autograder.verdicts.record import VERSION, CellResult, FunctionRecord, UnreadableVerdict, Verdict
from autograder.workspace import ROOT, Workspace
from selfattn.checks.findings import Finding, Kind

text = st.text(max_size=12)
ids = st.text(alphabet="abcdefgh/-_", min_size=1, max_size=10)
findings = st.none() | st.builds(Finding, text, st.sampled_from(Kind), st.none() | text, st.none() | text)
notes = st.lists(st.builds(Note, text, st.sampled_from(NoteKind)), max_size=3).map(tuple)
checks = st.dictionaries(ids, findings, max_size=4)
cells = st.builds(CellResult, st.booleans(), st.integers(0, 9), st.lists(text, max_size=3).map(tuple),
                  st.none() | st.integers(0, 5) | st.floats(0, 5, allow_nan=False))
seconds = st.floats(0, 1e4, allow_nan=False)
functions = st.dictionaries(ids, st.builds(FunctionRecord, text, seconds, notes, checks), max_size=3)
settings = st.fixed_dictionaries({"limits": st.dictionaries(ids, st.integers(), max_size=3), "sandbox": text})
verdicts = st.builds(Verdict, ids, ids, ids, st.dictionaries(ids, cells, max_size=3), notes, checks, functions,
                     st.dictionaries(ids, seconds, max_size=3), st.sampled_from(["bubblewrap", "fallback"]),
                     st.none() | text, st.none() | text, settings)
failed = st.builds(Verdict, notes=notes, key=st.none() | text, settings=settings, failed=st.just(True))


@given(verdicts | failed)
def test_a_verdict_reads_back_equal_from_its_file(tmp_path_factory, verdict):
    path = tmp_path_factory.mktemp("v") / "nb.json"
    record.write(path, verdict)
    assert json.loads(path.read_text())[json_files.KEY] == VERSION
    assert record.read(path) == verdict


def test_a_verdict_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Verdict().key = "k"  # type: ignore[misc]


def test_a_verdict_of_the_earliest_form_still_reads(tmp_path):
    """No format, findings and notes as bare strings, a cell without its count of failed checks."""
    path = tmp_path / "nb.json"
    path.write_text(json.dumps({"cells": {"f-public": {"passed": False, "lines": ["✓ f: a", "✗ f: b: wrong", "✗ c"]}},
                                "notes": ["an old note"], "checks": {"f/a": None, "f/b": "wrong"}, "key": "k"}))
    v = record.read(path)
    assert v.version == 0 and v.key == "k" and v.answers is None and not v.failed
    assert v.cells["f-public"] == CellResult(False, 2, ("✓ f: a", "✗ f: b: wrong", "✗ c"), None)
    assert v.notes == (Note("an old note", NoteKind.OTHER),)
    assert v.checks == {"f/a": None, "f/b": Finding("wrong", Kind.WRONG_VALUES)}


def test_a_function_record_of_another_shape_is_dropped_and_the_rest_kept():
    kept = {"key": "k1", "seconds": 1, "notes": [], "checks": {"f/a": None}}
    v = Verdict.from_json({"cells": {}, "functions": {"f": kept, "g": {**kept, "checks": "all passed"},
                                                       "h": {"seconds": 2}, "i": "x"}})
    assert v.functions == {"f": FunctionRecord("k1", 1.0, (), {"f/a": None})}


@pytest.mark.parametrize(("data", "why"), [([], "holds list"), ({"cells": []}, "cells are not"),
                                           ({"cells": {"g": "x"}}, "test cell"), ({"notes": "n"}, "notes are not"),
                                           ({"checks": ["f/a"]}, "checks are not")])
def test_a_file_holding_no_verdict_is_named_and_decided_again(tmp_path, data, why):
    with pytest.raises(UnreadableVerdict, match=why):
        Verdict.from_json(data)
    ws = Workspace(tmp_path, ROOT)
    path = ws.verdict("ann", "attention", "nb")
    path.parent.mkdir(parents=True)
    json_files.write(path, "verdict", data) if isinstance(data, dict) else path.write_text(json.dumps(data))
    assert decide.stored_verdict("ann", "attention", "nb", ws) is None
    assert decide.freshness("ann", "attention", "nb", nb=None, ws=ws) == "stale"
