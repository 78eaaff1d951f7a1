"""The machinery of the exercise checks, shared by the notebooks and the autograder.

A :class:`Check` is split in three so that grading never has to trust student code:

1. ``cases(rng)`` makes the inputs (trusted side);
2. the student's function is called on each case, and each result becomes plain float
   arrays, or the name and message of the exception it raised (:func:`call_cases`);
3. ``verify(cases, outcomes)`` decides, looking only at those arrays (trusted side), and
   returns ``None`` or a message naming the likely misconception.

In a notebook all three steps run in the student's kernel (:func:`check`), for instant
feedback. The autograder runs step 2 in a sandboxed process and steps 1 and 3 in a process
that never runs student code, so the student sees the same verdict and message either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "REGISTRY",
    "Case",
    "Check",
    "CheckFailed",
    "Outcome",
    "call_cases",
    "check",
    "register",
    "to_arrays",
]


@dataclass(frozen=True)
class Case:
    """Positional and keyword arguments of one call; values are arrays, numbers, lists or None.

    ``meta`` is for the verifier only (never passed to the function).
    """

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"array of shape {v.shape}" + ("" if v.dtype == np.float64 else f" ({v.dtype})")
            return repr(v)

        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


@dataclass(frozen=True)
class Outcome:
    """What one call produced: ``values`` (a tuple of float arrays) or an ``error`` string."""

    values: tuple[np.ndarray, ...] | None = None
    error: str | None = None

    @property
    def value(self) -> np.ndarray:
        """The single returned array (a tuple result has several)."""
        assert self.values is not None
        return self.values[0]


@dataclass(frozen=True)
class Check:
    """One named check of one graded function."""

    id: str
    function: str
    description: str
    cases: Callable[[np.random.Generator], list[Case]]
    verify: Callable[[list[Case], list[Outcome]], str | None]


REGISTRY: dict[str, Check] = {}

#: Graded functions whose solution may call other graded functions of the same notebook.
DEPENDS: dict[str, tuple[str, ...]] = {}


def register(check_: Check) -> Check:
    if check_.id in REGISTRY:
        raise ValueError(f"duplicate check id {check_.id!r}")
    REGISTRY[check_.id] = check_
    return check_


def to_arrays(result: Any) -> tuple[np.ndarray, ...]:
    """A returned value as a tuple of float64 arrays (a tuple or list of arrays stays several).

    Raises ``TypeError`` for anything that is not numeric, so an object that merely claims to
    be equal to the answer never reaches a comparison.
    """
    parts = result if isinstance(result, tuple) else (result,)
    out = []
    for part in parts:
        if isinstance(part, (bool, np.bool_)):
            raise TypeError("returned a boolean, expected numbers")
        arr = np.asarray(part)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            raise TypeError(f"returned {type(part).__name__}, expected a numeric array")
        if arr.dtype == np.bool_:
            raise TypeError("returned a boolean array, expected numbers")
        out.append(np.array(arr, dtype=np.float64, copy=True))
    return tuple(out)


def call_cases(fn: Callable[..., Any], cases: Sequence[Case]) -> list[Outcome]:
    """Call ``fn`` on every case, turning results into arrays and exceptions into messages."""
    outcomes = []
    for case in cases:
        try:
            args = tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in case.args)
            outcomes.append(Outcome(values=to_arrays(fn(*args, **case.kwargs))))
        except (Exception, SystemExit) as exc:
            outcomes.append(Outcome(error=f"{type(exc).__name__}: {exc}"[:500]))
    return outcomes


class CheckFailed(AssertionError):
    """Raised in a notebook when a check fails; its message names the likely mistake."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback through the course's checking code
        return [f"\x1b[0;31mCheckFailed\x1b[0m: {self}"]


def first_error(check_: Check, cases: Sequence[Case], outcomes: Sequence[Outcome]) -> str | None:
    """Message for the first call that raised, if any."""
    for case, outcome in zip(cases, outcomes, strict=True):
        if outcome.error is not None:
            if outcome.error.startswith("NotImplementedError"):
                return f"{check_.function} is not written yet: replace `raise NotImplementedError` with your code"
            return f"calling {check_.function}{case.describe()} raised {outcome.error}"
    return None


def run_check(check_: Check, fn: Callable[..., Any], seed: int = 0) -> str | None:
    """Run one check in this process; ``None`` when it passes, else the message."""
    cases = check_.cases(np.random.default_rng(seed))
    outcomes = call_cases(fn, cases)
    return first_error(check_, cases, outcomes) or check_.verify(cases, outcomes)


def check(fn: Callable[..., Any], check_id: str, seed: int = 0) -> None:
    """Notebook entry point: run check ``check_id`` on ``fn``; print a tick or raise ``CheckFailed``."""
    if check_id not in REGISTRY:
        raise KeyError(f"unknown check {check_id!r}")
    check_ = REGISTRY[check_id]
    message = run_check(check_, fn, seed)
    if message is not None:
        raise CheckFailed(f"{check_.function}: {check_.description}: {message}")
    print(f"✓ {check_.function}: {check_.description}")


# ---------------------------------------------------------------------------------------------
# helpers for verify functions


def tolerance(cases: Sequence[Case]) -> tuple[float, float]:
    """(rtol, atol): what a correct float32 implementation reaches (looser for float32 inputs).

    Every classic mistake is off by far more than this.
    """
    f32 = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for c in cases for a in c.args)
    return (2e-4, 1e-5) if f32 else (1e-5, 1e-6)


def close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    """Same shape and equal within tolerance; ``-inf`` must meet ``-inf`` (or a large negative)."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return False
    inf = np.isneginf(want)
    if (np.isnan(got) & ~np.isnan(want)).any():
        return False
    if inf.any() and not (got[inf] <= -1e9).all():
        return False
    return bool(np.allclose(got[~inf], want[~inf], rtol=rtol, atol=atol))
