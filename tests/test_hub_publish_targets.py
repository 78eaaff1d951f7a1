"""What ``make publish`` reaches on a hub: the formgrader process it restarts, the students it changes.

Formgrader is found as the hub's child run by the course's grader account (here: a stand-in hub
process, a ``sleep`` of its own for formgrader; a grandchild is not it, nor a process outside the
hub); restarting
ends it, and says in one line when the hub does not start it again, or when no hub runs. A user's
``PYTHONPATH`` names the package of the first of the hub's courses whose students' group she is
in, else whose graders' group, else the first course (for every set of groups).
"""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.errors import GradingError
from autograder.hub import formgrader_restart
from autograder.hub.layout import HubLayout, hub_graders_group, hub_students_group

COURSES = ("self-attention", "aa-one", "bb-two", "cc-three")


def _layout(top: Path) -> HubLayout:
    layout = HubLayout(state=top / "state", envs=top / "envs")
    layout.rosters.mkdir(parents=True, exist_ok=True)
    for course in COURSES:
        layout.roster(course).write_text("id,role\n")
    (layout.hub / "id").write_text("abcdef\n")
    return layout


LAYOUT = _layout(Path(tempfile.mkdtemp(prefix="selfattn-publish-targets-")))


@given(st.sets(st.sampled_from(COURSES)), st.sets(st.sampled_from(COURSES)))
def test_a_users_pythonpath_is_her_first_courses_package(learns, grades):
    groups = {hub_students_group(c) for c in learns} | {hub_graders_group(c) for c in grades} | {"other"}
    order = LAYOUT.courses()
    assert order[0] == "self-attention"
    want = next((c for c in order if c in learns), None) or next((c for c in order if c in grades), order[0])
    assert LAYOUT.students_pythonpath(groups) == f"{LAYOUT.students_site}:{LAYOUT.course_package(want)}"
    mine = [c for c in order if c in learns] or [c for c in order if c in grades] or order
    assert LAYOUT.students_courses(groups) == ":".join(f"{c}={LAYOUT.course_package(c)}" for c in mine)


def test_no_hub_running_is_said_in_one_line(tmp_path):
    said: list[str] = []
    assert formgrader_restart.restart(_layout(tmp_path), "self-attention", log=said.append) is False
    assert len(said) == 1 and "the hub is not running" in said[0], said


def test_formgrader_is_the_hubs_child_of_the_grader_account_and_is_ended(tmp_path, monkeypatch):
    """Only the stand-in hub's children run by the grader account are formgrader's processes, and only they
    are ended: not a grandchild, and not a process of this test's own (this test once stood in for the hub
    itself, and so ended its own process's Playwright driver, a child run by the same account)."""
    layout = _layout(tmp_path)
    hub = subprocess.Popen([sys.executable, "-c", STAND_IN_HUB], stdout=subprocess.PIPE, text=True)
    mine = subprocess.Popen(["sleep", "600"])  # a child of this process's, as the test harness's driver is
    grandchild: list[str] = []
    try:
        formgrader, shell = (int(p) for p in hub.stdout.readline().split())
        monkeypatch.setattr(formgrader_restart, "hub_pid", lambda layout: hub.pid)
        me, getpwnam = pwd.getpwuid(os.getuid()), pwd.getpwnam
        monkeypatch.setattr(formgrader_restart.pwd, "getpwnam",
                            lambda name: me if name == layout.grader_user("self-attention") else getpwnam(name))
        children = Path(f"/proc/{shell}/task/{shell}/children")
        for _ in range(100):
            grandchild = children.read_text().split()
            if grandchild:
                break
            time.sleep(0.1)
        assert grandchild, "the shell started no sleep"
        assert formgrader_restart.formgrader_pids(layout, "self-attention") == sorted([formgrader, shell])
        assert formgrader_restart.formgrader_pids(layout, "aa-one") == []  # no such grader account
        with pytest.raises(GradingError, match="formgrader did not come back within 1 s"):
            formgrader_restart.restart(layout, "self-attention", log=lambda line: None, timeout=1)
        assert formgrader_restart._ended(formgrader), "formgrader still runs"
        assert mine.poll() is None, "a process outside the hub was ended"
        assert not formgrader_restart._ended(int(grandchild[0])), "the hub's grandchild was ended"
    finally:
        for pid in grandchild:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        for proc in (hub, mine):
            proc.kill()
            proc.wait()


#: a stand-in hub: formgrader (a ``sleep``) and a shell, each its child; the shell's ``sleep`` is a grandchild
STAND_IN_HUB = r"""
import subprocess, time
formgrader = subprocess.Popen(["sleep", "600"])
shell = subprocess.Popen(["sh", "-c", "sleep 600; true"])
print(formgrader.pid, shell.pid, flush=True)
time.sleep(600)
"""
