"""Scaled dot-product attention, implemented once and reused everywhere.

Every function accepts leading batch dimensions ``...`` that broadcast
against each other.  Queries have shape ``(..., T_q, d_k)``, keys
``(..., T_k, d_k)``, values ``(..., T_k, d_v)``; masks are *additive*
(``0`` keeps a position, ``-inf`` forbids it) and broadcast to the score
shape ``(..., T_q, T_k)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "attention",
    "attention_weights",
    "causal_mask",
    "chunked_attention",
    "padding_mask",
    "scaled_scores",
    "softmax",
    "softmax_jacobian",
]

Array = NDArray[np.floating]

#: Score entries per query block in :func:`attention` (2 MiB of float64: stays in cache).
CACHE_ENTRIES = 2**18


def _as_float(x: ArrayLike, name: str) -> Array:
    """Return ``x`` as a floating array (integers become float64)."""
    arr = np.asarray(x)
    if arr.dtype == np.bool_:
        raise ValueError(
            f"{name} is a boolean array; masks and inputs here are additive floats "
            "(use 0.0 to keep a position and -inf to forbid it)"
        )
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    return arr


def _safe_max(x: Array, axis: int) -> Array:
    """Max along ``axis`` (kept), with an all ``-inf`` slice mapped to 0 so that
    ``x - max`` never forms ``-inf - (-inf)``."""
    m = np.max(x, axis=axis, keepdims=True)
    return np.where(np.isneginf(m), 0.0, m).astype(x.dtype, copy=False)


def softmax(x: ArrayLike, axis: int = -1) -> Array:
    """Numerically stable softmax along ``axis``.

    Parameters
    ----------
    x : array_like, shape (..., n, ...)
        Real scores.  ``-inf`` entries receive weight exactly 0.
    axis : int
        The axis that is normalised.

    Returns
    -------
    ndarray, same shape as ``x``
        Non-negative weights summing to 1 along ``axis``.  A slice that is
        entirely ``-inf`` gives all zeros (no NaN, no warning).

    Raises
    ------
    ValueError
        If ``x`` holds NaN or ``+inf`` (no distribution is defined then).
    """
    x = _as_float(x, "x")
    if x.ndim == 0:
        raise ValueError("softmax needs at least a 1-D array, got a scalar")
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError("softmax input contains NaN or +inf; scores must be finite or -inf")
    e = np.exp(x - _safe_max(x, axis))
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _check_qkv(Q: Array, K: Array, V: Array | None) -> None:
    """Raise ``ValueError`` naming the shapes when Q, K (and V) do not fit."""
    for name, a in (("Q", Q), ("K", K), ("V", V)):
        if a is not None and a.ndim < 2:
            raise ValueError(
                f"{name} must have shape (..., T, d) with at least 2 dimensions, got shape {a.shape}"
            )
    if Q.shape[-1] == 0 or K.shape[-2] == 0:
        raise ValueError(
            f"attention needs d_k >= 1 and at least one key: Q has shape {Q.shape}, K has shape {K.shape}"
        )
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"query width d_k must equal key width: Q has shape {Q.shape} (d_k={Q.shape[-1]}) "
            f"but K has shape {K.shape} (d_k={K.shape[-1]})"
        )
    if V is not None and V.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"every key needs one value: K has shape {K.shape} (T_k={K.shape[-2]}) "
            f"but V has shape {V.shape} ({V.shape[-2]} rows)"
        )
    shapes = [("Q", Q.shape), ("K", K.shape)] + ([("V", V.shape)] if V is not None else [])
    try:
        np.broadcast_shapes(*(s[:-2] for _, s in shapes))
    except ValueError:
        listed = ", ".join(f"{n} {s}" for n, s in shapes)
        raise ValueError(f"leading batch dimensions do not broadcast: {listed}") from None


def _score_shape(Q: Array, K: Array) -> tuple[int, ...]:
    return (*np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]), Q.shape[-2], K.shape[-2])


def _check_mask(mask: ArrayLike | None, score_shape: tuple[int, ...]) -> Array | None:
    if mask is None:
        return None
    m = _as_float(mask, "mask")
    try:
        full = np.broadcast_shapes(m.shape, score_shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {m.shape} does not broadcast to the score shape "
            f"(..., T_q, T_k) = {score_shape}"
        ) from None
    if full[len(full) - len(score_shape):] != score_shape or len(full) > len(score_shape):
        raise ValueError(
            f"mask of shape {m.shape} would enlarge the score shape {score_shape} to {full}; "
            "for a (B, T) padding mask use mask[:, None, :]"
        )
    if np.isnan(m).any() or np.isposinf(m).any():
        raise ValueError("mask contains NaN or +inf; an additive mask holds 0 or -inf")
    return m


def scaled_scores(Q: ArrayLike, K: ArrayLike) -> Array:
    """Scores ``Q K^T / sqrt(d_k)``.

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
    K : array_like, shape (..., T_k, d_k)

    Returns
    -------
    ndarray, shape (..., T_q, T_k)
    """
    Q, K = _as_float(Q, "Q"), _as_float(K, "K")
    _check_qkv(Q, K, None)
    return _scores(Q, K)


def _scores(Q: Array, K: Array, out: Array | None = None) -> Array:
    # scale the (T_q, d_k) queries rather than the (T_q, T_k) scores: same value, fewer flops
    scale = np.asarray(1.0 / np.sqrt(Q.shape[-1]), dtype=np.result_type(Q, K))
    return np.matmul(Q * scale, np.swapaxes(K, -1, -2), out=out)


def _key_norm(K: Array) -> Array:
    """Largest key norm max_j |k_j| (..., 1, 1), for :func:`_exp_scores`'s bound."""
    return np.sqrt(np.max(np.einsum("...jd,...jd->...j", K, K), axis=-1))[..., None, None]


