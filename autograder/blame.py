"""Fair blame: one mistake, one deduction.

A graded function that may call other graded functions (``attention`` calls ``softmax``) can fail
only because a function it calls is wrong. When its checks fail and such a dependency fails its
own checks, the function is graded again with the course's reference of that dependency (the
instructor's solution cell), in the sandbox like any run. If it then passes, it keeps its points
and the feedback says which function to fix; if not, the mistake is its own and nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import nbformat

from selfattn.checking import REGISTRY
from selfattn.exercise_checks import EXERCISES

from .paths import SOLUTIONS


@cache
def reference_cell(assignment: str, notebook: str, function: str) -> str:
    """The instructor's answer cell of ``function``, solution markers removed (trusted code)."""
    nb = nbformat.read(SOLUTIONS / assignment / f"{notebook}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == function]
    return "\n".join(ln for ln in cell.source.splitlines() if "### BEGIN SOLUTION" not in ln
                     and "### END SOLUTION" not in ln) + "\n"


def failing_dependencies(function: str, checks: dict[str, str | None]) -> list[str]:
    """The graded functions ``function`` may call whose own checks (already decided) failed."""
    return [dep for dep in EXERCISES[function].dependency_names
            if any(msg is not None for cid, msg in checks.items() if REGISTRY[cid].function == dep)]


def note(function: str, deps: list[str]) -> str:
    names = ", ".join(f"`{d}`" for d in deps)
    return (f"`{function}` is right, but it calls your {names}, which fails: fix {names} "
            f"(`{function}` was graded with the course's {names} and keeps its points).")


def regrade(assignment: str, notebook: str, function: str, answers: dict[str, str], checks: dict[str, str | None],
            decide: Callable[[list[tuple[str, str]]], dict[str, str | None]]) -> tuple[dict[str, str | None], str]:
    """Results of ``function`` with the reference of each failing dependency, and the note to give,
    or ``({}, "")`` when no dependency is to blame or the function still fails.

    ``decide(code)`` runs the function's checks on ``code`` (cells as (label, source)) exactly as
    its first grading did, and returns check id -> message.
    """
    deps = failing_dependencies(function, checks)
    if not deps:
        return {}, ""
    code = [(dep, reference_cell(assignment, notebook, dep) if dep in deps else answers[dep])
            for dep in EXERCISES[function].dependency_names if dep in answers]
    code.append((function, answers[function]))
    results = decide(code)
    if any(msg is not None for msg in results.values()):
        return {}, ""
    return results, note(function, deps)
