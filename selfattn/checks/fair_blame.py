"""Fair blame: one mistake, one deduction, decided the same way in the notebook and by the grader.

A graded function that calls other graded functions (``attention`` calls ``softmax`` and
``scaled_scores``) can fail only because a function it calls is wrong. When its checks fail and such
a dependency fails its own checks, the function is judged again with the course's reference of each
failing dependency, and that judgement is the one that counts: if it passes, it keeps its points and
the note names the functions to fix; if not, what its checks now say is its own mistake (never one of
its dependencies' mistakes), and the note says how it was judged.

The grader's :mod:`autograder.verdicts.blame` (every check, in the sandbox) decides through
:func:`fair_results`. The notebook's :func:`selfattn.checks.notebook.judge` decides on the evidence it
has without a secret: a dependency fails when it fails its own public checks, or when what it returned
on the very inputs the function gave it breaks its contract (a softmax row that does not sum to 1,
NaN where no input was NaN: the ``contract`` of its :class:`selfattn.checks.record.Exercise`). It then judges the
function with the course's dependency where the student package can (the results a right function
gets from it on the public checks' inputs are recorded): ✓ with :func:`blame_note`, or ✗ with
:func:`own_mistake_note`; where it cannot, it says so without a verdict (:func:`cannot_judge_note`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .findings import Finding

__all__ = ["blame_note", "cannot_judge_note", "fair_results", "fix_first_note", "own_mistake_note"]

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


def fix_first_note(function: str, deps: Sequence[str], why: Mapping[str, str] | None = None) -> str:
    """"fix softmax first", for each of ``deps`` (graded functions ``function`` calls that fail), with
    what was wrong in what it returned on the inputs ``function`` gave it when known (``why``, by
    dependency): "fix softmax first: on the inputs attention gave it, a row of its output does not
    sum to 1"."""
    why = why or {}
    return "; ".join(f"fix {d} first" + (f": on the inputs {function} gave it, {why[d]}" if d in why else "")
                     for d in deps)


def cannot_judge_note(function: str, deps: Sequence[str], why: Mapping[str, str] | None = None) -> str:
    """What the notebook says of ``function`` (no ✓, no ✗) when it fails a check while ``deps`` fail, and
    the student package cannot judge it with the course's ``deps`` (their recorded results do not
    cover the inputs it gave them): "attention can't be judged until your softmax passes: fix
    softmax first"."""
    passes = "passes" if len(deps) == 1 else "pass"
    return f"{function} can't be judged until your {_names(deps, '')} {passes}: {fix_first_note(function, deps, why)}"


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