def _exp_scores(
    Q: Array, K: Array, mask: Array | None, key_norm: Array | None = None, out: Array | None = None
) -> Array:
    """Unnormalised weights (..., T_q, T_k), ``exp(s - c)`` with one constant ``c`` per row; the
    softmax is their ratio to their row sums, whatever ``c`` is.

    ``c`` is the row maximum, unless a bound shows it is not needed: by Cauchy-Schwarz
    ``|s_ij| <= |q_i| max_j |k_j| / sqrt(d_k)``, and while that stays below half the exponent range
    minus ``log T_k`` no ``exp`` overflows, no row sum overflows and no row underflows to 0, so
    ``c = 0`` gives the same weights (to rounding) without the two passes of the maximum. With a
    mask (whose values the bound does not know) the maximum is always taken. ``out``, of the
    score shape, receives the scores (attention() reuses one buffer for all its query blocks).
    """
    S = _scores(Q, K, out)
    if mask is not None:
        S = S + mask  # a new array: the mask's dtype may be wider than the scores' (as before the buffer)
    elif key_norm is not None:
        limit = np.log(np.finfo(S.dtype).max) / 2 - np.log(max(S.shape[-1], 1))
        bound = np.sqrt(np.einsum("...id,...id->...i", Q, Q))[..., None] * key_norm / np.sqrt(Q.shape[-1])
        if np.all(bound <= limit):
            return np.exp(S, out=S)
    S -= _safe_max(S, -1)
    return np.exp(S, out=S)


def attention_weights(Q: ArrayLike, K: ArrayLike, mask: ArrayLike | None = None) -> Array:
    """Attention weights ``softmax(Q K^T / sqrt(d_k) + mask)`` row by row.

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
    K : array_like, shape (..., T_k, d_k)
    mask : array_like, optional, broadcastable to (..., T_q, T_k)
        Additive: 0 keeps a key, ``-inf`` removes it.

    Returns
    -------
    ndarray, shape (..., T_q, T_k)
        Each row sums to 1, or is all zeros when every key of that row is masked.
    """
    Q, K = _as_float(Q, "Q"), _as_float(K, "K")
    _check_qkv(Q, K, None)
    m = _check_mask(mask, _score_shape(Q, K))
    E = _exp_scores(Q, K, m)
    total = E.sum(axis=-1, keepdims=True)
    return np.divide(E, total, out=np.zeros_like(E), where=total > 0)


