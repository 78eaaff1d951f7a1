"""Grading cost per notebook as the class grows, split by step, and the sandbox's per-run cost.

A synthetic class of ``n`` students hands in all nine notebooks (a mix of full, blank and
mistaken submissions, :func:`benchmarks.grading.sample_class`); ``make grade`` runs on it with 2
workers, and the seconds of each step it times (``.grading/timings.json``: staging, verdicts,
nbgrader autograde, feedback, export, report) and of the whole run are divided by the number of
notebooks. The 150-student class takes a few minutes on 2 cores (the time is printed).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time

from .grading import SOLUTIONS, class_folder, make_grade, sample_class

STEPS = ("staging", "verdicts", "autograde", "feedback", "export", "report")


def per_notebook(n: int, workers: int = 2) -> dict[str, float]:
    """Seconds per notebook of each step of ``make grade`` for ``n`` students x all notebooks
    (``total``: the whole run, start-up included; ``cpu``: the CPU seconds of the run and every
    process it started, which other users of a shared machine do not inflate), and the seconds
    of the whole run (``wall``)."""
    notebooks = sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))
    with class_folder(sample_class(n, notebooks), "bench-scale-") as work:
        run = make_grade(work, workers)
    count = run.timings["notebooks"]
    out = {step: run.timings["steps"].get(step, 0.0) / count for step in STEPS}
    out.update(total=run.wall / count, cpu=run.cpu / count, notebooks=count, wall=run.wall)
    return out


def sandbox_overhead(repeat: int = 15) -> dict[str, float]:
    """Median seconds of one sandbox run of a trivial function (what every graded function pays
    on top of its own work): started afresh, and forked from a pre-warmed sandbox
    (:mod:`autograder.sandbox.warm`, what grading uses); and the floor of a fresh start, a bare sandboxed
    Python that imports NumPy."""
    import numpy as np

    from autograder import sandbox
    from autograder.sandbox import warm
    from selfattn.checks.calling import Case

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
    os.chmod(workdir, 0o755)  # started as the sandbox's user, as every run is (sandbox.run_as)
    command, env = sandbox.sandbox_command(workdir, 3)
    bare = [*command[:-1], "-c", "import os, sys; sys.path.append(os.environ['SELFATTN_SITE']); import numpy"]
    floor = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(bare, check=True, env=env, cwd=workdir, preexec_fn=sandbox.preexec_limits(None))
        floor.append(time.perf_counter() - t0)
    shutil.rmtree(workdir, ignore_errors=True)
    return {"fresh_s": statistics.median(fresh), "warm_s": statistics.median(forked), "warm_start_s": start,
            "floor_s": statistics.median(floor), "mode": sandbox.mode()}


def print_scale(sizes: tuple[int, ...] = (30, 150)) -> None:
    s = sandbox_overhead()
    print(f"sandbox ({s['mode']}), one run of a trivial function: {s['fresh_s'] * 1e3:.0f} ms in a newly started "
          f"sandbox (SELFATTN_WARM_SANDBOX=0), {s['warm_s'] * 1e3:.1f} ms forked from the worker's pre-warmed "
          f"sandbox and wiped after (started once per worker: {s['warm_start_s'] * 1e3:.0f} ms); floor, a bare "
          f"sandboxed python + numpy: {s['floor_s'] * 1e3:.0f} ms; warm run / floor {s['warm_s'] / s['floor_s']:.2f}"
          f"  [target: a run well under the floor]")
    results = {}
    row = lambda label, cells, last: f"  {label:<38}{''.join(f'{c:>11}' for c in cells)}{last:>11}"  # noqa: E731
    print(row("seconds per notebook, 2 workers:", [*STEPS, "whole run"], "CPU"))
    for n in sizes:
        r = results[n] = per_notebook(n)
        print(row(f"{n} students ({r['notebooks']:.0f} notebooks):", [f"{r[st]:.4f}" for st in STEPS]
                  + [f"{r['total']:.3f}"], f"{r['cpu']:.3f}") + f"  [target: whole run <= 0.1]  "
              f"(the run took {r['wall']:.0f} s; per notebook {r['total'] / s['warm_s']:.0f}x the floor, "
              f"a forked warm sandbox run)")
    if len(sizes) >= 2:
        small, big = results[sizes[0]], results[sizes[-1]]
        ratio = lambda k: f"{big[k] / small[k]:.2f}" if small[k] else "-"  # noqa: E731
        print(row(f"ratio {sizes[-1]} / {sizes[0]} students:", [ratio(st) for st in (*STEPS, "total")], ratio("cpu"))
              + "  [target <= 1.2]")
