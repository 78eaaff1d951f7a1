"""The roster is the class: ``make hub-roster`` applies the rosters to the hub without a restart, and
``make hub`` does the same at each start.

The system side is :func:`autograder.hub.accounts.apply_rosters` (accounts made, re-enabled, locked;
groups joined and left). This module does the hub's side through its REST API, with the token of a
service of its own (:data:`SERVICE`, token in ``STATE/hub/roster-api-token``, root only): a locked
account's servers are stopped and its user is removed from the hub's database (which ends its hub
sessions); each course's hub groups (``nbgrader-ID``, ``formgrade-ID``) hold exactly its roster's own
accounts (a late enrolment is made a hub user and added). At a start, the hub itself blocks the
locked accounts (``Authenticator.blocked_users``: refused, servers stopped, hub groups and roles
revoked), so a dropped student is out before anyone can log in.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests

from autograder.course.ids import COURSE_ID
from autograder.errors import RefusedInput, command_line
from autograder.hub import accounts, prepare
from autograder.hub.layout import HubLayout, from_environment, hub_graders_group, hub_students_group
from autograder.hub.records import Records
from autograder.outputs.atomic import write_text

#: the hub service whose token this module's API calls carry (``--`` is in no course id, so no
#: formgrader service has this name), and its role
SERVICE = "hub--roster"
#: what the service may do: users (make, delete), their servers (stop), groups (members)
SCOPES = ["admin:users", "admin:servers", "admin:groups"]
#: how many users one API page lists (JupyterHub's own page limit is 200)
PAGE = 200


def token_file(layout: HubLayout) -> Path:
    return layout.hub / "roster-api-token"


def blocked_file(layout: HubLayout) -> Path:
    """The accounts the running hub blocked at its start (written by :func:`sync_hub` after the start)."""
    return layout.hub / "blocked-at-start.json"


def api_token(layout: HubLayout) -> str:
    """The service's API token, made (random, root only) when the state folder has none."""
    path = token_file(layout)
    if not path.exists():
        layout.hub.mkdir(parents=True, exist_ok=True)
        write_text(path, secrets.token_hex(32) + "\n")
    path.chmod(0o600)
    return path.read_text().strip()


def service(layout: HubLayout) -> dict:
    """The hub service (``c.JupyterHub.services``) that holds :func:`api_token`: no process, no URL."""
    return {"name": SERVICE, "api_token": api_token(layout)}


def role() -> dict:
    """Its role (``c.JupyterHub.load_roles``)."""
    return {"name": SERVICE, "services": [SERVICE], "scopes": SCOPES}


def blocked(layout: HubLayout) -> set[str]:
    """The accounts the hub blocks (``Authenticator.blocked_users``): those it locked."""
    return set(Records.load(layout.records).locked)


def hub_groups(layout: HubLayout) -> dict[str, set[str]]:
    """Each course's hub groups and who belongs there: its roster's own accounts (not locked), its
    graders and grader account in ``formgrade-ID``, its students in ``nbgrader-ID``."""
    locked = blocked(layout)
    groups: dict[str, set[str]] = {}
    for course in layout.courses():
        members = [m for m in accounts.own_members(layout, accounts.read_roster(layout.roster(course)))
                   if m.login not in locked]
        groups[hub_graders_group(course)] = {m.login for m in members if m.grades} | {layout.grader_user(course)}
        groups[hub_students_group(course)] = {m.login for m in members if not m.grades}
    return groups


