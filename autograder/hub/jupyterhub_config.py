"""JupyterHub configuration of the course hub (``make hub``; layout: :mod:`autograder.hub.layout`).

PAM logins of every course roster's accounts (those this hub made only), one LocalProcessSpawner
server per user from the students' environment, and per course ``ID`` a formgrader, the hub service
``ID`` run by that course's grader account (``HUB-gr-ID``) from the graders' environment in its
course copy, open to that course's graders' group only (everyone else, another course's instructors
included, gets 403). A student's server learns its courses from its hub groups (``nbgrader-ID``),
so it lists and fetches those only. With ``make hub SPAWNER=slurm`` each student's server is a job
of the Slurm cluster (batchspawner); else a process here, capped in memory, CPU and tasks by a cgroup
of its own (:mod:`autograder.hub.caps`). Idle servers are stopped by ``jupyterhub-idle-culler``, a
hub service. The hub's own settings (caps, idle timeout, any JupyterHub option) are
``STATE/hub/settings.py``, loaded last.

Every user's server and every formgrader has an origin of its own (``subdomain_host``; hosts in
:mod:`autograder.hub.layout`): what a student's server serves runs in no origin of the hub's or
of a formgrader, and each login cookie is host-only (no ``Domain``), sent to its own host alone.
"""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from autograder.formgrader import QUIET_LOG
from autograder.hub import caps
from autograder.hub import roster as hub_roster
from autograder.hub.accounts import own_members, read_roster
from autograder.hub.layout import from_environment, hub_graders_group, hub_students_group
from autograder.threads import ONE_BLAS_THREAD
from autograder.workspace import ROOT

c = get_config()  # noqa: F821 - provided by traitlets when JupyterHub loads this file
layout = from_environment()
# the roster's logins whose accounts this hub made (make hub refused the others: never let in)
courses = {course: own_members(layout, read_roster(layout.roster(course))) for course in layout.courses()}

