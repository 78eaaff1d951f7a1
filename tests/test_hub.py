"""A week of the course on a real JupyterHub (``make hub``), driven in headless Chromium.

The test starts the hub itself as root (PAM accounts from a roster, the two environments, formgrader
as a hub service) in a fresh state folder, and fails with the reason when it cannot. Three students
log in; their JupyterLab fetches, saves, validates and submits through the server extensions the
Assignments tab and the Validate button call (ada right, ben with a named mistake, cat after the due
date an instructor set in formgrader). Two graders (an instructor and a TA) open formgrader; the
hub restarts mid-week; formgrader collects and autogrades (as the grader account, in the course's
bubblewrap sandbox), the graders hand-grade the written answer, generate and release feedback; the
students fetch their feedback and open it with no request leaving the hub's hosts. The scores equal
``autograder.grade`` on the same submissions. The system refuses a student formgrader (403), every
other home, the exchange's listings, the course copy and the hub's database. The grader account's
own sandbox reports the caps that hold there. A second test opens a hostile page a student's own
server serves, as an instructor and as another student: each server has an origin of its own, so it
reads, writes and starts nothing. Then a second hub of the same course starts beside it and is
removed, and the first (the live course) is exactly as before. Every account, process and folder a
hub made (what its record names) is removed, and nothing else.
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
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from browser_support import CHROMIUM_ARGS, chromium_path, free_port
from grading_support import grade, scores
from hub_support import own_hub
from test_instructor_loop import WRITTEN, _answer

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts, control
from autograder.hub.layout import HubLayout

ENVS = Path(os.environ.get("SELFATTN_HUB_TEST_ENVS", "/var/tmp/selfattn-hub-envs"))
STUDENTS = ("sahub-ada", "sahub-ben", "sahub-cat")
#: a student who attacks the exchange from her shell (after the week)
EVE = "sahub-eve"
INSTRUCTOR, TA = "sahub-ivy", "sahub-tom"
#: a student who serves a hostile page from her own server (test_a_students_page_acts_in_no_one_elses_origin)
MAL = "sahub-mal"
ASSIGNMENT = "attention"
NB = "04-scaling"
STDS = "score_stds"
#: ben's mistake (tests/catalogue/wrong/score_stds_divided_by_dk.py) and the words check() names it by
MISTAKE = "def score_stds(q, k):\n    dots = np.sum(q * k, axis=1)\n    return dots.std(), (dots / q.shape[1]).std()\n"
MISTAKE_WORDS = "divides by d_k"
#: the written answer's hand grade, and who gives it (two graders share formgrader)
HAND = {"sahub-ada": (3.0, INSTRUCTOR), "sahub-ben": (1.0, TA), "sahub-cat": (2.0, TA)}
#: a second course on the same hub, with its own student and instructor
SECOND, DAN, UNA = "sahub-second", "sahub-dan", "sahub-una"
COURSES = (COURSE_ID, SECOND)
#: how long a stop may take here: a few seconds (the formgraders end one after another, then the
#: servers); a deadline, not a speed check, as a start's is, and a late stop names the hub's log
STOP_TIMEOUT = 180
#: where a fetched assignment lands in a student's home (one folder per course)
HOME_NB = f"{COURSE_ID}/{ASSIGNMENT}/{NB}.ipynb"


@pytest.fixture(scope="module")
def hub():
    if os.geteuid() != 0:
        pytest.fail("the hub test must run as root (it makes system users, as make hub does)")
    _none_left((*STUDENTS, MAL, EVE, INSTRUCTOR, TA, DAN, UNA))
    rosters = {COURSE_ID: "".join(f"{s},S,{s},,student\n" for s in (*STUDENTS, MAL, EVE))
               + f"{INSTRUCTOR},I,Ivy,,instructor\n{TA},T,Tom,,ta\n",
               SECOND: f"{DAN},D,Dan,,student\n{UNA},U,Una,,instructor\n"}
    # the hub, its API, the proxy's API and one formgrader per course (HubLayout.formgrader_port)
    with own_hub("test", rosters, start_timeout=180, stop_timeout=STOP_TIMEOUT) as (layout, passwords, paths):
        # formgrader's Generate (the gradebook learns the notebooks) and Release buttons, in each course
        for course in COURSES:
            _as_grader(layout, "generate_assignment", ASSIGNMENT, "--force", course=course)
            _as_grader(layout, "release_assignment", ASSIGNMENT, course=course)
        yield layout, paths, passwords


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
    return {**layout.grader_environment(course), "HOME": f"/home/{layout.grader_user(course)}"}


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
    server, started), or at the hub's path ``then`` (the login page's ``next``), or at the address
    ``then`` (a bookmark of a service on its own host, which sends the browser to the hub's login)."""
    context = browser.new_context()
    page = context.new_page()
    if then.startswith("http"):
        page.goto(then, wait_until="domcontentloaded")
        page.wait_for_selector("#username_input", timeout=120_000)
    else:
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


