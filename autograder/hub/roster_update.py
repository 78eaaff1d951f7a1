"""``make hub-roster``: the rosters applied to the hub's accounts and, when it runs, to the hub, without
a restart (:func:`autograder.hub.accounts.apply_rosters`, :func:`autograder.hub.roster.sync_hub`)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

from autograder.course.ids import COURSE_ID
from autograder.errors import RefusedInput, command_line
from autograder.hub import accounts, control, prepare, roster
from autograder.hub.layout import HubLayout, from_environment


def update(layout: HubLayout, rosters: dict[str, Path], log=print) -> None:
    """``make hub-roster``: copy the given rosters in, make the accounts what every roster of the hub
    says (one line per change), put the classes in the gradebooks and, when the hub runs, apply them to
    it. A course the hub does not serve yet needs ``make hub`` (its formgrader is a new service)."""
    if os.geteuid() != 0:
        raise RuntimeError("make hub-roster must run as root (it changes system accounts)")
    for course, path in rosters.items():
        if not layout.roster(course).exists():
            raise ValueError(f"course {course!r}: not served by the hub at {layout.state} yet: add it with make hub")
        accounts.read_roster(path)  # a bad roster fails here, before anything changes
    before = roster.blocked_file(layout)
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
    roster.sync_hub(layout, log=log)
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
    rosters = accounts.course_rosters(a.roster, a.course)
    try:
        update(layout, rosters)
    except (ValueError, accounts.ForeignAccount) as exc:
        raise RefusedInput(str(exc)) from None


if __name__ == "__main__":
    main()