def attention(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None
) -> Array:
    """Scaled dot-product attention ``softmax(Q K^T / sqrt(d_k) + mask) V``.

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
    K : array_like, shape (..., T_k, d_k)
    V : array_like, shape (..., T_k, d_v)
    mask : array_like, optional, broadcastable to (..., T_q, T_k)

    Returns
    -------
    ndarray, shape (..., T_q, d_v)
        Row ``i`` is the weighted average of the value rows; a query whose keys
        are all masked gets a zero row.
    """
    Q, K, V = _as_float(Q, "Q"), _as_float(K, "K"), _as_float(V, "V")
    _check_qkv(Q, K, V)
    shape = _score_shape(Q, K)
    m = _check_mask(mask, shape)
    if m is not None:
        m = np.broadcast_to(m, shape)
    batch = np.broadcast_shapes(shape[:-2], V.shape[:-2])
    T_q, T_k = shape[-2:]
    out = np.empty((*batch, T_q, V.shape[-1]), dtype=np.result_type(Q, K, V))
    # Query rows go in blocks whose scores fit in cache, all computed in one buffer; each block is
    # exact (no online rescaling is needed because every block sees all keys).
    rows = max(1, min(T_q, CACHE_ENTRIES // max(1, T_k * int(np.prod(batch, dtype=np.int64)))))
    scores = np.empty((*shape[:-2], rows, T_k), dtype=np.result_type(Q, K))
    key_norm = _key_norm(K) if m is None else None
    ones = np.ones(T_k, dtype=scores.dtype)
    for i in range(0, T_q, rows):
        b = slice(i, i + rows)
        n = min(rows, T_q - i)
        E = _exp_scores(Q[..., b, :], K, None if m is None else m[..., b, :], key_norm,
                        out=scores[..., :n, :])  # (..., n, T_k)
        total = (E @ ones)[..., None]  # row sums as a matrix-vector product: BLAS runs it on every core
        # normalise the (n, d_v) output instead of the (n, T_k) weights
        o = np.matmul(E, V, out=out[..., b, :])
        np.divide(o, total, out=o, where=total > 0)
        if m is not None:
            np.copyto(o, 0.0, where=total == 0)  # a fully masked row is 0 (even where V holds inf)
    return out


def causal_mask(T: int) -> Array:
    """Additive causal mask.

    Returns
    -------
    ndarray, shape (T, T)
        0 on and below the diagonal (key ``j <= i``), ``-inf`` above it.
    """
    T = _check_length(T, "T")
    return np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, 0.0)


def padding_mask(lengths: ArrayLike, T: int) -> Array:
    """Additive key-padding mask for a batch of sequences padded to length ``T``.

    Parameters
    ----------
    lengths : array_like of int, shape (B,)
        True length of each sequence, ``0 <= lengths[b] <= T``.
    T : int
        Padded length.

    Returns
    -------
    ndarray, shape (B, T)
        0 where key ``j < lengths[b]``, ``-inf`` otherwise.  To use it with
        scores of shape (B, T_q, T) insert the query axis: ``mask[:, None, :]``.
    """
    T = _check_length(T, "T")
    lens = np.asarray(lengths)
    if lens.ndim != 1 or not (np.issubdtype(lens.dtype, np.integer) or lens.size == 0):
        raise ValueError(f"lengths must be a 1-D array of integers, got shape {lens.shape} and dtype {lens.dtype}")
    if lens.size and (lens.min() < 0 or lens.max() > T):
        raise ValueError(f"every entry of lengths must lie in [0, T={T}], got {lens.tolist()}")
    keep = np.arange(T)[None, :] < lens[:, None]
    return np.where(keep, 0.0, -np.inf)


def _check_length(T: int, name: str) -> int:
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {T!r}")
    return int(T)


def softmax_jacobian(a: ArrayLike) -> Array:
    """Jacobian of the softmax, written in terms of its output.

    Parameters
    ----------
    a : array_like, shape (T,)
        Softmax weights ``a = softmax(s)``.

    Returns
    -------
    ndarray, shape (T, T)
        ``J[j, l] = d a_j / d s_l = a_j (1[j = l] - a_l)``.
    """
    a = _as_float(a, "a")
    if a.ndim != 1:
        raise ValueError(f"softmax_jacobian takes one weight vector of shape (T,), got shape {a.shape}")
    return np.diag(a) - np.outer(a, a)


def chunked_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    block_size: int = 128,
) -> Array:
    """Attention computed one block of keys at a time with an online softmax.

    The full ``(T_q, T_k)`` score matrix is never formed: each step holds one
    ``(T_q, block_size)`` block, a running row maximum ``m``, a running
    normaliser ``l`` and a running output ``acc``.  When a block raises the
    maximum from ``m`` to ``m'`` the old sums are rescaled by ``exp(m - m')``.

    Parameters
    ----------
    Q : array_like, shape (..., T_q, d_k)
    K : array_like, shape (..., T_k, d_k)
    V : array_like, shape (..., T_k, d_v)
    mask : array_like, optional, broadcastable to (..., T_q, T_k)
        Sliced block by block (a broadcast view is never copied whole).
    block_size : int
        Keys per block, at least 1.

    Returns
    -------
    ndarray, shape (..., T_q, d_v)
        Equal to :func:`attention` up to rounding.
    """
    Q, K, V = _as_float(Q, "Q"), _as_float(K, "K"), _as_float(V, "V")
    _check_qkv(Q, K, V)
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    shape = _score_shape(Q, K)
    m_full = _check_mask(mask, shape)
    if m_full is not None:
        m_full = np.broadcast_to(m_full, shape)
    dtype = np.result_type(Q, K, V)
    batch = np.broadcast_shapes(shape[:-2], V.shape[:-2])
    T_q, T_k = shape[-2], shape[-1]
    run_max = np.full((*batch, T_q, 1), -np.inf, dtype=dtype)
    run_sum = np.zeros((*batch, T_q, 1), dtype=dtype)
    acc = np.zeros((*batch, T_q, V.shape[-1]), dtype=dtype)
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)
        S = _scores(Q, K[..., start:stop, :])  # (..., T_q, b)
        if m_full is not None:
            S = S + m_full[..., start:stop]
        new_max = np.maximum(run_max, np.max(S, axis=-1, keepdims=True))
        shift = np.where(np.isneginf(new_max), 0.0, new_max)
        rescale = np.exp(run_max - shift)  # exp(-inf) = 0 before the first live key
        S -= shift
        np.exp(S, out=S)
        run_sum = run_sum * rescale + S.sum(axis=-1, keepdims=True)
        acc = acc * rescale + S @ V[..., start:stop, :]
        run_max = new_max
    return np.divide(acc, run_sum, out=np.zeros_like(acc), where=run_sum > 0)
