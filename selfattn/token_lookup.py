"""What three matrices do to a sequence of one-hot tokens: Problem 20's check and picture.

Problem 20 asks for matrices ``W_Q, W_K, W_V`` that make attention a lookup table. Its check
(:mod:`selfattn.checks.exercises`) and :func:`selfattn.compare.compare` judge the student's
matrices by their effect, computed live in the student's kernel, where the package holds no
graded function (see :mod:`selfattn.withheld`); so this module computes that effect itself,
for one-hot tokens only. It is not a graded function's signature and no graded function calls it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["token_weights"]


def token_weights(X: NDArray[np.float64], W_Q: NDArray[np.float64], W_K: NDArray[np.float64]) -> NDArray[np.float64]:
    """The weights the tokens ``X`` give each other through ``W_Q`` and ``W_K``.

    Parameters
    ----------
    X : ndarray, shape (T, m)
        One-hot rows: token ``i`` has type ``argmax X[i]``.
    W_Q, W_K : ndarray, shape (m, d_k)

    Returns
    -------
    ndarray, shape (T, T)
        Row ``i`` is the distribution of query ``i`` over the keys (scores scaled by 1/√d_k).
    """
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(W_Q.shape[1])  # (T, T)
    with np.errstate(all="ignore"):
        top = np.max(scores, axis=1, keepdims=True)
        e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
        return e / e.sum(axis=1, keepdims=True)
