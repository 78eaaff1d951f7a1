"""The path released notebooks import ``check`` and ``summary`` from (``from selfattn.checking
import check``): the checks live in :mod:`selfattn.checks`, and importing this module registers
the public ones (:mod:`selfattn.checks.notebook`)."""

from __future__ import annotations

from .checks.calling import (
    BadReturn,
    Case,
    Outcome,
    TimeLimit,
    allowed_imports_only,
    call_cases,
    exec_cells,
    fresh_namespace,
    to_arrays,
)
from .checks.findings import Finding, Kind
from .checks.judging import run_check
from .checks.notebook import CheckFailed, check, judge, summary, time_limit, using
from .checks.record import REGISTRY, Check, register

__all__ = [
    "REGISTRY",
    "BadReturn",
    "Case",
    "Check",
    "CheckFailed",
    "Finding",
    "Kind",
    "Outcome",
    "TimeLimit",
    "allowed_imports_only",
    "call_cases",
    "check",
    "exec_cells",
    "fresh_namespace",
    "judge",
    "register",
    "run_check",
    "summary",
    "time_limit",
    "to_arrays",
    "using",
]
