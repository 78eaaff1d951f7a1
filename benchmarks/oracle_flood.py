"""What one student who floods the blame oracle costs a class (issue 51, item 4).

The class of ``tests/test_oracle_flood.py`` (notebook 03; ``--cpu-seconds 2``, one worker), graded by
``make grade`` three ways: without her, with her (her attention asks the course's scaled_scores for
slow integer products in a loop, through fair blame), and, for scale, with a student whose attention
loops forever instead, with the same wrong softmax and scaled_scores (so fair blame re-runs it too):
what any student's runs may already cost, their own limits. The oracle's time
counts against the run's CPU limit, so the flood costs about what the loop costs.
Usage: ``python -m benchmarks --only oracle``.
"""

from __future__ import annotations

import json

from .grading import class_folder, make_grade

LIMITS = ("--cpu-seconds", "2", "--memory-mb", "1024")
LOOP = "def attention(Q, K, V, mask=None):\n    while True:\n        pass\n"


def _grade(students: dict[str, dict[str, str]]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of ``make grade`` on these students' notebook 03."""
    from test_oracle_flood import NOTEBOOK, handed_in

    klass = {s: {NOTEBOOK: handed_in(answers)} for s, answers in students.items()}
    with class_folder(klass, "bench-oracle-") as work:
        run = make_grade(work, 1, *LIMITS)
    return run.wall, run.cpu


def oracle_flood_benchmark() -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of the class without her, with the flooder, and with a looping student."""
    from test_oracle_flood import FLOOD, NO_MAX

    others = {"ada": {}, "ben": NO_MAX}
    return {"without": _grade(others), "flood": _grade({**others, "flo": FLOOD}),
            "loop": _grade({**others, "loo": {**FLOOD, "attention": LOOP}})}


def print_oracle_flood() -> None:
    r = oracle_flood_benchmark()
    (w0, c0), (w1, c1), (w2, c2) = r["without"], r["flood"], r["loop"]
    print(f"a class of 2 (notebook 03, --cpu-seconds 2, 1 worker): {w0:.1f} s ({c0:.1f} s CPU)")
    print(f"  the same class and a student flooding the oracle through fair blame: {w1:.1f} s ({c1:.1f} s CPU), "
          f"{w1 / w0:.2f}x  [target: about the class with a student whose attention loops forever: "
          f"{w2:.1f} s ({c2:.1f} s CPU), {w2 / w0:.2f}x]")
    print(json.dumps({"oracle_flood": r}))
