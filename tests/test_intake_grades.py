"""A class handed in as LMS zips goes through ``make intake`` and then ``make grade``: each student's
notebooks are graded as their own, and a zip naming another student's folder changes nobody's grade."""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest
from grading_support import RELEASE, ROOT, SOLUTIONS, grade, scores
from nbgrader.api import Gradebook, MissingEntry
from test_intake_zips import make_zip

NOTEBOOK = "01-embeddings"


def test_a_class_of_zips_is_taken_and_graded(tmp_path):
    downloads, work = tmp_path / "downloads", tmp_path / "work"
    answered = (SOLUTIONS / f"{NOTEBOOK}.ipynb").read_bytes()
    blank = (RELEASE / f"{NOTEBOOK}.ipynb").read_bytes()
    member = f"attention/{NOTEBOOK}.ipynb"
    make_zip(downloads / "roealice_11_1_alice.zip", [(f"alice/{member}", answered)])  # Canvas names
    make_zip(downloads / "doebob_12_1_bob.zip", [(f"bob/{member}", blank)])
    make_zip(downloads / "mallory_13_1_mallory.zip", [(f"alice/{member}", blank)])  # claims alice's folder
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    taken = subprocess.run([sys.executable, "-m", "autograder.intake.zips", str(downloads)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    assert taken.returncode == 1, taken.stdout + taken.stderr
    assert ("mallory_13_1_mallory.zip: refused: its top folder is 'alice', not 'mallory': it holds another "
            "login's work") in taken.stdout.splitlines(), taken.stdout
    run = grade(work)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    alice, bob = scores(work, "alice", NOTEBOOK), scores(work, "bob", NOTEBOOK)
    assert alice and all(score == most for score, most in alice.values()), alice
    assert bob and all(score == 0 for score, _ in bob.values()), bob
    assert sorted(p.name for p in (work / "submitted").iterdir()) == ["alice", "bob"]


def test_a_forgery_graded_before_the_login_map_is_regraded_as_the_students_own_work(tmp_path):
    """Without a map mallory's zip named alice.zip is taken and graded as alice's; once the login map
    is given, intake replaces it with alice's own zip and the next make grade grades that one."""
    monday, friday, work = tmp_path / "monday", tmp_path / "friday", tmp_path / "work"
    answered = (SOLUTIONS / f"{NOTEBOOK}.ipynb").read_bytes()
    blank = (RELEASE / f"{NOTEBOOK}.ipynb").read_bytes()
    member = f"attention/{NOTEBOOK}.ipynb"
    make_zip(monday / "mallory_13_1_alice.zip", [(f"alice/{member}", blank)])  # named for alice, first
    make_zip(friday / "mallory_13_1_alice.zip", [(f"alice/{member}", blank)])
    make_zip(friday / "roealice_11_1_alice.zip", [(f"alice/{member}", answered)])
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))

    def intake(folder, *args):
        return subprocess.run([sys.executable, "-m", "autograder.intake.zips", str(folder), *args], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)

    assert intake(monday).returncode == 0
    run = grade(work)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert all(score == 0 for score, _ in scores(work, "alice", NOTEBOOK).values())  # graded on the forgery
    table = tmp_path / "logins.csv"
    table.write_text("account,login\n11,alice\n13,mallory\n")
    taken = intake(friday, "--login-map", str(table))
    assert "roealice_11_1_alice.zip: taken: submitted/alice/ attention (replaced, 1 notebooks)" in taken.stdout, \
        taken.stdout + taken.stderr
    assert "alice: attention from canvas user 13's mallory_13_1_alice.zip, taken earlier" in taken.stdout
    with pytest.raises(MissingEntry):  # the forgery's grades left the gradebook with it
        scores(work, "alice", NOTEBOOK)
    run = grade(work)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    alice = scores(work, "alice", NOTEBOOK)
    assert alice and all(score == most for score, most in alice.values()), alice


def test_a_forgery_the_login_map_removes_leaves_the_gradebook_too(tmp_path):
    """A forgery graded as alice's, and alice never handed in: once the login map removes it, the next
    make grade has no grade of alice's for it (neither the gradebook nor grades.csv), and bob's stays."""
    downloads, work = tmp_path / "downloads", tmp_path / "work"
    blank = (RELEASE / f"{NOTEBOOK}.ipynb").read_bytes()
    answered = (SOLUTIONS / f"{NOTEBOOK}.ipynb").read_bytes()
    member = f"attention/{NOTEBOOK}.ipynb"
    make_zip(downloads / "mallory_13_1_alice.zip", [(f"alice/{member}", answered)])  # named for alice
    make_zip(downloads / "doebob_12_1_bob.zip", [(f"bob/{member}", blank)])
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))

    def intake(*args):
        return subprocess.run([sys.executable, "-m", "autograder.intake.zips", str(downloads), *args], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)

    assert intake().returncode == 0
    run = grade(work)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert all(score == most for score, most in scores(work, "alice", NOTEBOOK).values())  # the forgery's
    bob = scores(work, "bob", NOTEBOOK)
    table = tmp_path / "logins.csv"
    table.write_text("account,login\n11,alice\n12,bob\n13,mallory\n")
    taken = intake("--login-map", str(table))
    assert "alice: attention from canvas user 13's mallory_13_1_alice.zip, taken earlier" in taken.stdout, \
        taken.stdout + taken.stderr
    assert not (work / "submitted" / "alice").exists()
    run = grade(work)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        with pytest.raises(MissingEntry):
            gb.find_submission("attention", "alice")
    with open(work / "grades.csv", newline="") as fh:
        rows = [row for row in csv.DictReader(fh) if row["student_id"] == "alice"]
    assert all(not float(row["score"] or 0) for row in rows), rows
    assert scores(work, "bob", NOTEBOOK) == bob
