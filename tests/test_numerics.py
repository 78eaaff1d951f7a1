"""Properties of the attention numerics, checked on random inputs (hypothesis)."""

import unittest.mock
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import selfattn as sa
from selfattn import numerics
from selfattn.measure import peak_memory

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


def loop_attention(Q, K, V, mask=None):
    """Independent oracle: the lecture's formulas written as plain loops (2-D only)."""
    T_q, d_k = Q.shape
    out = np.zeros((T_q, V.shape[1]))
    for i in range(T_q):
        s = [Q[i] @ K[j] / np.sqrt(d_k) + (0 if mask is None else mask[i, j]) for j in range(len(K))]
        m = max(s)
        if m == -np.inf:
            continue
        e = [np.exp(x - m) for x in s]
        out[i] = sum(e_j * V[j] for j, e_j in enumerate(e)) / sum(e)
    return out


@st.composite
def qkv(draw, max_t=7, max_d=5, batch=()):
    T_q, T_k = draw(st.integers(1, max_t)), draw(st.integers(1, max_t))
    d_k, d_v = draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    Q = draw(arrays(np.float64, (*batch, T_q, d_k), elements=finite))
    K = draw(arrays(np.float64, (*batch, T_k, d_k), elements=finite))
    V = draw(arrays(np.float64, (*batch, T_k, d_v), elements=finite))
    return Q, K, V


@st.composite
def keep_masks(draw, T_q, T_k):
    """An additive mask in which every row keeps at least one key."""
    keep = draw(arrays(np.bool_, (T_q, T_k)))
    keep[np.arange(T_q), draw(arrays(np.int64, T_q, elements=st.integers(0, T_k - 1)))] = True
    return np.where(keep, 0.0, -np.inf)


matrices = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=finite)


@given(matrices, st.sampled_from([0, 1, -1]))
def test_softmax_is_a_distribution_along_axis(x, axis):
    a = sa.softmax(x, axis=axis)
    assert a.shape == x.shape and (a >= 0).all()
    np.testing.assert_allclose(a.sum(axis=axis), 1.0, rtol=1e-12)


@given(arrays(np.float64, st.integers(1, 8), elements=finite), st.floats(-1e4, 1e4))
def test_softmax_is_shift_invariant(x, c):
    np.testing.assert_allclose(sa.softmax(x + c), sa.softmax(x), atol=1e-12)


