"""A term on a hub of its own, run as the instructors' guide says ("Running the course on JupyterHub"),
with the guide's commands only, typed in the instructor's checkout of the course: ``make hub``,
``make release HUB=...``, ``make nbgrader HUB=... ARGS="release_assignment ..."``, ``make due-date``,
``make collect``, ``make grade``, ``make grades-final``, ``make extension``, ``make publish``, the
graders in formgrader and the students in their JupyterLab (the calls its Assignments tab and Validate
button make), in headless Chromium.

The checkout is a copy of this repository's tracked files (its environment linked), whose hidden
check of ``score_stds`` starts the term with a bug (it tries ``d_k = 1`` only, where the named
mistakes pass it). The hub has a state folder, port block and accounts of its own (random logins), the
hub tests' two environments (a publish rebuilds neither: the course's code is its own package); the
instructor puts the late policy (10 % per started day, at most 30 %) in the term's settings file.
The hub restarts (``make hub-stop``, ``make hub``) between every two events:

1. release; five students fetch, answer, validate and submit ``04-scaling`` in JupyterLab: ada right,
   ben with swapped values, cat dividing by ``d_k``, on time; dan and eve right, after the due date
   (``make due-date`` set between them);
2. ``make collect``, ``make grade``; 3. the written answers hand-graded in formgrader by the
   instructor and the TA, ``make grades-final``; 4. ben resubmits the right answer (late now),
   ``make collect COLLECT_ARGS=--update``, ``make grade``; 5. an extension for dan after grading;
6. the hidden check fixed in the checkout, ``make publish``, ``make grade``; 7. the hidden points
   from 2 to 4, ``make publish``, ``make grade``; 8. a new exercise as a new assignment, ``extra``,
   published and released while ada's and ben's servers run: their Validate of it works in the same
   servers (no restart), they submit, it is graded; 9. eve dropped from the roster: her login is
   refused, her grades stay; 10. in formgrader, Generate Feedback and Release Feedback; the students
   fetch their feedback.

The test computes every expected score itself from autograder's ``Policy`` read from the term's
settings file, and compares grades.csv after each grading event, then formgrader's lists, the
feedback each student fetches, grades.csv, Canvas, Moodle and the class report. Last, a docstring
edited in the grader's code and published regrades nothing, and the summary says so.
"""

from __future__ import annotations

import csv
import os
import secrets
import shutil
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest
from browser_support import CHROMIUM_ARGS, chromium_path, free_port
from nbgrader.utils import parse_utc
from test_hub import ENVS, _answered, _api, _as_user, _formgrader, _none_left, _signed_in
from test_hub_commands import _shared_environments, _source_course
from test_hub_roster import _login as _http_login
from test_hub_roster import _Loopback
from test_instructor_loop import WRITTEN, _answer
from test_same_score_everywhere import _assignment_button, _score_line, _shown
from test_term import BUGGY_CHECK, BY_DK, FIXED_CHECK, NEW_ASSIGNMENT, NEW_NB, SWAPPED, add_new_exercise
from traitlets.config.loader import PyFileConfigLoader

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts
from autograder.hub.layout import HubLayout
from autograder.late.policy import Policy, policy_of

ASSIGNMENT = "attention"
NB = "04-scaling"
STDS = "score_stds"
#: the students (their logins get a random tag), their names for the roster and the LMS files
PEOPLE = {"ada": ("Ada", "Lovelace"), "ben": ("Ben", "Okafor"), "cat": ("Cat", "Nguyen"),
          "dan": ("Dan", "Weiss"), "eve": ("Eve", "Moreau")}
RIGHT = _answer(NB, STDS)
#: each student's first hand-in of score_stds, and who hands in after the due date
FIRST = {"ada": RIGHT, "ben": SWAPPED, "cat": BY_DK, "dan": RIGHT, "eve": RIGHT}
LATE_ONES = ("dan", "eve")
#: the written answer's hand grade (out of 3), and which grader gives it in formgrader
HAND = {"ada": (3.0, "ivy"), "ben": (2.0, "tom"), "cat": (1.0, "tom"), "dan": (3.0, "ivy"), "eve": (2.0, "tom")}
#: the term's late policy, as the instructor writes it into the term's settings file
POLICY = ("\nc.LateSubmissionPlugin.penalty_method = 'percent'\nc.LateSubmissionPlugin.percent = 10\n"
          "c.LateSubmissionPlugin.per = 'day'\nc.LateSubmissionPlugin.cap = 30\n")
