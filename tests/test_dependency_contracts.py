"""The contracts the notebook blames a dependency by (issue 53): what a right softmax or scaled_scores
returns on any valid input, judged without the reference (``Exercise.contract``).

A right result never breaks its contract (the notebook must never tell a student to fix a right
softmax first), and the classic wrong softmaxes break it on inputs where they are wrong.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from selfattn import numerics
from selfattn.checks.exercises import SCALED_SCORES, SOFTMAX

FINITE = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)
SCORES = st.one_of(FINITE, st.just(-np.inf))
SHAPES = st.tuples(st.integers(1, 5), st.integers(1, 6))


@settings(max_examples=300, deadline=None)
@given(arrays(np.float64, SHAPES, elements=SCORES), st.sampled_from([-1, 0, 1]))
def test_a_right_softmax_keeps_its_contract_on_any_scores(S, axis):
    assert SOFTMAX.contract((S, axis), numerics.softmax(S, axis=axis)) is None
    assert SOFTMAX.contract((S, axis), numerics.softmax(S, axis=axis).astype(np.float32)) is None


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, SHAPES, elements=FINITE))
def test_a_softmax_that_does_not_divide_breaks_its_contract_where_a_row_has_two_scores(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    said = SOFTMAX.contract((S, -1), e)
    assert (said == "a row of its output does not sum to 1") == bool((np.abs(e.sum(axis=-1) - 1) > 1e-4).any())


def test_the_contract_names_what_is_wrong():
    S = np.array([[0.0, 1.0, -np.inf], [2.0, 2.0, 2.0]])
    right = numerics.softmax(S)
    assert SOFTMAX.contract((S, -1), right) is None
    assert SOFTMAX.contract((S, -1), right[:, :2]) == "it returned shape (2, 2) for scores of shape (2, 3)"
    assert SOFTMAX.contract((S, -1), np.where(np.isinf(S), np.nan, right)) == (
        "it returned NaN or inf where no input was NaN")
    leaky = np.array([[0.2, 0.7, 0.1], [1 / 3, 1 / 3, 1 / 3]])  # rows sum to 1, the −∞ score has weight 0.1
    assert SOFTMAX.contract((S, -1), leaky) == (
        "a score of −∞ (a masked position) got a weight that is not 0")
    assert SOFTMAX.contract((S, -1), numerics.softmax(S.T, axis=-1).T) is not None  # normalised down the columns
    assert SOFTMAX.contract((S, -1), (g for g in right)) == (
        "it returned something that is not one array for scores of shape (2, 3)")
    assert SOFTMAX.contract((np.array([[np.nan, 1.0]]), -1), np.zeros((1, 2))) is None  # no claim on NaN scores


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_right_scores_keep_their_contract_and_transposed_ones_do_not(T_q, T_k, d_k, seed):
    rng = np.random.default_rng(seed)
    Q, K = rng.standard_normal((T_q, d_k)), rng.standard_normal((T_k, d_k))
    assert SCALED_SCORES.contract((Q, K), numerics.scaled_scores(Q, K)) is None
    said = SCALED_SCORES.contract((Q, K), numerics.scaled_scores(K, Q))
    assert (said is None) == (T_q == T_k), said
