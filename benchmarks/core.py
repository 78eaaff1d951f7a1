"""Benchmarks of the helper package's attention kernels."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import selfattn as sa
from selfattn.measure import best_time, peak_memory
from selfattn.numerics import CACHE_ENTRIES


def qkv(T: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((T, d)) for _ in range(3))  # type: ignore[return-value]


def interleaved_best(fns: dict[str, Callable[[], object]], repeat: int = 21) -> dict[str, float]:
    """Best time of each function, run in turn ``repeat`` times so that drifts of a shared machine hit all."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: min(t) for name, t in times.items()}


def attention_overhead(T: int = 2048, d: int = 64) -> dict[str, float]:
    """attention() time over the time of its two matrix products alone, and where the difference
    goes: the same two products in attention's query blocks, and those with one ``exp`` of each
    score between them (NumPy's exp runs on one core; no softmax does less elementwise work)."""
    Q, K, V = qkv(T, d)
    Qs, Kt = Q / np.sqrt(d), K.T
    rows = max(1, CACHE_ENTRIES // T)

    buffer = np.empty((rows, T))  # one for all blocks, as attention() does

    def blocked(exp: bool) -> None:
        for i in range(0, T, rows):
            S = np.matmul(Qs[i : i + rows], Kt, out=buffer[: min(rows, T - i)])  # (rows, T)
            if exp:
                np.exp(S, out=S)
            S @ V

    t = interleaved_best({
        "matmul": lambda: (Q @ K.T) @ V,
        "attention": lambda: sa.attention(Q, K, V),
        "blocked": lambda: blocked(False),
        "blocked_exp": lambda: blocked(True),
    })
    return {"T": T, "d": d, "rows": rows, "matmul_s": t["matmul"], "attention_s": t["attention"],
            "ratio": t["attention"] / t["matmul"], "blocked_ratio": t["blocked"] / t["matmul"],
            "floor_ratio": t["blocked_exp"] / t["matmul"]}


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
