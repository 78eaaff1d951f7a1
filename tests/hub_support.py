"""A hub of a test's (or a benchmark's) own: started as ``make hub`` starts one, removed whatever happens.

:func:`own_hub` is the one frame every test and benchmark that starts a real JupyterHub runs in: a
fresh state folder under ``/var/tmp`` with a random name, free ports, the people of its rosters with
random passwords, the hub's settings file as an instructor writes it (before the first start), and
``SELFATTN_HUB_*`` set for the hub's own commands. Afterwards, even when the body raises or the
start fails halfway, the hub is stopped, the environment is as before, every account and group its
record names is removed (and nothing else), and its state folder and rosters are deleted.
:func:`uid_processes` lists what one of its people runs (her server and kernels).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import pwd
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from browser_support import free_port

from autograder.hub import accounts, caps, control
from autograder.hub.layout import HubLayout

#: the hub tests' two environments (``make hub-test-envs``)
ENVS = Path(os.environ.get("SELFATTN_HUB_TEST_ENVS", "/var/tmp/selfattn-hub-envs"))
#: the header of the rosters the callers give (nbgrader's columns and the hub's ``role``)
ROSTER_HEAD = "id,first_name,last_name,email,role\n"


class OwnHub(NamedTuple):
    """A running hub of :func:`own_hub`: where it is, the password of each of its people, and its
    rosters' files (course id -> path, for a restart)."""

    layout: HubLayout
    passwords: dict[str, str]
    rosters: dict[str, Path]


@contextlib.contextmanager
def own_hub(kind: str, rosters: Mapping[str, str], *, settings: str = "", envs: Path = ENVS,
            log: Callable[[str], object] = lambda line: None, start_timeout: float = 300,
            stop_timeout: float = 180, spawner: str | None = None,
            env: Mapping[str, str] | None = None) -> Iterator[OwnHub]:
    """A hub started as root for the courses ``rosters`` names, removed with all it made afterwards.

    Parameters
    ----------
    kind
        A word for its state folder's name, ``/var/tmp/selfattn-hub-<kind>-<random>``.
    rosters
        Course id -> the rows of its roster (``id,first_name,last_name,email,role`` lines after
        :data:`ROSTER_HEAD`); every login in them gets an account and a random password.
    settings
        The hub's settings file (:func:`autograder.hub.caps.settings_path`), written before the
        first start when given, as an instructor writes it.
    envs
        The students' and graders' environments (the hub tests' cached ones by default).
    log
        Where ``make hub``'s lines go (a test collects them to read what the start said).
    start_timeout, stop_timeout
        How long the start and the stop may take (seconds): deadlines, not speed checks.
    spawner
        How the students' servers run (``None``: the hub's default).
    env
        More environment variables for the hub's lifetime (a Slurm cluster's, say).

    Yields
    ------
    OwnHub
        Its layout (``port``: the hub, its API, the proxy's API, then one formgrader per course),
        each login's password and the rosters' files.
    """
    if os.geteuid() != 0:
        raise RuntimeError("a hub of its own needs root (it makes system users, as make hub does)")
    state = Path("/var/tmp") / f"selfattn-hub-{kind}-{secrets.token_hex(4)}"
    layout = HubLayout(state=state, envs=envs, port=free_port(3 + len(rosters)))
    folder = Path(tempfile.mkdtemp(prefix=f"selfattn-hub-{kind}-rosters-"))
    paths: dict[str, Path] = {}
    passwords: dict[str, str] = {}
    for course, rows in rosters.items():
        paths[course] = folder / f"{course}.csv"
        paths[course].write_text(ROSTER_HEAD + rows)
        for row in csv.DictReader(io.StringIO(ROSTER_HEAD + rows)):
            passwords[row["id"]] = secrets.token_urlsafe(12)
    env_before = dict(os.environ)
    try:
        if settings:
            layout.hub.mkdir(parents=True)
            caps.settings_path(layout.hub).write_text(settings)
        os.environ.update(env or {}, SELFATTN_HUB_STATE=str(state), SELFATTN_HUB_ENVS=str(envs),
                          SELFATTN_HUB_PORT=str(layout.port))
        control.start(layout, paths, log=log, timeout=start_timeout, spawner=spawner)
        for login, password in passwords.items():
            accounts.set_password(layout, login, password)
        yield OwnHub(layout, passwords, paths)
    finally:
        try:
            control.stop(layout, log=lambda line: None, timeout=stop_timeout)
        finally:
            os.environ.clear()
            os.environ.update(env_before)
            if state.exists():  # what this hub's record says it made, and nothing else
                accounts.remove_accounts(layout)
            shutil.rmtree(state, ignore_errors=True)
            shutil.rmtree(folder, ignore_errors=True)


def uid_processes(login: str) -> set[int]:
    """The process ids of every process ``login`` runs now (her server, its kernels)."""
    uid = pwd.getpwnam(login).pw_uid
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid:
                found.add(int(proc.name))
        except OSError:
            pass
    return found
