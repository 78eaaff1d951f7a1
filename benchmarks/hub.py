"""The course hub (``make hub``) as a student and a grader feel it, on this machine.

Starts a hub as root in a fresh state folder with a few students and one instructor (accounts
removed at the end), then measures: login to a usable JupyterLab (Chromium), the memory of one
student's server (the resident memory of every process of that user), fetch and submit through
nbgrader's server extension, and formgrader's Autograde for one student. Usage (as root):
``python -m benchmarks.hub [--students N]``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

#: formgrader's Autograde for one student (the issue's target)
AUTOGRADE_TARGET_S = 2.0


def _server_memory_mib(login: str) -> float:
    """Resident memory of every process ``login`` runs (its single-user server and kernels), MiB."""
    total = 0
    for proc in psutil.process_iter(["username", "memory_info"]):
        if proc.info["username"] == login and proc.info["memory_info"] is not None:
            total += proc.info["memory_info"].rss
    return total / 2**20


def hub_benchmark(students: int = 3) -> dict[str, float]:
    """Seconds and MiB (see the module docstring); medians over ``students`` students."""
    from browser_support import CHROMIUM_ARGS, chromium_path, free_port
    from playwright.sync_api import sync_playwright

    from autograder.course.ids import COURSE_ID
    from autograder.hub import accounts, control
    from autograder.hub.layout import HubLayout

    if os.geteuid() != 0:
        raise SystemExit("benchmarks.hub must run as root (it makes system users, as make hub does)")
    envs = Path(os.environ.get("SELFATTN_HUB_TEST_ENVS", "/var/tmp/selfattn-hub-envs"))
    state = Path("/var/tmp") / f"selfattn-hub-bench-{secrets.token_hex(4)}"
    layout = HubLayout(state=state, envs=envs, port=free_port())
    names = [f"sabench-s{i:02d}" for i in range(students)]
    instructor = "sabench-ivy"
    tmp = Path(tempfile.mkdtemp(prefix="hub-bench-"))
    roster = tmp / "roster.csv"
    roster.write_text("id,first_name,last_name,email,role\n" + "".join(f"{s},S,{s},,student\n" for s in names)
                      + f"{instructor},I,Ivy,,instructor\n")
    passwords = {n: secrets.token_urlsafe(12) for n in (*names, instructor)}
    env_before = dict(os.environ)
    os.environ.update(SELFATTN_HUB_STATE=str(state), SELFATTN_HUB_ENVS=str(envs), SELFATTN_HUB_PORT=str(layout.port))
    out: dict[str, list[float]] = {"login_s": [], "memory_mib": [], "fetch_s": [], "submit_s": []}
    try:
        control.start(layout, {COURSE_ID: roster}, log=lambda line: None, timeout=300)
        for n, p in passwords.items():
            accounts.set_password(n, p)
        from test_hub import _api, _as_grader, _formgrader, _login

        _as_grader(layout, "generate_assignment", "attention", "--force")
        _as_grader(layout, "release_assignment", "attention")
        form = {"course_id": COURSE_ID, "assignment_id": "attention"}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            try:
                for name in names:
                    t0 = time.perf_counter()
                    context, page = _login(browser, layout, name, passwords[name])
                    page.wait_for_url(f"**/user/{name}/lab**", timeout=300_000)
                    page.wait_for_selector(".jp-LauncherCard", timeout=300_000)
                    out["login_s"].append(time.perf_counter() - t0)
                    base = f"{layout.url}/user/{name}"
                    for step in ("fetch", "submit"):
                        t0 = time.perf_counter()
                        _api(page, context, "POST", f"{base}/assignments/{step}", form=form)
                        out[f"{step}_s"].append(time.perf_counter() - t0)
                    out["memory_mib"].append(_server_memory_mib(name))
                    context.close()
                context, page = _formgrader(browser, layout, instructor, passwords[instructor])
                fg = f"{layout.url}/services/{COURSE_ID}/formgrader/api"
                _api(page, context, "POST", f"{fg}/assignment/attention/collect")
                t0 = time.perf_counter()
                done = _api(page, context, "POST", f"{fg}/submission/attention/{names[0]}/autograde")
                autograde = time.perf_counter() - t0
                if not done["success"]:
                    raise RuntimeError(f"formgrader's Autograde failed: {str(done.get('log'))[-500:]}")
                context.close()
            finally:
                browser.close()
    finally:
        try:
            control.stop(layout, log=lambda line: None)
        finally:
            os.environ.clear()
            os.environ.update(env_before)
            accounts.remove_accounts([*names, instructor], [COURSE_ID])
            shutil.rmtree(state, ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)
    result = {k: statistics.median(v) for k, v in out.items()}
    result["autograde_s"] = autograde
    result["students"] = float(students)
    return result


def print_hub(students: int = 3) -> None:
    r = hub_benchmark(students)
    print(f"course hub, {students:.0f} students one after another (medians):")
    print(f"  login to a usable JupyterLab: {r['login_s']:.1f} s; memory per student server: "
          f"{r['memory_mib']:.0f} MiB (resident, the user's processes)")
    print(f"  fetch: {r['fetch_s']:.2f} s; submit: {r['submit_s']:.2f} s")
    print(f"  formgrader's Autograde for one student (all nine notebooks released, none answered): "
          f"{r['autograde_s']:.1f} s  [target <= {AUTOGRADE_TARGET_S:g} s]")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=3)
    print_hub(p.parse_args().students)