NEW_HIDDEN_POINTS = 4
#: the new exercise (test_new_exercise's row_sums): ada right, ben summing the columns
NEW_ANSWERS = {"ada": "def row_sums(X):\n    return X.sum(axis=1)\n",
               "ben": "def row_sums(X):\n    return X.sum(axis=0)\n"}
NEW_POINTS = {"ada": 3.0, "ben": 0.0}
#: the new exercise's compare() example, added to selfattn/compare.py's EXAMPLES
ROWS_EXAMPLE = ('\nfrom .rows import row_sums as _row_sums  # noqa: E402\n\n'
                'EXAMPLES["row_sums"] = Example("row sums of [[0, 1, 2], [3, 4, 5]]", _row_sums,\n'
                '                               lambda: [Case((np.arange(6.0).reshape(2, 3),))], kind="table",\n'
                '                               rows=("row sums",), cols=("row 0", "row 1"))\n')
STOP_TIMEOUT = 180


def auto(answer: str, fixed: bool, hidden: int) -> float:
    """The autograded points of score_stds for ``answer``: 1 public point and ``hidden`` hidden
    ones; the named mistakes fail the public check and pass the buggy hidden one (``d_k = 1``)."""
    if answer == RIGHT:
        return 1.0 + hidden
    return 0.0 if fixed else float(hidden)


class Term:
    """The instructor's checkout, the hub's state folder and the people of the term."""

    def __init__(self, source: Path, layout: HubLayout, logins: dict[str, str], passwords: dict[str, str],
                 tmp: Path):
        self.source, self.layout, self.logins, self.passwords, self.tmp = source, layout, logins, passwords, tmp
        self.log: list[str] = []

    @property
    def work(self) -> Path:
        return self.layout.course() / "autograder"

    def make(self, target: str, *args: str) -> str:
        """``make TARGET ARGS`` in the checkout, as root types it (the hub's address in the environment)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SELFATTN_HUB_", "AUTOGRADER_"))}
        env.update(SELFATTN_HUB_STATE=str(self.layout.state), SELFATTN_HUB_PORT=str(self.layout.port))
        started = time.monotonic()
        done = subprocess.run(["make", "--no-print-directory", target, *args], cwd=self.source, env=env,
                              capture_output=True, text=True, timeout=1800)
        self.log.append(f"make {target} {' '.join(args)}: {time.monotonic() - started:.1f} s")
        assert done.returncode == 0, f"make {target} {args}: {done.stdout[-4000:]}{done.stderr[-4000:]}"
        return done.stdout + done.stderr

    def on_hub(self, target: str, *args: str) -> str:
        return self.make(target, f"HUB={self.layout.state}", *args)

    def roster(self, *names: str) -> Path:
        path = self.tmp / f"roster-{'-'.join(names)}.csv"
        path.write_text("id,first_name,last_name,email,lms_user_id,sis_user_id,role\n"
                        + "".join(f"{self.logins[n]},{PEOPLE[n][0]},{PEOPLE[n][1]},{n}@uni.example,lms-{n},sis-{n},"
                                  "student\n" for n in names)
                        + f"{self.logins['ivy']},Ivy,Ng,,,,instructor\n{self.logins['tom']},Tom,Ode,,,,ta\n")
        return path

    def restart(self, *names: str) -> str:
        """``make hub-stop``, then ``make hub ROSTER=...`` with ``names`` the class."""
        settings = self.layout.term_settings().read_text()
        self.make("hub-stop")
        said = self.make("hub", f"ROSTER={self.roster(*names)}")
        assert self.layout.term_settings().read_text() == settings, "a restart changed the term's settings"
        return said

    def grade(self) -> str:
        out = self.on_hub("grade")
        return out + (self.work / "grading-summary.txt").read_text()

    def policy(self) -> Policy:
        """The late policy the term's settings file sets, read by autograder's own reading."""
        settings = self.layout.term_settings()
        return policy_of(PyFileConfigLoader(settings.name, str(settings.parent)).load_config())

    def seconds_late(self, name: str, due: datetime, assignment: str = ASSIGNMENT) -> float:
        stamp = (self.work / "submitted" / self.logins[name] / assignment / "timestamp.txt").read_text().strip()
        return (parse_utc(stamp) - due).total_seconds()

    def grades_csv(self, assignment: str = ASSIGNMENT) -> dict[str, float]:
        """login -> the assignment's final score in grades.csv."""
        with open(self.work / "grades.csv", newline="") as fh:
            return {r["student_id"]: float(r["score"]) for r in csv.DictReader(fh) if r["assignment"] == assignment}

    def exports(self) -> dict[str, dict[str, float]]:
        """place -> login -> attention's final score in grades.csv, Moodle, Canvas and the report."""
        by_lms = {f"lms-{n}": login for n, login in self.logins.items()}
        out: dict[str, dict[str, float]] = {"grades.csv": self.grades_csv()}
        with open(self.work / "exports" / "moodle.csv", newline="") as fh:
            out["moodle.csv"] = {r["username"]: float(r[f"{ASSIGNMENT} (total)"]) for r in csv.DictReader(fh)}
        with open(self.work / "exports" / "canvas.csv", newline="") as fh:
            out["canvas.csv"] = {by_lms[r["ID"]]: float(r[f"{ASSIGNMENT} (total)"])
                                 for r in list(csv.DictReader(fh))[1:]}  # after the Points Possible row
        with open(self.work / "report" / "students.csv", newline="") as fh:
            out["report"] = {r["student"]: float(r[NB] or 0) for r in csv.DictReader(fh)}
        return out


