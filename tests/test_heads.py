"""Multi-head attention (selfattn.heads) against its definition, one head at a time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import selfattn as sa
from selfattn.heads import head_attention_flops, merge_heads, multi_head_attention, multi_head_weights, split_heads


@st.composite
def layers(draw):
    h = draw(st.sampled_from([1, 2, 3, 4]))
    d_k = draw(st.integers(1, 5))
    T = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    d = h * d_k
    X = rng.standard_normal((T, d))
    W_Q, W_K, W_V, W_O = rng.standard_normal((4, d, d)) / np.sqrt(d)
    return X, W_Q, W_K, W_V, W_O, h


@given(layers())
def test_each_head_is_attention_on_its_own_slice(layer):
    X, W_Q, W_K, W_V, W_O, h = layer
    d_k = X.shape[1] // h
    cols = [slice(j * d_k, (j + 1) * d_k) for j in range(h)]
    by_hand = np.concatenate(
        [sa.attention(X @ W_Q[:, c], X @ W_K[:, c], X @ W_V[:, c]) for c in cols], axis=1) @ W_O
    np.testing.assert_allclose(multi_head_attention(X, W_Q, W_K, W_V, W_O, h), by_hand, atol=1e-12)


@given(layers())
def test_one_head_is_plain_attention_then_the_output_projection(layer):
    X, W_Q, W_K, W_V, W_O, _ = layer
    np.testing.assert_allclose(multi_head_attention(X, W_Q, W_K, W_V, W_O, 1),
                               sa.attention(X @ W_Q, X @ W_K, X @ W_V) @ W_O, atol=1e-12)


@given(layers())
def test_weights_rows_are_distributions_and_causal_mask_applies(layer):
    X, W_Q, W_K, _, _, h = layer
    A = multi_head_weights(X, W_Q, W_K, h, sa.causal_mask(X.shape[0]))
    assert A.shape == (h, X.shape[0], X.shape[0])
    np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-12)
    assert np.all(np.triu(A, 1) == 0)


@given(st.integers(1, 8), st.integers(1, 6))
def test_split_and_merge_are_inverse(h, d_k):
    M = np.arange(5 * h * d_k, dtype=float).reshape(5, h * d_k)
    assert split_heads(M, h).shape == (h, 5, d_k)
    np.testing.assert_array_equal(merge_heads(split_heads(M, h)), M)


@given(st.integers(1, 4096), st.sampled_from([(768, 12), (4096, 32), (512, 8), (64, 1)]))
def test_heads_do_not_change_the_flops(T, dh):
    d, h = dh
    assert head_attention_flops(T, d, h) == sa.attention_flops(T, d)


def test_width_must_split_evenly():
    with pytest.raises(ValueError, match="d = 10 does not split into h = 3"):
        split_heads(np.zeros((2, 10)), 3)
    with pytest.raises(ValueError, match="W_O of shape"):
        multi_head_attention(np.zeros((2, 4)), *np.zeros((3, 4, 4)), np.zeros((3, 4)), 2)
