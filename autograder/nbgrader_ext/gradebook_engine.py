"""One database engine per gradebook per process, instead of one per ``Gradebook`` opened.

nbgrader opens a new :class:`nbgrader.api.Gradebook` for almost every question it asks (about five
per notebook it autogrades, more for its feedback), and each one calls SQLAlchemy's
``create_engine``: a new connection pool, a new cache of compiled SQL (so every query is compiled
again) and a fresh look at the tables. Profiled on a graded class of 30 students, that was about a
third of nbgrader's autograde step. :func:`install` makes ``nbgrader.api`` create each engine once
per process and database URL (a forked worker makes its own: connections never cross ``fork``), so
the pool and the compiled SQL are kept. The queries, their order and their transactions are
nbgrader's, unchanged: every ``Gradebook`` still has its own session, committed and removed as before.
"""

from __future__ import annotations

import os
import threading
from typing import Any

_ENGINES: dict[tuple[int, str, tuple], Any] = {}
_LOCK = threading.Lock()


def shared_engine(url: Any, **kwargs: Any) -> Any:
    """SQLAlchemy's ``create_engine(url, **kwargs)``, made once per process and arguments.

    Parameters
    ----------
    url : str or sqlalchemy.engine.URL
        The database, as nbgrader passes it (``sqlite:///.../gradebook.db``).
    **kwargs
        ``create_engine``'s keyword arguments (nbgrader's: ``echo=False, future=True``).

    Returns
    -------
    sqlalchemy.engine.Engine
        The engine this process made for these arguments first.
    """
    from sqlalchemy import create_engine

    key = (os.getpid(), str(url), tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    with _LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = create_engine(url, **kwargs)
    return engine


def install() -> None:
    """Make nbgrader's ``Gradebook`` (``nbgrader.api.create_engine``) use :func:`shared_engine`.
    Idempotent; ``tests/test_gradebook_engine.py`` checks the name nbgrader calls still exists."""
    import nbgrader.api

    nbgrader.api.create_engine = shared_engine
