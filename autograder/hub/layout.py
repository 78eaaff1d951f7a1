"""Where the course's JupyterHub keeps everything, and the accounts and groups it uses.

One hub serves one or more courses (this course, and others given to ``make hub COURSES=...``);
each course has its own roster, course copy, grader account, groups and formgrader service. All
state is in one folder (``$SELFATTN_HUB_STATE``, default ``/srv/selfattn-hub``), so a restart
(``make hub-stop``, ``make hub``) loses nothing::

    STATE/                 0755 root
      hub/                 0700 root: jupyterhub.sqlite, cookie secret, pid file, log
        id                 the hub's id (made at its first start), which names its system accounts
        accounts.json      every system account and group this hub made, with its uid or gid
        rosters/ID.csv     the roster of each course the hub serves (the courses are these files)
        spawner            how students' servers run: local (processes) or slurm (batch jobs)
      exchange/            1777 root: nbgrader's exchange (sticky); root makes its course folders
        ID/                0750 HUB-gr-ID:HUB-st-ID: that course's outbound, inbound, feedback
      courses/ID/          2770 HUB-gr-ID:HUB-fg-ID: a copy of the course (solutions, hidden
                           checks, gradebook), its id in autograder/course_id
      config/student/      0755: nbgrader_config.py for students (exchange, the hub's groups)
      packages/ID/         0755 root: the students' selfattn of course ID as make publish last installed
                           it, first on the PYTHONPATH of that course's students' servers and kernels
      packages/.site/      0755 root: sitecustomize.py, which gives a student of two courses the package
                           of the course whose folder (~/ID/) her Python starts in
      config/grader-ID/    2770 HUB-gr-ID:HUB-fg-ID: ID's term settings, nbgrader_config.py (the late
                           policy...; made once, never replaced), and hub/, what make hub writes

The system accounts and groups are the hub's own: ``HUB`` is its id (``STATE/hub/id``), so two hubs
on one machine (another term's, a test's, a benchmark's) never share one, even for the same course.
The hub's own groups (in its database, nbgrader's names) are ``formgrade-ID`` and ``nbgrader-ID``.

The two environments (``$SELFATTN_HUB_ENVS``, default ``STATE/envs``) are world-readable.

Origins: the hub listens on 127.0.0.1 and serves each student's server on a host of its own
(JupyterHub's ``subdomain_host``): the hub at ``hub.localhost:PORT``, LOGIN's server at
``LOGIN.hub.localhost:PORT``, course ID's formgrader at ``ID--service.hub.localhost:PORT``
(a deployment: ``$SELFATTN_HUB_PUBLIC``, e.g. ``https://hub.example.edu``, and hosts under it). A page a
student's server serves is thus never in the origin of the hub or of a formgrader. Chromium and
Firefox resolve ``*.localhost`` to loopback themselves; Python clients connect to
:attr:`HubLayout.bind_url` and send the host in a ``Host`` header.
"""

from __future__ import annotations

import os
import re
import secrets
import string
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from autograder.course.ids import COURSE_ID, id_problem
from autograder.outputs.atomic import create_once

#: a hub's id: a letter, then letters and digits (it starts system account names)
HUB_ID_LENGTH = 6
HUB_ID = re.compile(rf"[a-z][a-z0-9]{{{HUB_ID_LENGTH - 1}}}")
#: the longest system account or group name Linux tools accept
MAX_SYSTEM_NAME = 32
#: the system names a hub makes, HUB-xx-ID: its grader account, graders' group, students' group
SYSTEM_NAME = re.compile(rf"{HUB_ID.pattern}-(gr|fg|st)-.*")
#: the hub's public port on 127.0.0.1; the hub API and proxy API take the next two, then one
#: formgrader per course
DEFAULT_PORT = 8000
#: the longest course id: a system name has at most 32 characters, and the ones made here are HUB-xx-ID
MAX_COURSE_ID = MAX_SYSTEM_NAME - len("-gr-") - HUB_ID_LENGTH
#: the hub's host name on this machine; each user's server and each service is on a host under it
#: (JupyterHub's ``subdomain_host``). Browsers resolve ``*.localhost`` to loopback with no DNS set-up;
#: a deployment names its own (``$SELFATTN_HUB_PUBLIC``).
DOMAIN = "hub.localhost"
#: a login JupyterHub uses as its host's first label unchanged (its "idna" subdomain hook encodes
#: any other name, and any name holding "--", which only its encodings and services' hosts hold)
DNS_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
#: how the students' servers run: processes of this machine, or jobs of a Slurm cluster (batchspawner)
SPAWNERS = ("local", "slurm")


