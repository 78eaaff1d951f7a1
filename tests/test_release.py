"""The student notebooks are nbgrader's release of the instructor's sources, and both are sound."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
import selfattn.checks.exercises  # noqa: F401 - registers the public checks
from autograder.course.spec import load_spec, notebooks_of
from selfattn.checks.record import REGISTRY

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from sync_notebooks import site_url, sync

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "solutions").glob("*/*.ipynb"))
RELEASES = sorted((ROOT / "notebooks").glob("*/*.ipynb"))


def test_there_are_notebooks_for_every_section():
    assert len(SOURCES) >= 9 and [p.name for p in SOURCES] == [p.name for p in RELEASES]


def test_release_matches_a_fresh_generate_assignment(tmp_path):
    """`make release` run now would reproduce notebooks/ byte for byte."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for assignment in sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir()):
        result = subprocess.run(
            [str(Path(sys.executable).parent / "nbgrader"), "generate_assignment", assignment, "--force",
             f"--CourseDirectory.release_directory={tmp_path}", f"--CourseDirectory.db_url=sqlite:///{tmp_path}/gb.db"],
            cwd=ROOT / "autograder", env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-2000:]
        fresh, committed = tmp_path / assignment, ROOT / "notebooks" / assignment
        cmp = filecmp.dircmp(fresh, committed)
        assert not (cmp.left_only or cmp.right_only), (cmp.left_only, cmp.right_only)
        _, mismatch, errors = filecmp.cmpfiles(fresh, committed, [p.name for p in fresh.glob("*.ipynb")], shallow=False)
        assert mismatch == [] and errors == [], f"notebooks/ drifted from solutions/: {mismatch}; run `make release`"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_sources_are_clean_and_declarative(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "strip outputs from sources"
    spec = load_spec(path.parent.name, path.stem, ROOT)
    assert spec.functions, "no graded function"
    for test in spec.tests:
        assert test.checks and all(cid in REGISTRY for _, cid in test.checks), test
    for fn in spec.functions:
        ids = [cid for t in spec.tests_of(fn) for _, cid in t.checks]
        assert ids and all(REGISTRY[cid].function == fn for cid in ids), fn
    answers = [c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    assert not any("selfattn" in a for a in answers), "answers must not rely on the course package"


@pytest.mark.parametrize("path", RELEASES, ids=lambda p: p.stem)
def test_release_hides_solutions_and_hidden_tests(path):
    text = path.read_text()
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text and "/hidden/" not in text
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0].source
    assert f"]({site_url()}book/" in first, "each notebook links to its chapter on the published site"
    assert any("demos." in c.source for c in nb.cells if c.cell_type == "code"), "each notebook has its widget"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_derived_cells_are_in_step(path, tmp_path):
    """Chapter link, hidden-check descriptions and summary cell are what scripts/sync_notebooks.py
    derives from _config.yml and the checks (run it, then `make release`, when this fails)."""
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    assert not sync(copy), f"{path.name} is out of step: run scripts/sync_notebooks.py, then make release"


def test_every_graded_function_of_the_issue_exists():
    functions = {fn for a in ("attention",) for nb in notebooks_of(a, ROOT)
                 for fn in load_spec(a, nb, ROOT).functions}
    assert {"softmax", "scaled_scores", "attention", "softmax_jacobian", "permutation_matrix", "causal_mask",
            "padding_mask", "attention_flops", "crossover_length", "lookup_table_weights"} <= functions
