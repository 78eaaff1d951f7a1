"""The course hub (``make hub``) as a student and a grader feel it, on this machine.

Starts a hub as root in a fresh state folder (accounts removed at the end), then measures two
things. One after another, a few students in Chromium: login to a usable JupyterLab, the memory
of one student's server (the resident memory of every process of that user), fetch and submit
through nbgrader's server extension, and formgrader's Autograde for one student. A class at
once, 30 simulated students (each an HTTP client doing what the browser does: the hub's login
form, its server, the Assignments tab's calls): all log in and start their servers together, all
fetch, then all submit at the same moment; then an instructor collects and autogrades every one
of them in formgrader. The class runs with the hub's caps per student server in force (its
defaults, :mod:`autograder.hub.caps`) and a short idle timeout: each student also starts a kernel
that imports the course's package, the class's memory is taken with every server and kernel up
(no culling), then again once the idle culler has stopped the idle servers; from them, what fits
on a 24 GiB, 2-core machine. Usage (as root): ``python -m benchmarks.hub [--students N] [--class N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

#: formgrader's Autograde for one student (the issue's target)
AUTOGRADE_TARGET_S = 2.0
ASSIGNMENT = "attention"
#: the class's idle timeout (seconds): short, so that the culler's effect is measured in minutes
CLASS_IDLE_TIMEOUT = 60
#: the machine a class is sized for here
MACHINE_GIB, MACHINE_CORES = 24, 2
#: what a student's kernel does first (the course's notebooks import these)
KERNEL_CODE = "import numpy as np\nimport selfattn\n1 + 1"


def _hub_memory_mib(layout) -> float:
    """Resident memory of the hub itself: its process tree (proxy, idle culler, services) less the
    students' servers, which run as the students."""
    try:
        hub = psutil.Process(int(layout.pid_file.read_text()))
        procs = [hub, *hub.children(recursive=True)]
    except (OSError, ValueError, psutil.Error):
        return 0.0
    total = 0
    for proc in procs:
        try:
            if proc.username() in ("root",) or proc.username().startswith(layout.hub_id):
                total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


