"""Honest work scores what plain nbgrader gives it, except where nbgrader is wrong.

Plain ``nbgrader autograde`` (student code and tests in one kernel) and ``make grade`` grade the
same honest submissions; their test-cell scores must agree. That includes correct code that
writes to stderr or warns: plain nbgrader zeroes a test cell with stderr output, but the course's
``check()`` runs the answer as grading does, with output and warnings discarded, so neither path
costs it points.

One place nbgrader is wrong: carol's ``softmax`` fails, her ``attention`` is right. Plain nbgrader
runs the notebook's ``check()``, which runs none of the course's functions (the student package
withholds them) and so tells ``attention`` to fix ``softmax`` first, scoring it 0; ``make grade``
judges ``attention`` with the course's ``softmax`` (fair blame) and keeps its points.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from grading_support import RELEASE, SOLUTIONS, TESTS, PlainCourse, grade, place, read_entry, submission_text
from nbgrader.api import Gradebook

NOTEBOOKS = ["03-softmax-attention", "07-masking"]
HONEST = {
    "alice": None,  # the solutions
    "bob": "release",
    "carol": TESTS / "catalogue" / "wrong" / "softmax_axis0.py",
    "erin": TESTS / "catalogue" / "wrong" / "padding_off_by_one.py",
    "dave": TESTS / "catalogue" / "correct" / "attention_noisy.py",  # correct, but prints to stderr and warns
}


def _submission(student: str, notebook: str) -> str:
    spec = HONEST[student]
    if spec is None:
        return (SOLUTIONS / f"{notebook}.ipynb").read_text()
    if spec == "release":
        return (RELEASE / f"{notebook}.ipynb").read_text()
    entry = read_entry(spec)
    return submission_text(entry) if entry.notebook == notebook else (SOLUTIONS / f"{notebook}.ipynb").read_text()


def _cell_scores(db: Path, course: str) -> dict[tuple[str, str, str], float]:
    out = {}
    with Gradebook(f"sqlite:///{db}", course) as gb:
        for student in HONEST:
            for nb in NOTEBOOKS:
                for g in gb.find_submission_notebook(nb, "attention", student).grades:
                    if g.cell_type == "code":
                        out[(student, nb, g.name)] = g.score
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    plain = PlainCourse(tmp_path_factory.mktemp("plain"), NOTEBOOKS)
    ours = tmp_path_factory.mktemp("ours")
    for student in HONEST:
        for nb in NOTEBOOKS:
            text = _submission(student, nb)
            plain.submit(student, nb, text)
            place(ours, student, nb, text)
    r = plain.autograde()
    assert r.returncode == 0, r.stderr[-3000:]
    r = grade(ours, "--workers", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    return _cell_scores(plain.root / "gradebook.db", "plain"), _cell_scores(ours / "gradebook.db", "self-attention")


#: (student, notebook, test cell) where plain nbgrader scores 0 and make grade, by fair blame, in full: none,
#: since the notebook's own check() judges a right function with the course's dependency too (carol's right
#: attention beside her failing softmax scores in full under plain nbgrader as under make grade)
FAIR_BLAME_ONLY: set[tuple[str, str, str]] = set()


def test_honest_submissions_score_the_same(both):
    plain, ours = both
    assert set(plain) == set(ours)
    differ = {k: (plain[k], ours[k]) for k in plain if plain[k] != ours[k]}
    assert set(differ) == FAIR_BLAME_ONLY, differ
    assert all(theirs == 0 and ours[k] == ours[("alice", *k[1:])] > 0 for k, (theirs, _) in differ.items()), differ
    assert sum(ours[k] for k in ours if k[0] == "alice") > 0
    assert any(ours[k] < plain.get(("alice", *k[1:]), 0) for k in ours if k[0] == "carol")


def test_correct_code_writing_to_stderr_keeps_its_points(both):
    plain, ours = both
    key = ("dave", "03-softmax-attention", "attention-public")
    full = ours[("alice", "03-softmax-attention", "attention-public")]
    assert full > 0
    assert ours[key] == full, "make grade keeps the points of correct code that writes to stderr"
    assert plain[key] == full, "the notebook's check() keeps stderr out of the test cell's output"
