"""Which notebooks of a submission's folder grading does not read, and why, each in one line
(autograder/intake/ignored_notebooks.py), on real folders in a tmp folder: JupyterLab's duplicates,
renamed and scratch notebooks, a course notebook's name with another case or suffix, entries that
are not notebooks, names with control characters, quotes or bytes that are not UTF-8, a folder that
cannot be listed. Only names are read. The run's summary that shows these lines is
tests/test_ignored_notebooks.py (pipeline lane); docs/mutation.md holds this file's score.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from autograder.intake.ignored_notebooks import ignored_notebooks

COURSE = ["08-cost", "09-heads"]
NOT_OURS = "not a notebook of the course, so it is not graded"


def _renamed(nb: str) -> str:
    return f"not a notebook of the course (renamed from {nb}.ipynb?): only {nb}.ipynb is graded"


def _copy(nb: str) -> str:
    return f"a copy of {nb}.ipynb (JupyterLab's Duplicate) is not graded: only {nb}.ipynb is"


def test_each_notebook_grading_does_not_read_is_named_with_the_course_notebook_it_stands_for(tmp_path):
    for name in ("08-cost.ipynb", "09-heads.ipynb", "08-cost-Copy1.ipynb", "09-heads-Copy12.ipynb",
                 "09-Heads.ipynb", "08-cost.IPYNB", "cost.ipynb", "scratch.ipynb", "scratch-Copy1.ipynb",
                 "08-Cost-Copy1.ipynb", "notes.txt", "ipynb", ".ipynb", "08-cost.ipynb.bak", "a.b.ipynb"):
        (tmp_path / name).write_text("{}")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / "folder.ipynb").mkdir()
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "nowhere")
    assert ignored_notebooks(tmp_path, COURSE) == [
        f".ipynb: {NOT_OURS}",
        f"08-Cost-Copy1.ipynb: {_renamed('08-cost')}",
        f"08-cost-Copy1.ipynb: {_copy('08-cost')}",
        f"08-cost.IPYNB: {_renamed('08-cost')}",
        f"09-Heads.ipynb: {_renamed('09-heads')}",
        f"09-heads-Copy12.ipynb: {_copy('09-heads')}",
        f"a.b.ipynb: {NOT_OURS}",
        f"cost.ipynb: {_renamed('08-cost')}",
        f"folder.ipynb: {NOT_OURS}",
        f"link.ipynb: {NOT_OURS}",
        f"scratch-Copy1.ipynb: {NOT_OURS}",
        f"scratch.ipynb: {NOT_OURS}"]


def test_only_the_course_notebooks_themselves_are_passed_over(tmp_path):
    for name in COURSE:
        (tmp_path / f"{name}.ipynb").write_text("{}")
    (tmp_path / "README.md").write_text("")
    assert ignored_notebooks(tmp_path, COURSE) == []
    assert ignored_notebooks(tmp_path, []) == [f"08-cost.ipynb: {NOT_OURS}", f"09-heads.ipynb: {NOT_OURS}"]


def test_a_name_is_shown_as_ascii_shows_it_and_a_folder_that_cannot_be_listed_names_nothing(tmp_path):
    for name in ("x\x1b[31m\u202e.ipynb", "it's.ipynb", 'say "hi".ipynb', os.fsdecode(b"caf\xe9.ipynb"),
                 "back\\slash.ipynb", "caf\u00e9.ipynb"):
        (tmp_path / name).write_text("{}")
    assert ignored_notebooks(tmp_path, COURSE) == [
        f'back\\\\slash.ipynb: {NOT_OURS}',
        f"caf\\xe9.ipynb: {NOT_OURS}",
        f"caf\\udce9.ipynb: {NOT_OURS}",
        f"it's.ipynb: {NOT_OURS}",
        f'say "hi".ipynb: {NOT_OURS}',
        f"x\\x1b[31m\\u202e.ipynb: {NOT_OURS}"]
    assert ignored_notebooks(tmp_path / "absent", COURSE) == []
    (tmp_path / "file").write_text("")
    assert ignored_notebooks(tmp_path / "file", COURSE) == []


NAMES = st.one_of(
    st.sampled_from(["08-cost", "09-heads", "08-cost-Copy1", "08-Cost", "scratch", "", "a.b", "x-Copy3"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), max_size=10),
    st.binary(max_size=8).map(os.fsdecode))
EXTENSIONS = st.sampled_from([".ipynb", ".IPYNB", ".Ipynb", ".txt", "", ".ipynb.bak", ".ipynb_checkpoints"])


@given(st.sets(st.tuples(NAMES, EXTENSIONS).map("".join).filter(
    lambda n: n not in ("", ".", "..") and "/" not in n and "\0" not in n and len(os.fsencode(n)) <= 255)))
def test_every_other_notebook_is_named_once_in_name_order_in_printable_ascii(names):
    """Any names: one line for each whose extension is ``ipynb`` in any case, except the course's own
    notebooks spelled exactly; in name order; the name as :func:`ascii` shows it, then the reason."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            Path(tmp, name).write_bytes(b"{}")
        lines = ignored_notebooks(Path(tmp), COURSE)
    listed = sorted(n for n in names if n.lower().endswith(".ipynb") and n not in {f"{c}.ipynb" for c in COURSE})
    assert len(lines) == len(listed), (lines, listed)
    for line, n in zip(lines, listed, strict=True):
        shown = ascii(n)[1:-1]
        assert line.startswith(f"{shown}: "), (line, n)
        why = line[len(shown) + 2:]
        assert why in {NOT_OURS} | {f(c) for c in COURSE for f in (_renamed, _copy)}, line
        assert line.isascii() and line.isprintable()
