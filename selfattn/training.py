"""Training one attention head by gradient descent, in NumPy: the backward pass and the runs of chapter 10.

The backward pass is the chain rule through ``O = softmax(c Q Kᵀ + M) V`` (``c = 1/sqrt(d_k)``, or 1
for the unscaled head), with the softmax's Jacobian of chapter 5 applied as a vector-Jacobian
product: ``Jᵀ g = a * (g - a·g)``, never the ``(T, T)`` matrix itself. Every array may carry leading
batch axes (one head per seed).

The task of every run is Problem 20's lookup, learned instead of programmed: ``m`` token types
embedded one-hot, a target map ``tau`` and a value table ``U`` (``W_V = U`` is fixed); the head
learns ``W_Q`` and ``W_K`` so that the token of type ``t`` reads the value ``u_tau(t)``. The two heads
are compared at the same :func:`score_step` (the learning rate as the softmax's input feels it), over
a sweep of score steps and seeds (:func:`sweep_lookup`).
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
    "LookupSweep",
    "attention_backward",
    "attention_forward",
    "gradient_check",
    "lookup_loss",
    "moving_steps",
    "rate_for_score_step",
    "score_step",
    "softmax_vjp",
    "still_share",
    "sweep_lookup",
    "teacher_forcing_gap",
    "teacher_forcing_gradient_gap",
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
    Q : ndarray, shape (..., T_q, d_k)
    K : ndarray, shape (..., T_k, d_k)
    V : ndarray, shape (..., T_k, d_v)
    mask : ndarray, shape (T_q, T_k), optional
        Additive (0 keeps, ``-inf`` forbids).
    scaled : bool
        ``False`` drops the ``1/sqrt(d_k)``.

    Returns
    -------
    O : ndarray, shape (..., T_q, d_v)
    A : ndarray, shape (..., T_q, T_k)
    """
    S = _scale(Q.shape[-1], scaled) * Q @ np.swapaxes(K, -1, -2)
    A = numerics.softmax(S if mask is None else S + mask, axis=-1)
    return A @ V, A


@dataclass(frozen=True)
class AttentionGrads:
    """Gradients of a loss with respect to one head's inputs and its scores.

    Attributes
    ----------
    Q : ndarray, shape (..., T_q, d_k)
    K : ndarray, shape (..., T_k, d_k)
    V : ndarray, shape (..., T_k, d_v)
    S : ndarray, shape (..., T_q, T_k)
        The gradient at the softmax's input ``c Q Kᵀ`` (for the scaled head, at the scores ``S``).
    """

    Q: Array
    K: Array
    V: Array
    S: Array


def attention_backward(Q: Array, K: Array, V: Array, A: Array, dO: Array, scaled: bool = True) -> AttentionGrads:
    """Backward pass of :func:`attention_forward`, given its weights ``A`` and ``dO = ∂L/∂O``.

    Parameters
    ----------
    Q, K, V : ndarray, shapes (..., T_q, d_k), (..., T_k, d_k), (..., T_k, d_v)
    A : ndarray, shape (..., T_q, T_k)
        The forward pass's weights (masked entries are 0 and receive no gradient).
    dO : ndarray, shape (..., T_q, d_v)
    scaled : bool
        As in the forward pass.

    Returns
    -------
    AttentionGrads
        ``dV = Aᵀ dO``, ``dS = softmax_vjp(A, dO Vᵀ)`` row by row, ``dQ = c dS K``, ``dK = c dSᵀ Q``.
    """
    c = _scale(Q.shape[-1], scaled)
    dS = softmax_vjp(A, dO @ np.swapaxes(V, -1, -2))
    dS_T = np.swapaxes(dS, -1, -2)
    return AttentionGrads(Q=c * dS @ K, K=c * dS_T @ Q, V=np.swapaxes(A, -1, -2) @ dO, S=dS)


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


def lookup_loss(O: Array, target: Array) -> float | Array:
    """Half the mean squared distance ``sum((O - target)²) / (2 T)`` between outputs and targets.

    Parameters
    ----------
    O, target : ndarray, shape (..., T, d_v)

    Returns
    -------
    float, or ndarray of shape (...) when there are leading axes
    """
    loss = np.sum((O - target) ** 2, axis=(-2, -1)) / (2 * O.shape[-2])
    return float(loss) if np.ndim(loss) == 0 else loss


