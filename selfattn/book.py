"""Helpers for the book's pages (executed by myst-nb at build time)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["glue"]


def glue(name: str, value: Any) -> None:
    """Store ``value`` for ``{glue:text}`name```  in the page, without displaying it here.

    NumPy scalars become Python numbers first: NumPy 2 prints ``np.float64(0.5)``, which
    myst-nb's number formatting cannot parse.
    """
    from myst_nb import glue as _glue

    if isinstance(value, np.generic):
        value = value.item()
    _glue(name, value, display=False)
