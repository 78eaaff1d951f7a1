"""Benchmarks of the helper package's attention kernels."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import selfattn as sa
from selfattn.measure import best_time, peak_memory


def qkv(T: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((T, d)) for _ in range(3))  # type: ignore[return-value]


def paired_best(a: Callable[[], object], b: Callable[[], object], repeat: int = 21) -> tuple[float, float]:
    """Best times of ``a`` and ``b``, measured alternately so that drifts of a shared machine hit both."""
    a(), b()
    ta, tb = [], []
    for _ in range(repeat):
        for fn, out in ((a, ta), (b, tb)):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return min(ta), min(tb)


def attention_overhead(T: int = 2048, d: int = 64) -> dict[str, float]:
    """attention() time over the time of its two matrix products alone, and the floor: the two
    products with one ``exp`` of the scores between them (NumPy's exp runs on one core; no
    softmax can do less elementwise work)."""
    Q, K, V = qkv(T, d)
    Qs = Q / np.sqrt(d)
    t_matmul, t_attn = paired_best(lambda: (Q @ K.T) @ V, lambda: sa.attention(Q, K, V))
    t_matmul2, t_floor = paired_best(lambda: (Q @ K.T) @ V, lambda: np.exp(Qs @ K.T) @ V)
    return {"T": T, "d": d, "matmul_s": t_matmul, "attention_s": t_attn, "ratio": t_attn / t_matmul,
            "floor_ratio": t_floor / t_matmul2}


def chunked_vs_full(T: int, d: int = 64, block_size: int = 128) -> dict[str, float]:
    """chunked_attention over full attention (the (T, T) weights materialised, then times V)."""
    Q, K, V = qkv(T, d)
    full = lambda: sa.attention_weights(Q, K) @ V  # noqa: E731
    chunk = lambda: sa.chunked_attention(Q, K, V, block_size=block_size)  # noqa: E731
    repeat = 3 if T >= 4096 else 5
    t_full, t_chunk = best_time(full, repeat), best_time(chunk, repeat)
    m_full, m_chunk = peak_memory(full), peak_memory(chunk)
    return {
        "T": T,
        "time_ratio": t_chunk / t_full,
        "memory_ratio": m_chunk / m_full,
        "full_MiB": m_full / 2**20,
        "chunked_MiB": m_chunk / 2**20,
    }