def score_step(lr: float, d_k: int, scaled: bool) -> float:
    """The learning rate as the softmax's input feels it: ``lr * c²``.

    To first order a step of gradient descent on ``W_Q, W_K`` moves the softmax's input ``c Q Kᵀ`` by
    ``-lr c² (G K Kᵀ + Q Qᵀ G)``, ``G`` its gradient: at the same weights, the unscaled head (``c = 1``)
    moves it ``d_k`` times as far as the scaled one (``c = 1/sqrt(d_k)``) at the same ``lr``.

    Parameters
    ----------
    lr : float
    d_k : int
    scaled : bool
    """
    return lr * _scale(d_k, scaled) ** 2


def rate_for_score_step(step: float, d_k: int, scaled: bool) -> float:
    """The learning rate whose :func:`score_step` is ``step`` (its inverse)."""
    return step / _scale(d_k, scaled) ** 2


@dataclass(frozen=True)
class LookupRun:
    """What :func:`train_lookup` recorded.

    Attributes
    ----------
    loss : ndarray, shape (steps + 1,)
        Loss before each step and after the last.
    score_grad_norm : ndarray, shape (steps + 1,)
        Frobenius norm of the gradient at the softmax's input ``c Q Kᵀ`` at the same moments.
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


def _draw(tau: NDArray[np.int_], d_k: int, d_v: int, steps: int, seed: int,
          shuffle: bool) -> tuple[Array, Array, Array, NDArray[np.int_]]:
    """One seed's ``W_Q, W_K`` (m, d_k), ``U`` (m, d_v) and orders (steps + 1, m); the same draws
    whether or not the orders are used (``shuffle=False`` shows the types in order 0..m-1)."""
    m = len(tau)
    rng = np.random.default_rng(seed)
    W_Q, W_K = rng.standard_normal((2, m, d_k))
    U = rng.standard_normal((m, d_v))
    orders = np.array([rng.permutation(m) for _ in range(steps + 1)])
    if not shuffle:
        orders = np.broadcast_to(np.arange(m), orders.shape).copy()
    return W_Q, W_K, U, orders


def _descend(tau: NDArray[np.int_], W_Q: Array, W_K: Array, U: Array, orders: NDArray[np.int_], scaled: bool,
             lr: float, snap_at: NDArray[np.int_]) -> tuple[Array, ...]:
    """Gradient descent on ``N`` independent heads at once (one per seed).

    Parameters
    ----------
    tau : ndarray of int, shape (m,)
    W_Q, W_K : ndarray, shape (N, m, d_k)
        Changed in place.
    U : ndarray, shape (N, m, d_v)
    orders : ndarray of int, shape (N, steps + 1, m)
    scaled : bool
    lr : float
    snap_at : ndarray of int, shape (F,)

    Returns
    -------
    loss, score_grad_norm, max_weight, target_weight : ndarray, shape (N, steps + 1)
    frames : ndarray, shape (N, F, m, m)
        Weights indexed by type (row: query type, column: key type) at the steps ``snap_at``.
    """
    N, m = W_Q.shape[0], len(tau)
    eye, seeds = np.eye(m), np.arange(N)[:, None, None]
    loss, gnorm, top, on_target, frames = [], [], [], [], []
    for step in range(orders.shape[1]):
        order = orders[:, step]                    # (N, m)
        X = eye[order]                             # (N, m, m): row i is the one-hot of type order[i]
        Q, K, V = X @ W_Q, X @ W_K, X @ U
        target = U[np.arange(N)[:, None], tau[order]]   # (N, m, d_v)
        O, A = attention_forward(Q, K, V, scaled=scaled)
        grads = attention_backward(Q, K, V, A, (O - target) / m, scaled=scaled)
        loss.append(lookup_loss(O, target))
        gnorm.append(np.linalg.norm(grads.S, axis=(-2, -1)))
        top.append(A.max(axis=-1).mean(axis=-1))
        where = np.argsort(order, axis=-1)         # position of each type
        A_types = A[seeds, where[:, :, None], where[:, None, :]]   # weights indexed by type, not position
        on_target.append(A_types[:, np.arange(m), tau].mean(axis=-1))
        if step in snap_at:
            frames.append(A_types)
        if step < orders.shape[1] - 1:
            X_T = np.swapaxes(X, -1, -2)
            W_Q -= lr * X_T @ grads.Q
            W_K -= lr * X_T @ grads.K
    return (*(np.stack(r, axis=1) for r in (loss, gnorm, top, on_target)), np.stack(frames, axis=1))


def _snapshot_steps(steps: int, snapshots: int | Sequence[int]) -> NDArray[np.int_]:
    if isinstance(snapshots, int):
        return np.unique(np.linspace(0, steps, snapshots).round().astype(int))
    snap_at = np.unique(np.asarray(snapshots, dtype=int))
    if snap_at.size == 0 or snap_at[0] < 0 or snap_at[-1] > steps:
        raise ValueError(f"snapshot steps must lie in 0..{steps}, got {list(snapshots)}")
    return snap_at


def train_lookup(tau: ArrayLike, d_k: int = 16, scaled: bool = True, steps: int = 300, lr: float = 1.0,
                 d_v: int = 16, seed: int = 0, snapshots: int | Sequence[int] = 13,
                 shuffle: bool = True) -> LookupRun:
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
        Gradient-descent steps, each on all ``m`` types once.
    lr : float
        Learning rate (:func:`score_step` gives the rate the softmax's input feels).
    d_v : int
        Width of the random value table ``U`` (m, d_v). With ``d_v >= m`` the values are linearly
        independent, so only the lookup's weights reach zero loss (a narrower table lets a blend of
        other values stand in for the target).
    seed : int
    snapshots : int or sequence of int
        The steps (0 to ``steps``) to record the weights at, or how many evenly spaced ones (first
        and last included).
    shuffle : bool
        Show the types in a fresh random order at every step (else in order 0..m-1). By permutation
        equivariance the order changes nothing but rounding.

    Returns
    -------
    LookupRun
    """
    tau = np.asarray(tau, dtype=int)
    snap_at = _snapshot_steps(steps, snapshots)
    W_Q, W_K, U, orders = _draw(tau, d_k, d_v, steps, seed, shuffle)
    *curves, frames = _descend(tau, W_Q[None], W_K[None], U[None], orders[None], scaled, lr, snap_at)
    loss, gnorm, top, on_target = (c[0] for c in curves)
    return LookupRun(loss, gnorm, top, snap_at, frames[0], on_target)


