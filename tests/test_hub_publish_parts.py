"""The parts of ``make publish`` and ``HUB=`` that need no account (``autograder.hub.publish``, ``.acl``,
``.on_hub``): what names a release, what a publish copies and keeps and how it is undone, the default
ACL's bytes as the kernel reads them back, and the command line a hub command becomes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.errors import RefusedInput
from autograder.hub import acl, on_hub, publish, release
from autograder.hub.layout import HubLayout


def _course(root: Path, files: dict[str, bytes]) -> Path:
    """A git checkout at ``root`` tracking ``files``."""
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "_assets" / "vendor").mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return root


COURSE = {"selfattn/checks/exercises.py": b"CHECKS = 1\n", "pyproject.toml": b"[project]\n",
          "autograder/grade.py": b"GRADE = 1\n", "docs/guide.md": b"# guide\n", "run.sh": b"#!/bin/sh\n"}


@given(st.sampled_from(sorted(COURSE)), st.binary(min_size=1, max_size=64))
def test_a_release_is_named_by_what_the_students_wheel_is_built_from(tmp_path_factory, name, extra):
    """Any change of a file the wheel is built from (the package, pyproject.toml) names another
    release; a change of the grader's code or the guides does not (the students see no difference)."""
    root = tmp_path_factory.mktemp("course")
    for path, data in COURSE.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    before = release.wheel_id(root)
    (root / name).write_bytes(COURSE[name] + extra)
    changed = release.wheel_id(root) != before
    assert changed == (name in ("selfattn/checks/exercises.py", "pyproject.toml")), name


def test_publish_copies_the_course_keeps_the_term_and_can_be_undone(tmp_path):
    source = _course(tmp_path / "repo", COURSE)
    (source / "run.sh").chmod(0o755)
    copy = tmp_path / "copy"
    term = {"autograder/gradebook.db": b"gradebook", "autograder/submitted/ada/attention/01.ipynb": b"{}",
            "autograder/roster.csv": b"id\nada\n", "autograder/due-dates.csv": b"assignment\n"}
    old = {"selfattn/checks/exercises.py": b"CHECKS = 0\n", "docs/guide.md": COURSE["docs/guide.md"],
           "docs/gone.md": b"removed from the repository\n"}
    for name, data in {**term, **old}.items():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes(data)
    (copy / release.RECORD).write_text('{"files": ["docs/gone.md", "docs/guide.md", "selfattn/checks/exercises.py"]}')
    record = (copy / release.RECORD).read_bytes()
    modes = {name: (copy / name).stat().st_mode for name in old}

    former = publish.copy_files(source, copy)
    assert sorted(former) == sorted(["selfattn/checks/exercises.py", "pyproject.toml", "autograder/grade.py",
                                     "run.sh", "docs/gone.md"]), former  # guide.md unchanged: not rewritten
    assert all((copy / n).read_bytes() == d for n, d in COURSE.items()) and not (copy / "docs/gone.md").exists()
    assert os.access(copy / "run.sh", os.X_OK), "an executable lost its mode"
    assert all((copy / n).read_bytes() == d for n, d in term.items()), "a file of the term was touched"

    publish.undo(copy, former)
    assert all((copy / n).read_bytes() == d and (copy / n).stat().st_mode == modes[n] for n, d in old.items())
    for name in ("pyproject.toml", "autograder/grade.py", "run.sh"):
        assert not (copy / name).exists(), name
    assert all((copy / n).read_bytes() == d for n, d in term.items()) and (copy / release.RECORD).read_bytes() == record


def test_the_copy_and_its_students_package_disagreeing_is_one_line(tmp_path):
    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs")
    copy = layout.course("demo")
    _course(copy, COURSE)
    assert "no recorded release" in (release.release_problem(layout, "demo") or ""), "no package, no line"
    layout.student_env.mkdir(parents=True)
    (layout.student_env / release.ENV_RECORD).write_text(release.wheel_id(copy) + "\n")
    assert release.release_problem(layout, "demo"), "the students' environment's record stood for the course's"
    layout.course_package("demo").mkdir(parents=True)
    (layout.course_package("demo") / release.ENV_RECORD).write_text(release.wheel_id(copy) + "\n")
    assert release.release_problem(layout, "demo") is None
    (copy / "selfattn/checks/exercises.py").write_text("CHECKS = 2\n")
    said = release.release_problem(layout, "demo")
    assert said and "\n" not in said and f"make publish HUB={layout.state} COURSE=demo" in said, said
    (layout.course_package("demo") / release.ENV_RECORD).unlink()
    assert "no recorded release" in (release.release_problem(layout, "demo") or "")