class HubAPI:
    """The hub's REST API through its proxy on loopback (the hub's host in ``Host``), as :data:`SERVICE`."""

    def __init__(self, layout: HubLayout) -> None:
        self.base = f"{layout.bind_url}/hub/api"
        self.http = requests.Session()
        self.http.headers.update({"Host": urlsplit(layout.url).netloc,
                                  "Authorization": f"token {api_token(layout)}"})

    def call(self, method: str, path: str, body: dict | None = None, ok: tuple[int, ...] = ()) -> object:
        """The JSON answer (``None`` when empty) of ``method path``; an HTTP error other than ``ok``
        raises ``RuntimeError`` naming the call and the hub's message."""
        answer = self.http.request(method, self.base + path, data=None if body is None else json.dumps(body),
                                   timeout=120)
        if answer.status_code >= 400 and answer.status_code not in ok:
            raise RuntimeError(f"the hub refused {method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer.json() if answer.content and answer.status_code < 300 else None

    def users(self) -> set[str]:
        names: set[str] = set()
        while True:
            page = self.call("GET", f"/users?offset={len(names)}&limit={PAGE}")
            assert isinstance(page, list)
            names |= {u["name"] for u in page}
            if len(page) < PAGE:
                return names

    def remove_user(self, login: str, wait: float = 120) -> None:
        """Stop ``login``'s server (waiting while it stops) and delete the hub's user."""
        deadline = time.monotonic() + wait
        while self.call("DELETE", f"/users/{login}", ok=(400, 404)) is None:
            if login not in self.users():
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{login}: the hub did not stop the server within {wait:.0f} s")
            time.sleep(0.5)


def sync_hub(layout: HubLayout, log=print) -> None:
    """The running hub's users and groups as the rosters say (see the module docstring); one line per
    change to ``log``."""
    api = HubAPI(layout)
    locked = blocked(layout)
    users = api.users()
    for login in sorted(locked & users):
        api.remove_user(login)
        log(f"account {login}: servers stopped, removed from the hub (locked)")
    users -= locked
    for group, wanted in hub_groups(layout).items():
        if api.call("GET", f"/groups/{group}", ok=(404,)) is None:
            api.call("POST", f"/groups/{group}")
        found = set(api.call("GET", f"/groups/{group}")["users"])  # type: ignore[index]
        if new := sorted(wanted - users):
            api.call("POST", "/users", {"usernames": new})
            users |= set(new)
        if added := sorted(wanted - found):
            api.call("POST", f"/groups/{group}/users", {"users": added})
        if gone := sorted(found - wanted):
            api.call("DELETE", f"/groups/{group}/users", {"users": gone})
            for login in gone:
                log(f"account {login}: out of the hub group {group}")


def started(layout: HubLayout, log=print) -> None:
    """Right after the hub started: remember whom it blocked (:func:`blocked_file`), then
    :func:`sync_hub` (a login that left one course's roster and stays in another's leaves the hub group)."""
    write_text(blocked_file(layout), json.dumps(sorted(blocked(layout))) + "\n")
    sync_hub(layout, log=log)


def update(layout: HubLayout, rosters: dict[str, Path], log=print) -> None:
    """``make hub-roster``: copy the given rosters in, make the accounts what every roster of the hub
    says (one line per change), put the classes in the gradebooks and, when the hub runs, apply them to
    it. A course the hub does not serve yet needs ``make hub`` (its formgrader is a new service)."""
    from autograder.hub import control

    if os.geteuid() != 0:
        raise RuntimeError("make hub-roster must run as root (it changes system accounts)")
    for course, path in rosters.items():
        if not layout.roster(course).exists():
            raise ValueError(f"course {course!r}: not served by the hub at {layout.state} yet: add it with make hub")
        accounts.read_roster(path)  # a bad roster fails here, before anything changes
    before = blocked_file(layout)
    at_start = set(json.loads(before.read_text())) if before.exists() else set()
    for course, path in rosters.items():
        shutil.copy(path, layout.roster(course))
    members = {course: accounts.read_roster(rosters.get(course, layout.roster(course))) for course in layout.courses()}
    changes = accounts.apply_rosters(layout, members, log=log)
    for change in changes:
        log(str(change))
    if not changes:
        log("no account changed")
    if (layout.grader_env / "bin" / "nbgrader").exists():
        prepare.import_class(layout, log=log)
    if control.running_pid(layout) is None:
        log(f"the hub is not running: it starts with these rosters (make hub; state in {layout.state})")
        return
    sync_hub(layout, log=log)
    for change in changes:
        if change.what == "re-enabled" and change.login in at_start:
            log(f"account {change.login}: the running hub blocked it at its start: it may log in again after "
                "the next restart (make hub-stop; make hub)")


@command_line
def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="apply the rosters to the course hub's accounts (make hub-roster)")
    p.add_argument("--roster", type=Path, default=None,
                   help=f"this course's ({COURSE_ID}) new roster (default: the hub's copy, STATE/hub/rosters/ID.csv)")
    p.add_argument("--course", action="append", default=[], metavar="ID=ROSTER",
                   help="another course of the hub, its id and its new roster (again for each course)")
    a = p.parse_args(args)
    try:
        layout = from_environment()
    except ValueError as exc:
        raise RefusedInput(str(exc)) from None
    rosters: dict[str, Path] = {}
    if a.roster is not None:
        rosters[COURSE_ID] = a.roster
    for given in a.course:
        course, sep, path = given.partition("=")
        if not sep or not path:
            raise RefusedInput(f"--course {given!r}: give ID=ROSTER, e.g. ml-2027=/srv/ml/roster.csv")
        rosters[course.strip()] = Path(path)
    try:
        update(layout, rosters)
    except (ValueError, accounts.ForeignAccount) as exc:
        raise RefusedInput(str(exc)) from None


if __name__ == "__main__":
    main()
