"""Timing and memory measurements shared by the book, the benchmarks and the tests."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

__all__ = ["best_time", "peak_memory"]


def best_time(fn: Callable[[], object], repeat: int = 7) -> float:
    """Best wall time of ``repeat`` calls after one warm-up, in seconds (the least disturbed run)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def peak_memory(fn: Callable[[], object]) -> int:
    """Peak bytes allocated (as traced by ``tracemalloc``) while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
