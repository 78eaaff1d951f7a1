"""JupyterHub configuration of the course hub (``make hub``; layout: :mod:`autograder.hub.layout`).

PAM logins of the roster's accounts, one LocalProcessSpawner server per student from the students'
environment, and formgrader as the hub service ``self-attention`` run by the grader account from the
graders' environment in the course copy, open to the graders' group only (others get 403).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from autograder.course.ids import COURSE_ID
from autograder.hub.accounts import read_roster
from autograder.hub.layout import GRADER_USER, GRADERS_GROUP, from_environment
from autograder.workspace import ROOT

c = get_config()  # noqa: F821 - provided by traitlets when JupyterHub loads this file
layout = from_environment()
members = read_roster(layout.roster)
graders = sorted(m.login for m in members if m.grades)

c.JupyterHub.bind_url = f"{layout.url}/"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{layout.port + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{layout.port + 2}"
c.ConfigurableHTTPProxy.command = [str(ROOT / "node_modules" / ".bin" / "configurable-http-proxy")]
c.JupyterHub.db_url = f"sqlite:///{layout.hub / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(layout.hub / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(layout.pid_file)

c.Authenticator.allowed_users = {m.login for m in members}
c.Spawner.cmd = [str(layout.student_env / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 120
c.Spawner.environment = {"JUPYTER_CONFIG_PATH": str(layout.student_config)}

formgrader = ["--ServerApp.root_dir=" + str(layout.course),
              "--ServerApp.extra_static_paths=" + str(layout.course / "_assets" / "vendor")]
c.JupyterHub.services = [{
    "name": COURSE_ID,
    "url": f"http://127.0.0.1:{layout.formgrader_port}",
    "command": [str(layout.grader_env / "bin" / "jupyterhub-singleuser"), *formgrader],
    "user": GRADER_USER,
    "cwd": str(layout.course / "autograder"),
    "oauth_no_confirm": True,
    "timeout": 180,  # a loaded machine starts formgrader in ~30 s
    "environment": {
        "JUPYTERHUB_DEFAULT_URL": "/lab",
        "JUPYTER_CONFIG_PATH": str(layout.grader_config),
        "JUPYTER_PATH": str(layout.course / "autograder" / "jupyter_data"),
        "TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR": "1",
        "PYTHONPATH": str(layout.course),
        "PATH": f"{layout.grader_env / 'bin'}:/usr/bin:/bin",
    },
}]
c.JupyterHub.load_groups = {GRADERS_GROUP: {"users": [*graders, GRADER_USER]}}
c.JupyterHub.load_roles = [
    {"name": f"formgrade-{COURSE_ID}", "groups": [GRADERS_GROUP],
     "scopes": [f"access:services!service={COURSE_ID}"]},
]