def new_hub_id() -> str:
    """A fresh random hub id (:data:`HUB_ID`)."""
    first = secrets.choice(string.ascii_lowercase)
    return first + "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(HUB_ID_LENGTH - 1))


def grader_user(hub: str, course: str) -> str:
    """The system account of hub ``hub`` that owns ``course``'s copy and runs its formgrader."""
    return f"{hub}-gr-{course}"


def graders_group(hub: str, course: str) -> str:
    """The system group of hub ``hub`` of ``course``'s instructors, TAs and grader account (who may
    read and write its course copy)."""
    return f"{hub}-fg-{course}"


def students_group(hub: str, course: str) -> str:
    """The system group of hub ``hub`` of ``course``'s students (who may reach its exchange folder)."""
    return f"{hub}-st-{course}"


def hub_graders_group(course: str) -> str:
    """The hub group (in the hub's database) of ``course``'s graders: who may open its formgrader
    (nbgrader's JupyterHub name for a course's graders)."""
    return f"formgrade-{course}"


def hub_students_group(course: str) -> str:
    """The hub group of ``course``'s students (nbgrader's JupyterHub name, by which a student's
    server learns its courses)."""
    return f"nbgrader-{course}"


def system_name_problem(login: str) -> str | None:
    """Why ``login`` may not be a roster's login because it names a hub's own account or group
    (of any hub, this project's older ``grader-ID`` included), or ``None``."""
    if SYSTEM_NAME.fullmatch(login) or login.startswith("grader-"):
        return "names a hub's grader account or group (HUB-gr-ID, HUB-fg-ID, HUB-st-ID, grader-ID), not a person"
    return None


def course_problem(course: str) -> str | None:
    """Why ``course`` cannot be a hub course id, or ``None`` when it can."""
    problem = id_problem(course)
    if problem is None and not course.islower():
        problem = "a course id must be lower case (it names system accounts and groups)"
    if problem is None and len(course) > MAX_COURSE_ID:
        problem = f"at most {MAX_COURSE_ID} characters (HUB-gr-ID names a system account)"
    if problem is None and (not DNS_LABEL.fullmatch(course) or "--" in course):
        problem = ("letters, digits and single '-' only, not at either end (its formgrader's host is "
                   "ID--service.DOMAIN)")
    return problem


