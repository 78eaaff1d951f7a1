"""The hub's caps per student server and its settings file, without a hub (:mod:`autograder.hub.caps`).

A server's cgroup is made with its caps (they show in its cgroup files), a process in it that takes
more memory than the cap is killed there while a process of another server's cgroup goes on, and
both are removed afterwards. The hub's settings file is made once with the defaults it documents and
never replaced; its values are read as JupyterHub reads them. The example roster of the guide is a
roster ``make hub`` takes. The end to end run on a hub is ``tests/test_hub_class.py``.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.hub import caps

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_ROSTER = ROOT / "autograder" / "hub" / "roster.example.csv"
#: takes ~200 MiB, page by page, then says so
HOG = "import sys\nx = b'\\1' * (200 << 20)\nprint('held', flush=True)\n"


def _needs_cgroups() -> dict:
    if os.geteuid() != 0:
        pytest.fail("the caps test must run as root (the hub makes its servers' cgroups as root)")
    found = caps.hierarchies()
    missing = [name for name in caps.CONTROLLERS if name not in found]
    if missing:
        pytest.fail(f"no cgroup can be made here for {missing}: {caps.describe(caps.HubCaps())}")
    return found


def _in_group(folders: dict[str, Path], code: str) -> subprocess.Popen:
    """``code`` in a Python started in the cgroup ``folders`` (joined before exec, as the server's
    first process joins)."""
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: caps.join(folders))


def test_a_servers_cgroup_holds_its_caps_and_kills_only_its_own_runaway_process():
    """Two students' servers: the caps show in each cgroup's files; a process of the first that takes
    200 MiB past its 64 MiB cap is killed (an OOM kill counted in its cgroup), a process of the
    second holding the same memory under a larger cap lives on; stopping removes both cgroups."""
    found = _needs_cgroups()
    hub = f"t{secrets.token_hex(3)}"
    small = caps.HubCaps(memory=64 << 20, cpus=0.5, tasks=40)
    large = caps.HubCaps(memory=512 << 20, cpus=1.0, tasks=64)
    a = caps.make_server_group(hub, "ada", small)
    b = caps.make_server_group(hub, "ben", large)
    try:
        mem, cpu, pids = a["memory"], a["cpu"], a["pids"]
        limit = "memory.max" if found["memory"].version == 2 else "memory.limit_in_bytes"
        assert int((mem / limit).read_text()) == 64 << 20
        if found["cpu"].version == 2:
            assert (cpu / "cpu.max").read_text().split() == ["50000", "100000"]
        else:
            assert int((cpu / "cpu.cfs_quota_us").read_text()) == 50_000
            assert int((cpu / "cpu.cfs_period_us").read_text()) == 100_000
        assert (pids / "pids.max").read_text().strip() == "40"

        other = _in_group(b, HOG + "import time\ntime.sleep(60)\n")
        assert other.stdout.readline().strip() == "held"
        runaway = _in_group(a, HOG)
        runaway.communicate(timeout=120)
        assert runaway.returncode == -signal.SIGKILL, runaway.returncode
        events = (mem / ("memory.events" if found["memory"].version == 2 else "memory.oom_control")).read_text()
        assert caps.cgroups.counter_of(events, "oom_kill") >= 1, events
        assert other.poll() is None, "the other student's process died with the first one's"
        assert other.pid in [int(p) for p in (b["memory"] / "cgroup.procs").read_text().split()]
    finally:
        caps.remove_server_group(a)
        caps.remove_server_group(b)
        caps.remove_hub_groups(hub)
    assert not any(p.exists() for p in (*a.values(), *b.values(), *caps.hub_folders(hub)))


def test_the_hubs_settings_are_made_once_with_the_defaults_they_document(tmp_path):
    """The settings file is written with the defaults as comments: those lines, uncommented, are the
    defaults; an instructor's values are read as JupyterHub reads them, and never replaced."""
    path = caps.settings_path(tmp_path)
    assert caps.write_settings_once(path)
    assert caps.read_settings(path) == caps.HubCaps()
    documented = [line.strip().split("#")[0] for line in path.read_text().splitlines()
                  if line.strip().startswith("c.")]
    assert len(documented) == 4, documented
    path.write_text(path.read_text() + "\n".join(documented) + "\n")
    assert caps.read_settings(path) == caps.HubCaps()

    path.write_text("c = get_config()\nc.Spawner.mem_limit = '512M'\nc.Spawner.cpu_limit = 0.5\n"
                    "c.CappedLocalProcessSpawner.tasks_limit = 100\nc.IdleCuller.timeout = 600\n")
    assert not caps.write_settings_once(path)
    assert caps.read_settings(path) == caps.HubCaps(memory=512 << 20, cpus=0.5, tasks=100, idle_timeout=600)
    path.write_text("c = get_config()\nc.IdleCuller.timeout = 'an hour'\n")
    with pytest.raises(ValueError, match=str(path)):
        caps.read_settings(path)


@given(st.integers(0, 4096), st.sampled_from(["", "K", "M", "G", "T"]))
def test_byte_specifications_read_as_jupyterhub_reads_them(n, unit):
    """``512M``, ``2G``: powers of 1024, as JupyterHub's ``ByteSpecification``."""
    power = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}[unit]
    assert caps.parse_bytes(f"{n}{unit}") == n * 1024**power
    assert caps.parse_bytes(f"{n}{unit.lower()}") == n * 1024**power


def test_a_cap_that_cannot_be_enforced_here_is_said_to_be(monkeypatch):
    """Where no cgroup of a controller can be made, the line ``make hub`` prints says the cap is not
    enforced, naming it."""
    monkeypatch.setattr(caps, "hierarchies", lambda: {})
    line = caps.describe(caps.HubCaps())
    assert "memory 2048 MiB NOT enforced" in line and "CPU 1 cores NOT enforced" in line
    assert "idle servers stopped after 3600 s" in line


def test_the_guides_example_roster_is_a_roster_make_hub_takes(tmp_path):
    """``autograder/hub/roster.example.csv`` (named in the guide) reads as a roster with every role,
    and its class (students only, with their LMS columns) is what the course copy's roster gets."""
    from autograder.course.ids import COURSE_ID
    from autograder.hub import accounts, prepare
    from autograder.hub.layout import HubLayout

    members = accounts.read_roster(EXAMPLE_ROSTER)
    assert {m.role for m in members} == set(accounts.ROLES)
    layout = HubLayout(state=tmp_path, envs=tmp_path / "envs")
    layout.roster(COURSE_ID).parent.mkdir(parents=True)
    layout.roster(COURSE_ID).write_text(EXAMPLE_ROSTER.read_text())
    lines = prepare.class_roster(layout, COURSE_ID).splitlines()
    assert lines[0].split(",") == list(prepare.CLASS_COLUMNS)
    assert len(lines) - 1 == sum(m.role == "student" for m in members)
    assert all(row.split(",")[4] for row in lines[1:]), "a student without an LMS id"
    assert "autograder/hub/roster.example.csv" in (ROOT / "docs" / "instructors.md").read_text()
