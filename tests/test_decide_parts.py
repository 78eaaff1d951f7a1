"""The bookkeeping of a decision (autograder/verdicts/decide.py) that is not a sandbox run: public
and hidden checks never share a run and keep their order, a test cell's line says what it found, a
function's key changes with its code, the checks or the settings, and a stored verdict is read only
when it is an object. Each test holds one of these both ways (docs/mutation.md)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from autograder import sandbox
from autograder.verdicts import decide
from autograder.workspace import ROOT, Workspace
from selfattn.checks.findings import Finding, Kind

IDS = st.lists(st.sampled_from([f"c{i}" for i in range(8)]), unique=True, max_size=8)


@given(IDS, st.sets(st.sampled_from([f"c{i}" for i in range(8)])))
def test_public_and_hidden_checks_never_share_a_run_and_keep_their_order(ids, hidden):
    groups = decide._groups(ids, hidden)
    assert all(g for g in groups) and len(groups) <= 2
    assert [c for g in groups for c in g] == [c for c in ids if c not in hidden] + [c for c in ids if c in hidden]
    assert all(len({c in hidden for c in g}) == 1 for g in groups)


def test_a_test_cells_line_says_passed_or_what_it_found():
    assert decide._line("softmax", "rows sum to 1", None) == "✓ softmax: rows sum to 1"
    found = Finding("wrong values", Kind.WRONG_VALUES)
    assert decide._line("softmax", "rows sum to 1", found) == "✗ softmax: rows sum to 1: wrong values"


def test_a_functions_key_changes_with_its_code_its_checks_or_the_settings():
    code = [("softmax", "def softmax(x): ...")]
    key = decide.function_key(code, "v1", sandbox.DEFAULT)
    assert len(key) == 64 and key == decide.function_key(list(code), "v1", sandbox.DEFAULT)
    assert key != decide.function_key([("softmax", "def softmax(x): pass")], "v1", sandbox.DEFAULT)
    assert key != decide.function_key(code, "v2", sandbox.DEFAULT)


def test_a_stored_verdict_is_read_only_when_it_is_an_object(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    path = ws.verdict("ann", "attention", "03-softmax-attention")
    assert decide.stored_verdict("ann", "attention", "03-softmax-attention", ws) is None
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"key": "k"}))
    assert decide.stored_verdict("ann", "attention", "03-softmax-attention", ws).key == "k"
    path.write_text(json.dumps(["k"]))
    assert decide.stored_verdict("ann", "attention", "03-softmax-attention", ws) is None
    path.write_text("{")
    assert decide.stored_verdict("ann", "attention", "03-softmax-attention", ws) is None
