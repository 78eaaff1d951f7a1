"""The course hub (``make hub``) as a student and a grader feel it, on this machine.

Starts a hub as root in a fresh state folder (accounts removed at the end), then measures two
things. One after another, a few students in Chromium: login to a usable JupyterLab, the memory
of one student's server (the resident memory of every process of that user), fetch and submit
through nbgrader's server extension, and formgrader's Autograde for one student. A class at
once, 30 simulated students (each an HTTP client doing what the browser does: the hub's login
form, its server, the Assignments tab's calls): all log in and start their servers together, all
fetch, then all submit at the same moment; then an instructor collects and autogrades every one
of them in formgrader. Usage (as root): ``python -m benchmarks.hub [--students N] [--class N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import statistics
import sys
import tempfile
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


def _server_memory_mib(login: str) -> float:
    """Resident memory of every process ``login`` runs (its single-user server and kernels), MiB."""
    total = 0
    for proc in psutil.process_iter(["username", "memory_info"]):
        if proc.info["username"] == login and proc.info["memory_info"] is not None:
            total += proc.info["memory_info"].rss
    return total / 2**20


@contextlib.contextmanager
def _bench_hub(names: list[str], instructor: str) -> Iterator[tuple[object, dict[str, str]]]:
    """A hub in a fresh state folder with students ``names`` and one instructor, ``attention``
    generated and released; yields (layout, passwords) and removes everything it made."""
    from browser_support import free_port
    from test_hub import _as_grader

    from autograder.course.ids import COURSE_ID
    from autograder.hub import accounts, control
    from autograder.hub.layout import HubLayout

    if os.geteuid() != 0:
        raise SystemExit("benchmarks.hub must run as root (it makes system users, as make hub does)")
    envs = Path(os.environ.get("SELFATTN_HUB_TEST_ENVS", "/var/tmp/selfattn-hub-envs"))
    state = Path("/var/tmp") / f"selfattn-hub-bench-{secrets.token_hex(4)}"
    layout = HubLayout(state=state, envs=envs, port=free_port(4))  # hub, its API, proxy API, formgrader
    tmp = Path(tempfile.mkdtemp(prefix="hub-bench-"))
    roster = tmp / "roster.csv"
    roster.write_text("id,first_name,last_name,email,role\n" + "".join(f"{s},S,{s},,student\n" for s in names)
                      + f"{instructor},I,Ivy,,instructor\n")
    passwords = {n: secrets.token_urlsafe(12) for n in (*names, instructor)}
    env_before = dict(os.environ)
    os.environ.update(SELFATTN_HUB_STATE=str(state), SELFATTN_HUB_ENVS=str(envs), SELFATTN_HUB_PORT=str(layout.port))
    try:
        control.start(layout, {COURSE_ID: roster}, log=lambda line: None, timeout=300)
        for n, p in passwords.items():
            accounts.set_password(layout, n, p)
        _as_grader(layout, "generate_assignment", ASSIGNMENT, "--force")
        _as_grader(layout, "release_assignment", ASSIGNMENT)
        yield layout, passwords
    finally:
        try:
            control.stop(layout, log=lambda line: None, timeout=120)
        finally:
            os.environ.clear()
            os.environ.update(env_before)
            if state.exists():  # what this hub's record says it made, and nothing else
                accounts.remove_accounts(layout)
            shutil.rmtree(state, ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)


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


def class_at_once(students: int = 30) -> dict[str, float]:
    """A class of ``students`` at once (see the module docstring): seconds and MiB."""
    from autograder.course.ids import COURSE_ID

    names = [f"saclass-s{i:02d}" for i in range(students)]
    instructor = "saclass-ivy"
    form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    with _bench_hub(names, instructor) as (layout, passwords), _loopback_localhost():
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
            except BaseException:
                together.abort()  # nobody waits for a student who will not come
                raise
            together.wait(timeout=900)  # everyone hands in at the same moment
            t0 = time.perf_counter()
            done = client.call("POST", layout.user_url(name), "assignments/submit", data=form)
            submit = time.perf_counter() - t0
            if not done.get("success"):
                raise RuntimeError(f"{name}: submit failed: {str(done.get('value'))[-300:]}")
            return {"ready_s": ready, "fetch_s": fetch, "submit_s": submit, "memory_mib": _server_memory_mib(name)}

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
    out = {f"{k}_{f.__name__}": f([r[k] for r in rows])
           for k in ("ready_s", "submit_s") for f in (statistics.median, max)}
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
        print(f"course hub, a class of {klass} at once (simulated students, HTTP as their browsers):")
        print(f"  all log in and start their servers together: ready in {c['ready_s_median']:.1f} s median, "
              f"{c['ready_s_max']:.1f} s for the last; {c['memory_mib_total'] / 1024:.1f} GiB resident for "
              f"the class ({c['memory_mib_total'] / klass:.0f} MiB each)")
        print(f"  all submit at the same moment: {c['submit_s_median']:.2f} s median, {c['submit_s_max']:.2f} s "
              f"for the slowest (fetch, everyone at once: {c['fetch_s_median']:.2f} s median)")
        print(f"  formgrader: Collect {c['collect_s']:.1f} s; Autograde each student {c['autograde_s_median']:.1f} s "
              f"median, {c['autograde_s_max']:.1f} s max, {c['autograde_s_total']:.0f} s for the class  "
              f"[target <= {AUTOGRADE_TARGET_S:g} s a student]")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still removes its accounts
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=3, help="students one after another, in Chromium")
    p.add_argument("--class", dest="klass", type=int, default=30, help="students at once (0: skip)")
    a = p.parse_args()
    print_hub(a.students, a.klass)
