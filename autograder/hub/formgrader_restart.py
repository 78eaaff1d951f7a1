"""A course's formgrader brought onto the grader's code now in its course copy, the hub left running.

Formgrader is the hub service ``ID``: a process the hub started as the course's grader account,
which imports the grader's code (the course copy's ``autograder`` and ``selfattn``) once, when it
starts. After ``make publish`` that process still runs the code it imported. :func:`restart` ends
it; JupyterHub starts a managed service again when it finds it has exited (its poll, every 30 s),
with the same command, port, API token and proxy route, so nobody is logged out of the hub and no
student's server is touched. A grader's open formgrader page passes through the hub's login once
more (no password asked: the hub's cookie stands). An Autograde or Collect running in formgrader
at that moment is cut short; run it again.

The process is found through ``/proc`` only (no file a grader account could write): the hub's
child (its pid file is root's) run by the course's grader account.
"""

from __future__ import annotations

import os
import pwd
import signal
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from autograder.errors import GradingError
from autograder.hub.layout import HubLayout

#: JupyterHub polls a service every 30 s (10 % jitter), then starts it; formgrader's start takes
#: about 30 s on a loaded machine (its service timeout is 180 s)
RESTART_TIMEOUT = 300.0
#: seconds formgrader is given to stop after SIGTERM before SIGKILL
STOP_GRACE = 30.0


def _stat(pid: int) -> tuple[int, str] | None:
    """``pid``'s parent and state letter, or None when there is no such process."""
    try:
        after = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(after[1]), after[0]


def _uid(pid: int) -> int | None:
    try:
        return Path(f"/proc/{pid}").stat().st_uid
    except OSError:
        return None


def hub_pid(layout: HubLayout) -> int | None:
    """The running hub's process id (its pid file, root's), or None."""
    from autograder.hub.control import running_pid

    return running_pid(layout)


def formgrader_pids(layout: HubLayout, course: str) -> list[int]:
    """The live processes of ``course``'s formgrader: the hub's children run by its grader account."""
    hub = hub_pid(layout)
    if hub is None:
        return []
    try:
        uid = pwd.getpwnam(layout.grader_user(course)).pw_uid
    except KeyError:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        stat = _stat(pid)
        if stat is not None and stat[0] == hub and stat[1] != "Z" and _uid(pid) == uid:
            found.append(pid)
    return sorted(found)


def answers(layout: HubLayout, course: str) -> bool:
    """Whether ``course``'s formgrader answers on its port (Jupyter's ``/api``, which needs no login)."""
    url = f"http://127.0.0.1:{layout.formgrader_port(course)}/services/{course}/api"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status == 200
    except OSError:
        return False


def _ended(pid: int) -> bool:
    stat = _stat(pid)
    return stat is None or stat[1] == "Z"


def _end(pids: list[int], grace: float = STOP_GRACE) -> None:
    """SIGTERM to ``pids`` (Jupyter's server then stops its kernels and exits), SIGKILL to any still
    running ``grace`` seconds later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in [p for p in pids if not _ended(p)]:  # an ended one's id may be another process's by now
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while not all(_ended(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        if all(_ended(pid) for pid in pids):
            return


def restart(layout: HubLayout, course: str, log: Callable[[str], object] = print,
            timeout: float = RESTART_TIMEOUT) -> bool:
    """End ``course``'s formgrader and wait until the hub has started it again and it answers.

    Returns whether it was restarted; says in one line what happened (the hub not running: the
    next ``make hub`` starts formgrader on the code in the copy). ``GradingError`` when it does not
    come back within ``timeout`` seconds (the hub's log says why)."""
    old = formgrader_pids(layout, course)
    if hub_pid(layout) is None:
        log(f"{course}: the hub is not running; its next start (make hub) starts formgrader on this release")
        return False
    if not old:
        log(f"{course}: no formgrader process found under the hub (it may be starting); it starts on the "
            "code in the course copy")
        return False
    _end(old)
    deadline = time.monotonic() + timeout
    while True:
        now = [pid for pid in formgrader_pids(layout, course) if pid not in old]
        if now and answers(layout, course):
            break
        if time.monotonic() > deadline:
            raise GradingError(f"{course}: formgrader did not come back within {timeout:.0f} s of its restart "
                               f"(see {layout.log}); make hub-stop, make hub starts it")
        time.sleep(1)
    log(f"{course}: formgrader restarted on the grader's new code (process {old[0]} -> {now[0]}); the hub, "
        "the students' servers and everyone's login untouched")
    return True