async def execute(client, base: str, kernel: str, code: str, wait: bool = True) -> str:
    """Run ``code`` in the kernel ``kernel`` of the server at ``base`` through the kernel's websocket,
    as JupyterLab does, logged in as ``client`` (a :class:`_Client`); the text of its result
    (``wait``), else "" as soon as it was sent."""
    import asyncio
    import json
    import uuid

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    host = base.split("//", 1)[1].split("/", 1)[0].split(":")[0]
    cookie = "; ".join(f"{c.name}={c.value}" for c in client.http.cookies if host.endswith(c.domain.lstrip(".")))
    url = base.replace("http://", "ws://", 1).replace("https://", "wss://", 1) + f"/api/kernels/{kernel}/channels"
    conn = await websocket_connect(HTTPRequest(url, headers={"Cookie": cookie}))
    msg_id = uuid.uuid4().hex
    conn.write_message(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": client.name,
                   "session": uuid.uuid4().hex, "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                    "allow_stdin": False}}))
    try:
        if not wait:
            await asyncio.sleep(1)
            return ""
        while True:
            raw = await asyncio.wait_for(conn.read_message(), 300)
            if raw is None:
                raise RuntimeError(f"{client.name}'s kernel closed its channels")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "execute_result":
                return msg["content"]["data"]["text/plain"]
            if msg["msg_type"] == "error":
                said = msg["content"]
                raise RuntimeError(f"{client.name}'s kernel: {said.get('ename')}: {said.get('evalue')}")
    finally:
        conn.close()


def _server_memory_mib(login: str) -> float:
    """Resident memory of every process ``login`` runs (its single-user server and kernels), MiB."""
    total = 0
    for proc in psutil.process_iter(["username", "memory_info"]):
        if proc.info["username"] == login and proc.info["memory_info"] is not None:
            total += proc.info["memory_info"].rss
    return total / 2**20


@contextlib.contextmanager
def _bench_hub(names: list[str], instructor: str, settings: str = "") -> Iterator[tuple[object, dict[str, str]]]:
    """A hub of its own (``tests/hub_support.py``) with students ``names`` and one instructor,
    ``attention`` generated and released, the hub's settings file ``settings`` (if given); yields
    (layout, passwords) and removes everything it made."""
    from hub_support import own_hub
    from test_hub import _as_grader

    from autograder.course.ids import COURSE_ID

    if os.geteuid() != 0:
        raise SystemExit("benchmarks.hub must run as root (it makes system users, as make hub does)")
    roster = "".join(f"{s},S,{s},,student\n" for s in names) + f"{instructor},I,Ivy,,instructor\n"
    with own_hub("bench", {COURSE_ID: roster}, settings=settings, stop_timeout=120) as (layout, passwords, _):
        _as_grader(layout, "generate_assignment", ASSIGNMENT, "--force")
        _as_grader(layout, "release_assignment", ASSIGNMENT)
        yield layout, passwords


def hub_benchmark(students: int = 3) -> dict[str, float]:
    """Seconds and MiB (see the module docstring); medians over ``students`` students."""
    from browser_support import CHROMIUM_ARGS, chromium_path, driver, stop_driver
    from test_hub import _api, _formgrader, _login

    from autograder.course.ids import COURSE_ID

    names = [f"sabench-s{i:02d}" for i in range(students)]
    instructor = "sabench-ivy"
    out: dict[str, list[float]] = {"login_s": [], "memory_mib": [], "fetch_s": [], "submit_s": []}
    with _bench_hub(names, instructor) as (layout, passwords):
        form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
        with driver() as pw:  # its API requests resolve *.localhost (the hub's hosts), as Chromium does
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            try:
                for name in names:
                    t0 = time.perf_counter()
                    context, page = _login(browser, layout, name, passwords[name])
                    page.wait_for_url(f"**/user/{name}/lab**", timeout=300_000)
                    page.wait_for_selector(".jp-LauncherCard", timeout=300_000)
                    out["login_s"].append(time.perf_counter() - t0)
                    base = layout.user_url(name)
                    for step in ("fetch", "submit"):
                        t0 = time.perf_counter()
                        _api(page, context, "POST", f"{base}/assignments/{step}", form=form)
                        out[f"{step}_s"].append(time.perf_counter() - t0)
                    out["memory_mib"].append(_server_memory_mib(name))
                    context.close()
                context, page = _formgrader(browser, layout, instructor, passwords[instructor])
                fg = f"{layout.service_url(COURSE_ID)}/formgrader/api"
                _api(page, context, "POST", f"{fg}/assignment/{ASSIGNMENT}/collect")
                t0 = time.perf_counter()
                done = _api(page, context, "POST", f"{fg}/submission/{ASSIGNMENT}/{names[0]}/autograde")
                autograde = time.perf_counter() - t0
                if not done["success"]:
                    raise RuntimeError(f"formgrader's Autograde failed: {str(done.get('log'))[-500:]}")
                context.close()
            finally:
                browser.close()
                stop_driver()
    result = {k: statistics.median(v) for k, v in out.items()}
    result["autograde_s"] = autograde
    result["students"] = float(students)
    return result


@contextlib.contextmanager
def _loopback_localhost() -> Iterator[None]:
    """``*.localhost`` resolves to 127.0.0.1 in this process, as browsers resolve it (the system's
    resolver does not): the hub's host and the hosts of its users' servers and formgrader."""
    import socket

    resolve = socket.getaddrinfo

    def loopback(host, *args, **kw):
        if isinstance(host, str) and (host == "localhost" or host.endswith(".localhost")):
            host = "127.0.0.1"
        return resolve(host, *args, **kw)

    socket.getaddrinfo = loopback
    try:
        yield
    finally:
        socket.getaddrinfo = resolve


class _Client:
    """One simulated student or grader: an HTTP session doing what their browser does (each server
    on its own host: the hub at ``url``, a user's server or formgrader at the ``base`` given)."""

    def __init__(self, url: str, name: str, password: str):
        self.url, self.name = url, name
        self.http = requests.Session()
        self.http.get(f"{url}/hub/login", timeout=60)
        form = {"username": name, "password": password, "_xsrf": self.http.cookies.get("_xsrf", path="/hub/")}
        answer = self.http.post(f"{url}/hub/login", data=form, allow_redirects=False, timeout=120)
        if answer.status_code != 302:
            raise RuntimeError(f"{name}: the hub refused the login ({answer.status_code})")

    def start_server(self, base: str, timeout: float = 600) -> None:
        """Ask the hub for this user's server at ``base`` (as the login's redirect does) and wait
        until it answers."""
        self.http.get(f"{self.url}/hub/spawn/{self.name}", timeout=120)
        self.wait_for(base, "lab", timeout)  # the page runs the OAuth handshake; the API would 403

    def wait_for(self, base: str, page: str, timeout: float = 600) -> None:
        """Until ``base/page`` (a user's server or a service) answers this logged-in user."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self.http.get(f"{base}/{page}", timeout=120)
            if answer.ok and answer.url.startswith(f"{base}/"):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: {base} did not answer in {timeout:.0f} s ({answer.status_code})")
            time.sleep(0.5)

    def call(self, method: str, base: str, path: str, **kw) -> dict:
        from urllib.parse import urlsplit

        where = urlsplit(base)
        xsrf = [c.value for c in self.http.cookies if c.name == "_xsrf" and c.domain.lstrip(".") == where.hostname
                and where.path.startswith(c.path.rstrip("/"))]
        headers = {"X-XSRFToken": xsrf[-1]} if xsrf else {}
        answer = self.http.request(method, f"{base}/{path}", headers=headers, timeout=600, **kw)
        if not answer.ok:
            raise RuntimeError(f"{self.name}: {method} {base}/{path}: {answer.status_code} {answer.text[-300:]}")
        return answer.json()


def class_at_once(students: int = 30, idle_timeout: int = CLASS_IDLE_TIMEOUT) -> dict[str, float]:
    """A class of ``students`` at once (see the module docstring): seconds and MiB; the caps in force
    as the key ``caps`` (text)."""
    import asyncio

    from autograder.course.ids import COURSE_ID
    from autograder.hub import caps

    names = [f"saclass-s{i:02d}" for i in range(students)]
    instructor = "saclass-ivy"
    form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    settings = f"c = get_config()\nc.IdleCuller.timeout = {idle_timeout}\n"
    with _bench_hub(names, instructor, settings) as (layout, passwords), _loopback_localhost():
        read = caps.read_settings(caps.settings_path(layout.hub))
        in_force, cap_mib = caps.describe(read), (read.memory or 0) / 2**20
        url = layout.url
        together = threading.Barrier(students)

        def one(name: str) -> dict[str, float]:
            try:
                t0 = time.perf_counter()
                client = _Client(url, name, passwords[name])
                client.start_server(layout.user_url(name))
                ready = time.perf_counter() - t0
                t0 = time.perf_counter()
                client.call("POST", layout.user_url(name), "assignments/fetch", data=form)
                fetch = time.perf_counter() - t0
                t0 = time.perf_counter()
                kernel = client.call("POST", layout.user_url(name), "api/kernels", json={})["id"]
                asyncio.run(execute(client, layout.user_url(name), kernel, KERNEL_CODE))
                kernel_s = time.perf_counter() - t0
            except BaseException:
                together.abort()  # nobody waits for a student who will not come
                raise
            together.wait(timeout=900)  # everyone hands in at the same moment
            t0 = time.perf_counter()
            done = client.call("POST", layout.user_url(name), "assignments/submit", data=form)
            submit = time.perf_counter() - t0
            if not done.get("success"):
                raise RuntimeError(f"{name}: submit failed: {str(done.get('value'))[-300:]}")
            return {"ready_s": ready, "fetch_s": fetch, "submit_s": submit, "kernel_s": kernel_s,
                    "memory_mib": _server_memory_mib(name)}

        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=students) as pool:
            rows = list(pool.map(one, names))
        everyone = time.perf_counter() - t0
        submitted = sorted((layout.course_exchange() / "inbound").iterdir())
        if len(submitted) != students:
            raise RuntimeError(f"{len(submitted)} submissions reached the exchange, not {students}")
        grader = _Client(url, instructor, passwords[instructor])
        service = layout.service_url(COURSE_ID)
        grader.wait_for(service, "formgrader")
        t0 = time.perf_counter()
        grader.call("POST", service, f"formgrader/api/assignment/{ASSIGNMENT}/collect")
        collect = time.perf_counter() - t0
        autograde: list[float] = []
        for name in names:
            t0 = time.perf_counter()
            done = grader.call("POST", service, f"formgrader/api/submission/{ASSIGNMENT}/{name}/autograde")
            autograde.append(time.perf_counter() - t0)
            if not done["success"]:
                raise RuntimeError(f"formgrader's Autograde of {name} failed: {str(done.get('log'))[-500:]}")
        memory = sum(r["memory_mib"] for r in rows)
        busy = sum(_server_memory_mib(name) for name in names)  # every server and kernel up, after grading
        hub = _hub_memory_mib(layout)
        t0 = time.perf_counter()
        while any(_server_memory_mib(name) for name in names):  # nobody does anything: the culler's turn
            if time.perf_counter() - t0 > 20 * idle_timeout + 600:
                raise RuntimeError(f"the idle culler left servers up {time.perf_counter() - t0:.0f} s")
            time.sleep(2)
        culled = time.perf_counter() - t0
        after = sum(_server_memory_mib(name) for name in names)
        hub_after = _hub_memory_mib(layout)
    out = {f"{k}_{f.__name__}": f([r[k] for r in rows])
           for k in ("ready_s", "submit_s", "kernel_s") for f in (statistics.median, max)}
    out.update(busy_mib=busy, idle_mib=after, hub_mib=hub, hub_idle_mib=hub_after, culled_s=culled,
               idle_timeout_s=float(idle_timeout), cap_mib=cap_mib)
    out["caps"] = in_force  # type: ignore[assignment]
    out.update(everyone_s=everyone, fetch_s_median=statistics.median(r["fetch_s"] for r in rows),
               memory_mib_total=memory, collect_s=collect, autograde_s_median=statistics.median(autograde),
               autograde_s_max=max(autograde), autograde_s_total=sum(autograde), students=float(students))
    return out


def print_hub(students: int = 3, klass: int = 30) -> None:
    r = hub_benchmark(students)
    print(f"course hub, {students:.0f} students one after another (medians):")
    print(f"  login to a usable JupyterLab: {r['login_s']:.1f} s; memory per student server: "
          f"{r['memory_mib']:.0f} MiB (resident, the user's processes)")
    print(f"  fetch: {r['fetch_s']:.2f} s; submit: {r['submit_s']:.2f} s")
    print(f"  formgrader's Autograde for one student (all nine notebooks released, none answered): "
          f"{r['autograde_s']:.1f} s  [target <= {AUTOGRADE_TARGET_S:g} s]")
    if klass:
        c = class_at_once(klass)
        each = c["busy_mib"] / klass
        print(f"course hub, a class of {klass} at once (simulated students, HTTP as their browsers; {c['caps']}):")
        print(f"  all log in and start their servers together: ready in {c['ready_s_median']:.1f} s median, "
              f"{c['ready_s_max']:.1f} s for the last; {c['memory_mib_total'] / 1024:.1f} GiB resident for "
              f"the class ({c['memory_mib_total'] / klass:.0f} MiB each)")
        print(f"  each starts a kernel and imports numpy and selfattn: {c['kernel_s_median']:.1f} s median, "
              f"{c['kernel_s_max']:.1f} s for the last")
        print(f"  all submit at the same moment: {c['submit_s_median']:.2f} s median, {c['submit_s_max']:.2f} s "
              f"for the slowest (fetch, everyone at once: {c['fetch_s_median']:.2f} s median)")
        print(f"  formgrader: Collect {c['collect_s']:.1f} s; Autograde each student {c['autograde_s_median']:.1f} s "
              f"median, {c['autograde_s_max']:.1f} s max, {c['autograde_s_total']:.0f} s for the class  "
              f"[target <= {AUTOGRADE_TARGET_S:g} s a student]")
        print(f"  memory without culling (every server and kernel up): {c['busy_mib'] / 1024:.2f} GiB for the class, "
              f"{each:.0f} MiB per student with a kernel; the hub, proxy, culler and formgrader {c['hub_mib']:.0f} MiB")
        print(f"  with the idle culler (timeout {c['idle_timeout_s']:.0f} s): every server stopped "
              f"{c['culled_s']:.0f} s after the class went idle; then {c['idle_mib']:.0f} MiB for the class, "
              f"{c['hub_idle_mib']:.0f} MiB for the hub")
        room = MACHINE_GIB * 1024 - c["hub_mib"] - 2048  # the hub, and 2 GiB for the system and grading
        print(f"  on a {MACHINE_GIB} GiB, {MACHINE_CORES}-core machine: {room / each:.0f} students with a kernel up at "
              f"once by memory ({room / 1024:.1f} GiB left for them); every cap filled at once "
              f"({c['cap_mib']:.0f} MiB each) {room / max(c['cap_mib'], 1):.0f}; the rest of a class of "
              f"200 is held by the culler (idle servers take nothing); CPU: each server at most 1 core of "
              f"{MACHINE_CORES}, so starting {klass} servers at once took {c['ready_s_max']:.0f} s")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still removes its accounts
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=3, help="students one after another, in Chromium")
    p.add_argument("--class", dest="klass", type=int, default=30, help="students at once (0: skip)")
    a = p.parse_args()
    print_hub(a.students, a.klass)
