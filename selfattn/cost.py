"""The lecture's cost model of one transformer layer, in floating-point operations.

A multiply-add counts as 2 FLOPs.  With sequence length ``T`` and model width ``d``:

* scores ``Q K^T``: ``2 T^2 d``; weighted sum ``A V``: ``2 T^2 d``;
* projections (Q, K, V, output: ``4 * 2 T d^2``) plus the MLP with hidden width
  ``4d`` (``2 * 2 T d (4d)``): ``24 T d^2`` in all.

Attention's quadratic part overtakes the rest when ``4 T^2 d = 24 T d^2``, i.e.
at ``T = 6 d``.
"""

from __future__ import annotations

__all__ = [
    "attention_flops",
    "crossover_length",
    "layer_flops",
    "projection_mlp_flops",
    "score_flops",
    "score_matrix_bytes",
    "weighted_sum_flops",
]


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return value


def score_flops(T: int, d: int) -> int:
    """FLOPs of ``Q K^T`` for ``T`` tokens of width ``d``: ``2 T^2 d``."""
    return 2 * _positive("T", T) ** 2 * _positive("d", d)


def weighted_sum_flops(T: int, d: int) -> int:
    """FLOPs of ``A V``: ``2 T^2 d``."""
    return 2 * _positive("T", T) ** 2 * _positive("d", d)


def attention_flops(T: int, d: int) -> int:
    """FLOPs of ``Q K^T`` plus ``A V``: ``4 T^2 d``."""
    return score_flops(T, d) + weighted_sum_flops(T, d)


def projection_mlp_flops(T: int, d: int) -> int:
    """FLOPs of the four projections and the 4d-wide MLP: ``24 T d^2``."""
    return 24 * _positive("T", T) * _positive("d", d) ** 2


def layer_flops(T: int, d: int) -> int:
    """All FLOPs of one layer in this model: ``4 T^2 d + 24 T d^2``."""
    return attention_flops(T, d) + projection_mlp_flops(T, d)


def crossover_length(d: int) -> int:
    """Sequence length at which attention's FLOPs equal the rest of the layer: ``6 d``."""
    return 6 * _positive("d", d)


def score_matrix_bytes(T: int, heads: int = 1, bytes_per_entry: int = 4) -> int:
    """Memory of the materialised ``(T, T)`` score matrix for ``heads`` heads."""
    return _positive("T", T) ** 2 * _positive("heads", heads) * _positive("bytes_per_entry", bytes_per_entry)