def test_softmax_extreme_scores_and_minus_inf():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = sa.softmax(np.array([1e4, -1e4, 0.0, -np.inf]))
        np.testing.assert_array_equal(a, [1.0, 0.0, 0.0, 0.0])
        assert sa.softmax(np.array([-np.inf, 3.0]))[0] == 0.0
        np.testing.assert_array_equal(sa.softmax(np.full((2, 3), -np.inf)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        sa.softmax([np.nan, 1.0])


@given(qkv())
def test_attention_matches_the_loop_oracle_and_rows_sum_to_one(t):
    Q, K, V = t
    np.testing.assert_allclose(sa.attention(Q, K, V), loop_attention(Q, K, V), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sa.attention_weights(Q, K).sum(-1), 1.0, rtol=1e-12)


@given(st.floats(-3, 3), st.integers(0, 2**32 - 1), st.sampled_from([np.float64, np.float32]))
def test_attention_without_the_row_maximum_matches_the_oracle_at_every_scale(log_scale, seed, dtype):
    """attention() skips the row maximum when a Cauchy-Schwarz bound shows exp cannot overflow or
    underflow; at every scale of the scores, on both sides of that bound, it agrees with the oracle
    (which always subtracts the maximum)."""
    rng = np.random.default_rng(seed)
    Q, K, V = (10.0**log_scale * rng.standard_normal((3, 40, 8))).astype(dtype)
    want = loop_attention(*(x.astype(np.float64) for x in (Q, K, V)))
    got = sa.attention(Q, K, V)
    assert got.dtype == dtype and np.isfinite(got).all()
    tol = 1e-10 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_both_sides_of_the_bound_are_reached_by_the_scale_test():
    """The premise of the test above: its range of scales puts the bound on both sides of the limit."""
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        limit = np.log(np.finfo(dtype).max) / 2 - np.log(40)
        bounds = []
        for log_scale in (-3.0, 3.0):
            Q, K = 10.0**log_scale * rng.standard_normal((2, 40, 8))
            bounds.append(np.linalg.norm(Q, axis=1).max() * np.linalg.norm(K, axis=1).max() / np.sqrt(8))
        assert bounds[0] < limit < bounds[1]


@given(qkv(batch=(3,)))
def test_batch_dimension_equals_one_sequence_at_a_time(t):
    Q, K, V = t
    out = sa.attention(Q, K, V)
    for b in range(3):
        np.testing.assert_allclose(out[b], sa.attention(Q[b], K[b], V[b]), rtol=1e-12, atol=1e-12)


@given(st.data())
def test_masked_attention_matches_the_oracle(data):
    Q, K, V = data.draw(qkv())
    M = data.draw(keep_masks(Q.shape[0], K.shape[0]))
    np.testing.assert_allclose(sa.attention(Q, K, V, M), loop_attention(Q, K, V, M), rtol=1e-9, atol=1e-9)
    W = sa.attention_weights(Q, K, M)
    assert (W[np.isneginf(M)] == 0).all()


@given(st.data())
def test_self_attention_is_permutation_equivariant(data):
    T, d = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 5))
    X = data.draw(arrays(np.float64, (T, d), elements=finite))
    W = [data.draw(arrays(np.float64, (d, d), elements=st.floats(-1, 1))) for _ in range(3)]
    perm = np.array(data.draw(st.permutations(range(T))))
    P = np.eye(T)[perm]

    def layer(Z):
        return sa.attention(Z @ W[0], Z @ W[1], Z @ W[2])

    np.testing.assert_allclose(layer(P @ X), P @ layer(X), rtol=1e-9, atol=1e-9)


@given(qkv(max_t=8).filter(lambda t: t[0].shape[0] == t[1].shape[0]))
def test_causal_row_i_equals_attention_over_the_prefix(t):
    Q, K, V = t
    out = sa.attention(Q, K, V, sa.causal_mask(len(Q)))
    for i in range(len(Q)):
        np.testing.assert_allclose(out[i], sa.attention(Q[i : i + 1], K[: i + 1], V[: i + 1])[0], atol=1e-12)


def test_causal_mask_pattern():
    M = sa.causal_mask(4)
    assert M.shape == (4, 4)
    assert (M[np.tril_indices(4)] == 0).all() and np.isneginf(M[np.triu_indices(4, 1)]).all()


@given(st.data())
def test_padding_masks_zero_the_pads_and_ignore_their_contents(data):
    B, T, d = 3, data.draw(st.integers(1, 6)), data.draw(st.integers(1, 4))
    lengths = np.array(data.draw(st.lists(st.integers(1, T), min_size=B, max_size=B)))
    X = data.draw(arrays(np.float64, (B, T, d), elements=finite))
    M = sa.padding_mask(lengths, T)
    assert M.shape == (B, T)
    W = sa.attention_weights(X, X, M[:, None, :])
    out = sa.attention(X, X, X, M[:, None, :])
    noise = data.draw(arrays(np.float64, (B, T, d), elements=finite))
    pad = np.arange(T)[None, :, None] >= lengths[:, None, None]
    X2 = np.where(pad, noise, X)
    out2 = sa.attention(X2, X2, X2, M[:, None, :])
    for b in range(B):
        assert (W[b][:, lengths[b] :] == 0).all()
        n = lengths[b]
        np.testing.assert_allclose(out2[b, :n], out[b, :n], atol=1e-12)
        np.testing.assert_allclose(out[b, :n], sa.attention(X[b, :n], X[b, :n], X[b, :n]), atol=1e-12)


