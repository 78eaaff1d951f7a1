"""``make hub`` and ``make hub-stop``: start the course's JupyterHub in the background, or stop it.

``start``: the hub's id (made at its first start), each course's accounts, made and recorded by
this hub (this course's roster, ``--course ID=ROSTER`` for each more course; courses served before
stay; a login whose account exists and is not this hub's is refused in one line), how students'
servers run (``--spawner local`` or ``slurm``; default: as last time), the two environments (their
requirements only), each course's students' ``selfattn`` package (built from its course copy when
missing or not its release: :mod:`autograder.hub.course_packages`), the state folder, then
JupyterHub (as root, bound to 127.0.0.1, each user's server and formgrader on a host of its own
under ``hub.localhost``) until ``/hub/health`` answers; prints the address to open.
``stop``: ends the hub (which ends the students' servers and the formgraders) and waits. Layout and
variables: :mod:`autograder.hub.layout`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from autograder.course.ids import COURSE_ID
from autograder.errors import RefusedInput, command_line
from autograder.hub import accounts, caps, course_packages, environments, prepare
from autograder.hub import roster as hub_roster
from autograder.hub.layout import SPAWNERS, HubLayout, course_problem, from_environment
from autograder.outputs import atomic
from autograder.workspace import ROOT

CONFIG = Path(__file__).with_name("jupyterhub_config.py")
NETWORK_LINE = ("to serve it to a network: a wildcard DNS name and a wildcard TLS certificate (DOMAIN and "
                "*.DOMAIN: each student's server and formgrader has a host of its own) and a reverse proxy "
                "(nginx, Caddy) in front of 127.0.0.1; see docs/instructors.md, 'Running the course on JupyterHub'")


def running_pid(layout: HubLayout) -> int | None:
    """The hub's process id when it runs, else None.

    The pid file outlives a hub that crashed or a machine that rebooted, and its number may by then
    be any other process's (process ids are reused: 32768 of them on a default Linux). So the process
    must also be this state folder's hub (:func:`is_hub`): a stale file is never taken for a running
    hub (``make hub`` would start nothing) nor its process stopped (``make hub-stop`` would kill it)."""
    try:
        pid = int(layout.pid_file.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid if is_hub(pid, layout) else None


def is_hub(pid: int, layout: HubLayout) -> bool:
    """Whether process ``pid`` is ``layout``'s JupyterHub: it runs a program named ``jupyterhub`` and
    works in the hub's folder (:func:`launch` starts it there; no two state folders share one)."""
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return cwd == str(layout.hub.resolve()) and any(os.path.basename(a) == b"jupyterhub" for a in argv[:2])


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (reaped when it is this process's child; a zombie has ended)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def default_signals() -> None:
    """Give SIGINT and SIGQUIT their default action (run in the hub's process before it starts).

    A command started in the background by a shell without job control (``make hub &`` in a
    script) ignores both, and an ignored signal stays ignored across ``exec``: the formgrader
    services the hub starts before it installs its own handlers would inherit that, ignore the
    SIGINT a stop sends them, and hold each stop for the hub's 30 s wait before SIGTERM."""
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


def launch(layout: HubLayout, env: dict[str, str]) -> subprocess.Popen:
    """JupyterHub from the graders' environment, in a session of its own, its output appended to
    ``layout.log``, SIGINT and SIGQUIT at their defaults (:func:`default_signals`)."""
    with layout.log.open("ab") as out:
        return subprocess.Popen([str(layout.grader_env / "bin" / "jupyterhub"), "-f", str(CONFIG)],
                                cwd=layout.hub, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=default_signals)


def _log_tail(layout: HubLayout, lines: int = 5) -> list[str]:
    """The last ``lines`` lines of the hub's log (what it was doing when a start or stop ran late)."""
    try:
        return layout.log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return [f"no log at {layout.log}"]


def _healthy(layout: HubLayout) -> bool:
    try:
        asked = urllib.request.Request(f"{layout.bind_url}/hub/health", headers={"Host": urlsplit(layout.url).netloc})
        with urllib.request.urlopen(asked, timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


def start(layout: HubLayout, rosters: dict[str, Path], log=print, timeout: float = 300,
          spawner: str | None = None) -> int:
    """Start the hub (see the module docstring) for the courses ``rosters`` names (course id ->
    roster) and those it served before, the students' servers run as ``spawner`` says (one of
    :data:`~autograder.hub.layout.SPAWNERS`; ``None``: as last time); returns its process id."""
    if os.geteuid() != 0:
        raise RuntimeError("make hub must run as root (it makes system users and starts servers as them)")
    pid = running_pid(layout)
    if pid is not None:
        log(f"the hub already runs (pid {pid}) at {layout.url}")
        return pid
    for course, roster in rosters.items():
        problem = course_problem(course)
        if problem:
            raise ValueError(f"course id {course!r}: {problem}")
        accounts.read_roster(roster)  # a bad roster fails here, before anything is made
    if spawner is not None and spawner not in SPAWNERS:
        raise ValueError(f"spawner {spawner!r}: one of {', '.join(SPAWNERS)}")
    if spawner == "slurm" and shutil.which("sbatch") is None:
        raise ValueError("spawner 'slurm': no sbatch here (Slurm's client commands must be on PATH)")
    if (spawner or layout.spawner()) == "slurm" and (problem := slurm_problem()):
        raise ValueError(f"spawner 'slurm': {problem}")
    # a state folder a hub served before hubs had ids: no id yet, but rosters
    older = not layout.id_file.exists() and any(layout.rosters.glob("*.csv"))
    layout.rosters.mkdir(parents=True, exist_ok=True)
    if spawner is not None:
        atomic.write_text(layout.spawner_file, spawner + "\n")
    for course, roster in rosters.items():
        shutil.copy(roster, layout.roster(course))
    layout.ensure_hub_id()  # the hub's own accounts and groups are named after it
    # a refused line names the roster given now (the instructor's file), else the hub's copy
    members = {course: accounts.read_roster(rosters.get(course, layout.roster(course))) for course in layout.courses()}
    if older:
        for listed in members.values():
            accounts.adopt_older_accounts(layout, listed, log=log)
    # one summary line per course, then one line per change: made, joined, left, locked, re-enabled
    for change in accounts.apply_rosters(layout, members, log=log, report=log):
        log(str(change))
    if older:
        for course in members:
            prepare.adopt_older_exchange(layout, course, log=log)
    prepare.prepare(layout, log=log)
    build_environments(layout, log=log)
    course_packages.ensure(layout, log=log)
    prepare.import_class(layout, log=log)
    _say_release_problems(layout, log)
    env = {**os.environ, "SELFATTN_HUB_STATE": str(layout.state), "SELFATTN_HUB_ENVS": str(layout.envs),
           "SELFATTN_HUB_PORT": str(layout.port),
           "PATH": f"{layout.grader_env / 'bin'}:{ROOT / 'node_modules' / '.bin'}:/usr/sbin:/usr/bin:/sbin:/bin"}
    proc = launch(layout, env)
    deadline = time.monotonic() + timeout
    while not _healthy(layout):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the hub did not start (see {layout.log}): {' | '.join(_log_tail(layout))}")
        time.sleep(0.5)
    hub_roster.started(layout, log=log)  # the hub's users and groups as the rosters say
    log(f"course hub at {layout.url}/ (open it in a browser; pid {proc.pid}; courses {', '.join(layout.courses())}; "
        f"state in {layout.state}; stop: make hub-stop)")
    log(f"hub id {layout.hub_id}: grader accounts "
        f"{', '.join(layout.grader_user(course) for course in layout.courses())} (runuser -u ACCOUNT -- nbgrader ...)")
    log(caps_line(layout))
    log(NETWORK_LINE)
    return proc.pid


def caps_line(layout: HubLayout) -> str:
    """What caps each student's server and when an idle one stops (:mod:`autograder.hub.caps`), where
    to change it; Slurm's servers are the cluster's jobs, capped by their request."""
    settings = caps.settings_path(layout.hub)
    if layout.spawner() == "slurm":
        return f"students' servers are Slurm jobs (capped by their request); hub settings in {settings}"
    return f"{caps.describe(caps.read_settings(settings))} (set in {settings})"


def _say_release_problems(layout: HubLayout, log) -> None:
    """One line per course whose copy is not its students' package's release (make publish), and
    one per course whose exchange hands out notebooks of an earlier release."""
    from autograder.hub.release import release_problem, stale_release_line

    for course in layout.courses():
        for problem in (release_problem(layout, course), stale_release_line(layout, course)):
            if problem:
                log(f"warning: {problem}")


#: the states of a Slurm node (``sinfo --format=%t``, without its flag characters) that can take a job
TAKES_JOBS = ("idle", "mix", "alloc", "comp")


def slurm_problem(timeout: float = 60) -> str | None:
    """Why the Slurm cluster cannot run the students' servers now, in one line, or ``None``: asked with
    ``sinfo`` (its controller answers, and a responding node can take a job), so that ``make hub
    SPAWNER=slurm`` says so before it starts instead of each student's login ending in an error."""
    try:
        done = subprocess.run(["sinfo", "--noheader", "--responding", "--format=%t"], capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return "no sinfo here (Slurm's client commands must be on PATH)"
    except subprocess.TimeoutExpired:
        return f"the Slurm controller did not answer sinfo within {timeout:g} s"
    if done.returncode:
        said = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").splitlines()[-1]
        return f"the Slurm cluster does not answer ({said})"
    states = [line.strip().rstrip("*~#!%$@^-") for line in done.stdout.splitlines() if line.strip()]
    if not states:
        return "no Slurm node responds (sinfo --responding lists none)"
    if not any(state in TAKES_JOBS for state in states):
        return f"no responding Slurm node can take a job (their states: {', '.join(sorted(set(states)))})"
    return None


def stop(layout: HubLayout, log=print, timeout: float = 60) -> None:
    """Stop the hub and wait until it has ended (its servers and formgrader with it)."""
    pid = running_pid(layout)
    if pid is None:
        log("the hub is not running")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.3)
    if _alive(pid):
        raise RuntimeError(f"the hub (pid {pid}) did not stop within {timeout:.0f} s (see {layout.log}): "
                           f"{' | '.join(_log_tail(layout))}")
    caps.remove_hub_groups(layout.hub_id)  # what a server left in its cgroup, and the hub's cgroups
    log("the hub stopped")


def build_environments(layout: HubLayout, log=print) -> None:
    """The hub's two environments (students' and graders'), each built only if what it is made of changed
    (:func:`autograder.hub.environments.build`): ``make hub`` does it on start; ``make test`` builds the hub
    tests' beforehand, beside the book."""
    environments.build(layout.student_env, "student", log=log)
    environments.build(layout.grader_env, "grader", log=log)


@command_line
def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="the course's JupyterHub on this machine")
    p.add_argument("action", choices=("start", "stop", "environments"),
                   help="start or stop the hub, or build its two environments only (make hub does on start)")
    p.add_argument("--roster", type=Path, default=ROOT / "autograder" / "roster.csv",
                   help=f"this course's ({COURSE_ID}) roster")
    p.add_argument("--course", action="append", default=[], metavar="ID=ROSTER",
                   help="one more course on the same hub, its id and roster (again for each course)")
    p.add_argument("--spawner", choices=SPAWNERS, default=None,
                   help="students' servers as processes here (local) or as Slurm jobs (slurm; batchspawner); "
                        "default: as the last start")
    a = p.parse_args(args)
    try:
        layout = from_environment()
    except ValueError as exc:  # a public address the hub cannot serve under, named
        raise RefusedInput(str(exc)) from None
    if a.action == "start":
        rosters = accounts.course_rosters(a.roster, a.course)
        try:
            start(layout, rosters, spawner=a.spawner)
        except (ValueError, accounts.ForeignAccount) as exc:  # a bad course id or roster line, or
            # a grader account or group of this hub's name that another made, named
            raise RefusedInput(str(exc)) from None
    elif a.action == "environments":
        build_environments(layout)
    else:
        stop(layout)


if __name__ == "__main__":
    main()