def test_make_hub_installs_each_missing_or_stale_course_package_from_its_copy(tmp_path, monkeypatch):
    """A course without a package or whose package is not its copy's release gets one built from its
    copy, one line each; a current one is left; a course whose wheel fails is named and costs the
    others nothing."""
    from autograder.errors import GradingError
    from autograder.hub import course_packages

    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs")
    layout.rosters.mkdir(parents=True)
    for course, checks in (("a-missing", b"1"), ("b-current", b"2"), ("c-stale", b"3"), ("d-broken", b"4")):
        (layout.roster(course)).write_text("id\n")
        _course(layout.course(course), {**COURSE, "selfattn/checks/exercises.py": b"CHECKS = " + checks + b"\n"})
    for course, recorded in (("b-current", release.wheel_id(layout.course("b-current"))), ("c-stale", "0" * 16)):
        layout.course_package(course).mkdir(parents=True)
        (layout.course_package(course) / release.ENV_RECORD).write_text(recorded + "\n")
    built: list[Path] = []

    def build_wheel(root, out):
        if root.name == "d-broken":
            raise GradingError("the students' selfattn wheel could not be built")
        built.append(root)
        return out / f"{root.name}.whl"

    def install_package(env, package, wheel, rel):
        assert env == layout.student_env and wheel.name == f"{package.name}.whl"
        package.mkdir(parents=True, exist_ok=True)
        (package / release.ENV_RECORD).write_text(rel + "\n")

    monkeypatch.setattr(course_packages, "build_wheel", build_wheel)
    monkeypatch.setattr(course_packages.environments, "install_package", install_package)
    said: list[str] = []
    assert course_packages.ensure(layout, log=said.append) == ["a-missing", "c-stale"]
    assert built == [layout.course("a-missing"), layout.course("c-stale")]
    assert len(said) == 3 and said[2].startswith("warning: d-broken:"), said
    for course in ("a-missing", "b-current", "c-stale"):
        assert release.release_problem(layout, course) is None, course
    assert release.release_problem(layout, "d-broken")


@given(st.integers(min_value=0, max_value=2**32 - 2))
def test_the_default_acl_names_the_graders_group(gid):
    """The bytes read back give the group (the kernel's layout: version 2, entries sorted by tag)."""
    value = acl.default_acl(gid)
    assert value[:4] == (2).to_bytes(4, "little") and (len(value) - 4) % 8 == 0
    tags = [int.from_bytes(value[i:i + 2], "little") for i in range(4, len(value), 8)]
    assert tags == sorted(tags)


def test_a_folder_made_under_a_shared_folder_is_the_groups_whatever_the_umask(tmp_path):
    top = tmp_path / "copy"
    (top / "sub").mkdir(parents=True)
    assert acl.share_with_group(top, 4242) == 2
    assert acl.shared_gid(top / "sub") == 4242 and (top / "sub").stat().st_mode & 0o2000
    old = os.umask(0o022)
    try:
        (top / "sub" / "new").mkdir()
        (top / "sub" / "new" / "file").write_text("x")
    finally:
        os.umask(old)
    assert acl.shared_gid(top / "sub" / "new") == 4242
    assert (top / "sub" / "new" / "file").stat().st_mode & 0o060 == 0o060, "the group cannot write a new file"


def test_a_command_on_the_hub_runs_as_the_grader_account_with_nothing_of_the_callers(tmp_path, monkeypatch):
    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs")
    layout.ensure_hub_id()
    monkeypatch.setattr(on_hub, "grader_env", lambda layout, course: {"HOME": "/home/g", "PATH": "/env/bin"})
    argv = on_hub.grader_command(layout, "demo", ["python", "-m", "autograder.grade", "--student", "ada"])
    assert argv[:4] == ["runuser", "-u", layout.grader_user("demo"), "--"] and argv[4:6] == ["env", "-i"]
    assert argv[argv.index("sh"):] == ["sh", "-c", 'umask 007 && exec "$@"', "sh",
                                       str(layout.grader_env / "bin" / "python"), "-m", "autograder.grade",
                                       "--student", "ada"]
    with pytest.raises(RefusedInput, match="serves no course"):
        on_hub.hub_course(layout.state, env={})
    layout.rosters.mkdir(parents=True)
    (layout.roster("demo")).write_text("id\n")
    with pytest.raises(RefusedInput, match=r"^COURSE=other: not a course of the hub at .* \(it serves demo\)$"):
        on_hub.hub_course(layout.state, "other", env={})
    with pytest.raises(RefusedInput, match="no grader account"):
        on_hub.hub_course(layout.state, env={})


def test_an_exchange_handing_out_an_earlier_release_is_named(tmp_path):
    layout = HubLayout(state=tmp_path / "state", envs=tmp_path / "envs")
    handed = layout.course_exchange("demo") / "outbound" / "attention"
    current = layout.course("demo") / "notebooks" / "attention"
    for folder in (handed, current):
        folder.mkdir(parents=True)
        (folder / "01.ipynb").write_text("{}")
    assert release.stale_releases(layout, "demo") == [] and release.stale_release_line(layout, "demo") is None
    (current / "01.ipynb").write_text('{"cells": []}')
    assert release.stale_releases(layout, "demo") == ["attention"]
    said = release.stale_release_line(layout, "demo") or ""
    assert "\n" not in said and "for attention;" in said and "release_assignment ASSIGNMENT --force" in said
