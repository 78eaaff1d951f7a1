"""Training one attention head by gradient descent, in NumPy: the backward pass and the runs of chapter 10.

The backward pass is the chain rule through ``O = softmax(c Q Kᵀ + M) V`` (``c = 1/sqrt(d_k)``, or 1
for the unscaled head), with the softmax's Jacobian of chapter 5 applied as a vector-Jacobian
product: ``Jᵀ g = a * (g - a·g)``, never the ``(T, T)`` matrix itself.

The task of every run is Problem 20's lookup, learned instead of programmed: ``m`` token types
embedded one-hot, a target map ``tau`` and a value table ``U`` (``W_V = U`` is fixed); the head
learns ``W_Q`` and ``W_K`` so that the token of type ``t`` reads the value ``u_tau(t)``. Each step
sees every type once, in a fresh random order, so the head must learn the types, not positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import numerics

__all__ = [
    "AttentionGrads",
    "LookupRun",
    "attention_backward",
    "attention_forward",
    "gradient_check",
    "lookup_loss",
    "moving_steps",
    "softmax_vjp",
    "still_share",
    "teacher_forcing_gap",
    "train_lookup",
]

Array = NDArray[np.floating]


def softmax_vjp(a: ArrayLike, g: ArrayLike) -> Array:
    """Vector-Jacobian product of the softmax: ``Jᵀ g = a * (g - a·g)`` along the last axis.

    Parameters
    ----------
    a : array_like, shape (..., T)
        Softmax weights (each row sums to 1).
    g : array_like, shape (..., T)
        Upstream gradient ``∂L/∂a``.

    Returns
    -------
    ndarray, shape (..., T)
        ``∂L/∂s``, the gradient at the scores. ``J`` is symmetric, so this is also ``J g``.
    """
    a, g = np.asarray(a, dtype=float), np.asarray(g, dtype=float)
    if a.shape != g.shape:
        raise ValueError(f"weights a and upstream gradient g must have the same shape, got {a.shape} and {g.shape}")
    return a * (g - np.sum(a * g, axis=-1, keepdims=True))


def _scale(d_k: int, scaled: bool) -> float:
    return 1.0 / np.sqrt(d_k) if scaled else 1.0


def attention_forward(
    Q: Array, K: Array, V: Array, mask: Array | None = None, scaled: bool = True
) -> tuple[Array, Array]:
    """Outputs and weights of one head, scaled by ``1/sqrt(d_k)`` or not.

    Parameters
    ----------
    Q : ndarray, shape (T_q, d_k)
    K : ndarray, shape (T_k, d_k)
    V : ndarray, shape (T_k, d_v)
    mask : ndarray, shape (T_q, T_k), optional
        Additive (0 keeps, ``-inf`` forbids).
    scaled : bool
        ``False`` drops the ``1/sqrt(d_k)``.

    Returns
    -------
    O : ndarray, shape (T_q, d_v)
    A : ndarray, shape (T_q, T_k)
    """
    S = _scale(Q.shape[-1], scaled) * Q @ K.T
    A = numerics.softmax(S if mask is None else S + mask, axis=-1)
    return A @ V, A


@dataclass(frozen=True)
class AttentionGrads:
    """Gradients of a loss with respect to one head's inputs and its scores.

    Attributes
    ----------
    Q : ndarray, shape (T_q, d_k)
    K : ndarray, shape (T_k, d_k)
    V : ndarray, shape (T_k, d_v)
    S : ndarray, shape (T_q, T_k)
        The gradient at the scores (after the scale), ``∂L/∂S``.
    """

    Q: Array
    K: Array
    V: Array
    S: Array


def attention_backward(Q: Array, K: Array, V: Array, A: Array, dO: Array, scaled: bool = True) -> AttentionGrads:
    """Backward pass of :func:`attention_forward`, given its weights ``A`` and ``dO = ∂L/∂O``.

    Parameters
    ----------
    Q, K, V : ndarray, shapes (T_q, d_k), (T_k, d_k), (T_k, d_v)
    A : ndarray, shape (T_q, T_k)
        The forward pass's weights (masked entries are 0 and receive no gradient).
    dO : ndarray, shape (T_q, d_v)
    scaled : bool
        As in the forward pass.

    Returns
    -------
    AttentionGrads
        ``dV = Aᵀ dO``, ``dS = softmax_vjp(A, dO Vᵀ)`` row by row, ``dQ = c dS K``, ``dK = c dSᵀ Q``.
    """
    c = _scale(Q.shape[-1], scaled)
    dS = softmax_vjp(A, dO @ V.T)
    return AttentionGrads(Q=c * dS @ K, K=c * dS.T @ Q, V=A.T @ dO, S=dS)


def gradient_check(T: int = 5, d_k: int = 4, d_v: int = 3, causal: bool = True, seed: int = 0,
                   h: float = 1e-6) -> float:
    """Largest difference between :func:`attention_backward` and central finite differences.

    The loss is ``L = sum(O * R)`` for a fixed random ``R`` (so ``dO = R``).

    Parameters
    ----------
    T, d_k, d_v : int
        Sequence length and widths of the random ``Q (T, d_k)``, ``K (T, d_k)``, ``V (T, d_v)``.
    causal : bool
        Apply the causal mask.
    seed : int
    h : float
        Finite-difference step.

    Returns
    -------
    float
        ``max |analytic - numeric|`` over every entry of ``dQ``, ``dK`` and ``dV``.
    """
    rng = np.random.default_rng(seed)
    Q, K, V, R = (rng.standard_normal(s) for s in ((T, d_k), (T, d_k), (T, d_v), (T, d_v)))
    mask = numerics.causal_mask(T) if causal else None

    def loss(Q_: Array, K_: Array, V_: Array) -> float:
        return float(np.sum(attention_forward(Q_, K_, V_, mask)[0] * R))

    _, A = attention_forward(Q, K, V, mask)
    grads = attention_backward(Q, K, V, A, R)
    err = 0.0
    for which, analytic in ((0, grads.Q), (1, grads.K), (2, grads.V)):
        args = [Q, K, V]
        numeric = np.zeros_like(analytic)
        for idx in np.ndindex(analytic.shape):
            up, down = [x.copy() for x in args], [x.copy() for x in args]
            up[which][idx] += h
            down[which][idx] -= h
            numeric[idx] = (loss(*up) - loss(*down)) / (2 * h)
        err = max(err, float(np.abs(analytic - numeric).max()))
    return err


def moving_steps(loss: ArrayLike, rtol: float = 1e-6) -> NDArray[np.int_]:
    """The training steps on which the loss moved by at least ``rtol`` of itself.

    Parameters
    ----------
    loss : array_like, shape (steps + 1,)
        Loss before each step and after the last.

    Returns
    -------
    ndarray of int, shape (k,)
        Step ``s`` (0-based) is listed when ``|loss[s + 1] - loss[s]| >= rtol * |loss[s]|``.
    """
    loss = np.asarray(loss, dtype=float)
    return np.flatnonzero(np.abs(np.diff(loss)) >= rtol * np.abs(loss[:-1]))


def still_share(loss: ArrayLike, rtol: float = 1e-6) -> float:
    """Share of training steps on which the loss moved by less than ``rtol`` of itself
    (the steps :func:`moving_steps` does not list).

    Parameters
    ----------
    loss : array_like, shape (steps + 1,)

    Returns
    -------
    float in [0, 1]
    """
    return 1.0 - len(moving_steps(loss, rtol)) / (len(loss) - 1)


def lookup_loss(O: Array, target: Array) -> float:
    """Mean squared error ``sum((O - target)²) / (2 T)`` of a head's outputs.

    Parameters
    ----------
    O, target : ndarray, shape (T, d_v)
    """
    return float(np.sum((O - target) ** 2) / (2 * O.shape[0]))


@dataclass(frozen=True)
class LookupRun:
    """What :func:`train_lookup` recorded.

    Attributes
    ----------
    loss : ndarray, shape (steps + 1,)
        Loss before each step and after the last.
    score_grad_norm : ndarray, shape (steps + 1,)
        Frobenius norm of ``∂L/∂S`` at the same moments.
    max_weight : ndarray, shape (steps + 1,)
        Mean over queries of the largest weight.
    snapshot_steps : ndarray, shape (F,)
        Steps at which ``snapshots`` were taken.
    snapshots : ndarray, shape (F, m, m)
        Attention weights with the types in order 1..m (row: query type, column: key type).
    target_weight : ndarray, shape (steps + 1,)
        Mean over queries of the weight on the target type ``tau(t)``.
    """

    loss: Array
    score_grad_norm: Array
    max_weight: Array
    snapshot_steps: NDArray[np.int_]
    snapshots: Array
    target_weight: Array


def train_lookup(tau: ArrayLike, d_k: int = 16, scaled: bool = True, steps: int = 300, lr: float = 1.0,
                 d_v: int = 16, seed: int = 0, snapshots: int | Sequence[int] = 13) -> LookupRun:
    """Learn Problem 20's lookup by gradient descent on ``W_Q, W_K`` (``W_V = U`` fixed).

    Parameters
    ----------
    tau : array_like of int, shape (m,)
        Target map (0-based): type ``t`` must read the value of type ``tau[t]``.
    d_k : int
        Head width; ``W_Q, W_K`` have shape (m, d_k) with standard normal entries, so queries and
        keys have unit-variance entries.
    scaled : bool
        Divide the scores by ``sqrt(d_k)``. Runs that differ only here start from the same
        ``W_Q, W_K`` and see the same orders.
    steps : int
        Gradient-descent steps, each on one random order of the ``m`` types.
    lr : float
        Learning rate.
    d_v : int
        Width of the random value table ``U`` (m, d_v). With ``d_v >= m`` the values are linearly
        independent, so only the lookup's weights reach zero loss (a narrower table lets a blend of
        other values stand in for the target).
    seed : int
    snapshots : int or sequence of int
        The steps (0 to ``steps``) to record the weights at, or how many evenly spaced ones (first
        and last included).

    Returns
    -------
    LookupRun
    """
    tau = np.asarray(tau, dtype=int)
    m = len(tau)
    rng = np.random.default_rng(seed)
    W_Q, W_K = rng.standard_normal((2, m, d_k))
    U = rng.standard_normal((m, d_v))
    orders = [rng.permutation(m) for _ in range(steps + 1)]
    if isinstance(snapshots, int):
        snap_at = np.unique(np.linspace(0, steps, snapshots).round().astype(int))
    else:
        snap_at = np.unique(np.asarray(snapshots, dtype=int))
        if snap_at.size == 0 or snap_at[0] < 0 or snap_at[-1] > steps:
            raise ValueError(f"snapshot steps must lie in 0..{steps}, got {list(snapshots)}")
    loss, gnorm, top, on_target, frames = [], [], [], [], []
    for step, order in enumerate(orders):
        X = np.eye(m)[order]                       # (m, m): row i is the one-hot of type order[i]
        Q, K, V = X @ W_Q, X @ W_K, X @ U
        target = U[tau[order]]                     # (m, d_v)
        O, A = attention_forward(Q, K, V, scaled=scaled)
        dO = (O - target) / m
        grads = attention_backward(Q, K, V, A, dO, scaled=scaled)
        loss.append(lookup_loss(O, target))
        gnorm.append(float(np.linalg.norm(grads.S)))
        top.append(float(A.max(axis=1).mean()))
        A_types = np.empty_like(A)                 # weights indexed by type, not position
        A_types[np.ix_(order, order)] = A
        on_target.append(float(A_types[np.arange(m), tau].mean()))
        if step in snap_at:
            frames.append(A_types)
        if step < steps:
            W_Q -= lr * X.T @ grads.Q
            W_K -= lr * X.T @ grads.K
    return LookupRun(np.array(loss), np.array(gnorm), np.array(top), snap_at, np.array(frames), np.array(on_target))


def teacher_forcing_gap(T: int = 8, d_model: int = 6, d_k: int = 4, seed: int = 0) -> float:
    """Largest difference between one causal pass over ``T`` tokens and ``T`` separate passes.

    Pass ``t`` sees only the first ``t + 1`` tokens (no mask) and keeps its last output: the
    prediction made at position ``t``. With the causal mask one pass computes all ``T`` of them.

    Parameters
    ----------
    T, d_model, d_k : int
        Sequence length, embedding width of the random ``X (T, d_model)`` and head width.
    seed : int

    Returns
    -------
    float
        ``max |one pass - T passes|`` over the ``(T, d_k)`` outputs.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d_model))
    W_Q, W_K, W_V = rng.standard_normal((3, d_model, d_k)) / np.sqrt(d_model)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    one_pass = numerics.attention(Q, K, V, numerics.causal_mask(T))
    separate = np.stack([numerics.attention(Q[: t + 1], K[: t + 1], V[: t + 1])[-1] for t in range(T)])
    return float(np.abs(one_pass - separate).max())
