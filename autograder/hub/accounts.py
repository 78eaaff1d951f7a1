"""System accounts for the hub from the course roster (``autograder/roster.csv``).

The roster is nbgrader's (``id``, ``first_name``, ``last_name``, ``email`` ...) with one more
column, ``role``: ``student`` (the default when empty or absent), ``instructor`` or ``ta``.
Each course has its own roster: its students join its students' group; its instructors and TAs
join its graders' group, as does its grader account (names: :mod:`autograder.hub.layout`, from the
hub's id). One login may be in several courses' rosters (a TA of one, a student of another).
Homes are 0700. Passwords are not in the roster: ``passwd LOGIN`` (or another authenticator, see
the guide).

The hub makes each account and group it needs and records it (:mod:`autograder.hub.records`); it
never joins, changes, kills or removes one its record does not name. A roster login whose account
exists and is not this hub's (another hub's student, a machine account) is refused with one line
naming the roster line and left out of the hub; a login naming any hub's grader account or group
fails the roster.
"""

from __future__ import annotations

import csv
import grp
import pwd
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.course.ids import COURSE_ID, id_problem
from autograder.errors import ForeignAccount, RefusedInput
from autograder.hub.layout import SYSTEM_NAME, HubLayout, system_name_problem
from autograder.hub.records import Records

ROLES = ("student", "instructor", "ta")


#: the GECOS mark of the accounts hubs made before they had ids (one mark for every hub)
OLDER_MARK = f"{COURSE_ID} hub account"


@dataclass(frozen=True)
class Change:
    """One thing ``make hub`` (or ``make hub-roster``) did to an account: ``what`` is one of
    ``made``, ``joined`` (a group), ``left`` (a group), ``locked``, ``re-enabled``."""

    login: str
    what: str
    detail: str = ""

    def __str__(self) -> str:
        return f"account {self.login}: {self.what}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Member:
    """One roster line: the login (nbgrader id), the role, and where the line is (``ROSTER:LINE``)."""

    login: str
    role: str
    where: str = ""

    @property
    def grades(self) -> bool:
        return self.role in ("instructor", "ta")


def course_rosters(roster: Path | None, given: Sequence[str]) -> dict[str, Path]:
    """Course id -> roster from the command line: ``roster`` for this course (when given), then each
    ``ID=ROSTER`` of ``given`` (``--course``); one of another form is refused in one line."""
    rosters: dict[str, Path] = {} if roster is None else {COURSE_ID: Path(roster)}
    for entry in given:
        course, sep, path = entry.partition("=")
        if not sep or not path:
            raise RefusedInput(f"--course {entry!r}: give ID=ROSTER, e.g. ml-2027=/srv/ml/roster.csv")
        rosters[course.strip()] = Path(path)
    return rosters


def read_roster(path: Path) -> list[Member]:
    """The roster's members; a bad line raises ``ValueError`` naming the file, line and problem."""
    if not path.exists():
        raise ValueError(f"{path}: no roster (columns id, first_name, last_name, email, role)")
    members: list[Member] = []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if "id" not in (reader.fieldnames or []):
            raise ValueError(f"{path}: the roster has no 'id' column (the nbgrader student id)")
        for line, row in enumerate(reader, start=2):
            login = (row.get("id") or "").strip()
            role = (row.get("role") or "").strip().lower() or "student"
            problem = (id_problem(login) or (None if login.islower() else "a login must be lower case")
                       or system_name_problem(login))
            if problem:
                raise ValueError(f"{path}:{line}: id {login!r}: {problem}")
            if role not in ROLES:
                raise ValueError(f"{path}:{line}: role {role!r}: one of {', '.join(ROLES)}")
            members.append(Member(login, role, f"{path}:{line}"))
    return members


def _run(argv: list[str], input: str | None = None) -> None:
    done = subprocess.run(argv, input=input, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv[:2])}: {done.stderr.strip() or done.stdout.strip()}")


def account_mark(hub: str) -> str:
    """The GECOS field of the accounts hub ``hub`` makes (for people reading ``/etc/passwd``; what
    makes an account the hub's is its record)."""
    return f"selfattn hub {hub} account"


def _exists(getter, name: str) -> bool:
    try:
        getter(name)
    except KeyError:
        return False
    return True


