"""Timing and memory measurements shared by the book, the benchmarks and the tests."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["ScalingFit", "attention_scaling", "best_time", "peak_memory", "scaling"]


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


@dataclass(frozen=True)
class ScalingFit:
    """Wall times of one computation over several sizes, repeated, and the power law they follow.

    Attributes
    ----------
    sizes : ndarray, shape (n,)
        The sizes timed (e.g. sequence lengths ``T``).
    times : ndarray, shape (repeats, n)
        CPU seconds of each call; repeat ``r`` timed every size once, in turn, so a slow moment of the
        machine falls on all sizes alike instead of on one.
    """

    sizes: NDArray[np.float64]
    times: NDArray[np.float64]

    @property
    def fastest(self) -> NDArray[np.float64]:
        """Least time of each size over the repeats, shape (n,).

        A busy machine only ever adds time, so the least disturbed run is the robust estimate of
        what the computation itself costs (the median still moves with the machine's load).
        """
        return self.times.min(axis=0)

    @property
    def exponent(self) -> float:
        """Least-squares ``p`` of ``log t = p log T + c`` through the fastest times."""
        return float(np.polyfit(np.log(self.sizes), np.log(self.fastest), 1)[0])

    @property
    def exponents(self) -> NDArray[np.float64]:
        """The same fit through each repeat on its own, shape (repeats,): the spread of the exponent."""
        logs = np.log(self.sizes)
        return np.array([np.polyfit(logs, np.log(row), 1)[0] for row in self.times])

    def verdict(self, power: float = 2.0, tolerance: float = 0.5) -> str:
        """What the page states: whether the exponent lies within ``tolerance`` of ``power``.

        The band tells T² from T and T³ and is wide enough to hold on a loaded machine (a band of
        ±0.25 flipped once when the build shared two cores with a whole test suite).

        Only this sentence goes into running text; the exponent itself (which moves in its second
        decimal from run to run) is shown in the figure with its spread.
        """
        lo, hi = power - tolerance, power + tolerance
        grows = f"T^{power:g}".translate(str.maketrans("^0123456789.", " ⁰¹²³⁴⁵⁶⁷⁸⁹·")).replace(" ", "")
        if lo <= self.exponent <= hi:
            return f"between {lo:g} and {hi:g}: the time grows as {grows}, as the FLOP count says"
        return (f"outside {lo:g} to {hi:g}, not the {grows} of the FLOP count: on this machine memory "
                "traffic or overheads dominate")


def scaling(fn: Callable[[int], Callable[[], object]], sizes: Sequence[int], repeats: int = 9) -> ScalingFit:
    """CPU time of ``fn(size)()`` for every size, ``repeats`` rounds of all sizes in turn (one warm-up each).

    ``fn(size)`` prepares the inputs and returns the call to time, so preparing is not timed. CPU time
    of this process, not wall time: on a shared machine the wait for a core is not the computation's.
    With one BLAS thread (``OPENBLAS_NUM_THREADS=1`` before NumPy loads) it is the work itself.
    """
    calls = [fn(int(s)) for s in sizes]
    for call in calls:
        call()
    times = np.empty((repeats, len(calls)))
    for r in range(repeats):
        for i, call in enumerate(calls):
            t0 = time.process_time()
            call()
            times[r, i] = time.process_time() - t0
    return ScalingFit(np.asarray(sizes, dtype=float), times)


def attention_scaling(sizes: Sequence[int] = (512, 768, 1024, 1536, 2048, 3072), d: int = 64,
                      repeats: int = 9, seed: int = 0) -> ScalingFit:
    """Wall time of ``selfattn.attention`` on random ``(T, d)`` queries, keys and values, per ``T`` in ``sizes``."""
    from .numerics import attention

    rng = np.random.default_rng(seed)

    def prepare(T: int) -> Callable[[], object]:
        Q, K, V = rng.standard_normal((3, T, d))
        return lambda: attention(Q, K, V)

    return scaling(prepare, sizes, repeats)
