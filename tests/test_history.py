"""The mistakes of a replaced verdict are kept only when the answers changed (another verdict key),
one entry per replacement, oldest first, and only named mistakes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder import history
from selfattn.checks.findings import Finding, Kind

NAMED = Finding("weights of the queries", Kind.MISTAKE, "softmax taken over the queries (axis 0)").record()
UNNAMED = Finding("wrong values", Kind.WRONG_VALUES).record()


@pytest.fixture()
def folders(tmp_path, monkeypatch):
    monkeypatch.setattr(history, "VERDICTS", tmp_path / "verdicts")
    monkeypatch.setattr(history, "HISTORY", tmp_path / "history")
    path = tmp_path / "verdicts" / "ann" / "attention" / "03-softmax-attention.json"
    path.parent.mkdir(parents=True)
    return path


def _verdict(key: str, checks: dict) -> dict:
    return {"key": key, "checks": checks}


def test_a_resubmission_keeps_the_named_mistake_and_a_regrade_does_not(folders):
    folders.write_text(json.dumps(_verdict("a", {"attention/rows": NAMED, "softmax/sum": UNNAMED, "x/ok": None})))
    history.remember_replaced(folders, _verdict("a", {}))  # same answers graded again: no resubmission
    assert history.read("ann", "attention", "03-softmax-attention") == []
    history.remember_replaced(folders, _verdict("b", {}))
    entries = history.read("ann", "attention", "03-softmax-attention")
    assert [e["mistakes"] for e in entries] == [{"attention/rows": "softmax taken over the queries (axis 0)"}]


@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_one_entry_per_replaced_verdict_with_a_named_mistake(tmp_path_factory, named):
    base = tmp_path_factory.mktemp("hist")
    history.VERDICTS, history.HISTORY = base / "verdicts", base / "history"  # restored below
    try:
        path = base / "verdicts" / "ann" / "attention" / "nb.json"
        path.parent.mkdir(parents=True)
        for i, has_name in enumerate(named):
            path.write_text(json.dumps(_verdict(str(i), {"c": NAMED if has_name else UNNAMED})))
            history.remember_replaced(path, _verdict(str(i + 1), {}))
        assert len(history.read("ann", "attention", "nb")) == sum(named)
    finally:
        from autograder.paths import GRADING, VERDICTS

        history.VERDICTS, history.HISTORY = VERDICTS, GRADING / "history"
