"""The revision of nbgrader's database schema, read without starting a second Python.

A new gradebook records the newest revision of nbgrader's schema (its ``alembic_version`` table).
nbgrader learns it by running the ``alembic heads`` command: a fresh interpreter that costs about
1.8 s on this machine for every new gradebook (the first ``make grade`` of a class, formgrader's
first page, every test that grades a class). :func:`schema_head` reads the same migration scripts
in this process (about 60 ms); :func:`install`, called by ``nbgrader_config.py``, makes nbgrader
use it in every process that loads the course's configuration.
"""

from __future__ import annotations

__all__ = ["install", "schema_head"]


def schema_head() -> str:
    """The newest revision among nbgrader's migration scripts (what ``alembic heads`` prints first).

    Raises
    ------
    RuntimeError
        If nbgrader's scripts have no single newest revision (a broken nbgrader install).
    """
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    heads = ScriptDirectory(ALEMBIC_DIR).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"nbgrader's database migrations in {ALEMBIC_DIR} have {len(heads)} newest revisions, "
                           "expected one: reinstall nbgrader")
    return heads[0]


def install() -> None:
    """Make nbgrader's ``Gradebook`` read the schema revision with :func:`schema_head`."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = schema_head