def ensure_group(records: Records, name: str) -> None:
    """Make the system group ``name`` and record it, unless this hub made it before; one that
    exists and is not this hub's raises :class:`ForeignAccount`."""
    if records.group(name) is not None:
        return
    if _exists(grp.getgrnam, name):
        raise ForeignAccount(f"a system group {name!r} exists and this hub did not make it; the hub never joins it")
    _run(["groupadd", name])
    records.made_group(name)


def ensure_user(records: Records, hub: str, login: str, group: str) -> Change | None:
    """Make ``login`` (home 0700, member of ``group``) and record it, or add this hub's account
    ``login`` to ``group``; an account that exists and is not this hub's raises
    :class:`ForeignAccount` and is left as it is. Returns what it changed (``None``: nothing)."""
    if records.group(group) is None:
        raise ForeignAccount(f"the group {group!r} is not this hub's")
    user = records.user(login)
    change = None
    if user is None:
        if _exists(pwd.getpwnam, login):
            raise ForeignAccount("a system account of that name exists and this hub did not make it (another "
                                 "hub's, or the machine's); the hub leaves it alone: rename the roster entry")
        _run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", account_mark(hub),
              "--groups", group, login])
        records.made_user(login)
        user = records.user(login)
        assert user is not None
        change = Change(login, "made", f"in {group}")
    elif login not in grp.getgrnam(group).gr_mem:
        _run(["usermod", "--append", "--groups", group, login])
        change = Change(login, "joined", group)
    Path(user.pw_dir).chmod(0o700)
    return change


def ensure_accounts(layout: HubLayout, course: str, members: list[Member], log=print,
                    changes: list[Change] | None = None, report=None) -> list[Member]:
    """``course``'s groups, its grader account and one account per member of its roster, each made
    by this hub (``layout``'s record). Returns the members refused (each named in one line to
    ``log``): their login is an account this hub did not make. The grader account or a group that
    is not this hub's raises :class:`ForeignAccount`. What it made or joined is appended to
    ``changes`` (when given); ``report`` (``make hub``: print) gets one line of what changed among the
    roster's members (:func:`accounts_summary`)."""
    done: list[Change] = changes if changes is not None else []

    def keep(change: Change | None) -> None:
        if change is not None:
            done.append(change)

    records = Records.load(layout.records)
    hub = layout.hub_id
    graders, students = layout.graders_group(course), layout.students_group(course)
    for group in (graders, students):
        ensure_group(records, group)
    try:
        keep(ensure_user(records, hub, layout.grader_user(course), graders))
    except ForeignAccount as exc:
        raise ForeignAccount(f"{layout.grader_user(course)}: {exc}") from None
    refused = []
    changed: dict[str, list[str]] = {"made": [], "joined": []}
    for m in members:
        try:
            change = ensure_user(records, hub, m.login, graders if m.grades else students)
        except ForeignAccount as exc:
            log(f"{m.where}: id {m.login!r}: refused: {exc}")
            refused.append(m)
            continue
        keep(change)
        if change is not None:
            changed[change.what].append(f"{m.login} ({m.role})")
    if report is not None:
        report(accounts_summary(course, changed["made"], changed["joined"], len(members) - len(refused)))
    return refused


def accounts_summary(course: str, made: list[str], joined: list[str], total: int) -> str:
    """One line of what ``make hub`` did to ``course``'s accounts: those made, those added to the
    course's group (a login already this hub's, new in this roster), how many were already so."""
    kept = total - len(made) - len(joined)
    parts = [f"made {len(made)}: {', '.join(made)}" if made else "made none",
             f"added to the course's group {len(joined)}: {', '.join(joined)}" if joined else "",
             f"{kept} unchanged"]
    return f"{course}: accounts {'; '.join(p for p in parts if p)}"