# the proxy listens on loopback (JupyterHub resolves this host itself, so it is an address); browsers
# reach the hub at hub.localhost, each user's server at LOGIN.hub.localhost, each formgrader at
# ID--service.hub.localhost (the proxy routes by Host). A real deployment ($SELFATTN_HUB_PUBLIC): a
# wildcard DNS name and a wildcard TLS certificate for DOMAIN and *.DOMAIN (docs/instructors.md).
c.JupyterHub.bind_url = f"{layout.bind_url}/"
c.JupyterHub.subdomain_host = layout.url
# Any host under the hub's name may set cookies for the others (cookie tossing): a student's page can
# log its visitor in to the hub as her (it reads and acts nowhere as the visitor). JupyterHub's advice
# with per-user hosts is c.JupyterHub.cookie_host_prefix_enabled = True ("__Host-" cookies, which no
# other host can set), over https only; not set here (over http on *.localhost it breaks the servers'
# OAuth login). See docs/instructors.md, "Serving it to a network".
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{layout.port + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{layout.port + 2}"
c.ConfigurableHTTPProxy.command = [str(ROOT / "node_modules" / ".bin" / "configurable-http-proxy")]
c.JupyterHub.db_url = f"sqlite:///{layout.hub / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(layout.hub / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(layout.pid_file)

c.Authenticator.allowed_users = {m.login for members in courses.values() for m in members}
# the accounts make hub locked (in no roster any more): refused, their servers stopped, their hub groups
# and roles revoked; a running hub learns a roster change from make hub-roster (autograder/hub/roster.py)
c.Authenticator.blocked_users = hub_roster.blocked(layout)
c.Spawner.cmd = [str(layout.student_env / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 120
# Each student's server and kernel, and formgrader, with one BLAS thread (autograder.threads): they
# share the machine's cores.
# the students' Python first on PATH (never the graders', which the hub itself runs from)
c.Spawner.environment = {"JUPYTER_CONFIG_PATH": str(layout.student_config),
                         "PATH": f"{layout.student_env / 'bin'}:/usr/local/bin:/usr/bin:/bin", **ONE_BLAS_THREAD}
# the course's own selfattn (make publish of one course changes no other's): the package of the course
# whose students' group the user is in, first on the PYTHONPATH of her server and so of every kernel;
# of two courses, the one whose folder ~/ID/ a kernel starts in (autograder/hub/students_site)
c.Spawner.environment["PYTHONPATH"] = lambda spawner: layout.students_pythonpath({g.name for g in spawner.user.groups})
c.Spawner.environment["SELFATTN_COURSE_PACKAGES"] = (
    lambda spawner: layout.students_courses({g.name for g in spawner.user.groups}))
# the server's token: JupyterHub's default, and reading its own user's groups (nbgrader's plugin)
c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", "read:users:groups!user"]


def _formgrader(course: str) -> dict:
    copy = layout.course(course)
    return {
        "name": course,
        "url": f"http://127.0.0.1:{layout.formgrader_port(course)}",
        "command": [str(layout.grader_env / "bin" / "jupyterhub-singleuser"),
                    "--ServerApp.root_dir=" + str(copy), QUIET_LOG,
                    "--ServerApp.extra_static_paths=" + str(copy / "_assets" / "vendor")],
        "user": layout.grader_user(course),
        "cwd": str(copy / "autograder"),
        "oauth_no_confirm": True,
        "timeout": 180,  # a loaded machine starts formgrader in ~30 s
        "environment": {"JUPYTERHUB_DEFAULT_URL": "/lab", **layout.grader_environment(course)},
    }


c.JupyterHub.services = [_formgrader(course) for course in courses] + [hub_roster.service(layout)]
c.JupyterHub.load_groups = {
    group: {"users": users}
    for course, members in courses.items()
    for group, users in (
        (hub_graders_group(course), sorted({m.login for m in members if m.grades} | {layout.grader_user(course)})),
        (hub_students_group(course), sorted({m.login for m in members if not m.grades})),
    )
}
c.JupyterHub.load_roles = [
    {"name": f"formgrade-{course}", "groups": [hub_graders_group(course)],
     "scopes": [f"access:services!service={course}"]}
    for course in courses
] + [hub_roster.role()]

if layout.spawner() == "local":
    # each student's server and kernels in a cgroup of their own, capped (autograder/hub/caps.py)
    from autograder.hub.spawner import CappedLocalProcessSpawner

    c.JupyterHub.spawner_class = CappedLocalProcessSpawner
    c.CappedLocalProcessSpawner.hub_id = layout.hub_id
    c.Spawner.mem_limit = caps.DEFAULT_MEMORY
    c.Spawner.cpu_limit = caps.DEFAULT_CPUS

if layout.spawner() == "slurm":
    # each student's server is a job of the Slurm cluster (batchspawner): sbatch, squeue and
    # scancel run as the student (the hub is root), the server reports its port to the hub
    from batchspawner import SlurmSpawner
    from traitlets import Unicode

    class OneNodeSlurmSpawner(SlurmSpawner):
        """One node: the job runs on this machine, so its server listens on loopback only
        (batchspawner resets ``ip`` to its class default before each job, so it is set here);
        on a cluster, use ``batchspawner.SlurmSpawner`` and drop ``state_exechost_exp`` below
        (the server listens on its node, the hub reaches it by the node's name)."""

        ip = Unicode("127.0.0.1")

    c.JupyterHub.spawner_class = OneNodeSlurmSpawner
    runuser = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin") or "runuser"
    c.SlurmSpawner.exec_prefix = f"{runuser} -u {{username}} --"
    c.SlurmSpawner.batchspawner_singleuser_cmd = str(layout.student_env / "bin" / "batchspawner-singleuser")
    c.SlurmSpawner.req_srun = ""  # the server is the batch step itself
    c.SlurmSpawner.req_runtime = "12:00:00"
    c.SlurmSpawner.start_timeout = 300
    c.SlurmSpawner.state_exechost_exp = "127.0.0.1"
    if os.environ.get("SLURM_CONF"):  # the cluster's configuration, for sbatch run as the student
        c.Spawner.environment["SLURM_CONF"] = os.environ["SLURM_CONF"]

# the hub's own settings, an instructor's (made once, never replaced): caps, idle timeout, any option
settings = caps.settings_path(layout.hub)
caps.write_settings_once(settings)
load_subconfig(str(settings))  # noqa: F821 - provided by traitlets when JupyterHub loads this file
hub_caps = caps.read_settings(settings)
c.pop("IdleCuller", None)  # the idle culler's, not the hub's: passed to the service below
if hub_caps.idle_timeout:
    # JupyterHub's idle culler: a student's server idle (no kernel busy, no browser traffic) for the
    # timeout is stopped (her files stay; her next login starts it again)
    c.JupyterHub.services.append({
        "name": "idle_culler",
        "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={hub_caps.idle_timeout}",
                    f"--cull-every={max(1, min(300, hub_caps.idle_timeout // 4))}"],
    })
    c.JupyterHub.load_roles.append({"name": "idle_culler", "services": ["idle_culler"],
                                    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]})