@dataclass(frozen=True)
class HubLayout:
    """The hub's folders (see the module docstring)."""

    state: Path
    envs: Path
    port: int = DEFAULT_PORT
    #: the hub's public address, e.g. ``https://hub.example.edu`` (a wildcard DNS name and TLS
    #: certificate for it and ``*.`` it, a reverse proxy to 127.0.0.1:PORT); empty: ``hub.localhost:PORT``
    public: str = ""

    @property
    def hub(self) -> Path:
        return self.state / "hub"

    @property
    def exchange(self) -> Path:
        return self.state / "exchange"

    @property
    def id_file(self) -> Path:
        return self.hub / "id"

    @property
    def hub_id(self) -> str:
        """This hub's id (``STATE/hub/id``, made by its first start: :meth:`ensure_hub_id`)."""
        try:
            hub = self.id_file.read_text().strip()
        except FileNotFoundError:
            raise RuntimeError(f"{self.id_file}: no hub id (make hub makes it at the first start)") from None
        if not HUB_ID.fullmatch(hub):
            raise RuntimeError(f"{self.id_file}: {hub!r} is not a hub id ({HUB_ID.pattern})")
        return hub

    def ensure_hub_id(self) -> str:
        """This hub's id, made (random, :func:`new_hub_id`) when the state folder has none."""
        if not self.id_file.exists():
            self.hub.mkdir(parents=True, exist_ok=True)
            self.hub.chmod(0o700)
            create_once(self.id_file, (new_hub_id() + "\n").encode())
        return self.hub_id

    @property
    def records(self) -> Path:
        """Every system account and group this hub made (:mod:`autograder.hub.records`)."""
        return self.hub / "accounts.json"

    def grader_user(self, course: str = COURSE_ID) -> str:
        return grader_user(self.hub_id, course)

    def graders_group(self, course: str = COURSE_ID) -> str:
        return graders_group(self.hub_id, course)

    def students_group(self, course: str = COURSE_ID) -> str:
        return students_group(self.hub_id, course)

    @property
    def rosters(self) -> Path:
        """The roster of each course the hub serves, ``ID.csv`` (copied here by ``make hub``)."""
        return self.hub / "rosters"

    def roster(self, course: str = COURSE_ID) -> Path:
        return self.rosters / f"{course}.csv"

    def courses(self) -> list[str]:
        """The courses the hub serves: this course first (when served), then the others by id."""
        found = sorted(p.stem for p in self.rosters.glob("*.csv"))
        return sorted(found, key=lambda c: c != COURSE_ID)

    @property
    def spawner_file(self) -> Path:
        return self.hub / "spawner"

    def spawner(self) -> str:
        """How the students' servers run (one of :data:`SPAWNERS`): as ``make hub`` last chose, else local."""
        chosen = self.spawner_file.read_text().strip() if self.spawner_file.exists() else "local"
        if chosen not in SPAWNERS:
            raise ValueError(f"{self.spawner_file}: spawner {chosen!r}: one of {', '.join(SPAWNERS)}")
        return chosen

    def course(self, course: str = COURSE_ID) -> Path:
        """The copy of ``course`` its grader account owns (solutions, gradebook, submissions)."""
        return self.state / "courses" / course

    def course_exchange(self, course: str = COURSE_ID) -> Path:
        return self.exchange / course

    @property
    def student_config(self) -> Path:
        return self.state / "config" / "student"

    def grader_config(self, course: str = COURSE_ID) -> Path:
        """The folder of ``course``'s term settings (:meth:`term_settings`)."""
        return self.state / "config" / f"grader-{course}"

    def term_settings(self, course: str = COURSE_ID) -> Path:
        """``course``'s settings for the term on this hub (the late policy, ``c.LateSubmissionPlugin.*``,
        and any other nbgrader option): made once, edited by its instructors and TAs, and never replaced
        by ``make hub`` or any other command."""
        return self.grader_config(course) / "nbgrader_config.py"

    def hub_settings(self, course: str = COURSE_ID) -> Path:
        """The folder of the settings ``make hub`` writes anew at every start (the exchange)."""
        return self.grader_config(course) / "hub"

    def grader_environment(self, course: str = COURSE_ID) -> dict[str, str]:
        """The environment of ``course``'s formgrader and of every nbgrader command run as its grader
        account: the graders' environment first on ``PATH``, the course copy importable, its settings
        (:meth:`grader_config_path`), one BLAS thread."""
        from autograder.threads import ONE_BLAS_THREAD

        copy = self.course(course)
        return {"PATH": f"{self.grader_env / 'bin'}:/usr/bin:/bin", "PYTHONPATH": str(copy),
                "JUPYTER_CONFIG_PATH": self.grader_config_path(course),
                "JUPYTER_PATH": str(copy / "autograder" / "jupyter_data"),
                "TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR": "1", **ONE_BLAS_THREAD}

    def grader_config_path(self, course: str = COURSE_ID) -> str:
        """``JUPYTER_CONFIG_PATH`` of ``course``'s formgrader and of every nbgrader command run as its grader
        account: the term's settings first (they win), then the hub's."""
        return f"{self.grader_config(course)}{os.pathsep}{self.hub_settings(course)}"

    def course_package(self, course: str = COURSE_ID) -> Path:
        """The students' ``selfattn`` of ``course`` (``make publish`` installs it here, for that course's
        students only; ``make hub`` from the course copy when missing or not its release)."""
        return self.state / "packages" / course

    @property
    def students_site(self) -> Path:
        """The folder of the students' ``sitecustomize.py`` (:mod:`autograder.hub.students_site`)."""
        return self.state / "packages" / ".site"

    def _users_courses(self, groups: set[str]) -> list[str]:
        """The courses of a user in the hub groups ``groups``: those whose students' group she is in,
        else whose graders' group, else every course; in the order of :meth:`courses`."""
        courses = self.courses() or [COURSE_ID]
        return ([c for c in courses if hub_students_group(c) in groups]
                or [c for c in courses if hub_graders_group(c) in groups] or courses)

    def students_pythonpath(self, groups: set[str]) -> str:
        """``PYTHONPATH`` of the server (and so every kernel and Validate) of a user in the hub groups
        ``groups``: the students' ``sitecustomize`` (:attr:`students_site`), then the package of her
        first course (:meth:`course_package`). Of two courses, the sitecustomize gives a Python started in
        ``~/ID/`` course ID's package (:meth:`students_courses`)."""
        return f"{self.students_site}{os.pathsep}{self.course_package(self._users_courses(groups)[0])}"

    def students_courses(self, groups: set[str]) -> str:
        """``SELFATTN_COURSE_PACKAGES`` of a user in the hub groups ``groups``: ``ID=FOLDER`` for each of her
        courses, her first course first, joined by ``os.pathsep``."""
        return os.pathsep.join(f"{c}={self.course_package(c)}" for c in self._users_courses(groups))

    @property
    def student_env(self) -> Path:
        return self.envs / "student"

    @property
    def grader_env(self) -> Path:
        return self.envs / "grader"

    @property
    def pid_file(self) -> Path:
        return self.hub / "jupyterhub.pid"

    @property
    def log(self) -> Path:
        return self.hub / "jupyterhub.log"

    @property
    def url(self) -> str:
        """The hub's address, to open in a browser (the login page is ``URL/hub/login``); JupyterHub's
        ``subdomain_host``."""
        return self.public.rstrip("/") or f"http://{DOMAIN}:{self.port}"

    @property
    def domain(self) -> str:
        """The hub's host name: every user's server and formgrader is on a host under it."""
        return urlsplit(self.url).hostname or DOMAIN

    def _under(self, label: str) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{label}.{parts.netloc}"

    @property
    def bind_url(self) -> str:
        """Where the hub's proxy listens (loopback): Python clients connect here, with ``Host``."""
        return f"http://127.0.0.1:{self.port}"

    def user_url(self, login: str) -> str:
        """The address of ``login``'s server, on a host of its own (``LOGIN.DOMAIN``); ``ValueError``
        for a login JupyterHub encodes (open :attr:`url` and log in: the hub redirects there)."""
        if not DNS_LABEL.fullmatch(login) or "--" in login:
            raise ValueError(f"{login!r}: JupyterHub gives this login an encoded host; log in at {self.url}")
        return f"{self._under(login)}/user/{login}"

    def service_url(self, course: str = COURSE_ID) -> str:
        """The address of ``course``'s formgrader service, on a host of its own (``ID--service.DOMAIN``)."""
        return f"{self._under(course + '--service')}/services/{course}"

    def formgrader_port(self, course: str = COURSE_ID) -> int:
        """The port of ``course``'s formgrader: after the hub API and proxy API, one per course."""
        return self.port + 3 + self.courses().index(course)


def from_environment(env: dict[str, str] | None = None) -> HubLayout:
    """The layout ``$SELFATTN_HUB_STATE``, ``$SELFATTN_HUB_ENVS``, ``$SELFATTN_HUB_PORT`` and
    ``$SELFATTN_HUB_PUBLIC`` name."""
    env = dict(os.environ if env is None else env)
    state = Path(env.get("SELFATTN_HUB_STATE") or "/srv/selfattn-hub").absolute()
    envs = Path(env.get("SELFATTN_HUB_ENVS") or state / "envs").absolute()
    port = int(env.get("SELFATTN_HUB_PORT") or DEFAULT_PORT)
    public = env.get("SELFATTN_HUB_PUBLIC") or ""
    if public and (urlsplit(public).scheme not in ("http", "https") or not urlsplit(public).hostname
                   or urlsplit(public).path.strip("/")):
        raise ValueError(f"SELFATTN_HUB_PUBLIC={public!r}: give the hub's address, e.g. https://hub.example.edu")
    return HubLayout(state=state, envs=envs, port=port, public=public)
