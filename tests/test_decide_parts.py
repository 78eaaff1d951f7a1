"""The bookkeeping of a decision (autograder/verdicts/decide.py) that is not a sandbox run: public
and hidden checks never share a run and keep their order, a test cell's line says what it found, a
function's key changes with its code, the checks or the settings, and a stored verdict is read only
when it is an object. Each test holds one of these both ways (docs/mutation.md)."""

from __future__ import annotations

import dataclasses
import json

import nbformat
from hypothesis import given
from hypothesis import strategies as st

from autograder import sandbox
from autograder.notes import Note, NoteKind, records
from autograder.verdicts import decide, record
from autograder.verdicts.record import FunctionRecord, Verdict
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


# --- the bookkeeping of stored verdicts: verdict_key, settings, forget_kept, _kept_functions, freshness ---

NB3 = "03-softmax-attention"


def _staged03() -> nbformat.NotebookNode:
    nb = nbformat.read(ROOT / "notebooks" / "attention" / f"{NB3}.ipynb", as_version=4)
    nb.metadata["selfattn"] = {"notes": records([Note("a repair", NoteKind.REPAIRED)])}
    return nb


def _answer(nb: nbformat.NotebookNode, gid: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def test_the_verdict_key_changes_with_the_answers_the_notes_or_the_checks_and_nothing_else(monkeypatch):
    nb = _staged03()
    key = decide.verdict_key(nb, "attention", NB3, ROOT)
    assert len(key) == 64 and key == decide.verdict_key(_staged03(), "attention", NB3, ROOT)
    nb.cells[0].source += "\nprose the student cannot change"
    assert decide.verdict_key(nb, "attention", NB3, ROOT) == key
    _answer(nb, "softmax").source += "\n# another answer"
    assert decide.verdict_key(nb, "attention", NB3, ROOT) != key
    other = _staged03()
    other.metadata["selfattn"] = {"notes": records([Note("another repair", NoteKind.REPAIRED)])}
    assert decide.verdict_key(other, "attention", NB3, ROOT) != key
    monkeypatch.setattr(decide, "checks_version", lambda *_args: "other checks")
    assert decide.verdict_key(_staged03(), "attention", NB3, ROOT) != key


def test_the_settings_are_the_limits_and_the_sandbox_mode():
    lower = dataclasses.replace(sandbox.DEFAULT, cpu_seconds=5)
    assert decide.settings(lower) == {"limits": dataclasses.asdict(lower), "sandbox": sandbox.mode()}
    assert decide.settings(lower) != decide.settings(sandbox.DEFAULT)


def _record(key: str) -> FunctionRecord:
    return FunctionRecord(key, 1.5, (), {"c1": None})


def test_a_function_keeps_its_stored_record_only_when_its_key_is_the_stored_one():
    stored = Verdict("ann", "attention", NB3, functions={"softmax": _record("k1"), "attention": _record("k2"),
                                                         "gone": _record("k3")})
    assert decide._kept_functions(stored, {"softmax": "k1", "attention": "other"}) == {"softmax": _record("k1")}
    assert decide._kept_functions(None, {"softmax": "k1"}) == {}
    assert decide._kept_functions(dataclasses.replace(stored, failed=True), {"softmax": "k1"}) == {}


def test_forgetting_the_kept_functions_drops_their_records_and_nothing_else(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    decide.forget_kept("ann", "attention", NB3, ws)  # no verdict: nothing to forget, nothing written
    path = ws.verdict("ann", "attention", NB3)
    assert not path.exists()
    stored = Verdict("ann", "attention", NB3, notes=(Note("n", NoteKind.OTHER),), functions={"softmax": _record("k")},
                     key="key", settings={"limits": {}})
    path.parent.mkdir(parents=True)
    record.write(path, stored)
    decide.forget_kept("ann", "attention", NB3, ws)
    assert record.read(path) == dataclasses.replace(stored, functions={})


def test_a_verdict_is_fresh_only_for_its_answers_notes_checks_and_limits(tmp_path):
    ws = Workspace(tmp_path, ROOT)
    nb = _staged03()
    path = ws.verdict("ann", "attention", NB3)
    path.parent.mkdir(parents=True)

    def fresh(stored: Verdict | None, limits: sandbox.Limits = sandbox.DEFAULT, **kwargs) -> str:
        if stored is not None:
            record.write(path, stored)
        return decide.freshness("ann", "attention", NB3, nb, limits, ws=ws, **kwargs)

    assert fresh(None) == "stale"
    key = decide.verdict_key(nb, "attention", NB3, ROOT)
    now = Verdict("ann", "attention", NB3, key=key, settings=decide.settings(sandbox.DEFAULT))
    assert fresh(now) == "fresh"
    assert fresh(dataclasses.replace(now, key=None)) == "stale"
    assert fresh(dataclasses.replace(now, key="0" * 64)) == "stale"
    assert fresh(now, dataclasses.replace(sandbox.DEFAULT, cpu_seconds=5)) == "settings"
    elsewhere = dataclasses.replace(now, settings={**decide.settings(sandbox.DEFAULT), "sandbox": "elsewhere"})
    assert fresh(elsewhere) == "settings"
    assert fresh(elsewhere, any_sandbox=True) == "fresh"
    assert fresh(elsewhere, dataclasses.replace(sandbox.DEFAULT, cpu_seconds=5), any_sandbox=True) == "settings"
