"""The mistakes of a replaced verdict are kept only when the answers changed (another verdict key),
one entry per replacement, oldest first, and only named mistakes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.verdicts import history
from autograder.workspace import Workspace
from selfattn.checks.findings import Finding, Kind

NAMED = Finding("weights of the queries", Kind.MISTAKE, "softmax taken over the queries (axis 0)").record()
UNNAMED = Finding("wrong values", Kind.WRONG_VALUES).record()


@pytest.fixture()
def folders(tmp_path):
    ws = Workspace(tmp_path)
    path = ws.verdict("ann", "attention", "03-softmax-attention")
    path.parent.mkdir(parents=True)
    return ws, path


def _verdict(key: str, checks: dict) -> dict:
    return {"key": key, "checks": checks}


def test_a_resubmission_keeps_the_named_mistake_and_a_regrade_does_not(folders):
    ws, path = folders
    path.write_text(json.dumps(_verdict("a", {"attention/rows": NAMED, "softmax/sum": UNNAMED, "x/ok": None})))
    history.remember_replaced(path, _verdict("a", {}), ws)  # same answers graded again: no resubmission
    assert history.read("ann", "attention", "03-softmax-attention", ws) == []
    history.remember_replaced(path, _verdict("b", {}), ws)
    entries = history.read("ann", "attention", "03-softmax-attention", ws)
    assert [e["mistakes"] for e in entries] == [{"attention/rows": "softmax taken over the queries (axis 0)"}]


@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_one_entry_per_replaced_verdict_with_a_named_mistake(tmp_path_factory, named):
    ws = Workspace(tmp_path_factory.mktemp("hist"))
    path = ws.verdict("ann", "attention", "nb")
    path.parent.mkdir(parents=True)
    for i, has_name in enumerate(named):
        path.write_text(json.dumps(_verdict(str(i), {"c": NAMED if has_name else UNNAMED})))
        history.remember_replaced(path, _verdict(str(i + 1), {}), ws)
    assert len(history.read("ann", "attention", "nb", ws)) == sum(named)
    assert ws.history.is_dir() == any(named)  # in this workspace, nowhere else
