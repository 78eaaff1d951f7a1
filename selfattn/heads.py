"""Multi-head attention: split the width ``d`` into ``h`` heads of width ``d_k = d / h``.

Each head projects the same input with its own slice of ``W_Q``, ``W_K``, ``W_V`` and attends on
its own; the ``h`` outputs are concatenated back to width ``d`` and mixed by an output projection
``W_O``. The FLOPs of the scores and the weighted sums are those of one head of width ``d``:
``h`` heads of width ``d / h`` each cost ``4 T² d / h``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .numerics import attention, attention_weights

__all__ = ["head_attention_flops", "merge_heads", "multi_head_attention", "multi_head_weights", "split_heads"]


def _check_heads(d: int, h: int) -> int:
    if h < 1 or d % h:
        raise ValueError(f"width d = {d} does not split into h = {h} heads of equal width")
    return d // h


def split_heads(M: ArrayLike, h: int) -> NDArray[np.float64]:
    """Cut the columns of ``M`` into ``h`` consecutive blocks, one per head.

    Parameters
    ----------
    M : array_like, shape (T, d)
    h : int, a divisor of d

    Returns
    -------
    ndarray, shape (h, T, d / h)
        ``out[j]`` is columns ``j d_k`` to ``(j + 1) d_k - 1`` of ``M``.
    """
    A = np.asarray(M, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"split_heads needs a (T, d) matrix, got shape {A.shape}")
    d_k = _check_heads(A.shape[1], h)
    return A.reshape(A.shape[0], h, d_k).transpose(1, 0, 2)


def merge_heads(H: ArrayLike) -> NDArray[np.float64]:
    """Concatenate head outputs side by side, the inverse of :func:`split_heads`.

    Parameters
    ----------
    H : array_like, shape (h, T, d_v)

    Returns
    -------
    ndarray, shape (T, h d_v)
    """
    A = np.asarray(H, dtype=float)
    if A.ndim != 3:
        raise ValueError(f"merge_heads needs an (h, T, d_v) array, got shape {A.shape}")
    return A.transpose(1, 0, 2).reshape(A.shape[1], -1)


def _projections(X: ArrayLike, W_Q: ArrayLike, W_K: ArrayLike, W_V: ArrayLike, h: int):
    X = np.asarray(X, dtype=float)
    mats = [np.asarray(W, dtype=float) for W in (W_Q, W_K, W_V)]
    for name, W in zip(("W_Q", "W_K", "W_V"), mats, strict=True):
        if W.ndim != 2 or W.shape[0] != X.shape[-1]:
            raise ValueError(f"{name} of shape {W.shape} does not multiply X of shape {X.shape}")
    return [split_heads(X @ W, h) for W in mats]


def multi_head_weights(X: ArrayLike, W_Q: ArrayLike, W_K: ArrayLike, h: int, mask: ArrayLike | None = None):
    """Attention weights of every head.

    Parameters
    ----------
    X : array_like, shape (T, d)
    W_Q, W_K : array_like, shape (d, d)
    h : int, number of heads (a divisor of d)
    mask : array_like, optional, broadcastable to (T, T)

    Returns
    -------
    ndarray, shape (h, T, T)
    """
    Q, K, _ = _projections(X, W_Q, W_K, W_K, h)
    return attention_weights(Q, K, mask)


def multi_head_attention(
    X: ArrayLike, W_Q: ArrayLike, W_K: ArrayLike, W_V: ArrayLike, W_O: ArrayLike, h: int,
    mask: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """``concat(head_1, ..., head_h) W_O`` with ``head_j = Attention(X W_Q^(j), X W_K^(j), X W_V^(j))``.

    Parameters
    ----------
    X : array_like, shape (T, d)
    W_Q, W_K : array_like, shape (d, d)
        Columns ``j d_k .. (j + 1) d_k - 1`` are head ``j``'s projection, ``d_k = d / h``.
    W_V : array_like, shape (d, d_v_total), d_v_total divisible by h
    W_O : array_like, shape (d_v_total, d_out)
    h : int, number of heads
    mask : array_like, optional, broadcastable to (T, T), shared by all heads

    Returns
    -------
    ndarray, shape (T, d_out)
    """
    Q, K, V = _projections(X, W_Q, W_K, W_V, h)
    heads = attention(Q, K, V, mask)  # (h, T, d_v)
    W_O = np.asarray(W_O, dtype=float)
    concat = merge_heads(heads)
    if W_O.ndim != 2 or W_O.shape[0] != concat.shape[1]:
        raise ValueError(f"W_O of shape {W_O.shape} does not multiply the concatenated heads {concat.shape}")
    return concat @ W_O


def head_attention_flops(T: int, d: int, h: int) -> int:
    """FLOPs of the scores and weighted sums of ``h`` heads of width ``d / h``: ``h * 4 T² (d / h) = 4 T² d``."""
    d_k = _check_heads(d, h)
    return h * (2 * T * T * d_k + 2 * T * T * d_k)
