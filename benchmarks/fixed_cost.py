"""What grading costs whatever the size of the class: one ``make grade``'s fixed cost, formgrader's
*Autograde* of one student, and regrading one student of a graded class.

- *Fixed cost*: a one-student class (all nine notebooks) graded, then ``make grade`` again with
  nothing changed: that second run decides nothing and autogrades nothing, so its seconds are what
  every run pays (start-up, imports, intake, the gradebook, export, report).
- *Formgrader's Autograde*: in one warm process (as the formgrader server is), nbgrader's API
  autogrades one student of a graded class after they resubmitted one notebook (the pre-convert
  hook decides it in the sandbox, then nbgrader applies the verdicts).
- *Regrade one student*: ``make grade --student`` for one student of a graded class of ``n`` who
  resubmitted one notebook.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .grading import SOLUTIONS, class_folder, handed_in, make_grade, place, sample_class

FIXED_TARGET_S, FORMGRADER_TARGET_S, REGRADE_TARGET_S = 10.0, 2.0, 5.0


def _notebooks() -> list[str]:
    return sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))


def _resubmit(work: Path, student: str, notebook: str) -> None:
    """``student`` hands ``notebook`` in again, answered, with a comment added (new code to decide)."""
    answer = handed_in(notebook).replace("### BEGIN SOLUTION", "### BEGIN SOLUTION\n    # resubmitted", 1)
    place(work, student, notebook, answer)


def fixed_cost(workers: int = 2) -> dict[str, float]:
    """Seconds of the first ``make grade`` of a one-student class and of a second, nothing changed."""
    with class_folder(sample_class(1, _notebooks()), "bench-fixed-") as work:
        first = make_grade(work, workers)
        again = make_grade(work, workers)
    return {"first_s": first.wall, "fixed_s": again.wall}


def formgrader_autograde(workers: int = 2) -> dict[str, float]:
    """Seconds of nbgrader's API ``autograde`` of one student in a warm process (formgrader's
    button): with nothing resubmitted, and after one resubmitted notebook."""
    from autograder.nbgrader_ext.steps import nbgrader_api
    from autograder.workspace import Workspace

    klass = sample_class(2, _notebooks())
    with class_folder(klass, "bench-formgrader-") as work:
        make_grade(work, workers)
        old = os.environ.get("AUTOGRADER_WORKDIR")
        os.environ["AUTOGRADER_WORKDIR"] = str(work)
        try:
            api = nbgrader_api(ws=Workspace(work=work, course=SOLUTIONS.parents[1]))
            student = sorted(klass)[1]
            t0 = time.perf_counter()
            unchanged = api.autograde("attention", student)
            t1 = time.perf_counter()
            _resubmit(work, student, _notebooks()[0])
            t2 = time.perf_counter()
            resubmitted = api.autograde("attention", student)
            t3 = time.perf_counter()
        finally:
            if old is None:
                os.environ.pop("AUTOGRADER_WORKDIR", None)
            else:
                os.environ["AUTOGRADER_WORKDIR"] = old
        for r in (unchanged, resubmitted):
            assert r["success"], r.get("error")
    return {"unchanged_s": t1 - t0, "resubmitted_s": t3 - t2}


def regrade_one(n: int = 150, workers: int = 2, work: Path | None = None) -> dict[str, float]:
    """Seconds of ``make grade --student`` for one student of a graded class of ``n`` who resubmitted
    one notebook (``work``: an already graded class folder to use instead of a new one)."""
    def timed(folder: Path) -> float:
        student = sorted(p.name for p in (folder / "submitted").iterdir())[1]
        _resubmit(folder, student, _notebooks()[0])
        return make_grade(folder, workers, "--student", student).wall

    if work is not None:
        return {"students": n, "regrade_s": timed(work)}
    with class_folder(sample_class(n, _notebooks()), "bench-regrade-") as folder:
        first = make_grade(folder, workers)
        return {"students": n, "first_s": first.wall, "regrade_s": timed(folder)}


def print_fixed_costs(students: int = 150) -> None:
    """Print each figure beside its target."""
    f = fixed_cost()
    print(f"make grade, one student, nothing changed (the fixed cost of a run): {f['fixed_s']:.1f} s"
          f"  [target <= {FIXED_TARGET_S:g} s]  (its first run: {f['first_s']:.1f} s)")
    g = formgrader_autograde()
    print(f"formgrader's Autograde of one student (API, warm process): after one resubmitted notebook "
          f"{g['resubmitted_s']:.1f} s  [target <= {FORMGRADER_TARGET_S:g} s]; nothing resubmitted "
          f"{g['unchanged_s']:.1f} s")
    r = regrade_one(students)
    print(f"regrade one student of a graded class of {r['students']}: {r['regrade_s']:.1f} s"
          f"  [target <= {REGRADE_TARGET_S:g} s]  (grading the class took {r['first_s']:.0f} s)")


if __name__ == "__main__":
    import sys

    print_fixed_costs(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
