"""Incremental grading: a 30-student class graded once, then again after one student resubmits
one notebook (only that notebook is decided again, only that student autograded)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .grading import ROOT, sample_class

sys.path.insert(0, str(ROOT / "tests"))

from grading_support import SOLUTIONS, place


def _grade(work: Path, workers: int) -> tuple[float, dict]:
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autograder.grade", "--workers", str(workers)], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    seconds = time.perf_counter() - t0
    return seconds, json.loads((work / ".grading" / "timings.json").read_text())


def incremental_benchmark(n: int = 30, workers: int = 2, notebooks: list[str] | None = None) -> dict:
    """Seconds of the first ``make grade`` of ``n`` students, of a second run after one changed
    notebook, and of a third run with nothing changed."""
    notebooks = notebooks or sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))
    klass = sample_class(n, notebooks)
    work = Path(tempfile.mkdtemp(prefix="bench-incremental-"))
    try:
        for student, subs in klass.items():
            for nb, text in subs.items():
                place(work, student, nb, text)
        first, _ = _grade(work, workers)
        changed = sorted(klass)[1]
        place(work, changed, notebooks[0], (SOLUTIONS / f"{notebooks[0]}.ipynb").read_text().replace(
            "### BEGIN SOLUTION", "### BEGIN SOLUTION\n    # resubmitted", 1))
        second, t2 = _grade(work, workers)
        third, t3 = _grade(work, workers)
        return {"students": n, "notebooks": n * len(notebooks), "first": first, "second": second, "third": third,
                "second_decided": t2["notebooks"], "third_decided": t3["notebooks"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)
