"""Where the course's JupyterHub keeps everything, and the accounts and groups it uses.

All state is in one folder (``$SELFATTN_HUB_STATE``, default ``/srv/selfattn-hub``), so a restart
(``make hub-stop``, ``make hub``) loses nothing::

    STATE/            0755 root
      hub/            0700 root: jupyterhub.sqlite, cookie secret, pid file, log
      exchange/       0777 (nbgrader's documented exchange; nbgrader sets its course folders' modes)
      course/         0750 grader:graders: a copy of the course (solutions, hidden checks, gradebook)
      config/student/ 0755: nbgrader_config.py for students (exchange, course id)
      config/grader/  0750 grader:graders: nbgrader_config.py for the formgrader service (exchange)

The two environments (``$SELFATTN_HUB_ENVS``, default ``STATE/envs``) are world-readable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.course.ids import COURSE_ID

#: the system account that owns the course folder and runs formgrader (nbgrader's "grader-COURSE")
GRADER_USER = f"grader-{COURSE_ID}"
#: instructors, TAs and the grader account: who may open the formgrader service
GRADERS_GROUP = f"formgrade-{COURSE_ID}"
#: every student of the roster
STUDENTS_GROUP = f"students-{COURSE_ID}"
#: the GECOS mark of accounts this project made (the only ones it ever removes)
ACCOUNT_MARK = f"{COURSE_ID} hub account"
#: the hub's public port on 127.0.0.1; the hub API, proxy API and formgrader take the next three
DEFAULT_PORT = 8000


@dataclass(frozen=True)
class HubLayout:
    """The hub's folders (see the module docstring)."""

    state: Path
    envs: Path
    port: int = DEFAULT_PORT

    @property
    def hub(self) -> Path:
        return self.state / "hub"

    @property
    def exchange(self) -> Path:
        return self.state / "exchange"

    @property
    def course(self) -> Path:
        return self.state / "course"

    @property
    def student_config(self) -> Path:
        return self.state / "config" / "student"

    @property
    def grader_config(self) -> Path:
        return self.state / "config" / "grader"

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
    def roster(self) -> Path:
        """The roster the accounts were made from (copied here, so the hub's config reads it)."""
        return self.hub / "roster.csv"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def formgrader_port(self) -> int:
        return self.port + 3


def from_environment(env: dict[str, str] | None = None) -> HubLayout:
    """The layout ``$SELFATTN_HUB_STATE``, ``$SELFATTN_HUB_ENVS`` and ``$SELFATTN_HUB_PORT`` name."""
    env = dict(os.environ if env is None else env)
    state = Path(env.get("SELFATTN_HUB_STATE") or "/srv/selfattn-hub").absolute()
    envs = Path(env.get("SELFATTN_HUB_ENVS") or state / "envs").absolute()
    port = int(env.get("SELFATTN_HUB_PORT") or DEFAULT_PORT)
    return HubLayout(state=state, envs=envs, port=port)
