"""The course on a real JupyterHub (``make hub``), driven in headless Chromium as a small class.

The test starts the hub itself as root (PAM accounts from a roster, the two environments, formgrader
as a hub service) in a fresh state folder, and fails with the reason when it cannot. Students log in
and their JupyterLab fetches and submits through nbgrader's server extension (the calls the
Assignments tab makes); the instructor opens formgrader, a student gets 403 there; the system
refuses a student every other home, other submissions, the course copy (solutions, hidden checks,
gradebook); the hub restarts and keeps its users and the submissions. Every account, process and
folder it made is removed. The environments are cached in ``/var/tmp/selfattn-hub-envs``
(``$SELFATTN_HUB_TEST_ENVS``; rebuilt when their requirements change).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
from browser_support import CHROMIUM_ARGS, chromium_path, free_port

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts, control
from autograder.hub.layout import GRADER_USER, HubLayout

ENVS = Path(os.environ.get("SELFATTN_HUB_TEST_ENVS", "/var/tmp/selfattn-hub-envs"))
STUDENTS = ("sahub-ada", "sahub-ben")
INSTRUCTOR = "sahub-ivy"
ASSIGNMENT = "attention"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the hub test must run as root (it makes system users, as make hub does)")
    state = Path("/var/tmp") / f"selfattn-hub-test-{secrets.token_hex(4)}"
    layout = HubLayout(state=state, envs=ENVS, port=free_port())
    while any(_busy(layout.port + k) for k in range(1, 4)):
        layout = HubLayout(state=state, envs=ENVS, port=free_port())
    roster = tmp_path_factory.mktemp("hub") / "roster.csv"
    roster.write_text("id,first_name,last_name,email,role\n" + "".join(f"{s},S,{s},,student\n" for s in STUDENTS)
                      + f"{INSTRUCTOR},I,Ivy,,instructor\n")
    passwords = {name: secrets.token_urlsafe(12) for name in (*STUDENTS, INSTRUCTOR)}
    env_before = dict(os.environ)
    os.environ.update(SELFATTN_HUB_STATE=str(state), SELFATTN_HUB_ENVS=str(ENVS), SELFATTN_HUB_PORT=str(layout.port))
    try:
        control.start(layout, roster, log=lambda line: None, timeout=180)
        for name, password in passwords.items():
            accounts.set_password(name, password)
        _as_grader(layout, "release_assignment", ASSIGNMENT)
        yield layout, roster, passwords
    finally:
        try:
            control.stop(layout, log=lambda line: None)
        finally:
            os.environ.clear()
            os.environ.update(env_before)
            accounts.remove_accounts([*STUDENTS, INSTRUCTOR])
            shutil.rmtree(state, ignore_errors=True)


def _busy(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _as_grader(layout: HubLayout, *args: str) -> str:
    """An nbgrader command as the grader account, with the formgrader service's settings."""
    env = {"PATH": f"{layout.grader_env / 'bin'}:/usr/bin:/bin", "PYTHONPATH": str(layout.course),
           "JUPYTER_CONFIG_PATH": str(layout.grader_config), "HOME": f"/home/{GRADER_USER}",
           "TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR": "1"}
    done = subprocess.run(["runuser", "-u", GRADER_USER, "--", "env", *(f"{k}={v}" for k, v in env.items()),
                           str(layout.grader_env / "bin" / "nbgrader"), *args],
                          cwd=layout.course / "autograder", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr


def _as_user(login: str, *argv: str) -> subprocess.CompletedProcess:
    """``argv`` as ``login``, in its home (as its server runs), not in the checkout."""
    return subprocess.run(["runuser", "-u", login, "--", *argv], capture_output=True, text=True,
                          cwd=f"/home/{login}")


def _login(browser, layout: HubLayout, name: str, password: str):
    """A browser context logged in to the hub as ``name``, its page on the user's first page."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{layout.url}/hub/login", wait_until="domcontentloaded")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    return context, page


def _xsrf(context) -> dict[str, str]:
    token = next(c["value"] for c in context.cookies() if c["name"] == "_xsrf")
    return {"X-XSRFToken": token}


def test_a_class_works_on_the_hub(hub):
    layout, roster, passwords = hub
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            _week(browser, layout, roster, passwords)
        finally:
            browser.close()


def _week(browser, layout: HubLayout, roster: Path, passwords: dict[str, str]) -> None:
    ada, ben = STUDENTS
    for student in STUDENTS:
        context, page = _login(browser, layout, student, passwords[student])
        page.wait_for_url(f"**/user/{student}/lab**", timeout=180_000)
        page.wait_for_selector(".jp-LauncherCard", timeout=120_000)
        base = f"{layout.url}/user/{student}"
        courses = page.request.get(f"{base}/courses").json()
        assert courses["value"] == [COURSE_ID], courses
        listed = page.request.get(f"{base}/assignments?course_id={COURSE_ID}").json()
        assert [a["assignment_id"] for a in listed["value"]] == [ASSIGNMENT], listed
        form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
        fetched = page.request.post(f"{base}/assignments/fetch", form=form, headers=_xsrf(context))
        assert fetched.json()["success"], fetched.text()
        submitted = page.request.post(f"{base}/assignments/submit", form=form, headers=_xsrf(context))
        assert submitted.json()["success"], submitted.text()
        # formgrader is the graders' service only
        forbidden = page.request.get(f"{layout.url}/services/{COURSE_ID}/formgrader", max_redirects=5)
        assert forbidden.status == 403, (forbidden.status, forbidden.url)
        context.close()
    assert Path(f"/home/{ada}/{ASSIGNMENT}").is_dir()

    # what the system refuses a student
    refused = {
        "another home": ["ls", f"/home/{ben}"],
        "the exchange's inbound listing": ["ls", str(layout.exchange / COURSE_ID / "inbound")],
        "the course copy (solutions, hidden checks)": ["ls", str(layout.course / "solutions")],
        "the gradebook": ["cat", str(layout.course / "autograder" / "gradebook.db")],
        "the hub's database": ["cat", str(layout.hub / "jupyterhub.sqlite")],
    }
    for what, argv in refused.items():
        done = _as_user(ada, *argv)
        assert done.returncode != 0 and "ermission denied" in done.stderr, (what, done)
    no_package = _as_user(ada, str(layout.student_env / "bin" / "python"), "-c",
                          "import selfattn, sys; print(selfattn.__file__)")
    assert str(layout.student_env) in no_package.stdout, no_package

    # the instructor opens formgrader
    context, page = _login(browser, layout, INSTRUCTOR, passwords[INSTRUCTOR])
    page.wait_for_url("**/user/**", timeout=180_000)
    answer = page.goto(f"{layout.url}/services/{COURSE_ID}/formgrader", wait_until="domcontentloaded")
    assert answer is not None and answer.status == 200, answer and answer.status
    page.wait_for_selector("text=Manage Assignments", timeout=120_000)
    context.close()

    # collect, as formgrader's Collect button does
    out = _as_grader(layout, "collect", ASSIGNMENT)
    for student in STUDENTS:
        assert (layout.course / "autograder" / "submitted" / student / ASSIGNMENT).is_dir(), out

    # the hub restarts mid-week: users, submissions and the exchange are kept
    control.stop(layout, log=lambda line: None)
    control.start(layout, roster, log=lambda line: None, timeout=180)
    context, page = _login(browser, layout, ben, passwords[ben])
    page.wait_for_url(f"**/user/{ben}/lab**", timeout=180_000)
    listed = page.request.get(f"{layout.url}/user/{ben}/assignments?course_id={COURSE_ID}").json()
    # nbgrader lists the fetched copy and each submission
    assert sorted(a["status"] for a in listed["value"]) == ["fetched", "submitted"], listed
    context.close()