@given(st.data())
def test_query_blocks_of_every_size_match_the_oracle(data):
    """attention() works in blocks of query rows sharing one score buffer; whatever the block size
    (one row, a last block cut short, all rows), with or without a mask that may forbid a whole
    row, and with a batch, every output row equals the oracle's."""
    Q, K, V = data.draw(qkv(max_t=9, batch=(2,)))
    T_q, T_k = Q.shape[-2], K.shape[-2]
    if data.draw(st.booleans()):
        M = np.stack([data.draw(keep_masks(T_q, T_k)) for _ in range(2)])
        M[:, data.draw(st.integers(0, T_q - 1))] = -np.inf  # one query with no key at all
    else:
        M = None
    entries = data.draw(st.integers(1, 2 * T_q * T_k))  # score entries per block: 1 row to all
    with unittest.mock.patch.object(numerics, "CACHE_ENTRIES", entries):
        out = sa.attention(Q, K, V, M)
    for b in range(2):
        want = loop_attention(Q[b], K[b], V[b], None if M is None else M[b])
        np.testing.assert_allclose(out[b], want, rtol=1e-9, atol=1e-9)


def test_a_fully_masked_row_is_zero_even_where_values_are_infinite():
    """No key, no weighted average: the row is 0, not 0 * inf = NaN."""
    V = np.array([[np.inf, 1.0], [2.0, 3.0]])
    M = np.array([[-np.inf, -np.inf], [-np.inf, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 0 * inf inside the product
        out = sa.attention(np.ones((2, 2)), np.ones((2, 2)), V, M)
    np.testing.assert_array_equal(out[0], [0.0, 0.0])


def test_fully_masked_rows_give_zeros_without_warnings():
    Q, K, V = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))
    M = np.zeros((2, 4))
    M[0] = -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sa.attention(Q, K, V, M)
        W = sa.attention_weights(Q, K, M)
        chunk = sa.chunked_attention(Q, K, V, M, block_size=3)
    np.testing.assert_array_equal(out[0], 0)
    np.testing.assert_array_equal(W[0], 0)
    np.testing.assert_array_equal(chunk[0], 0)
    np.testing.assert_allclose(out[1], 1)


def test_extreme_scores_stay_finite():
    Q = np.array([[100.0, -100.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0], [0.0, 100.0]])
    out = sa.attention(Q, K, np.eye(3))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, [[1.0, 0.0, 0.0]])


@given(arrays(np.float64, st.integers(1, 6), elements=st.floats(-5, 5)))
def test_jacobian_matches_finite_differences(s):
    a = sa.softmax(s)
    J = sa.softmax_jacobian(a)
    h = 1e-6
    for l in range(len(s)):
        e = np.zeros_like(s)
        e[l] = h
        fd = (sa.softmax(s + e) - sa.softmax(s - e)) / (2 * h)
        np.testing.assert_allclose(J[:, l], fd, atol=1e-8)


def test_jacobian_vanishes_at_one_hot():
    for gap in (1.0, 10.0, 40.0):
        J = sa.softmax_jacobian(sa.softmax(np.array([gap, 0.0, 0.0])))
        assert np.abs(J).max() <= 2 * np.exp(-gap) + 1e-15


@given(st.data())
def test_chunked_equals_full_attention_for_every_block_size(data):
    Q, K, V = data.draw(qkv(max_t=9, batch=data.draw(st.sampled_from([(), (2,)]))))
    M = data.draw(keep_masks(Q.shape[-2], K.shape[-2]))
    full = sa.attention(Q, K, V, M)
    for b in range(1, K.shape[-2] + 2):
        np.testing.assert_allclose(sa.chunked_attention(Q, K, V, M, block_size=b), full, rtol=1e-10, atol=1e-10)


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((5, 3)).astype(np.float32) for _ in range(3))
    assert sa.attention(Q, K, V).dtype == np.float32
    assert sa.chunked_attention(Q, K, V).dtype == np.float32


