"""``make hub-end-term``: the end of a term on the hub: archive the course, then remove the hub's accounts.

In order: the hub is stopped (its servers and formgraders with it); one archive (gzip'd tar, root
only, 0600) is written, by default beside the state folder as ``STATE-term-HUB-YYYYmmddTHHMMSS.tar.gz``,
holding what a grader needs afterwards and what the students made::

    courses/ID/        each course copy: autograder/ with gradebook.db, submitted/, autograded/,
                       feedback/, grades.csv, exports/, roster.csv, due dates; the course files
    exchange/          nbgrader's exchange (released, inbound hand-ins, released feedback)
    config/            each course's term settings (the late policy...)
    hub/rosters/       the rosters; hub/id and hub/accounts.json (what the hub made)
    homes/LOGIN/       the home of each account the hub made (the students' own copies)

The archive is read back (every member listed, each course's gradebook present) before anything is
removed; then every account and group the hub's record names is removed (processes ended, homes
removed), and nothing else. The state folder stays, without accounts: ``make hub`` there would make
them again; remove it once the archive is kept where your institution keeps records.
Restore: ``tar -xzf ARCHIVE -C DIR``, then e.g. ``DIR/courses/ID/autograder/grades.csv`` and
``DIR/courses/ID/autograder/gradebook.db`` (nbgrader's gradebook: formgrader or ``nbgrader`` in that folder).
"""

from __future__ import annotations

import argparse
import os
import tarfile
import time
from pathlib import Path

from autograder.errors import RefusedInput, command_line
from autograder.hub import accounts, control
from autograder.hub.layout import HubLayout, from_environment
from autograder.hub.records import Records

#: the state folder's parts the archive holds (relative to it), besides the homes
PARTS = ("courses", "exchange", "config", "hub/rosters", "hub/id", "hub/accounts.json")


def default_archive(layout: HubLayout) -> Path:
    """``STATE-term-HUB-YYYYmmddTHHMMSS.tar.gz``, beside the state folder."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return layout.state.with_name(f"{layout.state.name}-term-{layout.hub_id}-{stamp}.tar.gz")


def archive(layout: HubLayout, dest: Path) -> list[str]:
    """Write the archive (see the module docstring) to ``dest`` (0600; never over an existing file) and
    read it back; returns its members' names. Each course without a gradebook is fine (nothing graded);
    a course whose gradebook did not reach the archive raises ``RuntimeError``."""
    if dest.exists():
        raise ValueError(f"{dest}: exists; name another archive (ARCHIVE=...)")
    records = Records.load(layout.records)
    aside = dest.with_name(dest.name + ".writing")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
        for part in PARTS:
            if (layout.state / part).exists():
                tar.add(layout.state / part, arcname=part)
        for login in sorted(records.users):
            user = records.user(login)
            if user is not None and Path(user.pw_dir).is_dir():
                tar.add(user.pw_dir, arcname=f"homes/{login}")
    with tarfile.open(aside) as tar:
        names = tar.getnames()
    for course in layout.courses():
        book = layout.course(course) / "autograder" / "gradebook.db"
        if book.exists() and f"courses/{course}/autograder/gradebook.db" not in names:
            raise RuntimeError(f"{aside}: the gradebook of {course} is not in the archive; nothing was removed")
    aside.rename(dest)
    return names


def end_term(layout: HubLayout, dest: Path | None = None, log=print) -> Path:
    """Stop the hub, archive the term to ``dest`` (default :func:`default_archive`), remove the hub's
    accounts and groups (its record's only); returns the archive's path."""
    if os.geteuid() != 0:
        raise RuntimeError("make hub-end-term must run as root (it removes system accounts)")
    if not layout.id_file.exists():
        raise ValueError(f"{layout.state}: no hub here (no {layout.id_file})")
    dest = (dest or default_archive(layout)).absolute()
    control.stop(layout, log=log)
    names = archive(layout, dest)
    log(f"the term is archived in {dest} ({len(names)} entries; restore: tar -xzf {dest} -C DIR)")
    records = Records.load(layout.records)
    made = sorted(records.users)
    accounts.remove_accounts(layout, log=log)
    log(f"removed the hub's {len(made)} accounts and their groups; the state folder {layout.state} stays "
        "(make hub there would make them again): remove it once the archive is kept safe")
    return dest


@command_line
def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="end the term on the course hub: archive it, then remove its accounts")
    p.add_argument("--archive", type=Path, default=None,
                   help="where to write the archive (default: beside the state folder, STATE-term-HUB-DATE.tar.gz)")
    a = p.parse_args(args)
    try:
        end_term(from_environment(), a.archive)
    except ValueError as exc:
        raise RefusedInput(str(exc)) from None


if __name__ == "__main__":
    main()
