"""Incremental grading: a 30-student class graded once, then again after one student resubmits
one notebook (only that notebook is decided again, only that student autograded)."""

from __future__ import annotations

from .grading import SOLUTIONS, class_folder, handed_in, make_grade, place, sample_class


def incremental_benchmark(n: int = 30, workers: int = 2, notebooks: list[str] | None = None) -> dict:
    """Seconds of the first ``make grade`` of ``n`` students, of a second run after one changed
    notebook, and of a third run with nothing changed."""
    notebooks = notebooks or sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))
    klass = sample_class(n, notebooks)
    with class_folder(klass, "bench-incremental-") as work:
        first = make_grade(work, workers)
        changed = sorted(klass)[1]  # hands in notebook 1 again, answered and with a comment added
        answer = handed_in(notebooks[0]).replace("### BEGIN SOLUTION", "### BEGIN SOLUTION\n    # resubmitted", 1)
        place(work, changed, notebooks[0], answer)
        second, third = make_grade(work, workers), make_grade(work, workers)
        return {"students": n, "notebooks": n * len(notebooks), "first": first.wall, "second": second.wall,
                "third": third.wall, "second_decided": second.timings["notebooks"],
                "third_decided": third.timings["notebooks"]}
