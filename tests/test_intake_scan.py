"""Which ``submitted/<student>/<assignment>/`` folders a run grades and which it refuses
(autograder/intake/scan.py), on real folders in a tmp folder, without grading anything: a student or
assignment folder that is a symbolic link, a file, a name that is not a plain id (control
characters, quotes, bytes that are not UTF-8, too long), an assignment the course does not have; an
empty, missing or file ``submitted/``; the order. Each refused folder is named in one line, shown
as :func:`ascii` shows it. The whole run on such folders is tests/test_grading.py (pipeline lane);
docs/mutation.md holds this file's score.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from autograder.course.ids import id_problem
from autograder.intake.scan import Intake, scan, shown
from autograder.workspace import Workspace

ASSIGNMENTS = ("attention", "cost")
NOT_AN_ID = id_problem("a b")
LINK, NOT_DIR, UNKNOWN = "it is a symbolic link", "it is not a directory", "there is no assignment of that name"


def _ws(root: Path) -> Workspace:
    """A workspace whose course has the assignments :data:`ASSIGNMENTS` (and a file that is not one)."""
    for name in ASSIGNMENTS:
        (root / "course" / "solutions" / name).mkdir(parents=True)
    (root / "course" / "solutions" / "README.md").write_text("not an assignment")
    (root / "work").mkdir()
    return Workspace(root / "work", root / "course")


def _make(path: Path, kind: str, ws: Workspace) -> None:
    """Make ``path`` an entry of ``kind``: a real folder, a file, or a link to a real folder or to nothing."""
    if kind == "dir":
        path.mkdir()
    elif kind == "file":
        path.write_bytes(b"{}")
    elif kind == "link":
        path.symlink_to(ws.solutions / ASSIGNMENTS[0], target_is_directory=True)
    else:
        path.symlink_to(ws.work / "nowhere")


def _refused(rel: str, why: str) -> str:
    return f"{rel!a} is not graded: {why}"


def test_real_folders_of_plain_ids_are_graded_in_name_order(tmp_path):
    ws = _ws(tmp_path)
    for student in ("zoe", "Ada", "bob", "ada.l-1_x"):
        for assignment in ("cost", "attention"):
            (ws.submitted / student / assignment).mkdir(parents=True)
    (ws.submitted / "bob" / "attention" / "08-cost.ipynb").write_text("{}")
    (ws.submitted / "empty").mkdir()
    assert scan(ws=ws) == Intake(submissions=[
        ("Ada", "attention"), ("Ada", "cost"), ("ada.l-1_x", "attention"), ("ada.l-1_x", "cost"),
        ("bob", "attention"), ("bob", "cost"), ("zoe", "attention"), ("zoe", "cost")], refused=[])


def test_links_files_odd_names_and_unknown_assignments_are_each_refused_in_one_line(tmp_path):
    ws = _ws(tmp_path)
    ws.submitted.mkdir()
    (ws.submitted / "ada").mkdir()
    (ws.submitted / "ada" / "attention").mkdir()
    (ws.submitted / "ada" / "cost").symlink_to(ws.solutions / "cost", target_is_directory=True)
    (ws.submitted / "ada" / "README.md").mkdir()          # a file of solutions/, not an assignment
    (ws.submitted / "ada" / "extra").mkdir()
    (ws.submitted / "ada" / "notes.txt").write_text("x")  # unknown first: not an assignment at all
    (ws.submitted / "bob").symlink_to(ws.submitted / "ada", target_is_directory=True)
    (ws.submitted / "cy").write_text("a file where a folder belongs")
    (ws.submitted / "dan").mkdir()
    (ws.submitted / "dan" / "attention").write_text("a file where a folder belongs")
    (ws.submitted / "dan" / "cost").symlink_to(ws.work / "nowhere")
    (ws.submitted / "eve\x1b[31m").mkdir()
    (ws.submitted / "eve\x1b[31m" / "attention").mkdir()
    (ws.submitted / "o'neil").mkdir()
    (ws.submitted / 'say"hi').mkdir()
    (ws.submitted / os.fsdecode(b"caf\xe9")).mkdir()
    (ws.submitted / ("x" * 65)).mkdir()
    (ws.submitted / ("x" * 64)).mkdir()
    (ws.submitted / ("x" * 64) / "cost").mkdir()
    (ws.submitted / "-dash").mkdir()
    (ws.submitted / "fake\u202eevil").symlink_to(ws.submitted / "ada", target_is_directory=True)
    got = scan(ws=ws)
    assert got.submissions == [("ada", "attention"), ("x" * 64, "cost")]
    assert got.refused == [
        "'submitted/-dash' is not graded: " + NOT_AN_ID,
        "'submitted/ada/README.md' is not graded: there is no assignment of that name",
        "'submitted/ada/cost' is not graded: it is a symbolic link",
        "'submitted/ada/extra' is not graded: there is no assignment of that name",
        "'submitted/ada/notes.txt' is not graded: there is no assignment of that name",
        "'submitted/bob' is not graded: it is a symbolic link",
        "'submitted/caf\\udce9' is not graded: " + NOT_AN_ID,
        "'submitted/cy' is not graded: it is not a directory",
        "'submitted/dan/attention' is not graded: it is not a directory",
        "'submitted/dan/cost' is not graded: it is a symbolic link",
        "'submitted/eve\\x1b[31m' is not graded: " + NOT_AN_ID,
        "'submitted/fake\\u202eevil' is not graded: it is a symbolic link",
        '"submitted/o\'neil" is not graded: ' + NOT_AN_ID,
        "'submitted/say\"hi' is not graded: " + NOT_AN_ID,
        f"'submitted/{'x' * 65}' is not graded: " + NOT_AN_ID]
    assert all(line.isascii() and line.isprintable() for line in got.refused)


def test_a_missing_empty_or_file_submitted_folder_grades_and_refuses_nothing(tmp_path):
    ws = _ws(tmp_path)
    assert scan(ws=ws) == Intake()
    ws.submitted.mkdir()
    assert scan(ws=ws) == Intake()
    ws.submitted.rmdir()
    ws.submitted.write_text("a file")
    assert scan(ws=ws) == Intake()


def test_a_folder_given_is_scanned_instead_of_the_workspaces(tmp_path):
    ws = _ws(tmp_path)
    (ws.submitted / "ada" / "cost").mkdir(parents=True)
    other = ws.work / "elsewhere"
    (other / "bob" / "attention").mkdir(parents=True)
    (other / "c d").mkdir()
    assert scan(other, ws=ws) == Intake(submissions=[("bob", "attention")],
                                        refused=["'elsewhere/c d' is not graded: " + NOT_AN_ID])
    assert scan(None, ws=ws) == Intake(submissions=[("ada", "cost")])
    assert shown(ws.work / "a\x00b\ttab'", ws) == ascii("a\x00b\ttab'")


#: names a student or assignment folder may have: plain ids, and names that are not (bytes, as the
#: file system holds them; never ``/`` or NUL)
NAMES = st.one_of(
    st.sampled_from([b"ada", b"Bob", b"bob", b"c.d_e-1", b"x" * 64, b"attention", b"cost", b"README.md"]),
    st.sampled_from([b"x" * 65, b"-a", b".hidden", b"a b", b"caf\xc3\xa9", b"caf\xe9", b"o'neil", b'a"b',
                     b"e\x1b[2J", b"tab\there", b"new\nline", b"\x7f", b"r\xe2\x80\xaetl", b"a\\b"]),
    st.binary(min_size=1, max_size=12).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")))
KINDS = st.sampled_from(["dir", "file", "link", "dangling"])


@given(st.dictionaries(NAMES, st.tuples(KINDS, st.dictionaries(NAMES, KINDS, max_size=4)), max_size=6))
def test_every_entry_is_graded_or_refused_once_in_name_order(tree):
    """Any ``submitted/`` folder: a real folder of a plain id is looked into, and each of its entries
    that is a real folder named for an assignment of the course is graded; every other entry, at
    either level, is refused in one printable line naming it and the first reason that applies."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = _ws(Path(tmp))
        ws.submitted.mkdir()
        want = Intake()
        for raw in sorted(tree, key=os.fsdecode):
            kind, entries = tree[raw]
            student = os.fsdecode(raw)
            _make(ws.submitted / student, kind, ws)
            why = {"dir": None, "file": NOT_DIR}.get(kind, LINK) or id_problem(student)
            if why:
                want.refused.append(_refused(f"submitted/{student}", why))
                continue
            for raw_a in sorted(entries, key=os.fsdecode):
                assignment = os.fsdecode(raw_a)
                _make(ws.submitted / student / assignment, entries[raw_a], ws)
                why = (UNKNOWN if assignment not in ASSIGNMENTS
                       else {"dir": None, "file": NOT_DIR}.get(entries[raw_a], LINK))
                if why:
                    want.refused.append(_refused(f"submitted/{student}/{assignment}", why))
                else:
                    want.submissions.append((student, assignment))
        got = scan(ws=ws)
        assert got == want
        assert all(line.isascii() and line.isprintable() for line in got.refused)
