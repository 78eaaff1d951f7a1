"""Grading cost per notebook as the class grows, split by step, and the sandbox's per-run cost.

A synthetic class of ``n`` students hands in all nine notebooks (a mix of full, blank and
mistaken submissions, :func:`benchmarks.grading.sample_class`); ``make grade`` runs on it with 2
workers and the steps it times (``.grading/timings.json``) are divided by the number of notebooks.
Staging is timed on its own afterwards (it also runs inside the verdict step).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .grading import ROOT, SOLUTIONS, place, sample_class

STEPS = ("staging", "verdicts", "autograde", "feedback", "export", "report")

_STAGE_ALL = """
import json, sys, time
from autograder.staging import stage
jobs = json.load(sys.stdin)
t0 = time.perf_counter()
for s, a, nb in jobs:
    stage(s, a, nb)
print(time.perf_counter() - t0)
"""


def per_notebook(n: int, workers: int = 2) -> dict[str, float]:
    """Seconds per notebook of each step of ``make grade`` for ``n`` students x all notebooks."""
    notebooks = sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))
    klass = sample_class(n, notebooks)
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        jobs = []
        for student, subs in klass.items():
            for nb, text in subs.items():
                place(work, student, nb, text)
                jobs.append((student, "attention", nb))
        env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "autograder.grade", "--workers", str(workers)], cwd=ROOT, env=env,
                       check=True, capture_output=True)
        wall = time.perf_counter() - t0
        timings = json.loads((work / ".grading" / "timings.json").read_text())
        staged = subprocess.run([sys.executable, "-c", _STAGE_ALL], cwd=ROOT, env=env, input=json.dumps(jobs),
                                check=True, capture_output=True, text=True)
        count = timings["notebooks"]
        out = {step: secs / count for step, secs in timings["steps"].items()}
        out["staging"] = float(staged.stdout.strip()) / count
        out["total"] = wall / count
        out["notebooks"] = count
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def sandbox_overhead(repeat: int = 15) -> dict[str, float]:
    """Median seconds of one sandbox run of a trivial function (what every graded function pays
    on top of its own work): started afresh, and forked from a pre-warmed sandbox
    (:mod:`autograder.warm`, what grading uses); and the floor of a fresh start, a bare sandboxed
    Python that imports NumPy."""
    import numpy as np

    from autograder import sandbox, warm
    from selfattn.checking import Case

    cell = [("f", "def f(x):\n    return x\n")]

    def timed(session) -> float:
        t0 = time.perf_counter()
        result = sandbox.run(cell, "f", [Case((np.zeros(3),))], session=session)
        assert result.outcomes is not None, result.failure
        return time.perf_counter() - t0

    fresh = [timed(None) for _ in range(repeat)]
    with warm.Session() as session:
        start = timed(session)
        forked = [timed(session) for _ in range(repeat)]
    # the floor: the sandbox's own command, starting Python and importing NumPy, and nothing else
    workdir = tempfile.mkdtemp(prefix="bench-floor-")
    command, env = sandbox._command(workdir, 3)
    bare = [*command[:-1], "-c", "import os, sys; sys.path.append(os.environ['SELFATTN_SITE']); import numpy"]
    floor = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(bare, check=True, env=env, cwd=workdir)
        floor.append(time.perf_counter() - t0)
    shutil.rmtree(workdir, ignore_errors=True)
    return {"fresh_s": statistics.median(fresh), "warm_s": statistics.median(forked), "warm_start_s": start,
            "floor_s": statistics.median(floor), "mode": sandbox.mode()}


def print_scale(sizes: tuple[int, ...] = (30, 300)) -> None:
    s = sandbox_overhead()
    print(f"sandbox ({s['mode']}) per run of a trivial function: {s['warm_s'] * 1e3:.0f} ms forked from the "
          f"pre-warmed sandbox (started once per notebook: {s['warm_start_s'] * 1e3:.0f} ms), "
          f"{s['fresh_s'] * 1e3:.0f} ms started afresh (SELFATTN_WARM_SANDBOX=0); a bare sandboxed python + numpy "
          f"{s['floor_s'] * 1e3:.0f} ms  [target: per run well under that floor; per notebook <= 0.1 s in all]")
    results = {}
    for n in sizes:
        r = per_notebook(n)
        results[n] = r
        split = ", ".join(f"{step} {r[step]:.3f}" for step in STEPS)
        print(f"  {n:4d} students x 9 notebooks ({r['notebooks']:.0f}): {r['total']:.3f} s per notebook "
              f"[target <= 0.1 s at 2 workers]; split per notebook: {split}")
    if len(sizes) >= 2:
        small, big = results[sizes[0]], results[sizes[-1]]
        print(f"  per-notebook cost {sizes[-1]} / {sizes[0]} students: {big['total'] / small['total']:.2f}  "
              f"[target <= 1.2]")
