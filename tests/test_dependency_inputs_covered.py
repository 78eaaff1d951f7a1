"""The public checks of a function cover every kind of input that the public checks of a function
calling it pass to it (issue 53): a ``softmax`` wrong on the −∞ scores ``attention`` gives it under a
causal mask fails softmax's own public check, so the notebook, which blames on public checks and on
what softmax returned, and the grader, which blames on all checks, blame alike.

The calls are those the instructor's answer of each function with dependencies makes on its public
cases (its answer cell run with the course's dependencies, each call recorded); the kinds are read off
the arguments by name: −∞ entries, a slice entirely −∞, entries past where ``exp`` overflows or
underflows, length-one axes, the number of axes, float32, and every other argument's value.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograder.course.spec import answer_cells
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.record import Exercise

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions" / "attention"


def kinds_of(name: str, value: Any) -> set[str]:
    """The kinds of input ``value`` is, as the argument ``name``."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiu":
        return {f"{name}={value!r}"}
    a = value.astype(float)
    finite = a[np.isfinite(a)]
    found = {f"{name}: {a.ndim} axes"}
    found |= {f"{name}: an axis of length one"} if 1 in a.shape else set()
    found |= {f"{name}: float32"} if value.dtype == np.float32 else set()
    if np.isneginf(a).any():
        found.add(f"{name}: −∞ entries")
        if a.ndim and np.isneginf(a).all(axis=-1).any():
            found.add(f"{name}: a row entirely −∞")
    if finite.size and finite.max() > 709:
        found.add(f"{name}: entries where exp overflows (above 709)")
    if finite.size and finite.min() < -709:
        found.add(f"{name}: entries where exp underflows (below −709)")
    return found


def _bound(fn: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _answers() -> dict[str, str]:
    """Every answer cell of the instructor's notebooks, by function."""
    return {fn: src for nb in sorted(SOLUTIONS.glob("*.ipynb")) for fn, src in answer_cells(nb).items()}


def _public_kinds(exercise: Exercise, signature_of: Callable[..., Any]) -> set[str]:
    """The kinds of input ``exercise``'s own public cases are, bound to ``signature_of``'s parameters."""
    return {k for check_ in exercise.public_checks for case in check_.cases(np.random.default_rng(0))
            for name, value in _bound(signature_of, case.args, case.kwargs).items() for k in kinds_of(name, value)}


def calls_made(exercise: Exercise, answers: dict[str, str]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(public check id, dependency, its arguments by name) of each call the instructor's answer of
    ``exercise`` makes to a graded function it may call, on the public cases."""
    namespace: dict[str, Any] = {"np": np, "numpy": np}
    for dep in exercise.dependency_names:
        exec(answers[dep], namespace)  # trusted: the instructor's answers
    exec(answers[exercise.function], namespace)
    seen: list[tuple[str, dict[str, Any]]] = []
    for dep in exercise.dependency_names:
        own = namespace[dep]

        def recorded(*args: Any, _own: Callable[..., Any] = own, _dep: str = dep, **kwargs: Any) -> Any:
            seen.append((_dep, _bound(_own, args, kwargs)))
            return _own(*args, **kwargs)

        namespace[dep] = recorded
    for check_ in exercise.public_checks:
        for case in check_.cases(np.random.default_rng(0)):
            seen.clear()
            namespace[exercise.function](*case.args, **case.kwargs)
            yield from ((check_.id, dep, arguments) for dep, arguments in list(seen))


DEPENDENT = [e for e in EXERCISES.values() if e.depends]


def test_some_exercise_calls_graded_functions():
    assert DEPENDENT, "no exercise declares the graded functions it calls"


@pytest.mark.parametrize("exercise", DEPENDENT, ids=lambda e: e.function)
def test_the_public_checks_of_each_dependency_cover_the_inputs_its_callers_public_checks_give_it(exercise):
    answers = _answers()
    namespace: dict[str, Any] = {"np": np, "numpy": np}
    missing = []
    calls = list(calls_made(exercise, answers))
    assert {dep for _, dep, _ in calls} == set(exercise.dependency_names), (
        f"the instructor's {exercise.function} does not call each of {exercise.dependency_names} on its public cases")
    for dep in exercise.depends:
        exec(answers[dep.function], namespace)
        covered = _public_kinds(dep, namespace[dep.function])
        for check_id, name, arguments in calls:
            if name != dep.function:
                continue
            for kind in sorted({k for arg, v in arguments.items() for k in kinds_of(arg, v)} - covered):
                missing.append(f"{check_id} gives {dep.function} {kind}: no public case of {dep.function} does")
    assert not missing, "\n".join(sorted(set(missing)))


def test_the_kinds_tell_what_matters():
    """Each kind is read off the values (and the test above would fail without the masked softmax case)."""
    S = np.array([[0.0, -np.inf], [-np.inf, -np.inf]])
    assert kinds_of("S", S) == {"S: 2 axes", "S: −∞ entries", "S: a row entirely −∞"}
    assert kinds_of("S", np.array([[800.0, -800.0]], dtype=np.float32)) == {
        "S: 2 axes", "S: an axis of length one", "S: float32", "S: entries where exp overflows (above 709)",
        "S: entries where exp underflows (below −709)"}
    assert kinds_of("axis", -1) == {"axis=-1"}
