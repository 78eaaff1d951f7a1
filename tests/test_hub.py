"""A week of the course on a real JupyterHub (``make hub``), driven in headless Chromium.

The test starts the hub itself as root (PAM accounts from a roster, the two environments, formgrader
as a hub service) in a fresh state folder, and fails with the reason when it cannot. Three students
log in; their JupyterLab fetches, saves, validates and submits through the server extensions the
Assignments tab and the Validate button call (ada right, ben with a named mistake, cat after the due
date an instructor set in formgrader). Two graders (an instructor and a TA) open formgrader; the
hub restarts mid-week; formgrader collects and autogrades (as the grader account, in the course's
bubblewrap sandbox), the graders hand-grade the written answer, generate and release feedback; the
students fetch their feedback and open it with no request leaving 127.0.0.1. The scores equal
``autograder.grade`` on the same submissions. The system refuses a student formgrader (403), every
other home, the exchange's listings, the course copy and the hub's database. The grader account's
own sandbox reports the caps that hold there. Then a second hub of the same course starts beside it
and is removed, and the first (the live course) is exactly as before. Every account, process and
folder a hub made (what its record names) is removed, and nothing else.
The environments are cached in ``/var/tmp/selfattn-hub-envs`` (``$SELFATTN_HUB_TEST_ENVS``; rebuilt
when their requirements change); ``make test`` builds them before pytest starts, beside the book
(``make hub-test-envs``), and this test builds whatever is still missing.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

import pytest
from browser_support import CHROMIUM_ARGS, chromium_path, free_port
from grading_support import grade, scores
from test_instructor_loop import WRITTEN, _answer

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts, control
from autograder.hub.layout import HubLayout

ENVS = Path(os.environ.get("SELFATTN_HUB_TEST_ENVS", "/var/tmp/selfattn-hub-envs"))
STUDENTS = ("sahub-ada", "sahub-ben", "sahub-cat")
INSTRUCTOR, TA = "sahub-ivy", "sahub-tom"
ASSIGNMENT = "attention"
NB = "04-scaling"
STDS = "score_stds"
#: ben's mistake (tests/catalogue/wrong/score_stds_divided_by_dk.py) and the words check() names it by
MISTAKE = "def score_stds(q, k):\n    dots = np.sum(q * k, axis=1)\n    return dots.std(), (dots / q.shape[1]).std()\n"
MISTAKE_WORDS = "divides by d_k"
#: the written answer's hand grade, and who gives it (two graders share formgrader)
HAND = {"sahub-ada": (3.0, INSTRUCTOR), "sahub-ben": (1.0, TA), "sahub-cat": (2.0, TA)}
SERVICE = f"/services/{COURSE_ID}"
#: a second course on the same hub, with its own student and instructor
SECOND, DAN, UNA = "sahub-second", "sahub-dan", "sahub-una"
COURSES = (COURSE_ID, SECOND)
#: how long a stop may take here: a few seconds (the formgraders end one after another, then the
#: servers); a deadline, not a speed check, as a start's is, and a late stop names the hub's log
STOP_TIMEOUT = 180
#: where a fetched assignment lands in a student's home (one folder per course)
HOME_NB = f"{COURSE_ID}/{ASSIGNMENT}/{NB}.ipynb"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the hub test must run as root (it makes system users, as make hub does)")
    state = Path("/var/tmp") / f"selfattn-hub-test-{secrets.token_hex(4)}"
    # the hub, its API, the proxy's API and one formgrader per course (HubLayout.formgrader_port)
    layout = HubLayout(state=state, envs=ENVS, port=free_port(3 + len(COURSES)))
    roster = tmp_path_factory.mktemp("hub") / "roster.csv"
    roster.write_text("id,first_name,last_name,email,role\n" + "".join(f"{s},S,{s},,student\n" for s in STUDENTS)
                      + f"{INSTRUCTOR},I,Ivy,,instructor\n{TA},T,Tom,,ta\n")
    second = roster.with_name("second.csv")
    second.write_text(f"id,first_name,last_name,email,role\n{DAN},D,Dan,,student\n{UNA},U,Una,,instructor\n")
    rosters = {COURSE_ID: roster, SECOND: second}
    passwords = {name: secrets.token_urlsafe(12) for name in (*STUDENTS, INSTRUCTOR, TA, DAN, UNA)}
    _none_left(passwords)
    env_before = dict(os.environ)
    os.environ.update(SELFATTN_HUB_STATE=str(state), SELFATTN_HUB_ENVS=str(ENVS), SELFATTN_HUB_PORT=str(layout.port))
    try:
        control.start(layout, rosters, log=lambda line: None, timeout=180)
        for name, password in passwords.items():
            accounts.set_password(layout, name, password)
        # formgrader's Generate (the gradebook learns the notebooks) and Release buttons, in each course
        for course in COURSES:
            _as_grader(layout, "generate_assignment", ASSIGNMENT, "--force", course=course)
            _as_grader(layout, "release_assignment", ASSIGNMENT, course=course)
        yield layout, rosters, passwords
    finally:
        try:
            control.stop(layout, log=lambda line: None, timeout=STOP_TIMEOUT)
        finally:
            os.environ.clear()
            os.environ.update(env_before)
            if state.exists():  # what this hub's record says it made, and nothing else
                accounts.remove_accounts(layout)
            shutil.rmtree(state, ignore_errors=True)


def _none_left(logins) -> None:
    """Fail, naming them, when accounts of these (fixed) logins exist: left by an earlier run that
    could not clean up; this hub never takes over an account it did not make."""
    import pwd

    left = [login for login in logins if login in {p.pw_name for p in pwd.getpwall()}]
    if left:
        pytest.fail(f"accounts {left} exist (left by an earlier run?): the test hub would refuse them; "
                    f"remove them with userdel --remove")


def _grader_env(layout: HubLayout, course: str) -> dict[str, str]:
    """The environment of ``course``'s formgrader service (autograder/hub/jupyterhub_config.py)."""
    return {"PATH": f"{layout.grader_env / 'bin'}:/usr/bin:/bin", "PYTHONPATH": str(layout.course(course)),
            "JUPYTER_CONFIG_PATH": str(layout.grader_config(course)), "HOME": f"/home/{layout.grader_user(course)}",
            "TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR": "1"}


