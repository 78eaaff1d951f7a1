"""Which cells hand_in.py leaves out when it validates: exactly the released notebooks' cells that only
draw (each chapter's widget and each ``compare(...)`` cell, which decide nothing), never a graded or
answer cell, and nothing that does more than draw."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from student_support import hand_in_module

ROOT = Path(__file__).resolve().parent.parent
RELEASES = sorted((ROOT / "notebooks").glob("*/*.ipynb"))


HAND_IN = hand_in_module("student_hand_in_drawing")


def _is_drawing(cell) -> bool:
    """What the released notebooks' drawing cells are, read from their ids and text, not from hand_in.py."""
    gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
    return cell.cell_type == "code" and (gid.startswith("compare-") or cell.source.strip().startswith("demos."))


@pytest.mark.parametrize("path", RELEASES, ids=lambda p: p.stem)
def test_every_widget_and_compare_cell_of_a_released_notebook_is_left_out_and_nothing_else(path):
    nb = nbformat.read(path, as_version=4)
    skipped = [i for i, cell in enumerate(nb.cells) if HAND_IN.draws_only(cell)]
    drawing = [i for i, cell in enumerate(nb.cells) if _is_drawing(cell)]
    assert skipped == drawing
    assert any(nb.cells[i].metadata["nbgrader"]["grade_id"].startswith("compare-") for i in skipped), \
        "the notebook's compare() cell is left out"


def _cell(source: str, **nbgrader) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = nbgrader
    return cell


@pytest.mark.parametrize("source", [
    "from selfattn.compare import compare\n\ncompare(attention)\nx = 1",  # more than the call
    "from selfattn.compare import compare\nimport os\ncompare(attention)",  # another import
    "from selfattn.compare import compare as c\nc(attention)",  # another name
    "from os import system as compare\ncompare('true')",  # another module
    "from selfattn.compare import compare, EXAMPLES\ncompare(attention)",
    "from selfattn.compare import compare",  # no call
    "compare(attention); softmax = None",
    "print(demos.temperature())",
])
def test_a_cell_that_does_more_than_draw_is_run(source):
    assert not HAND_IN.draws_only(_cell(source))


def test_a_graded_or_answer_cell_is_run_whatever_it_holds():
    source = "from selfattn.compare import compare\n\ncompare(attention)"
    assert HAND_IN.draws_only(_cell(source))
    assert not HAND_IN.draws_only(_cell(source, grade=True, grade_id="x", points=1))
    assert not HAND_IN.draws_only(_cell(source, solution=True, grade_id="x"))
