"""The roster is the class, on the hub's side: ``make hub`` (after its start) and ``make hub-roster``
(:mod:`autograder.hub.roster_update`, without a restart) make the hub's users and groups what the
rosters say.

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

import json
import secrets
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests

from autograder.hub import accounts
from autograder.hub.layout import HubLayout, hub_graders_group, hub_students_group
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