def _run_as_grader(layout: HubLayout, *argv: str, course: str = COURSE_ID) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", layout.grader_user(course), "--", "env",
                           *(f"{k}={v}" for k, v in _grader_env(layout, course).items()), *argv],
                          cwd=layout.course(course) / "autograder", capture_output=True, text=True)


def _as_grader(layout: HubLayout, *args: str, course: str = COURSE_ID) -> str:
    """An nbgrader command as ``course``'s grader account, with its formgrader service's settings."""
    done = _run_as_grader(layout, str(layout.grader_env / "bin" / "nbgrader"), *args, course=course)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr


def _as_user(login: str, *argv: str) -> subprocess.CompletedProcess:
    """``argv`` as ``login``, in its home (as its server runs), not in the checkout."""
    return subprocess.run(["runuser", "-u", login, "--", *argv], capture_output=True, text=True,
                          cwd=f"/home/{login}")


def _login(browser, layout: HubLayout, name: str, password: str, then: str = ""):
    """A browser context logged in to the hub as ``name``, its page on the user's first page (their
    server, started), or at the hub's path ``then`` (a bookmark, the login page's ``next``)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{layout.url}/hub/login" + (f"?next={quote(then)}" if then else ""), wait_until="domcontentloaded")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    return context, page


def _lab(browser, layout: HubLayout, name: str, password: str):
    """Logged in as a student, their JupyterLab loaded."""
    context, page = _login(browser, layout, name, password)
    page.wait_for_url(f"**/user/{name}/lab**", timeout=180_000)
    # the Launcher, or the notebook JupyterLab reopens from the user's last session
    page.wait_for_selector(".jp-LauncherCard, .jp-Notebook .jp-Cell", timeout=120_000)
    return context, page


def _signed_in(browser, layout: HubLayout, name: str, password: str):
    """Logged in as a student whose server is running, its cookies set, for the calls the Assignments
    tab makes (JupyterLab's page is left as soon as the server answers it: nothing is asked of the
    Lab itself, and booting it costs seconds of two cores)."""
    context, page = _login(browser, layout, name, password)
    page.wait_for_url(f"**/user/{name}/lab**", timeout=180_000, wait_until="commit")
    page.goto("about:blank")
    return context, page


def _formgrader(browser, layout: HubLayout, name: str, password: str, service: str = SERVICE):
    """Logged in as a grader through formgrader's address (a grader's bookmark: no server of their own
    is started), formgrader's page open (which sets the service's XSRF cookie)."""
    context, page = _login(browser, layout, name, password, then=f"{service}/formgrader")
    page.wait_for_url(f"**{service}/formgrader**", timeout=180_000, wait_until="domcontentloaded")
    page.wait_for_selector("text=Manage Assignments", timeout=120_000)
    return context, page


def _xsrf(context, path: str) -> dict[str, str]:
    """The XSRF header of the server at ``path`` (each server sets its own ``_xsrf`` cookie)."""
    cookies = [c for c in context.cookies() if c["name"] == "_xsrf" and path.startswith(c["path"].rstrip("/"))]
    assert cookies, (path, [(c["name"], c["path"]) for c in context.cookies()])
    return {"X-XSRFToken": max(cookies, key=lambda c: len(c["path"]))["value"]}


def _api(page, context, method: str, url: str, **kw):
    """A call formgrader's or JupyterLab's page makes; its JSON answer (fails on an HTTP error)."""
    path = url.split("127.0.0.1", 1)[1].split("/", 1)[1]
    answer = page.request.fetch(url, method=method, headers=_xsrf(context, "/" + path), **kw)
    assert answer.ok, (method, url, answer.status, answer.text()[-2000:])
    return answer.json()


def _answered(nb: dict, answers: dict[str, str]) -> dict:
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell["source"] = answers[gid]
    return nb


def test_a_week_of_the_course_on_the_hub(hub, tmp_path):
    layout, rosters, passwords = hub
    from browser_support import driver

    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            _week(browser, layout, rosters, passwords, tmp_path)
        finally:
            browser.close()


def _week(browser, layout: HubLayout, rosters: dict[str, Path], passwords: dict[str, str], tmp: Path) -> None:
    ada, ben, cat = STUDENTS
    answers = {ada: {STDS: _answer(NB, STDS), WRITTEN: _answer(NB, WRITTEN)},
               ben: {STDS: MISTAKE, WRITTEN: "The variance grows with d_k."},
               cat: {STDS: _answer(NB, STDS), WRITTEN: _answer(NB, WRITTEN)}}
    validated: dict[str, str] = {}
    for student in STUDENTS:
        if student == cat:  # the instructor sets the due date in formgrader after ada and ben handed in
            context, page = _formgrader(browser, layout, INSTRUCTOR, passwords[INSTRUCTOR])
            time.sleep(1.1)
            due = datetime.now(timezone.utc).replace(microsecond=0)
            time.sleep(1.1)
            _api(page, context, "PUT", f"{layout.url}{SERVICE}/formgrader/api/assignment/{ASSIGNMENT}",
                 data={"duedate_notimezone": due.strftime("%Y-%m-%dT%H:%M:%S"), "duedate_timezone": "UTC"})
            context.close()
        # ben works in JupyterLab (Run All Cells below); ada and cat only hand in
        context, page = (_lab if student == ben else _signed_in)(browser, layout, student, passwords[student])
        base = f"{layout.url}/user/{student}"
        assert _api(page, context, "GET", f"{base}/courses")["value"] == [COURSE_ID]
        listed = _api(page, context, "GET", f"{base}/assignments?course_id={COURSE_ID}")
        assert [a["assignment_id"] for a in listed["value"]] == [ASSIGNMENT], listed
        form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
        _api(page, context, "POST", f"{base}/assignments/fetch", form=form)
        # the answers, saved as JupyterLab saves a notebook
        path = HOME_NB
        nb = _api(page, context, "GET", f"{base}/api/contents/{path}?content=1")["content"]
        _api(page, context, "PUT", f"{base}/api/contents/{path}",
             data={"type": "notebook", "format": "json", "content": _answered(nb, answers[student])})
        # the Validate button
        done = _api(page, context, "POST", f"{base}/assignments/validate", form={"path": path})
        assert done["success"], done
        validated[student] = json.dumps(done["value"])
        if student == ben:  # the notebook in JupyterLab: Run All Cells draws the widget, check() names the mistake
            _run_all(page, f"{base}/lab/tree/{path}")
            threads = [e.get("OPENBLAS_NUM_THREADS") for e in _environs(student, "ipykernel")]
            assert threads and set(threads) == {"1"}, f"the student's kernels' BLAS threads: {threads}"
        submitted = _api(page, context, "POST", f"{base}/assignments/submit", form=form)
        assert submitted["success"], submitted
        # formgrader is the graders' service only
        forbidden = page.request.get(f"{layout.url}{SERVICE}/formgrader", max_redirects=5)
        assert forbidden.status == 403, (forbidden.status, forbidden.url)
        api = page.request.get(f"{layout.url}{SERVICE}/formgrader/api/assignments", max_redirects=5)
        assert api.status == 403, (api.status, api.url)
        context.close()
    assert "failed" not in validated[ada] or '"failed": []' in validated[ada], validated[ada]
    assert MISTAKE_WORDS in validated[ben], validated[ben]
    _refused(layout)
    _courses_apart(browser, layout, passwords)

    # the hub restarts mid-week: users, submissions and the exchange are kept
    control.stop(layout, log=lambda line: None, timeout=STOP_TIMEOUT)
    control.start(layout, {COURSE_ID: rosters[COURSE_ID]}, log=lambda line: None, timeout=180)
    assert layout.courses() == list(COURSES), "a restart naming one course keeps serving the other"
    context, page = _signed_in(browser, layout, ben, passwords[ben])
    listed = _api(page, context, "GET", f"{layout.url}/user/{ben}/assignments?course_id={COURSE_ID}")
    # nbgrader lists the fetched copy and each submission
    assert sorted(a["status"] for a in listed["value"]) == ["fetched", "submitted"], listed
    context.close()

    # the instructor collects and autogrades in formgrader (Collect, then Autograde per student)
    context, page = _formgrader(browser, layout, INSTRUCTOR, passwords[INSTRUCTOR])
    fg = f"{layout.url}{SERVICE}/formgrader/api"
    collected = _api(page, context, "POST", f"{fg}/assignment/{ASSIGNMENT}/collect")
    assert collected["success"], collected
    for student in STUDENTS:
        assert (layout.course() / "autograder" / "submitted" / student / ASSIGNMENT).is_dir(), collected
        done = _api(page, context, "POST", f"{fg}/submission/{ASSIGNMENT}/{student}/autograde")
        assert done["success"], done.get("log", done)[-3000:]
    context.close()

    # the scores are those of `make grade` (autograder.grade) on the same submissions, due date included
    work = tmp / "reference"
    for student in STUDENTS:
        shutil.copytree(layout.course() / "autograder" / "submitted" / student, work / "submitted" / student)
    (work / "due-dates.csv").write_text(f"assignment,student,due\n{ASSIGNMENT},,{due:%Y-%m-%d %H:%M:%S} UTC\n")
    reference = grade(work)
    assert reference.returncode == 0, reference.stdout[-3000:] + reference.stderr[-3000:]
    hub_work = layout.course() / "autograder"
    for student in STUDENTS:
        assert scores(hub_work, student, NB) == scores(work, student, NB), student
        assert _seconds_late(hub_work, student) == _seconds_late(work, student), student
    assert scores(hub_work, ada, NB)[f"{STDS}-hidden"][0] > 0
    assert scores(hub_work, ben, NB)[f"{STDS}-hidden"][0] == 0
    assert _seconds_late(hub_work, cat) > 0 and _seconds_late(hub_work, ada) == 0 == _seconds_late(hub_work, ben)

    # two graders hand-grade the written answer in formgrader, then feedback is made and released
    for grader in (INSTRUCTOR, TA):
        context, page = _formgrader(browser, layout, grader, passwords[grader])
        for nb_row in _api(page, context, "GET", f"{fg}/submitted_notebooks/{ASSIGNMENT}/{NB}"):
            points, by = HAND[nb_row["student"]]
            if by != grader:
                continue
            grades = _api(page, context, "GET", f"{fg}/grades?submission_id={nb_row['id']}")
            written = next(g for g in grades if g["name"] == WRITTEN)
            saved = _api(page, context, "PUT", f"{fg}/grade/{written['id']}", data={"manual_score": points})
            assert saved["manual_score"] == points, saved
        if grader == TA:
            for step in ("generate_feedback", "release_feedback"):
                done = _api(page, context, "POST", f"{fg}/assignment/{ASSIGNMENT}/{step}")
                assert done["success"], (step, done.get("log", done))
        context.close()
    for student, (points, _) in HAND.items():
        assert _written_score(hub_work, student) == points, student
    listing = _as_user(ada, "ls", str(layout.course_exchange() / "feedback"))
    assert listing.returncode != 0 and "ermission denied" in listing.stderr, ("the feedback listing", listing)

    # the students fetch their feedback and open it; nothing is requested from outside the hub
    for student in STUDENTS:
        context, page = _signed_in(browser, layout, student, passwords[student])
        base = f"{layout.url}/user/{student}"
        _api(page, context, "POST", f"{base}/assignments/fetch_feedback",
             form={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
        pages = sorted(Path(f"/home/{student}/{COURSE_ID}/{ASSIGNMENT}/feedback").glob(f"*/{NB}.html"))
        assert len(pages) == 1, (student, pages)
        outside: list[str] = []
        context.route("**/*", _only_the_hub(layout.url, outside))
        relative = pages[0].relative_to(f"/home/{student}")
        shown = page.goto(f"{base}/files/{relative}", wait_until="load")
        assert shown is not None and shown.status == 200, (student, shown and shown.status)
        text = page.inner_text("body")
        assert outside == [], (student, outside)
        assert NB in text or "score" in text.lower(), text[:2000]
        if student == ben:
            assert MISTAKE_WORDS in text, text[:4000]
        context.close()

    _grader_caps(layout)


def test_a_second_hub_beside_the_running_course_leaves_it_exactly_as_it_was(hub, tmp_path):
    """The module's hub, after its week, is the live course: running, its students' submissions in
    its exchange and course copy. A second hub of the same course id (next term's, another test's,
    the benchmark's) starts beside it in a state folder of its own, with its own student and the
    live course's ada in its roster; ada is refused in one line naming the roster line and cannot
    log in there (her live password opens the live hub only); then the second hub stops and removes
    what its record says it made. Afterwards the live course's accounts, uids, groups and members,
    its formgrader's and servers' processes, its exchange and its submissions are exactly as before,
    and it still answers."""
    import requests

    layout, _, passwords = hub
    ada = STUDENTS[0]
    assert control.running_pid(layout) is not None and control._healthy(layout)
    assert any((layout.course_exchange() / "inbound").iterdir()), "the live course has no submissions to keep"
    before = _course_state(layout)
    assert before["processes"], "no formgrader or server of the live course runs"

    second = HubLayout(state=Path("/var/tmp") / f"selfattn-hub-second-{secrets.token_hex(4)}", envs=ENVS,
                       port=free_port(4))  # the hub, its API, the proxy's API, one formgrader
    own = f"sahub2-{secrets.token_hex(3)}"
    roster = tmp_path / "second.csv"
    roster.write_text(f"id,first_name,last_name,email,role\n{own},O,Own,,student\n{ada},A,Ada,,student\n")
    said: list[str] = []
    try:
        control.start(second, {COURSE_ID: roster}, log=said.append, timeout=180)
        refused = [line for line in said if "refused" in line]
        assert len(refused) == 1 and refused[0].startswith(f"{roster}:3: id {ada!r}: refused"), said
        assert second.hub_id != layout.hub_id and second.grader_user() != layout.grader_user()
        accounts.set_password(second, own, password := secrets.token_urlsafe(12))
        for url, name, secret, status in ((second.url, own, password, 302), (layout.url, ada, passwords[ada], 302),
                                          (second.url, ada, passwords[ada], 403)):
            http = requests.Session()
            http.get(f"{url}/hub/login", timeout=60)
            form = {"username": name, "password": secret, "_xsrf": http.cookies.get("_xsrf", path="/hub/")}
            answer = http.post(f"{url}/hub/login", data=form, allow_redirects=False, timeout=120)
            assert answer.status_code == status, (url, name, answer.status_code)
    finally:
        try:
            control.stop(second, log=lambda line: None, timeout=STOP_TIMEOUT)
        finally:
            accounts.remove_accounts(second, log=said.append)
            shutil.rmtree(second.state, ignore_errors=True)
    assert not any(line.startswith(own) for line in said), said
    after = _course_state(layout)
    for part in before:
        assert after[part] == before[part], part
    assert control._healthy(layout)


def _account(login: str):
    """``login``'s passwd entry, or None when there is no such account (any more)."""
    import pwd

    try:
        return pwd.getpwnam(login)
    except KeyError:
        return None


def _group(name: str):
    """The group entry of ``name``, or None when there is no such group (any more)."""
    import grp

    try:
        return grp.getgrnam(name)
    except KeyError:
        return None


def _course_state(layout: HubLayout) -> dict[str, object]:
    """What a running course is made of on the machine: its accounts (uid, gid, GECOS, home) and
    every group each is in (gid, members), the hub's own groups, its processes' of formgrader and
    the students' servers (pid and command line), and every entry of its exchange and of its
    collected submissions (owner, group, mode, size, content digest)."""
    import hashlib

    from autograder.hub.records import Records

    records = Records.load(layout.records)
    users = {login: _account(login) for login in records.users}
    state: dict[str, object] = {
        "record": (records.users, records.groups, records.folders),
        "accounts": {login: u and (u.pw_uid, u.pw_gid, u.pw_gecos, u.pw_dir) for login, u in users.items()},
        "groups of accounts": {login: u and sorted(os.getgrouplist(login, u.pw_gid)) for login, u in users.items()},
        "groups": {name: g and (g.gr_gid, sorted(g.gr_mem)) for name in records.groups for g in [_group(name)]},
    }
    uids = {u.pw_uid for u in users.values() if u}
    processes = {}
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid in uids:
                line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if "jupyterhub-singleuser" in line:
                    processes[int(proc.name)] = (proc.stat().st_uid, line)
        except OSError:  # ended meanwhile
            continue
    state["processes"] = processes
    for part, root in (("exchange", layout.exchange), ("submissions", layout.course() / "autograder" / "submitted")):
        entries = {}
        for path in sorted([root, *root.rglob("*")]):
            st = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
            entries[str(path.relative_to(root))] = (st.st_uid, st.st_gid, st.st_mode, st.st_size, digest)
        state[part] = entries
    return state


def _environs(login: str, marker: str) -> list[dict[str, str]]:
    """The environment of each process of ``login`` whose command line holds ``marker``."""
    import pwd

    uid = pwd.getpwnam(login).pw_uid
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or proc.stat().st_uid != uid:
                continue
            if marker not in (proc / "cmdline").read_bytes().decode(errors="replace"):
                continue
            pairs = (proc / "environ").read_bytes().split(b"\0")
        except OSError:  # the process ended meanwhile
            continue
        found.append(dict(p.decode(errors="replace").split("=", 1) for p in pairs if b"=" in p))
    return found


def _only_the_hub(url: str, outside: list[str]):
    """A route handler that lets requests to the hub through and refuses (and records) any other."""
    def guard(route) -> None:
        if route.request.url.startswith(url + "/"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()
    return guard


def _run_all(page, url: str) -> None:
    """Open the notebook in JupyterLab, run all its cells in the student's kernel; the slider
    widget of ``demos.score_histograms()`` is drawn and the public check names ben's mistake."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_selector("#jp-main-statusbar >> text=/Idle/", timeout=120_000)
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
    page.wait_for_selector(".jp-OutputArea-output .jupyter-widgets", timeout=180_000)
    page.wait_for_selector(f".jp-OutputArea-output >> text={MISTAKE_WORDS}", timeout=180_000)


def _fetch_and_submit_in_the_assignments_tab(page, course: str) -> None:
    """Nbgrader > Assignment List in JupyterLab: the course is the one chosen, the released
    assignment's Fetch button, then its Submit button; the lists move it along."""
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    page.click(".lm-Menu-itemLabel:text-is('Assignment List')")
    page.wait_for_selector("#released_assignments_list > .list_item", timeout=120_000)
    assert page.inner_text("#course_list_default").strip() == course
    released = page.locator("#released_assignments_list > .list_item")
    assert released.count() == 1 and ASSIGNMENT in released.first.inner_text()
    released.first.locator(".item_status button").click()
    page.wait_for_selector("#fetched_assignments_list > .list_item", timeout=120_000)
    page.locator("#fetched_assignments_list > .list_item").first.locator('.item_status button:text("Submit")').click()
    page.wait_for_selector("#submitted_assignments_list > .list_item", timeout=120_000)


def _seconds_late(work: Path, student: str) -> float:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", COURSE_ID) as gb:
        return float(gb.find_submission(ASSIGNMENT, student).total_seconds_late)


def _written_score(work: Path, student: str) -> float:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", COURSE_ID) as gb:
        return float(gb.find_grade(WRITTEN, NB, ASSIGNMENT, student).score)


def _refused(layout: HubLayout) -> None:
    """What the system refuses a student, after every student has handed in."""
    ada, ben, _ = STUDENTS
    refused = {
        "another home": ["ls", f"/home/{ben}"],
        "another student's answers": ["cat", f"/home/{ben}/{HOME_NB}"],
        "the exchange's inbound listing": ["ls", str(layout.course_exchange() / "inbound")],
        "the course copy (solutions, hidden checks)": ["ls", str(layout.course() / "solutions")],
        "the gradebook": ["cat", str(layout.course() / "autograder" / "gradebook.db")],
        "the collected submissions": ["ls", str(layout.course() / "autograder" / "submitted")],
        "the hub's database": ["cat", str(layout.hub / "jupyterhub.sqlite")],
        "the graders' settings": ["cat", str(layout.grader_config() / "nbgrader_config.py")],
    }
    for what, argv in refused.items():
        done = _as_user(ada, *argv)
        assert done.returncode != 0 and "ermission denied" in done.stderr, (what, done)
    no_package = _as_user(ada, str(layout.student_env / "bin" / "python"), "-c",
                          "import selfattn, sys; print(selfattn.__file__)")
    assert str(layout.student_env) in no_package.stdout, no_package


def _courses_apart(browser, layout: HubLayout, passwords: dict[str, str]) -> None:
    """Two courses on one hub: each student sees, fetches and submits to their own course only,
    and each course's instructor reaches their own formgrader only (403 on the other)."""
    ada = STUDENTS[0]
    # dan, a student of the second course only, works there as ada works here
    context, page = _lab(browser, layout, DAN, passwords[DAN])
    base = f"{layout.url}/user/{DAN}"
    assert _api(page, context, "GET", f"{base}/courses")["value"] == [SECOND]
    listed = _api(page, context, "GET", f"{base}/assignments?course_id={SECOND}")
    assert [a["assignment_id"] for a in listed["value"]] == [ASSIGNMENT], listed
    form = {"course_id": SECOND, "assignment_id": ASSIGNMENT}
    _fetch_and_submit_in_the_assignments_tab(page, SECOND)
    assert Path(f"/home/{DAN}/{SECOND}/{ASSIGNMENT}/{NB}.ipynb").is_file()
    assert [p.name.split("+")[0] for p in (layout.course_exchange(SECOND) / "inbound").iterdir()] == [DAN]
    # ... and nothing of this course is his to list or fetch (the Fetch button answers with the
    # course's listing: nothing; nothing lands in his home)
    assert _api(page, context, "GET", f"{base}/assignments?course_id={COURSE_ID}")["value"] == []
    refused = _api(page, context, "POST", f"{base}/assignments/fetch",
                   form={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
    assert refused["value"] == [] and not Path(f"/home/{DAN}/{COURSE_ID}").exists(), refused
    context.close()
    # ada, of this course, cannot fetch the second course's assignment, through nbgrader or the shell
    context, page = _signed_in(browser, layout, ada, passwords[ada])
    refused = _api(page, context, "POST", f"{layout.url}/user/{ada}/assignments/fetch", form=form)
    assert refused["value"] == [] and not Path(f"/home/{ada}/{SECOND}").exists(), refused
    context.close()
    for argv in (["ls", str(layout.course_exchange(SECOND))],
                 ["cp", "-r", str(layout.course_exchange(SECOND) / "outbound" / ASSIGNMENT), "/tmp/"],
                 ["ls", str(layout.course(SECOND))]):
        done = _as_user(ada, *argv)
        assert done.returncode != 0 and "ermission denied" in done.stderr, (argv, done)
    # each instructor has their course's formgrader, and 403 on the other's
    for name, own, other in ((INSTRUCTOR, COURSE_ID, SECOND), (UNA, SECOND, COURSE_ID)):
        context, page = _formgrader(browser, layout, name, passwords[name], service=f"/services/{own}")
        for where in ("formgrader", "formgrader/api/assignments"):
            answer = page.request.get(f"{layout.url}/services/{other}/{where}", max_redirects=5)
            assert answer.status == 403, (name, other, where, answer.status, answer.url)
        if name == UNA:  # her formgrader is the second course's: Collect brings in dan alone
            collected = _api(page, context, "POST",
                             f"{layout.url}/services/{SECOND}/formgrader/api/assignment/{ASSIGNMENT}/collect")
            assert collected["success"], collected
            assert sorted(p.name for p in (layout.course(SECOND) / "autograder" / "submitted").iterdir()) == [DAN]
        context.close()
    done = _as_user(UNA, "ls", str(layout.course(COURSE_ID)))
    assert done.returncode != 0 and "ermission denied" in done.stderr, done


#: run by the grader account: its sandbox's mode, a known answer through it, the caps in force
CAPS = """
from autograder import sandbox
sandbox.self_test()
print(sandbox.mode())
print(sandbox.caps_in_force(sandbox.DEFAULT))
"""


def _grader_caps(layout: HubLayout) -> None:
    """The grader account (not root) grades in bubblewrap, with the CPU, file and /tmp caps."""
    done = _run_as_grader(layout, str(layout.grader_env / "bin" / "python"), "-c", CAPS)
    assert done.returncode == 0, done.stderr[-3000:]
    mode, caps = done.stdout.strip().splitlines()[-2:]
    print(f"grader account's sandbox: {mode}; caps: {caps}")
    assert mode == "bubblewrap", done.stdout
    assert "CPU" in caps and "/tmp+/dev/shm" in caps and "files" in caps, caps


def test_a_course_folder_made_first_by_someone_else_is_moved_out_of_the_exchange(tmp_path):
    """Anyone may make folders in nbgrader's exchange (0777), so a student could make a course's
    folder, with assignments of their own in it, before the hub makes it: that folder (or a link
    in its place) is moved into the hub's root-only folder, and the grader's own folder is kept."""
    from autograder.hub import prepare

    layout = HubLayout(state=tmp_path, envs=tmp_path / "envs")
    layout.hub.mkdir()
    nobody = 65534
    planted = layout.exchange / "planted"
    (planted / "outbound" / ASSIGNMENT).mkdir(parents=True)
    os.chown(planted, nobody, nobody)
    link = layout.exchange / "linked"
    link.symlink_to(tmp_path / "elsewhere")
    kept = layout.exchange / "kept"
    kept.mkdir()
    said: list[str] = []
    for folder in (planted, link, kept):  # "root" stands for the course's grader account here
        prepare._refuse_squatter(layout, folder, "root", said.append)
    assert not planted.exists() and not os.path.lexists(link) and kept.is_dir()
    moved = sorted(p.name.rsplit("-", 1)[0] for p in (layout.hub / "squatted").iterdir())
    assert moved == ["linked", "planted"], moved
    assert (layout.hub / "squatted").stat().st_mode & 0o777 == 0o700
    assert len(said) == 2 and all("moved to" in line for line in said), said