@dataclass(frozen=True)
class LookupSweep:
    """What :func:`sweep_lookup` recorded: both heads, every score step, every seed.

    Axis 0 of every array is the head: 0 scaled (``c = 1/sqrt(d_k)``), 1 unscaled (``c = 1``).

    Attributes
    ----------
    score_steps : ndarray, shape (R,)
        The :func:`score_step` of each run; each head's learning rate is the one giving it.
    seeds : ndarray of int, shape (N,)
    loss : ndarray, shape (2, R, N, steps + 1)
    target_weight : ndarray, shape (2, R, N, steps + 1)
        Mean over queries of the weight on the target.
    born_weights : ndarray, shape (2, N, m, m)
        Weights at step 0 by type (the same at every rate).
    final_weights : ndarray, shape (2, R, N, m, m)
        Weights after the last step by type.
    """

    score_steps: Array
    seeds: NDArray[np.int_]
    loss: Array
    target_weight: Array
    born_weights: Array
    final_weights: Array

    def reached(self, target: float = 0.99) -> NDArray[np.bool_]:
        """Runs whose mean weight on the target ends at ``target`` or more, shape (2, R, N)."""
        return self.target_weight[..., -1] >= target


def sweep_lookup(tau: ArrayLike, score_steps: Sequence[float], seeds: Sequence[int], d_k: int = 256,
                 steps: int = 300, d_v: int = 16) -> LookupSweep:
    """Both heads of :func:`train_lookup`, at the same :func:`score_step`, over seeds and rates.

    Seed ``s`` starts both heads from the ``W_Q, W_K, U`` and orders of ``train_lookup(seed=s)``; at
    score step ``e`` the scaled head's learning rate is ``e d_k`` and the unscaled head's ``e``, so
    at the start a gradient moves the softmax's input of both by the same amount.

    Parameters
    ----------
    tau : array_like of int, shape (m,)
    score_steps : sequence of float, length R
    seeds : sequence of int, length N
    d_k, steps, d_v : int
        As in :func:`train_lookup`.

    Returns
    -------
    LookupSweep
    """
    tau = np.asarray(tau, dtype=int)
    if len(seeds) == 0 or len(score_steps) == 0:
        raise ValueError("sweep_lookup needs at least one seed and one score step")
    draws = [_draw(tau, d_k, d_v, steps, s, True) for s in seeds]
    W_Q, W_K, U, orders = (np.stack(parts) for parts in zip(*draws, strict=True))
    snap_at = np.array([0, steps])
    loss, target, born, final = [], [], [], []
    for scaled in (True, False):
        per_rate = [_descend(tau, W_Q.copy(), W_K.copy(), U, orders, scaled, rate_for_score_step(e, d_k, scaled),
                             snap_at) for e in score_steps]
        loss.append([r[0] for r in per_rate])
        target.append([r[3] for r in per_rate])
        born.append(per_rate[0][4][:, 0])
        final.append([r[4][:, -1] for r in per_rate])
    return LookupSweep(np.asarray(score_steps, dtype=float), np.asarray(seeds, dtype=int), np.array(loss),
                       np.array(target), np.array(born), np.array(final))


