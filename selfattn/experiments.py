"""Monte-Carlo experiments the lecture quotes: score spread and softmax saturation."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .numerics import softmax, softmax_jacobian

__all__ = ["SaturationResult", "saturation", "saturation_trials", "score_pairs", "score_spread", "score_stds"]


def score_stds(q: NDArray[np.floating], k: NDArray[np.floating]) -> tuple[float, float]:
    """Standard deviation of the inner products of paired rows, unscaled and divided by sqrt(d_k).

    Parameters
    ----------
    q, k : ndarray, shape (T, d_k)
        Row ``i`` of ``q`` is paired with row ``i`` of ``k``.
    """
    dots = np.einsum("nd,nd->n", q, k)  # (T,)
    return float(dots.std()), float((dots / np.sqrt(q.shape[1])).std())


def score_spread(
    head_sizes: Sequence[int], n_pairs: int = 5000, seed: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Empirical std of ``q.k`` and of ``q.k / sqrt(d_k)`` for unit-variance q, k.

    Parameters
    ----------
    head_sizes : sequence of int, length H
    n_pairs : int
        Independent (q, k) pairs per head size.

    Returns
    -------
    unscaled, scaled : ndarray, shape (H,) each
    """
    unscaled, scaled = [], []
    for _, q, k in score_pairs(head_sizes, n_pairs, seed):
        u, s = score_stds(q, k)
        unscaled.append(u)
        scaled.append(s)
    return np.array(unscaled), np.array(scaled)


def score_pairs(
    head_sizes: Sequence[int], n_pairs: int = 5000, seed: int = 0
) -> Iterator[tuple[int, NDArray[np.float64], NDArray[np.float64]]]:
    """The random pairs :func:`score_spread` measures, in its order: ``(d_k, q, k)`` per head size.

    Parameters
    ----------
    head_sizes : sequence of int
    n_pairs : int
        Independent pairs per head size.

    Yields
    ------
    d_k : int
    q, k : ndarray, shape (n_pairs, d_k) each
        Unit-variance normal entries; row ``i`` of ``q`` is paired with row ``i`` of ``k``.
    """
    rng = np.random.default_rng(seed)
    for d_k in head_sizes:
        q = rng.standard_normal((n_pairs, d_k))
        k = rng.standard_normal((n_pairs, d_k))
        yield d_k, q, k


@dataclass(frozen=True)
class SaturationResult:
    """Averages over trials of one query against ``T`` random keys.

    Attributes
    ----------
    max_weight : float
        Mean of the largest attention weight.
    jacobian_norm : float
        Mean Frobenius norm of the softmax Jacobian at the weights.
    score_grad_norm : float
        Mean norm of ``dL/ds`` for a unit-norm random upstream gradient ``dL/da``.
    """

    max_weight: float
    jacobian_norm: float
    score_grad_norm: float


def saturation_trials(
    d_k: int = 256, T: int = 16, trials: int = 2000, scaled: bool = True, seed: int = 0
) -> dict[str, NDArray[np.float64]]:
    """Per-trial numbers of the saturation demo: one query against ``T`` random keys, ``trials`` times.

    Returns
    -------
    dict of ndarray, each shape (trials,)
        ``max_weight`` (largest attention weight), ``jacobian_norm`` (Frobenius norm of the softmax
        Jacobian) and ``score_grad_norm`` (norm of ``dL/ds`` for a unit-norm random ``dL/da``).
    """
    s, g = _saturation_draws(d_k, T, trials, seed)
    if scaled:
        s = s / np.sqrt(d_k)
    a = softmax(s, axis=-1)  # (trials, T)
    J = np.array([softmax_jacobian(row) for row in a])  # (trials, T, T), each symmetric
    max_w = a.max(axis=-1)
    jac = np.linalg.norm(J, axis=(1, 2))
    grad = np.linalg.norm(np.einsum("njl,nj->nl", J, g), axis=-1)
    return {"max_weight": max_w, "jacobian_norm": jac, "score_grad_norm": grad}


@functools.lru_cache(maxsize=16)
def _saturation_draws(d_k: int, T: int, trials: int, seed: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The random part of :func:`saturation_trials`, shared by its scaled and unscaled runs.

    Returns
    -------
    scores : ndarray, shape (trials, T)
        Unscaled ``K @ q`` of each trial (``q`` of shape (d_k,), ``K`` of shape (T, d_k)).
    directions : ndarray, shape (trials, T)
        The trial's ``dL/da``, of norm 1.
    """
    rng = np.random.default_rng(seed)
    scores, directions = np.empty((trials, T)), np.empty((trials, T))
    for t in range(trials):  # drawn trial by trial, q then K then g; K is not kept
        q = rng.standard_normal(d_k)
        scores[t] = rng.standard_normal((T, d_k)) @ q
        directions[t] = rng.standard_normal(T)
    directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
    scores.flags.writeable = directions.flags.writeable = False  # cached: shared by every caller
    return scores, directions


def saturation(d_k: int = 256, T: int = 16, trials: int = 2000, scaled: bool = True, seed: int = 0) -> SaturationResult:
    """How much gradient reaches the scores at initialisation, with or without ``1/sqrt(d_k)`` (trial means)."""
    t = saturation_trials(d_k, T, trials, scaled, seed)
    return SaturationResult(*(float(np.mean(t[k])) for k in ("max_weight", "jacobian_norm", "score_grad_norm")))
