"""Hidden inputs as feedback may describe them: arrays by shape and dtype, anything else by type.

A check's message names the input it failed on (``case.describe()``); for a hidden check that
would print integers and lists the student never saw (``wrong values on input (609, 1871)``),
enough to hard-code them at the next re-grade. :func:`opaque` wraps a case so that its
description keeps shapes and types only; the values stay the same for the verifier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from selfattn.checks.calling import Case


def describe_type(value: Any) -> str:
    """``value`` without its contents: an array's shape and dtype, a list's length, else the type."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}" + ("" if value.dtype == np.float64 else f" ({value.dtype})")
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    if value is None:
        return "None"
    return f"a{'n' if type(value).__name__[0] in 'aeio' else ''} {type(value).__name__}"


@dataclass(frozen=True)
class OpaqueCase(Case):
    """A hidden case: the same arguments, described by type only."""

    def describe(self) -> str:
        parts = [describe_type(a) for a in self.args] + [f"{k}={describe_type(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def opaque(case: Case) -> OpaqueCase:
    return OpaqueCase(case.args, case.kwargs, case.meta)
