"""Cheap checks of the instructor-loop defects, in this process (the whole loop with nbgrader's
commands and formgrader is tests/test_instructor_loop.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest
from grading_support import RELEASE, ROOT, SOLUTIONS
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.intake import staging
from autograder.nbgrader_ext.plugins import ApplyVerdicts, StaleVerdict, deciding_with
from autograder.notes import Note, NoteKind, notes_of, records
from autograder.reporting import run_summary
from autograder.reporting.run_summary import Progress, Summary
from autograder.verdicts.decide import verdict_key
from autograder.workspace import Workspace

NB = "01-embeddings"


def _ws(tmp) -> Workspace:
    """The workspace of the :func:`course` fixture: its work folder and its course of its own."""
    return Workspace(tmp, tmp / "course")


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A work folder with one submitted notebook (a copy of the release) and a copy of the release."""
    release = tmp_path / "course" / "notebooks"  # a course of its own: a copy of the release
    shutil.copytree(RELEASE.parent, release)
    (tmp_path / "course" / "solutions").symlink_to(SOLUTIONS.parent)
    folder = tmp_path / "submitted" / "ann" / "attention"
    folder.mkdir(parents=True)
    shutil.copy(release / "attention" / f"{NB}.ipynb", folder)
    return tmp_path, release / "attention" / f"{NB}.ipynb", folder / f"{NB}.ipynb"


def _edit(path, fn):
    nb = nbformat.read(path, as_version=4)
    fn(nb)
    nbformat.write(nb, path)


def _cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def test_changing_a_test_after_release_raises_no_tampering_note(course):
    """The instructor changes the points and text of a test after the student fetched the release."""
    _, release, _ = course

    def change(nb):
        cell = _cell(nb, "embed-hidden")
        cell.metadata.nbgrader["points"] = 5
        cell.source += "\n# changed after release"
    _edit(release, change)
    notes = notes_of(staging.staged_notebook("ann", "attention", NB, _ws(course[0])).metadata["selfattn"])
    assert not [n for n in notes if "changed" in n.text or "edited" in n], notes


def test_a_student_edit_of_a_locked_cell_is_noted(course):
    _, _, submitted = course

    def tamper(nb):
        _cell(nb, "embed-hidden").metadata.nbgrader["points"] = 50
    _edit(submitted, tamper)
    nb = staging.staged_notebook("ann", "attention", NB, _ws(course[0]))
    assert any("points of `embed-hidden` were changed" in n.text and n.kind is NoteKind.REPAIRED
               for n in notes_of(nb.metadata["selfattn"]))
    assert _cell(nb, "embed-hidden").metadata.nbgrader["points"] == 2  # the course's points


def test_added_cells_are_kept_in_place_and_explained(course):
    _, _, submitted = course

    def add(nb):
        i = nb.cells.index(_cell(nb, "embed"))
        nb.cells.insert(i, new_code_cell("def helper(E):\n    return E"))
        nb.cells.append(new_markdown_cell("my scratch notes"))
    _edit(submitted, add)
    nb = staging.staged_notebook("ann", "attention", NB, _ws(course[0]))
    texts = [c.source for c in nb.cells]
    helper = texts.index("def helper(E):\n    return E")
    assert texts[helper + 1] == _cell(nb, "embed").source  # still before the answer cell
    assert "not run" in texts[helper - 1] and "not run" in texts[-2]
    assert texts[-1] == "my scratch notes" and nb.cells[-1].cell_type == "code"  # shown, never rendered
    assert "nbgrader" not in nb.cells[helper].metadata  # neither graded nor locked
    assert any("2 cell(s) you added" in n.text for n in notes_of(nb.metadata["selfattn"]))


def _apply(nb, ws: Workspace, student="ann"):
    """nbgrader's autograde of ``ws`` applying the verdict to ``nb``."""
    resources = {"nbgrader": {"student": student, "assignment": "attention", "notebook": NB}}
    with deciding_with(None, ws):
        return ApplyVerdicts().preprocess(nb, resources)


def _verdict(tmp, key, passed=True):
    path = _ws(tmp).verdict("ann", "attention", NB)
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = {g: {"passed": passed, "lines": ["✓ embed: x"], "points": 1} for g in ("embed-public", "embed-hidden")}
    path.write_text(json.dumps({"cells": cells, "notes": [], "key": key}))


def test_autograde_refuses_a_missing_verdict(course):
    nb = staging.staged_notebook("ann", "attention", NB, _ws(course[0]))
    with pytest.raises(StaleVerdict, match="make grade STUDENT=ann"):
        _apply(nb, _ws(course[0]))


def test_autograde_refuses_a_verdict_made_for_other_answers(course):
    tmp, _, _ = course
    old = staging.staged_notebook("ann", "attention", NB, _ws(course[0]))
    _verdict(tmp, verdict_key(old, "attention", NB, ROOT))
    new = staging.staged_notebook("ann", "attention", NB, _ws(course[0]))
    _cell(new, "embed").source = "def embed(E, ids):\n    return E[ids]"
    with pytest.raises(StaleVerdict, match="other answers"):
        _apply(new, _ws(tmp))
    out, _ = _apply(old, _ws(tmp))  # the verdict still applies to what it judged
    assert "✓ embed: x" in _cell(out, "embed-public").outputs[0]["text"]


