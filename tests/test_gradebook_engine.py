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


def test_nbgrader_still_creates_its_tables_through_the_name_we_replace():
    source = inspect.getsource(Gradebook.__init__)
    assert "Base.metadata.create_all(bind=self.engine)" in source, (
        "nbgrader.api.Gradebook no longer calls Base.metadata.create_all(bind=self.engine)")
    gradebook_engine.install()
    assert nbgrader.api.Base.metadata.create_all is gradebook_engine.create_missing_tables


def test_tables_are_created_only_when_one_is_missing_also_after_the_database_is_deleted(tmp_path, monkeypatch):
    from sqlalchemy import MetaData

    gradebook_schema.install()
    gradebook_engine.install()
    calls = []
    original = MetaData.create_all

    def counting(self, *args, **kwargs):
        calls.append(kwargs.get("bind"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MetaData, "create_all", counting)
    db = tmp_path / "gradebook.db"
    url = f"sqlite:///{db}"
    with Gradebook(url, "course") as gb:  # a new database: nbgrader's create_all makes the tables
        gb.add_student("alice")
    assert len(calls) == 1
    for _ in range(3):  # every table there: no per-table checks, the same rows
        with Gradebook(url, "course") as gb:
            assert gb.find_student("alice").id == "alice"
    assert len(calls) == 1
    db.unlink()  # deleted while this process runs (make grade after `rm gradebook.db`): made again
    with Gradebook(url, "course") as gb:
        gb.add_student("bob")
        assert [s.id for s in gb.students] == ["bob"]
    assert len(calls) == 2


def test_two_in_memory_gradebooks_of_different_courses_do_not_see_each_others_rows():
    """nbgrader gives every Gradebook on ``sqlite:///:memory:`` a database of its own (its tests
    rely on it); a shared engine would merge them into one."""
    gradebook_schema.install()
    gradebook_engine.install()
    for url in ("sqlite:///:memory:", "sqlite://"):
        with Gradebook(url, "course-one") as one, Gradebook(url, "course-two") as two:
            one.add_student("alice")
            one.add_assignment("ps1")
            assert one.engine is not two.engine
            assert [s.id for s in two.students] == [] and [a.name for a in two.assignments] == []
            assert [s.id for s in one.students] == ["alice"]


def test_in_memory_names_only_databases_held_in_memory(tmp_path):
    assert gradebook_engine.in_memory("sqlite:///:memory:") and gradebook_engine.in_memory("sqlite://")
    assert gradebook_engine.in_memory("sqlite:///file::memory:?cache=shared&uri=true")
    assert not gradebook_engine.in_memory(f"sqlite:///{tmp_path / 'gradebook.db'}")
    assert not gradebook_engine.in_memory("postgresql://grader@localhost/gradebook")