@pytest.fixture
def term(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("the hub term test must run as root (it makes system users, as make hub does)")
    _shared_environments()
    tag = secrets.token_hex(2)
    logins = {n: f"st{tag}-{n}" for n in (*PEOPLE, "ivy", "tom")}
    _none_left(list(logins.values()))
    source = _source_course(tmp_path / "checkout")
    for linked in (".venv", "node_modules"):  # the checkout's environment, as make setup made it
        (source / linked).symlink_to(Path(__file__).resolve().parents[1] / linked)
    shutil.copy2(Path(__file__).resolve().parents[1] / ".sysdeps-ok", source / ".sysdeps-ok")
    checks = source / "autograder" / "hidden_checks.py"
    text = checks.read_text()
    assert text.count(FIXED_CHECK) == 1, "the hidden check of score_stds has moved: update this test"
    checks.write_text(text.replace(FIXED_CHECK, BUGGY_CHECK))  # the term begins with its bug
    subprocess.run(["git", "-C", str(source), "add", "-A"], check=True)

    state = Path("/var/tmp") / f"selfattn-hub-term-{secrets.token_hex(4)}"
    layout = HubLayout(state=state, envs=state / "envs", port=free_port(4))  # hub, its API, proxy API, formgrader
    layout.envs.mkdir(parents=True)
    state.chmod(0o755)
    layout.grader_env.symlink_to(ENVS / "grader")
    # its requirements only: no publish or make hub of this term rebuilds it
    layout.student_env.symlink_to(ENVS / "student")
    passwords = {login: secrets.token_urlsafe(12) for login in logins.values()}
    t = Term(source, layout, logins, passwords, tmp_path)
    try:
        yield t
    finally:
        print("\n".join(t.log))
        try:
            t.make("hub-stop")
        finally:
            if layout.records.exists():  # what this hub's record says it made, and nothing else
                accounts.remove_accounts(layout, log=lambda line: None)
            shutil.rmtree(state, ignore_errors=True)


def _pids(login: str) -> set[int]:
    """The process ids of ``login``'s JupyterLab server."""
    import pwd

    uid, found = pwd.getpwnam(login).pw_uid, set()
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or proc.stat().st_uid != uid:
                continue
            if b"jupyterhub-singleuser" in (proc / "cmdline").read_bytes():
                found.add(int(proc.name))
        except OSError:  # ended meanwhile
            continue
    return found


def _work_in_lab(browser, t: Term, name: str, assignment: str, notebook: str, answers: dict[str, str],
                 submit: bool = True, session=None) -> str:
    """In ``name``'s JupyterLab (logged in now, or ``session``): the Assignments tab's Fetch (unless
    fetched), the notebook saved with ``answers``, the Validate button, the Submit button; returns
    what Validate said."""
    login = t.logins[name]
    context, page = session or _signed_in(browser, t.layout, login, t.passwords[login])
    base = t.layout.user_url(login)
    form = {"course_id": COURSE_ID, "assignment_id": assignment}
    path = f"{COURSE_ID}/{assignment}/{notebook}.ipynb"
    if not Path(f"/home/{login}/{path}").exists():
        _api(page, context, "POST", f"{base}/assignments/fetch", form=form)
    nb = _api(page, context, "GET", f"{base}/api/contents/{path}?content=1")["content"]
    _api(page, context, "PUT", f"{base}/api/contents/{path}",
         data={"type": "notebook", "format": "json", "content": _answered(nb, answers)})
    done = _api(page, context, "POST", f"{base}/assignments/validate", form={"path": path})
    assert done["success"], (name, done)
    if submit:
        submitted = _api(page, context, "POST", f"{base}/assignments/submit", form=form)
        assert submitted["success"], (name, submitted)
    if session is None:
        context.close()
    return str(done["value"])


def _hand_grade(browser, t: Term) -> None:
    """The instructor and the TA each type their share of the written answers' grades in formgrader."""
    fg = f"{t.layout.service_url()}/formgrader/api"
    by_login = {t.logins[n]: n for n in PEOPLE}
    for grader in ("ivy", "tom"):
        login = t.logins[grader]
        context, page = _formgrader(browser, t.layout, login, t.passwords[login])
        for row in _api(page, context, "GET", f"{fg}/submitted_notebooks/{ASSIGNMENT}/{NB}"):
            points, by = HAND[by_login[row["student"]]]
            if by != grader:
                continue
            grades = _api(page, context, "GET", f"{fg}/grades?submission_id={row['id']}")
            written = next(g for g in grades if g["name"] == WRITTEN)
            saved = _api(page, context, "PUT", f"{fg}/grade/{written['id']}", data={"manual_score": points})
            assert saved["manual_score"] == points, saved
        context.close()


def _formgrader_pages(browser, t: Term, names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """In formgrader as the instructor: Generate Feedback and Release Feedback (the assignment's
    buttons), then every list that shows a score: place -> login (or "class") -> score."""
    login = t.logins["ivy"]
    context, page = _formgrader(browser, t.layout, login, t.passwords[login])
    base = t.layout.service_url()
    fg = f"{base}/formgrader"
    out: dict[str, dict[str, float]] = {}
    try:
        generated = _assignment_button(page, base, "generate-feedback")
        assert f"Successfully generated feedback of '{ASSIGNMENT}'" in generated, generated
        released = _assignment_button(page, base, "release-feedback")
        assert f"Successfully released feedback of '{ASSIGNMENT}'" in released, released
        rows = _api(page, context, "GET", f"{fg}/api/submitted_notebooks/{ASSIGNMENT}/{NB}")
        ids = {r["student"]: r["id"] for r in rows}
        out["gradebook: assignments (average)"] = {"class": _shown(page, f"{fg}/gradebook", ASSIGNMENT, "score")}
        out["gradebook: notebooks (average)"] = {"class": _shown(page, f"{fg}/gradebook/{ASSIGNMENT}", NB, "avg-score")}
        for name in names:
            s = t.logins[name]
            for place, url, row in (
                    ("gradebook: notebook submissions", f"{fg}/gradebook/{ASSIGNMENT}/{NB}",
                     f"a[href$='/formgrader/submissions/{ids[s]}']"),
                    ("manage submissions", f"{fg}/manage_submissions/{ASSIGNMENT}", s),
                    ("manage students (every assignment)", f"{fg}/manage_students", s),
                    ("student: assignments", f"{fg}/manage_students/{s}", ASSIGNMENT),
                    ("student: notebooks (the submission's total)", f"{fg}/manage_students/{s}/{ASSIGNMENT}", NB)):
                out.setdefault(place, {})[s] = _shown(page, url, row, "score")
    finally:
        context.close()
    return out


def _fetched_feedback(browser, t: Term, name: str) -> float:
    """``name`` fetches her feedback in JupyterLab (the Assignments tab's call): the score its page shows."""
    login = t.logins[name]
    context, page = _signed_in(browser, t.layout, login, t.passwords[login])
    _api(page, context, "POST", f"{t.layout.user_url(login)}/assignments/fetch_feedback",
         form={"course_id": COURSE_ID, "assignment_id": ASSIGNMENT})
    context.close()
    pages = sorted(Path(f"/home/{login}/{COURSE_ID}/{ASSIGNMENT}/feedback").glob(f"*/{NB}.html"))
    assert pages, f"{name} fetched no feedback"
    return _score_line(pages[-1].read_text())


def _publish(t: Term, change: str) -> str:
    """The change made in the checkout (``scripts/sync_notebooks.py`` there, as the guide says), then
    ``make publish HUB=...``."""
    subprocess.run([str(t.source / ".venv" / "bin" / "python"), "scripts/sync_notebooks.py"], cwd=t.source,
                   check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(t.source)})
    subprocess.run(["git", "-C", str(t.source), "add", "-A"], check=True)
    said = t.on_hub("publish")
    assert "nothing to restart" in said, (change, said[-3000:])
    return said


def test_a_term_on_the_hub_with_the_guides_commands(term: Term):
    from browser_support import driver

    t = term
    with driver() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            _term(browser, t)
        finally:
            browser.close()


def _term(browser, t: Term) -> None:
    everyone = tuple(PEOPLE)
    L = t.logins
    # the hub, started as the guide says; passwords set (passwd LOGIN)
    said = t.make("hub", f"ROSTER={t.roster(*everyone)}")
    for login in L.values():
        assert f"account {login}: made" in said, said[-3000:]
        accounts.set_password(t.layout, login, t.passwords[login])
    # the instructor sets the term's late policy in the term's settings file (a file of her group's)
    edited = _as_user(L["ivy"], "sh", "-c", f"printf '%s' \"$0\" >> {t.layout.term_settings()}", POLICY)
    assert edited.returncode == 0, edited.stderr
    policy = t.policy()
    assert policy == Policy(method="percent", percent=10, per="day", cap=30), policy

    # 1. release; five students in JupyterLab, dan and eve after the due date
    t.restart(*everyone)
    t.on_hub("release")
    t.on_hub("nbgrader", f"ARGS=release_assignment {ASSIGNMENT}")
    t.restart(*everyone)
    validated = {}
    for name in everyone:
        if name == LATE_ONES[0]:
            time.sleep(1.1)
            due = datetime.now(timezone.utc).replace(microsecond=0, tzinfo=None)
            time.sleep(1.1)
        validated[name] = _work_in_lab(browser, t, name, ASSIGNMENT, NB,
                                       {STDS: FIRST[name], WRITTEN: _answer(NB, WRITTEN)})
    assert "divides by d_k" in validated["cat"], validated["cat"]
    t.on_hub("due-date", f"ASSIGNMENT={ASSIGNMENT}", f"UNTIL={due:%Y-%m-%d %H:%M:%S} UTC")

    # 2. collected and graded
    t.restart(*everyone)
    t.on_hub("collect")
    late = {n: max(0.0, t.seconds_late(n, due)) for n in everyone}
    assert [n for n in everyone if late[n] > 0] == list(LATE_ONES), late
    answers, hand, hidden, fixed = dict(FIRST), dict.fromkeys(everyone, 0.0), 2, False

    def expected(name: str) -> float:
        raw = auto(answers[name], fixed, hidden) + hand[name]
        return round(raw - policy.penalty(raw, late[name]), 6)

    def grades_hold(when: str) -> None:
        shown = t.grades_csv()
        want = {L[n]: expected(n) for n in everyone}
        assert shown == pytest.approx(want, abs=1e-6), (when, shown, want)

    t.grade()
    grades_hold("the first make grade")

    # 3. hand grades in formgrader (instructor and TA), make grades-final
    t.restart(*everyone)
    _hand_grade(browser, t)
    hand = {n: HAND[n][0] for n in everyone}
    t.on_hub("grades-final")
    grades_hold("make grades-final after the hand grades")

    # 4. ben resubmits the right answer in JupyterLab (after the due date now)
    t.restart(*everyone)
    _work_in_lab(browser, t, "ben", ASSIGNMENT, NB, {STDS: RIGHT})
    t.on_hub("collect", "COLLECT_ARGS=--update")
    answers["ben"], late["ben"] = RIGHT, t.seconds_late("ben", due)
    assert late["ben"] > 0
    out = t.grade()
    assert "notebooks graded now: 1," in out, out[-3000:]
    grades_hold("ben's resubmission")

    # 5. an extension for dan, granted after grading: the penalty again, nothing decided
    t.restart(*everyone)
    before = expected("dan")
    extended = due + timedelta(days=1)
    out = t.on_hub("extension", f"STUDENT={L['dan']}", f"ASSIGNMENT={ASSIGNMENT}",
                   f"UNTIL={extended:%Y-%m-%d %H:%M:%S} UTC")
    late["dan"] = 0.0
    assert f"{L['dan']}/{ASSIGNMENT}: {before:g} -> {expected('dan'):g}" in out, out[-3000:]
    grades_hold("dan's extension")

    # 6. the hidden check fixed in the checkout, published, graded: cat's mistake is caught now
    t.restart(*everyone)
    checks = t.source / "autograder" / "hidden_checks.py"
    checks.write_text(checks.read_text().replace(BUGGY_CHECK, FIXED_CHECK))
    _publish(t, "the fixed hidden check")
    t.restart(*everyone)
    fixed = True
    out = t.grade()
    assert "the grader's code changed in hidden_checks.py" in out, out[-3000:]
    grades_hold("the fixed hidden check")

    # 7. the hidden points from 2 to 4 (solutions/, then sync and publish)
    t.restart(*everyone)
    source = t.source / "solutions" / ASSIGNMENT / f"{NB}.ipynb"
    nb = nbformat.read(source, as_version=4)
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{STDS}-hidden"
         ).metadata.nbgrader["points"] = NEW_HIDDEN_POINTS
    nbformat.write(nb, source)
    _publish(t, "the changed points")
    t.restart(*everyone)
    hidden = NEW_HIDDEN_POINTS
    out = t.grade()
    assert f"decided again because the checks of {ASSIGNMENT}/{NB} changed" in out, out[-3000:]
    grades_hold("the changed points")

    # 8. a new exercise, a new assignment, published and released while ada's and ben's servers run
    t.restart(*everyone)
    sessions = {n: _signed_in(browser, t.layout, L[n], t.passwords[L[n]]) for n in NEW_ANSWERS}
    servers = {n: _pids(L[n]) for n in NEW_ANSWERS}
    assert all(servers.values()), servers
    add_new_exercise(t.source)
    with open(t.source / "selfattn" / "compare.py", "a") as fh:  # its lecture example (the release needs one)
        fh.write(ROWS_EXAMPLE)
    said = _publish(t, "the new exercise")
    t.on_hub("nbgrader", f"ARGS=release_assignment {NEW_ASSIGNMENT}")
    for name, answer in NEW_ANSWERS.items():
        said = _work_in_lab(browser, t, name, NEW_ASSIGNMENT, NEW_NB, {"row_sums": answer}, session=sessions[name])
        assert "unknown check" not in said and "KeyError" not in said, (name, said)
        sessions[name][0].close()
    assert {n: _pids(L[n]) for n in NEW_ANSWERS} == servers, "a student's server was restarted"
    t.restart(*everyone)
    t.on_hub("collect", f"ASSIGNMENT={NEW_ASSIGNMENT}")
    t.grade()
    new = t.grades_csv(NEW_ASSIGNMENT)
    assert {s: new[s] for s in new if s in {L[n] for n in NEW_ANSWERS}} == {L[n]: p for n, p in NEW_POINTS.items()}, new
    grades_hold("the new exercise")

    # 9. eve dropped from the roster at the next make hub: her login refused, her grades kept
    class_now = tuple(n for n in everyone if n != "eve")
    said = t.restart(*class_now)
    assert f"account {L['eve']}: locked" in said, said[-3000:]
    with _Loopback():
        assert _http_login(t.layout, L["eve"], t.passwords[L["eve"]])[0] != 302, "eve, dropped, logged in"
    grades_hold("eve dropped")

    # 10. feedback from formgrader; every place a score appears
    lists = _formgrader_pages(browser, t, everyone)
    want = {L[n]: expected(n) for n in everyone}
    total = {L[n]: want[L[n]] + NEW_POINTS.get(n, 0.0) for n in everyone}
    average = round(sum(want.values()) / len(want), 2)
    for place, shown in lists.items():
        wanted = {"class": average} if "average" in place else total if "every assignment" in place else want
        assert shown == pytest.approx(wanted, abs=0.006), (place, shown, wanted)
    for place, shown in t.exports().items():
        assert shown == pytest.approx(want, abs=1e-6), (place, shown, want)
    for name in class_now:
        assert _fetched_feedback(browser, t, name) == pytest.approx(want[L[name]], abs=0.006), name
    eve_page = t.work / "feedback" / L["eve"] / ASSIGNMENT / f"{NB}.html"
    assert _score_line(eve_page.read_text()) == pytest.approx(want[L["eve"]], abs=0.006)

    # last: a docstring edited in the grader's code, published, regrades nothing
    t.restart(*class_now)
    code = t.source / "autograder" / "verdicts" / "decide.py"
    text = code.read_text()
    assert text.startswith('"""'), "decide.py has no module docstring any more: update this test"
    code.write_text('"""A docstring edited mid-term. ' + text[3:])
    _publish(t, "a docstring")
    t.restart(*class_now)
    out = t.grade()
    assert "notebooks graded now: 0," in out and "decided again because" not in out, out[-3000:]
    assert t.grades_csv() == pytest.approx(want, abs=1e-6)
