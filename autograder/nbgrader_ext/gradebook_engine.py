"""One database engine per gradebook per process, instead of one per ``Gradebook`` opened.

nbgrader opens a new :class:`nbgrader.api.Gradebook` for almost every question it asks (about five
per notebook it autogrades, more for its feedback), and each one calls SQLAlchemy's
``create_engine``: a new connection pool, a new cache of compiled SQL (so every query is compiled
again) and a fresh look at the tables. Profiled on a graded class of 30 students, that was about a
third of nbgrader's autograde step. :func:`install` makes ``nbgrader.api`` create each engine once
per process and database URL (a forked worker makes its own: connections never cross ``fork``), so
the pool and the compiled SQL are kept. The queries, their order and their transactions are
nbgrader's, unchanged: every ``Gradebook`` still has its own session, committed and removed as before.

An in-memory database (``sqlite://``, ``sqlite:///:memory:``) is not shared: under nbgrader each
``Gradebook`` opened on one has a database of its own (its engine's), and one engine kept for the
process would merge every such gradebook, of every course, into one. Those get nbgrader's
``create_engine`` each time, as without :func:`install`.

Each ``Gradebook`` also asks SQLAlchemy to create nbgrader's 13 tables "if they don't already
exist", which checks each table with a query of its own. :func:`create_missing_tables` asks SQLite
once for the tables it holds and runs nbgrader's ``create_all`` only when one is missing (a new or
deleted gradebook), so a database deleted while the process runs is created again as before.
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
        The engine this process made for these arguments first; for an in-memory database
        (:func:`in_memory`), a new one, as nbgrader's ``create_engine`` gives.
    """
    from sqlalchemy import create_engine

    if in_memory(url):  # nbgrader's semantics: a new, empty database per Gradebook
        return create_engine(url, **kwargs)
    key = (os.getpid(), str(url), tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    with _LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = create_engine(url, **kwargs)
    return engine


def in_memory(url: Any) -> bool:
    """Whether ``url`` names an SQLite database held in memory (a new one per engine).

    Parameters
    ----------
    url : str or sqlalchemy.engine.URL
        A database URL, as nbgrader passes it.

    Returns
    -------
    bool
        True for ``sqlite://``, ``sqlite:///:memory:`` and SQLite URIs with ``mode=memory``.
    """
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return False
    database = parsed.database or ""
    return database in ("", ":memory:") or database.startswith("file::memory:") or \
        parsed.query.get("mode") == "memory" or "mode=memory" in database


def create_missing_tables(bind: Any, tables: Any = None, checkfirst: Any = True) -> None:
    """nbgrader's ``Base.metadata.create_all(bind=...)``, after one look at what the database holds.

    Parameters
    ----------
    bind : sqlalchemy.engine.Engine
        The gradebook's engine (nbgrader passes ``bind=self.engine``).
    tables, checkfirst
        ``MetaData.create_all``'s, passed on when it runs.

    Notes
    -----
    On SQLite, one query lists the tables; when every table of nbgrader's schema is there, nothing
    is created (what ``create_all`` would conclude after a query per table). Any other database, or
    a missing table, goes to nbgrader's ``create_all`` unchanged.
    """
    import nbgrader.api
    from sqlalchemy import MetaData

    metadata = nbgrader.api.Base.metadata
    if tables is None and getattr(bind, "dialect", None) is not None and bind.dialect.name == "sqlite":
        with bind.connect() as conn:
            present = {row[0] for row in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")}
        if set(metadata.tables) <= present:
            return
    MetaData.create_all(metadata, bind=bind, tables=tables, checkfirst=checkfirst)


def install() -> None:
    """Make nbgrader's ``Gradebook`` use :func:`shared_engine` (``nbgrader.api.create_engine``) and
    :func:`create_missing_tables` (``nbgrader.api.Base.metadata.create_all``). Idempotent;
    ``tests/test_gradebook_engine.py`` checks that nbgrader still calls both names."""
    import nbgrader.api

    nbgrader.api.create_engine = shared_engine
    nbgrader.api.Base.metadata.create_all = create_missing_tables