def _formgrader(browser, layout: HubLayout, name: str, password: str, course: str = COURSE_ID):
    """Logged in as a grader through formgrader's address (a grader's bookmark: no server of their own
    is started), formgrader's page open (which sets the service's XSRF cookie)."""
    service = layout.service_url(course)
    context, page = _login(browser, layout, name, password, then=f"{service}/formgrader")
    page.wait_for_url(f"{service}/formgrader**", timeout=180_000, wait_until="domcontentloaded")
    page.wait_for_selector("text=Manage Assignments", timeout=120_000)
    return context, page


def _xsrf(context, url: str) -> dict[str, str]:
    """The XSRF header of the server at ``url`` (each server sets its own ``_xsrf`` cookie, on its host)."""
    cookies = [c for c in context.cookies(url) if c["name"] == "_xsrf"]
    assert cookies, (url, [(c["name"], c["domain"], c["path"]) for c in context.cookies()])
    return {"X-XSRFToken": max(cookies, key=lambda c: len(c["path"]))["value"]}


def _api(page, context, method: str, url: str, **kw):
    """A call formgrader's or JupyterLab's page makes; its JSON answer (fails on an HTTP error)."""
    answer = page.request.fetch(url, method=method, headers=_xsrf(context, url), **kw)
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
            _api(page, context, "PUT", f"{layout.service_url()}/formgrader/api/assignment/{ASSIGNMENT}",
                 data={"duedate_notimezone": due.strftime("%Y-%m-%dT%H:%M:%S"), "duedate_timezone": "UTC"})
            context.close()
        # ben works in JupyterLab (Run All Cells below); ada and cat only hand in
        context, page = (_lab if student == ben else _signed_in)(browser, layout, student, passwords[student])
        base = layout.user_url(student)
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
        if student == ben:  # JupyterLab as a student sees it: no instructors' panels, no news pop-up
            _no_instructor_panels(page)
        if student == ben:  # the notebook in JupyterLab: Run All Cells draws the widget, check() names the mistake
            _run_all(page, f"{base}/lab/tree/{path}")
            threads = [e.get("OPENBLAS_NUM_THREADS") for e in _environs(student, "ipykernel")]
            assert threads and set(threads) == {"1"}, f"the student's kernels' BLAS threads: {threads}"
        submitted = _api(page, context, "POST", f"{base}/assignments/submit", form=form)
        assert submitted["success"], submitted
        # formgrader is the graders' service only
        forbidden = page.request.get(f"{layout.service_url()}/formgrader", max_redirects=5)
        assert forbidden.status == 403, (forbidden.status, forbidden.url)
        api = page.request.get(f"{layout.service_url()}/formgrader/api/assignments", max_redirects=5)
        assert api.status == 403, (api.status, api.url)
        context.close()
    assert "failed" not in validated[ada] or '"failed": []' in validated[ada], validated[ada]
    assert MISTAKE_WORDS in validated[ben], validated[ben]
    _refused(layout)
    _courses_apart(browser, layout, passwords)

    # the instructor sets the term's late policy in the course's term settings (a file of her group's)
    policy = "c.LateSubmissionPlugin.penalty_method = 'percent'\nc.LateSubmissionPlugin.percent = 10\n"
    edited = _as_user(INSTRUCTOR, "sh", "-c", f"printf '%s' \"$0\" >> {layout.term_settings()}", policy)
    assert edited.returncode == 0, edited.stderr
    term_settings = layout.term_settings().read_text()

    # the hub restarts mid-week: users, submissions, the exchange and the term's settings are kept
    control.stop(layout, log=lambda line: None, timeout=STOP_TIMEOUT)
    control.start(layout, {COURSE_ID: rosters[COURSE_ID]}, log=lambda line: None, timeout=180)
    assert layout.courses() == list(COURSES), "a restart naming one course keeps serving the other"
    assert layout.term_settings().read_text() == term_settings and policy in term_settings, "the term's settings"
    context, page = _signed_in(browser, layout, ben, passwords[ben])
    listed = _api(page, context, "GET", f"{layout.user_url(ben)}/assignments?course_id={COURSE_ID}")
    # nbgrader lists the fetched copy and each submission
    assert sorted(a["status"] for a in listed["value"]) == ["fetched", "submitted"], listed
    context.close()

    # the instructor collects and autogrades in formgrader (Collect, then Autograde per student)
    context, page = _formgrader(browser, layout, INSTRUCTOR, passwords[INSTRUCTOR])
    fg = f"{layout.service_url()}/formgrader/api"
    collected = _api(page, context, "POST", f"{fg}/assignment/{ASSIGNMENT}/collect")
    assert collected["success"], collected
    for student in STUDENTS:
        assert (layout.course() / "autograder" / "submitted" / student / ASSIGNMENT).is_dir(), collected
        done = _api(page, context, "POST", f"{fg}/submission/{ASSIGNMENT}/{student}/autograde")
        assert done["success"], done.get("log", done)[-3000:]
    # formgrader names each student as the hub's roster does (make hub put the class in the gradebook)
    names = {row["id"]: (row["first_name"], row["last_name"]) for row in _api(page, context, "GET", f"{fg}/students")}
    assert all(names.get(s) == ("S", s) for s in STUDENTS) and INSTRUCTOR not in names, names
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
    # the policy set before the restart is the one formgrader's Autograde applied: cat, late, loses 10 %
    cat_penalty, cat_score = _penalty(hub_work, cat), _auto_score(hub_work, cat)
    assert cat_penalty > 0 and cat_penalty == pytest.approx(0.1 * cat_score), (cat_penalty, cat_score)
    assert _penalty(hub_work, ada) == 0 == _penalty(hub_work, ben)

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
        base = layout.user_url(student)
        _api(page, context, "POST", f"{base}/assignments/fetch_feedback",
             form={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
        pages = sorted(Path(f"/home/{student}/{COURSE_ID}/{ASSIGNMENT}/feedback").glob(f"*/{NB}.html"))
        assert len(pages) == 1, (student, pages)
        outside: list[str] = []
        context.route("**/*", _only_the_hub(layout, outside))
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
        for hub_, name, secret, status in ((second, own, password, 302), (layout, ada, passwords[ada], 302),
                                           (second, ada, passwords[ada], 403)):
            # Python resolves no *.localhost name: to the proxy on loopback, the hub's host in the header
            http, url = requests.Session(), hub_.bind_url
            http.headers["Host"] = urlsplit(hub_.url).netloc
            http.get(f"{url}/hub/login", timeout=60)
            form = {"username": name, "password": secret, "_xsrf": http.cookies.get("_xsrf", path="/hub/")}
            answer = http.post(f"{url}/hub/login", data=form, allow_redirects=False, timeout=120)
            assert answer.status_code == status, (hub_.url, name, answer.status_code)
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


def test_a_student_who_plants_links_forgeries_and_back_dated_hand_ins_gains_nothing(hub):
    """From her shell on the hub, eve plants in the exchange a link to the course's solution
    notebook, a hand-in folder in ada's name and a hand-in back-dated by two hours; the instructor
    clicks Collect in formgrader: ada's collected work is unchanged, nothing of the solution reaches
    submitted/, eve's hand-in gets the time the grader side saw, and each refusal is one line in
    Collect's log naming eve."""
    from browser_support import driver
    from nbgrader.utils import parse_utc

    layout, _, passwords = hub
    ada = STUDENTS[0]
    outbound = layout.course_exchange() / "outbound" / ASSIGNMENT / f"{NB}.ipynb"
    inbound = layout.course_exchange() / "inbound"
    submitted = layout.course() / "autograder" / "submitted"
    solution = layout.course() / "solutions" / ASSIGNMENT / f"{NB}.ipynb"

    def hand_in(login: str, named: str, when: str, then: str = "") -> None:
        folder = inbound / f"{named}+{ASSIGNMENT}+{when}+{secrets.token_hex(16)}"
        script = (f'mkdir "{folder}" && cp "{outbound}" "{folder}/" && echo "{when}" > "{folder}/timestamp.txt" '
                  f'&& head -c 64 /dev/urandom | od -An -tx1 | tr -d " \\n" > "{folder}/submission_secret.txt"'
                  f' && cd "{folder}" && {then or "true"}')
        done = _as_user(login, "sh", "-c", script)
        assert done.returncode == 0, (login, done.stderr)

    def collect() -> str:
        with driver() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            try:
                context, page = _formgrader(browser, layout, INSTRUCTOR, passwords[INSTRUCTOR])
                url = f"{layout.service_url()}/formgrader/api/assignment/{ASSIGNMENT}/collect"
                done = _api(page, context, "POST", url)
                context.close()
            finally:
                browser.close()
        assert done["success"], done
        return done["log"]

    hand_in(ada, ada, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    collect()
    before = {p: p.read_bytes() for p in sorted((submitted / ada / ASSIGNMENT).rglob("*")) if p.is_file()}
    assert before
    seen = datetime.now(timezone.utc).replace(tzinfo=None)
    back = (datetime.now(timezone.utc) - timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    hand_in(EVE, EVE, back, f'ln -s "{solution}" 01-embeddings.ipynb && touch -h -d "2 hours ago" * .')
    hand_in(EVE, ada, "2099-01-01 00:00:00.000000 UTC", f'echo forged > "{NB}.ipynb"')

    log = collect()

    after = {p: p.read_bytes() for p in sorted((submitted / ada / ASSIGNMENT).rglob("*")) if p.is_file()}
    assert after == before, "ada's collected work changed"
    answer = solution.read_bytes()
    assert not [p for p in submitted.rglob("*") if p.is_file() and p.read_bytes() == answer]
    assert parse_utc((submitted / EVE / ASSIGNMENT / "timestamp.txt").read_text()) >= seen - timedelta(seconds=1)
    lines = [line for line in log.splitlines() if EVE in line]
    for what in ("'01-embeddings.ipynb': refused, it is a symbolic link", f"made by {EVE}, not by {ada}",
                 "2 h 0 min before"):
        assert len([line for line in lines if what in line]) == 1, (what, log[-4000:])


def _no_instructor_panels(page) -> None:
    """A student's JupyterLab leaves out formgrader, Create Assignment, the formgraders' course list and
    the news pop-up (page settings)."""
    from autograder.hub.prepare import STUDENT_LAB_DISABLED

    config = json.loads(page.locator("#jupyter-config-data").text_content())
    disabled = set(config.get("disabledExtensions") or [])
    assert set(STUDENT_LAB_DISABLED) <= disabled, sorted(disabled)
    shown = page.evaluate("() => [...document.querySelectorAll('.lm-MenuBar-itemLabel, .jp-LauncherCard')]"
                          ".map(e => e.textContent)")
    assert not [t for t in shown if "Formgrader" in t or "Create Assignment" in t], shown


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


def _only_the_hub(layout: HubLayout, outside: list[str]):
    """A route handler that lets requests to the hub's hosts through and refuses (and records) any other."""
    def guard(route) -> None:
        asked = urlsplit(route.request.url)
        host = asked.hostname or ""
        if asked.port == layout.port and (host == layout.domain or host.endswith("." + layout.domain)):
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


def _penalty(work: Path, student: str) -> float:
    """The late penalty nbgrader's gradebook holds for ``student``'s notebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", COURSE_ID) as gb:
        return float(gb.find_submission_notebook(NB, ASSIGNMENT, student).late_submission_penalty or 0.0)


def _auto_score(work: Path, student: str) -> float:
    """``student``'s notebook's score before the penalty (its autograded points, at autograde)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", COURSE_ID) as gb:
        return float(gb.find_submission_notebook(NB, ASSIGNMENT, student).score)


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
        "the graders' settings": ["cat", str(layout.term_settings())],
    }
    for what, argv in refused.items():
        done = _as_user(ada, *argv)
        assert done.returncode != 0 and "ermission denied" in done.stderr, (what, done)
    # her course's own package (the students' environment holds no course code)
    no_package = _as_user(ada, "env", f"PYTHONPATH={layout.course_package()}",
                          str(layout.student_env / "bin" / "python"), "-c",
                          "import selfattn, sys; print(selfattn.__file__)")
    assert str(layout.course_package()) in no_package.stdout, no_package


def _courses_apart(browser, layout: HubLayout, passwords: dict[str, str]) -> None:
    """Two courses on one hub: each student sees, fetches and submits to their own course only,
    and each course's instructor reaches their own formgrader only (403 on the other)."""
    ada = STUDENTS[0]
    # dan, a student of the second course only, works there as ada works here
    context, page = _lab(browser, layout, DAN, passwords[DAN])
    base = layout.user_url(DAN)
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
    refused = _api(page, context, "POST", f"{layout.user_url(ada)}/assignments/fetch", form=form)
    assert refused["value"] == [] and not Path(f"/home/{ada}/{SECOND}").exists(), refused
    context.close()
    for argv in (["ls", str(layout.course_exchange(SECOND))],
                 ["cp", "-r", str(layout.course_exchange(SECOND) / "outbound" / ASSIGNMENT), "/tmp/"],
                 ["ls", str(layout.course(SECOND))]):
        done = _as_user(ada, *argv)
        assert done.returncode != 0 and "ermission denied" in done.stderr, (argv, done)
    # each instructor has their course's formgrader, and 403 on the other's
    for name, own, other in ((INSTRUCTOR, COURSE_ID, SECOND), (UNA, SECOND, COURSE_ID)):
        context, page = _formgrader(browser, layout, name, passwords[name], course=own)
        for where in ("formgrader", "formgrader/api/assignments"):
            answer = page.request.get(f"{layout.service_url(other)}/{where}", max_redirects=5)
            assert answer.status == 403, (name, other, where, answer.status, answer.url)
        if name == UNA:  # her formgrader is the second course's: Collect brings in dan alone
            collected = _api(page, context, "POST",
                             f"{layout.service_url(SECOND)}/formgrader/api/assignment/{ASSIGNMENT}/collect")
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


#: mal's page (served by her own server, as an extension she loads from her home): every way a page
#: may act in formgrader, the hub or another student's server as whoever opens it; each attempt
#: reports what it could read (``read``) or why not (``error``) into the page, ``#report``
MAL_PAGE = """<!doctype html><meta charset="utf-8"><title>an interesting plot</title>
<pre id="report">running</pre><script>
const T = __TARGETS__;
const victim = new URLSearchParams(location.search).get("victim");
const mine = T.users[victim];
const results = [];
let xsrf = null;  // a formgrader or server XSRF token, if one can be stolen
const say = (what, read, error) => results.push({what, read: read || null, error: error ? String(error) : null});
const pause = ms => new Promise(r => setTimeout(r, ms));
function xsrfIn(cookies) {
  const m = /(?:^|; )_xsrf=([^;]+)/.exec(cookies || "");
  return m ? decodeURIComponent(m[1]) : null;
}
async function readWindow(what, url) {
  let w;
  try { w = window.open(url, "_blank"); } catch (e) { return say(what, null, e); }
  if (!w) return say(what, null, "no window");
  for (let i = 0; i < 60; i++) {
    await pause(500);
    try {
      const here = w.location.href;
      if (here === "about:blank" || w.document.readyState !== "complete") continue;
      const text = w.document.body ? w.document.body.innerText : "", cookies = w.document.cookie;
      xsrf = xsrf || xsrfIn(cookies);
      say(what, here + " | " + cookies + " | " + text.slice(0, 2000), null);
      if (url.startsWith(T.formgrader)) await actInside(w, xsrfIn(cookies));
      w.close();
      return;
    } catch (e) { try { w.close(); } catch (_) {} return say(what, null, e); }
  }
  try { w.close(); } catch (_) {}
  say(what, null, "timeout");
}
async function actInside(w, token) {
  // a window of formgrader's origin is hers to script: its own fetch, with its own XSRF cookie
  const json = {"Content-Type": "application/json", "X-XSRFToken": token};
  const asked = [["inside formgrader's window: write into the course copy", "/api/contents/" + T.planted, "PUT",
                  JSON.stringify({type: "file", format: "text", content: "mal"})],
                 ["inside formgrader's window: start a kernel as the grader", "/api/kernels", "POST", "{}"]];
  for (const [what, path, method, body] of asked) {
    try {
      const answer = await w.fetch(T.formgrader + path, {method, headers: json, body, credentials: "include"});
      say(what, answer.status + " " + (await answer.text()).slice(0, 500), null);
    } catch (e) { say(what, null, e); }
  }
}
function readFrame(what, url) {
  return new Promise(done => {
    const f = document.createElement("iframe");
    f.src = url;
    const give = (read, error) => { say(what, read, error); done(); };
    const timer = setTimeout(() => give(null, "timeout"), 30000);
    f.onload = () => {
      clearTimeout(timer);
      try {
        const d = f.contentDocument;
        if (!d) return give(null, "no contentDocument");
        xsrf = xsrf || xsrfIn(d.cookie);
        give(d.cookie + " | " + (d.body ? d.body.innerText.slice(0, 2000) : ""), null);
      } catch (e) { give(null, e); }
    };
    document.body.appendChild(f);
  });
}
async function tryFetch(what, url, init) {
  try {
    const answer = await fetch(url, {credentials: "include", ...init});
    say(what, answer.status + " " + (await answer.text()).slice(0, 2000), null);
  } catch (e) { say(what, null, e); }
}
function tryXhr(what, method, url, body) {
  return new Promise(done => {
    const x = new XMLHttpRequest();
    x.open(method, url);
    x.withCredentials = true;
    if (xsrf) x.setRequestHeader("X-XSRFToken", xsrf);
    x.onload = () => { say(what, x.status + " " + x.responseText.slice(0, 2000), null); done(); };
    x.onerror = () => { say(what, null, "xhr error"); done(); };
    x.send(body || null);
  });
}
let forms = 0;
function formPost(url, body) {
  // a simple request (no preflight) with the visitor's cookies; text/plain carries a JSON body
  const sink = document.createElement("iframe");
  sink.name = "sink" + (++forms);
  document.body.appendChild(sink);
  const f = document.createElement("form");
  f.method = "POST"; f.action = url; f.target = sink.name; f.enctype = "text/plain";
  const i = document.createElement("input");
  i.name = body.slice(0, -1) + ', "pad": "'; i.value = '"}';
  f.appendChild(i);
  document.body.appendChild(f);
  f.submit();
}
async function act(how, token) {
  // every way to act as the visitor with an XSRF token: fetch and XHR with the header, forms with ?_xsrf=
  const json = {"Content-Type": "application/json", "X-XSRFToken": token};
  const file = JSON.stringify({type: "file", format: "text", content: "mal"});
  const q = "?_xsrf=" + encodeURIComponent(token);
  await tryFetch(how + ": write into the course copy", T.formgrader + "/api/contents/" + T.planted,
                 {method: "PUT", headers: json, body: file});
  xsrf = token;
  await tryXhr(how + ": XHR write into the course copy", "PUT", T.formgrader + "/api/contents/" + T.planted, file);
  await tryFetch(how + ": start a kernel as the grader", T.formgrader + "/api/kernels",
                 {method: "POST", headers: json, body: "{}"});
  await tryFetch(how + ": the hub API: a token", T.hub + "/hub/api/users/" + victim + "/tokens",
                 {method: "POST", headers: json, body: JSON.stringify({note: "mal"})});
  if (mine) {
    await tryFetch(how + ": write into the visitor's home", mine + "/api/contents/" + T.planted,
                   {method: "PUT", headers: json, body: file});
    await tryFetch(how + ": start a kernel as the visitor", mine + "/api/kernels",
                   {method: "POST", headers: json, body: "{}"});
  }
  // form posts cannot be read; what they would do is checked on disk and in ps
  formPost(T.formgrader + "/api/kernels" + q, '{"name": "python3"}');
  formPost(T.formgrader + "/api/contents/" + q, '{"type": "file", "ext": ".txt"}');
  formPost(T.hub + "/hub/api/users/" + victim + "/tokens" + q, '{"note": "mal"}');
  if (mine) {
    formPost(mine + "/api/kernels" + q, '{"name": "python3"}');
    formPost(mine + "/api/contents/" + q, '{"type": "file", "ext": ".txt"}');
  }
  await pause(5000);
  say(how + ": forms posted", null, "not readable");
}
async function run() {
  say("document.cookie", document.cookie, null);
  await readWindow("window.open formgrader", T.formgrader + "/formgrader");
  await readFrame("iframe formgrader", T.formgrader + "/formgrader");
  await readWindow("window.open the hub", T.hub + "/hub/home");
  await readFrame("iframe the hub", T.hub + "/hub/token");
  if (mine) await readWindow("window.open the visitor's server", mine + "/tree");
  const stolen = xsrf;
  await tryFetch("fetch formgrader's API", T.formgrader + "/formgrader/api/assignments");
  await tryXhr("XHR formgrader's API", "GET", T.formgrader + "/formgrader/api/assignments");
  await tryFetch("fetch a solution", T.formgrader + "/api/contents/" + T.solution + "?content=1");
  await tryFetch("the hub API: who am I", T.hub + "/hub/api/user");
  await tryXhr("XHR the hub API: users", "GET", T.hub + "/hub/api/users");
  if (mine) await tryFetch("the visitor's files", mine + "/api/contents/" + T.work + "?content=1");
  await act("a stolen token", stolen || "none");
  // a cookie of her choosing for the parent domain, sent to every host under it (cookie tossing)
  const tossed = "_xsrf=mal; domain=" + T.domain + "; path=/";
  document.cookie = tossed;
  await act("a tossed cookie", "mal");
  document.cookie = tossed + "; max-age=0";
  document.getElementById("report").textContent = JSON.stringify(results);
  window.malDone = true;
}
run();
</script>"""

#: mal's server extension: her page, for anyone (a plain tornado handler asks for no login)
MAL_EXTENSION = '''
from pathlib import Path

from tornado import web

PAGE = (Path(__file__).parent / "page.html").read_text()


class Page(web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.write(PAGE)


def _jupyter_server_extension_points():
    return [{"module": "malpage"}]


def _load_jupyter_server_extension(app):
    app.web_app.add_handlers(".*$", [(app.base_url + "mal/page", Page)])
'''

#: mal's ~/.jupyter/jupyter_server_config.py: her server loads her extension from her home
MAL_CONFIG = '''
import sys
sys.path.insert(0, "/home/{login}/.mal")
c.ServerApp.jpserver_extensions.update({{"malpage": True}})
'''


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` and its SHA-256 (folders as ``dir``); SQLite's transient files aside."""
    import hashlib

    found = {}
    for path in sorted(root.rglob("*")):
        if path.name.endswith(("-journal", "-wal", "-shm")):
            continue
        rel = str(path.relative_to(root))
        found[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _kernels(login: str) -> set[int]:
    """The ids of ``login``'s kernel processes."""
    done = subprocess.run(["ps", "-u", login, "-o", "pid=,args="], capture_output=True, text=True)
    return {int(line.split()[0]) for line in done.stdout.splitlines() if "ipykernel" in line}


def test_a_students_page_acts_in_no_one_elses_origin(hub):
    """mal's server (she configured it from her home to serve a page of hers) answers with a page that
    tries every way to act in formgrader, the hub or the visitor's server as whoever opens it; an
    instructor logged in to formgrader and another student logged in with his server running each
    open it: it reads nothing, writes nothing in the course copy or his home, starts no kernel."""
    layout, _, passwords = hub
    from browser_support import driver

    ada = STUDENTS[0]
    solution = f"solutions/{ASSIGNMENT}/{NB}.ipynb"
    assert (layout.course() / solution).is_file()
    planted = "mal-was-here.txt"
    home = Path(f"/home/{MAL}")
    targets = {"formgrader": layout.service_url(), "hub": layout.url, "domain": layout.domain, "solution": solution,
               "planted": planted, "work": HOME_NB, "users": {ada: layout.user_url(ada)}}
    for rel, text in ((".mal/page.html", MAL_PAGE.replace("__TARGETS__", json.dumps(targets))),
                      (".mal/malpage.py", MAL_EXTENSION),
                      (".jupyter/jupyter_server_config.py", MAL_CONFIG.format(login=MAL))):
        made = subprocess.run(["runuser", "-u", MAL, "--", "sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"',
                               "sh", str(home / rel)], input=text, capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context, page = _signed_in(browser, layout, MAL, passwords[MAL])  # her server, with her page
            mal_page = f"{layout.user_url(MAL)}/mal/page"
            mine = page.request.get(mal_page)
            assert mine.ok and "an interesting plot" in mine.text(), (mine.status, mine.text()[:500])
            context.close()
            visits = {INSTRUCTOR: _formgrader(browser, layout, INSTRUCTOR, passwords[INSTRUCTOR]),
                      ada: _signed_in(browser, layout, ada, passwords[ada])}
            for visitor, (context, page) in visits.items():
                course_before, home_before = _tree(layout.course()), _tree(Path(f"/home/{ada}"))
                kernels_before = {who: _kernels(who) for who in (layout.grader_user(COURSE_ID), ada)}
                page.goto(f"{mal_page}?victim={visitor}", wait_until="load")
                page.wait_for_function("window.malDone === true", timeout=300_000)
                results = json.loads(page.inner_text("#report"))
                print(visitor, json.dumps(results, indent=1))
                assert len(results) >= 20, results  # every attempt ran and reported
                read = [f"{r['what']}: {r['read'][:300]}" for r in results if r["read"]]
                assert read == [], f"{visitor} opened mal's page, which read:\n" + "\n".join(read)
                report = json.dumps(results)
                assert _answer(NB, STDS).splitlines()[-1].strip() not in report, visitor
                assert _tree(layout.course()) == course_before, (visitor, "the course copy changed")
                assert _tree(Path(f"/home/{ada}")) == home_before, (visitor, f"{ada}'s home changed")
                for who, before in kernels_before.items():
                    assert _kernels(who) <= before, (visitor, f"a kernel started as {who}")
                context.close()
        finally:
            browser.close()
