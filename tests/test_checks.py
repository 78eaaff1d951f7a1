"""The checks themselves: references pass every check; each known mistake is named."""

from __future__ import annotations

import warnings

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
    assert out[0].error and out[0].error.startswith("BadReturn")


# --- one line for every wrong return --------------------------------------------------------------
def _message(check_id: str, fn) -> str:
    with warnings.catch_warnings():  # as in a kernel or the sandbox: a warning is not an error
        warnings.simplefilter("ignore")
        msg = run_check(REGISTRY[check_id], fn)
    assert msg is not None and "\n" not in msg and "Traceback" not in msg, msg
    return msg


BAD_RETURNS = [
    # (check, answer, words the message must contain)
    ("causal_mask/T4", lambda T: np.triu(np.ones((T, T)), 1) * -np.inf, "0 · (-inf) = NaN"),
    ("padding_mask/small", lambda lengths, T: (np.arange(T)[None] >= np.asarray(lengths)[:, None]) * -np.inf,
     "np.where(condition, -np.inf, 0.0)"),
    ("project/shapes", lambda X, a, b, c: [X @ a, X @ b, X @ c], "return several results as a tuple"),
    ("project/shapes", lambda X, a, b, c: [X @ a, X @ b, X @ a], "return the tuple (Q, K, V)"),
    ("project/shapes", lambda X, a, b, c: ((X @ a, X @ b), X @ c), "return the flat tuple (Q, K, V)"),
    ("score_stds/small", lambda q, k: np.array([1.0, 2.0]), "one array of shape (2,) where 2 separate results"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: np.array(sa.softmax(S), dtype=object), "dtype object"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: sa.softmax(S) + 0j, "complex numbers"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: np.array(1.0), "a single number where an array of shape (3, 5)"),
    ("attention_flops/lecture", lambda T, d: np.full(3, 4.0 * T * T * d), "where a single number is expected"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: None, "None (is a `return` statement missing?)"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: sa.softmax(S) > 0.2, "boolean"),
    ("softmax/rows-sum-to-one", lambda S, axis=-1: "weights", "a string"),
    ("lookup_table_weights/permutation", lambda t, v, b: [np.eye(3), np.eye(3), np.eye(3)[:, :2]],
     "return several results as a tuple"),
    ("lookup_table_weights/permutation", lambda t, v, b: (np.eye(3), np.eye(3)),
     "return the flat tuple (W_Q, W_K, W_V)"),
]


@pytest.mark.parametrize(("check_id", "answer", "words"), BAD_RETURNS, ids=lambda x: x if isinstance(x, str) else "")
def test_every_wrong_return_gets_one_line_saying_what_to_return(check_id, answer, words):
    assert words in _message(check_id, answer)


def test_a_zero_dimensional_number_is_a_number():
    assert run_check(REGISTRY["attention_flops/lecture"], lambda T, d: np.array(4.0 * T * T * d)) is None


def test_overflow_and_underflow_are_told_apart():
    def no_max(S, axis=-1):
        with np.errstate(all="ignore"):
            e = np.exp(S)
            return e / e.sum(axis=axis, keepdims=True)

    def global_max(S, axis=-1):
        with np.errstate(all="ignore"):
            e = np.exp(S - np.max(S))
            return e / e.sum(axis=axis, keepdims=True)

    assert "overflowed" in _message("softmax/large-scores", no_max)
    msg = _message("softmax/large-scores", global_max)
    assert "underflowed" in msg and "overflowed" not in msg


def test_softmax_axis_check_catches_a_hard_coded_axis_zero():
    def axis_zero(S, axis=-1):
        return sa.softmax(S, axis=0)

    assert run_check(REGISTRY["softmax/axis"], axis_zero) is not None
    assert run_check(REGISTRY["softmax/axis"], sa.softmax) is None


def test_problem_20_lookup_must_happen_in_the_weights():
    def stored_in_values(targets, values, beta):
        m = len(targets)
        return beta * np.eye(m), np.eye(m), np.asarray(values, dtype=float)[np.asarray(targets)]

    for check_id in ("lookup_table_weights/permutation", "lookup_table_weights/hidden/random"):
        assert "attention weights" in _message(check_id, stored_in_values)


def test_labels_do_not_give_the_answers_away():
    text = " ".join(c.description for c in REGISTRY.values() if "/hidden/" not in c.id)
    for answer in ("4 T² d", "diag(a) - a aᵀ", "6 d", "24576", "49152", "-inf above"):
        assert answer not in text
