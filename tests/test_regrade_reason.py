"""Why notebooks are decided again, as the summary says it: the grader's files whose code changed (an
edited comment or docstring is no change) and the notebooks whose checks changed; nothing when nothing
did, or when there is no earlier record."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.verdicts import regrade_reason
from autograder.verdicts.decide import verdict_code
from autograder.workspace import ROOT, Workspace

NOW = regrade_reason.current(["attention"], ROOT)
COMMAND = ROOT / "autograder" / "sandbox" / "command.py"


def _edited(path: Path, edit, monkeypatch) -> None:
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: edit(real(self)) if self == path else real(self))


def test_a_code_change_names_its_file_and_a_docstring_edit_names_nothing(monkeypatch):
    assert "sandbox/command.py" in NOW["code"] and COMMAND in verdict_code()
    _edited(COMMAND, lambda data: data.replace(b'"""', b'"""Reworded. ', 1) + b"\n# a comment\n", monkeypatch)
    assert regrade_reason.reasons(NOW, regrade_reason.current(["attention"], ROOT)) == []
    _edited(COMMAND, lambda data: data + b"\nCHANGED = 1\n", monkeypatch)
    assert regrade_reason.reasons(NOW, regrade_reason.current(["attention"], ROOT)) == [
        "the grader's code changed in sandbox/command.py: every notebook is decided again"]


@given(code=st.sets(st.sampled_from(sorted(NOW["code"])), max_size=4),
       checks=st.sets(st.sampled_from(sorted(NOW["checks"])), max_size=3),
       new=st.booleans())
def test_each_change_is_named_once_and_nothing_else(code, checks, new):
    before = {"code": {f: ("old" if f in code else d) for f, d in NOW["code"].items()},
              "checks": {n: ("old" if n in checks else d) for n, d in NOW["checks"].items()}}
    if new:  # a notebook the last run did not know: new work, not a change
        before["checks"].pop(sorted(NOW["checks"])[-1])
    lines = regrade_reason.reasons(before, NOW)
    named_code = [ln for ln in lines if ln.startswith("the grader's code changed in ")]
    assert len(named_code) == (1 if code else 0)
    if code:
        files = ", ".join(sorted(code))
        assert named_code[0] == f"the grader's code changed in {files}: every notebook is decided again"
    named = {ln.split(" ")[3] for ln in lines if ln.startswith("the checks of ")}
    assert named == (checks - ({sorted(NOW["checks"])[-1]} if new else set()))
    assert regrade_reason.reasons(None, NOW) == [] and regrade_reason.reasons(NOW, NOW) == []


def test_the_record_is_kept_per_work_folder_and_a_run_of_one_assignment_keeps_the_others(tmp_path):
    ws = Workspace(course=ROOT, work=tmp_path)
    assert regrade_reason.read(ws) is None
    regrade_reason.write(ws, {"code": NOW["code"], "checks": {"other/01-x": "d"}})
    regrade_reason.write(ws, NOW)
    kept = regrade_reason.read(ws)
    assert kept is not None and kept["checks"]["other/01-x"] == "d" and kept["code"] == NOW["code"]
    (ws.grading / regrade_reason.FILE).write_text("{not json")
    assert regrade_reason.read(ws) is None


@pytest.mark.parametrize("kind", ["code", "checks"])
def test_a_record_missing_a_part_reads_as_unknown_not_as_a_change(kind):
    before = {k: v for k, v in NOW.items() if k != kind}
    assert regrade_reason.reasons(before, NOW) == []
