"""The checks themselves: references pass every check; each known mistake is named."""

from __future__ import annotations

import numpy as np
import pytest

import autograder.hidden_checks  # noqa: F401 - registers the hidden checks
import selfattn as sa
from selfattn.checking import REGISTRY, CheckFailed, Outcome, call_cases, check, run_check, to_arrays
from selfattn.exercise_checks import MISTAKES

REFERENCE_FUNCTIONS = {
    "embed": sa.embed,
    "project": lambda X, a, b, c: (X @ a, X @ b, X @ c),
    "shape_answers": lambda: np.array([(10, 64), (10, 64), (10, 64), (10, 10), (10, 64)]),
    "softmax": sa.softmax,
    "scaled_scores": sa.scaled_scores,
    "attention": sa.attention,
    "score_stds": lambda q, k: (np.sum(q * k, 1).std(), (np.sum(q * k, 1) / np.sqrt(q.shape[1])).std()),
    "softmax_jacobian": sa.softmax_jacobian,
    "permutation_matrix": lambda p: np.eye(len(p))[p],
    "causal_mask": sa.causal_mask,
    "padding_mask": sa.padding_mask,
    "attention_flops": sa.attention_flops,
    "crossover_length": sa.crossover_length,
    "lookup_table_weights": lambda t, v, b: (b * np.eye(len(t))[t], np.eye(len(t)), np.asarray(v, dtype=float)),
}


@pytest.mark.parametrize("check_id", sorted(REGISTRY))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_passes(check_id, seed):
    c = REGISTRY[check_id]
    assert run_check(c, REFERENCE_FUNCTIONS[c.function], seed) is None


def _mistakes():
    for fn, items in MISTAKES.items():
        for i, (variant, message) in enumerate(items):
            yield pytest.param(fn, variant, message, id=f"{fn}-{i}")


@pytest.mark.parametrize(("function", "variant", "message"), list(_mistakes()))
def test_each_known_mistake_fails_some_check_with_its_message(function, variant, message):
    """Feed the verifier the outputs the mistake would produce; some check must name it."""
    messages = []
    for c in REGISTRY.values():
        if c.function != function:
            continue
        cases = c.cases(np.random.default_rng(0))
        outcomes = []
        for case in cases:
            try:
                outcomes.append(Outcome(values=variant(case)))
            except Exception as exc:
                outcomes.append(Outcome(error=f"{type(exc).__name__}: {exc}"))
        msg = c.verify(cases, outcomes) if all(o.error is None for o in outcomes) else "raised"
        messages.append(msg)
    assert any(m and message in m for m in messages), messages


def test_check_prints_a_tick_or_raises_with_the_mistake(capsys):
    check(sa.softmax, "softmax/rows-sum-to-one")
    assert "✓ softmax" in capsys.readouterr().out
    with pytest.raises(CheckFailed, match="axis 0"):
        check(lambda S, axis=-1: sa.softmax(S, axis=0), "softmax/rows-sum-to-one")
    with pytest.raises(CheckFailed, match="not written yet"):
        check(lambda S, axis=-1: (_ for _ in ()).throw(NotImplementedError()), "softmax/rows-sum-to-one")


def test_returned_objects_must_be_numbers():
    class Liar:
        def __eq__(self, other):
            return True

    with pytest.raises(TypeError):
        to_arrays(Liar())
    with pytest.raises(TypeError):
        to_arrays(np.array([True, False]))
    out = call_cases(lambda: Liar(), [sa.checking.Case(())])
    assert out[0].error and out[0].error.startswith("TypeError")
