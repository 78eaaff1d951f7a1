"""The lecture's hand-sized worked examples, as data plus the library's formulas."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .numerics import attention, attention_weights, scaled_scores

__all__ = [
    "HUNGRY",
    "SAT",
    "WorkedExample",
    "conv_layers_to_connect",
    "layer_arrays",
    "lecture_shapes",
    "offset_rotation",
    "receptive_field",
    "shift_matrix",
    "sinusoidal_positions",
]


@dataclass(frozen=True)
class WorkedExample:
    """One query attending over a short sentence.

    Attributes
    ----------
    tokens : tuple of str, length T
    query_token : str
        The token whose output is computed.
    q : ndarray, shape (d_k,)
    K : ndarray, shape (T, d_k)
    V : ndarray, shape (T, d_v)
    """

    tokens: tuple[str, ...]
    query_token: str
    q: NDArray[np.float64]
    K: NDArray[np.float64]
    V: NDArray[np.float64]

    @property
    def d_k(self) -> int:
        return int(self.q.shape[-1])

    def raw_scores(self) -> NDArray[np.float64]:
        """Inner products ``<q, k_j>``, shape (T,)."""
        return self.K @ self.q

    def scores(self) -> NDArray[np.float64]:
        """Scaled scores ``<q, k_j> / sqrt(d_k)``, shape (T,)."""
        return scaled_scores(self.q[None, :], self.K)[0]

    def weights(self) -> NDArray[np.float64]:
        """Attention weights over the T tokens, shape (T,)."""
        return attention_weights(self.q[None, :], self.K)[0]

    def output(self) -> NDArray[np.float64]:
        """The query token's output vector, shape (d_v,)."""
        return attention(self.q[None, :], self.K, self.V)[0]


def _arr(rows: list[list[float]]) -> NDArray[np.float64]:
    return np.array(rows, dtype=np.float64)


