"""The spawner of the students' servers on one machine: JupyterHub's ``LocalProcessSpawner`` whose
servers each run in a cgroup of their own with the hub's caps (:mod:`autograder.hub.caps`).

Imported by the hub's configuration only (JupyterHub is in the hub's environments, not in the
repository's).
"""

from __future__ import annotations

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Integer, Unicode

from autograder.hub import caps


class CappedLocalProcessSpawner(LocalProcessSpawner):
    """``LocalProcessSpawner`` that enforces ``mem_limit`` and ``cpu_limit`` (and :attr:`tasks_limit`):
    before each start the hub makes the server's cgroup with those caps, the server's first process
    joins it before it drops root, and after each stop whatever is left in it is killed and the
    cgroup removed."""

    tasks_limit = Integer(caps.DEFAULT_TASKS, allow_none=True, config=True,
                          help="Processes and threads one student's server and kernels may run at once "
                               "(a pids cgroup; None: not capped).")
    hub_id = Unicode("", config=True,
                     help="The hub's id (STATE/hub/id): the servers' cgroups are made below selfattn-hub-HUB_ID.")

    def _caps(self) -> caps.HubCaps:
        return caps.HubCaps(memory=self.mem_limit, cpus=self.cpu_limit, tasks=self.tasks_limit)

    def _folders(self) -> dict:
        return caps.server_folders(self.hub_id, self.user.name)

    async def start(self):
        """Make the server's capped cgroup, then start the server in it."""
        folders = caps.make_server_group(self.hub_id, self.user.name, self._caps())
        self.log.info("%s's server capped: %s (%s)", self.user.name, caps.describe(self._caps(), idle=False),
                      ", ".join(str(p) for p in sorted(set(folders.values()))))
        return await super().start()

    def make_preexec_fn(self, name):
        """Join the server's cgroup (as root), then become the student."""
        become = super().make_preexec_fn(name)
        folders = self._folders()

        def preexec() -> None:
            caps.join(folders)
            become()

        return preexec

    async def stop(self, now=False):
        """Stop the server, then kill what is left in its cgroup (a kernel it left) and remove it."""
        try:
            await super().stop(now=now)
        finally:
            caps.remove_server_group(self._folders())
