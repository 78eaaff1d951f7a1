"""A class on one machine, on a hub of its own: each student's server is capped, idle ones are stopped.

The test starts a hub as root (``make hub``'s code) in a fresh state folder, with accounts of random
names and the hub's settings file set as an instructor sets it (memory 384 MiB per server, half a
core, an idle timeout of a minute). Two students log in (HTTP, as their browsers do) and each starts
a kernel: every process of each student's server is in her cgroup, whose files hold the caps. Ada's
kernel takes a GiB: the kernel is killed in her cgroup (an OOM kill counted there), her server still
answers, and Ben's kernel, untouched, still runs code. Ben submits; the instructor's Generate,
Release, Collect, Autograde and Generate Feedback in formgrader show INFO lines and no DEBUG
line. Then nobody does anything, and the idle
culler (a hub service) stops both servers: their processes and cgroups are gone, and the hub's log
says the culler did it. Every account, process, cgroup and folder the hub made is removed.
Run it as ``.venv/bin/python -m pytest tests/test_hub_class.py``, never under ``flock`` of the
hub tests' lock: it takes that lock itself, for the shared environments.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import time
from pathlib import Path

import pytest
from hub_support import own_hub, uid_processes

from autograder.course.ids import COURSE_ID
from autograder.hub import caps
from autograder.hub.layout import HubLayout

ASSIGNMENT = "attention"
MEMORY = 384 << 20
IDLE = 60
SETTINGS = (f"c = get_config()\nc.Spawner.mem_limit = '{MEMORY >> 20}M'\nc.Spawner.cpu_limit = 0.5\n"
            f"c.IdleCuller.timeout = {IDLE}\n")
#: a deadline, not a speed check: the culler looks every IDLE/4 s at activity reported every IDLE/4 s
CULLED_WITHIN = 600


def _procs(folder: Path) -> set[int]:
    try:
        return {int(p) for p in (folder / "cgroup.procs").read_text().split()}
    except OSError:
        return set()


def _oom_kills(folder: Path) -> int:
    name = "memory.events" if (folder / "memory.events").exists() else "memory.oom_control"
    try:
        return caps.cgroups.counter_of((folder / name).read_text(), "oom_kill")
    except OSError:
        return 0


def _execute(client, layout: HubLayout, login: str, kernel: str, code: str, wait: bool = True) -> str:
    """Run ``code`` in ``login``'s kernel as JupyterLab does (its websocket); its result's text."""
    from benchmarks.hub import execute

    # a thread of its own: a sync Playwright test earlier in this process leaves an event loop running
    # in the main thread, where asyncio.run refuses to start another
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, execute(client, layout.user_url(login), kernel, code, wait=wait)).result()


def test_each_students_server_is_capped_and_idle_servers_are_stopped():
    from benchmarks.hub import _loopback_localhost

    if os.geteuid() != 0:
        pytest.fail("the class test must run as root (it makes system users, as make hub does)")
    tag = secrets.token_hex(3)
    ada, ben, ivy = f"sc{tag}a", f"sc{tag}b", f"sc{tag}i"
    roster = f"{ada},A,Ada,,student\n{ben},B,Ben,,student\n{ivy},I,Ivy,,instructor\n"
    said: list[str] = []
    # the instructor's settings, before the first start
    with own_hub("class", {COURSE_ID: roster}, settings=SETTINGS, log=said.append) as (layout, passwords, _):
        assert f"{COURSE_ID}: accounts made 3: {ada} (student), {ben} (student), {ivy} (instructor); 0 unchanged" \
            in said, said
        assert caps.settings_path(layout.hub).read_text() == SETTINGS, "make hub replaced the instructor's settings"
        line = next(s for s in said if s.startswith("each student's server:"))
        assert f"memory {MEMORY >> 20} MiB (cgroup v" in line and f"idle servers stopped after {IDLE} s" in line, line
        hub_id = layout.hub_id
        with _loopback_localhost():
            _class(layout, passwords, ada, ben, ivy)
    assert not [p for p in caps.hub_folders(hub_id) if p.exists()], "the hub's cgroups outlived it"


def _class(layout: HubLayout, passwords: dict[str, str], ada: str, ben: str, ivy: str) -> None:
    from benchmarks.hub import _Client

    clients, kernels = {}, {}
    for login in (ada, ben):
        clients[login] = _Client(layout.url, login, passwords[login])
        clients[login].start_server(layout.user_url(login))
        kernels[login] = clients[login].call("POST", layout.user_url(login), "api/kernels", json={})["id"]
    assert _execute(clients[ben], layout, ben, kernels[ben], "6 * 7") == "42"
    assert _execute(clients[ada], layout, ada, kernels[ada], "6 * 7") == "42"
    folders = {login: caps.server_folders(layout.hub_id, login) for login in (ada, ben)}
    for login, groups in folders.items():
        mem = groups["memory"]
        limit = mem / ("memory.max" if (mem / "memory.max").exists() else "memory.limit_in_bytes")
        assert int(limit.read_text()) == MEMORY, (login, limit)
        cpu = groups["cpu"]
        quota = ((cpu / "cpu.max").read_text().split()[0] if (cpu / "cpu.max").exists()
                 else (cpu / "cpu.cfs_quota_us").read_text().strip())
        assert quota == "50000", (login, quota)
        running = uid_processes(login)
        assert running, f"{login}: no process"
        for controller, folder in groups.items():
            assert running <= _procs(folder), f"{login}'s processes outside her {controller} cgroup"

    ben_before = uid_processes(ben)
    _execute(clients[ada], layout, ada, kernels[ada], "x = b'\\1' * (1 << 30)", wait=False)
    deadline = time.monotonic() + 300
    while _oom_kills(folders[ada]["memory"]) == 0:
        assert time.monotonic() < deadline, f"{ada}'s kernel took a GiB past her cap and was not killed"
        time.sleep(0.5)
    assert clients[ada].http.get(f"{layout.user_url(ada)}/api/status", timeout=60).ok, "her server went too"
    assert _oom_kills(folders[ben]["memory"]) == 0
    assert ben_before <= uid_processes(ben), "a process of the other student's server ended"
    assert _execute(clients[ben], layout, ben, kernels[ben], "sum(range(10))") == "45"

    grader = _Client(layout.url, ivy, passwords[ivy])
    service = layout.service_url(COURSE_ID)
    grader.wait_for(service, "formgrader")
    said = {}
    said["Generate"] = grader.call("POST", service, f"formgrader/api/assignment/{ASSIGNMENT}/assign")
    said["Release"] = grader.call("POST", service, f"formgrader/api/assignment/{ASSIGNMENT}/release")
    form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    for step in ("fetch", "submit"):
        assert clients[ben].call("POST", layout.user_url(ben), f"assignments/{step}", data=form)["success"]
    said["Collect"] = grader.call("POST", service, f"formgrader/api/assignment/{ASSIGNMENT}/collect")
    said["Autograde"] = grader.call("POST", service, f"formgrader/api/submission/{ASSIGNMENT}/{ben}/autograde")
    said["Generate Feedback"] = grader.call("POST", service,
                                            f"formgrader/api/assignment/{ASSIGNMENT}/{ben}/generate_feedback")
    for button, done in said.items():
        assert done["success"], (button, done)
        assert "[DEBUG]" not in done["log"], (button, done["log"][-3000:])
    assert "[INFO]" in said["Generate"]["log"] and "[INFO]" in said["Generate Feedback"]["log"], said

    deadline = time.monotonic() + CULLED_WITHIN
    while any(uid_processes(login) or any(p.exists() for p in folders[login].values()) for login in (ada, ben)):
        assert time.monotonic() < deadline, f"idle servers still run {CULLED_WITHIN} s on: " \
            f"{ {login: sorted(uid_processes(login)) for login in (ada, ben)} }"
        time.sleep(2)
    log = layout.log.read_text(errors="replace")
    for login in (ada, ben):
        assert f"Culling server {login}" in log, f"{login}'s server stopped, not by the idle culler"