#: "the cat was hungry", d_k = 4: "hungry" looks for a subject (first coordinate).
HUNGRY = WorkedExample(
    tokens=("the", "cat", "was", "hungry"),
    query_token="hungry",
    q=np.array([2.0, 0.0, 0.0, 0.0]),
    K=_arr([[-1, 0, 0, 0], [2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]),
    V=_arr([[0, 0], [1, 0], [0, 1], [0, 1]]),
)

#: "the cat sat", d_k = 2, one-hot values: the output equals the weights.
SAT = WorkedExample(
    tokens=("the", "cat", "sat"),
    query_token="sat",
    q=np.array([1.0, 0.0]),
    K=_arr([[0, 1], [2, 0], [1, 1]]),
    V=np.eye(3),
)


def shift_matrix(n: int, k: int = 1) -> NDArray[np.float64]:
    """Cyclic shift (circulant permutation) matrix of Problem 19.

    Returns
    -------
    P : ndarray, shape (n, n)
        ``(P @ X)[i] = X[(i - k) mod n]``: every row moves ``k`` places down,
        the last ``k`` wrap to the top.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return np.roll(np.eye(n), k, axis=0)


def _frequencies(d: int, base: float) -> NDArray[np.float64]:
    """The ``d / 2`` angular frequencies ``base^(-2f/d)``, ``f = 0, ..., d/2 - 1``, of the sinusoidal encoding."""
    if isinstance(d, bool) or not isinstance(d, int) or d < 2 or d % 2:
        raise ValueError(f"d must be an even integer >= 2, got {d!r}")
    return base ** (-np.arange(0, d, 2) / d)


def sinusoidal_positions(T: int, d: int, base: float = 10000.0) -> NDArray[np.float64]:
    """Sinusoidal position encodings (Vaswani et al., 2017) of positions ``1, ..., T``.

    Returns
    -------
    Z : ndarray, shape (T, d)
        Row ``i - 1`` is ``z_i``: ``Z[i-1, 2f] = sin(w_f i)`` and ``Z[i-1, 2f+1] = cos(w_f i)`` with
        ``w_f = base^(-2f/d)``, ``f = 0, ..., d/2 - 1`` (the book counts ``f`` from 1).
    """
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    angles = np.arange(1, T + 1)[:, None] * _frequencies(d, base)[None, :]   # (T, d/2)
    Z = np.empty((T, d))
    Z[:, 0::2], Z[:, 1::2] = np.sin(angles), np.cos(angles)
    return Z


def offset_rotation(offset: float, d: int, base: float = 10000.0) -> NDArray[np.float64]:
    """The matrix ``G`` with ``G @ z_i = z_(i + offset)`` for every position ``i``.

    ``z_i`` is row ``i - 1`` of :func:`sinusoidal_positions` ``(T, d)`` with the same ``d`` and ``base``.

    Block diagonal: for each frequency ``w`` the 2x2 rotation ``[[cos wΔ, sin wΔ], [-sin wΔ, cos wΔ]]``
    acting on the pair ``(sin wi, cos wi)``; orthogonal, and independent of ``i``.

    Returns
    -------
    G : ndarray, shape (d, d)
    """
    G = np.zeros((d, d))
    for f, w in enumerate(_frequencies(d, base)):
        c, s = np.cos(w * offset), np.sin(w * offset)
        G[2 * f:2 * f + 2, 2 * f:2 * f + 2] = [[c, s], [-s, c]]
    return G


def receptive_field(layers: int, kernel: int = 3) -> int:
    """Positions seen by one output of ``layers`` stacked stride-1 convolutions: ``(kernel-1) L + 1``.

    For the lecture's 3-tap kernel this is ``2L + 1``.
    """
    if layers < 0 or kernel < 1:
        raise ValueError(f"need layers >= 0 and kernel >= 1, got layers={layers}, kernel={kernel}")
    return (kernel - 1) * layers + 1


def conv_layers_to_connect(distance: int, kernel: int = 3) -> int:
    """Fewest stacked convolutions whose receptive field spans two tokens ``distance`` apart."""
    if distance < 0 or kernel < 2:
        raise ValueError(f"need distance >= 0 and kernel >= 2, got distance={distance}, kernel={kernel}")
    return -(-distance // (kernel - 1))


def layer_arrays(T: int = 10, d: int = 512, d_k: int = 64, d_v: int = 64,
                 rng: np.random.Generator | None = None) -> list[tuple[str, NDArray[np.float64]]]:
    """Every array of one attention layer run on random numbers, by name, in the order of the layer.

    ``X`` and then ``W_Q``, ``W_K``, ``W_V`` are drawn from ``rng`` (by default a new generator
    seeded 0).

    Returns
    -------
    list of (str, ndarray)
        ``X`` (T, d), ``W_Q, W_K`` (d, d_k), ``W_V`` (d, d_v), ``Q``, ``K`` (T, d_k), ``V`` (T, d_v),
        the scaled scores (T, T), the weights ``A`` (T, T) and the output (T, d_v).
    """
    rng = np.random.default_rng(0) if rng is None else rng
    X = rng.standard_normal((T, d))
    W_Q, W_K, W_V = (rng.standard_normal((d, w)) / np.sqrt(d) for w in (d_k, d_k, d_v))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return [("X", X), ("W_Q, W_K", W_Q), ("W_V", W_V), ("Q", Q), ("K", K), ("V", V),
            ("Q Kᵀ / √d_k", scaled_scores(Q, K)), ("A = softmax(·)", attention_weights(Q, K)),
            ("output A V", attention(Q, K, V))]


def lecture_shapes(T: int = 10, d: int = 512, d_k: int = 64, d_v: int = 64) -> NDArray[np.int64]:
    """Shapes of Q, K, V, Q Kᵀ and the output, found by running a random layer (:func:`layer_arrays`).

    Returns
    -------
    ndarray, shape (5, 2)
        Rows in that order; the lecture's question uses the defaults.
    """
    arrays = dict(layer_arrays(T, d, d_k, d_v))
    return np.array([arrays[n].shape for n in ("Q", "K", "V", "Q Kᵀ / √d_k", "output A V")])
