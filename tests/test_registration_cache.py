"""A new gradebook starts as the course's kept registration (``autograder/nbgrader_ext/registration_cache.py``)
only where nbgrader would have written the same: the rows and release copies of a restored gradebook are
those of nbgrader's own ``generate_assignment``, a changed notebook, setting or course module is a new key
(registered by nbgrader, then kept), and a gradebook that exists is never replaced."""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from grading_support import ROOT, SOLUTIONS

from autograder.nbgrader_ext import gradebook_state, registration_cache
from autograder.nbgrader_ext.steps import nbgrader_api
from autograder.pipeline.grading_run import register_assignments
from autograder.workspace import Workspace

SUBS = [("alice", "attention")]
#: columns nbgrader fills with a new random id in every gradebook
IDS = {"id", "assignment_id", "notebook_id", "cell_id"}


@pytest.fixture()
def course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    shutil.copytree(SOLUTIONS, root / "solutions" / "attention")
    return root


def _registered(course: Path, work: Path) -> tuple[Workspace, dict, bool]:
    """A first run's registration in the new work folder ``work``: (workspace, state, restored from the course's
    kept registration)."""
    ws = Workspace(work=work, course=course)
    ws.work.mkdir(parents=True, exist_ok=True)
    kept = set(registration_cache.folder(ws).glob("*")) if registration_cache.folder(ws).exists() else set()
    state: dict = {}
    api = nbgrader_api(ws=ws)
    register_assignments(api, SUBS, state, True, ws)
    digests = {"attention": gradebook_state.course_digest("attention", ws)}
    restored = registration_cache.folder(ws) / registration_cache.key(api.config, api.coursedir.course_id, digests)
    return ws, state, restored in kept


def _rows(gradebook: Path) -> dict[str, list]:
    """Every table's rows, without the random ids, sorted."""
    db = sqlite3.connect(gradebook)
    try:
        out = {}
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            cursor = db.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            out[table] = sorted(json.dumps({n: v for n, v in zip(names, row, strict=True) if n not in IDS},
                                           sort_keys=True, default=str) for row in cursor)
        return out
    finally:
        db.close()


def _release(ws: Workspace) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((ws.grading / "release" / "attention").glob("*.ipynb"))}


def test_a_restored_gradebook_holds_what_nbgrader_registers(course, tmp_path):
    first, state1, restored1 = _registered(course, tmp_path / "first")
    second, state2, restored2 = _registered(course, tmp_path / "second")
    assert (restored1, restored2) == (False, True)
    assert state1 == state2 == {"course": {"attention": gradebook_state.course_digest("attention", first)}}
    assert _rows(second.gradebook) == _rows(first.gradebook)
    assert _release(second) == _release(first) and len(_release(first)) == len(list(SOLUTIONS.glob("*.ipynb")))
    # nbgrader itself, in a course with nothing kept, writes the same
    shutil.rmtree(registration_cache.folder(first))
    third, _, restored3 = _registered(course, tmp_path / "third")
    assert not restored3 and _rows(third.gradebook) == _rows(second.gradebook)


def _points(gradebook: Path, cell: str) -> float:
    db = sqlite3.connect(gradebook)
    try:
        query = "SELECT g.max_score FROM grade_cells g JOIN base_cell b ON b.id = g.id WHERE b.name = ?"
        return db.execute(query, (cell,)).fetchone()[0]
    finally:
        db.close()


def test_a_changed_notebook_is_registered_by_nbgrader_and_kept_under_its_own_key(course, tmp_path):
    first, _, _ = _registered(course, tmp_path / "first")
    path = course / "solutions" / "attention" / "04-scaling.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "score_stds-hidden")
    old = cell["metadata"]["nbgrader"]["points"]
    cell["metadata"]["nbgrader"]["points"] = old + 5
    path.write_text(json.dumps(nb))
    second, _, restored = _registered(course, tmp_path / "second")
    assert not restored
    hidden = "score_stds-hidden"
    assert (_points(first.gradebook, hidden), _points(second.gradebook, hidden)) == (old, old + 5)
    third, _, restored = _registered(course, tmp_path / "third")
    assert restored and _points(third.gradebook, "score_stds-hidden") == old + 5
    assert len(list(registration_cache.folder(first).iterdir())) == 2


def test_a_changed_setting_or_course_module_is_another_key(tmp_path, monkeypatch):
    from traitlets.config import Config

    from autograder.nbgrader_ext import cell_metadata

    ws = Workspace(work=tmp_path / "w", course=ROOT)
    config = nbgrader_api(ws=ws).config
    digests = {"attention": "d"}
    base = registration_cache.key(config, "self-attention", digests)
    assert registration_cache.key(config, "another-course", digests) != base
    assert registration_cache.key(config, "self-attention", {"attention": "e"}) != base
    changed = copy.deepcopy(config)
    changed.merge(Config({"ClearSolutions": {"code_stub": {"python": "pass"}}}))
    assert registration_cache.key(changed, "self-attention", digests) != base
    moved = copy.deepcopy(config)  # where the work folder is does not matter
    moved.merge(Config({"CourseDirectory": {"db_url": "sqlite:////elsewhere/gradebook.db", "root": "/elsewhere"}}))
    assert registration_cache.key(moved, "self-attention", digests) == base
    # the source of a course module the configuration names (GenerateAssignment's metadata check)
    source = tmp_path / "cell_metadata.py"
    source.write_text(Path(cell_metadata.__file__).read_text())
    monkeypatch.setattr(sys.modules[cell_metadata.__name__], "__file__", str(source))
    assert registration_cache.key(config, "self-attention", digests) == base
    source.write_text(source.read_text() + "\n# changed\n")
    assert registration_cache.key(config, "self-attention", digests) != base


def test_a_gradebook_that_exists_is_never_replaced_and_a_broken_kept_one_is_replaced(course, tmp_path):
    first, _, _ = _registered(course, tmp_path / "first")
    ws = Workspace(work=tmp_path / "second", course=course)
    ws.work.mkdir()
    ws.gradebook.write_bytes(b"")  # a gradebook of its own (nbgrader fills an empty file)
    api = nbgrader_api(ws=ws)
    digests = {"attention": gradebook_state.course_digest("attention", ws)}
    assert not registration_cache.restore(api, digests, ws) and ws.gradebook.read_bytes() == b""
    ws.gradebook.unlink()
    kept = registration_cache.folder(ws) / registration_cache.key(api.config, api.coursedir.course_id, digests)
    shutil.rmtree(kept / registration_cache.RELEASE)
    assert not registration_cache.restore(api, digests, ws) and not ws.gradebook.exists()
    register_assignments(api, SUBS, {}, True, ws)  # registered by nbgrader, and kept whole again
    assert _rows(ws.gradebook) == _rows(first.gradebook)
    assert _release(ws) == _release(first)
    assert {p.name: p.read_bytes() for p in (kept / registration_cache.RELEASE / "attention").glob("*.ipynb")} \
        == _release(first)
