"""Problem 20's hand-built lookup, read one way by its checks and by ``compare()``.

A submission is three matrices ``(W_Q, W_K, W_V)`` over ``m`` one-hot token types. Both the
record's verifier (:mod:`selfattn.checks.exercises`) and the notebook's side-by-side picture
(:mod:`selfattn.compare`) first ask :func:`shape_problem`, then look at what the matrices do on a
sequence of types with :func:`view`. The package holds no answer: only the reading of one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..token_lookup import token_weights
from .findings import Finding, Kind

__all__ = ["shape_problem", "view"]


def shape_problem(W: Sequence[np.ndarray], types: int, d_v: int) -> Finding | None:
    """Why ``W = (W_Q, W_K, W_V)`` cannot be a lookup over ``types`` token types with values of
    width ``d_v``, or ``None``: each needs one row per type, ``W_Q`` and ``W_K`` the same number of
    columns (d_k), ``W_V`` ``d_v`` columns, and every entry finite."""
    for name, M in zip(("W_Q", "W_K", "W_V"), W, strict=True):
        if M.ndim != 2 or M.shape[0] != types:
            return Finding(f"{name} has shape {M.shape}: for {types} token types it needs {types} rows, one per type",
                           Kind.WRONG_SHAPE)
    W_Q, W_K, W_V = W
    if W_Q.shape[1] != W_K.shape[1]:
        return Finding(f"W_Q {W_Q.shape} and W_K {W_K.shape} need the same number of columns (d_k)", Kind.WRONG_SHAPE)
    if W_V.shape[1] != d_v:
        return Finding(f"W_V has shape {W_V.shape}: it needs {d_v} columns, the width of values", Kind.WRONG_SHAPE)
    if not all(np.isfinite(M).all() for M in W):
        return Finding("the matrices contain NaN or inf", Kind.NAN)
    return None


def view(W: Sequence[np.ndarray], sequence: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """What ``W = (W_Q, W_K, W_V)`` (shapes as :func:`shape_problem` wants) does on ``sequence``
    (T token types): the attention weights ``(T, T)``, one row per query, and the outputs
    ``(T, d_v)``."""
    W_Q, W_K, W_V = W
    X = np.eye(W_Q.shape[0])[np.asarray(sequence)]  # (T, m) one-hot rows
    with np.errstate(all="ignore"):
        A = token_weights(X, W_Q, W_K)  # (T, T)
        return A, A @ (X @ W_V)  # (T, T), (T, d_v)