def teacher_forcing_gap(T: int = 8, d_model: int = 6, d_k: int = 4, seed: int = 0) -> float:
    """Largest difference between one causal pass over ``T`` tokens and ``T`` separate passes.

    Pass ``i`` sees only the first ``i + 1`` tokens (no mask) and keeps its last output: the
    prediction made at position ``i``. With the causal mask one pass computes all ``T`` of them.

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
    separate = np.stack([numerics.attention(Q[: i + 1], K[: i + 1], V[: i + 1])[-1] for i in range(T)])
    return float(np.abs(one_pass - separate).max())


def teacher_forcing_gradient_gap(T: int = 8, d_k: int = 4, d_v: int = 3, seed: int = 0) -> tuple[float, float]:
    """Teacher forcing's training step: all ``T`` losses and their gradient from one causal pass.

    Position ``i`` predicts a fixed random target ``y_i`` from the true prefix, with loss
    ``||o_i - y_i||² / 2``; the training loss is the sum over the ``T`` positions. One causal pass and
    one backward pass give it and its gradient; ``T`` separate passes over the prefixes (pass ``i``
    back-propagating its own last output's loss) give the same, summed.

    Parameters
    ----------
    T, d_k, d_v : int
        Sequence length and widths of the random ``Q (T, d_k)``, ``K (T, d_k)``, ``V (T, d_v)``.
    seed : int

    Returns
    -------
    (float, float)
        ``|one-pass loss - summed losses|`` and ``max |one-pass gradient - summed gradients|`` over
        the gradients with respect to ``Q``, ``K`` and ``V``.
    """
    rng = np.random.default_rng(seed)
    Q, K, V, Y = (rng.standard_normal(s) for s in ((T, d_k), (T, d_k), (T, d_v), (T, d_v)))
    O, A = attention_forward(Q, K, V, numerics.causal_mask(T))
    one_loss = float(np.sum((O - Y) ** 2) / 2)
    one = attention_backward(Q, K, V, A, O - Y)
    loss, dQ, dK, dV = 0.0, np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)
    for i in range(T):
        O_i, A_i = attention_forward(Q[: i + 1], K[: i + 1], V[: i + 1])
        dO_i = np.zeros_like(O_i)
        dO_i[-1] = O_i[-1] - Y[i]
        loss += float(np.sum(dO_i[-1] ** 2) / 2)
        g = attention_backward(Q[: i + 1], K[: i + 1], V[: i + 1], A_i, dO_i)
        dQ[: i + 1] += g.Q
        dK[: i + 1] += g.K
        dV[: i + 1] += g.V
    gap = max(float(np.abs(a - b).max()) for a, b in ((one.Q, dQ), (one.K, dK), (one.V, dV)))
    return abs(one_loss - loss), gap


#: Chapter 10's sweep: the score steps (2^-12 to 1) and seeds both heads are run at, and the mean weight
#: on the target that counts as having learned the lookup.
SWEEP_SCORE_STEPS = tuple(2.0 ** k for k in range(-12, 1, 2))
SWEEP_SEEDS = tuple(range(32))
REACHED = 0.9
