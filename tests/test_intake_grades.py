"""A class handed in as LMS zips goes through ``make intake`` and then ``make grade``: each student's
notebooks are graded as their own, and a zip naming another student's folder changes nobody's grade."""

from __future__ import annotations

import os
import subprocess
import sys

from grading_support import RELEASE, ROOT, SOLUTIONS, grade, scores
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
