"""hand_in.py hands in the course's notebooks and says where work would be lost: a course notebook
that is missing, renamed or duplicated (JupyterLab's ``…-Copy1.ipynb``) is a ``FAIL`` line naming
the file that holds its cells and what to do; only the course's notebooks are packed (grading reads
no other)."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from student_support import hand_in_module

ROOT = Path(__file__).resolve().parent.parent
RELEASES = sorted((ROOT / "notebooks").glob("*/*.ipynb"))


HAND_IN = hand_in_module("student_hand_in_list")
#: what the bundle lists (scripts/build_student.py writes it with the same function)
LISTED = {p.relative_to(ROOT / "notebooks").as_posix(): sorted(HAND_IN.graded_cells(p)) for p in RELEASES}
ACTIONS = ("keep", "rename", "duplicate", "delete")


def test_every_released_notebook_has_cells_of_its_own():
    """Renamed notebooks are told apart by the ids of their cells that no other notebook has: each
    released notebook has some."""
    for name, cells in LISTED.items():
        others = {c for n, cs in LISTED.items() if n != name for c in cs}
        assert set(cells) - others, name


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(st.sampled_from(ACTIONS), min_size=len(RELEASES), max_size=len(RELEASES)),
       stray=st.booleans())
def test_each_missing_renamed_or_duplicated_notebook_is_one_line_saying_where_the_work_is(tmp_path, actions, stray):
    folder = tmp_path / f"case{abs(hash((tuple(actions), stray)))}"
    shutil.rmtree(folder, ignore_errors=True)
    expected: list[tuple[str, str]] = []  # (the file a line names, words the line must hold)
    kept = []
    for (name, _), action, src in zip(LISTED.items(), actions, RELEASES, strict=True):
        dest = folder / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if action in ("keep", "duplicate"):
            shutil.copy(src, dest)
            kept.append(dest)
        if action == "duplicate":
            shutil.copy(src, dest.with_name(dest.stem + "-Copy1.ipynb"))
            expected.append((f"{name[:-6]}-Copy1.ipynb", f"holds cells of notebooks/{name}"))
        if action == "rename":
            moved = dest.with_name("my work " + dest.name)
            shutil.copy(src, moved)
            expected.append((name, f"its cells are in notebooks/{moved.relative_to(folder).as_posix()}"))
        if action == "delete":
            expected.append((name, "missing, so nothing of it is handed in"))
    if stray:
        (folder / "attention" / "scratch.ipynb").write_text('{"cells": [], "metadata": {}}')
        expected.append(("attention/scratch.ipynb", "not a course notebook, so it is not handed in"))

    found, lines = HAND_IN.course_notebooks(folder, LISTED)
    assert found == kept
    assert all(line.startswith("FAIL notebooks/") for line in lines), lines
    named = {line.removeprefix("FAIL notebooks/").split(": ", 1)[0]: line for line in lines}
    # a renamed notebook is told on its course notebook's line, not on one of its own
    assert sorted(named) == sorted(f for f, _ in expected), lines
    for file, words in expected:
        assert words in named[file], (file, words, named[file])
    assert len(lines) == len(named)


def test_every_course_notebook_there_and_nothing_else_is_no_line(tmp_path):
    for name in LISTED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "notebooks" / name, tmp_path / name)
    (tmp_path / "attention" / ".ipynb_checkpoints").mkdir()
    shutil.copy(RELEASES[0], tmp_path / "attention" / ".ipynb_checkpoints" / "x-checkpoint.ipynb")
    found, lines = HAND_IN.course_notebooks(tmp_path, LISTED)
    assert lines == [] and len(found) == len(LISTED)
