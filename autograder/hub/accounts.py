"""System accounts for the hub from the course roster (``autograder/roster.csv``).

The roster is nbgrader's (``id``, ``first_name``, ``last_name``, ``email`` ...) with one more
column, ``role``: ``student`` (the default when empty or absent), ``instructor`` or ``ta``.
Each course has its own roster: its students join its
:func:`~autograder.hub.layout.students_group`; its instructors and TAs join its
:func:`~autograder.hub.layout.graders_group`, as does its grader account. One login may be in
several courses' rosters (a TA of one, a student of another). Homes are 0700.
Passwords are not in the roster: ``passwd LOGIN`` (or another authenticator, see the guide).
Only accounts carrying :data:`~autograder.hub.layout.ACCOUNT_MARK` are ever changed or removed.
"""

from __future__ import annotations

import csv
import grp
import pwd
import subprocess
from dataclasses import dataclass
from pathlib import Path

from autograder.course.ids import id_problem
from autograder.hub.layout import ACCOUNT_MARK, grader_user, graders_group, students_group

ROLES = ("student", "instructor", "ta")


@dataclass(frozen=True)
class Member:
    """One roster line: the login (nbgrader id) and the role."""

    login: str
    role: str

    @property
    def grades(self) -> bool:
        return self.role in ("instructor", "ta")


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
            problem = id_problem(login) or (None if login.islower() else "a login must be lower case")
            if problem:
                raise ValueError(f"{path}:{line}: id {login!r}: {problem}")
            if role not in ROLES:
                raise ValueError(f"{path}:{line}: role {role!r}: one of {', '.join(ROLES)}")
            members.append(Member(login, role))
    return members


def _run(argv: list[str], input: str | None = None) -> None:
    done = subprocess.run(argv, input=input, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv[:2])}: {done.stderr.strip() or done.stdout.strip()}")


def _user(login: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(login)
    except KeyError:
        return None


def _ensure_group(name: str) -> None:
    try:
        grp.getgrnam(name)
    except KeyError:
        _run(["groupadd", name])


def ensure_user(login: str, group: str) -> None:
    """Create ``login`` (home 0700, member of ``group``) unless it exists; refuse a foreign account."""
    user = _user(login)
    if user is None:
        _run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", ACCOUNT_MARK,
              "--groups", group, login])
        user = pwd.getpwnam(login)
    elif user.pw_gecos != ACCOUNT_MARK:
        raise RuntimeError(f"{login}: a system account this project did not make already exists; "
                           "rename the roster entry or remove the account")
    else:
        _run(["usermod", "--append", "--groups", group, login])
    Path(user.pw_dir).chmod(0o700)


def ensure_accounts(course: str, members: list[Member]) -> None:
    """``course``'s groups, its grader account and one account per member of its roster."""
    graders, students = graders_group(course), students_group(course)
    for group in (graders, students):
        _ensure_group(group)
    ensure_user(grader_user(course), graders)
    for m in members:
        ensure_user(m.login, graders if m.grades else students)


def set_password(login: str, password: str) -> None:
    """Set the PAM password of an account this project made."""
    user = _user(login)
    if user is None or user.pw_gecos != ACCOUNT_MARK:
        raise RuntimeError(f"{login}: not an account of the course hub")
    _run(["chpasswd"], input=f"{login}:{password}\n")


def remove_accounts(logins: list[str], courses: list[str]) -> None:
    """Remove the named accounts this project made (with their homes), the grader accounts of
    ``courses`` and, when empty, their groups."""
    for login in [*logins, *map(grader_user, courses)]:
        user = _user(login)
        if user is not None and user.pw_gecos == ACCOUNT_MARK:
            subprocess.run(["pkill", "-KILL", "-u", login], capture_output=True)
            _run(["userdel", "--remove", login])
    for group in [g(course) for course in courses for g in (graders_group, students_group)]:
        try:
            if not grp.getgrnam(group).gr_mem:
                _run(["groupdel", group])
        except KeyError:
            pass
