"""The path released notebooks import to register the public checks (``import
selfattn.exercise_checks``): the records live in :mod:`selfattn.checks.exercises`."""

from __future__ import annotations

from .checks.exercises import EXERCISES, rand

__all__ = ["EXERCISES", "rand"]
