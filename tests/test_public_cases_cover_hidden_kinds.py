"""The public cases of every exercise cover the kinds of input its hidden checks use.

A ✓ that the hidden checks then take back is a promise broken where a public case could have told:
an answer computing in 32-bit integers meets sizes whose count overflows only in a hidden case, one
returning float16 meets a result float16 cannot hold, one clipping large scores meets scores of 10⁴,
one calling ``np.squeeze`` meets a length-one axis. So for each exercise this test derives the
*kinds* of the cases its hidden checks draw (over many seeds: the draws are random) and asserts
that some public case is of each kind. A kind says what sort of input a case is, never its values:
a public case of the same kind may use any values (the hidden ones stay secret).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
from selfattn.checks.calling import Case
from selfattn.checks.exercises import EXERCISES
from selfattn.checks.record import Check, Exercise

INT32_MAX = 2**31 - 1
#: seeds of the hidden draws looked at (grading seeds them from the submission's code)
SEEDS = range(40)


def _inputs(case: Case) -> list[np.ndarray]:
    """The case's array-like inputs (arrays, lists of ids or lengths) as arrays."""
    return [np.asarray(a) for a in (*case.args, *case.kwargs.values()) if isinstance(a, np.ndarray | list | tuple)]


def _scalars(case: Case) -> list[int]:
    return [int(a) for a in (*case.args, *case.kwargs.values())
            if isinstance(a, int | np.integer) and not isinstance(a, bool)]


def kinds(exercise: Exercise, case: Case) -> set[str]:
    """The kinds of input ``case`` is, and of result it asks for (from the reference, when the
    record holds one): float32 inputs, a length-one axis, -inf entries, magnitudes of 10^k
    (k >= 2: every lower one too), sizes or results beyond 32-bit integers, results float16
    cannot hold."""
    found: set[str] = set()
    arrays = _inputs(case)
    floats = [a.astype(float) for a in arrays if a.dtype.kind == "f"]
    if any(a.dtype == np.float32 for a in arrays):
        found.add("float32 inputs")
    if any(a.ndim and 1 in a.shape for a in arrays):
        found.add("a length-one axis")
    if any(np.isneginf(a).any() for a in floats):
        found.add("-inf entries")
    finite = [np.abs(a[np.isfinite(a)]) for a in floats]
    top = max([float(a.max()) for a in finite if a.size], default=0.0)
    found |= {f"magnitudes of 1e{k}" for k in range(2, int(np.floor(np.log10(top))) + 1)} if top >= 100 else set()
    ints = _scalars(case) + [int(x) for a in arrays if a.dtype.kind in "iu" for x in a.ravel()]
    if any(abs(x) > INT32_MAX for x in ints):
        found.add("sizes beyond int32")
    if exercise.reference is not None:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = exercise.expected(case)
        for w in results:
            fin = w[np.isfinite(w)]
            if w.ndim and 1 in w.shape:
                found.add("a length-one axis")
            if fin.size and float(np.abs(fin).max()) > INT32_MAX:
                found.add("results beyond int32")
            with np.errstate(over="ignore"):
                if not np.array_equal(fin.astype(np.float16).astype(float), fin):
                    found.add("results float16 cannot hold")
    return found


def _kinds_of(exercise: Exercise, checks: list[Check], seeds: range) -> dict[str, str]:
    """kind -> the id of a check with a case of that kind, over the cases ``checks`` draw from ``seeds``."""
    found: dict[str, str] = {}
    for check_ in checks:
        for seed in seeds:
            for case in check_.cases(np.random.default_rng(seed)):
                for kind in kinds(exercise, case):
                    found.setdefault(kind, check_.id)
    return found


@pytest.mark.parametrize("function", sorted(EXERCISES))
def test_public_cases_cover_the_kinds_hidden_cases_use(function):
    exercise = EXERCISES[function]
    hidden = _kinds_of(exercise, [c for c in exercise.checks if c.hidden], SEEDS)
    public = _kinds_of(exercise, exercise.public_checks, range(3))
    missing = {kind: at for kind, at in hidden.items() if kind not in public}
    assert not missing, (f"{function}: hidden checks use inputs of kinds no public case has: "
                         + "; ".join(f"{k} (in {at})" for k, at in sorted(missing.items()))
                         + ": add a public case of that kind (other values) to its record")


def test_every_exercise_has_hidden_checks_to_compare():
    """Otherwise the test above compares nothing and passes."""
    assert all(any(c.hidden for c in e.checks) for e in EXERCISES.values())


def test_kinds_tell_each_kind_apart():
    """Each kind is found on a case of that kind, and not on a plain one."""
    plain = EXERCISES["softmax"]
    assert kinds(plain, Case((np.array([[0.5, -1.0], [2.0, 0.0]]),))) == {"results float16 cannot hold"}
    assert "float32 inputs" in kinds(plain, Case((np.ones((2, 2), np.float32),)))
    assert "a length-one axis" in kinds(plain, Case((np.ones((1, 3)),)))
    assert "-inf entries" in kinds(plain, Case((np.array([[0.0, -np.inf]]),)))
    huge = kinds(plain, Case((np.array([[3e4, 0.0]]),)))
    assert {"magnitudes of 1e2", "magnitudes of 1e3", "magnitudes of 1e4"} <= huge
    assert kinds(EXERCISES["causal_mask"], Case((4,))) == set()  # 0 and -inf: float16 holds them
    flops = EXERCISES["attention_flops"]
    assert kinds(flops, Case((10, 512))) == {"results float16 cannot hold"}  # beyond float16's 65504
    assert "results beyond int32" in kinds(flops, Case((2048, 12288)))
    assert "sizes beyond int32" in kinds(flops, Case((1, 2**31)))
