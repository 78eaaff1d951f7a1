"""The mistakes of a replaced verdict are kept only when the answers changed (their digest),
one entry per replacement, oldest first, and only named mistakes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.verdicts import history
from autograder.verdicts.record import Verdict
from autograder.workspace import ROOT, Workspace
from selfattn.checks.findings import Finding, Kind

NAMED = Finding("weights of the queries", Kind.MISTAKE, "softmax taken over the queries (axis 0)").to_json()
UNNAMED = Finding("wrong values", Kind.WRONG_VALUES).to_json()


@pytest.fixture()
def folders(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    path = ws.verdict("ann", "attention", "03-softmax-attention")
    path.parent.mkdir(parents=True)
    return ws, path


def _verdict(key: str, checks: dict) -> dict:
    """A verdict as stored before verdicts carried a digest of their answers."""
    return {"key": key, "checks": checks}


def test_a_resubmission_keeps_the_named_mistake_and_a_regrade_does_not(folders):
    ws, path = folders
    path.write_text(json.dumps(_verdict("a", {"attention/rows": NAMED, "softmax/sum": UNNAMED, "x/ok": None})))
    history.remember_replaced(path, Verdict.from_json(_verdict("a", {})), ws)  # same answers: no resubmission
    assert history.read("ann", "attention", "03-softmax-attention", ws) == []
    history.remember_replaced(path, Verdict.from_json(_verdict("b", {})), ws)
    entries = history.read("ann", "attention", "03-softmax-attention", ws)
    assert [e["mistakes"] for e in entries] == [{"attention/rows": "softmax taken over the queries (axis 0)"}]


@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_one_entry_per_replaced_verdict_with_a_named_mistake(tmp_path_factory, named):
    ws = Workspace(tmp_path_factory.mktemp("hist"), ROOT)
    path = ws.verdict("ann", "attention", "nb")
    path.parent.mkdir(parents=True)
    for i, has_name in enumerate(named):
        path.write_text(json.dumps(_verdict(str(i), {"c": NAMED if has_name else UNNAMED})))
        history.remember_replaced(path, Verdict.from_json(_verdict(str(i + 1), {})), ws)
    assert len(history.read("ann", "attention", "nb", ws)) == sum(named)
    assert ws.history.is_dir() == any(named)  # in this workspace, nowhere else


def test_a_regrade_for_changed_checks_is_no_resubmission(folders):
    """The checks or the points change (another verdict key) but the answers do not: the student did
    not resubmit, and the report's "mistakes before a resubmission" must not list them."""
    ws, path = folders
    old = {"key": "checks-v1", "answers": "same", "checks": {"attention/rows": NAMED}}
    path.write_text(json.dumps(old))
    history.remember_replaced(path, Verdict(key="checks-v2", answers="same"), ws)
    assert history.read("ann", "attention", "03-softmax-attention", ws) == []
    history.remember_replaced(path, Verdict(key="checks-v2", answers="other"), ws)
    assert len(history.read("ann", "attention", "03-softmax-attention", ws)) == 1


def test_the_answers_digest_reads_the_answers_only():
    """Two staged notebooks with the same answers and other notes or test cells have one digest."""
    import nbformat

    from autograder.verdicts.decide import answers_digest, release_path

    nb = nbformat.read(release_path("attention", "08-cost", ROOT), as_version=4)
    before = answers_digest(nb)
    for cell in nb.cells:
        if not cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source += "\n# another text"
    nb.metadata["selfattn"] = {"notes": [{"kind": "OTHER", "text": "a note"}]}
    assert answers_digest(nb) == before
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    answer.source += "\n# changed"
    assert answers_digest(nb) != before