def apply_rosters(layout: HubLayout, rosters: dict[str, list[Member]], log=print,
                  report=None) -> list[Change]:
    """Make this hub's accounts what its rosters (course id -> members, every course it serves) say,
    and return each change (:class:`Change`; ``make hub`` prints one line per change, and ``report``
    gets each course's one-line summary, :func:`accounts_summary`).

    Each course's groups and accounts are made or joined (:func:`ensure_accounts`). An account of
    this hub's that a course's roster no longer names leaves that course's system groups (``left``:
    its exchange folder closes to it). One that no roster names any more is ``locked``: its password
    locked and the account expired (PAM refuses every login), recorded as locked (the hub then blocks
    it: ``Authenticator.blocked_users``). Whoever left a group or was locked has every
    process ended, so that no running process keeps a group it left. A locked account a roster names
    again is ``re-enabled``. Homes and every file stay; only accounts this hub's record names are
    touched, never its grader accounts."""
    changes: list[Change] = []
    for course, members in rosters.items():
        ensure_accounts(layout, course, members, log=log, changes=changes, report=report)
    records = Records.load(layout.records)
    graders = {layout.grader_user(course) for course in [*layout.courses(), *rosters]}
    named = {m.login for members in rosters.values() for m in members if records.user(m.login) is not None}
    ended: set[str] = set()
    for course, members in rosters.items():
        wanted = {layout.graders_group(course): {m.login for m in members if m.grades} | {layout.grader_user(course)},
                  layout.students_group(course): {m.login for m in members if not m.grades}}
        for group, kept in wanted.items():
            found = records.group(group)
            for login in sorted(set(found.gr_mem if found else ()) - kept):
                if records.user(login) is None:  # not this hub's account: never touched
                    continue
                _run(["gpasswd", "--delete", login, group])
                changes.append(Change(login, "left", group))
                ended.add(login)
    for login in sorted(records.users):
        if records.user(login) is None or login in graders or SYSTEM_NAME.fullmatch(login):
            continue
        if login in named and login in records.locked:
            _run(["usermod", "--unlock", "--expiredate", "", login])
            del records.locked[login]
            records.save()
            changes.append(Change(login, "re-enabled"))
        elif login not in named and login not in records.locked:
            _run(["usermod", "--lock", "--expiredate", "1", login])
            records.locked[login] = time.time()
            records.save()
            changes.append(Change(login, "locked", "in no roster: login refused, home and work kept"))
            ended.add(login)
    for login in sorted(ended):
        user = records.user(login)
        if user is not None:
            _end_processes(user.pw_uid)
    return changes


def adopt_older_accounts(layout: HubLayout, members: list[Member], log=print) -> None:
    """Record as this hub's the members' accounts that carry :data:`OLDER_MARK`: run once, when a
    state folder made before hubs had ids gets its id (its accounts were made for it then; its old
    grader accounts and groups are left alone, and the hub makes its own)."""
    records = Records.load(layout.records)
    for m in members:
        try:
            user = pwd.getpwnam(m.login)
        except KeyError:
            continue
        if m.login not in records.users and user.pw_gecos == OLDER_MARK:
            records.users[m.login] = user.pw_uid
            records.save()
            log(f"{m.where}: id {m.login!r}: the account this state folder's hub made before hub ids, kept as its own")


def own_members(layout: HubLayout, members: list[Member]) -> list[Member]:
    """The members whose account is this hub's (the others were refused: they never reach the hub)."""
    records = Records.load(layout.records)
    return [m for m in members if records.user(m.login) is not None]


def set_password(layout: HubLayout, login: str, password: str) -> None:
    """Set the PAM password of an account this hub made."""
    if Records.load(layout.records).user(login) is None:
        raise RuntimeError(f"{login}: not an account of this hub ({layout.records})")
    _run(["chpasswd"], input=f"{login}:{password}\n")


def _end_processes(uid: int, wait: float = 10) -> None:
    """Kill every process of ``uid`` and wait (up to ``wait`` s) until none is left."""
    deadline = time.monotonic() + wait
    while subprocess.run(["pkill", "-KILL", "-u", str(uid)], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)


def remove_accounts(layout: HubLayout, log=print) -> None:
    """Remove every account (its processes ended, its home removed) and group this hub's record
    names, and nothing else: an entry whose uid or gid is no longer the recorded one (removed and
    made again by someone else) is dropped from the record and left alone, named in one line."""
    records = Records.load(layout.records)
    for login, uid in sorted(records.users.items()):
        if records.user(login) is None:
            log(f"{login}: no longer this hub's account (uid {uid}); left alone")
        else:
            _end_processes(uid)
            _run(["userdel", "--remove", login])
        del records.users[login]
        records.save()
    records.locked.clear()
    records.save()
    for name, gid in sorted(records.groups.items()):
        if records.group(name) is None:
            log(f"{name}: no longer this hub's group (gid {gid}); left alone")
        else:
            _run(["groupdel", name])
        del records.groups[name]
        records.save()
