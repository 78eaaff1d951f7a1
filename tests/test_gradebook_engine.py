"""nbgrader's Gradebooks share one SQLAlchemy engine per process and database
(:mod:`autograder.nbgrader_ext.gradebook_engine`): fewer engines, the same rows."""

from __future__ import annotations

import inspect
import multiprocessing

import nbgrader.api
from nbgrader.api import Gradebook

from autograder.nbgrader_ext import gradebook_engine, gradebook_schema


def test_nbgrader_still_makes_its_engine_through_the_name_we_replace():
    source = inspect.getsource(Gradebook.__init__)
    assert "create_engine(db_url" in source, "nbgrader.api.Gradebook no longer calls create_engine(db_url, ...)"
    gradebook_engine.install()
    assert nbgrader.api.create_engine is gradebook_engine.shared_engine


def _engine_is_new_after_fork(url: str, parent_id: int) -> bool:
    with Gradebook(url, "course") as gb:
        return id(gb.engine) != parent_id and gb.find_student("alice").id == "alice"


def test_gradebooks_of_one_database_share_an_engine_and_see_each_others_rows(tmp_path):
    gradebook_schema.install()  # as nbgrader_config.py does: a new gradebook needs no alembic command
    gradebook_engine.install()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url, "course") as first:
        first.add_student("alice", first_name="Alice")
        engine = first.engine
    with Gradebook(url, "course") as second:
        assert second.engine is engine
        assert second.find_student("alice").first_name == "Alice"
    with Gradebook(f"sqlite:///{tmp_path / 'other.db'}", "course") as other:
        assert other.engine is not engine
    # a forked process makes its own engine (no pooled connection crosses fork), same rows
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_engine_is_new_after_fork, (url, id(engine)))
