"""The mistakes history and the regrade reasons read what earlier runs wrote as untrusted
(autograder/verdicts/history.py, regrade_reason.py): only a named mistake is a mistake (a raised
exception's name is not), an old verdict that is not an object or has no digest of its answers is
compared by its key without failing, and a grader file outside the checkout is named by its path.
Each test holds one of these both ways (docs/mutation.md)."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.verdicts import history, regrade_reason
from autograder.verdicts.record import Verdict
from autograder.workspace import ROOT, Workspace
from selfattn.checks.findings import Finding, Kind

NAMED = Finding("weights of the queries", Kind.MISTAKE, "softmax over the queries", "attention/rows").to_json()
RAISED = Finding("ValueError: shapes", Kind.RAISED, "ValueError").to_json()


def test_only_a_named_mistake_is_remembered():
    verdict = {"checks": {"a": NAMED, "b": RAISED, "c": None, "d": {"kind": "NOPE"}, "e": "text"}}
    assert history.named_mistakes(Verdict.from_json(verdict)) == {"a": "attention/rows"}


def _ws(tmp_path: Path) -> tuple[Workspace, Path]:
    ws = Workspace(tmp_path, ROOT)
    path = ws.verdict("ann", "attention", "03-softmax-attention")
    path.parent.mkdir(parents=True)
    return ws, path


def test_an_old_verdict_that_is_not_an_object_is_passed_over(tmp_path):
    ws, path = _ws(tmp_path)
    path.write_text(json.dumps([NAMED]))
    history.remember_replaced(path, Verdict.from_json({"key": "k2", "answers": "b", "checks": {}}), ws)
    assert history.read("ann", "attention", "03-softmax-attention", ws) == []


def test_an_old_verdict_without_an_answers_digest_is_compared_by_its_key(tmp_path):
    ws, path = _ws(tmp_path)
    path.write_text(json.dumps({"key": "k1", "answers": "a", "checks": {"x": NAMED}}))
    # the new verdict has no digest of its answers: compared by its key, the same
    history.remember_replaced(path, Verdict.from_json({"key": "k1", "checks": {}}), ws)
    assert history.read("ann", "attention", "03-softmax-attention", ws) == []
    history.remember_replaced(path, Verdict.from_json({"key": "k2", "checks": {}}), ws)
    (entry,) = history.read("ann", "attention", "03-softmax-attention", ws)
    assert entry["mistakes"] == {"x": "attention/rows"}


def test_a_grader_file_is_named_from_the_checkout_or_else_by_its_path():
    assert regrade_reason._shown(ROOT / "autograder" / "verdicts" / "decide.py") == "verdicts/decide.py"
    assert regrade_reason._shown(Path("/elsewhere/x.py")) == "/elsewhere/x.py"
