"""The environment variables the grader honours, read here and nowhere else.

They are overrides at the edge, for one machine or one run, above nbgrader's configuration chain
(:mod:`autograder.settings`):

- ``$AUTOGRADER_WORKDIR``: the work folder (default ``autograder/``);
- ``$AUTOGRADER_COURSE``: the course root, a folder with ``solutions/`` and ``notebooks/``
  (default the repository) (both: :func:`autograder.workspace.from_environment`);
- ``$SELFATTN_SANDBOX=fallback``: never bubblewrap (``c.GradingSettings.sandbox = "fallback"``);
- ``$SELFATTN_WARM_SANDBOX=0``: a newly started sandbox per run (``c.GradingSettings.warm_sandbox = False``);
- ``$SELFATTN_CGROUPS=0``: no cgroup per run (``c.GradingSettings.cgroups = False``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

COURSE_VARIABLE, WORK_VARIABLE = "AUTOGRADER_COURSE", "AUTOGRADER_WORKDIR"
#: variable -> (the setting it overrides, the value that overrides it, the setting's value then)
SETTING_VARIABLES: dict[str, tuple[str, str, object]] = {
    "SELFATTN_SANDBOX": ("sandbox", "fallback", "fallback"),
    "SELFATTN_WARM_SANDBOX": ("warm_sandbox", "0", False),
    "SELFATTN_CGROUPS": ("cgroups", "0", False),
}


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def folders(environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """(work folder, course root) as the environment names them (``None``: not set)."""
    env = _env(environ)
    return env.get(WORK_VARIABLE) or None, env.get(COURSE_VARIABLE) or None


def setting_overrides(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """setting name -> value, for each setting the environment overrides (see :data:`SETTING_VARIABLES`)."""
    env = _env(environ)
    return {name: value for var, (name, when, value) in SETTING_VARIABLES.items() if env.get(var, "") == when}