def test_autograde_shows_the_verdicts_data_not_a_reading_of_its_words(course):
    """A failed test cell says how many checks failed from the verdict's count, whatever its lines
    look like, and the notes come first as their text (a record's kind is not shown)."""
    ws = _ws(course[0])
    nb = staging.staged_notebook("ann", "attention", NB, ws)
    path = ws.verdict("ann", "attention", NB)
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = {"embed-public": {"passed": False, "failed": 2, "lines": ["✓ looks fine", "✓ also fine"], "points": 1},
             "embed-hidden": {"passed": True, "failed": 0, "lines": ["✗ but passed"], "points": 1}}
    notes = records([Note("The answer cell `embed` appears 2 times; the first one was graded.", NoteKind.REPAIRED)])
    path.write_text(json.dumps({"cells": cells, "notes": notes, "key": verdict_key(nb, "attention", NB, ROOT)}))
    out, _ = _apply(nb, ws)
    public = [o for o in _cell(out, "embed-public").outputs if o["output_type"] == "error"]
    assert [o["evalue"] for o in public] == ["2 check(s) failed"], public
    assert not [o for o in _cell(out, "embed-hidden").outputs if o["output_type"] == "error"]
    assert out.cells[0].metadata.get("grading_notes") and "appears 2 times" in out.cells[0].source
    assert "REPAIRED" not in out.cells[0].source and "kind" not in out.cells[0].source, out.cells[0].source


def test_nbgrader_config_chain_includes_the_user_config(tmp_path, monkeypatch):
    from autograder.nbgrader_ext.steps import load_config

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.LateSubmissionPlugin.penalty_method = 'zero'\n")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    config = load_config()
    assert config.LateSubmissionPlugin.penalty_method == "zero"
    assert config.Autograde.pre_convert_hook is not None  # and the course's own settings


def test_progress_reports_rate_and_time_left(monkeypatch):
    lines = []
    clock = iter([0.0, 30.0, 31.0, 32.0, 33.0])  # 30 s of start-up, then a notebook a second
    monkeypatch.setattr(run_summary.time, "perf_counter", lambda: next(clock))
    p = Progress(4, lines.append)
    for i in range(4):
        p.step(f"s{i}/a/nb", 0.1)
    assert len(lines) == 4 and "[4/4]" in lines[-1] and "estimating" in lines[0]
    assert "1.00 notebooks/s · about 1 s left" in lines[2], lines  # not 3 in 32 s: about 11 s left


def test_summary_lists_every_anomaly_with_advice(tmp_path):
    s = Summary(missing=["bob/attention/03"], unknown_students=["zed"], late=["amy/attention: 2.0 h late"])
    out = []
    s.write(tmp_path / "summary.txt", out.append)
    text = (tmp_path / "summary.txt").read_text()
    assert "not handed in (scored 0): 1" in text and "bob/attention/03" in text
    assert "not on the roster" in text and "zed" in text and "nbgrader db student add" in text
    assert "late submissions: 1" in text
    assert out and "bob/attention/03" in out[0]


def test_verdict_keys_do_not_depend_on_the_process():
    """A key computed in another process (a worker, formgrader, the next run) must be the same:
    string hashing is randomised per process, so nothing in a key may depend on set order."""
    code = ("from autograder.verdicts.decide import checks_version\nfrom autograder.workspace import ROOT\n"
            "print(checks_version('attention', '03-softmax-attention', ROOT))")
    keys = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED=str(seed)),
                           capture_output=True, text=True, check=True).stdout for seed in (1, 2, 3)}
    assert len(keys) == 1, keys


def test_verdict_keys_cover_every_course_module_the_checks_import():
    """A verdict goes stale when code that decides it changes: every selfattn module the grader's
    checks load must be part of the key (a module missing here would keep stale verdicts)."""
    code = ("import sys, autograder.verdicts.decide\n"
            "print(' '.join(sorted(m.split('.', 1)[1] for m in sys.modules if m.startswith('selfattn.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    from autograder.verdicts.decide import CHECK_MODULES

    assert loaded and set(loaded) <= set(CHECK_MODULES), set(loaded) - set(CHECK_MODULES)


def test_awaiting_line_names_students_and_notebooks():
    from autograder.nbgrader_ext.gradebook_state import Awaiting, awaiting_line

    dave = [Awaiting("dave", "attention", nb, gid) for nb, gid in
            (("02-queries-keys-values", "why-separate-projections"), ("04-scaling", "variance-derivation"),
             ("07-masking", "causal-parallel-training"))]
    assert awaiting_line(dave) == "written answers awaiting hand-grading: 3 — dave: 02, 04, 07"
    assert awaiting_line([]) == "written answers awaiting hand-grading: 0"
    two = [Awaiting("ann", "attention", "04-scaling", "a"), Awaiting("ann", "attention", "04-scaling", "b"),
           Awaiting("bo", "extra", "notes", "c")]
    assert awaiting_line(two) == ("written answers awaiting hand-grading: 3 — ann: attention 04 (a), "
                                  "attention 04 (b); bo: extra notes")


def test_summary_lists_answers_awaiting_hand_grading(tmp_path):
    s = Summary(awaiting=["dave/attention/04-scaling: variance-derivation"])
    s.write(tmp_path / "summary.txt", lambda _line: None)
    text = (tmp_path / "summary.txt").read_text()
    assert "written answers awaiting hand-grading (not final; PENDING in the LMS files): 1" in text
    assert "    - dave/attention/04-scaling: variance-derivation" in text and "make grades-final" in text
