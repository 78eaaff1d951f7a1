"""The roster is the class on a real JupyterHub of its own (``make hub``, ``make hub-roster``,
``make hub-end-term``), driven over HTTP as a browser would.

The hub has a state folder, port block and accounts of its own (random names), and removes them.
Three students with names, emails and LMS ids; their names and ids reach the gradebook (what
formgrader's Students page lists) and the Canvas and Moodle exports. Each logs in, starts their
server and fetches; ben submits and the grader collects. The hub restarts with ben dropped and dan
enrolled late (``make hub``): one line per account change; ben's login is refused, his processes are
gone, he cannot list the course's exchange folder in a shell, his home and collected work are byte for
byte what they were, the gradebook and the exports keep him; dan logs in and fetches. Then, without a
restart (``make hub-roster``), cat is dropped while her server runs: it is stopped and her login
refused; ben, re-added, is told to wait for the restart and gets in after it. Last, the end of the
term archives the course and removes the hub's accounts: the archive holds ``grades.csv`` and the
gradebook with every student.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import secrets
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
import requests
from browser_support import free_port
from test_hub import ENVS, _as_grader, _none_left, _run_as_grader

from autograder.course.ids import COURSE_ID
from autograder.hub import accounts, control, roster, roster_update, term_end
from autograder.hub.layout import HubLayout
from autograder.hub.records import Records

ASSIGNMENT = "attention"
#: how long a stop may take (a deadline, not a speed check)
STOP_TIMEOUT = 180
HEAD = "id,first_name,last_name,email,lms_user_id,sis_user_id,role\n"


def _line(login: str, first: str, last: str, role: str = "student") -> str:
    return f"{login},{first},{last},{login}@uni.example,lms-{login},sis-{login},{role}\n"


class _Loopback:
    """``*.localhost`` resolves to 127.0.0.1 in this process, as browsers resolve it."""

    def __enter__(self) -> None:
        import socket

        self.resolve = socket.getaddrinfo

        def loopback(host, *args, **kw):
            if isinstance(host, str) and (host == "localhost" or host.endswith(".localhost")):
                host = "127.0.0.1"
            return self.resolve(host, *args, **kw)

        socket.getaddrinfo = loopback

    def __exit__(self, *exc) -> None:
        import socket

        socket.getaddrinfo = self.resolve


def _login(layout: HubLayout, name: str, password: str) -> tuple[int, requests.Session]:
    """The hub login form, as a browser posts it: (HTTP status, the session)."""
    http = requests.Session()
    http.get(f"{layout.url}/hub/login", timeout=60)
    form = {"username": name, "password": password, "_xsrf": http.cookies.get("_xsrf", path="/hub/")}
    answer = http.post(f"{layout.url}/hub/login", data=form, allow_redirects=False, timeout=120)
    return answer.status_code, http


def _fetch(layout: HubLayout, name: str, password: str, steps: tuple[str, ...] = ("fetch",)) -> None:
    """Log in, start the server, then ``steps`` (``fetch``, ``submit``) through the Assignments tab's
    calls; fails naming the step."""
    status, http = _login(layout, name, password)
    assert status == 302, f"{name}: login refused ({status})"
    http.get(f"{layout.url}/hub/spawn/{name}", timeout=120)
    base = layout.user_url(name)
    deadline = time.monotonic() + 300
    while not ((answer := http.get(f"{base}/lab", timeout=120)).ok and answer.url.startswith(base)):
        assert time.monotonic() < deadline, f"{name}: the server did not answer ({answer.status_code})"
        time.sleep(0.5)
    xsrf = [c.value for c in http.cookies if c.name == "_xsrf" and c.domain.lstrip(".") == f"{name}.{layout.domain}"]
    form = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    for step in steps:
        done = http.post(f"{base}/assignments/{step}", data=form, headers={"X-XSRFToken": xsrf[-1]}, timeout=300)
        assert done.ok and done.json().get("success"), f"{name}: {step}: {done.status_code} {done.text[-500:]}"


def _server_processes(login: str) -> list[str]:
    done = subprocess.run(["ps", "-u", login, "-o", "args="], capture_output=True, text=True)
    return [line for line in done.stdout.splitlines() if line.strip()]


def _tree(root: Path, owners: bool = True) -> dict[str, tuple]:
    """Every entry under ``root``: its size and SHA-256 (byte for byte) and, with ``owners``, its owner
    and mode (make hub gives the course copy's files to the grader account and its group at each start)."""
    found = {}
    for path in sorted([root, *root.rglob("*")]):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        owner = (st.st_uid, st.st_gid, st.st_mode) if owners else ()
        found[str(path.relative_to(root))] = (*owner, st.st_size, digest)
    return found


def _gradebook(layout: HubLayout) -> dict[str, tuple]:
    """The gradebook's students (what formgrader's Students page lists), read as the grader account."""
    script = ("import json; from nbgrader.api import Gradebook\n"
              "with Gradebook('sqlite:///gradebook.db') as gb:\n"
              "    print(json.dumps({s.id: [s.first_name, s.last_name, s.email, s.lms_user_id] for s in gb.students}))")
    done = _run_as_grader(layout, str(layout.grader_env / "bin" / "python"), "-c", script)
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    return {k: tuple(v) for k, v in json.loads(done.stdout).items()}


def _exports(layout: HubLayout) -> dict[str, list[dict[str, str]]]:
    """The Canvas and Moodle files, written as the grader account from the course copy's gradebook and roster."""
    script = ("from pathlib import Path; from autograder.outputs.lms_export import write_lms_exports\n"
              f"write_lms_exports('sqlite:///gradebook.db', {COURSE_ID!r}, Path('exports'), Path('roster.csv'), "
              "course_root=Path('..'), log=print)")
    done = _run_as_grader(layout, str(layout.grader_env / "bin" / "python"), "-c", script)
    assert done.returncode == 0, done.stderr[-2000:]
    folder = layout.course() / "autograder" / "exports"
    return {kind: list(csv.DictReader(io.StringIO((folder / f"{kind}.csv").read_text())))
            for kind in ("canvas", "moodle")}


def test_the_roster_is_the_class_from_enrolment_to_the_end_of_term(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.fail("the hub roster test must run as root (it makes system users, as make hub does)")
    tag = secrets.token_hex(2)
    ada, ben, cat, dan, ivy = (f"sr{tag}-{n}" for n in ("ada", "ben", "cat", "dan", "ivy"))
    names = {ada: ("Ada", "Lovelace"), ben: ("Ben", "Okafor"), cat: ("Cat", "Nguyen"), dan: ("Dan", "Weiss")}
    _none_left([ada, ben, cat, dan, ivy])

    def roster_file(name: str, *students: str) -> Path:
        path = tmp_path / f"{name}.csv"
        path.write_text(HEAD + "".join(_line(s, *names[s]) for s in students) + _line(ivy, "Ivy", "Ng", "instructor"))
        return path

    state = Path("/var/tmp") / f"selfattn-hub-roster-{secrets.token_hex(4)}"
    layout = HubLayout(state=state, envs=ENVS, port=free_port(4))  # the hub, its API, the proxy's API, formgrader
    for key, value in (("SELFATTN_HUB_STATE", str(state)), ("SELFATTN_HUB_ENVS", str(ENVS)),
                       ("SELFATTN_HUB_PORT", str(layout.port))):
        monkeypatch.setenv(key, value)
    passwords = {login: secrets.token_urlsafe(12) for login in (ada, ben, cat, dan, ivy)}
    problems: list[str] = []
    lingering: subprocess.Popen | None = None

    def expect(ok: object, problem: str) -> None:
        if not ok:
            problems.append(problem)

    def restart(path: Path) -> list[str]:
        control.stop(layout, log=lambda line: None, timeout=STOP_TIMEOUT)
        said: list[str] = []
        control.start(layout, {COURSE_ID: path}, log=said.append, timeout=300)
        return said

    def shut_out(login: str, when: str) -> None:
        """Everything a dropped student is refused, checked from outside."""
        expect(_login(layout, login, passwords[login])[0] != 302, f"{when}: {login} could log in")
        status = subprocess.run(["passwd", "--status", login], capture_output=True, text=True).stdout.split()
        shadow = subprocess.run(["getent", "shadow", login], capture_output=True, text=True).stdout.split(":")
        expect(status[1:2] == ["L"] and shadow[7:8] == ["1"],  # password locked, account expired since 1970-01-02
               f"{when}: {login}'s account is not locked and expired: {status[:2]}, expiry {shadow[7:8]}")
        expect(not _server_processes(login), f"{when}: {login} still runs {_server_processes(login)}")
        ls = subprocess.run(["runuser", "-u", login, "--", "ls", str(layout.course_exchange())],
                            capture_output=True, text=True)
        expect(ls.returncode != 0, f"{when}: {login} lists the course's exchange folder: {ls.stdout!r}")
        expect(login not in roster.HubAPI(layout).users(), f"{when}: {login} is still a user of the hub")

    try:
        said: list[str] = []
        control.start(layout, {COURSE_ID: roster_file("first", ada, ben, cat)}, log=said.append, timeout=300)
        for login in (ada, ben, cat, ivy):
            expect(any(line.startswith(f"account {login}: made") for line in said), f"no 'made' line for {login}")
        for login, password in passwords.items():
            if login != dan:
                accounts.set_password(layout, login, password)
        _as_grader(layout, "generate_assignment", ASSIGNMENT, "--force")
        _as_grader(layout, "release_assignment", ASSIGNMENT)
        book = _gradebook(layout)
        for login in (ada, ben, cat):
            expect(book.get(login) == (*names[login], f"{login}@uni.example", f"lms-{login}"),
                   f"the gradebook has {login} as {book.get(login)}")
        exported = _exports(layout)
        canvas = {row["ID"]: row for row in exported["canvas"][1:]}
        moodle = {row["username"]: row for row in exported["moodle"]}
        for login in (ada, ben, cat):
            first, last = names[login]
            row = canvas.get(f"lms-{login}", {})
            expect(row.get("Student") == f"{last} {first}" and row.get("SIS User ID") == f"sis-{login}",
                   f"canvas.csv has {login} as {row}")
            row = moodle.get(login, {})
            expect((row.get("ID number"), row.get("Email address")) == (f"sis-{login}", f"{login}@uni.example"),
                   f"moodle.csv has {login} as {row}")

        with _Loopback():
            for login in (ada, cat):
                _fetch(layout, login, passwords[login])
            _fetch(layout, ben, passwords[ben], steps=("fetch", "submit"))
            _as_grader(layout, "collect", ASSIGNMENT)
            collected = layout.course() / "autograder" / "submitted" / ben
            assert collected.is_dir(), f"ben's hand-in was not collected: {sorted(collected.parent.iterdir())}"
            # a process of his own, started while he could reach the exchange (it would keep his group)
            lingering = subprocess.Popen(["runuser", "-u", ben, "--", "sleep", "900"])
            home, work = Path(f"/home/{ben}"), _tree(collected, owners=False)
            before = _tree(home)

            # the restart: ben dropped, dan enrolled late
            said = restart(roster_file("second", ada, cat, dan))
            try:
                lingering.wait(timeout=60)
            except subprocess.TimeoutExpired:
                expect(False, "ben's own process outlived his removal")
            for line in (f"account {dan}: made", f"account {ben}: left", f"account {ben}: locked"):
                expect(any(said_line.startswith(line) for said_line in said), f"make hub did not say {line!r}: {said}")
            shut_out(ben, "after the restart")
            expect(_tree(home) == before, "ben's home changed")
            expect(_tree(collected, owners=False) == work, "ben's collected work changed")
            book = _gradebook(layout)
            expect(ben in book and book.get(dan, ())[:2] == names[dan], f"the gradebook after the restart: {book}")
            canvas = {row["ID"]: row for row in _exports(layout)["canvas"][1:]}
            expect(canvas.get(f"lms-{ben}", {}).get("SIS User ID") == f"sis-{ben}", "the exports lost ben's ids")
            accounts.set_password(layout, dan, passwords[dan])
            _fetch(layout, dan, passwords[dan])
            expect((Path(f"/home/{dan}") / COURSE_ID / ASSIGNMENT).is_dir(), "dan's fetch left nothing in his home")
            _fetch(layout, cat, passwords[cat], steps=())  # her server runs

            # without a restart (make hub-roster): cat dropped while her server runs, ben back
            told: list[str] = []
            roster_update.update(layout, {COURSE_ID: roster_file("third", ada, ben, dan)}, log=told.append)
            expect(any(line.startswith(f"account {cat}: locked") for line in told), f"hub-roster said {told}")
            expect(any(line.startswith(f"account {ben}: the running hub blocked it") for line in told),
                   f"hub-roster did not tell that ben gets in after the restart: {told}")
            shut_out(cat, "after make hub-roster")
            _fetch(layout, dan, passwords[dan], steps=("submit",))  # the others go on

            restart(roster_file("third", ada, ben, dan))
            _fetch(layout, ben, passwords[ben], steps=("submit",))  # his fetched copy is still in his home
            ls = subprocess.run(["runuser", "-u", ben, "--", "ls", str(layout.course_exchange())], capture_output=True)
            expect(ls.returncode == 0, "ben, re-added, cannot list the exchange folder")
            shut_out(cat, "after the second restart")

        # the end of the term: ben's hand-in graded, grades.csv written
        _as_grader(layout, "autograde", ASSIGNMENT, "--student", ben)
        _as_grader(layout, "export")
        grades = (layout.course() / "autograder" / "grades.csv").read_text()
        graded = {row["student_id"]: row["score"] for row in csv.DictReader(io.StringIO(grades))}
        expect(set(graded) >= {ada, ben, cat, dan}, f"grades.csv: {graded}")
        made = sorted(Records.load(layout.records).users)
        archive = term_end.end_term(layout, tmp_path / "term.tar.gz", log=lambda line: None)
        expect(control.running_pid(layout) is None, "the hub still runs after the end of the term")
        left = [login for login in made if subprocess.run(["id", login], capture_output=True).returncode == 0]
        expect(not left, f"accounts left after the end of the term: {left}")
        restored = tmp_path / "restored"
        with tarfile.open(archive) as tar:
            tar.extractall(restored)  # our own archive (Python 3.11.2 has no extraction filters)
        work_folder = restored / "courses" / COURSE_ID / "autograder"
        expect((work_folder / "grades.csv").exists() and (work_folder / "grades.csv").read_text() == grades,
               "the archive's grades.csv is not the course's")
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{work_folder / 'gradebook.db'}") as gb:
            kept = {s.id: (s.first_name, s.last_name) for s in gb.students}
            expect(kept == names, f"the archive's gradebook: {kept}")
            scores = {s.student.id: s.score for s in gb.assignment_submissions(ASSIGNMENT)}
            expect(list(scores) == [ben] and scores[ben] == float(graded.get(ben, "nan")),  # no due date: no penalty
                   f"the archive's gradebook has the scores {scores}, grades.csv {graded.get(ben)}")
        expect(_tree(restored / "courses" / COURSE_ID / "autograder" / "submitted" / ben, owners=False) == work,
               "the archive lost ben's collected work")
        expect((restored / "homes" / dan / COURSE_ID / ASSIGNMENT).is_dir(), "the archive lost dan's home")
    except Exception as exc:
        if problems:  # what went wrong before it, which may be its cause
            raise AssertionError("\n".join([*problems, f"then: {exc}"])) from exc
        raise
    finally:
        if lingering is not None and lingering.poll() is None:
            lingering.kill()
        try:
            control.stop(layout, log=lambda line: None, timeout=STOP_TIMEOUT)
        finally:
            if state.exists():  # what this hub's record says it made, and nothing else
                accounts.remove_accounts(layout, log=lambda line: None)
            shutil.rmtree(state, ignore_errors=True)
            for leftover in state.parent.glob(f"{state.name}-term-*"):
                leftover.unlink()
    assert not problems, "\n".join(problems)
