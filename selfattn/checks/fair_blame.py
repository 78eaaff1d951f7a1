"""Fair blame: one mistake, one deduction, decided the same way in the notebook and by the grader.

A graded function that calls other graded functions (``attention`` calls ``softmax`` and
``scaled_scores``) can fail only because a function it calls is wrong. When its checks fail and such
a dependency fails its own checks, the function is judged again with the course's reference of each
failing dependency, and that judgement is the one that counts: if it passes, it keeps its points and
the note names the functions to fix; if not, what its checks now say is its own mistake (never one of
its dependencies' mistakes), and the note says how it was judged.

The grader's :mod:`autograder.verdicts.blame` (every check, in the sandbox) decides through
:func:`fair_results`. The notebook cannot: the student package withholds the course's functions, so
its :func:`selfattn.checks.notebook.judge` runs no course code and, when a function fails a check
while a function it calls fails its own public checks, names that function to fix first
(:func:`fix_first_note`), the same way in the student package and in the repository.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .findings import Finding

__all__ = ["blame_note", "fair_results", "fix_first_note", "own_mistake_note"]

#: check id -> ``None`` (passed) or what the check found
Results = Mapping[str, Finding | None]


def _names(deps: Sequence[str], quote: str) -> str:
    return ", ".join(f"{quote}{d}{quote}" for d in deps)


def blame_note(function: str, deps: Sequence[str], quote: str = "", graded: bool = False) -> str:
    """The note for ``function`` right with the course's ``deps``: fix those.

    ``quote`` wraps each name (a backtick for Markdown feedback); ``graded`` adds that the function
    keeps its points (the grader's wording)."""
    names, fn = _names(deps, quote), f"{quote}{function}{quote}"
    fails = "fails" if len(deps) == 1 else "fail"
    note = f"{fn} is right, but it calls your {names}, which {fails}: fix {names}"
    return note + (f" ({fn} was graded with the course's {names} and keeps its points)." if graded else "")


def fix_first_note(function: str, deps: Sequence[str]) -> str:
    """What the notebook says of ``function`` failing a check while ``deps``, graded functions it
    may call, fail their own public checks: fix those first (it cannot tell whose mistake it is
    without the course's functions; grading judges ``function`` with the course's ``deps``)."""
    names = _names(deps, "")
    fails = "fails its" if len(deps) == 1 else "fail their"
    theirs = "its" if len(deps) == 1 else "their"
    return (f"{function} calls your {names}, which {fails} public checks: fix {names} first, then check "
            f"{function} again (when graded, {function} is judged with the course's {names}, so {theirs} "
            f"mistakes cost {function} nothing)")


def own_mistake_note(function: str, deps: Sequence[str], quote: str = "") -> str:
    """The note for ``function`` still wrong with the course's ``deps``: its messages are its own."""
    names, fn = _names(deps, quote), f"{quote}{function}{quote}"
    yours = "yours fails its checks" if len(deps) == 1 else "yours fail their checks"
    return f"{fn} was judged with the course's {names} ({yours}): what is said of {fn} is its own mistake"


def fair_results(function: str, results: Results, failing: Sequence[str],
                 rerun: Callable[[Sequence[str]], Results], quote: str = "",
                 graded: bool = False) -> tuple[dict[str, Finding | None], str]:
    """(the results that count for ``function``, the note to give, ``""`` for none).

    Parameters
    ----------
    results
        Its results with the student's own dependencies.
    failing
        The graded functions it may call that fail their own checks (in the order it declares them).
    rerun
        ``rerun(deps)`` runs the same checks on the same inputs with the course's reference of each
        of ``deps`` and the student's other functions.
    quote, graded
        How the note is written (see :func:`blame_note`).
    """
    if not failing or all(found is None for found in results.values()):
        return dict(results), ""
    fair = dict(rerun(failing))
    if all(found is None for found in fair.values()):
        return fair, blame_note(function, failing, quote, graded)
    return fair, own_mistake_note(function, failing, quote)