def test_chunked_memory_grows_linearly_not_quadratically():
    rng = np.random.default_rng(0)

    def peak(fn, T):
        Q, K, V = (rng.standard_normal((T, 16)) for _ in range(3))
        return peak_memory(lambda: fn(Q, K, V))

    small, big = peak(sa.chunked_attention, 1024), peak(sa.chunked_attention, 2048)
    assert big < 2.6 * small  # linear: doubling T roughly doubles the peak
    assert big < 2048 * 2048 * 8 / 4  # far below one full float64 score matrix
    # the textbook form materialises the whole score matrix; attention() works in query blocks
    assert peak(lambda Q, K, V: sa.attention_weights(Q, K) @ V, 2048) > 2048 * 2048 * 8
    assert peak(sa.attention, 2048) < 2048 * 2048 * 8 / 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.ones((2, 3)), np.ones((4, 5)), np.ones((4, 2))), r"Q has shape \(2, 3\).*K has shape \(4, 5\)"),
        ((np.ones((2, 3)), np.ones((4, 3)), np.ones((5, 2))), r"K has shape \(4, 3\).*V has shape \(5, 2\)"),
        ((np.ones(3), np.ones((4, 3)), np.ones((4, 2))), r"Q must have shape .* got shape \(3,\)"),
        ((np.ones((2, 2, 3)), np.ones((3, 4, 3)), np.ones((3, 4, 2))), "batch dimensions do not broadcast"),
    ],
)
def test_bad_shapes_raise_naming_the_shapes(args, message):
    for fn in (sa.attention, sa.chunked_attention):
        with pytest.raises(ValueError, match=message):
            fn(*args)


def test_bad_masks_raise():
    Q, K, V = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))
    with pytest.raises(ValueError, match=r"mask of shape \(3, 4\) does not broadcast"):
        sa.attention(Q, K, V, np.zeros((3, 4)))
    with pytest.raises(ValueError, match="boolean"):
        sa.attention(Q, K, V, np.ones((2, 4), dtype=bool))
    with pytest.raises(ValueError, match=r"mask\[:, None, :\]"):
        sa.attention(Q, K, V, np.zeros((5, 2, 4)))
    with pytest.raises(ValueError, match="lengths"):
        sa.padding_mask([1, 7], 4)
    with pytest.raises(ValueError, match="block_size"):
        sa.chunked_attention(Q, K, V, block_size=0)
    with pytest.raises(ValueError, match=r"shape \(T,\)"):
        sa.softmax_jacobian(np.ones((2, 2)))


def test_a_float64_mask_on_float32_scores_is_added_in_float64():
    """A mask's large finite values (-1e300 forbids a key as surely as -inf) are not cast down to
    the scores' float32, which would overflow with a warning."""
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((3, 5, 4)).astype(np.float32)
    M = np.where(np.eye(5, dtype=bool), 0.0, -1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, W = sa.attention(Q, K, V, M), sa.attention_weights(Q, K, M)
    np.testing.assert_allclose(out, V, rtol=1e-6)  # each query keeps only its own key
    np.testing.assert_array_equal(W, np.eye(5))


@given(T=st.integers(2, 64), half=st.integers(1, 16), offset=st.integers(0, 40),
       base=st.sampled_from([100.0, 10000.0]))
def test_a_fixed_offset_of_the_sinusoidal_encoding_is_one_rotation(T, half, offset, base):
    """z_(i + Δ) = G_Δ z_i for every position i with one orthogonal G_Δ (chapter 6's theorem), so inner
    products of encodings depend on the offset alone: z_(i+Δ) · z_(j+Δ) = z_i · z_j."""
    from selfattn import lecture

    d = 2 * half
    Z = lecture.sinusoidal_positions(T + offset, d, base)          # (T + Δ, d)
    G = lecture.offset_rotation(offset, d, base)                   # (d, d)
    assert Z.shape == (T + offset, d) and np.all(np.abs(Z) <= 1)
    np.testing.assert_allclose(Z[0, 0::2], np.sin(base ** (-np.arange(0, d, 2) / d)))   # position 1
    np.testing.assert_allclose(Z[offset:], Z[:T] @ G.T, atol=1e-12)
    np.testing.assert_allclose(G @ G.T, np.eye(d), atol=1e-12)
    np.testing.assert_allclose(Z[offset:] @ Z[offset:].T, Z[:T] @ Z[:T].T, atol=1e-9)


@pytest.mark.parametrize("bad", [0, 3, -2, 2.0, True])
def test_the_sinusoidal_encoding_needs_an_even_width(bad):
    from selfattn import lecture

    with pytest.raises(ValueError, match="d must be an even integer"):
        lecture.sinusoidal_positions(4, bad)
